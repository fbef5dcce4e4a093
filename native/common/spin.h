/* The hint a spin-wait loop gives the core on each turn: x86 pause, aarch64 yield (they free the
 * pipeline for a sibling hardware thread and, on x86, avoid the memory-order flush at the loop's
 * exit; Intel SDM PAUSE, Arm ARM YIELD). Nothing elsewhere. */
#ifndef PA_SPIN_H
#define PA_SPIN_H

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

static inline void pa_spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#endif
}

#endif
