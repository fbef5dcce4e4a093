/* Dependent-load pointer chasing (lmbench's lat_mem_rd; McVoy & Staelin, USENIX 1996): every load
 * supplies the address of the next, so the time per load is the latency of wherever the line is. */
#ifndef PA_CHASE_H
#define PA_CHASE_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"

typedef enum {
    PA_CHAIN_PAGE,   /* lines of a page in random order, pages in random order */
    PA_CHAIN_RANDOM, /* one random cycle over all lines */
} pa_chain_kind;

typedef struct {
    char *base;
    size_t lines, line_bytes, page_bytes;
    pa_chain_kind kind;
    void *start;
} pa_chain;

/* Links one pointer per line of [base, base + bytes) into a single cycle, in an order drawn by a
 * seeded Fisher-Yates shuffle. Writing the links is the first touch of the buffer. */
void pa_chain_build(pa_chain *chain, char *base, size_t bytes, size_t line_bytes, size_t page_bytes,
                    pa_chain_kind kind, uint64_t seed);

/* 0 if, from the start, the chain returns to it after exactly `lines` loads and not before:
 * one cycle through every line. */
int pa_chain_check(const pa_chain *chain);

/* Follows the chain for `loads` dependent loads from p; returns where it ends. */
void *pa_chase(void *p, uint64_t loads);

/* The chase as sampler work: one repetition is PA_CHASE_BLOCK loads. */
#define PA_CHASE_BLOCK 1024u
typedef struct {
    const pa_chain *chain;
    void *position;
    uint64_t loads; /* since the start */
} pa_chaser;

void pa_chaser_init(pa_chaser *chaser, const pa_chain *chain);
void pa_chaser_work(void *chaser, uint64_t repetitions);
/* A lap of the whole chain, to bring the working set into its steady state. */
void pa_chaser_warm(pa_chaser *chaser);
/* 0 if the chaser stands where `loads` loads from the start lead: the chase really ran. */
int pa_chaser_check(const pa_chaser *chaser);

/* "derived" keys: lines, line_bytes, loads_per_sample, chain, page_bytes. */
void pa_chase_derived_json(pa_json *json, const pa_chain *chain, uint64_t repetitions);

#endif
