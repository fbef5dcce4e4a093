#define _GNU_SOURCE
#include "memory.h"

#include "alloc.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "args.h"

static char sentence[512]; /* the why of a not_measurable result */

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

static int log2_exact(size_t n)
{
    int shift = 0;
    while (((size_t)1 << shift) < n)
        shift++;
    return shift;
}

static int node_count(void) { return numa_available() < 0 ? 1 : numa_num_configured_nodes(); }

static void nodes_string(const unsigned long *mask, int max_node, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int n = 0; n <= max_node && used < size; n++)
        if (mask[n / (8 * sizeof *mask)] >> (n % (8 * sizeof *mask)) & 1)
            used += (size_t)snprintf(out + used, size - used, used ? ",%d" : "%d", n);
}

/* hugetlbfs first (explicitly reserved pages); else address space aligned to the page size with
 * guard pages on both sides, so that the kernel cannot merge this mapping with a neighbour and
 * /proc/self/smaps describes exactly this buffer. */
static int reserve(pa_buffer *b)
{
    if (b->page_bytes > PA_BASE_PAGE) {
        int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
                    (log2_exact(b->page_bytes) << MAP_HUGE_SHIFT);
        void *p = mmap(NULL, b->mapped, PROT_READ | PROT_WRITE, flags, -1, 0);
        if (p != MAP_FAILED) {
            b->hugetlb = 1;
            b->base = b->reservation = p;
            b->reservation_bytes = b->mapped;
            return 0;
        }
    }
    /* MAP_NORESERVE: the kernel promises nothing, and touching more than it has would end in
     * the OOM killer's SIGKILL; weigh the buffer first (hugetlbfs pages, above, are a pool of
     * their own, outside MemAvailable). */
    char what[64];
    snprintf(what, sizeof what, "a buffer of %zu bytes", b->bytes);
    pa_require_memory((double)b->mapped, what, "the measurement");
    b->reservation_bytes = b->mapped + 2 * b->page_bytes;
    b->reservation = mmap(NULL, b->reservation_bytes, PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (b->reservation == MAP_FAILED)
        return -1;
    uintptr_t start = (uintptr_t)b->reservation + PA_BASE_PAGE;
    b->base = (char *)round_up(start, b->page_bytes);
    if (mprotect(b->base, b->mapped, PROT_READ | PROT_WRITE))
        return -1;
    /* THP in 'madvise' mode backs only regions that ask; 4 KiB requests opt out of 'always'. */
    madvise(b->base, b->mapped, b->page_bytes > PA_BASE_PAGE ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    return 0;
}

/* mbind before the first touch: MPOL_LOCAL (the touching thread's node), MPOL_BIND or
 * MPOL_INTERLEAVE over every node this process may use. */
static const char *apply_policy(pa_buffer *b)
{
    int mode = MPOL_LOCAL;
    struct bitmask *mask = NULL;
    if (b->node >= 0) {
        int nodes = node_count();
        if (numa_available() < 0) { /* also under qemu-user, which has no NUMA system calls */
            snprintf(sentence, sizeof sentence,
                     "memory node %d is not measurable here: the kernel has no NUMA support",
                     b->node);
            return sentence;
        }
        if (b->node > numa_max_node() ||
            !numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)b->node)) {
            snprintf(sentence, sizeof sentence,
                     "memory node %d does not exist here (%d NUMA node%s): remote NUMA is not "
                     "measurable on this machine",
                     b->node, nodes, nodes == 1 ? "" : "s");
            return sentence;
        }
        mode = MPOL_BIND;
        mask = numa_allocate_nodemask();
        numa_bitmask_setbit(mask, (unsigned)b->node);
    } else if (b->node == PA_NODE_INTERLEAVE) {
        if (numa_available() < 0) {
            snprintf(sentence, sizeof sentence,
                     "interleaved memory is not measurable here: the kernel has no NUMA support");
            return sentence;
        }
        mode = MPOL_INTERLEAVE;
        mask = numa_get_mems_allowed();
    }
    long status =
        mbind(b->base, b->mapped, mode, mask ? mask->maskp : NULL, mask ? mask->size + 1 : 0, 0);
    int error = errno;
    if (mask)
        numa_bitmask_free(mask);
    if (status && b->node != PA_NODE_LOCAL) {
        /* e.g. a container whose seccomp profile forbids mbind */
        snprintf(sentence, sizeof sentence,
                 "the memory policy cannot be applied here: mbind failed (%s)", strerror(error));
        return sentence;
    }
    return NULL;
}

const char *pa_buffer_map(pa_buffer *b, size_t bytes, size_t page_bytes, int node)
{
    memset(b, 0, sizeof *b);
    b->bytes = bytes;
    b->page_bytes = page_bytes;
    b->node = node;
    b->mapped = round_up(bytes ? bytes : 1, page_bytes);
    if (reserve(b))
        pa_fail(2, "cannot reserve %zu bytes of memory: %s", b->mapped, strerror(errno));
    return apply_policy(b);
}

/* Fraction of the buffer backed by huge pages, from its /proc/self/smaps entry: hugetlbfs pages
 * appear as KernelPageSize and *_Hugetlb, transparent ones as AnonHugePages. */
static double huge_fraction(const pa_buffer *b)
{
    FILE *smaps = fopen("/proc/self/smaps", "r");
    if (!smaps)
        return 0.0;
    char line[512];
    int inside = 0;
    unsigned long size_kb = 0, anon_huge_kb = 0, hugetlb_kb = 0, value;
    while (fgets(line, sizeof line, smaps)) {
        unsigned long start, end;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3) {
            if (inside)
                break;
            inside = start <= (uintptr_t)b->base && (uintptr_t)b->base < end;
        } else if (inside) {
            if (sscanf(line, "Size: %lu kB", &value) == 1)
                size_kb = value;
            else if (sscanf(line, "AnonHugePages: %lu kB", &value) == 1)
                anon_huge_kb += value;
            else if (sscanf(line, "Private_Hugetlb: %lu kB", &value) == 1 ||
                     sscanf(line, "Shared_Hugetlb: %lu kB", &value) == 1)
                hugetlb_kb += value;
        }
    }
    fclose(smaps);
    return size_kb ? (double)(b->hugetlb ? hugetlb_kb : anon_huge_kb) / (double)size_kb : 0.0;
}

/* Node of up to 4096 pages, one drawn at random from each of as many equal strata of the buffer:
 * unbiased even where interleaving is periodic in the page index. */
static void sample_nodes(pa_buffer *b)
{
    enum {
        max_samples = 4096
    };
    static void *pages[max_samples];
    static int status[max_samples];
    size_t npages = b->mapped / b->page_bytes;
    size_t count = npages < max_samples ? npages : max_samples;
    uint64_t state = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < count; i++) {
        size_t first = i * npages / count, next = (i + 1) * npages / count;
        state ^= state << 13, state ^= state >> 7, state ^= state << 17; /* xorshift64 */
        pages[i] = b->base + (first + state % (next - first)) * b->page_bytes;
    }
    b->nodes = 0;
    b->placement_known = move_pages(0, count, pages, NULL, status, 0) == 0;
    if (!b->placement_known)
        return;
    size_t on_node[PA_MAX_NODES] = {0};
    for (size_t i = 0; i < count; i++)
        if (status[i] >= 0 && status[i] < PA_MAX_NODES) {
            on_node[status[i]]++;
            if (status[i] >= b->nodes)
                b->nodes = status[i] + 1;
        }
    for (int n = 0; n < b->nodes; n++)
        b->node_fraction[n] = (double)on_node[n] / (double)count;
}

static void read_policy(pa_buffer *b)
{
    int mode;
    unsigned long mask[PA_MAX_NODES / (8 * sizeof(unsigned long))] = {0};
    static const char *names[] = {"default", "preferred", "bind", "interleave", "local"};
    char nodes[96];
    if (get_mempolicy(&mode, mask, PA_MAX_NODES, b->base, MPOL_F_ADDR)) {
        snprintf(b->policy_applied, sizeof b->policy_applied, "unknown (get_mempolicy: %s)",
                 strerror(errno));
        return;
    }
    nodes_string(mask, PA_MAX_NODES - 1, nodes, sizeof nodes);
    mode &= 0xff; /* without the mode flags of bits 13-15 (MPOL_F_STATIC_NODES ...) */
    snprintf(b->policy_applied, sizeof b->policy_applied, "%s%s%s",
             mode >= 0 && mode <= MPOL_LOCAL ? names[mode] : "other", nodes[0] ? " " : "", nodes);
}

static void read_sysfs_word(const char *path, char *out, size_t size)
{
    FILE *file = fopen(path, "r");
    char line[256] = "";
    if (file) {
        if (!fgets(line, sizeof line, file))
            line[0] = '\0';
        fclose(file);
    }
    /* THP's 'enabled' file brackets the mode in force: "always [madvise] never" */
    char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
    if (open && close)
        snprintf(out, size, "%.*s", (int)(close - open - 1), open + 1);
    else
        snprintf(out, size, "%s", line[0] ? strtok(line, "\n") : "unknown");
}

const char *pa_buffer_verify(pa_buffer *b)
{
    read_policy(b);
    sample_nodes(b);
    b->huge_page_fraction = huge_fraction(b);
    if (b->page_bytes <= PA_BASE_PAGE || b->huge_page_fraction >= 0.9)
        return NULL;
    char thp[32], free_pages[32], path[128];
    read_sysfs_word("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof thp);
    snprintf(path, sizeof path, "/sys/kernel/mm/hugepages/hugepages-%zukB/free_hugepages",
             b->page_bytes / 1024);
    read_sysfs_word(path, free_pages, sizeof free_pages);
    snprintf(sentence, sizeof sentence,
             "%zu MiB pages unavailable: THP is '%s' but only %.0f %% of the buffer was backed by "
             "huge pages and hugetlbfs has %s free pages; reserve some with "
             "'echo N > /proc/sys/vm/nr_hugepages'",
             b->page_bytes >> 20, thp, 100.0 * b->huge_page_fraction, free_pages);
    return sentence;
}

void pa_buffer_unmap(pa_buffer *b)
{
    if (b->reservation)
        munmap(b->reservation, b->reservation_bytes);
    b->reservation = NULL;
}

void pa_buffer_json(pa_json *json, const pa_buffer *b)
{
    pa_json_key_string(json, "mempolicy",
                       b->node == PA_NODE_LOCAL        ? "local"
                       : b->node == PA_NODE_INTERLEAVE ? "interleave"
                                                       : "bind");
    pa_json_key(json, "mempolicy_applied"); /* read back by get_mempolicy; null if never applied */
    if (b->policy_applied[0])
        pa_json_string(json, b->policy_applied);
    else
        pa_json_null(json);
    pa_json_key(json, "pages_on_node");
    if (b->placement_known) {
        pa_json_begin_object(json);
        for (int n = 0; n < b->nodes; n++)
            if (b->node_fraction[n] > 0) {
                char key[16];
                snprintf(key, sizeof key, "%d", n);
                pa_json_key_double(json, key, b->node_fraction[n]);
            }
        pa_json_end_object(json);
    } else {
        pa_json_null(json);
    }
    pa_json_key_int(json, "page_bytes", (long long)b->page_bytes);
    pa_json_key_double(json, "huge_page_fraction", b->huge_page_fraction);
    pa_json_key(json, "huge_page_source"); /* where larger pages were asked from */
    if (b->page_bytes > PA_BASE_PAGE)
        pa_json_string(json, b->hugetlb ? "hugetlbfs" : "transparent huge pages (madvise)");
    else
        pa_json_null(json);
}
