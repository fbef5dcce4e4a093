/* The test program: calls into the probe from known lines, in the program (directly, through a
   chain of inlined functions) and in its shared library, and from libc (a qsort comparator). */
#include <stdlib.h>

#include "probe.h"

int library_work(void);
volatile int sink;

__attribute__((noinline)) static void direct(void)
{
    sink += probe("direct"); /* site:direct */
    sink += 1;
}

static inline __attribute__((always_inline)) void inner(void)
{
    sink += probe("inlined"); /* site:inlined */
}

static inline __attribute__((always_inline)) void middle(void)
{
    inner(); /* site:inlined_middle */
    sink += 2;
}

__attribute__((noinline)) static void outer(void)
{
    middle(); /* site:inlined_outer */
    sink += 3;
}

/* Its return address is in libc's qsort. */
static int compare(const void *a, const void *b)
{
    probe_at("libc", __builtin_return_address(0));
    return *(const int *)a - *(const int *)b;
}

int main(void)
{
    sink += probe("main"); /* site:main */
    direct();
    outer();
    sink += library_work();
    int values[2] = {2, 1};
    qsort(values, 2, sizeof values[0], compare);
    probe_report();
    return 0;
}
