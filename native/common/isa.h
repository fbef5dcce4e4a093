/* The x86 or aarch64 instruction-set extensions a build was compiled for, and the check at start that the
 * CPU running it has them (isa_built.c, isa_guard.c; docs/portability.md). */
#ifndef PA_ISA_H
#define PA_ISA_H

/* Space-separated names as GCC's __builtin_cpu_supports spells them (" sse3 ssse3 ... avx2"), or
 * on aarch64 as /proc/cpuinfo's Features spells them (" crc32 atomics ... sve"),
 * read from the compiler's predefined macros under the build's architecture flags. */
extern const char pa_isa_built_for[];

/* Whether this CPU (and the OS: the AVX and AMX register states, the HWCAP bits) supports the named
 * extension; 1 for a name the check does not know. */
int pa_isa_cpu_supports(const char *name);

#endif
