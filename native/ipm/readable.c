/* Memory known readable without a probe (readable.h).
 *
 * MPI_Pcontrol(1) with no name is legal, so its variadic name may be any value and is read with
 * process_vm_readv, which answers an unmapped address with an error instead of a fault: about
 * 1.5 us a call on a VM, twice per region entered and left. A name is nearly always a string
 * literal, in a readable segment of the executable or a library: those segments are listed once
 * per thread (dl_iterate_phdr) and read directly. The list is made again when an object has been
 * loaded or unloaded since, which glibc counts (dlpi_adds, dlpi_subs: read at each check from the
 * callback of the first object, which stops the walk), so an unloaded library's addresses are
 * never taken for readable. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dl_iterate_phdr */
#endif
#include <link.h>
#include <stdint.h>

#include "readable.h"

#define MAX_SEGMENTS 256 /* beyond them, a name is probed as before */

typedef struct {
    uintptr_t start, end;
} segment_t;

typedef struct {
    unsigned long long adds, subs;
    int known; /* whether the list matches adds and subs */
    int count;
    segment_t segments[MAX_SEGMENTS];
} segments_t;

static _Thread_local segments_t listed;

typedef struct {
    unsigned long long adds, subs;
    int counted;
} generation_t;

static int read_generation(struct dl_phdr_info *info, size_t size, void *data)
{
    generation_t *generation = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        generation->adds = info->dlpi_adds;
        generation->subs = info->dlpi_subs;
        generation->counted = 1;
    }
    return 1; /* the first object says it */
}

static int list_segments(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    segments_t *list = data;
    for (int i = 0; i < info->dlpi_phnum && list->count < MAX_SEGMENTS; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_R) || segment->p_memsz == 0)
            continue;
        uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)segment->p_vaddr;
        list->segments[list->count++] = (segment_t){start, start + (uintptr_t)segment->p_memsz};
    }
    return 0;
}

size_t pa_ipm_readable_bytes(const void *p, size_t want)
{
    generation_t now = {0, 0, 0};
    dl_iterate_phdr(read_generation, &now);
    if (!now.counted)
        return 0; /* no counts of loads: nothing is known readable */
    if (!listed.known || listed.adds != now.adds || listed.subs != now.subs) {
        listed.count = 0;
        dl_iterate_phdr(list_segments, &listed);
        listed.adds = now.adds, listed.subs = now.subs, listed.known = 1;
    }
    uintptr_t at = (uintptr_t)p;
    for (int i = 0; i < listed.count; i++) {
        const segment_t *segment = &listed.segments[i];
        if (at >= segment->start && at < segment->end) {
            size_t left = (size_t)(segment->end - at);
            return left < want ? left : want;
        }
    }
    return 0;
}
