/* The document of pa-spmv, and the efficiency models of the SCI-cluster study it checks.
 *
 * Per rank p (its rows, nnz_p nonzeros, of which remote_p have a column owned by another rank,
 * touching distinct_p distinct remote columns):
 *   f_p = remote_p / nnz_p                       fraction of nonzeros that touch a remote element
 *   r_p = remote_p / distinct_p                  reuse: accesses per distinct remote element
 *   t_l = local-only time per nonzero            (local: y = A x, local_transposed: y = A^T x,
 *                                                 one thread, x replicated, the rank's median)
 *   t_r = one remote access                      (a single-double MPI_Get, or MPI_Accumulate,
 *                                                 + MPI_Win_flush to the next rank; its median)
 *   E1 = t_l / (t_l + f t_r)                     element-wise (equation 1: time per nonzero
 *                                                 (1 - f) t_l + f (t_l + t_r))
 *   E2 = t_l / (t_l + f t_r / r)                 replication (equation 2: each remote element
 *                                                 fetched once and reused r times)
 * read_element and write_element are predicted by E1, read_replicate and write_combine by E2
 * (t_r of a get for the reads, of an accumulate for the writes); read_shared has no model (its
 * remote accesses are loads). Measured efficiency = t_l / (the variant's time per nonzero) =
 * (local median) / (variant median) on the same rank. For the whole product the slowest rank
 * decides: predicted = max_p T_local,p / max_p (T_local,p + remote_p t_r,p) for E1 (distinct_p
 * in place of remote_p for E2), measured = max_p T_local,p / max_p T_variant,p.
 *
 * Roofline of the node-level CSR kernel, bytes per product (write-allocate not counted, as in
 * mem.bandwidth): 8 B value + 4 B column index per nonzero, 8 B of y + 4 B row pointer per row
 * (rows + 1 row pointers per rank), and x between 8 B per distinct column a rank touches (perfect
 * reuse: bytes_min) and 8 B per nonzero (no reuse: bytes_max); 2 flops per nonzero. On one rank
 * touching every column, bytes_min = 12 nnz + 8 (2n) + 4 (n + 1): the compulsory traffic of
 * Williams et al., "Optimization of sparse matrix-vector multiplication on emerging multicore
 * platforms", SC07. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "outcome.h"
#include "result.h"

static const pa_outcome *find(const pa_spmv_result *r, const char *name)
{
    for (int v = 0; v < r->nvariants; v++)
        if (!strcmp(r->variants[v].name, name))
            return &r->variants[v];
    return NULL;
}

static double slowest_median(const pa_outcome *o, int np)
{
    double slowest = 0;
    for (int p = 0; p < np; p++)
        slowest = fmax(slowest, o->median[p]);
    return slowest;
}

/* -- samples ---------------------------------------------------------------------------------- */

static void write_samples(pa_json *json, const pa_spmv_result *r)
{
    const pa_partition *part = r->partition;
    int total = 0;
    for (int v = 0; v < r->nvariants; v++)
        total += r->variants[v].why ? 0 : r->variants[v].samples;
    const pa_outcome *probes[2] = {r->get, r->accumulate};
    for (int q = 0; q < 2; q++)
        total += probes[q]->why ? 0 : probes[q]->samples;
    double *seconds = pa_alloc((size_t)(total ? total : 1), sizeof(double), "seconds"), *values;
    int used = 0;
    pa_json_key(json, "samples");
    pa_json_begin_object(json);
    for (int v = 0; v < r->nvariants; v++) {
        const pa_outcome *o = &r->variants[v];
        if (o->why)
            continue;
        char name[64];
        if (!strcmp(o->name, "csr")) { /* node level: flop/s of the whole product */
            values = pa_alloc((size_t)o->samples, sizeof(double), "values");
            for (int i = 0; i < o->samples; i++)
                values[i] = 2.0 * (double)part->nnz / o->slowest[i];
            pa_json_key(json, "csr_flops_per_s");
            pa_json_double_array(json, values, o->samples);
            free(values);
        } else {
            snprintf(name, sizeof name, "%s_s", o->name);
            pa_json_key(json, name);
            pa_json_double_array(json, o->slowest, o->samples);
        }
        memcpy(seconds + used, o->sample_s, sizeof(double) * (size_t)o->samples);
        used += o->samples;
    }
    for (int q = 0; q < 2; q++) { /* rank-major: sample r * samples + i is rank r's sample i */
        const pa_outcome *o = probes[q];
        if (o->why)
            continue;
        size_t count = (size_t)part->np * (size_t)o->samples;
        values = pa_alloc(count, sizeof(double), "values");
        for (size_t i = 0; i < count; i++)
            values[i] = o->per_rank[i] * 1e9;
        pa_json_key(json, q ? "accumulate_latency_ns" : "get_latency_ns");
        pa_json_double_array(json, values, (int)count);
        free(values);
        memcpy(seconds + used, o->sample_s, sizeof(double) * (size_t)o->samples);
        used += o->samples;
    }
    pa_json_end_object(json);
    pa_json_key(json, "units");
    pa_json_begin_object(json);
    for (int v = 0; v < r->nvariants; v++) {
        const pa_outcome *o = &r->variants[v];
        char name[64];
        snprintf(name, sizeof name, "%s_s", o->name);
        if (!o->why)
            pa_json_key_string(json, !strcmp(o->name, "csr") ? "csr_flops_per_s" : name,
                               !strcmp(o->name, "csr") ? "flop/s" : "s");
    }
    for (int q = 0; q < 2; q++)
        if (!probes[q]->why)
            pa_json_key_string(json, q ? "accumulate_latency_ns" : "get_latency_ns", "ns");
    pa_json_end_object(json);
    pa_json_key(json, "sample_seconds"); /* each sample's batch, metric after metric */
    pa_json_double_array(json, seconds, used);
    free(seconds);
}

/* -- derived ---------------------------------------------------------------------------------- */

static void write_matrix_source(pa_json *json, const pa_matrix_source *s)
{
    pa_json_key(json, "matrix");
    pa_json_begin_object(json);
    if (s->path) {
        pa_json_key_string(json, "source", "file");
        pa_json_key_string(json, "path", s->path);
        pa_json_key_string(json, "field", s->file.field);
        pa_json_key_string(json, "symmetry", s->file.symmetry);
        pa_json_key_int(json, "file_entries", s->file.entries);
        pa_json_key_string(json, "expansion",
                           "a symmetric file's lower triangle is mirrored: both triangles are "
                           "multiplied; pattern entries are 1");
    } else {
        pa_json_key_string(json, "source", "generated");
        pa_json_key_string(json, "problem", s->problem);
        pa_json_key_int(json, "grid", s->grid);
        pa_json_key_string(json, "discretization",
                           !strcmp(s->problem, "elasticity3d")
                               ? "n^3 trilinear hexahedra of the unit cube, 3 dofs per node, "
                                 "2x2x2 Gauss quadrature, isotropic (E = 1, nu = 0.3), face "
                                 "x = 0 clamped"
                               : "finite-difference Laplacian, (2d+1)-point stencil, Dirichlet "
                                 "boundary eliminated, grid points numbered x fastest");
    }
    pa_json_key_string(json, "permutation", s->permutation);
    if (!strcmp(s->permutation, "random")) {
        pa_json_key_int(json, "seed", s->seed);
        pa_json_key_string(json, "permutation_definition",
                           "P A P^T: row and column i become pi(i), pi a Fisher-Yates shuffle "
                           "drawn from xorshift64* seeded by seed");
    }
    pa_json_end_object(json);
}

static void write_counts(pa_json *json, const char *key, const long long *values, int n)
{
    pa_json_key(json, key);
    pa_json_int_array(json, values, n);
}

static void write_doubles(pa_json *json, const char *key, const double *values, int n)
{
    pa_json_key(json, key);
    pa_json_double_array(json, values, n);
}

static double ratio(long long a, long long b) { return b ? (double)a / (double)b : NAN; }

static void write_partition(pa_json *json, const pa_partition *p)
{
    int np = p->np;
    double *f = pa_alloc((size_t)np, sizeof(double), "the per-rank f"),
           *reuse = pa_alloc((size_t)np, sizeof(double), "the per-rank reuse");
    long long remote = 0, distinct = 0;
    for (int q = 0; q < np; q++) {
        f[q] = p->nnz_of[q] ? (double)p->remote[q] / (double)p->nnz_of[q] : 0.0;
        reuse[q] = ratio(p->remote[q], p->distinct[q]);
        remote += p->remote[q];
        distinct += p->distinct[q];
    }
    pa_json_key(json, "partition");
    pa_json_begin_object(json);
    pa_json_key_string(json, "definition",
                       "contiguous row blocks: rank p owns rows floor(p n / np) .. "
                       "floor((p + 1) n / np) - 1 and the same entries of x and y");
    long long *first = pa_alloc(((size_t)np + 1), sizeof(long long), "first");
    for (int q = 0; q <= np; q++)
        first[q] = p->first_row[q];
    write_counts(json, "first_row", first, np + 1);
    free(first);
    write_counts(json, "rows", p->rows, np);
    write_counts(json, "nnz", p->nnz_of, np);
    write_counts(json, "remote_accesses", p->remote, np);
    write_counts(json, "distinct_remote", p->distinct, np);
    write_counts(json, "distinct_columns", p->touched, np);
    write_doubles(json, "f", f, np);
    write_doubles(json, "r", reuse, np);
    pa_json_end_object(json);
    pa_json_key_double(json, "f", p->nnz ? (double)remote / (double)p->nnz : 0.0);
    pa_json_key_double(json, "r", ratio(remote, distinct));
    pa_json_key_string(json, "f_definition",
                       "remote_accesses / nnz: the fraction of nonzeros whose column (x element "
                       "read, or y element written by A^T x) another rank owns");
    pa_json_key_string(json, "r_definition",
                       "remote_accesses / distinct_remote: accesses per distinct remote element "
                       "(null without remote elements); the whole-matrix f and r sum over ranks");
    free(f);
    free(reuse);
}

static void write_latency(pa_json *json, const char *key, const pa_outcome *o, int np)
{
    pa_json_key(json, key);
    pa_json_begin_object(json);
    pa_json_key_string(json, "definition",
                       !strcmp(o->name, "get")
                           ? "one MPI_Get of one double + MPI_Win_flush, every rank at once to "
                             "rank + 1 mod np (passive target, MPI_Win_lock_all)"
                           : "one MPI_Accumulate(MPI_SUM) of one double + MPI_Win_flush, every "
                             "rank at once to rank + 1 mod np; the sums are checked");
    if (o->why) {
        pa_json_key_string(json, "not_measurable", o->why);
    } else {
        double *ns = pa_alloc((size_t)np, sizeof(double), "ns");
        for (int p = 0; p < np; p++)
            ns[p] = o->median[p] * 1e9;
        write_doubles(json, "median_ns", ns, np);
        pa_json_key_int(json, "operations_per_sample", o->iterations);
        pa_json_key_int(json, "samples_taken", o->samples);
        free(ns);
    }
    pa_json_end_object(json);
}

/* t_r of a rank for a model: 0 when the rank has no remote access (whatever t_r is), NaN when
 * it has some but t_r could not be measured. */
static double access_time(const pa_outcome *probe, int p, long long accesses)
{
    if (accesses == 0)
        return 0.0;
    return probe->why ? NAN : probe->median[p];
}

static void write_variant(pa_json *json, const pa_spmv_result *r, const pa_outcome *o)
{
    const pa_variant *v = o->variant;
    const pa_partition *part = r->partition;
    int np = part->np;
    pa_json_key(json, o->name);
    pa_json_begin_object(json);
    pa_json_key_string(json, "operation", v->operation);
    pa_json_key_string(json, "definition", v->definition);
    if (o->why) {
        pa_json_key_string(json, "not_measurable", o->why);
        pa_json_end_object(json);
        return;
    }
    if (o->layout[0])
        pa_json_key_string(json, "layout", o->layout);
    const pa_outcome *local = find(r, v->transposed ? "local_transposed" : "local");
    const pa_outcome *probe = v->latency && !strcmp(v->latency, "get") ? r->get : r->accumulate;
    int elementwise = v->model && !strcmp(v->model, "E1");
    double *median_s = o->median, *per_nnz = pa_alloc((size_t)np, sizeof(double), "median_s");
    double *measured = pa_alloc((size_t)np, sizeof(double), "measured");
    double *predicted = pa_alloc((size_t)np, sizeof(double), "predicted");
    double slowest_predicted = 0;
    for (int p = 0; p < np; p++) {
        per_nnz[p] = median_s[p] / (double)part->nnz_of[p] * 1e9;
        measured[p] = local->median[p] / median_s[p];
        long long accesses = elementwise ? part->remote[p] : part->distinct[p];
        double t_r = access_time(probe, p, accesses);
        /* E1 = t_l / (t_l + f t_r), E2 = t_l / (t_l + f t_r / r), both times nnz_p */
        double predicted_s = local->median[p] + (double)accesses * t_r;
        predicted[p] = v->model ? local->median[p] / predicted_s : NAN;
        slowest_predicted = fmax(slowest_predicted, predicted_s);
    }
    double slowest_local = slowest_median(local, np), slowest = slowest_median(o, np);
    pa_json_key_string(json, "model", v->model ? v->model : "none");
    if (v->latency)
        pa_json_key_string(json, "t_r", v->latency);
    pa_json_key_string(json, "baseline", local->name);
    pa_json_key_double(json, "predicted_efficiency",
                       v->model ? slowest_local / slowest_predicted : NAN);
    pa_json_key_double(json, "measured_efficiency", slowest_local / slowest);
    pa_json_key_double(json, "slowest_rank_s", slowest);
    pa_json_key(json, "per_rank");
    pa_json_begin_object(json);
    write_doubles(json, "median_s", median_s, np);
    write_doubles(json, "ns_per_nonzero", per_nnz, np);
    write_doubles(json, "predicted_efficiency", predicted, np);
    write_doubles(json, "measured_efficiency", measured, np);
    write_counts(json, "remote_operations_per_product", o->remote_operations, np);
    pa_json_end_object(json);
    pa_json_key_double(json, "max_relative_error", o->max_error);
    pa_json_key_int(json, "products_per_sample", o->iterations);
    pa_json_key_int(json, "samples_taken", o->samples);
    pa_json_end_object(json);
    free(per_nnz);
    free(measured);
    free(predicted);
}

static void write_roofline(pa_json *json, const pa_spmv_result *r)
{
    const pa_partition *p = r->partition;
    const pa_outcome *csr = find(r, "csr");
    double bytes_min = 0, bytes_max = 0, flops = 2.0 * (double)p->nnz;
    for (int q = 0; q < p->np; q++) {
        double fixed = 12.0 * (double)p->nnz_of[q] + 12.0 * (double)p->rows[q] + 4.0;
        bytes_min += fixed + 8.0 * (double)p->touched[q];
        bytes_max += fixed + 8.0 * (double)p->nnz_of[q];
    }
    double seconds = pa_median(csr->slowest, csr->samples), rate = flops / seconds;
    pa_json_key(json, "csr");
    pa_json_begin_object(json);
    pa_json_key_int(json, "threads_per_rank", r->threads);
    pa_json_key_string(json, "schedule", "OpenMP static over rows, x replicated on each rank");
    pa_json_key_double(json, "flops_per_product", flops);
    pa_json_key_double(json, "median_flops_per_s", rate);
    pa_json_key_double(json, "max_relative_error", csr->max_error);
    pa_json_end_object(json);
    pa_json_key(json, "roofline");
    pa_json_begin_object(json);
    pa_json_key_string(json, "bytes_model",
                       "per product, summed over ranks: 8 B value + 4 B column index per "
                       "nonzero, 8 B y + 4 B row pointer per row (rows + 1 row pointers per rank), "
                       "and x between 8 B per distinct "
                       "column a rank touches (bytes_min, perfect reuse) and 8 B per nonzero "
                       "(bytes_max, no reuse); write-allocate not counted");
    pa_json_key_double(json, "bytes_min", bytes_min);
    pa_json_key_double(json, "bytes_max", bytes_max);
    pa_json_key_double(json, "intensity_max_flops_per_byte", flops / bytes_min);
    pa_json_key_double(json, "intensity_min_flops_per_byte", flops / bytes_max);
    pa_json_key_double(json, "attained_bandwidth_min_Bps", bytes_min / seconds);
    pa_json_key_double(json, "attained_bandwidth_max_Bps", bytes_max / seconds);
    if (r->bandwidth_Bps > 0) {
        double low = flops / bytes_max * r->bandwidth_Bps;
        double high = flops / bytes_min * r->bandwidth_Bps;
        pa_json_key_double(json, "bandwidth_Bps", r->bandwidth_Bps);
        pa_json_key_double(json, "bound_min_flops_per_s", low);
        pa_json_key_double(json, "bound_max_flops_per_s", high);
        pa_json_key_double(json, "fraction_of_bound_max", rate / high);
        pa_json_key_double(json, "fraction_of_bound_min", rate / low);
    } else {
        pa_json_key(json, "bandwidth_Bps");
        pa_json_null(json);
        pa_json_key_string(json, "bandwidth_missing",
                           "no memory bandwidth to compare with: measure one (perfatlas measure "
                           "mem.bandwidth op=triad bytes=1GiB threads=N) and perfatlas fills it "
                           "in, or give bandwidth=BYTES_PER_S");
    }
    pa_json_end_object(json);
}

static void write_vectors(pa_json *json, const pa_spmv_result *r)
{
    pa_json_key(json, "vectors");
    pa_json_begin_object(json);
    write_doubles(json, "x", r->x, r->partition->n);
    if (r->source->pi) {
        long long *pi = pa_alloc((size_t)r->partition->n, sizeof(long long), "the permutation");
        for (int i = 0; i < r->partition->n; i++)
            pi[i] = r->source->pi[i];
        write_counts(json, "permutation", pi, r->partition->n); /* row/column i became pi[i] */
        free(pi);
    }
    pa_json_key(json, "y");
    pa_json_begin_object(json);
    for (int v = 0; v < r->nvariants; v++)
        if (r->variants[v].y)
            write_doubles(json, r->variants[v].name, r->variants[v].y, r->partition->n);
    pa_json_end_object(json);
    pa_json_end_object(json);
}

static void write_derived(pa_json *json, const pa_spmv_result *r)
{
    const pa_partition *p = r->partition;
    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    write_matrix_source(json, r->source);
    pa_json_key_int(json, "n", p->n);
    pa_json_key_int(json, "nnz", p->nnz);
    pa_json_key_string(json, "x_definition", "x_j = 1 + (37 j mod 101) / 128, j from 0");
    write_partition(json, p);
    pa_json_key(json, "t_r");
    pa_json_begin_object(json);
    write_latency(json, "get", r->get, p->np);
    write_latency(json, "accumulate", r->accumulate, p->np);
    pa_json_end_object(json);
    pa_json_key(json, "models");
    pa_json_begin_object(json);
    pa_json_key_string(json, "E1",
                       "t_l / (t_l + f t_r): element-wise, time per nonzero "
                       "(1 - f) t_l + f (t_l + t_r)");
    pa_json_key_string(json, "E2",
                       "t_l / (t_l + f t_r / r): replication, each remote element "
                       "accessed once and reused r times");
    pa_json_key_string(json, "per_rank",
                       "t_l = the rank's local (or local_transposed) median / "
                       "its nnz; t_r = its median get (or accumulate) latency");
    pa_json_key_string(json, "whole_product",
                       "predicted = max_p T_local,p / max_p (T_local,p + remote_p t_r,p) (E1; "
                       "distinct_p for E2); measured = max_p T_local,p / max_p T_variant,p, "
                       "each T a rank's median own time per product (barriers excluded)");
    pa_json_end_object(json);
    pa_json_key(json, "variants");
    pa_json_begin_object(json);
    double worst = 0;
    for (int v = 0; v < r->nvariants; v++) {
        write_variant(json, r, &r->variants[v]);
        if (!r->variants[v].why)
            worst = fmax(worst, r->variants[v].max_error);
    }
    pa_json_end_object(json);
    write_roofline(json, r);
    pa_json_key_double(json, "max_relative_error", worst);
    pa_json_key_string(json, "error_definition",
                       "max_i |y_i - ref_i| / sum_j |a_ij x_j| against the product computed on "
                       "rank 0 from the whole matrix (CSC); every variant must stay within "
                       "error_limit");
    pa_json_key_double(json, "error_limit", r->error_limit);
    pa_json_key_string(json, "samples_definition",
                       "<variant>_s: seconds per product of the slowest rank, each rank timing "
                       "its own work (barriers between products excluded); csr_flops_per_s: "
                       "2 nnz over that time; *_latency_ns: rank-major, sample r * samples + i "
                       "is rank r's");
    if (r->x)
        write_vectors(json, r);
    pa_json_key_int(json, "processes", p->np);
    pa_json_key_int(json, "warmup_products", r->timing->warmup);
    pa_json_key_int(json, "samples_requested", r->timing->samples);
    pa_json_key_double(json, "time_limit_s", r->timing->time_limit);
    pa_json_key_bool(json, "verified", 1);
    pa_json_end_object(json);
}

int pa_spmv_write_document(const pa_spmv_result *r)
{
    pa_json json;
    pa_json_init(&json, pa_args_output(r->args));
    pa_comm_doc_begin(&json, "app.spmv", r->args, r->world);
    int *ranks = pa_alloc((size_t)r->world->size, sizeof(int), "ranks");
    for (int p = 0; p < r->world->size; p++)
        ranks[p] = p;
    pa_comm_doc_context(&json, r->world, ranks, r->world->size);
    free(ranks);
    write_samples(&json, r);
    write_derived(&json, r);
    pa_result_end(&json);
    return pa_json_finish(&json);
}
