/* pa-mem-loaded-latency: dependent-load latency on one PU while injector threads on other PUs
 * stream over buffers of their own at a controlled rate: the latency-versus-bandwidth curve of a
 * memory system (Intel MLC's --loaded_latency; unprivileged, any x86-64 or aarch64 machine).
 *
 * The chasing thread (cpu) follows a random chain (chase.h) over `bytes`; each injector (one
 * thread per PU of `injectors`) visits the cache lines of its own buffer in order, one access per
 * line (a load or a normal store, as `mix` says), then pauses `delay` ns on the timer before the
 * next. Within a point, samples alternate idle (injectors spinning, no memory traffic) and loaded
 * (injectors running), so that drift hits both alike (Hoefler & Belli, SC15); each loaded sample
 * also counts the lines the injectors accessed over it: the bandwidth actually injected.
 *
 * Memory placement (libnuma, memory.h): `node` places the chased buffer (local: the chasing
 * thread's first touch; K: bound to node K; interleave), `inject_node` the injectors' buffers
 * (same: as `node`; local: each injector's own first touch), so that the remote node's memory
 * controller can be loaded while local memory is chased, and vice versa. Where the pages landed
 * is read back (move_pages) into "placement" (the chased buffer) and "inject_placement" (the
 * injectors' buffers together).
 *
 * delay= may list a series (delay=0,100,400): one process measures the points in order with the
 * same buffers and chain, and writes one document per point, all in one JSON array
 * (docs/contract.md, Series). Each point ends with the checks: the chase ended where its loads
 * lead, and every injector's sum of the values it loaded and the values its stores left match
 * their closed forms (exit 3 otherwise). */
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "alloc.h"
#include "args.h"
#include "chase.h"
#include "memory.h"
#include "numa_counters.h"
#include "result.h"
#include "sampler.h"
#include "timer.h"

static const pa_param params[] = {
    {"delay", PA_INTS, "0,100,400,1600",
     "ns each injector pauses after each cache-line access (0: as fast as it can); a "
     "comma-separated list measures a series",
     NULL, 0, 1e9},
    {"mix", PA_CHOICE, "read",
     "what each injector does per cache line of 64 B: read (one load: 64 B read), write (one "
     "store: 64 B written, plus the read for ownership that write-allocate adds, not counted), "
     "1:1 (lines alternately read and written), 2:1 (two lines read, then one written)",
     "read,write,1:1,2:1", 0, 0},
    {"bytes", PA_SIZE, "256MiB", "working set of the chasing thread, one chain element per line",
     NULL, 0x1p20, 0x1p40},
    {"chain", PA_CHOICE, "page",
     "page: lines in random order within each page, pages in random order (latency without TLB "
     "misses); random: one random cycle over all lines (TLB misses included)",
     "page,random", 0, 0},
    {"cpu", PA_INT, "0", "PU of the chasing thread", NULL, 0, 65535},
    {"injectors", PA_CPUS, "1", "PUs of the injector threads, one thread each", NULL, 0, 0},
    {"inject_bytes", PA_SIZE, "64MiB", "buffer each injector streams over", NULL, 0x1p20, 0x1p40},
    {"samples", PA_INT, "7", "timed samples of each condition (idle, loaded)", NULL, 1, 1e6},
    {"min_sample_time", PA_DURATION, "20ms", "shortest duration of one sample", NULL, 0, 3600},
    {"seed", PA_INT, "1", "seed of the random chain order", NULL, 0, 0x1p62},
    {"node", PA_NODE, "local",
     "memory of the chased buffer: local (first touch by the chasing thread), a NUMA node number "
     "(bind) or interleave",
     NULL, 0, 0},
    {"inject_node", PA_STRING, "same",
     "memory of the injectors' buffers: same (as node), local (each injector's own first touch), "
     "a NUMA node number (bind) or interleave",
     NULL, 0, 0},
};

#define LINE_BYTES 64u /* bytes one access moves (the line it loads or stores) */
#define CHUNK      64u /* accesses between an injector's looks at its request */
#define PERIODS    6u  /* injector buffers hold a whole number of every mix's period */

static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#endif
}

/* Requests to the injectors, as generation * 4 + mode so that every request is distinct. */
enum {
    MODE_IDLE,
    MODE_INJECT,
    MODE_CHECK,
    MODE_STOP
};

typedef struct {
    _Alignas(64) atomic_uint acknowledged;
    _Alignas(64) atomic_uint_least64_t published; /* accesses, every CHUNK */
    _Alignas(64) int cpu;
    pa_buffer buffer;
    size_t lines;
    uint64_t accesses, sum; /* since the first point */
    int failed;
    char failure[160];
    _Alignas(64) char end;
} injector;

typedef struct {
    int period, reads; /* per period lines: the first `reads` are read, the others written */
} mix_pattern;

typedef struct {
    _Alignas(64) atomic_uint request;
    _Alignas(64) int ninjectors, samples;
    injector *injectors;
    mix_pattern mix;
    uint64_t delay_ticks;
    double min_seconds;
    pa_buffer buffer;
    pa_chain chain;
    const char *why;
    unsigned generation;
} experiment;

static mix_pattern mix_of(const char *mix)
{
    if (strcmp(mix, "write") == 0)
        return (mix_pattern){1, 0};
    if (strcmp(mix, "1:1") == 0)
        return (mix_pattern){2, 1};
    if (strcmp(mix, "2:1") == 0)
        return (mix_pattern){3, 2};
    return (mix_pattern){1, 1};
}

/* Each line's first word holds the number of the access that last stored to it; first touch
 * writes L to line L, which is access L of the first pass. */
static void injector_init(injector *in)
{
    for (size_t line = 0; line < in->lines; line++)
        *(uint64_t *)(in->buffer.base + line * LINE_BYTES) = line;
}

/* CHUNK accesses from where the injector stands, pausing delay_ticks after each. */
static void inject_chunk(injector *in, mix_pattern mix, uint64_t delay_ticks)
{
    uint64_t a = in->accesses, sum = in->sum;
    size_t line = (size_t)(a % in->lines);
    int phase = (int)(line % (size_t)mix.period);
    for (unsigned k = 0; k < CHUNK; k++) {
        uint64_t *word = (uint64_t *)(in->buffer.base + line * LINE_BYTES);
        if (phase < mix.reads)
            sum += *(volatile uint64_t *)word;
        else
            *(volatile uint64_t *)word = a;
        a++;
        if (++line == in->lines)
            line = 0;
        if (++phase == mix.period)
            phase = 0;
        if (delay_ticks) {
            uint64_t start = pa_ticks_unfenced();
            while (pa_ticks_unfenced() - start < delay_ticks)
                spin_pause();
        }
    }
    in->accesses = a;
    in->sum = sum;
    atomic_store_explicit(&in->published, a, memory_order_relaxed);
}

/* The closed forms: after A accesses, the loads summed the numbers of every read line they
 * visited (read lines are never stored to), and written line L holds the last access to it,
 * L + lines * floor((A - 1 - L) / lines), or its first-touch L. */
static void injector_check(injector *in, mix_pattern mix)
{
    uint64_t A = in->accesses, passes = A / in->lines, rest = A % in->lines;
    uint64_t expected = 0;
    for (size_t line = 0; line < in->lines; line++) {
        uint64_t value = *(const uint64_t *)(in->buffer.base + line * LINE_BYTES);
        if ((int)(line % (size_t)mix.period) < mix.reads) {
            expected += line * (passes + (line < rest));
            if (value != line) {
                snprintf(in->failure, sizeof in->failure,
                         "the injector on PU %d found %llu in read line %zu", in->cpu,
                         (unsigned long long)value, line);
                in->failed = 1;
                return;
            }
        } else {
            uint64_t last = A > line ? line + in->lines * ((A - 1 - line) / in->lines) : line;
            if (value != last) {
                snprintf(in->failure, sizeof in->failure,
                         "the injector on PU %d: written line %zu holds %llu, not %llu", in->cpu,
                         line, (unsigned long long)value, (unsigned long long)last);
                in->failed = 1;
                return;
            }
        }
    }
    if (expected != in->sum) {
        snprintf(in->failure, sizeof in->failure,
                 "the injector on PU %d summed %llu over its loads, not %llu", in->cpu,
                 (unsigned long long)in->sum, (unsigned long long)expected);
        in->failed = 1;
    }
}

/* An injector's life: first touch of its buffer, then what the chasing thread asks, until stop. */
static void injector_thread(experiment *e, injector *in)
{
    if (!e->why)
        injector_init(in); /* first touch by the injector: its memory is its own */
#pragma omp barrier
#pragma omp barrier
    if (e->why)
        return;
    unsigned seen = 0;
    for (;;) {
        unsigned request = atomic_load(&e->request);
        int mode = (int)(request % 4);
        if (mode == MODE_STOP)
            return;
        if (request == seen || mode == MODE_IDLE) {
            if (request != seen)
                atomic_store(&in->acknowledged, request);
            seen = request;
            spin_pause();
            continue;
        }
        seen = request;
        if (mode == MODE_CHECK) {
            injector_check(in, e->mix);
            atomic_store(&in->acknowledged, request);
            continue;
        }
        inject_chunk(in, e->mix, e->delay_ticks); /* running before it says so */
        atomic_store(&in->acknowledged, request);
        while (atomic_load_explicit(&e->request, memory_order_relaxed) == request)
            inject_chunk(in, e->mix, e->delay_ticks);
    }
}

static void ask(experiment *e, int mode)
{
    unsigned request = ++e->generation * 4 + (unsigned)mode;
    atomic_store(&e->request, request);
    if (mode == MODE_STOP)
        return;
    for (int i = 0; i < e->ninjectors; i++)
        while (atomic_load(&e->injectors[i].acknowledged) != request)
            spin_pause();
}

static uint64_t injected_accesses(const experiment *e)
{
    uint64_t total = 0;
    for (int i = 0; i < e->ninjectors; i++)
        total += atomic_load_explicit(&e->injectors[i].published, memory_order_relaxed);
    return total;
}

typedef struct {
    double *idle_ns, *loaded_ns, *injected_Bps, *seconds;
    uint64_t repetitions, accesses;
} point_samples;

/* One point: idle and loaded samples alternated, then the checks of the chase and injectors. */
static void measure_point(experiment *e, pa_chaser *chaser, pa_sampler *sampler, point_samples *p)
{
    double loads = (double)(p->repetitions * PA_CHASE_BLOCK);
    p->accesses = 0;
    for (int i = 0; i < e->samples; i++) {
        ask(e, MODE_IDLE);
        p->idle_ns[i] = pa_sampler_sample(sampler, chaser, p->repetitions) * 1e9 / loads;
        ask(e, MODE_INJECT);
        uint64_t before = injected_accesses(e);
        p->seconds[i] = pa_sampler_sample(sampler, chaser, p->repetitions);
        uint64_t accessed = injected_accesses(e) - before;
        p->loaded_ns[i] = p->seconds[i] * 1e9 / loads;
        p->injected_Bps[i] = (double)accessed * LINE_BYTES / p->seconds[i];
        p->accesses += accessed;
    }
    ask(e, MODE_CHECK);
    ask(e, MODE_IDLE);
    if (pa_chaser_check(chaser))
        pa_fail(3, "the pointer chase did not end where %llu loads lead: the chain is corrupt",
                (unsigned long long)chaser->loads);
    for (int i = 0; i < e->ninjectors; i++)
        if (e->injectors[i].failed)
            pa_fail(3, "%s", e->injectors[i].failure);
}

/* "inject_placement": the injectors' buffers together, as "placement" describes one buffer; all
 * are equal in size and policy, so the share of pages on each node is their mean. */
static void inject_placement_json(pa_json *json, const experiment *e)
{
    pa_buffer together = e->injectors[0].buffer;
    memset(together.node_fraction, 0, sizeof together.node_fraction);
    together.huge_page_fraction = 0;
    for (int i = 0; i < e->ninjectors; i++) {
        const pa_buffer *b = &e->injectors[i].buffer;
        together.placement_known &= b->placement_known;
        together.huge_page_fraction += b->huge_page_fraction / e->ninjectors;
        if (b->nodes > together.nodes)
            together.nodes = b->nodes;
        for (int n = 0; n < b->nodes; n++)
            together.node_fraction[n] += b->node_fraction[n] / e->ninjectors;
    }
    pa_json_key(json, "inject_placement");
    pa_json_begin_object(json);
    pa_buffer_json(json, &together);
    pa_json_end_object(json);
}

static void write_document(pa_json *json, const pa_args *args, const experiment *e,
                           const pa_thread_placement *threads, const point_samples *p)
{
    pa_result_begin(json, "mem.loaded_latency", args);
    pa_result_context(json, threads, e->ninjectors + 1, &e->buffer);
    if (e->why) {
        pa_result_not_measurable(json, e->why);
        pa_result_end(json);
        return;
    }
    inject_placement_json(json, e);
    pa_metric metrics[] = {
        {"latency_ns", "ns", p->loaded_ns, e->samples},
        {"idle_latency_ns", "ns", p->idle_ns, e->samples},
        {"injected_Bps", "byte/s", p->injected_Bps, e->samples},
    };
    pa_result_metrics(json, metrics, 3, p->seconds, e->samples);
    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    pa_chase_derived_json(json, &e->chain, p->repetitions);
    pa_json_key_int(json, "injectors", e->ninjectors);
    pa_json_key_int(json, "inject_lines", (long long)e->injectors[0].lines);
    pa_json_key_int(json, "bytes_per_access", LINE_BYTES);
    pa_json_key_int(json, "reads_per_period", e->mix.reads);
    pa_json_key_int(json, "writes_per_period", e->mix.period - e->mix.reads);
    pa_json_key_bool(json, "write_allocate_counted", 0);
    pa_json_key_int(json, "injected_accesses", (long long)p->accesses);
    pa_json_key_bool(json, "verified", 1);
    pa_json_end_object(json);
    pa_result_end(json);
}

/* The chasing thread: builds the chain, calibrates once (injectors idle), then measures every
 * point of the delay series and writes its document. */
static void chasing_thread(experiment *e, pa_args *args, pa_json *json,
                           const pa_thread_placement *threads, point_samples *p)
{
    size_t bytes = pa_arg_size(args, "bytes");
    if (!e->why) {
        pa_chain_kind kind =
            strcmp(pa_arg_text(args, "chain"), "page") ? PA_CHAIN_RANDOM : PA_CHAIN_PAGE;
        pa_chain_build(&e->chain, e->buffer.base, bytes, pa_cache_line_bytes(), PA_BASE_PAGE, kind,
                       (uint64_t)pa_arg_int(args, "seed"));
    }
#pragma omp barrier
    if (!e->why)
        e->why = pa_buffer_verify(&e->buffer);
    for (int i = 0; i < e->ninjectors && !e->why; i++)
        e->why = pa_buffer_verify(&e->injectors[i].buffer);
#pragma omp barrier
    int points = pa_arg_points(args, "delay");
    pa_chaser chaser;
    pa_sampler sampler = {.work = pa_chaser_work, .min_seconds = e->min_seconds};
    if (!e->why) {
        if (pa_chain_check(&e->chain))
            pa_fail(3, "the chain is not one cycle through all %zu lines", e->chain.lines);
        ask(e, MODE_IDLE);
        pa_chaser_init(&chaser, &e->chain);
        pa_chaser_warm(&chaser);
        p->repetitions = pa_sampler_calibrate(&sampler, &chaser);
    }
    double seconds_per_tick = pa_ticks_to_seconds(1000000000u) / 1e9;
    for (int k = 0; k < points; k++) {
        if (points > 1)
            pa_arg_select(args, "delay", k);
        e->delay_ticks =
            (uint64_t)((double)pa_arg_int(args, "delay") * 1e-9 / seconds_per_tick + 0.5);
        if (!e->why)
            measure_point(e, &chaser, &sampler, p);
        write_document(json, args, e, threads, p);
    }
    if (!e->why)
        ask(e, MODE_STOP);
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-mem-loaded-latency",
                  "latency of dependent loads while other cores inject memory traffic", params,
                  sizeof params / sizeof *params, argc, argv);
    int ninjectors, chaser_cpu = (int)pa_arg_int(&args, "cpu");
    const int *injector_cpus = pa_arg_cpus(&args, "injectors", &ninjectors);
    int *cpus = pa_alloc((size_t)ninjectors + 1, sizeof *cpus, "the PU list");
    cpus[0] = chaser_cpu;
    for (int i = 0; i < ninjectors; i++) {
        if (injector_cpus[i] == chaser_cpu)
            pa_fail(2, "injectors lists PU %d, the chasing thread's cpu: give other PUs",
                    chaser_cpu);
        cpus[i + 1] = injector_cpus[i];
    }
    pa_cpus_validate(cpus, ninjectors + 1);
    pa_timer_init();
    pa_numa_counters_start();

    static experiment e; /* zeroed */
    e.ninjectors = ninjectors;
    e.samples = (int)pa_arg_int(&args, "samples");
    e.min_seconds = pa_arg_double(&args, "min_sample_time");
    e.mix = mix_of(pa_arg_text(&args, "mix"));
    e.injectors = pa_alloc_aligned(64, (size_t)ninjectors, sizeof(injector), "the injectors");
    memset(e.injectors, 0, (size_t)ninjectors * sizeof(injector));
    size_t inject_lines = pa_arg_size(&args, "inject_bytes") / LINE_BYTES;
    inject_lines -= inject_lines % PERIODS;
    int node = (int)pa_arg_int(&args, "node");
    const char *inject_text = pa_arg_text(&args, "inject_node");
    int inject_node =
        strcmp(inject_text, "same") == 0 ? node : pa_parse_node("inject_node", inject_text);
    e.why = pa_buffer_map(&e.buffer, pa_arg_size(&args, "bytes"), PA_BASE_PAGE, node);
    for (int i = 0; i < ninjectors; i++) {
        e.injectors[i].cpu = injector_cpus[i];
        e.injectors[i].lines = inject_lines;
        if (!e.why)
            e.why = pa_buffer_map(&e.injectors[i].buffer, inject_lines * LINE_BYTES, PA_BASE_PAGE,
                                  inject_node);
    }
    point_samples p = {0};
    p.idle_ns = pa_calloc((size_t)e.samples, sizeof(double), "idle samples");
    p.loaded_ns = pa_calloc((size_t)e.samples, sizeof(double), "loaded samples");
    p.injected_Bps = pa_calloc((size_t)e.samples, sizeof(double), "injected bandwidth");
    p.seconds = pa_calloc((size_t)e.samples, sizeof(double), "sample seconds");
    pa_thread_placement *threads =
        pa_calloc((size_t)ninjectors + 1, sizeof *threads, "the thread placement");

    pa_json json;
    pa_json_init(&json, pa_args_output(&args));
    int points = pa_arg_points(&args, "delay");
    if (points > 1)
        pa_json_begin_array(&json);
    omp_set_dynamic(0);
#pragma omp parallel num_threads(ninjectors + 1)
    {
        int t = pa_team_thread(ninjectors + 1);
        threads[t].cpu_requested = cpus[t];
        pa_pin_self(cpus[t], threads[t].cpus_allowed, sizeof threads[t].cpus_allowed);
        if (t == 0)
            chasing_thread(&e, &args, &json, threads, &p);
        else
            injector_thread(&e, &e.injectors[t - 1]);
    }
    if (points > 1)
        pa_json_end_array(&json);
    return pa_json_finish(&json) ? 2 : 0;
}
