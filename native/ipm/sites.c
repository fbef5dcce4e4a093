/* Call sites: where in the program each MPI call was made (docs/profile.md, Call sites).
 *
 * A site is the return address into the code that called the shim, a part of every record's key
 * at no cost beyond reading it (__builtin_return_address); $PERFATLAS_IPM_CALLSTACK=N keeps the N
 * innermost frames instead. MPICH's mpif.h, `use mpi` and mpi_f08 glue (libmpichfort) call the C
 * MPI_ functions themselves: a call from there is unwound past that library to the Fortran
 * program's own call.
 *
 * Stacks are unwound from the DWARF call-frame information of .eh_frame, so code built without
 * frame pointers unwinds too: by libunwind's unw_backtrace where libunwind.so.8 loads (its cache
 * of the objects' unwind tables makes a call ~0.1 us), else by glibc's backtrace(3), whose
 * unwinder (libgcc_s) looks each frame's FDE up anew through dl_iterate_phdr (~2-3 us a call);
 * $PERFATLAS_IPM_UNWINDER=backtrace picks glibc's. bench/ipm_overhead.py states both costs.
 * libunwind is opened RTLD_LOCAL: its _Unwind_* and backtrace never replace the program's.
 *
 * Addresses are resolved after the run, in Python (perfatlas.profile.symbols), never here: each
 * rank's file lists the objects loaded in the process (dl_iterate_phdr: path, load bias, build
 * id, executable segments), so that address-space randomization, which places every rank's
 * objects elsewhere, does not matter. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sites.h"

pa_ipm_sites_t pa_ipm_sites = {.mask = UINTPTR_MAX, .depth = 1};
static uintptr_t binding_low, binding_high;               /* libmpichfort's code, where loaded */
static int (*unwind)(void **stack, int size) = backtrace; /* backtrace(3)'s contract */
static const char *unwinder;                              /* its name; NULL: none is used */

/* Frames backtrace() may need above the site: this function, the shim, a Fortran entry point,
 * MPICH's binding and its descriptor glue. */
#define PA_IPM_FRAMES_ABOVE 8

static int in_binding(uintptr_t address)
{
    return address - binding_low < binding_high - binding_low;
}

void pa_ipm_site_stack(pa_ipm_site_t *site, uintptr_t caller)
{
    void *stack[PA_IPM_MAX_FRAMES + PA_IPM_FRAMES_ABOVE];
    int got = unwind(stack, pa_ipm_sites.depth + PA_IPM_FRAMES_ABOVE), from = 0, kept = 0;
    while (from < got && (uintptr_t)stack[from] != caller)
        from++;
    if (from == got) { /* the caller is not on the unwound stack: it alone is the site */
        memset(site, 0, sizeof *site);
        site->frames[0] = caller;
        return;
    }
    while (from < got && in_binding((uintptr_t)stack[from]))
        from++;
    for (; kept < pa_ipm_sites.depth && from + kept < got; kept++)
        site->frames[kept] = (uintptr_t)stack[from + kept];
    for (; kept < PA_IPM_MAX_FRAMES; kept++)
        site->frames[kept] = 0;
}

/* The hull of an object's executable segments. */
static void executable_bounds(const struct dl_phdr_info *info, uintptr_t *low, uintptr_t *high)
{
    *low = UINTPTR_MAX, *high = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_X))
            continue;
        uintptr_t start = info->dlpi_addr + segment->p_vaddr;
        if (start < *low)
            *low = start;
        if (start + segment->p_memsz > *high)
            *high = start + segment->p_memsz;
    }
}

static int find_binding(struct dl_phdr_info *info, size_t size, void *unused)
{
    (void)size, (void)unused;
    const char *slash = strrchr(info->dlpi_name, '/');
    if (strncmp(slash ? slash + 1 : info->dlpi_name, "libmpichfort", 12) != 0)
        return 0;
    executable_bounds(info, &binding_low, &binding_high);
    if (binding_high == 0)
        binding_low = 0;
    return 1;
}

/* libunwind's unw_backtrace where it loads and $PERFATLAS_IPM_UNWINDER does not say
 * "backtrace", else glibc's backtrace(3); a first call loads what it needs now, not inside the
 * program's first MPI call. */
static void choose_unwinder(void)
{
    const char *wanted = getenv("PERFATLAS_IPM_UNWINDER");
    int glibc = wanted && strcmp(wanted, "backtrace") == 0;
    if (wanted && *wanted && !glibc && strcmp(wanted, "libunwind") != 0)
        fprintf(stderr,
                "perfatlas-ipm: PERFATLAS_IPM_UNWINDER=%.40s is neither libunwind nor backtrace; "
                "using libunwind where it loads\n",
                wanted);
    void *library = glibc ? NULL : dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    void *fast = library ? dlsym(library, "unw_backtrace") : NULL;
    if (fast != NULL)
        unwind = (int (*)(void **, int))fast, unwinder = "libunwind";
    else
        unwind = backtrace, unwinder = "backtrace";
    void *warm[1];
    unwind(warm, 1);
}

void pa_ipm_sites_start(void)
{
    const char *wanted = getenv("PERFATLAS_IPM_CALLSTACK");
    int depth = 1;
    if (wanted && *wanted) {
        char *end;
        long asked = strtol(wanted, &end, 10);
        if (*end != '\0' || asked < 0 || asked > PA_IPM_MAX_FRAMES)
            fprintf(stderr,
                    "perfatlas-ipm: PERFATLAS_IPM_CALLSTACK=%.40s is not a number of frames from "
                    "0 to %d; keeping 1\n",
                    wanted, PA_IPM_MAX_FRAMES);
        else
            depth = (int)asked;
    }
    pa_ipm_sites = (pa_ipm_sites_t){.mask = depth ? UINTPTR_MAX : 0, .depth = depth};
    if (depth == 0)
        return;
    dl_iterate_phdr(find_binding, NULL);
    if (depth > 1) /* every caller is unwound */
        pa_ipm_sites.unwind_low = 0, pa_ipm_sites.unwind_span = UINTPTR_MAX;
    else
        pa_ipm_sites.unwind_low = binding_low,
        pa_ipm_sites.unwind_span = binding_high - binding_low;
    if (pa_ipm_sites.unwind_span != 0)
        choose_unwinder();
}

/* The GNU build id of an object, in hex, from its PT_NOTE segments in memory ("" for none). */
static void build_id(const struct dl_phdr_info *info, char *hex, size_t size)
{
    hex[0] = '\0';
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_NOTE)
            continue;
        const unsigned char *note = (const unsigned char *)(info->dlpi_addr + segment->p_vaddr);
        const unsigned char *end = note + segment->p_memsz;
        while (note + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *header = (const ElfW(Nhdr) *)note;
            const unsigned char *name = note + sizeof *header;
            const unsigned char *desc = name + ((header->n_namesz + 3) & ~3u);
            if (desc + header->n_descsz > end)
                break;
            if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0) {
                for (unsigned b = 0; b < header->n_descsz && 2 * b + 2 < size; b++)
                    snprintf(hex + 2 * b, 3, "%02x", desc[b]);
                return;
            }
            note = desc + ((header->n_descsz + 3) & ~3u);
        }
    }
}

/* One loaded object with code: its path (the executable's from /proc/self/exe), load bias,
 * build id and executable segments. The vDSO, which has no file, is left out. */
static int write_object(struct dl_phdr_info *info, size_t size, void *context)
{
    (void)size;
    pa_json *json = context;
    char path[PATH_MAX] = "", hex[2 * 64 + 1];
    if (info->dlpi_name[0] == '\0') {
        ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
        if (length <= 0)
            return 0;
        path[length] = '\0';
    } else if (info->dlpi_name[0] != '/' || realpath(info->dlpi_name, path) == NULL) {
        if (strchr(info->dlpi_name, '/') == NULL) /* linux-vdso.so.1 */
            return 0;
        snprintf(path, sizeof path, "%s", info->dlpi_name);
    }
    build_id(info, hex, sizeof hex);
    pa_json_begin_object(json);
    pa_json_key_string(json, "path", path);
    pa_json_key_int(json, "base", (long long)info->dlpi_addr);
    pa_json_key_text_or_null(json, "build_id", hex);
    pa_json_key(json, "segments");
    pa_json_begin_array(json);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_X))
            continue;
        long long start = (long long)(info->dlpi_addr + segment->p_vaddr);
        long long bounds[2] = {start, start + (long long)segment->p_memsz};
        pa_json_int_array(json, bounds, 2);
    }
    pa_json_end_array(json);
    pa_json_end_object(json);
    return 0;
}

void pa_ipm_write_objects(pa_json *json)
{
    pa_json_key(json, "objects");
    pa_json_begin_array(json);
    dl_iterate_phdr(write_object, json);
    pa_json_end_array(json);
}

void pa_ipm_write_unwinder(pa_json *json) { pa_json_key_text_or_null(json, "unwinder", unwinder); }

void pa_ipm_write_site(pa_json *json, const pa_ipm_site_t *site)
{
    pa_json_key(json, "site");
    pa_json_begin_array(json);
    for (int frame = 0; frame < pa_ipm_sites.depth && site->frames[frame] != 0; frame++)
        pa_json_int(json, (long long)site->frames[frame]);
    pa_json_end_array(json);
}
