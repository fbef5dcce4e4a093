/* pa-sweep: a Sweep3D-style discrete-ordinates transport sweep, the application proxy app.sweep.
 *
 * One energy group, isotropic scattering, an isotropic source uniform in a box centred in the
 * domain (by default the whole domain), vacuum boundaries, on a global grid of
 * (px it) x (py jt) x kt cells: each of the px x py processes holds it x jt x kt cells (weak
 * scaling: the global grid grows with np). Source iteration (solver.h) with diamond differencing
 * (block.h) and the equal-weight level-symmetric S_N set (quadrature.h); each sweep is a KBA
 * wavefront pipeline over the process grid in blocks of mk k-planes x mmi directions (kba.h).
 * The whole solve, from phi = 0, is repeated `repeat` times; each is timed from a common barrier
 * to the slowest rank and checked by particle balance (exit 3 above 1e-9). One
 * perfatlas.result/1 document, from rank 0. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "comm.h"
#include "result.h"
#include "solver.h"
#include "timer.h"

static const pa_param params[] = {
    {"it", PA_INT, "20", "cells in x of each process (global x: px it)", NULL, 1, 1e6},
    {"jt", PA_INT, "20", "cells in y of each process (global y: py jt)", NULL, 1, 1e6},
    {"kt", PA_INT, "20", "cells in z of each process (and of the global grid)", NULL, 1, 1e6},
    {"mmo", PA_INT, "6",
     "directions per octant: N(N+2)/8 of the level-symmetric S_N set (1, 3, 6, 10, 15, 21, 28, "
     "36 for N = 2 .. 16)",
     NULL, 1, PA_QUADRATURE_MAX_ANGLES},
    {"mk", PA_INT, "10", "k-planes per pipelined block (divides kt)", NULL, 1, 1e6},
    {"mmi", PA_INT, "3", "directions per pipelined block (divides mmo)", NULL, 1,
     PA_QUADRATURE_MAX_ANGLES},
    {"px", PA_INT, "0", "processes in x (0: from MPI_Dims_create, or np / py)", NULL, 0, 1e7},
    {"py", PA_INT, "0", "processes in y (0: from MPI_Dims_create, or np / px)", NULL, 0, 1e7},
    {"iterations", PA_INT, "10", "source iterations (the most, when tolerance is given)", NULL, 1,
     1e6},
    {"tolerance", PA_DOUBLE, "0",
     "stop once max|phi - phi_previous| <= tolerance x max phi (0: run every iteration)", NULL, 0,
     1},
    {"sigma_t", PA_DOUBLE, "1", "total macroscopic cross-section, 1/cm", NULL, 0, 1e300},
    {"c", PA_DOUBLE, "0.5", "scattering ratio: sigma_s = c sigma_t (isotropic)", NULL, 0, 1},
    {"q", PA_DOUBLE, "1", "isotropic fixed source in the source box, particles / (cm^3 s)", NULL,
     1e-300, 1e300},
    {"source_fraction", PA_DOUBLE, "1",
     "the source box: the central fraction of the domain along each axis (1: everywhere)", NULL,
     1e-9, 1},
    {"dx", PA_DOUBLE, "0.1", "cell size in x, cm", NULL, 1e-300, 1e300},
    {"dy", PA_DOUBLE, "0.1", "cell size in y, cm", NULL, 1e-300, 1e300},
    {"dz", PA_DOUBLE, "0.1", "cell size in z, cm", NULL, 1e-300, 1e300},
    {"fixup", PA_CHOICE, "none",
     "negative-flux fixup: none (plain diamond difference) or zero (negative outgoing fluxes set "
     "to zero, the cell rebalanced)",
     "none,zero", 0, 0},
    {"repeat", PA_INT, "5", "timed solves, each from phi = 0: one sample each", NULL, 1, 1e6},
    {"warmup", PA_INT, "1", "untimed solves before those", NULL, 0, 1e6},
    {"reference_grind_ns", PA_DOUBLE, "0",
     "grind time of np = 1 with the same subgrid, ns: adds parallel_efficiency samples (0: none)",
     NULL, 0, 1e300},
    {"flux_file", PA_STRING, "",
     "write the scalar flux of the global grid here: float64, native byte order, x fastest, then "
     "y, then z",
     NULL, 0, 0},
};

/* The particle balance of every sweep holds to rounding; this leaves room for the rounding of
 * sums over ~1e9 terms. */
#define PA_BALANCE_LIMIT 1e-9

/* -- set-up ------------------------------------------------------------------------------------ */

static void check_blocks(const pa_world *world, const pa_args *args)
{
    int mmo = (int)pa_arg_int(args, "mmo"), mmi = (int)pa_arg_int(args, "mmi");
    int kt = (int)pa_arg_int(args, "kt"), mk = (int)pa_arg_int(args, "mk");
    pa_comm_require(world, pa_quadrature_order(mmo) != 0,
                    "mmo=%d is not a level-symmetric angle count N(N+2)/8: give 1, 3, 6, 10, 15, "
                    "21, 28 or 36 (S_2 .. S_16)",
                    mmo);
    pa_comm_require(world, mmo % mmi == 0,
                    "mmi=%d does not divide mmo=%d: the directions of an octant must split into "
                    "whole blocks",
                    mmi, mmo);
    pa_comm_require(world, kt % mk == 0,
                    "mk=%d does not divide kt=%d: the k-planes must split into whole blocks", mk,
                    kt);
}

/* px x py = np: both given, one given (it must divide np), or neither (MPI_Dims_create, the
 * larger count in x). Returns whether MPI_Dims_create chose. */
static int process_grid(const pa_world *world, const pa_args *args, int *px, int *py)
{
    int np = world->size;
    *px = (int)pa_arg_int(args, "px");
    *py = (int)pa_arg_int(args, "py");
    if (*px && *py)
        pa_comm_require(world, (long)*px * *py == np,
                        "px=%d x py=%d = %ld processes, but np=%d: give px and py whose product "
                        "is the number of ranks",
                        *px, *py, (long)*px * *py, np);
    else if (*px || *py) {
        int given = *px ? *px : *py;
        pa_comm_require(world, np % given == 0,
                        "%s=%d does not divide np=%d: give px and py whose product is the number "
                        "of ranks",
                        *px ? "px" : "py", given, np);
        *(*px ? py : px) = np / given;
    } else {
        int dims[2] = {0, 0};
        MPI_Dims_create(np, 2, dims);
        *px = dims[0];
        *py = dims[1];
        return 1;
    }
    return 0;
}

static void setup(pa_solver *s, const pa_world *world, const pa_args *args, int px, int py)
{
    pa_kba *g = &s->grid;
    *g = (pa_kba){
        .comm = MPI_COMM_WORLD,
        .px = px,
        .py = py,
        .p = world->rank % px,
        .q = world->rank / px,
        .it = (int)pa_arg_int(args, "it"),
        .jt = (int)pa_arg_int(args, "jt"),
        .kt = (int)pa_arg_int(args, "kt"),
        .mk = (int)pa_arg_int(args, "mk"),
        .mmi = (int)pa_arg_int(args, "mmi"),
        .sigma_t = pa_arg_double(args, "sigma_t"),
        .dx = pa_arg_double(args, "dx"),
        .dy = pa_arg_double(args, "dy"),
        .dz = pa_arg_double(args, "dz"),
        .fixup = strcmp(pa_arg_text(args, "fixup"), "zero") == 0,
    };
    pa_quadrature_build(&s->quadrature, (int)pa_arg_int(args, "mmo"));
    s->sigma_s = pa_arg_double(args, "c") * g->sigma_t;
    s->q = pa_arg_double(args, "q");
    s->max_iterations = (int)pa_arg_int(args, "iterations");
    s->tolerance = pa_arg_double(args, "tolerance");
    int ok = pa_solver_alloc(s) == 0, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    pa_comm_require(world, all,
                    "out of memory for %d x %d x %d cells per process: give a smaller it, jt or "
                    "kt",
                    g->it, g->jt, g->kt);
    double fraction = pa_arg_double(args, "source_fraction");
    pa_comm_require(world, pa_solver_source_box(s, fraction) > 0,
                    "source_fraction=%g leaves no cell centre inside the source box: give a "
                    "larger fraction or a finer grid",
                    fraction);
}

/* -- the flux file ----------------------------------------------------------------------------- */

/* Gathers phi of every process to rank 0 and writes the global grid, x fastest. */
static void write_flux(const pa_solver *s, const pa_world *world, FILE *file, const char *path)
{
    const pa_kba *g = &s->grid;
    double *all = NULL;
    if (world->rank == 0) {
        all = pa_alloc((size_t)s->cells * (size_t)world->size, sizeof(double), "the gathered flux");
    }
    MPI_Gather(s->phi, (int)s->cells, MPI_DOUBLE, all, (int)s->cells, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    if (world->rank != 0)
        return;
    const long nx = (long)g->px * g->it, ny = (long)g->py * g->jt;
    double *grid = pa_alloc((size_t)(nx * ny * g->kt), sizeof(double), "the global flux grid");
    for (int r = 0; r < world->size; r++) {
        const double *local = all + (size_t)r * (size_t)s->cells;
        const long x0 = (long)(r % g->px) * g->it, y0 = (long)(r / g->px) * g->jt;
        for (long k = 0; k < g->kt; k++)
            for (long j = 0; j < g->jt; j++)
                memcpy(grid + (k * ny + y0 + j) * nx + x0, local + (k * g->jt + j) * g->it,
                       sizeof(double) * (size_t)g->it);
    }
    size_t count = (size_t)(nx * ny * g->kt);
    int failed = fwrite(grid, sizeof(double), count, file) != count;
    failed |= fclose(file) != 0;
    if (failed)
        pa_comm_wrong("cannot write the flux file %s: %s", path, strerror(errno));
    free(grid);
    free(all);
}

/* -- the document ------------------------------------------------------------------------------ */

typedef struct {
    int repeat;
    double *solve_s, *grind_ns, *efficiency; /* efficiency: NULL without a reference */
    pa_balance balance;
    int dims_created;
} outcome;

static void write_samples(pa_json *json, const outcome *o)
{
    pa_metric metrics[3] = {
        {"grind_time_ns", "ns", o->grind_ns, o->repeat},
        {"solve_s", "s", o->solve_s, o->repeat},
        {"parallel_efficiency", "1", o->efficiency, o->repeat},
    };
    pa_comm_doc_samples(json, metrics, o->efficiency ? 3 : 2, o->solve_s, o->repeat);
}

static void write_quadrature(pa_json *json, const pa_quadrature *quad)
{
    pa_json_key(json, "quadrature");
    pa_json_begin_object(json);
    pa_json_key_string(json, "set",
                       "level-symmetric S_N points, equal weights; mu_1 such that the mean cosine "
                       "over an octant is 1/2 (S_2: 1/sqrt(3))");
    pa_json_key_int(json, "order", quad->order);
    pa_json_key_int(json, "directions_per_octant", quad->per_octant);
    pa_json_key_int(json, "directions", 8 * quad->per_octant);
    pa_json_key(json, "cosine_levels");
    pa_json_double_array(json, quad->levels, quad->order / 2);
    pa_json_key_double(json, "weight", quad->weight);
    double sum = 0, first = 0;
    for (int m = 0; m < quad->per_octant; m++) {
        sum += 8 * quad->weight;
        first += 8 * quad->weight * quad->mu[m];
    }
    pa_json_key_double(json, "weight_sum", sum);
    pa_json_key_double(json, "mean_cosine_per_octant", first);
    pa_json_end_object(json);
}

/* The KBA pipeline model (kba.h): each process works through 8 Nb blocks (Nb = kt/mk x mmo/mmi
 * per octant). With unit time per block and free messages, the octant order of kba.c keeps every
 * process busy except while the wavefront fills: 2 (px - 1) + 3 (py - 1) steps over the whole
 * sweep (the first octant's px + py - 2, then one grid edge per change of corner: py - 1, px - 1,
 * py - 1; the z pair of a corner overlaps completely). Model efficiency = 8 Nb / steps.
 * Hoisie et al.'s sweep without overlap between octants: Nb / (Nb + px + py - 2). */
static void write_pipeline(pa_json *json, const pa_solver *s)
{
    const pa_kba *g = &s->grid;
    long kblocks = g->kt / g->mk, ablocks = s->quadrature.per_octant / g->mmi;
    long per_octant = kblocks * ablocks, work = 8 * per_octant;
    long fill = 2L * (g->px - 1) + 3L * (g->py - 1);
    pa_json_key_int(json, "px", g->px);
    pa_json_key_int(json, "py", g->py);
    pa_json_key_int(json, "pipeline_stages", g->px + g->py - 1);
    pa_json_key_double(json, "model_efficiency", (double)work / (double)(work + fill));
    pa_json_key(json, "pipeline");
    pa_json_begin_object(json);
    pa_json_key_int(json, "k_blocks", kblocks);
    pa_json_key_int(json, "angle_blocks", ablocks);
    pa_json_key_int(json, "blocks_per_octant", per_octant);
    pa_json_key_int(json, "work_steps", work);
    pa_json_key_int(json, "fill_steps", fill);
    pa_json_key_int(json, "steps", work + fill);
    pa_json_key_string(json, "steps_definition",
                       "unit time per block, free messages: 8 Nb + 2 (px - 1) + 3 (py - 1) for "
                       "the octant order below (each z pair of a corner overlapping completely)");
    pa_json_key(json, "octant_order");
    pa_json_begin_array(json);
    for (int o = 0; o < PA_OCTANTS; o++) {
        char name[8];
        snprintf(name, sizeof name, "%c%c%c", pa_octants[o][0] > 0 ? '+' : '-',
                 pa_octants[o][1] > 0 ? '+' : '-', pa_octants[o][2] > 0 ? '+' : '-');
        pa_json_string(json, name);
    }
    pa_json_end_array(json);
    pa_json_key_double(json, "model_efficiency_without_overlap",
                       (double)per_octant / (double)(per_octant + g->px + g->py - 2));
    pa_json_key_int(json, "message_bytes_x", 8L * g->mmi * g->mk * g->jt);
    pa_json_key_int(json, "message_bytes_y", 8L * g->mmi * g->mk * g->it);
    pa_json_end_object(json);
}

static void write_balance(pa_json *json, const pa_balance *b)
{
    static const char *faces[6] = {"x-", "x+", "y-", "y+", "z-", "z+"};
    pa_json_key(json, "balance");
    pa_json_begin_object(json);
    pa_json_key_string(json, "definition",
                       "the last sweep: source V sum (sigma_s phi_previous + q) = collision V "
                       "sigma_t sum phi + leakage (sum over boundary faces and directions of w "
                       "|cosine| area psi_out); particles / s");
    pa_json_key_double(json, "source", b->source);
    pa_json_key_double(json, "collision", b->collision);
    pa_json_key_double(json, "leakage", b->leakage);
    pa_json_key(json, "leakage_by_face");
    pa_json_begin_object(json);
    for (int f = 0; f < 6; f++)
        pa_json_key_double(json, faces[f], b->faces[f]);
    pa_json_end_object(json);
    pa_json_key_double(json, "relative_imbalance", b->imbalance);
    pa_json_key_double(json, "limit", PA_BALANCE_LIMIT);
    pa_json_end_object(json);
    pa_json_key(json, "physical_balance");
    pa_json_begin_object(json);
    pa_json_key_string(json, "definition",
                       "external source V N_q q (N_q: source cells) = absorption V sigma_a sum "
                       "phi + leakage; holds once the source iteration has converged");
    pa_json_key_double(json, "external_source", b->external);
    pa_json_key_double(json, "absorption", b->absorption);
    pa_json_key_double(json, "leakage", b->leakage);
    pa_json_key_double(json, "relative_imbalance", b->physical_imbalance);
    pa_json_end_object(json);
}

static void write_grid(pa_json *json, const pa_solver *s, const pa_world *world)
{
    const pa_kba *g = &s->grid;
    pa_json_key(json, "subgrid");
    pa_json_begin_array(json);
    pa_json_int(json, g->it), pa_json_int(json, g->jt), pa_json_int(json, g->kt);
    pa_json_end_array(json);
    pa_json_key(json, "global_grid");
    pa_json_begin_array(json);
    pa_json_int(json, (long long)g->px * g->it), pa_json_int(json, (long long)g->py * g->jt);
    pa_json_int(json, g->kt);
    pa_json_end_array(json);
    pa_json_key_int(json, "cells_per_process", s->cells);
    pa_json_key_int(json, "cells", s->cells * world->size);
    pa_json_key_int(json, "directions", 8L * s->quadrature.per_octant);
    pa_json_key_double(json, "cell_volume_cm3", g->dx * g->dy * g->dz);
    pa_json_key_int(json, "source_cells", s->source_cells);
}

/* Declared counts for the roofline (Williams, Waterman & Patterson, CACM 2009), per cell, direction
 * and iteration of the diamond-difference update in block.c (the set-to-zero fixup not counted):
 *   flops 13: psi = (s + cx in_x + cy in_y + cz in_z) / (sigma_t + cx + cy + cz) is 3 mul + 3 add
 *             + 1 mul (the reciprocal is per angle); out = 2 psi - in is 1 mul + 3 sub; phi +=
 *             w psi is 1 mul + 1 add.
 *   bytes     the cell arrays source (read) and phi (read and written), 24 B, with the face fluxes
 *             in cache: compulsory (bytes_min) once per cell and iteration, every direction then
 *             reusing them in cache; without reuse between directions (bytes_max) once per cell
 *             and direction. Write-allocate not counted, as in mem.bandwidth. */
enum {
    FLOPS_PER_CELL_ANGLE = 13,
    CELL_ARRAY_BYTES = 24
};

static void write_roofline(pa_json *json, const pa_solver *s, const pa_world *world)
{
    double cells = (double)s->cells * world->size, directions = 8.0 * s->quadrature.per_octant;
    double iterations = s->iterations;
    pa_json_key(json, "roofline");
    pa_json_begin_object(json);
    pa_json_key_int(json, "flops_per_cell_angle", FLOPS_PER_CELL_ANGLE);
    pa_json_key_double(json, "flops_per_solve",
                       FLOPS_PER_CELL_ANGLE * cells * directions * iterations);
    pa_json_key_double(json, "bytes_min", CELL_ARRAY_BYTES * cells * iterations);
    pa_json_key_double(json, "bytes_max", CELL_ARRAY_BYTES * cells * directions * iterations);
    pa_json_key_string(json, "flops_model",
                       "13 per cell, direction and iteration (diamond difference: psi 7, "
                       "outgoing fluxes 4, phi accumulation 2); the fixup's are not counted");
    pa_json_key_string(json, "bytes_model",
                       "per solve, all ranks: 8 B source read + 8 B phi read + 8 B phi written "
                       "per cell, once per iteration (bytes_min, compulsory: the directions "
                       "reuse them in cache) to once per direction (bytes_max, no reuse); face "
                       "fluxes in cache, write-allocate not counted");
    pa_json_end_object(json);
}

static void write_derived(pa_json *json, const pa_args *args, const pa_solver *s, const outcome *o,
                          const pa_world *world)
{
    const pa_balance *b = &o->balance;
    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    pa_json_key_string(json, "method",
                       "3-D one-group discrete ordinates, isotropic scattering, source "
                       "iteration, diamond difference, KBA wavefront over a px x py process "
                       "grid (Sweep3D)");
    pa_json_key_string(json, "fixup",
                       s->grid.fixup ? "set-to-zero: negative outgoing fluxes set to zero, the "
                                       "cell flux rebalanced"
                                     : "none: plain diamond difference");
    pa_json_key_string(json, "process_grid_source",
                       o->dims_created ? "MPI_Dims_create" : "given (px, py)");
    write_pipeline(json, s);
    write_grid(json, s, world);
    write_quadrature(json, &s->quadrature);
    pa_json_key_double(json, "sigma_s", s->sigma_s);
    pa_json_key_double(json, "sigma_a", s->grid.sigma_t - s->sigma_s);
    pa_json_key_int(json, "iterations", s->iterations);
    pa_json_key_bool(json, "converged",
                     s->tolerance > 0 && s->changes[s->iterations - 1] <= s->tolerance);
    pa_json_key(json, "relative_changes");
    pa_json_double_array(json, s->changes, s->iterations);
    pa_json_key_string(json, "grind_time_definition",
                       "solve time x np / (cells x directions x iterations) = solve time / "
                       "(cells_per_process x directions x iterations): ns per cell, direction "
                       "and iteration on each process; solve time from a common barrier to the "
                       "slowest rank");
    if (o->efficiency) {
        pa_json_key_double(json, "reference_grind_ns", pa_arg_double(args, "reference_grind_ns"));
        pa_json_key_string(json, "parallel_efficiency_definition",
                           "reference_grind_ns / grind_time_ns (weak scaling: the np = 1 grind "
                           "time of the same subgrid)");
    }
    pa_json_key_int(json, "repetitions", o->repeat);
    write_roofline(json, s, world);
    write_balance(json, b);
    pa_json_key(json, "flux");
    pa_json_begin_object(json);
    pa_json_key_double(json, "integral", b->flux_integral);
    pa_json_key_double(json, "mean",
                       b->flux_integral / (s->grid.dx * s->grid.dy * s->grid.dz) /
                           (double)(s->cells * world->size));
    pa_json_key_double(json, "min", b->flux_min);
    pa_json_key_double(json, "max", b->flux_max);
    pa_json_key_string(json, "units", "integral: particles cm / s; others: particles / (cm^2 s)");
    pa_json_end_object(json);
    pa_json_key_int(json, "negative_face_fluxes", b->negative);
    pa_json_key_int(json, "messages_per_iteration", b->messages);
    pa_json_key(json, "flux_file");
    if (*pa_arg_text(args, "flux_file"))
        pa_json_string(json, pa_arg_text(args, "flux_file"));
    else
        pa_json_null(json);
    pa_json_key_bool(json, "verified", 1);
    pa_json_end_object(json);
}

static int write_document(const pa_args *args, const pa_solver *s, const outcome *o,
                          const pa_world *world)
{
    pa_json json;
    pa_json_init(&json, pa_args_output(args));
    pa_comm_doc_begin(&json, "app.sweep", args, world);
    int *ranks = pa_alloc((size_t)world->size, sizeof(int), "ranks");
    for (int r = 0; r < world->size; r++)
        ranks[r] = r;
    pa_comm_doc_context(&json, world, ranks, world->size);
    free(ranks);
    write_samples(&json, o);
    write_derived(&json, args, s, o, world);
    pa_result_end(&json);
    return pa_json_finish(&json);
}

/* -- main -------------------------------------------------------------------------------------- */

/* One timed solve: from a common barrier to the slowest rank, s. */
static double timed_solve(pa_solver *s)
{
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t start = pa_ticks();
    pa_solver_run(s);
    double seconds = pa_ticks_to_seconds(pa_ticks() - start), slowest;
    MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static void verify(const pa_balance *b, int solve)
{
    if (!(b->imbalance <= PA_BALANCE_LIMIT))
        pa_comm_wrong("particle balance fails in solve %d (warm-up included): source %.17g, "
                      "collision %.17g, leakage %.17g, relative imbalance %.3g exceeds %.0g",
                      solve, b->source, b->collision, b->leakage, b->imbalance, PA_BALANCE_LIMIT);
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-sweep",
                  "Sweep3D-style discrete-ordinates transport sweep (KBA wavefront over MPI ranks)",
                  params, sizeof params / sizeof *params, argc, argv);
    pa_world world;
    pa_comm_start(&argc, &argv, &world);
    check_blocks(&world, &args);
    int px, py;
    outcome o = {.repeat = (int)pa_arg_int(&args, "repeat")};
    o.dims_created = process_grid(&world, &args, &px, &py);
    FILE *flux = pa_comm_open_output(&world, pa_arg_text(&args, "flux_file"), "the flux file");
    pa_solver s = {0};
    setup(&s, &world, &args, px, py);
    pa_comm_require(&world, !*pa_arg_text(&args, "flux_file") || s.cells <= INT_MAX,
                    "flux_file needs at most %d cells per process (MPI_Gather counts), not %ld",
                    INT_MAX, s.cells);

    o.solve_s = pa_calloc((size_t)o.repeat, sizeof(double), "solve_s");
    o.grind_ns = pa_calloc((size_t)o.repeat, sizeof(double), "grind_ns");
    double reference = pa_arg_double(&args, "reference_grind_ns");
    if (reference > 0)
        o.efficiency = pa_calloc((size_t)o.repeat, sizeof(double), "efficiency");
    const double per_process = (double)s.cells * 8.0 * s.quadrature.per_octant;
    for (int r = -(int)pa_arg_int(&args, "warmup"); r < o.repeat; r++) {
        double seconds = timed_solve(&s);
        pa_solver_balance(&s, &o.balance);
        verify(&o.balance, r + (int)pa_arg_int(&args, "warmup") + 1);
        if (r < 0)
            continue;
        o.solve_s[r] = seconds;
        o.grind_ns[r] = seconds * 1e9 / (per_process * s.iterations);
        if (o.efficiency)
            o.efficiency[r] = reference / o.grind_ns[r];
    }
    if (*pa_arg_text(&args, "flux_file"))
        write_flux(&s, &world, flux, pa_arg_text(&args, "flux_file"));
    int write_failed = world.rank == 0 && write_document(&args, &s, &o, &world);
    pa_solver_free(&s);
    return pa_comm_finish(&world, write_failed);
}
