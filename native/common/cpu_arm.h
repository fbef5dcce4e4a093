/* Arm CPUs by name: the MIDR_EL1 implementer and part numbers of the cores HPC nodes use. */
#ifndef PA_CPU_ARM_H
#define PA_CPU_ARM_H

#include <stddef.h>

/* "Arm Neoverse V2" for implementer 0x41, part 0xd4f; NULL for a core the table does not know. */
const char *pa_arm_cpu_name(unsigned implementer, unsigned part);

/* This CPU, named: "Arm Neoverse V2 (implementer 0x41, part 0xd4f)", from MIDR_EL1 (which Linux
 * lets user space read where HWCAP_CPUID is set); 0, or -1 where it cannot be read (not aarch64,
 * or no HWCAP_CPUID). */
int pa_arm_cpu_describe(char *out, size_t size);

#endif
