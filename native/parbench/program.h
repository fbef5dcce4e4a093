/* mode=program: a program file run in order (docs/contract.md, pa-parbench).
 *
 * One invocation per line, key=value words: kernel=NAME (required), bytes=SIZE (2.5MB),
 * stride=S (1), threads=T (1; the first T of cpus=), repeat=N (1: passes of the kernel).
 * '#' starts a comment; blank lines are skipped. The whole file is read and checked before the
 * first invocation runs; a line at fault is named in the one-sentence error. */
#ifndef PB_PROGRAM_H
#define PB_PROGRAM_H

#include "args.h"

/* Runs the program and writes its document; returns the exit status. cpus NULL (bind=none):
 * the threads stay unpinned and ncpus bounds nothing but the threads of a line. */
int pb_program_run(const pa_args *args, const char *file, const int *cpus, int ncpus);

#endif
