#include "timer.h"

#ifdef PA_HAVE_TSC
#include <cpuid.h>
#endif
#include <math.h>
#include <stdlib.h>

int pa_timer_uses_tsc;
static double seconds_per_tick = 1e-9;
static double tsc_hz;
static double resolution_ns;

/* The counter pa_ticks() may read is constant-rate: the invariant TSC; on aarch64 the generic
 * timer always is (Arm ARM D11.1.2), and Linux enables EL0 reads of cntvct_el0. */
static int tsc_is_invariant(void)
{
#if defined(PA_HAVE_CNTVCT)
    return 1;
#elif !defined(PA_HAVE_TSC)
    return 0;
#else
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx);
    return (edx >> 8) & 1;
#endif
}

static double monotonic_raw_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One (clock, tsc) pair: the clock read bracketed by two TSC reads, their midpoint taken; of
 * several tries the tightest bracket, so that an interrupt or a preemption cannot skew it. */
static void paired_read(double *ns, double *tsc)
{
    double tightest = INFINITY;
    for (int try = 0; try < 32; try++) {
        uint64_t before = pa_ticks();
        double clock = monotonic_raw_ns();
        uint64_t after = pa_ticks();
        if ((double)(after - before) < tightest) {
            tightest = (double)(after - before);
            *ns = clock;
            *tsc = 0.5 * (double)before + 0.5 * (double)after;
        }
    }
}

/* TSC rate from two paired reads at least 40 ms apart: the bracketing error (~50 ns) is ~1e-6 of
 * that. The first read is taken when calibration starts, the second when it finishes. */
static double start_ns, start_tsc;

static void calibrate_tsc(void)
{
    double ns1, tsc1;
    do
        paired_read(&ns1, &tsc1);
    while (ns1 - start_ns < 40e6);
    tsc_hz = (tsc1 - start_tsc) / (ns1 - start_ns) * 1e9;
    seconds_per_tick = 1.0 / tsc_hz;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Resolution: the median, over many trials, of the smallest nonzero step between consecutive
 * reads (a tick can never be resolved finer than the cost of one read). */
static void measure_resolution(void)
{
    enum {
        trials = 201
    };
    double steps[trials];
    for (int t = 0; t < trials; t++) {
        uint64_t first = pa_ticks(), next;
        do
            next = pa_ticks();
        while (next == first);
        steps[t] = (double)(next - first) * seconds_per_tick * 1e9;
    }
    qsort(steps, trials, sizeof *steps, compare_doubles);
    resolution_ns = steps[trials / 2];
}

uint64_t pa_ticks_unfenced_cost(void)
{
    enum {
        pairs = 63
    };
    double empty[pairs];
    for (int i = 0; i < pairs; i++) {
        uint64_t start = pa_ticks_unfenced();
        empty[i] = (double)(pa_ticks_unfenced() - start);
    }
    qsort(empty, pairs, sizeof *empty, compare_doubles);
    return (uint64_t)empty[pairs / 2];
}

void pa_timer_start_calibration(void)
{
    pa_timer_uses_tsc = tsc_is_invariant();
    if (pa_timer_uses_tsc)
        paired_read(&start_ns, &start_tsc);
}

void pa_timer_finish_calibration(void)
{
    if (pa_timer_uses_tsc)
        calibrate_tsc();
    measure_resolution();
}

void pa_timer_init(void)
{
    pa_timer_start_calibration();
    pa_timer_finish_calibration();
}

double pa_ticks_to_seconds(uint64_t ticks) { return (double)ticks * seconds_per_tick; }

double pa_timer_resolution_ns(void) { return resolution_ns; }

#ifdef PA_HAVE_CNTVCT
#define COUNTER_SOURCE "cntvct_el0 (generic timer)"
/* The generic timer's frequency as the firmware programmed it into cntfrq_el0. */
static double cntfrq_hz(void)
{
    uint64_t hz;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
    return (double)hz;
}
#else
#define COUNTER_SOURCE "rdtsc (invariant TSC)"
#endif

void pa_timer_json(pa_json *json)
{
    pa_json_key(json, "timer");
    pa_json_begin_object(json);
    pa_json_key_string(json, "source",
                       pa_timer_uses_tsc ? COUNTER_SOURCE : "clock_gettime(CLOCK_MONOTONIC_RAW)");
    pa_json_key_double(json, "resolution_ns", resolution_ns);
    pa_json_key(json, "tsc_hz");
#ifdef PA_HAVE_TSC
    if (pa_timer_uses_tsc)
        pa_json_double(json, tsc_hz);
    else
#endif
        pa_json_null(json);
#ifdef PA_HAVE_CNTVCT /* the TSC's place: the counter's calibrated and its stated rate */
    pa_json_key_double(json, "counter_hz", tsc_hz);
    pa_json_key_double(json, "cntfrq_hz", cntfrq_hz());
#endif
    pa_json_end_object(json);
}
