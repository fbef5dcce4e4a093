/* The state of perfatlas-ipm shared by its parts: the record table, the regions, the counters. */
#ifndef PA_IPM_TABLE_H
#define PA_IPM_TABLE_H

#include <stdint.h>

#include "ipm.h"

#define PA_IPM_MAX_RECORDS 4096 /* the compiled-in capacity; $PERFATLAS_IPM_TABLE_SIZE lowers it */
#define PA_IPM_MAX_REGIONS 64
#define PA_IPM_REGION_NAME 64 /* bytes of a name kept, its NUL included (names.h) */
#define PA_IPM_MAX_DEPTH   16 /* region levels a thread keeps; deeper ones are counted (too_deep) */
#define PA_IPM_BUCKETS     65 /* size buckets: 0 bytes, then [2^(b-1), 2^b) for b = 1..64 */

/* The key (region, call, bucket, peer, site) and the figures of its events; the first frame of
 * the site shares the first cache line with the rest of the key and the figures. */
typedef struct {
    uint64_t count, bytes;
    uint64_t ticks_total, ticks_min, ticks_max;
    int region, call, bucket, peer; /* peer is a world rank, or -1 for none */
    pa_ipm_site_t site;             /* its first pa_ipm_sites.depth frames */
    int used;
} pa_ipm_record_t;

/* A record table: one per thread that records (record.c), merged into pa_ipm.table at the end. */
typedef struct pa_ipm_table {
    pa_ipm_record_t records[PA_IPM_MAX_RECORDS];
    pa_ipm_record_t overflow;             /* every event that found no slot */
    pa_ipm_record_t *last[PA_IPM_NCALLS]; /* per call, the record of its latest event */
    int used;                             /* slots taken */
    _Atomic int busy;                     /* the owner thread is updating it (record.c) */
} pa_ipm_table_t;

typedef struct {
    char name[PA_IPM_REGION_NAME];
    int parent;              /* region id; -1 for region 0, the whole program */
    uint64_t entries;        /* times a thread left it (region 0: once) */
    uint64_t ticks;          /* wallclock inside it, summed over entries */
    double user_s, system_s; /* CPU time of the threads inside it (RUSAGE_THREAD) */
} pa_ipm_region_t;

typedef struct {
    pa_ipm_table_t table; /* the thread that called MPI_Init records here; all, once merged */
    int capacity;         /* slots of a table used: PA_IPM_MAX_RECORDS or fewer */
    pa_ipm_region_t regions[PA_IPM_MAX_REGIONS];
    int region_count;
    uint64_t regions_full;       /* MPI_Pcontrol(1, ...) that found the region table full */
    uint64_t unbalanced_pops;    /* MPI_Pcontrol(-1, ...) outside every region */
    uint64_t mismatched_pops;    /* MPI_Pcontrol(-1, name) whose name is not the innermost */
    uint64_t too_deep;           /* MPI_Pcontrol(1, ...) deeper than PA_IPM_MAX_DEPTH: not kept */
    uint64_t untracked_receives; /* nonblocking receives recorded as posted (request table full) */
    int rank, size;
    int thread_multiple; /* MPI_THREAD_MULTIPLE provided: MPI calls of several threads at once */
    long pid;      /* the process that called MPI_Init: the only one that writes profile files */
    MPI_Comm comm; /* a duplicate of MPI_COMM_WORLD for the profiler's own reductions */
    char job_folder[128]; /* a spawned job's own folder in $PERFATLAS_IPM_DIR; "" for the first */
    uint64_t start_ticks, end_ticks;
    double start_unix;
    double start_user_s, start_system_s; /* RUSAGE_SELF at MPI_Init */
    int counted;                         /* hardware counters counted (counters.c) */
    double counter_value;                /* their count on the thread that called MPI_Init */
    const char *counter_event;
} pa_ipm_state_t;

extern pa_ipm_state_t pa_ipm;

/* 1 in the process that called MPI_Init, 0 in a child it forked: only the former writes files. */
int pa_ipm_in_rank_process(void);

/* The lock of pa_ipm's shared parts (regions, counters of region errors, the table of threads
 * without one of their own; the pending receives under MPI_THREAD_MULTIPLE): every update of them
 * after MPI_Init happens under it. */
void pa_ipm_lock(void);
void pa_ipm_unlock(void);

/* record.c: the event path's start (at MPI_Init, on the thread that becomes the table's owner)
 * and end: after pa_ipm_active is cleared, every thread's table merged into pa_ipm.table. */
void pa_ipm_record_start(void);
void pa_ipm_merge_tables(void);

/* User and system CPU seconds of this thread (who = RUSAGE_THREAD) or process (RUSAGE_SELF). */
void pa_ipm_cpu_seconds(int who, double *user_s, double *system_s);

/* The ranks of `group` as ranks of MPI_COMM_WORLD (MPI_UNDEFINED where not in it), malloc'd: the
 * cache a communicator or window keeps as an attribute. NULL when out of memory. */
int *pa_ipm_world_ranks(MPI_Group group);

/* 1 for the I/O calls (MPI-IO, POSIX, stdio), 0 for the rest. */
int pa_ipm_is_io(int call);
/* Adds value to values[region] and to every region enclosing it (parents[0] = -1). */
void pa_ipm_add_inclusive(double values[], const int parents[], int region, double value);
/* Seconds in MPI (MPI-IO excluded) and in I/O per region of this rank, nested regions included;
 * the overflow record's time counts as MPI time of the whole program (region 0). */
void pa_ipm_region_times(double mpi_s[], double io_s[]);

/* Output files in $PERFATLAS_IPM_DIR (rank.c): open (NULL and one sentence on failure), close. */
#include "json.h"
#include <stdio.h>
FILE *pa_ipm_open_output(const char *name, char *path, size_t path_size);
void pa_ipm_close_output(FILE *file, pa_json *json, const char *path);

#endif
