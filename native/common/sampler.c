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

uint64_t pa_sampler_calibrate(pa_sampler *s, void *context)
{
    uint64_t repetitions = 1;
    pa_sampler_sample(s, context, repetitions); /* warm-up: caches, TLB, page tables, clocks */
    for (;;) {
        double seconds = pa_sampler_sample(s, context, repetitions);
        if (seconds >= s->min_seconds)
            return repetitions;
        /* aim 25 % above the minimum so that noise does not push samples below it */
        double factor = seconds > 0 ? 1.25 * s->min_seconds / seconds : 100.0;
        factor = factor > 100.0 ? 100.0 : factor < 1.5 ? 1.5 : factor;
        repetitions = (uint64_t)ceil((double)repetitions * factor);
    }
}
