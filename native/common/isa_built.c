/* Which extensions this build may use (x86, or aarch64): compiled with the build's architecture flags (like every
 * measuring file), so the compiler's predefined macros (__AVX2__, __AVX512F__, ...) say what it
 * was allowed to emit everywhere else. Only data: no instruction of this file runs. */
#include "isa.h"

const char pa_isa_built_for[] = ""
#ifdef __SSE3__
                                " sse3"
#endif
#ifdef __SSSE3__
                                " ssse3"
#endif
#ifdef __SSE4_1__
                                " sse4.1"
#endif
#ifdef __SSE4_2__
                                " sse4.2"
#endif
#ifdef __SSE4A__
                                " sse4a"
#endif
#ifdef __POPCNT__
                                " popcnt"
#endif
#ifdef __LAHF_SAHF__
                                " lahf_lm"
#endif
#if defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_16) && (defined(__x86_64__) || defined(__i386__))
                                " cmpxchg16b"
#endif
#ifdef __MOVBE__
                                " movbe"
#endif
#ifdef __LZCNT__
                                " lzcnt"
#endif
#ifdef __BMI__
                                " bmi"
#endif
#ifdef __BMI2__
                                " bmi2"
#endif
#ifdef __ADX__
                                " adx"
#endif
#ifdef __AES__
                                " aes"
#endif
#ifdef __PCLMUL__
                                " pclmul"
#endif
#ifdef __SHA__
                                " sha"
#endif
#ifdef __F16C__
                                " f16c"
#endif
#ifdef __AVX__
                                " avx"
#endif
#ifdef __AVX2__
                                " avx2"
#endif
#ifdef __FMA__
                                " fma"
#endif
#ifdef __FMA4__
                                " fma4"
#endif
#ifdef __XOP__
                                " xop"
#endif
#ifdef __AVXVNNI__
                                " avxvnni"
#endif
#ifdef __GFNI__
                                " gfni"
#endif
#ifdef __VAES__
                                " vaes"
#endif
#ifdef __VPCLMULQDQ__
                                " vpclmulqdq"
#endif
#ifdef __AVX512F__
                                " avx512f"
#endif
#ifdef __AVX512CD__
                                " avx512cd"
#endif
#ifdef __AVX512BW__
                                " avx512bw"
#endif
#ifdef __AVX512DQ__
                                " avx512dq"
#endif
#ifdef __AVX512VL__
                                " avx512vl"
#endif
#ifdef __AVX512IFMA__
                                " avx512ifma"
#endif
#ifdef __AVX512VBMI__
                                " avx512vbmi"
#endif
#ifdef __AVX512VBMI2__
                                " avx512vbmi2"
#endif
#ifdef __AVX512VNNI__
                                " avx512vnni"
#endif
#ifdef __AVX512BITALG__
                                " avx512bitalg"
#endif
#ifdef __AVX512VPOPCNTDQ__
                                " avx512vpopcntdq"
#endif
#ifdef __AVX512BF16__
                                " avx512bf16"
#endif
#ifdef __AVX512FP16__
                                " avx512fp16"
#endif
#ifdef __AVX512VP2INTERSECT__
                                " avx512vp2intersect"
#endif
#ifdef __AMX_TILE__
                                " amx-tile"
#endif
#ifdef __AMX_INT8__
                                " amx-int8"
#endif
#ifdef __AMX_BF16__
                                " amx-bf16"
#endif
/* aarch64: the names of /proc/cpuinfo's Features, from the ACLE's feature macros */
#ifdef __ARM_FEATURE_CRC32
                                " crc32"
#endif
#ifdef __ARM_FEATURE_AES
                                " aes"
#endif
#ifdef __ARM_FEATURE_AES
                                " pmull"
#endif
#ifdef __ARM_FEATURE_SHA2
                                " sha2"
#endif
#ifdef __ARM_FEATURE_ATOMICS
                                " atomics"
#endif
#ifdef __ARM_FEATURE_FP16_SCALAR_ARITHMETIC
                                " fphp"
#endif
#ifdef __ARM_FEATURE_FP16_VECTOR_ARITHMETIC
                                " asimdhp"
#endif
#ifdef __ARM_FEATURE_QRDMX
                                " asimdrdm"
#endif
#ifdef __ARM_FEATURE_JCVT
                                " jscvt"
#endif
#ifdef __ARM_FEATURE_COMPLEX
                                " fcma"
#endif
#ifdef __ARM_FEATURE_SHA3
                                " sha3"
#endif
#ifdef __ARM_FEATURE_SM3
                                " sm3"
#endif
#ifdef __ARM_FEATURE_SM4
                                " sm4"
#endif
#ifdef __ARM_FEATURE_DOTPROD
                                " asimddp"
#endif
#ifdef __ARM_FEATURE_SHA512
                                " sha512"
#endif
#ifdef __ARM_FEATURE_FP16_FML
                                " asimdfhm"
#endif
#ifdef __ARM_FEATURE_SVE
                                " sve"
#endif
#ifdef __ARM_FEATURE_SVE2
                                " sve2"
#endif
#ifdef __ARM_FEATURE_FRINT
                                " frint"
#endif
#ifdef __ARM_FEATURE_MATMUL_INT8
                                " i8mm"
#endif
#ifdef __ARM_FEATURE_BF16_VECTOR_ARITHMETIC
                                " bf16"
#endif
#ifdef __ARM_FEATURE_SVE_MATMUL_INT8
                                " svei8mm"
#endif
#ifdef __ARM_FEATURE_RNG
                                " rng"
#endif
#ifdef __ARM_FEATURE_MEMORY_TAGGING
                                " mte"
#endif
    ;
