/* The names of Arm cores (Arm's, Fujitsu's, NVIDIA's, Ampere's technical reference manuals: the
 * MIDR_EL1 implementer and primary part number). Compiled with the ISA check, for the baseline of
 * the architecture, so that the check may name the CPU before anything else runs. */
#include "cpu_arm.h"

#include <stdint.h>
#include <stdio.h>
#ifdef __aarch64__
#include <sys/auxv.h>
#endif

static const struct {
    unsigned implementer, part;
    const char *name;
} cores[] = {
    {0x41, 0xd03, "Arm Cortex-A53"},   {0x41, 0xd07, "Arm Cortex-A57"},
    {0x41, 0xd08, "Arm Cortex-A72"},   {0x41, 0xd0b, "Arm Cortex-A76"},
    {0x41, 0xd0c, "Arm Neoverse N1"},  {0x41, 0xd40, "Arm Neoverse V1"},
    {0x41, 0xd49, "Arm Neoverse N2"},  {0x41, 0xd4f, "Arm Neoverse V2"},
    {0x41, 0xd84, "Arm Neoverse V3"},  {0x41, 0xd8e, "Arm Neoverse N3"},
    {0x46, 0x001, "Fujitsu A64FX"},    {0x4e, 0x004, "NVIDIA Carmel"},
    {0xc0, 0xac3, "Ampere AmpereOne"}, {0x48, 0xd01, "HiSilicon TaiShan v110"},
};

const char *pa_arm_cpu_name(unsigned implementer, unsigned part)
{
    for (size_t i = 0; i < sizeof cores / sizeof *cores; i++)
        if (cores[i].implementer == implementer && cores[i].part == part)
            return cores[i].name;
    return NULL;
}

int pa_arm_cpu_describe(char *out, size_t size)
{
#if defined(__aarch64__) && defined(HWCAP_CPUID)
    if (!(getauxval(AT_HWCAP) & HWCAP_CPUID))
        return -1;
    uint64_t midr;
    __asm__ volatile("mrs %0, midr_el1" : "=r"(midr)); /* emulated by Linux for EL0 */
    unsigned implementer = (unsigned)(midr >> 24) & 0xff, part = (unsigned)(midr >> 4) & 0xfff;
    const char *name = pa_arm_cpu_name(implementer, part);
    snprintf(out, size, "%s (implementer 0x%02x, part 0x%03x)", name ? name : "Arm CPU",
             implementer, part);
    return 0;
#else
    (void)out, (void)size;
    return -1;
#endif
}
