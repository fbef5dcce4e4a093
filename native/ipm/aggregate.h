/* The whole program's profile, aggregated across ranks at MPI_Finalize (aggregate.c), as rank 0
 * holds it for writing (profile.c) and for the banner (banner.c). */
#ifndef PA_IPM_AGGREGATE_H
#define PA_IPM_AGGREGATE_H

#include "names.h"
#include "table.h"

#define PA_IPM_PATH             2048 /* "outer/inner/...": PA_IPM_MAX_DEPTH escaped names */
#define PA_IPM_MAX_PATHS        256  /* regions over all ranks */
#define PA_IPM_MATRIX_MAX_TASKS 1024 /* the communication matrix is kept up to this many tasks */

/* The per-rank quantities of a region: each becomes a spread (sum, min, max over ranks). */
enum {
    PA_IPM_Q_WALL,
    PA_IPM_Q_CALC,
    PA_IPM_Q_MPI,
    PA_IPM_Q_IO,
    PA_IPM_Q_LBST,
    PA_IPM_Q_USER,
    PA_IPM_Q_SYSTEM,
    PA_IPM_NQ
};
extern const char *const pa_ipm_quantity_names[PA_IPM_NQ];

typedef struct {
    double q[PA_IPM_NQ]; /* region 0's quantities on this rank */
    double maxrss_bytes, overflow_events, pid, partial;
    int cpu; /* the CPU seen most (placement.c), -1 for none */
    char host[64];
    char cpus_allowed[128];
} pa_ipm_rank_row_t;

typedef struct {
    double sum, min, max;
} pa_ipm_spread_t;

typedef struct {
    int tasks, regions, paths_dropped;
    char (*paths)[PA_IPM_PATH];
    int *parents;
    pa_ipm_spread_t *region; /* regions x PA_IPM_NQ */
    double *region_ranks, *region_entries;
    pa_ipm_spread_t *call_time; /* regions x PA_IPM_NCALLS, over the ranks that made the call */
    double *call_count, *call_bytes, *call_lbst, *call_ranks;
    double *hist_count, *hist_bytes, *hist_time; /* PA_IPM_NCALLS x PA_IPM_BUCKETS */
    double *matrix_bytes, *matrix_messages;      /* tasks x tasks; NULL above the limit */
    pa_ipm_rank_row_t *ranks;
    pa_ipm_spread_t maxrss;
    int counted;             /* every rank counted its hardware counter */
    pa_ipm_spread_t counter; /* the count of pa_ipm.counter_event, when counted */
    double overflow_count, overflow_bytes, overflow_time, overflow_ranks, table_used_max;
    double regions_full, unbalanced_pops, mismatched_pops, too_deep, untracked_receives;
} pa_ipm_profile_t;

/* 1 when no lower rank of the profile ran on `rank`'s host: its hosts, each counted once. */
int pa_ipm_first_on_host(const pa_ipm_profile_t *profile, int rank);

/* Collective over every rank; the result is meaningful on rank 0 only. */
void pa_ipm_aggregate(pa_ipm_profile_t *profile);
void pa_ipm_profile_free(pa_ipm_profile_t *profile);

/* Rank 0: the JSON profile (profile.c) and the banner on stderr (banner.c). */
void pa_ipm_write_profile_json(const pa_ipm_profile_t *profile);
void pa_ipm_print_banner(const pa_ipm_profile_t *profile, FILE *out);

/* The program's command line, words separated by spaces (from /proc/self/cmdline). */
void pa_ipm_command_words(char ***words, int *count);

#endif
