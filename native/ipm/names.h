/* Region names and paths of perfatlas-ipm (docs/profile.md, Regions): a name is kept as the
 * program gave it, cut to whole UTF-8 characters, and a path joins names so that no two regions
 * share one ("a/b" at the top level is not "a" > "b"). */
#ifndef PA_IPM_NAMES_H
#define PA_IPM_NAMES_H

#include <stddef.h>

/* `name` into out[size]: its valid UTF-8 characters as they are, each invalid byte as '?' (a JSON
 * document is UTF-8), cut after the last whole character that fits. */
void pa_ipm_region_name(char *out, size_t size, const char *name);

/* The most bytes of a name MPI_Pcontrol reads, its NUL included: a longer one is no name. */
#define PA_IPM_PASSED_NAME 1024

/* Whether `candidate` points to a name: a NUL-terminated string of valid UTF-8 of fewer than
 * PA_IPM_PASSED_NAME bytes in readable memory, read without faulting (directly where it lies in
 * a loaded object's readable segment, readable.h; else by process_vm_readv on this process,
 * which answers an unmapped address with an error) and copied into name. NULL is none. */
int pa_ipm_passed_name(const void *candidate, char name[PA_IPM_PASSED_NAME]);

/* The length in bytes of the longest prefix of `text` made of whole characters, at most `limit`. */
size_t pa_ipm_whole_characters(const char *text, size_t limit);

/* parent "/" name into out[size] ("" for region 0's children: no leading "/"); in the name, '/'
 * and '\' are escaped with '\', and an empty name is written "\e". 0 when it does not fit. */
int pa_ipm_path_join(char *out, size_t size, const char *parent, const char *name);
/* The parent path of `path` into out[size] (its last unescaped '/' and what follows removed; ""
 * for a top-level region), and its last name, unescaped, into name[size]. */
void pa_ipm_path_split(const char *path, char *parent, char *name, size_t size);

#endif
