/* Memory known readable without a probe: the readable segments of the objects loaded in the
 * process, where the string literals a program names its regions with live. */
#ifndef PA_IPM_READABLE_H
#define PA_IPM_READABLE_H

#include <stddef.h>

/* How many bytes from `p`, at most `want`, lie in one readable PT_LOAD segment of a loaded
 * object; 0 when `p` is in none (the heap, a stack, unmapped memory). */
size_t pa_ipm_readable_bytes(const void *p, size_t want);

#endif
