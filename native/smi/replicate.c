/* Replication: a private copy of element ranges, fetched with block transfers or started at
 * zero, the elements written in it tracked in a bitmap (one bit per element of the copy; combine
 * skips untouched words 64 elements at a time and sends touched runs), and the switch back
 * without combining. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "smi_internal.h"

/* The checks of the call itself: the region, its mode, the start and the arrays. */
static int check_call(const pa_smi_region *r, int count, const int64_t *lo, const int64_t *hi,
                      unsigned start)
{
    static const char call[] = "pa_smi_replicate";
    if (!r)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region is NULL");
    if (r->replicated)
        return pa_smi_fail(PA_SMI_ERR_STATE, call,
                           "the region is already replicated (pa_smi_release or pa_smi_combine "
                           "switches it back first)");
    if (start != PA_SMI_FETCH && start != PA_SMI_ZERO)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call,
                           "the start %u is not PA_SMI_FETCH or PA_SMI_ZERO", start);
    if (count < 0 || (count > 0 && (!lo || !hi)))
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call,
                           "%d ranges need lo[] and hi[] (count 0: the whole region)", count);
    return PA_SMI_OK;
}

static int check_ranges(const pa_smi_region *r, int count, const int64_t *lo, const int64_t *hi)
{
    static const char call[] = "pa_smi_replicate";
    for (int k = 0; k < count; k++) {
        if (lo[k] < 0 || hi[k] > r->n || lo[k] > hi[k])
            return pa_smi_fail(PA_SMI_ERR_RANGE, call,
                               "range %d (%lld .. %lld) is not within the region of %lld "
                               "elements",
                               k, (long long)lo[k], (long long)hi[k] - 1, (long long)r->n);
        if (k > 0 && lo[k] < hi[k - 1])
            return pa_smi_fail(PA_SMI_ERR_RANGE, call,
                               "range %d starts at %lld, before range %d ends: the ranges must "
                               "increase and not overlap",
                               k, (long long)lo[k], k - 1);
    }
    return PA_SMI_OK;
}

/* The ranges are the ones kept from an earlier call (checked then): an iterative code replicates
 * the same ranges every step, and a comparison is cheaper than checking and laying them out
 * again. */
static int same_ranges(const pa_smi_region *r, int count, const int64_t *lo, const int64_t *hi)
{
    size_t bytes = sizeof(int64_t) * (size_t)count;
    return count == r->nranges && !memcmp(lo, r->range_lo, bytes) &&
           !memcmp(hi, r->range_hi, bytes);
}

/* The checked ranges kept, each one's place in the copy (range_at) worked out. */
static int keep_ranges(pa_smi_region *r, int count, const int64_t *lo, const int64_t *hi)
{
    r->nranges = 0; /* kept again below, or none to compare with after a failure */
    if (count > r->ranges_capacity) {
        free(r->range_lo), free(r->range_hi), free(r->range_at);
        r->range_lo = malloc(sizeof(int64_t) * (size_t)count);
        r->range_hi = malloc(sizeof(int64_t) * (size_t)count);
        r->range_at = malloc(sizeof(int64_t) * (size_t)count);
        r->ranges_capacity = r->range_lo && r->range_hi && r->range_at ? count : 0;
        if (!r->ranges_capacity)
            return pa_smi_fail(PA_SMI_ERR_MEMORY, "pa_smi_replicate", "out of memory for %d ranges",
                               count);
    }
    int64_t total = 0;
    for (int k = 0; k < count; k++) {
        r->range_lo[k] = lo[k], r->range_hi[k] = hi[k], r->range_at[k] = total;
        total += hi[k] - lo[k];
    }
    r->nranges = count;
    r->pieces_ready = 0;
    return PA_SMI_OK;
}

/* The ranges split at owners (and at INT_MAX elements, MPI's count), once per set of ranges: a
 * fetch of the same ranges again looks no owner up. */
static int plan_pieces(pa_smi_region *r)
{
    r->npieces = 0;
    for (int k = 0; k < r->nranges; k++)
        for (int64_t lo = r->range_lo[k], at = r->range_at[k]; lo < r->range_hi[k];) {
            int p = pa_smi_owner_of(r, lo);
            int64_t end = r->first[p + 1] < r->range_hi[k] ? r->first[p + 1] : r->range_hi[k];
            int count = end - lo < INT_MAX ? (int)(end - lo) : INT_MAX;
            if (r->npieces == r->pieces_capacity) {
                int more = r->pieces_capacity ? 2 * r->pieces_capacity : 16;
                pa_smi_piece *pieces = realloc(r->pieces, sizeof(pa_smi_piece) * (size_t)more);
                if (!pieces)
                    return pa_smi_fail(PA_SMI_ERR_MEMORY, "pa_smi_replicate",
                                       "out of memory for the pieces of %d ranges", r->nranges);
                r->pieces = pieces, r->pieces_capacity = more;
            }
            r->pieces[r->npieces++] = (pa_smi_piece){lo, at, p, count};
            lo += count, at += count;
        }
    r->pieces_ready = 1;
    return PA_SMI_OK;
}

/* Room for a copy of `total` elements and its touch bits, all bits zero. Only words that may
 * hold a set bit are cleared: after a read-only use (no touch since the last clear) none. */
static int copy_room(pa_smi_region *r, int64_t total)
{
    static const char call[] = "pa_smi_replicate";
    size_t bytes = (size_t)total * r->size, words = ((size_t)total + 63) / 64;
    if (bytes > r->copy_bytes) {
        char *copy = realloc(r->copy, bytes);
        if (!copy)
            return pa_smi_fail(PA_SMI_ERR_MEMORY, call,
                               "out of memory for a copy of %lld "
                               "elements",
                               (long long)total);
        r->copy = copy, r->copy_bytes = bytes;
    }
    if (words > r->bits_words) {
        uint64_t *bits = realloc(r->touched_bits, words * sizeof(uint64_t));
        if (!bits)
            return pa_smi_fail(PA_SMI_ERR_MEMORY, call, "out of memory for the touch bits");
        r->touched_bits = bits, r->bits_words = words;
    }
    if (words > r->bits_zero) { /* realloc keeps the zero words before bits_zero */
        memset(r->touched_bits + r->bits_zero, 0, (words - r->bits_zero) * sizeof(uint64_t));
        r->bits_zero = words;
    }
    r->copy_count = total;
    return PA_SMI_OK;
}

/* The copy's start: zero bits, or the region's values by the pieces of its ranges. */
static int start_copy(pa_smi_region *r, unsigned start)
{
    if (start == PA_SMI_ZERO) {
        if (r->copy_count)
            memset(r->copy, 0, (size_t)r->copy_count * r->size);
        return PA_SMI_OK;
    }
    int status = r->pieces_ready ? PA_SMI_OK : plan_pieces(r);
    return status ? status
                  : pa_smi_fetch(r, r->pieces, r->npieces, r->copy, &r->counts.transfers,
                                 "pa_smi_replicate");
}

int pa_smi_replicate(pa_smi_region *region, int count, const int64_t *lo, const int64_t *hi,
                     unsigned start)
{
    pa_smi_region *r = region;
    int status = check_call(r, count, lo, hi, start);
    if (status)
        return status;
    int64_t whole_lo = 0, whole_hi = r->n;
    if (count == 0)
        count = 1, lo = &whole_lo, hi = &whole_hi;
    if (!same_ranges(r, count, lo, hi)) {
        status = check_ranges(r, count, lo, hi);
        status = status ? status : keep_ranges(r, count, lo, hi);
        if (status)
            return status;
    }
    int last = count - 1;
    status = copy_room(r, r->range_at[last] + r->range_hi[last] - r->range_lo[last]);
    status = status ? status : start_copy(r, start);
    if (status)
        return status;
    r->replicated = 1;
    return PA_SMI_OK;
}

void *pa_smi_copy(const pa_smi_region *region)
{
    return region && region->replicated ? region->copy : NULL;
}

/* The range of a replicated region's copy that element i would be in: the last one starting at
 * or before it. One range (a whole-region copy) needs no search. */
static inline int range_of(const pa_smi_region *r, int64_t i)
{
    int lo = 0, hi = r->nranges - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (r->range_lo[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The place of element i in the copy of a replicated region, or -1. */
static inline int64_t copy_index(const pa_smi_region *r, int64_t i)
{
    int k = range_of(r, i);
    if (i < r->range_lo[k] || i >= r->range_hi[k])
        return -1;
    return r->range_at[k] + i - r->range_lo[k];
}

int64_t pa_smi_copy_index(const pa_smi_region *region, int64_t i)
{
    if (!region || !region->replicated || region->nranges == 0)
        return -1;
    return copy_index(region, i);
}

/* The place of elements lo .. hi - 1 (lo < hi) in the copy if they are one piece of it, else -1:
 * one lookup when they lie in one range, the common case; across ranges, adjacent ranges that
 * follow each other in the copy. */
static inline int64_t piece_index(const pa_smi_region *r, int64_t lo, int64_t hi)
{
    int k = range_of(r, lo);
    if (lo < r->range_lo[k] || lo >= r->range_hi[k])
        return -1;
    int64_t at = r->range_at[k] + lo - r->range_lo[k];
    if (hi <= r->range_hi[k])
        return at;
    return copy_index(r, hi - 1) == at + hi - 1 - lo ? at : -1;
}

/* pa_smi_touch_range's failures, in their order: the region, its mode, then the elements. */
static __attribute__((noinline, cold)) int touch_range_failure(const pa_smi_region *r, int64_t lo,
                                                               int64_t hi)
{
    static const char call[] = "pa_smi_touch";
    if (!r)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, call, "the region is NULL");
    if (!r->replicated)
        return pa_smi_fail(PA_SMI_ERR_STATE, call,
                           "the region is not replicated (pa_smi_replicate first)");
    return pa_smi_fail(PA_SMI_ERR_RANGE, call,
                       "elements %lld .. %lld are not one piece of the replicated copy",
                       (long long)lo, (long long)hi - 1);
}

/* Checked with one lookup and predicted branches: a code may touch every run it writes (a
 * scattered pattern's runs are short). */
int pa_smi_touch_range(pa_smi_region *region, int64_t lo, int64_t hi)
{
    pa_smi_region *r = region;
    int64_t at = r && r->replicated && lo < hi ? piece_index(r, lo, hi) : -1;
    if (__builtin_expect(at < 0, 0))
        return r && r->replicated && lo == hi ? PA_SMI_OK : touch_range_failure(r, lo, hi);
    r->bits_zero = 0;
    for (int64_t end = at + hi - lo; at < end;) { /* bits at .. end - 1, whole words at once */
        int64_t word = at >> 6, bit = at & 63, take = 64 - bit < end - at ? 64 - bit : end - at;
        uint64_t mask = take == 64 ? ~UINT64_C(0) : ((UINT64_C(1) << take) - 1) << bit;
        r->touched_bits[word] |= mask;
        at += take;
    }
    return PA_SMI_OK;
}

/* pa_smi_touch's failures, in their order: the region, its mode, then the element. */
static __attribute__((noinline, cold)) int touch_failure(pa_smi_region *r, int64_t i)
{
    if (r && r->replicated)
        return pa_smi_fail(PA_SMI_ERR_RANGE, "pa_smi_touch",
                           "element %lld is not in the replicated copy", (long long)i);
    return touch_range_failure(r, i, i + 1);
}

/* One element: one lookup and one bit (a code touches every element it writes, so this is a
 * hot path). */
int pa_smi_touch(pa_smi_region *region, int64_t i)
{
    pa_smi_region *r = region;
    int64_t at = r && r->replicated ? copy_index(r, i) : -1;
    if (__builtin_expect(at < 0, 0))
        return touch_failure(r, i);
    r->touched_bits[at >> 6] |= UINT64_C(1) << (at & 63);
    r->bits_zero = 0;
    return PA_SMI_OK;
}

int pa_smi_release(pa_smi_region *region)
{
    if (!region)
        return pa_smi_fail(PA_SMI_ERR_ARGUMENT, "pa_smi_release", "the region is NULL");
    if (!region->replicated)
        return pa_smi_fail(PA_SMI_ERR_STATE, "pa_smi_release",
                           "the region is not replicated: a release needs a pa_smi_replicate "
                           "before it");
    region->replicated = 0;
    return PA_SMI_OK;
}
