/* The check that this CPU can run this build, before any instruction the build may not run here.
 *
 * The measuring code is compiled for the build machine (-march=native, or PERFATLAS_ARCH): on a
 * CPU without one of its extensions (a login node's AVX-512 build on older compute nodes) it dies
 * with SIGILL wherever the compiler happened to use one. This file is compiled for the x86-64
 * baseline (native/common/CMakeLists.txt), and its constructor runs before main and before the
 * program's other constructors: it compares what the build may use (isa_built.c) with what the
 * CPU and the OS support (__builtin_cpu_supports: CPUID, and XGETBV for the AVX and AMX register
 * states) and, if something is missing, says so in one sentence and exits with status 2. */
#define _GNU_SOURCE
#include "isa.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef PERFATLAS_BUILT_FOR /* "-march=native for a znver4 CPU" (CMakeLists.txt) */
#define PERFATLAS_BUILT_FOR "unknown flags"
#endif

#if defined(__x86_64__) || defined(__i386__)

int pa_isa_cpu_supports(const char *name)
{
/* clang-format off */
#define PA_ISA(feature)                                                                          \
    if (strcmp(name, feature) == 0)                                                              \
        return __builtin_cpu_supports(feature) != 0
    PA_ISA("sse3"); PA_ISA("ssse3"); PA_ISA("sse4.1"); PA_ISA("sse4.2"); PA_ISA("sse4a");
    PA_ISA("popcnt"); PA_ISA("movbe"); PA_ISA("lzcnt"); PA_ISA("bmi"); PA_ISA("bmi2");
    PA_ISA("adx"); PA_ISA("aes"); PA_ISA("pclmul"); PA_ISA("sha"); PA_ISA("f16c"); PA_ISA("avx");
    PA_ISA("avx2"); PA_ISA("fma"); PA_ISA("fma4"); PA_ISA("xop"); PA_ISA("gfni"); PA_ISA("vaes");
    PA_ISA("vpclmulqdq"); PA_ISA("avx512f"); PA_ISA("avx512cd"); PA_ISA("avx512bw");
    PA_ISA("avx512dq"); PA_ISA("avx512vl"); PA_ISA("avx512ifma"); PA_ISA("avx512vbmi");
    PA_ISA("avx512vbmi2"); PA_ISA("avx512vnni"); PA_ISA("avx512bitalg"); PA_ISA("avx512vpopcntdq");
    PA_ISA("avx512bf16"); PA_ISA("avx512vp2intersect");
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 /* names GCC 12 added */
    PA_ISA("lahf_lm"); PA_ISA("cmpxchg16b"); PA_ISA("avxvnni"); PA_ISA("avx512fp16");
    PA_ISA("amx-tile"); PA_ISA("amx-int8"); PA_ISA("amx-bf16");
#endif
#undef PA_ISA
    /* clang-format on */
    return 1;
}

/* The highest x86-64 micro-architecture level this CPU has: a build for it runs here. */
static const char *cpu_level(void)
{
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
    if (__builtin_cpu_supports("x86-64-v4"))
        return "x86-64-v4";
    if (__builtin_cpu_supports("x86-64-v3"))
        return "x86-64-v3";
    if (__builtin_cpu_supports("x86-64-v2"))
        return "x86-64-v2";
#endif
    return "x86-64";
}

/* The CPU's brand string (CPUID 0x80000002-4, what /proc/cpuinfo calls "model name"), trimmed. */
static void cpu_model(char *model, size_t size)
{
    unsigned int brand[12], eax, ebx, ecx, edx;
    snprintf(model, size, "unknown model");
    if (!__get_cpuid(0x80000000, &eax, &ebx, &ecx, &edx) || eax < 0x80000004)
        return;
    for (unsigned int leaf = 0; leaf < 3; leaf++)
        __get_cpuid(0x80000002 + leaf, &brand[4 * leaf], &brand[4 * leaf + 1], &brand[4 * leaf + 2],
                    &brand[4 * leaf + 3]);
    const char *text = (const char *)brand;
    size_t length = strnlen(text, sizeof brand);
    size_t start = strspn(text, " ");
    while (length > start && text[length - 1] == ' ')
        length--;
    if (length > start)
        snprintf(model, size, "%.*s", (int)(length - start), text + start);
}

/* The file this code was loaded from: the executable, or libperfatlas-ipm.so in a program. */
static const char *binary_name(void)
{
    Dl_info info;
    if (dladdr((void *)&pa_isa_cpu_supports, &info) && info.dli_fname && *info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        return slash ? slash + 1 : info.dli_fname;
    }
    return program_invocation_short_name;
}

__attribute__((constructor(101))) static void pa_isa_guard(void)
{
    __builtin_cpu_init(); /* required before __builtin_cpu_supports in a constructor */
    char missing[512] = "";
    size_t used = 0;
    const char *feature = pa_isa_built_for;
    while (*(feature += strspn(feature, " "))) {
        size_t length = strcspn(feature, " ");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)length, feature);
        if (!pa_isa_cpu_supports(name) && used + length + 3 < sizeof missing)
            used += (size_t)snprintf(missing + used, sizeof missing - used, "%s%s",
                                     used ? ", " : "", name);
        feature += length;
    }
    if (!used)
        return;
    char model[160];
    cpu_model(model, sizeof model);
    fprintf(stderr,
            "%s: this CPU (%s) lacks %s, which this build of perfatlas was compiled for "
            "(%s); rebuild perfatlas on this machine (make install) or once for every node "
            "type (make install PERFATLAS_ARCH=%s, the level this CPU has)\n",
            binary_name(), model, missing, PERFATLAS_BUILT_FOR, cpu_level());
    _exit(2); /* nothing else of this build may run: not even atexit handlers */
}

#else /* not x86: the compiler's -march describes a CPU family this check does not know */

int pa_isa_cpu_supports(const char *name)
{
    (void)name;
    return 1;
}

#endif
