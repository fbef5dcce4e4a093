/* A shared library the test program links: call sites in an exported and a hidden function. */
#include "probe.h"

__attribute__((noinline)) static int hidden(void)
{
    return probe("library_hidden") + 1; /* site:library_hidden */
}

int library_work(void)
{
    int calls = probe("library_work"); /* site:library_work */
#ifdef REBUILT
    calls += probe("rebuilt");
#endif
    return calls + hidden();
}
