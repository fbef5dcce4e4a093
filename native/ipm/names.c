/* Region names and paths (names.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* process_vm_readv */
#endif
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "names.h"
#include "readable.h"

/* The length of the valid UTF-8 character at `p` (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF), or 0 when the bytes there are not one. */
static size_t character_length(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    size_t length = p[0] >= 0xc2 && p[0] <= 0xdf   ? 2
                    : p[0] >= 0xe0 && p[0] <= 0xef ? 3
                    : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                                   : 0;
    unsigned char low = 0x80, high = 0xbf; /* the range of the second byte */
    if (p[0] == 0xe0)
        low = 0xa0;
    else if (p[0] == 0xed)
        high = 0x9f;
    else if (p[0] == 0xf0)
        low = 0x90;
    else if (p[0] == 0xf4)
        high = 0x8f;
    if (length == 0 || p[1] < low || p[1] > high)
        return 0;
    for (size_t i = 2; i < length; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return length;
}

void pa_ipm_region_name(char *out, size_t size, const char *name)
{
    const unsigned char *p = (const unsigned char *)name;
    size_t used = 0;
    while (*p) {
        size_t length = character_length(p);
        if (used + (length ? length : 1) >= size)
            break;
        if (length == 0) {
            out[used++] = '?';
            p++;
        } else {
            memcpy(out + used, p, length);
            used += length;
            p += length;
        }
    }
    out[used] = '\0';
}

size_t pa_ipm_whole_characters(const char *text, size_t limit)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t used = 0;
    while (p[used]) {
        size_t length = character_length(p + used);
        if (used + (length ? length : 1) > limit)
            break;
        used += length ? length : 1;
    }
    return used;
}

int pa_ipm_path_join(char *out, size_t size, const char *parent, const char *name)
{
    size_t used = strlen(parent);
    out[0] = '\0';
    if (used + 1 >= size)
        return 0;
    memcpy(out, parent, used);
    if (used > 0)
        out[used++] = '/';
    const char *escaped = *name ? name : "\\e";
    for (const char *p = escaped; *p; p++) {
        int escape = *name && (*p == '/' || *p == '\\');
        if (used + (size_t)escape + 1 >= size) {
            out[used] = '\0'; /* what fits, cut at a name's byte: never read past it */
            return 0;
        }
        if (escape)
            out[used++] = '\\';
        out[used++] = *p;
    }
    out[used] = '\0';
    return 1;
}

void pa_ipm_path_split(const char *path, char *parent, char *name, size_t size)
{
    size_t last = 0; /* where the last name starts */
    int nested = 0;
    for (size_t at = 0; path[at]; at++) {
        if (path[at] == '\\' && path[at + 1])
            at++;
        else if (path[at] == '/')
            last = at + 1, nested = 1;
    }
    size_t cut = nested ? last - 1 : 0;
    if (cut >= size)
        cut = size - 1;
    memcpy(parent, path, cut);
    parent[cut] = '\0';
    size_t used = 0;
    const char *p = path + last;
    if (strcmp(p, "\\e") == 0)
        p = "";
    for (; *p && used + 1 < size; p++) {
        if (*p == '\\' && p[1])
            p++;
        name[used++] = *p;
    }
    name[used] = '\0';
}

/* Whether the `got` bytes read into `name` hold a name: a NUL within them, valid UTF-8 before. */
static int holds_name(const char *name, size_t got)
{
    const char *end = memchr(name, '\0', got);
    if (end == NULL)
        return 0; /* unterminated within the bound */
    for (const unsigned char *p = (const unsigned char *)name; p < (const unsigned char *)end;) {
        size_t length = character_length(p);
        if (length == 0)
            return 0;
        p += length;
    }
    return 1;
}

int pa_ipm_passed_name(const void *candidate, char name[PA_IPM_PASSED_NAME])
{
    if (candidate == NULL)
        return 0;
    size_t readable = pa_ipm_readable_bytes(candidate, PA_IPM_PASSED_NAME);
    const char *end = readable ? memchr(candidate, '\0', readable) : NULL;
    if (end != NULL) { /* in a loaded object's segment (a literal, most likely): no probe */
        size_t got = (size_t)(end - (const char *)candidate) + 1;
        memcpy(name, candidate, got);
        return holds_name(name, got);
    }
    /* Two remote pieces split at the page boundary: a transfer stops at the first piece it
     * cannot read, so a short name at the end of the last mapped page still reads whole. */
    uintptr_t start = (uintptr_t)candidate;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t first = page - start % page;
    if (first > PA_IPM_PASSED_NAME)
        first = PA_IPM_PASSED_NAME;
    struct iovec local = {name, PA_IPM_PASSED_NAME};
    struct iovec remote[2] = {{(void *)start, first},
                              {(void *)(start + first), PA_IPM_PASSED_NAME - first}};
    ssize_t got =
        process_vm_readv(getpid(), &local, 1, remote, first < PA_IPM_PASSED_NAME ? 2 : 1, 0);
    if (got < 0 && (errno == ENOSYS || errno == EPERM)) {
        /* no probe here (a seccomp profile that forbids the call): trust the pointer, as MPI
         * profilers do, rather than lose every region */
        pa_ipm_region_name(name, PA_IPM_PASSED_NAME, candidate);
        return 1;
    }
    return got > 0 && holds_name(name, (size_t)got);
}
