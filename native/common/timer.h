/* Calibrated wall-clock timer.
 *
 * x86: the time-stamp counter is used only where it is invariant (constant rate across P- and
 * C-states: CPUID 0x80000007 EDX bit 8). aarch64: the generic timer's virtual count, cntvct_el0,
 * which the architecture defines as constant-rate and Linux lets user space read (its nominal rate
 * is cntfrq_el0). Either counter's rate is calibrated against CLOCK_MONOTONIC_RAW. Elsewhere the
 * timer is clock_gettime(CLOCK_MONOTONIC_RAW). The resolution reported is measured, not assumed. */
#ifndef PA_TIMER_H
#define PA_TIMER_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define PA_HAVE_TSC 1
#elif defined(__aarch64__)
#define PA_HAVE_CNTVCT 1
#endif

#include "json.h"

/* 1 where pa_ticks() reads a counter (the TSC, or cntvct_el0), 0 for CLOCK_MONOTONIC_RAW. */
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
 * dispatch-serializing under Linux); on aarch64 isb does the same for the counter read (Arm ARM
 * D11.2.2: reads of the counter may occur speculatively and out of order; Linux's
 * __arch_counter_get_cntvct brackets it likewise). */
static inline uint64_t pa_ticks(void)
{
#ifdef PA_HAVE_TSC
    if (pa_timer_uses_tsc) {
        _mm_lfence();
        uint64_t tsc = __rdtsc();
        _mm_lfence();
        return tsc;
    }
#elif defined(PA_HAVE_CNTVCT)
    if (pa_timer_uses_tsc) {
        uint64_t count;
        __asm__ volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(count) : : "memory");
        return count;
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
#elif defined(PA_HAVE_CNTVCT)
    if (pa_timer_uses_tsc) {
        uint64_t count;
        __asm__ volatile("mrs %0, cntvct_el0" : "=r"(count));
        return count;
    }
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double pa_ticks_to_seconds(uint64_t ticks);
double pa_timer_resolution_ns(void);
/* The ticks an empty interval of two back-to-back pa_ticks_unfenced() reads measures (the median
 * of 63): what a timed interval holds besides the work it times. Valid after
 * pa_timer_start_calibration. */
uint64_t pa_ticks_unfenced_cost(void);

/* "timer": {"source": ..., "resolution_ns": ..., "tsc_hz": ... or null}; on aarch64 also
 * "counter_hz" (cntvct_el0's calibrated rate) and "cntfrq_hz" (the rate cntfrq_el0 states). */
void pa_timer_json(pa_json *json);

#endif
