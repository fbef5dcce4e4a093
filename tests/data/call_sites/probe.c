/* The call-site probe, a shared library as libperfatlas-ipm.so is: it keeps the return address
   of each call into it, as the profiler keys a call site, and at the end prints them with every
   loaded object in the shape of a rank file's "objects" (docs/profile.md, Call sites). */
#define _GNU_SOURCE
#include "probe.h"

#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_SITES = 64
};
static struct {
    const char *tag;
    uintptr_t address;
} sites[MAX_SITES];
static int site_count;

__attribute__((noinline)) int probe_at(const char *tag, void *return_address)
{
    if (site_count < MAX_SITES) {
        sites[site_count].tag = tag;
        sites[site_count].address = (uintptr_t)return_address;
        site_count++;
    }
    return 1;
}

__attribute__((noinline)) int probe(const char *tag)
{
    return probe_at(tag, __builtin_return_address(0));
}

/* NT_GNU_BUILD_ID from the object's PT_NOTE segments as mapped, printed as hex or null. */
static void print_build_id(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *phdr = &info->dlpi_phdr[i];
        if (phdr->p_type != PT_NOTE)
            continue;
        const unsigned char *note = (const unsigned char *)(info->dlpi_addr + phdr->p_vaddr);
        const unsigned char *end = note + phdr->p_memsz;
        while (note + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *header = (const ElfW(Nhdr) *)note;
            const unsigned char *name = note + sizeof(ElfW(Nhdr));
            const unsigned char *desc = name + ((header->n_namesz + 3) & ~3u);
            if (header->n_type == NT_GNU_BUILD_ID && header->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0) {
                printf("\"");
                for (unsigned j = 0; j < header->n_descsz; j++)
                    printf("%02x", desc[j]);
                printf("\"");
                return;
            }
            note = desc + ((header->n_descsz + 3) & ~3u);
        }
    }
    printf("null");
}

static int print_object(struct dl_phdr_info *info, size_t size, void *first)
{
    (void)size;
    char path[PATH_MAX];
    /* The main program's name is "": its file is /proc/self/exe. Paths are printed unescaped: the
       tests' folders need no JSON escaping. */
    const char *name = info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
    if (!realpath(name, path))
        snprintf(path, sizeof path, "%s", name);
    printf("%s\n  {\"path\": \"%s\", \"base\": %lu, \"build_id\": ", *(int *)first ? "" : ",", path,
           (unsigned long)info->dlpi_addr);
    *(int *)first = 0;
    print_build_id(info);
    printf(", \"segments\": [");
    const char *separator = "";
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *phdr = &info->dlpi_phdr[i];
        if (phdr->p_type != PT_LOAD || !(phdr->p_flags & PF_X))
            continue;
        unsigned long start = info->dlpi_addr + phdr->p_vaddr;
        printf("%s[%lu, %lu]", separator, start, start + (unsigned long)phdr->p_memsz);
        separator = ", ";
    }
    printf("]}");
    return 0;
}

void probe_report(void)
{
    printf("{\"sites\": {");
    for (int i = 0; i < site_count; i++)
        printf("%s\"%s\": %lu", i ? ", " : "", sites[i].tag, (unsigned long)sites[i].address);
    printf("},\n \"objects\": [");
    int first = 1;
    dl_iterate_phdr(print_object, &first);
    printf("]}\n");
}
