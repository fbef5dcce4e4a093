#include "pipeline.h"
#include "alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "timer.h"

const char *const pa_phase_names[PA_PHASES] = {"dSdC", "invD", "W", "dLdC"};

/* Every check passes with this relative error; rounding leaves ~1e-13 on the sizes MADbench
 * runs (D is well conditioned: its eigenvalues lie between noise and noise + npix x signal). */
#define PA_CHECK_LIMIT 1e-8

static const int one = 1;

void pa_gang_shape(int processes, int *rows, int *cols)
{
    *rows = 1;
    for (int r = 1; r * r <= processes; r++)
        if (processes % r == 0)
            *rows = r;
    *cols = processes / *rows;
}

int pa_pipeline_setup(pa_pipeline *p, const pa_sky *sky, pa_io *io, int q, int ngang, int nb,
                      double noise, int overlap)
{
    *p = (pa_pipeline){.sky = sky, .io = io, .noise = noise, .ngang = ngang, .overlap = overlap};
    int n = sky->npix, nbin = sky->nbin, failed = 0;
    pa_grid_square(&p->world, q);
    failed |= pa_matrix_alloc(&p->inverse, &p->world, n, nb);
    failed |= pa_matrix_alloc(&p->s, &p->world, n, nb);
    failed |= pa_matrix_alloc(&p->w, &p->world, n, nb);
    if (ngang > 1) {
        int members = q * q / ngang, rows, cols;
        p->gang = io->rank / members;
        pa_gang_shape(members, &rows, &cols);
        /* every process takes part in making every gang's grid (Cblacs_gridmap is collective) */
        for (int g = 0; g < ngang; g++) {
            pa_grid grid;
            pa_grid_of_ranks(&grid, g * members, rows, cols, io->rank);
            if (g == p->gang)
                p->gang_grid = grid;
        }
        failed |= pa_matrix_alloc(&p->gang_inverse, &p->gang_grid, n, nb);
        failed |= pa_matrix_alloc(&p->gang_s, &p->gang_grid, n, nb);
        failed |= pa_matrix_alloc(&p->gang_w, &p->gang_grid, n, nb);
    }
    p->all_w = pa_calloc((size_t)nbin, sizeof *p->all_w, "all_w");
    failed |= !p->all_w;
    for (int b = 0; !failed && b < nbin; b++)
        failed |= pa_matrix_alloc(&p->all_w[b], &p->world, n, nb);
    failed |= pa_legendre_alloc(&p->legendre, sky, &p->s);
    p->vector = pa_alloc((size_t)n, sizeof(double), "vector");
    p->product = pa_alloc((size_t)n, sizeof(double), "product");
    p->traces = pa_calloc((size_t)nbin, sizeof(double), "traces");
    p->likelihood = pa_calloc((size_t)nbin, sizeof(double), "likelihood");
    p->fisher = pa_calloc((size_t)nbin * (size_t)nbin, sizeof(double), "fisher");
    p->correction = pa_calloc((size_t)nbin, sizeof(double), "correction");
    failed |=
        !p->vector || !p->product || !p->traces || !p->likelihood || !p->fisher || !p->correction;
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return failed ? -1 : 0;
}

void pa_pipeline_free(pa_pipeline *p)
{
    for (int b = 0; p->all_w && b < p->sky->nbin; b++)
        pa_matrix_free(&p->all_w[b]);
    free(p->all_w);
    pa_matrix_free(&p->inverse);
    pa_matrix_free(&p->s);
    pa_matrix_free(&p->w);
    pa_matrix_free(&p->gang_inverse);
    pa_matrix_free(&p->gang_s);
    pa_matrix_free(&p->gang_w);
    pa_legendre_free(&p->legendre);
    free(p->vector), free(p->product), free(p->traces), free(p->likelihood), free(p->fisher),
        free(p->correction);
    if (p->ngang > 1)
        pa_grid_free(&p->gang_grid);
    pa_grid_free(&p->world);
}

/* -- local pieces of distributed operations ---------------------------------------------------- */

#define FOR_EACH_LOCAL(m, il, jl, k)       \
    for (int jl = 0; jl < (m)->cols; jl++) \
        for (int il = 0, k = jl * (m)->rows; il < (m)->rows; il++, k++)

/* y = A x for a world-grid matrix A and x, y replicated on every process (MPI_Allreduce). */
static void replicated_product(const pa_block_matrix *a, const double *x, double *y)
{
    int n = a->n;
    memset(y, 0, sizeof(double) * (size_t)n);
    FOR_EACH_LOCAL(a, il, jl, k) { y[a->row_of[il]] += a->local[k] * x[a->col_of[jl]]; }
    MPI_Allreduce(MPI_IN_PLACE, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* This process's part of tr A. */
static double local_trace(const pa_block_matrix *a)
{
    double sum = 0;
    FOR_EACH_LOCAL(a, il, jl, k)
    {
        if (a->row_of[il] == a->col_of[jl])
            sum += a->local[k];
    }
    return sum;
}

/* This process's part of u^T A v. */
static double local_bilinear(const pa_block_matrix *a, const double *u, const double *v)
{
    double sum = 0;
    for (int jl = 0; jl < a->cols; jl++) {
        const double *column = a->local + (size_t)jl * (size_t)a->rows;
        double inner = 0;
        for (int il = 0; il < a->rows; il++)
            inner += u[a->row_of[il]] * column[il];
        sum += inner * v[a->col_of[jl]];
    }
    return sum;
}

static double local_dot(const pa_block_matrix *a, const pa_block_matrix *b)
{
    double sum = 0;
    size_t count = pa_matrix_local_count(a);
    for (size_t k = 0; k < count; k++)
        sum += a->local[k] * b->local[k];
    return sum;
}

static double world_sum(double value)
{
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return value;
}

/* to = from^T (pdtran). */
static void transpose(const pa_block_matrix *from, pa_block_matrix *to)
{
    const double alpha = 1.0, beta = 0.0;
    pdtran_(&from->n, &from->n, &alpha, from->local, &one, &one, from->desc, &beta, to->local, &one,
            &one, to->desc);
}

/* -- the phases -------------------------------------------------------------------------------- */

static void phase_dsdc(pa_pipeline *p)
{
    pa_matrix_file file;
    pa_legendre_begin(&p->legendre, &p->s);
    pa_matrix_file_open(&file, p->io, "dSdC", &p->s, 1);
    for (int b = 0; b < p->sky->nbin; b++) {
        pa_legendre_bin(&p->legendre, b, p->s.local);
        pa_matrix_file_write(&file, b, p->s.local);
    }
    pa_matrix_file_close(&file);
}

/* The upper triangle of a from its lower one (pdpotri leaves the upper one as it was). */
static void mirror_lower(pa_block_matrix *a, pa_block_matrix *scratch)
{
    transpose(a, scratch);
    FOR_EACH_LOCAL(a, il, jl, k)
    {
        if (a->row_of[il] < a->col_of[jl])
            a->local[k] = scratch->local[k];
    }
}

static void phase_invd(pa_pipeline *p)
{
    pa_block_matrix *d = &p->inverse;
    size_t count = pa_matrix_local_count(d);
    memset(d->local, 0, sizeof(double) * count);
    pa_matrix_file file;
    pa_matrix_file_open(&file, p->io, "dSdC", &p->s, 0);
    for (int b = 0; b < p->sky->nbin; b++) {
        pa_matrix_file_read(&file, b, p->s.local);
        double power = p->sky->spectrum[b];
        for (size_t k = 0; k < count; k++)
            d->local[k] += power * p->s.local[k];
    }
    pa_matrix_file_close(&file);
    FOR_EACH_LOCAL(d, il, jl, k)
    {
        if (d->row_of[il] == d->col_of[jl])
            d->local[k] += p->noise;
    }

    replicated_product(d, p->sky->data, p->product); /* D d, for the check */
    int info = 0;
    pdpotrf_("L", &d->n, d->local, &one, &one, d->desc, &info, 1);
    if (info != 0)
        pa_comm_wrong_everywhere("D is not positive definite: pdpotrf returned info=%d, yet D = "
                                 "sum_b C_b dS/dC_b + noise I with C_b > 0 must be",
                                 info);
    pdpotri_("L", &d->n, d->local, &one, &one, d->desc, &info, 1);
    if (info != 0)
        pa_comm_wrong_everywhere("pdpotri could not invert D: info=%d", info);
    mirror_lower(d, &p->w);

    replicated_product(d, p->product, p->vector); /* D^-1 (D d) */
    double worst = 0, largest = 0;
    for (int i = 0; i < d->n; i++) {
        worst = fmax(worst, fabs(p->vector[i] - p->sky->data[i]));
        largest = fmax(largest, fabs(p->sky->data[i]));
    }
    p->inverse_error = worst / largest;
    if (!(p->inverse_error <= PA_CHECK_LIMIT))
        pa_comm_wrong_everywhere(
            "D^-1 is wrong: max |D^-1 (D d) - d| / max |d| = %.3g exceeds %.0g", p->inverse_error,
            PA_CHECK_LIMIT);
    p->inverse_trace = world_sum(local_trace(d));
    double sum = 0;
    for (size_t k = 0; k < count; k++)
        sum += d->local[k];
    p->inverse_checksum = world_sum(sum);
}

static void multiply(const pa_block_matrix *a, const pa_block_matrix *b, pa_block_matrix *c)
{
    const double alpha = 1.0, beta = 0.0;
    pdgemm_("N", "N", &a->n, &a->n, &a->n, &alpha, a->local, &one, &one, a->desc, b->local, &one,
            &one, b->desc, &beta, c->local, &one, &one, c->desc);
}

/* Copies `world` into gang g's `gang` (to_gang), or back; every process calls it, those outside
 * gang g with a descriptor whose context is -1. */
static void remap(const pa_pipeline *p, int g, pa_block_matrix *world, pa_block_matrix *gang,
                  int to_gang)
{
    double outside_buffer = 0;
    int outside[PA_DESC_LEN] = {1, -1, world->n, world->n, world->nb, world->nb, 0, 0, 1};
    double *gang_local = g == p->gang ? gang->local : &outside_buffer;
    const int *gang_desc = g == p->gang ? gang->desc : outside;
    const int *context = &p->world.context;
    if (to_gang)
        pdgemr2d_(&world->n, &world->n, world->local, &one, &one, world->desc, gang_local, &one,
                  &one, gang_desc, context);
    else
        pdgemr2d_(&world->n, &world->n, gang_local, &one, &one, gang_desc, world->local, &one, &one,
                  world->desc, context);
}

/* The W phase with its I/O overlapped (ngang = 1): while pdgemm makes W_b, a helper thread
 * writes W_{b-1} and reads dS/dC_{b+1} (double buffering, as out-of-core codes hide their I/O
 * behind computation). The second buffers are two of dLdC's W_b matrices (same layout), unused
 * until dLdC reads every W_b back: no memory is added. The same products, bins and files as the
 * synchronous order; only the waiting goes. */
static void overlapped_w(pa_pipeline *p, pa_matrix_file *in, pa_matrix_file *out)
{
    int nbin = p->sky->nbin;
    pa_block_matrix *s[2] = {&p->s, &p->all_w[0]}, *w[2] = {&p->w, &p->all_w[1]};
    pa_matrix_file_read(in, 0, s[0]->local);
    for (int b = 0; b < nbin; b++) {
        pa_matrix_async async = {0};
        if (b > 0)
            async.jobs[async.count++] = (pa_matrix_job){out, b - 1, 1, w[(b - 1) % 2]->local};
        if (b + 1 < nbin)
            async.jobs[async.count++] = (pa_matrix_job){in, b + 1, 0, s[(b + 1) % 2]->local};
        pa_matrix_file_begin(&async);
        multiply(&p->inverse, s[b % 2], w[b % 2]);
        pa_matrix_file_end(&async);
    }
    pa_matrix_file_write(out, nbin - 1, w[(nbin - 1) % 2]->local);
}

static void phase_w(pa_pipeline *p)
{
    pa_matrix_file in, out;
    pa_matrix_file_open(&in, p->io, "dSdC", &p->s, 0);
    pa_matrix_file_open(&out, p->io, "W", &p->w, 1);
    int nbin = p->sky->nbin;
    if (p->ngang == 1 && p->overlap && nbin >= 3 && pa_matrix_file_can_overlap(p->io)) {
        overlapped_w(p, &in, &out);
    } else if (p->ngang == 1) {
        for (int b = 0; b < nbin; b++) {
            pa_matrix_file_read(&in, b, p->s.local);
            multiply(&p->inverse, &p->s, &p->w);
            pa_matrix_file_write(&out, b, p->w.local);
        }
    } else {
        int per_gang = nbin / p->ngang;
        for (int g = 0; g < p->ngang; g++)
            remap(p, g, &p->inverse, &p->gang_inverse, 1);
        for (int round = 0; round < per_gang; round++) {
            for (int g = 0; g < p->ngang; g++) { /* gang g takes bins g per_gang .. */
                pa_matrix_file_read(&in, g * per_gang + round, p->s.local);
                remap(p, g, &p->s, &p->gang_s, 1);
            }
            multiply(&p->gang_inverse, &p->gang_s, &p->gang_w); /* all gangs at once */
            for (int g = 0; g < p->ngang; g++) {
                remap(p, g, &p->w, &p->gang_w, 0);
                pa_matrix_file_write(&out, g * per_gang + round, p->w.local);
            }
        }
    }
    pa_matrix_file_close(&in);
    pa_matrix_file_close(&out);
}

static void check_identities(pa_pipeline *p, double data_dot_z, double z_dot_z)
{
    const pa_sky *sky = p->sky;
    double traces = p->noise * p->inverse_trace, likelihood = 0;
    for (int b = 0; b < sky->nbin; b++) {
        traces += sky->spectrum[b] * p->traces[b];
        likelihood += sky->spectrum[b] * p->likelihood[b];
    }
    p->trace_identity_error = fabs(traces - sky->npix) / sky->npix;
    double expected =
        0.5 * (data_dot_z - p->noise * z_dot_z - sky->npix + p->noise * p->inverse_trace);
    double scale = fabs(data_dot_z) + p->noise * z_dot_z + sky->npix + p->noise * p->inverse_trace;
    p->likelihood_identity_error = fabs(likelihood - expected) / scale;
    if (!(p->trace_identity_error <= PA_CHECK_LIMIT))
        pa_comm_wrong_everywhere("the W_b are wrong: sum_b C_b tr W_b + noise tr D^-1 = %.17g, "
                                 "not npix = %d",
                                 traces, sky->npix);
    if (!(p->likelihood_identity_error <= PA_CHECK_LIMIT))
        pa_comm_wrong_everywhere("dL/dC is wrong: sum_b C_b dL/dC_b = %.17g, but the identity "
                                 "gives %.17g",
                                 likelihood, expected);
}

/* dC = F^-1 dL/dC by Cholesky (F is a Gram matrix, so positive definite). */
static void solve_correction(pa_pipeline *p)
{
    int nbin = p->sky->nbin, nrhs = 1, info = 0;
    double *f = pa_alloc((size_t)nbin * (size_t)nbin, sizeof(double), "the Fisher matrix copy");
    memcpy(f, p->fisher, sizeof(double) * (size_t)nbin * (size_t)nbin);
    memcpy(p->correction, p->likelihood, sizeof(double) * (size_t)nbin);
    dposv_("L", &nbin, &nrhs, f, &nbin, p->correction, &nbin, &info, 1);
    free(f);
    if (info != 0)
        pa_comm_wrong_everywhere("the Fisher matrix is not positive definite (dposv info=%d): "
                                 "the bins' dS/dC_b are not independent on these pixels; use more "
                                 "pixels or fewer multipoles",
                                 info);
}

static void phase_dldc(pa_pipeline *p)
{
    const pa_sky *sky = p->sky;
    int nbin = sky->nbin;
    double *z = p->vector;
    replicated_product(&p->inverse, sky->data, z); /* z = D^-1 d */
    pa_matrix_file file;
    pa_matrix_file_open(&file, p->io, "W", &p->w, 0);
    for (int b = 0; b < nbin; b++)
        pa_matrix_file_read(&file, b, p->all_w[b].local);
    pa_matrix_file_close(&file);

    /* local parts: tr W_b, d^T W_b z, and the upper triangle of F; then one sum */
    size_t count = (size_t)nbin * (size_t)(nbin + 2);
    double *sums = pa_calloc(count, sizeof(double), "sums");
    double *fisher = sums + 2 * nbin;
    for (int b = 0; b < nbin; b++) {
        sums[b] = local_trace(&p->all_w[b]);
        sums[nbin + b] = local_bilinear(&p->all_w[b], sky->data, z);
        transpose(&p->all_w[b], &p->w);
        for (int c = b; c < nbin; c++)
            fisher[b + c * nbin] = 0.5 * local_dot(&p->w, &p->all_w[c]);
    }
    MPI_Allreduce(MPI_IN_PLACE, sums, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int b = 0; b < nbin; b++) {
        p->traces[b] = sums[b];
        p->likelihood[b] = 0.5 * (sums[nbin + b] - sums[b]);
        for (int c = b; c < nbin; c++)
            p->fisher[b + c * nbin] = p->fisher[c + b * nbin] = fisher[b + c * nbin];
    }
    free(sums);
    double data_dot_z = 0, z_dot_z = 0;
    for (int i = 0; i < sky->npix; i++) {
        data_dot_z += sky->data[i] * z[i];
        z_dot_z += z[i] * z[i];
    }
    check_identities(p, data_dot_z, z_dot_z);
    solve_correction(p);
}

double pa_pipeline_phase(pa_pipeline *p, int phase)
{
    static void (*const run[PA_PHASES])(pa_pipeline *) = {phase_dsdc, phase_invd, phase_w,
                                                          phase_dldc};
    p->io->bytes_read = p->io->bytes_written = p->io->wait_s = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t start = pa_ticks();
    MPI_Pcontrol(1, pa_phase_names[phase]);
    run[phase](p);
    MPI_Pcontrol(-1, pa_phase_names[phase]);
    double seconds = pa_ticks_to_seconds(pa_ticks() - start);
    double most[2] = {seconds, p->io->wait_s}, moved[2] = {p->io->bytes_read, p->io->bytes_written};
    MPI_Allreduce(MPI_IN_PLACE, most, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, moved, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    p->bytes_read[phase] = moved[0];
    p->bytes_written[phase] = moved[1];
    p->io_wait_s[phase] = most[1];
    return most[0];
}

/* Flops of each phase, n = npix, B = nbin (the usual counts of LAPACK Working Note 41):
 *   dSdC  pa_legendre_flops: n^2 (5 + 3 (lmax - 1) + 2 B lbin)
 *   invD  2 B n^2 (D += C_b dS/dC_b) + n^3/3 (pdpotrf) + 2 n^3/3 (pdpotri)
 *   W     2 B n^3 (pdgemm per bin)
 *   dLdC  2 n^2 (z = D^-1 d) + B (3 n^2 + n) (d^T W_b z, tr W_b) + B (B + 1) n^2 (F, one half)
 * The checks' matrix-vector products (2 n^2 each) are not counted. */
double pa_pipeline_flops(const pa_pipeline *p, int phase)
{
    double n = p->sky->npix, bins = p->sky->nbin;
    switch (phase) {
    case PA_DSDC:
        return pa_legendre_flops(p->sky);
    case PA_INVD:
        return 2.0 * bins * n * n + n * n * n;
    case PA_W:
        return 2.0 * bins * n * n * n;
    default:
        return 2.0 * n * n + bins * (3.0 * n * n + n) + bins * (bins + 1.0) * n * n;
    }
}
