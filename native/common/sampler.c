#include "sampler.h"

#include <math.h>
#include <omp.h>

#include "timer.h"

double pa_sampler_sample(pa_sampler *s, void *context, uint64_t repetitions)
{
    if (s->team) {
#pragma omp barrier
    }
    uint64_t start = pa_ticks();
    s->work(context, repetitions);
    if (s->team) {
#pragma omp barrier
    }
    uint64_t stop = pa_ticks();
    double seconds = pa_ticks_to_seconds(stop - start);
    if (s->team) {
        /* broadcast one thread's barrier-to-barrier time, so that all threads decide alike */
#pragma omp single copyprivate(seconds)
        {
        }
    }
    return seconds;
}

/* The count that makes a sample last `target` seconds, from a sample of `repetitions` that took
 * `seconds`; at least 1.5x and at most 100x the old count while growing. */
static uint64_t scaled(uint64_t repetitions, double seconds, double target)
{
    double factor = seconds > 0 ? target / seconds : 100.0;
    factor = factor > 100.0 ? 100.0 : factor < 1.5 ? 1.5 : factor;
    return (uint64_t)ceil((double)repetitions * factor);
}

uint64_t pa_sampler_calibrate(pa_sampler *s, void *context)
{
    /* aim 25 % above the minimum so that ordinary noise does not push samples below it */
    const double target = 1.25 * s->min_seconds;
    uint64_t repetitions = 1;
    pa_sampler_sample(s, context, repetitions); /* warm-up: caches, TLB, page tables, clocks */
    for (;;) {
        double seconds = pa_sampler_sample(s, context, repetitions);
        if (seconds < s->min_seconds) {
            repetitions = scaled(repetitions, seconds, target);
            continue;
        }
        /* A preemption may have stretched that sample: size the count by the fastest of three,
         * the machine's undisturbed speed, so that later samples do not fall short. */
        for (int check = 0; check < 2; check++) {
            double again = pa_sampler_sample(s, context, repetitions);
            seconds = again < seconds ? again : seconds;
        }
        if (seconds >= s->min_seconds)
            return repetitions;
        repetitions = (uint64_t)ceil((double)repetitions * target / seconds);
    }
}
