/* One field of a /proc file of the form "Name:   value" (status, sched). */
#ifndef PA_PROC_FIELD_H
#define PA_PROC_FIELD_H

#include <stddef.h>

/* The first line of `path` that starts with `prefix`: its value (past the prefix, blanks and
 * ':', without the newline) copied into `out`. 1 when found, 0 otherwise (`out` untouched). */
int pa_proc_field(const char *path, const char *prefix, char *out, size_t size);

#endif
