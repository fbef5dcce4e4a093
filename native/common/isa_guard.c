/* The check that this CPU can run this build, before any instruction the build may not run here.
 *
 * The measuring code is compiled for the build machine (-march=native, or PERFATLAS_ARCH): on a
 * CPU without one of its extensions (a login node's AVX-512 build on older compute nodes) it dies
 * with SIGILL wherever the compiler happened to use one. This file is compiled for the x86-64 (or
 * armv8-a) baseline (native/common/CMakeLists.txt), and its constructor runs before main and
 * before the program's other constructors: it compares what the build may use (isa_built.c) with
 * what the CPU and the OS support (x86: __builtin_cpu_supports, that is CPUID, and XGETBV for the
 * AVX and AMX register states; aarch64: the kernel's HWCAP and HWCAP2 bits, getauxval(3)) and, if
 * something is missing, says so in one sentence and exits with status 2. */
#define _GNU_SOURCE
#include "isa.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef PERFATLAS_BUILT_FOR /* "-march=native for a znver4 CPU" (CMakeLists.txt) */
#define PERFATLAS_BUILT_FOR "unknown flags"
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define PA_ISA_GUARD 1
#define CPU_INIT()   __builtin_cpu_init() /* required before __builtin_cpu_supports */

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

#elif defined(__aarch64__)
#include <sys/auxv.h>

#include "cpu_arm.h"
#define PA_ISA_GUARD 1
#define CPU_INIT()   (void)0

/* The names are /proc/cpuinfo's "Features" (isa_built.c), each with its HWCAP bit
 * (arch/arm64/include/uapi/asm/hwcap.h); a bit this C library does not define is not checked. */
int pa_isa_cpu_supports(const char *name)
{
    unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
    (void)hwcap2;
/* clang-format off */
#define PA_ISA(feature, word, bit)                                                               \
    if (strcmp(name, feature) == 0)                                                              \
        return (word & (bit)) != 0
    PA_ISA("crc32", hwcap, HWCAP_CRC32); PA_ISA("aes", hwcap, HWCAP_AES);
    PA_ISA("pmull", hwcap, HWCAP_PMULL); PA_ISA("sha1", hwcap, HWCAP_SHA1);
    PA_ISA("sha2", hwcap, HWCAP_SHA2); PA_ISA("atomics", hwcap, HWCAP_ATOMICS);
    PA_ISA("fphp", hwcap, HWCAP_FPHP); PA_ISA("asimdhp", hwcap, HWCAP_ASIMDHP);
    PA_ISA("asimdrdm", hwcap, HWCAP_ASIMDRDM); PA_ISA("jscvt", hwcap, HWCAP_JSCVT);
    PA_ISA("fcma", hwcap, HWCAP_FCMA); PA_ISA("lrcpc", hwcap, HWCAP_LRCPC);
    PA_ISA("sha3", hwcap, HWCAP_SHA3); PA_ISA("sm3", hwcap, HWCAP_SM3);
    PA_ISA("sm4", hwcap, HWCAP_SM4); PA_ISA("asimddp", hwcap, HWCAP_ASIMDDP);
    PA_ISA("sha512", hwcap, HWCAP_SHA512); PA_ISA("sve", hwcap, HWCAP_SVE);
    PA_ISA("asimdfhm", hwcap, HWCAP_ASIMDFHM);
#ifdef HWCAP2_SVE2
    PA_ISA("sve2", hwcap2, HWCAP2_SVE2); PA_ISA("frint", hwcap2, HWCAP2_FRINT);
    PA_ISA("i8mm", hwcap2, HWCAP2_I8MM); PA_ISA("bf16", hwcap2, HWCAP2_BF16);
    PA_ISA("svei8mm", hwcap2, HWCAP2_SVEI8MM); PA_ISA("svebf16", hwcap2, HWCAP2_SVEBF16);
    PA_ISA("rng", hwcap2, HWCAP2_RNG); PA_ISA("mte", hwcap2, HWCAP2_MTE);
#endif
#undef PA_ISA
    /* clang-format on */
    return 1;
}

/* A build for this level (-march=) runs here: the Armv8/v9 profile its extensions make up, as far
 * as user space sees (SVE2: Armv9-A; SVE or dot product: Armv8.2-A with them). */
static const char *cpu_level(void)
{
    if (pa_isa_cpu_supports("sve2"))
        return "armv9-a";
    if (pa_isa_cpu_supports("sve"))
        return "armv8.2-a+sve";
    if (pa_isa_cpu_supports("asimddp") && pa_isa_cpu_supports("atomics"))
        return "armv8.2-a+dotprod";
    return "armv8-a";
}

static void cpu_model(char *model, size_t size)
{
    if (pa_arm_cpu_describe(model, size) != 0)
        snprintf(model, size, "unknown model");
}

#endif

#ifdef PA_ISA_GUARD
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
    CPU_INIT();
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

#else /* neither x86 nor aarch64: the compiler's -march describes a CPU family this check does not
       * know */

int pa_isa_cpu_supports(const char *name)
{
    (void)name;
    return 1;
}

#endif
