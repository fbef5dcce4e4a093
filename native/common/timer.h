/* Calibrated wall-clock timer.
 *
 * The time-stamp counter is used only where it is invariant (constant rate across P- and C-states:
 * CPUID 0x80000007 EDX bit 8); its rate is calibrated against CLOCK_MONOTONIC_RAW. Elsewhere the
 * timer is clock_gettime(CLOCK_MONOTONIC_RAW). The resolution reported is measured, not assumed. */
#ifndef PA_TIMER_H
#define PA_TIMER_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define PA_HAVE_TSC 1
#endif

#include "json.h"

extern int pa_timer_uses_tsc;

/* Calibrates the timer and measures its resolution; call once before any pa_ticks(). */
void pa_timer_init(void);
/* The same in two halves, for a program that only converts ticks to seconds at its end (a
 * profiler): start picks the source and takes the first reading; finish, before the first
 * conversion, takes the second (waiting until 40 ms have passed) and measures the resolution.
 * Ticks may be read in between. */
void pa_timer_start_calibration(void);
void pa_timer_finish_calibration(void);

/* A timestamp in timer ticks. lfence on both sides keeps the read from drifting into the timed
 * region or out of it (Intel, "How to benchmark code execution times", 2010; AMD's lfence is
 * dispatch-serializing under Linux). */
static inline uint64_t pa_ticks(void)
{
#ifdef PA_HAVE_TSC
    if (pa_timer_uses_tsc) {
        _mm_lfence();
        uint64_t tsc = __rdtsc();
        _mm_lfence();
        return tsc;
    }
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The same without the fences: cheaper by half where rdtsc costs ~10 ns (a VM), for intervals far
 * longer than the few cycles an unfenced read may drift by, such as a profiler's timing of whole
 * MPI calls. Measurement kernels use pa_ticks(). */
static inline uint64_t pa_ticks_unfenced(void)
{
#ifdef PA_HAVE_TSC
    if (pa_timer_uses_tsc)
        return __rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double pa_ticks_to_seconds(uint64_t ticks);
double pa_timer_resolution_ns(void);

/* "timer": {"source": ..., "resolution_ns": ..., "tsc_hz": ... or null} */
void pa_timer_json(pa_json *json);

#endif
