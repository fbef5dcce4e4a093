/* Buffers under a NUMA memory policy and a page size, with verification of what was applied.
 *
 * pa_buffer_map reserves the address space, sets the page size (hugetlbfs, else transparent huge
 * pages via madvise) and the memory policy (mbind) but touches nothing: the owning thread(s) then
 * first-touch the pages, and pa_buffer_verify reads back where they landed (move_pages on a
 * stratified sample of pages) and how much of the buffer huge pages back (/proc/self/smaps). A
 * request that this machine cannot honour is not an error: both functions return one sentence
 * saying why, for the caller's not_measurable document (docs/contract.md), or NULL when all is
 * well. */
#ifndef PA_MEMORY_H
#define PA_MEMORY_H

#include <stddef.h>

#include "json.h"

#define PA_MAX_NODES 256
#define PA_BASE_PAGE 4096u

typedef struct {
    char *base;        /* page-aligned start of the buffer */
    size_t bytes;      /* as requested */
    size_t mapped;     /* bytes rounded up to whole pages */
    size_t page_bytes; /* requested page size */
    int node;          /* PA_NODE_LOCAL, PA_NODE_INTERLEAVE or a node number (args.h) */
    int hugetlb;       /* backed by hugetlbfs rather than anonymous memory */
    void *reservation; /* what to munmap */
    size_t reservation_bytes;
    /* read back by pa_buffer_verify */
    char policy_applied[128];
    double huge_page_fraction;
    int placement_known; /* move_pages answered */
    int nodes;           /* entries of node_fraction */
    double node_fraction[PA_MAX_NODES];
} pa_buffer;

const char *pa_buffer_map(pa_buffer *buffer, size_t bytes, size_t page_bytes, int node);
const char *pa_buffer_verify(pa_buffer *buffer);
void pa_buffer_unmap(pa_buffer *buffer);

/* Keys of "placement": mempolicy (asked), mempolicy_applied (read back), pages_on_node,
 * page_bytes, huge_page_fraction, huge_page_source. */
void pa_buffer_json(pa_json *json, const pa_buffer *buffer);

#endif
