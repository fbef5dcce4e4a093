/* pa-smi-exact: every libpa-smi operation against results known exactly (integer elements, or
 * doubles that are small integers), for each distribution (blocked, an uneven partition with an
 * empty part, undivided), node-aware and RMA only. tests/test_smi.py runs it at np = 1, 2, 4.
 *
 *   pa-smi-exact [rma] operations   region queries, element/block get, put, accumulate, loop
 *                                   splitting, replication, combine (sum, max, min, replace, a
 *                                   user function) with overlapping and disjoint touches
 *   pa-smi-exact [rma] mutex        a read-modify-write counter under the mutex: no update lost
 *   pa-smi-exact [rma] bad          every bad call returns its code and names the call
 *   pa-smi-exact [rma] [all]        the three in one run
 *
 * n=N sets the size of the operations' regions (default 13 np + 9, at least 9), rounds=R the
 * critical sections per process of the mutex test (default 40): slow links take fewer.
 *
 * PA_SMI_RECORD_OFFSET_BYTES=8 in the environment makes combine's records carry 8-byte offsets,
 * as parts of 2^32 elements and more do.
 *
 * Success: "pa-smi-exact: N checks passed (...)" from rank 0, exit 0. A failed check: one line
 * naming it, MPI_Abort with status 3. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pa_smi.h"
#include "smi_internal.h" /* pa_smi_divide, checked on its own */

static int rank, np, checks, rounds = 40;
static size_t record_offset_bytes; /* of the operations' combines (smi_internal.h), reported */
static int64_t size;
static unsigned flags;

#define CHECK(condition, ...)                                                    \
    do {                                                                         \
        checks++;                                                                \
        if (!(condition)) {                                                      \
            fprintf(stderr, "pa-smi-exact: rank %d, line %d: ", rank, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                        \
            fprintf(stderr, " (%s)\n", pa_smi_error());                          \
            MPI_Abort(MPI_COMM_WORLD, 3);                                        \
        }                                                                        \
    } while (0)
#define OK(call) CHECK((call) == PA_SMI_OK, "%s failed", #call)

/* The distributions under test; partition: process 0 empty, the rest uneven. */
static int64_t partition[65];
static pa_smi_distribution distribution(int which, int64_t n)
{
    pa_smi_distribution d = {.layout = PA_SMI_BLOCKED, .flags = flags};
    if (which == 1) {
        partition[0] = 0;
        for (int p = 1; p <= np; p++)
            partition[p] = np == 1 ? n : (p == 1 ? 0 : n * (int64_t)(p * p) / (np * np));
        partition[np] = n;
        d.layout = PA_SMI_PARTITION, d.first = partition;
    } else if (which == 2) {
        d.layout = PA_SMI_UNDIVIDED, d.owner = np - 1;
    }
    return d;
}

static int64_t expected_first(const pa_smi_distribution *d, int p, int64_t n)
{
    if (d->layout == PA_SMI_BLOCKED)
        return (int64_t)p * n / np;
    if (d->layout == PA_SMI_PARTITION)
        return d->first[p];
    return p <= d->owner ? 0 : n;
}

static int64_t *all_of(pa_smi_region *r, int64_t n)
{
    int64_t *v = malloc(sizeof(int64_t) * (size_t)(n + 1));
    OK(pa_smi_get_block(r, 0, n, v));
    return v;
}

/* inout = 3 inout + in: not commutative, so the process order of combine shows. */
static void three_times_plus(void *inout, const void *in, int64_t count)
{
    for (int64_t k = 0; k < count; k++)
        ((int64_t *)inout)[k] = 3 * ((int64_t *)inout)[k] + ((const int64_t *)in)[k];
}

static void queries(pa_smi_region *r, const pa_smi_distribution *d, int64_t n)
{
    for (int p = 0; p < np; p++) {
        int64_t lo, hi;
        OK(pa_smi_range(r, p, &lo, &hi));
        CHECK(lo == expected_first(d, p, n) && hi == expected_first(d, p + 1, n),
              "range of %d: %lld .. %lld", p, (long long)lo, (long long)hi);
        for (int64_t i = lo; i < hi; i++) {
            int owner;
            OK(pa_smi_owner(r, i, &owner));
            CHECK(owner == p, "owner of %lld is %d, not %d", (long long)i, owner, p);
        }
    }
    int64_t mine_lo = expected_first(d, rank, n), mine_hi = expected_first(d, rank + 1, n);
    int64_t lo, hi;
    OK(pa_smi_split(r, 0, n, &lo, &hi));
    CHECK(lo == mine_lo && hi == mine_hi, "split of the whole range");
    OK(pa_smi_split(r, 3, n - 2, &lo, &hi));
    int64_t want_lo = mine_lo > 3 ? mine_lo : 3, want_hi = mine_hi < n - 2 ? mine_hi : n - 2;
    CHECK(hi - lo == (want_hi > want_lo ? want_hi - want_lo : 0) && (hi == lo || lo == want_lo),
          "split of 3 .. n - 3: %lld .. %lld", (long long)lo, (long long)hi);
    CHECK(pa_smi_size(r) == n, "size");
    CHECK((pa_smi_local(r) != NULL) == (mine_hi > mine_lo), "local part");
}

static void access(pa_smi_region *r, int64_t n)
{
    for (int64_t i = rank; i < n; i += np) { /* cyclic: mostly other processes' elements */
        int64_t v = 1000 * i + 7;
        OK(pa_smi_put(r, i, &v));
    }
    OK(pa_smi_barrier(r));
    for (int64_t i = 0; i < n; i++) {
        int64_t v;
        OK(pa_smi_get(r, i, &v));
        CHECK(v == 1000 * i + 7, "get %lld: %lld", (long long)i, (long long)v);
    }
    OK(pa_smi_barrier(r));
    for (int64_t i = 0; i < n; i++) { /* every process adds to every element at once */
        int64_t one = rank + 1;
        OK(pa_smi_accumulate(r, i, &one, PA_SMI_SUM));
    }
    OK(pa_smi_barrier(r));
    for (int64_t i = 0; i < n; i++) {
        int64_t big = 100000 * (int64_t)(rank == (int)(i % np));
        OK(pa_smi_accumulate(r, i, &big, PA_SMI_MAX));
    }
    OK(pa_smi_barrier(r));
    int64_t *v = all_of(r, n);
    for (int64_t i = 0; i < n; i++) {
        int64_t sum = 1000 * i + 7 + (int64_t)np * (np + 1) / 2;
        CHECK(v[i] == (sum > 100000 ? sum : 100000), "accumulate %lld: %lld", (long long)i,
              (long long)v[i]);
    }
    free(v);
    OK(pa_smi_barrier(r));
    /* put_block and accumulate_block over pieces that straddle owners: chunk p is
     * p n / np + 3 .. (p + 1) n / np + 2, clipped to the region. */
    int64_t lo = (int64_t)rank * n / np + 3, hi = (int64_t)(rank + 1) * n / np + 3;
    lo = lo < n ? lo : n, hi = hi < n ? hi : n;
    int64_t *block = malloc(sizeof(int64_t) * (size_t)(n + 1));
    for (int64_t i = lo; i < hi; i++)
        block[i - lo] = -i;
    OK(pa_smi_put_block(r, lo, hi - lo, block));
    OK(pa_smi_barrier(r));
    for (int64_t i = 0; i < n; i++)
        block[i] = i % 5;
    OK(pa_smi_accumulate_block(r, 0, n, block, PA_SMI_SUM));
    OK(pa_smi_barrier(r));
    v = all_of(r, n);
    for (int64_t i = 0; i < n; i++) {
        int64_t before = i < 3 ? 100000 : -i;
        CHECK(v[i] == before + np * (i % 5), "block %lld: %lld", (long long)i, (long long)v[i]);
    }
    free(v), free(block);
    OK(pa_smi_barrier(r));
}

/* Set every element to base(i) (rank 0 writes, all see it). */
static void reset(pa_smi_region *r, int64_t n, int64_t (*base)(int64_t))
{
    if (rank == 0)
        for (int64_t i = 0; i < n; i++) {
            int64_t v = base(i);
            OK(pa_smi_put(r, i, &v));
        }
    OK(pa_smi_barrier(r));
}

static int64_t base_of(int64_t i) { return 10 * i + 1; }

/* Replication again with the arrays of the last call changed in place (the library keeps the
 * last ranges: it must compare values, not pointers), and touches that a release discards (the
 * next copy starts untouched: a combine then sends and changes nothing). */
static void again(pa_smi_region *r, int64_t n, int64_t *lo, int64_t *hi)
{
    reset(r, n, base_of);
    lo[1] = n - 4, hi[1] = n;
    OK(pa_smi_replicate(r, 2, lo, hi, PA_SMI_FETCH));
    int64_t *copy = pa_smi_copy(r);
    CHECK(pa_smi_copy_index(r, n - 5) == -1 && pa_smi_copy_index(r, n - 1) == 5,
          "ranges changed in place");
    for (int64_t i = n - 4; i < n; i++)
        CHECK(copy[pa_smi_copy_index(r, i)] == base_of(i), "changed range at %lld", (long long)i);
    OK(pa_smi_touch_range(r, lo[0], hi[0]));
    OK(pa_smi_touch(r, n - 1));
    OK(pa_smi_release(r));
    pa_smi_counts before, after;
    OK(pa_smi_counts_of(r, &before));
    OK(pa_smi_replicate(r, 2, lo, hi, PA_SMI_FETCH));
    OK(pa_smi_combine(r, PA_SMI_REPLACE, PA_SMI_INT64));
    OK(pa_smi_counts_of(r, &after));
    CHECK(after.combined == before.combined, "a released copy's touches were sent");
    OK(pa_smi_barrier(r));
}

static void replication(pa_smi_region *r, int64_t n)
{
    reset(r, n, base_of);
    pa_smi_counts before, after;
    OK(pa_smi_counts_of(r, &before));
    OK(pa_smi_replicate(r, 0, NULL, NULL, PA_SMI_FETCH));
    int64_t *copy = pa_smi_copy(r);
    for (int64_t i = 0; i < n; i++)
        CHECK(copy[i] == base_of(i) && pa_smi_copy_index(r, i) == i, "full copy %lld",
              (long long)i);
    OK(pa_smi_counts_of(r, &after));
    int others = 0;
    for (int p = 0; p < np; p++) {
        int64_t lo, hi;
        OK(pa_smi_range(r, p, &lo, &hi));
        others += p != rank && hi > lo;
    }
    CHECK(after.transfers - before.transfers == others, "one block transfer per other part");
    OK(pa_smi_release(r));
    CHECK(pa_smi_copy(r) == NULL, "no copy after release");

    int64_t lo[2] = {1, n - 5}, hi[2] = {3, n - 2}; /* n >= 9: a gap between them */
    OK(pa_smi_replicate(r, 2, lo, hi, PA_SMI_FETCH));
    copy = pa_smi_copy(r);
    for (int k = 0, at = 0; k < 2; k++)
        for (int64_t i = lo[k]; i < hi[k]; i++, at++)
            CHECK(copy[at] == base_of(i) && pa_smi_copy_index(r, i) == at, "partial %lld",
                  (long long)i);
    CHECK(pa_smi_copy_index(r, 0) == -1 && pa_smi_copy_index(r, 3) == -1 &&
              pa_smi_copy_index(r, n - 1) == -1,
          "elements outside the partial copy");
    OK(pa_smi_release(r));
    int64_t *v = all_of(r, n);
    for (int64_t i = 0; i < n; i++)
        CHECK(v[i] == base_of(i), "release changed element %lld", (long long)i);
    free(v);
    OK(pa_smi_barrier(r));

    /* A partial copy combined: every process adds p + 1 to the elements of both ranges but the
     * first of each (untouched: unchanged). */
    OK(pa_smi_replicate(r, 2, lo, hi, PA_SMI_ZERO));
    copy = pa_smi_copy(r);
    for (int k = 0; k < 2; k++)
        for (int64_t i = lo[k] + 1; i < hi[k]; i++) {
            copy[pa_smi_copy_index(r, i)] = rank + 1;
            OK(pa_smi_touch(r, i));
        }
    OK(pa_smi_combine(r, PA_SMI_SUM, PA_SMI_INT64));
    OK(pa_smi_barrier(r));
    v = all_of(r, n);
    for (int64_t i = 0; i < n; i++) {
        int touched = (i > lo[0] && i < hi[0]) || (i > lo[1] && i < hi[1]);
        CHECK(v[i] == base_of(i) + touched * (int64_t)np * (np + 1) / 2,
              "partial combine at %lld: %lld", (long long)i, (long long)v[i]);
    }
    free(v);
    OK(pa_smi_barrier(r));
    again(r, n, lo, hi);
}

/* Process p touches element i when touches(p, i); the value it writes: p + 1 + i % 5. */
static int overlapping(int p, int64_t i) { return i % 3 != p % 3; }
static int disjoint(int p, int64_t i) { return i % np == p; }
static int64_t written(int p, int64_t i) { return p + 1 + i % 5; }

static int64_t combined(pa_smi_op op, int user, int (*touches)(int, int64_t), int64_t i)
{
    int64_t v = base_of(i);
    for (int p = 0; p < np; p++) {
        if (!touches(p, i))
            continue;
        int64_t w = written(p, i);
        v = user               ? 3 * v + w
            : op == PA_SMI_SUM ? v + w
            : op == PA_SMI_MAX ? (v > w ? v : w)
            : op == PA_SMI_MIN ? (v < w ? v : w)
                               : w;
    }
    return v;
}

static void combine_case(pa_smi_region *r, int64_t n, pa_smi_op op, int user,
                         int (*touches)(int, int64_t), unsigned start)
{
    reset(r, n, base_of);
    pa_smi_counts before, after;
    OK(pa_smi_counts_of(r, &before));
    OK(pa_smi_replicate(r, 0, NULL, NULL, start));
    int64_t *copy = pa_smi_copy(r), sent = 0, mine_lo, mine_hi;
    OK(pa_smi_range(r, rank, &mine_lo, &mine_hi));
    for (int64_t i = n - 1; i >= 0; i--) /* out of order, twice: each counted once */
        if (touches(rank, i)) {
            copy[i] = written(rank, i);
            OK(pa_smi_touch(r, i));
            OK(pa_smi_touch(r, i));
            sent += i < mine_lo || i >= mine_hi;
        }
    if (user)
        OK(pa_smi_combine_function(r, three_times_plus, PA_SMI_INT64));
    else
        OK(pa_smi_combine(r, op, PA_SMI_INT64));
    OK(pa_smi_counts_of(r, &after));
    CHECK(after.combined - before.combined == sent, "combine sent %lld, not the %lld touched",
          (long long)(after.combined - before.combined), (long long)sent);
    OK(pa_smi_barrier(r));
    int64_t *v = all_of(r, n);
    for (int64_t i = 0; i < n; i++)
        CHECK(v[i] == combined(op, user, touches, i), "combine %d/%d at %lld: %lld, not %lld",
              (int)op, user, (long long)i, (long long)v[i],
              (long long)combined(op, user, touches, i));
    free(v);
    OK(pa_smi_barrier(r));
}

static void combines(pa_smi_region *r, int64_t n)
{
    for (pa_smi_op op = PA_SMI_SUM; op <= PA_SMI_REPLACE; op++) {
        combine_case(r, n, op, 0, overlapping, PA_SMI_ZERO);
        combine_case(r, n, op, 0, disjoint, PA_SMI_FETCH);
    }
    combine_case(r, n, PA_SMI_SUM, 1, overlapping, PA_SMI_ZERO);
    combine_case(r, n, PA_SMI_SUM, 1, disjoint, PA_SMI_ZERO);
}

/* A region of doubles: the sum of every process's p + 0.5 at each element, through combine. */
static void doubles(pa_smi_distribution *d, int64_t n)
{
    pa_smi_region *r;
    OK(pa_smi_create(MPI_COMM_WORLD, n, PA_SMI_DOUBLE, d, &r));
    OK(pa_smi_replicate(r, 0, NULL, NULL, PA_SMI_ZERO));
    double *copy = pa_smi_copy(r);
    for (int64_t i = 0; i < n; i++)
        copy[i] = rank + 0.5;
    OK(pa_smi_touch_range(r, 0, n));
    OK(pa_smi_combine(r, PA_SMI_SUM, PA_SMI_DOUBLE));
    OK(pa_smi_barrier(r));
    for (int64_t i = 0; i < n; i++) {
        double v;
        OK(pa_smi_get(r, i, &v));
        CHECK(v == np * (np - 1) / 2.0 + 0.5 * np, "double combine %lld: %g", (long long)i, v);
    }
    OK(pa_smi_free(&r));
}

/* Node awareness: a node-aware region reaches the parts on its node by loads and stores and uses
 * RMA gets (every process reads every element) exactly when another node holds a part. */
static int node_of[64]; /* per process: the world rank of its node's first process */

static void paths(pa_smi_region *r, int64_t n)
{
    pa_smi_counts c;
    OK(pa_smi_counts_of(r, &c));
    int64_t lo, hi;
    OK(pa_smi_range(r, rank, &lo, &hi));
    if (hi > lo)
        CHECK(pa_smi_span(r, lo, hi) == pa_smi_local(r), "span of my part");
    int others = 0, other_nodes = 0;
    for (int p = 0; p < np; p++) {
        int64_t a, b;
        OK(pa_smi_range(r, p, &a, &b));
        others += p != rank && b > a;
        other_nodes += b > a && node_of[p] != node_of[rank];
    }
    if (flags & PA_SMI_RMA_ONLY) {
        CHECK((c.gets > 0) == (others > 0), "RMA only: RMA gets exactly for others' parts");
        if (others)
            CHECK(pa_smi_span(r, 0, n) == NULL, "RMA only: no span over other parts");
    } else {
        CHECK((c.gets > 0) == (other_nodes > 0) && (c.puts == 0 || other_nodes > 0),
              "node-aware: RMA gets and puts only for other nodes' parts (%lld, %lld)",
              (long long)c.gets, (long long)c.puts);
        if (!other_nodes)
            CHECK(pa_smi_span(r, 0, n) != NULL, "the node's parts are one span");
    }
}

/* Blocked owners at every size up to 3 np + 2, empty parts (n < np) included: element i's owner
 * is the process whose part floor(p n / np) .. floor((p + 1) n / np) - 1 holds it. */
static void blocked_owners(void)
{
    for (int64_t n = 1; n <= 3 * np + 2; n++) {
        pa_smi_distribution d = {.layout = PA_SMI_BLOCKED, .flags = flags};
        pa_smi_region *r;
        OK(pa_smi_create(MPI_COMM_WORLD, n, PA_SMI_INT64, &d, &r));
        for (int64_t i = 0; i < n; i++) {
            int owner;
            OK(pa_smi_owner(r, i, &owner));
            CHECK(expected_first(&d, owner, n) <= i && i < expected_first(&d, owner + 1, n),
                  "n = %lld: owner of %lld is %d", (long long)n, (long long)i, owner);
        }
        OK(pa_smi_free(&r));
    }
}

/* The owner division (pa_smi_divide) against the hardware's, for divisors of every size: small
 * ones, powers of two and their neighbours up to 2^63 + 1, and pseudo-random ones (xorshift64);
 * dividends at 0, around multiples of the divisor, around 2^64 and pseudo-random. */
static uint64_t next(uint64_t *state)
{
    *state ^= *state << 13, *state ^= *state >> 7, *state ^= *state << 17;
    return *state;
}

static void divide_check(uint64_t x, uint64_t d, pa_smi_divider v)
{
    CHECK(pa_smi_divide(x, v) == x / d, "%llu / %llu: %llu", (unsigned long long)x,
          (unsigned long long)d, (unsigned long long)pa_smi_divide(x, v));
}

static void divisions(void)
{
    uint64_t state = 88172645463325252ull, divisors[300];
    int count = 0;
    for (uint64_t d = 1; d <= 64; d++)
        divisors[count++] = d;
    for (int b = 6; b < 64; b++)
        for (int delta = -1; delta <= 1; delta++)
            divisors[count++] = (1ull << b) + (uint64_t)delta;
    while (count < 300) { /* of every width: a random number shifted right by a random 0..63 */
        uint64_t bits = next(&state);
        divisors[count++] = bits >> (next(&state) % 64) | 1;
    }
    for (int k = 0; k < count; k++) {
        uint64_t d = divisors[k];
        pa_smi_divider v = pa_smi_divider_of(d);
        uint64_t edges[] = {0,
                            1,
                            d - 1,
                            d,
                            d + 1,
                            2 * d - 1,
                            2 * d,
                            UINT64_MAX,
                            UINT64_MAX - 1,
                            UINT64_MAX / d * d,
                            UINT64_MAX / d * d - 1};
        for (size_t e = 0; e < sizeof edges / sizeof *edges; e++)
            divide_check(edges[e], d, v);
        for (int t = 0; t < 200; t++)
            divide_check(next(&state) >> (t % 64), d, v);
    }
}

static void operations(void)
{
    if (rank == 0) /* the same on every process */
        divisions();
    blocked_owners();
    int64_t n = size ? size : 13 * np + 9;
    for (int which = 0; which < 3; which++) {
        pa_smi_distribution d = distribution(which, n);
        pa_smi_region *r;
        OK(pa_smi_create(MPI_COMM_WORLD, n, PA_SMI_INT64, &d, &r));
        record_offset_bytes = r->offset_bytes;
        queries(r, &d, n);
        access(r, n);
        replication(r, n);
        combines(r, n);
        paths(r, n);
        OK(pa_smi_free(&r));
        CHECK(r == NULL, "free clears the pointer");
        doubles(&d, n);
    }
}

static void mutex(void)
{
    pa_smi_distribution d = {.layout = PA_SMI_UNDIVIDED, .owner = np - 1, .flags = flags};
    pa_smi_region *r;
    pa_smi_mutex *m;
    OK(pa_smi_create(MPI_COMM_WORLD, 2, PA_SMI_INT64, &d, &r));
    OK(pa_smi_mutex_create(MPI_COMM_WORLD, &m));
    for (int k = 0; k < rounds; k++) {
        OK(pa_smi_mutex_lock(m));
        OK(pa_smi_fence(r));
        int64_t one = 1, inside, count;
        OK(pa_smi_accumulate(r, 1, &one, PA_SMI_SUM)); /* element 1: processes inside */
        OK(pa_smi_get(r, 1, &inside));
        CHECK(inside == 1, "%lld processes inside the critical section", (long long)inside);
        OK(pa_smi_get(r, 0, &count)); /* a read-modify-write that loses updates unprotected */
        sched_yield();
        count++;
        OK(pa_smi_put(r, 0, &count));
        one = -1;
        OK(pa_smi_accumulate(r, 1, &one, PA_SMI_SUM));
        OK(pa_smi_fence(r));
        OK(pa_smi_mutex_unlock(m));
    }
    OK(pa_smi_barrier(r));
    int64_t count;
    OK(pa_smi_get(r, 0, &count));
    CHECK(count == (int64_t)rounds * np, "counter %lld, not %d: an update was lost",
          (long long)count, rounds * np);
    OK(pa_smi_mutex_free(&m));
    OK(pa_smi_free(&r));
}

/* A bad call: its code, and the message names the call and says `words`. */
#define BAD(call, code, words)                                                        \
    do {                                                                              \
        int status_ = (call);                                                         \
        CHECK(status_ == (code), "%s returned %d, not %s", #call, status_, #code);    \
        CHECK(strstr(pa_smi_error(), words) != NULL, "%s said '%s', not '%s'", #call, \
              pa_smi_error(), words);                                                 \
        if (rank == 0)                                                                \
            printf("pa-smi-exact: said: %s\n", pa_smi_error());                       \
    } while (0)

static void bad(void)
{
    int64_t n = 10, v = 1;
    pa_smi_region *r;
    pa_smi_distribution d = {.layout = PA_SMI_BLOCKED, .flags = flags};
    OK(pa_smi_create(MPI_COMM_WORLD, n, PA_SMI_INT64, &d, &r));
    BAD(pa_smi_get(r, n, &v), PA_SMI_ERR_RANGE,
        "pa_smi_get: element 10 is outside the region of 10 elements");
    BAD(pa_smi_put(r, -1, &v), PA_SMI_ERR_RANGE, "pa_smi_put: element -1 is outside");
    BAD(pa_smi_get_block(r, 8, 3, &v), PA_SMI_ERR_RANGE,
        "pa_smi_get_block: elements 8 .. 10 are outside the region of 10 elements");
    BAD(pa_smi_accumulate(r, 0, &v, (pa_smi_op)9), PA_SMI_ERR_ARGUMENT,
        "pa_smi_accumulate: the operation 9 is not one of");
    BAD(pa_smi_release(r), PA_SMI_ERR_STATE,
        "pa_smi_release: the region is not replicated: a release needs a pa_smi_replicate");
    BAD(pa_smi_combine(r, PA_SMI_SUM, PA_SMI_INT64), PA_SMI_ERR_STATE,
        "pa_smi_combine: the region is not replicated");
    BAD(pa_smi_touch(r, 0), PA_SMI_ERR_STATE, "pa_smi_touch: the region is not replicated");
    int64_t lo[2] = {0, 3}, hi[2] = {5, 6};
    BAD(pa_smi_replicate(r, 2, lo, hi, PA_SMI_FETCH), PA_SMI_ERR_RANGE,
        "pa_smi_replicate: range 1 starts at 3, before range 0 ends");
    OK(pa_smi_replicate(r, 1, lo + 1, hi + 1, PA_SMI_ZERO)); /* 3 .. 5 */
    BAD(pa_smi_replicate(r, 0, NULL, NULL, PA_SMI_FETCH), PA_SMI_ERR_STATE,
        "pa_smi_replicate: the region is already replicated");
    BAD(pa_smi_touch(r, 7), PA_SMI_ERR_RANGE,
        "pa_smi_touch: element 7 is not in the replicated copy");
    BAD(pa_smi_combine(r, PA_SMI_SUM, PA_SMI_DOUBLE), PA_SMI_ERR_TYPE,
        "pa_smi_combine: the copies are combined as double but the region holds int64");
    BAD(pa_smi_free(&r), PA_SMI_ERR_BUSY, "pa_smi_free: the region is in use");
    CHECK(r != NULL, "a refused free keeps the region");
    /* Only process 0 errs: the others hear of it, and nothing changes. */
    int status = pa_smi_combine(r, PA_SMI_SUM, rank == 0 ? PA_SMI_FLOAT : PA_SMI_INT64);
    CHECK(status == (rank == 0 ? PA_SMI_ERR_TYPE
                     : np > 1  ? PA_SMI_ERR_REMOTE
                               : PA_SMI_ERR_TYPE),
          "a one-sided type mismatch returned %d", status);
    CHECK(pa_smi_copy(r) != NULL, "a failed combine keeps the copy");
    OK(pa_smi_release(r));
    if (rank == np - 1)
        OK(pa_smi_replicate(r, 0, NULL, NULL, PA_SMI_FETCH));
    status = pa_smi_free(&r);
    CHECK(status == (rank == np - 1 ? PA_SMI_ERR_BUSY : PA_SMI_ERR_REMOTE), "free in use: %d",
          status);
    if (rank == np - 1)
        OK(pa_smi_release(r));
    OK(pa_smi_free(&r));

    int64_t first[65] = {0};
    for (int p = 1; p <= np; p++)
        first[p] = 4;
    first[np] = n;
    pa_smi_distribution backwards = {.layout = PA_SMI_PARTITION, .first = first};
    if (np > 1) {
        first[np - 1] = n + 1; /* decreases at np - 1 */
        BAD(pa_smi_create(MPI_COMM_WORLD, n, PA_SMI_INT64, &backwards, &r), PA_SMI_ERR_RANGE,
            "pa_smi_create: the partition decreases at process");
    }
    first[np] = n - 1;
    BAD(pa_smi_create(MPI_COMM_WORLD, n, PA_SMI_INT64, &backwards, &r), PA_SMI_ERR_RANGE,
        "pa_smi_create: the partition must start at 0 and end at n = 10");
    pa_smi_distribution nobody = {.layout = PA_SMI_UNDIVIDED, .owner = np};
    BAD(pa_smi_create(MPI_COMM_WORLD, n, PA_SMI_INT64, &nobody, &r), PA_SMI_ERR_ARGUMENT,
        "is not a process of the communicator");
    BAD(pa_smi_create(MPI_COMM_WORLD, -1, PA_SMI_INT64, NULL, &r), PA_SMI_ERR_ARGUMENT,
        "pa_smi_create: the region's size -1 is negative");

    pa_smi_mutex *m;
    OK(pa_smi_mutex_create(MPI_COMM_WORLD, &m));
    BAD(pa_smi_mutex_unlock(m), PA_SMI_ERR_STATE,
        "pa_smi_mutex_unlock: this process does not hold the mutex");
    if (rank == 0) {
        OK(pa_smi_mutex_lock(m));
        BAD(pa_smi_mutex_lock(m), PA_SMI_ERR_STATE, "pa_smi_mutex_lock: this process holds");
    }
    status = pa_smi_mutex_free(&m);
    CHECK(status == (rank == 0 ? PA_SMI_ERR_BUSY : PA_SMI_ERR_REMOTE), "free held mutex: %d",
          status);
    if (rank == 0)
        OK(pa_smi_mutex_unlock(m));
    OK(pa_smi_mutex_free(&m));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *mode = "all";
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "rma"))
            flags |= PA_SMI_RMA_ONLY;
        else if (!strncmp(argv[k], "n=", 2))
            size = atoll(argv[k] + 2);
        else if (!strncmp(argv[k], "rounds=", 7))
            rounds = atoi(argv[k] + 7);
        else
            mode = argv[k];
    }
    if (np > 64 || (size && size < 9) || rounds < 1) {
        if (rank == 0)
            fprintf(stderr, "pa-smi-exact: at most 64 processes, n=9 or more, rounds=1 or more\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    int one_node = node_size == np, leader = rank;
    MPI_Bcast(&leader, 1, MPI_INT, 0, node);
    MPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &one_node, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    int all = !strcmp(mode, "all");
    if (!all && strcmp(mode, "operations") && strcmp(mode, "mutex") && strcmp(mode, "bad")) {
        if (rank == 0)
            fprintf(stderr, "pa-smi-exact: mode '%s' is not one of all, operations, mutex, bad\n",
                    mode);
        MPI_Finalize();
        return 2;
    }
    if (all || !strcmp(mode, "operations"))
        operations();
    if (all || !strcmp(mode, "mutex"))
        mutex();
    if (all || !strcmp(mode, "bad"))
        bad();
    int total = 0;
    MPI_Reduce(&checks, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pa-smi-exact: %d checks passed (%s, %s, np=%d, %s, %zu-byte record offsets)\n",
               total, mode, flags ? "rma only" : "node-aware", np,
               one_node ? "one node" : "several nodes", record_offset_bytes);
    MPI_Finalize();
    return 0;
}
