#include "chase.h"
#include "alloc.h"

#include <stdlib.h>

#include "args.h"

/* splitmix64 (Steele, Lea & Flood, OOPSLA 2014): a full-period 64-bit generator. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Fisher-Yates (Knuth, TAOCP 3.4.2, algorithm P); the bound by Lemire's multiply-shift. */
static void shuffle(uint32_t *v, size_t n, uint64_t *state)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(((unsigned __int128)splitmix64(state) * i) >> 64);
        uint32_t t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

/* The visiting order of the lines: for PA_CHAIN_PAGE, the pages in random order and within each
 * page its lines in random order, so that a page's TLB entry serves all its lines (lat_mem_rd
 * separates cache from TLB misses the same way); for PA_CHAIN_RANDOM, all lines shuffled. */
static uint32_t *visiting_order(const pa_chain *chain, uint64_t seed)
{
    uint32_t *order = pa_alloc(chain->lines, sizeof *order, "the chain order");
    uint64_t state = seed;
    size_t group =
        chain->kind == PA_CHAIN_PAGE ? chain->page_bytes / chain->line_bytes : chain->lines;
    if (group == 0)
        group = 1;
    size_t groups = (chain->lines + group - 1) / group;
    uint32_t *group_order = pa_alloc(groups, sizeof *group_order, "the page order of the chain");
    for (size_t g = 0; g < groups; g++)
        group_order[g] = (uint32_t)g;
    shuffle(group_order, groups, &state);
    size_t k = 0;
    for (size_t g = 0; g < groups; g++) {
        size_t first = group_order[g] * group, count = chain->lines - first;
        count = count < group ? count : group;
        for (size_t i = 0; i < count; i++)
            order[k + i] = (uint32_t)(first + i);
        shuffle(order + k, count, &state);
        k += count;
    }
    free(group_order);
    return order;
}

void pa_chain_build(pa_chain *chain, char *base, size_t bytes, size_t line_bytes, size_t page_bytes,
                    pa_chain_kind kind, uint64_t seed)
{
    chain->base = base;
    chain->line_bytes = line_bytes;
    chain->page_bytes = page_bytes;
    chain->lines = bytes / line_bytes;
    chain->kind = kind;
    uint32_t *order = visiting_order(chain, seed);
    for (size_t k = 0; k < chain->lines; k++) {
        size_t next = k + 1 < chain->lines ? k + 1 : 0;
        *(void **)(base + (size_t)order[k] * line_bytes) = base + (size_t)order[next] * line_bytes;
    }
    chain->start = base + (size_t)order[0] * line_bytes;
    free(order);
}

int pa_chain_check(const pa_chain *chain)
{
    void *p = chain->start;
    for (size_t k = 1; k <= chain->lines; k++) {
        p = *(void **)p;
        if (p == chain->start)
            return k == chain->lines ? 0 : -1;
    }
    return -1;
}

void *pa_chase(void *p, uint64_t loads)
{
#define LOAD   p = *(void **)p;
#define LOAD16 LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD LOAD
    for (uint64_t i = loads / 16; i > 0; i--) {
        LOAD16
    }
    for (uint64_t i = loads % 16; i > 0; i--) {
        LOAD
    }
    return p;
}

void pa_chaser_init(pa_chaser *chaser, const pa_chain *chain)
{
    chaser->chain = chain;
    chaser->position = chain->start;
    chaser->loads = 0;
}

void pa_chaser_work(void *context, uint64_t repetitions)
{
    pa_chaser *chaser = context;
    uint64_t loads = repetitions * PA_CHASE_BLOCK;
    chaser->position = pa_chase(chaser->position, loads);
    chaser->loads += loads;
}

void pa_chaser_warm(pa_chaser *chaser)
{
    chaser->position = pa_chase(chaser->position, chaser->chain->lines);
    chaser->loads += chaser->chain->lines;
}

int pa_chaser_check(const pa_chaser *chaser)
{
    const pa_chain *chain = chaser->chain;
    return pa_chase(chain->start, chaser->loads % chain->lines) == chaser->position ? 0 : -1;
}

void pa_chase_derived_json(pa_json *json, const pa_chain *chain, uint64_t repetitions)
{
    pa_json_key_int(json, "lines", (long long)chain->lines);
    pa_json_key_int(json, "line_bytes", (long long)chain->line_bytes);
    pa_json_key_int(json, "loads_per_sample", (long long)(repetitions * PA_CHASE_BLOCK));
    pa_json_key_string(json, "chain", chain->kind == PA_CHAIN_PAGE ? "page" : "random");
    pa_json_key_int(json, "page_bytes", (long long)chain->page_bytes);
}
