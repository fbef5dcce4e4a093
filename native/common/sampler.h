/* Warm-up, calibration and timed samples (Hoefler & Belli, SC15: warm up, then repeat, keep every
 * sample). The work is a callback doing `repetitions` units of work; a sample is timed from one
 * barrier to the next, so in team mode (every thread of an OpenMP team calls these functions with
 * its own context) it lasts until the slowest thread is done. */
#ifndef PA_SAMPLER_H
#define PA_SAMPLER_H

#include <stdint.h>

typedef void pa_work_fn(void *context, uint64_t repetitions);

typedef struct {
    pa_work_fn *work;
    double min_seconds; /* a calibrated sample lasts at least this long */
    int team;           /* 1: called by every thread of the enclosing OpenMP team */
} pa_sampler;

/* Runs one warm-up repetition, then grows the count until the fastest of three samples lasts
 * min_seconds; returns that count (the same on every thread of a team). */
uint64_t pa_sampler_calibrate(pa_sampler *sampler, void *context);

/* One timed sample of `repetitions`; returns its wall time in seconds, in team mode the time one
 * thread measured, the same on every thread. */
double pa_sampler_sample(pa_sampler *sampler, void *context, uint64_t repetitions);

#endif
