/* pa-madbench: the MADbench proxy of CMB power-spectrum estimation (app.madbench), after Borrill,
 * Carter, Oliker and Skinner, "Integrated performance monitoring of a cosmology application on
 * leading HEC platforms" (ICPP 2005): one out-of-core Newton-Raphson iteration of MADCAP's
 * maximum-likelihood spectrum on np = q^2 MPI ranks with ScaLAPACK (pipeline.h), its four phases
 * timed from a common barrier to the slowest rank, repeated `repeat` times after `warmup` untimed
 * runs (one sample per phase and repetition). Before each repetition rank 0 times cblas_dgemm
 * alone (dgemm_rate.h), the reference of every phase's percentage of peak. One perfatlas.result/1
 * document, from rank 0. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "args.h"
#include "comm.h"
#include "dgemm_rate.h"
#include "json.h"
#include "pipeline.h"
#include "result.h"

/* OpenBLAS's own controls (weak: another BLAS leaves them NULL). */
extern void openblas_set_num_threads(int threads) __attribute__((weak));
extern char *openblas_get_config(void) __attribute__((weak));

static const pa_param params[] = {
    {"npix", PA_INT, "1024", "pixels of the map: the order of every matrix (MADbench NPIX)", NULL,
     1, 1e6},
    {"nbin", PA_INT, "16", "bins of the power spectrum (MADbench NBIN)", NULL, 1, 10000},
    {"lbin", PA_INT, "4", "multipoles per bin; bin b holds l = 2 + b lbin .. 1 + (b + 1) lbin",
     NULL, 1, 100000},
    {"ngang", PA_INT, "1",
     "gangs of the W phase, each np/ngang ranks multiplying nbin/ngang bins (MADbench NGANG)", NULL,
     1, 1e6},
    {"bsize", PA_INT, "64", "ScaLAPACK block size: bsize x bsize blocks dealt block-cyclically",
     NULL, 1, 100000},
    {"overlap", PA_INT, "0",
     "1: the W phase reads dS/dC_b+1 and writes W_b-1 on a helper thread while pdgemm makes W_b "
     "(io=files, ngang=1, rmod=wmod=1, nbin >= 3); 0: MADbench's order, each transfer waited for",
     NULL, 0, 1},
    {"rmod", PA_INT, "1", "at most np/rmod ranks read at once (MADbench RMOD)", NULL, 1, 1e6},
    {"wmod", PA_INT, "1", "at most np/wmod ranks write at once (MADbench WMOD)", NULL, 1, 1e6},
    {"io", PA_CHOICE, "files",
     "files: each rank its own file per matrix kind (POSIX); shared: one file per kind (MPI-IO)",
     "files,shared", 0, 0},
    {"dir", PA_STRING, "",
     "folder of the matrix files; default a fresh folder under $TMPDIR (or /tmp), removed at the "
     "end",
     NULL, 0, 0},
    {"keep", PA_INT, "0", "1: keep the matrix files (and a fresh folder) after the run", NULL, 0,
     1},
    {"noise", PA_DOUBLE, "1", "white-noise variance per pixel (N = noise I)", NULL, 1e-300, 1e300},
    {"seed", PA_INT, "1", "seed of the splitmix64 stream of pixel positions and data", NULL, 0,
     9007199254740992.0},
    {"repeat", PA_INT, "3", "repetitions of the whole pipeline; one sample per phase each", NULL, 1,
     1e6},
    {"warmup", PA_INT, "1", "untimed runs of the whole pipeline before those", NULL, 0, 1e6},
};

/* Fisher matrix, dL/dC and dC go into the document up to this many bins. */
#define PA_SMALL_NBIN 64
/* Rank 0's DGEMM reference runs at least this long per repetition. */
#define PA_DGEMM_SECONDS 0.02

typedef struct {
    int npix, nbin, lbin, ngang, bsize, rmod, wmod, shared, keep, repeat, warmup, overlap;
    double noise;
    long long seed;
    int q, gang_rows, gang_cols;
    char dir[4096];
    int fresh_dir; /* made here, removed at the end unless keep=1 */
} setup;

static void read_setup(setup *s, const pa_args *args)
{
    *s = (setup){
        .npix = (int)pa_arg_int(args, "npix"),
        .nbin = (int)pa_arg_int(args, "nbin"),
        .lbin = (int)pa_arg_int(args, "lbin"),
        .ngang = (int)pa_arg_int(args, "ngang"),
        .bsize = (int)pa_arg_int(args, "bsize"),
        .rmod = (int)pa_arg_int(args, "rmod"),
        .wmod = (int)pa_arg_int(args, "wmod"),
        .shared = !strcmp(pa_arg_text(args, "io"), "shared"),
        .keep = (int)pa_arg_int(args, "keep"),
        .overlap = (int)pa_arg_int(args, "overlap"),
        .repeat = (int)pa_arg_int(args, "repeat"),
        .warmup = (int)pa_arg_int(args, "warmup"),
        .noise = pa_arg_double(args, "noise"),
        .seed = pa_arg_int(args, "seed"),
    };
}

/* The constraints of MADbench's decomposition, one sentence each (app_madbench.py says the
 * same). */
static void check_decomposition(setup *s, const pa_world *world)
{
    int np = world->size;
    s->q = (int)lround(sqrt((double)np));
    pa_comm_require(world, s->q * s->q == np,
                    "np=%d is not a perfect square: MADbench's process grid is square (np = 1, "
                    "4, 9, 16, ...)",
                    np);
    pa_comm_require(world, np % s->ngang == 0,
                    "ngang=%d does not divide np=%d: every gang has np/ngang ranks", s->ngang, np);
    pa_comm_require(world, s->nbin % s->ngang == 0,
                    "ngang=%d does not divide nbin=%d: every gang takes nbin/ngang bins", s->ngang,
                    s->nbin);
    pa_gang_shape(np / s->ngang, &s->gang_rows, &s->gang_cols);
    int widest = s->ngang > 1 && s->gang_cols > s->q ? s->gang_cols : s->q;
    pa_comm_require(world, (long long)s->npix >= (long long)s->bsize * widest,
                    "npix=%d is below bsize x %d = %lld: every row and column of the %dx%d %s "
                    "grid must hold at least one block",
                    s->npix, widest, (long long)s->bsize * widest,
                    widest == s->q ? s->q : s->gang_rows, widest == s->q ? s->q : s->gang_cols,
                    widest == s->q ? "process" : "gang");
}

/* dir=DIR must be a writable folder; without it rank 0 makes a fresh one. Every rank learns it. */
static void choose_dir(setup *s, const pa_args *args, const pa_world *world)
{
    char sentence[4400] = "";
    int ok = 1;
    if (world->rank == 0) {
        const char *given = pa_arg_text(args, "dir");
        struct stat info;
        if (*given) {
            snprintf(s->dir, sizeof s->dir, "%s", given);
            if (stat(given, &info) != 0 || !S_ISDIR(info.st_mode))
                ok = 0, snprintf(sentence, sizeof sentence, "dir=%s is not a folder", given);
            else if (access(given, W_OK | X_OK) != 0)
                ok = 0, snprintf(sentence, sizeof sentence, "dir=%s is not writable: %s", given,
                                 strerror(errno));
        } else {
            const char *tmp = getenv("TMPDIR");
            snprintf(s->dir, sizeof s->dir, "%s/pa-madbench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
            s->fresh_dir = 1;
            if (!mkdtemp(s->dir))
                ok = 0, snprintf(sentence, sizeof sentence,
                                 "cannot make a folder %s: %s (set "
                                 "TMPDIR or give dir=)",
                                 s->dir, strerror(errno));
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    pa_comm_require(world, ok, "%s", sentence);
    MPI_Bcast(s->dir, (int)sizeof s->dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(&s->fresh_dir, 1, MPI_INT, 0, MPI_COMM_WORLD);
}

static void clean_dir(const setup *s, pa_io *io, const pa_world *world)
{
    if (s->keep)
        return;
    pa_matrix_file_remove(io, "dSdC");
    pa_matrix_file_remove(io, "W");
    MPI_Barrier(MPI_COMM_WORLD);
    if (s->fresh_dir && world->rank == 0)
        rmdir(s->dir);
}

/* -- measurements ------------------------------------------------------------------------------ */

typedef struct {
    int count;
    double *phase_s[PA_PHASES], *io_wait_s[PA_PHASES], *total_s, *dgemm_flops_per_s;
    pa_dgemm_rate dgemm; /* the last one */
} samples;

/* The DGEMM order: the local rows of process row 0 (the most any row holds), a multiple of
 * bsize. */
static int dgemm_order(const setup *s)
{
    int blocks = (s->npix + s->bsize - 1) / s->bsize;
    int mine = (blocks + s->q - 1) / s->q; /* blocks of process row 0 */
    return mine * s->bsize;
}

static void measure_dgemm(const setup *s, const pa_world *world, samples *out, int r)
{
    int failed = 0;
    if (world->rank == 0) {
        failed = pa_dgemm_measure(&out->dgemm, dgemm_order(s), PA_DGEMM_SECONDS);
        if (!failed && !(out->dgemm.worst_error <= 1e-12))
            pa_comm_wrong("cblas_dgemm is wrong: max |C - A B| / n = %.3g", out->dgemm.worst_error);
    }
    pa_comm_join(MPI_COMM_WORLD); /* the other ranks sleep meanwhile */
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    pa_comm_require(world, !failed, "out of memory for the DGEMM reference of order %d",
                    dgemm_order(s));
    if (r >= 0)
        out->dgemm_flops_per_s[r] = out->dgemm.flops_per_s;
}

static void run_all(const setup *s, const pa_world *world, pa_pipeline *p, samples *out)
{
    out->count = s->repeat;
    for (int k = 0; k < PA_PHASES; k++) {
        out->phase_s[k] = pa_calloc((size_t)s->repeat, sizeof(double), "phase_s");
        out->io_wait_s[k] = pa_calloc((size_t)s->repeat, sizeof(double), "io_wait_s");
    }
    out->total_s = pa_calloc((size_t)s->repeat, sizeof(double), "total_s");
    out->dgemm_flops_per_s = pa_calloc((size_t)s->repeat, sizeof(double), "dgemm_flops_per_s");
    for (int r = -s->warmup; r < s->repeat; r++) {
        measure_dgemm(s, world, out, r);
        double total = 0;
        for (int k = 0; k < PA_PHASES; k++) {
            double seconds = pa_pipeline_phase(p, k);
            total += seconds;
            if (r >= 0) {
                out->phase_s[k][r] = seconds;
                out->io_wait_s[k][r] = p->io_wait_s[k];
            }
        }
        if (r >= 0)
            out->total_s[r] = total;
    }
}

/* Every byte counted by the processes equals what the pipeline moves: B n^2 8 per pass. */
static void check_bytes(const setup *s, const pa_pipeline *p)
{
    double pass = (double)s->nbin * s->npix * (double)s->npix * sizeof(double);
    const double read[PA_PHASES] = {0, pass, pass, pass}, written[PA_PHASES] = {pass, 0, pass, 0};
    for (int k = 0; k < PA_PHASES; k++)
        if (p->bytes_read[k] != read[k] || p->bytes_written[k] != written[k])
            pa_comm_wrong_everywhere(
                "phase %s moved %.0f bytes in and %.0f out instead of %.0f and %.0f",
                pa_phase_names[k], p->bytes_read[k], p->bytes_written[k], read[k], written[k]);
}

/* -- the document ------------------------------------------------------------------------------ */

/* Samples: per phase its time, its I/O wait, flop rate and percentage of the DGEMM reference of
 * np ranks; the whole pipeline's time; rank 0's DGEMM rate. */
static void write_samples(pa_json *json, const pa_pipeline *p, const samples *in, int np)
{
    enum {
        metrics_count = 4 * PA_PHASES + 2
    };
    pa_metric metrics[metrics_count];
    char names[metrics_count][48];
    double *owned[metrics_count] = {0};
    int m = 0;
    for (int k = 0; k < PA_PHASES; k++, m++) {
        snprintf(names[m], sizeof names[m], "%s_s", pa_phase_names[k]);
        metrics[m] = (pa_metric){names[m], "s", in->phase_s[k], in->count};
    }
    for (int k = 0; k < PA_PHASES; k++, m++) {
        snprintf(names[m], sizeof names[m], "%s_io_wait_s", pa_phase_names[k]);
        metrics[m] = (pa_metric){names[m], "s", in->io_wait_s[k], in->count};
    }
    metrics[m++] = (pa_metric){"total_s", "s", in->total_s, in->count};
    metrics[m++] = (pa_metric){"dgemm_flops_per_s", "flop/s", in->dgemm_flops_per_s, in->count};
    for (int k = 0; k < PA_PHASES; k++) {
        double flops = pa_pipeline_flops(p, k);
        double *rate = owned[m] = pa_calloc((size_t)in->count, sizeof(double), "rate");
        double *percent = owned[m + 1] = pa_calloc((size_t)in->count, sizeof(double), "percent");
        for (int r = 0; r < in->count; r++) {
            rate[r] = flops / in->phase_s[k][r];
            percent[r] = 100.0 * rate[r] / (np * in->dgemm_flops_per_s[r]);
        }
        snprintf(names[m], sizeof names[m], "%s_flops_per_s", pa_phase_names[k]);
        metrics[m] = (pa_metric){names[m], "flop/s", rate, in->count};
        m++;
        snprintf(names[m], sizeof names[m], "%s_percent_of_dgemm", pa_phase_names[k]);
        metrics[m] = (pa_metric){names[m], "%", percent, in->count};
        m++;
    }
    pa_comm_doc_samples(json, metrics, m, in->total_s, in->count);
    for (int k = 0; k < m; k++)
        free(owned[k]);
}

static void key_phases(pa_json *json, const char *key, const double *values)
{
    pa_json_key(json, key);
    pa_json_begin_object(json);
    for (int k = 0; k < PA_PHASES; k++)
        pa_json_key_double(json, pa_phase_names[k], values[k]);
    pa_json_end_object(json);
}

static void key_strings(pa_json *json, const char *key, const char *const *texts)
{
    pa_json_key(json, key);
    pa_json_begin_object(json);
    for (int k = 0; k < PA_PHASES; k++)
        pa_json_key_string(json, pa_phase_names[k], texts[k]);
    pa_json_end_object(json);
}

static void write_decomposition(pa_json *json, const setup *s)
{
    pa_json_key(json, "grid");
    pa_json_begin_object(json);
    pa_json_key_int(json, "rows", s->q);
    pa_json_key_int(json, "cols", s->q);
    pa_json_key_int(json, "block", s->bsize);
    pa_json_key_string(json, "order", "row-major: the rank at row i, column j is i q + j");
    pa_json_end_object(json);
    pa_json_key_int(json, "gangs", s->ngang);
    pa_json_key_int(json, "bins_per_gang", s->nbin / s->ngang);
    pa_json_key(json, "gang_grid");
    pa_json_begin_object(json);
    pa_json_key_int(json, "rows", s->ngang > 1 ? s->gang_rows : s->q);
    pa_json_key_int(json, "cols", s->ngang > 1 ? s->gang_cols : s->q);
    pa_json_key_string(json, "rule",
                       "gang g is world ranks g np/ngang .. (g + 1) np/ngang - 1 on the most "
                       "nearly square rows x cols grid (rows <= cols), row-major; bins g "
                       "nbin/ngang .. (g + 1) nbin/ngang - 1");
    pa_json_end_object(json);
}

static void write_model(pa_json *json, const setup *s, const pa_sky *sky)
{
    pa_json_key(json, "multipoles");
    pa_json_begin_object(json);
    pa_json_key_int(json, "first", pa_sky_first_multipole(sky, 0));
    pa_json_key_int(json, "last", pa_sky_last_multipole(sky));
    pa_json_key_int(json, "per_bin", s->lbin);
    pa_json_end_object(json);
    pa_json_key(json, "fiducial_spectrum");
    pa_json_double_array(json, sky->spectrum, s->nbin);
    pa_json_key_string(json, "fiducial_spectrum_definition",
                       "C_b = 4 pi / (l_b (l_b + 1)), l_b the first multipole of bin b");
    pa_json_key_string(json, "dSdC_definition",
                       "(dS/dC_b)_ij = sum over l in bin b of (2l + 1) / (4 pi) P_l(cos theta_ij)");
    pa_json_key_double(json, "noise_variance", s->noise);
    pa_json_key_string(json, "generator",
                       "splitmix64 from seed; double = (x >> 11) 2^-53; pixel i: z = 2u - 1, "
                       "phi = 2 pi v; then d_i = 2w - 1");
}

static void write_costs(pa_json *json, const setup *s, const pa_pipeline *p, const samples *in)
{
    double flops[PA_PHASES];
    for (int k = 0; k < PA_PHASES; k++)
        flops[k] = pa_pipeline_flops(p, k);
    key_phases(json, "flops", flops);
    static const char *const formulas[PA_PHASES] = {
        "npix^2 (5 + 3 (lmax - 1) + 2 nbin lbin): cos theta, Legendre steps, accumulation",
        "2 nbin npix^2 + npix^3/3 (pdpotrf) + 2 npix^3/3 (pdpotri)",
        "2 nbin npix^3 (pdgemm per bin)",
        "2 npix^2 + nbin (3 npix^2 + npix) + nbin (nbin + 1) npix^2",
    };
    key_strings(json, "flops_definition", formulas);
    /* The W phase on the roofline (Williams, Waterman & Patterson, CACM 2009): per bin one
     * pdgemm W_b = D^-1 dS/dC_b of order npix, 2 npix^3 flops; its compulsory memory traffic
     * reads the two factors and writes the product once (beta = 0: C is not read), 3 x 8 npix^2
     * bytes, write-allocate not counted as in mem.bandwidth. */
    double npix = s->npix;
    pa_json_key(json, "roofline");
    pa_json_begin_object(json);
    pa_json_key_string(json, "phase", "W");
    pa_json_key_double(json, "flops", flops[PA_W]);
    pa_json_key_double(json, "bytes", 24.0 * s->nbin * npix * npix);
    pa_json_key_string(json, "bytes_model",
                       "per repetition, all ranks: 8 npix^2 B of D^-1 and of dS/dC_b read, 8 "
                       "npix^2 B of W_b written, per bin (compulsory traffic of each pdgemm); "
                       "write-allocate and the file I/O not counted");
    pa_json_end_object(json);
    pa_json_key_bool(json, "w_io_overlapped",
                     p->overlap && p->ngang == 1 && s->nbin >= 3 &&
                         pa_matrix_file_can_overlap(p->io));
    key_phases(json, "bytes_read", p->bytes_read);
    key_phases(json, "bytes_written", p->bytes_written);
    pa_json_key_string(json, "bytes_definition", "per repetition, all ranks together");
    pa_json_key(json, "dgemm");
    pa_json_begin_object(json);
    pa_json_key_int(json, "n", in->dgemm.n);
    pa_json_key_int(json, "calls_per_sample", in->dgemm.calls);
    pa_json_key_double(json, "worst_error", in->dgemm.worst_error);
    pa_json_key_string(json, "definition",
                       "cblas_dgemm C = A B of order n (a process's local rows rounded up to a "
                       "multiple of bsize) on rank 0 alone, the other ranks asleep, before each "
                       "repetition");
    pa_json_end_object(json);
    pa_json_key_string(json, "percent_of_dgemm_definition",
                       "100 x phase flops / phase time / (np x rank 0's DGEMM rate of the same "
                       "repetition); with more ranks than cores the reference overstates the peak");
    pa_json_key_string(json, "time_definition",
                       "from a barrier of all ranks to the end of the slowest rank");
    pa_json_key_string(json, "io_wait_definition",
                       "<phase>_io_wait_s: the most time any rank spent blocked on its file reads "
                       "and writes in the phase (token waits included; with overlap=1, only what "
                       "the pdgemms did not hide)");
    double share = (double)s->npix * s->npix / (s->q * s->q) * sizeof(double);
    pa_json_key_double(json, "memory_bytes_per_rank",
                       (6.0 + s->nbin + (s->ngang > 1 ? 3.0 * s->ngang : 0.0)) * share);
    pa_json_key_string(json, "memory_definition",
                       "(6 + nbin) shares of npix^2/np doubles per rank (D^-1, dS/dC_b, W_b, the "
                       "Legendre recursion's 3, every W_b in dLdC), plus 3 gang matrices of "
                       "ngang npix^2/np doubles when ngang > 1");
}

static void write_io(pa_json *json, const setup *s, const pa_io *io)
{
    pa_json_key(json, "io");
    pa_json_begin_object(json);
    pa_json_key_string(json, "mode", s->shared ? "shared" : "files");
    pa_json_key_string(json, "method",
                       s->shared ? "one file per matrix kind, MPI-IO "
                                   "(darray views, independent write_at/read_at)"
                                 : "one file per rank and matrix kind, POSIX "
                                   "pwrite/pread");
    pa_json_key_string(json, "dir", s->dir);
    pa_json_key_bool(json, "fresh_dir", s->fresh_dir);
    pa_json_key_bool(json, "kept", s->keep);
    pa_json_key_int(json, "readers_at_once", io->readers);
    pa_json_key_int(json, "writers_at_once", io->writers);
    pa_json_key_string(json, "throttle",
                       "k = max(1, np / mod) token chains: rank r waits for a token from r - k, "
                       "does its I/O, passes the token to r + k");
    pa_json_end_object(json);
}

static void write_results(pa_json *json, const setup *s, const pa_pipeline *p)
{
    pa_json_key_double(json, "invD_trace", p->inverse_trace);
    pa_json_key_double(json, "invD_checksum", p->inverse_checksum);
    pa_json_key_string(json, "invD_checksum_definition", "the sum of all elements of D^-1");
    pa_json_key(json, "trace_W");
    pa_json_double_array(json, p->traces, s->nbin);
    if (s->nbin <= PA_SMALL_NBIN) {
        pa_json_key(json, "dLdC");
        pa_json_double_array(json, p->likelihood, s->nbin);
        pa_json_key(json, "fisher");
        pa_json_begin_array(json);
        for (int b = 0; b < s->nbin; b++)
            pa_json_double_array(json, p->fisher + (size_t)b * s->nbin, s->nbin);
        pa_json_end_array(json);
        pa_json_key(json, "spectrum_correction");
        pa_json_double_array(json, p->correction, s->nbin);
    }
    pa_json_key_string(json, "results_definition",
                       "dLdC_b = 1/2 (d^T W_b D^-1 d - tr W_b), fisher_bb' = 1/2 tr(W_b W_b'), "
                       "spectrum_correction = fisher^-1 dLdC (given up to 64 bins)");
    pa_json_key(json, "checks");
    pa_json_begin_object(json);
    pa_json_key_double(json, "inverse_error", p->inverse_error);
    pa_json_key_double(json, "trace_identity_error", p->trace_identity_error);
    pa_json_key_double(json, "likelihood_identity_error", p->likelihood_identity_error);
    pa_json_key_string(json, "definition",
                       "max|D^-1 (D d) - d| / max|d|; |sum_b C_b tr W_b + noise tr D^-1 - npix| "
                       "/ npix; |sum_b C_b dLdC_b - 1/2 (d.z - noise z.z - npix + noise tr "
                       "D^-1)| / (sum of the magnitudes), z = D^-1 d; each below 1e-8");
    pa_json_end_object(json);
}

static int write_document(const pa_args *args, const setup *s, const pa_world *world,
                          const pa_io *io, const pa_pipeline *p, const samples *in)
{
    pa_json json;
    pa_json_init(&json, pa_args_output(args));
    pa_comm_doc_begin(&json, "app.madbench", args, world);
    int *ranks = pa_alloc((size_t)world->size, sizeof(int), "ranks");
    for (int r = 0; r < world->size; r++)
        ranks[r] = r;
    pa_comm_doc_context(&json, world, ranks, world->size);
    free(ranks);
    write_samples(&json, p, in, world->size);
    pa_json_key(&json, "derived");
    pa_json_begin_object(&json);
    write_decomposition(&json, s);
    write_model(&json, s, p->sky);
    write_costs(&json, s, p, in);
    write_io(&json, s, io);
    write_results(&json, s, p);
    pa_json_key_int(&json, "repetitions", s->repeat);
    pa_json_key_int(&json, "warmup_runs", s->warmup);
    pa_json_key(&json, "blas");
    if (openblas_get_config)
        pa_json_string(&json, openblas_get_config());
    else
        pa_json_null(&json);
    pa_json_key_int(&json, "blas_threads", 1);
    pa_json_key_bool(&json, "verified", 1);
    pa_json_end_object(&json);
    pa_result_end(&json);
    return pa_json_finish(&json);
}

/* -- main -------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-madbench",
                  "MADbench: out-of-core CMB power-spectrum estimation with ScaLAPACK", params,
                  sizeof params / sizeof *params, argc, argv);
    if (openblas_set_num_threads)
        openblas_set_num_threads(1); /* one core per rank: the ranks are the parallelism */
    pa_world world;
    pa_comm_start(&argc, &argv, &world);
    setup s;
    read_setup(&s, &args);
    check_decomposition(&s, &world);
    choose_dir(&s, &args, &world);

    pa_sky sky;
    int failed = pa_sky_create(&sky, s.npix, s.nbin, s.lbin, (uint64_t)s.seed);
    pa_io io;
    pa_io_init(&io, s.shared, s.dir, s.rmod, s.wmod);
    pa_pipeline pipeline;
    failed |= pa_pipeline_setup(&pipeline, &sky, &io, s.q, s.ngang, s.bsize, s.noise, s.overlap);
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    pa_comm_require(&world, !failed,
                    "out of memory for npix=%d and nbin=%d on %d ranks: use fewer pixels or bins, "
                    "or more ranks",
                    s.npix, s.nbin, world.size);

    samples measured = {0};
    run_all(&s, &world, &pipeline, &measured);
    check_bytes(&s, &pipeline);
    clean_dir(&s, &io, &world);
    int write_failed =
        world.rank == 0 && write_document(&args, &s, &world, &io, &pipeline, &measured);
    pa_pipeline_free(&pipeline);
    pa_io_free(&io);
    pa_sky_free(&sky);
    Cblacs_exit(1); /* BLACS lets go of its communicators; MPI stays for pa_comm_finish */
    return pa_comm_finish(&world, write_failed);
}
