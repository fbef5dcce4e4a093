/* pa-hydro: a SAGE-style Eulerian hydrodynamics proxy, the application proxy app.hydro.
 *
 * The compressible Euler equations of an ideal gas on an nx x ny x nz grid of cubic cells,
 * MUSCL-Hancock with an HLLC (or HLL) Riemann solver, directionally split (euler.h); cells
 * ordered in one dimension and cut into equal slabs of cells_per_pe cells, one per process, the
 * global grid growing in z with the process count (weak scaling, slab.h); a time-step reduction
 * per cycle and, with solver=cg, implicit heat conduction by conjugate gradients
 * (conduction.h). The whole run, from the initial state, is repeated `repeat` times; each is
 * timed from a common barrier to the slowest rank. Checked: conservation of mass, momentum and
 * energy on the periodic box (exit 3 above PA_CONSERVATION_LIMIT), the shock tubes against the
 * exact Riemann solution (L1 errors in the document), a state that stays physical (exit 3
 * naming the cycle and cell). One perfatlas.result/1 document, from rank 0. */
#include "hydro.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "threads.h"

static const pa_param params[] = {
    {"cells_per_pe", PA_INT, "13500", "cells of each process's slab (weak scaling)", NULL, 1, 1e9},
    {"nx", PA_INT, "30", "cells along x of the global grid", NULL, 1, 1e6},
    {"ny", PA_INT, "30", "cells along y of the global grid (nz = np cells_per_pe / (nx ny))", NULL,
     1, 1e6},
    {"problem", PA_CHOICE, "wave",
     "wave: a smooth periodic 3-D flow that steepens into shocks; sod: Sod's shock tube along "
     "`axis`; expansion: two rarefactions moving apart at +-speed (outflow boundaries)",
     "wave,sod,expansion", 0, 0},
    {"axis", PA_CHOICE, "x", "the shock tube's axis; the cell size is 1 / (cells along it)",
     "x,y,z", 0, 0},
    {"speed", PA_DOUBLE, "2", "problem=expansion: the speed of each half, away from the middle",
     NULL, 0, 1e6},
    {"pressure_ratio", PA_DOUBLE, "10",
     "problem=sod: left over right pressure (Sod's 10; larger makes a stronger shock)", NULL, 1,
     1e300},
    {"riemann", PA_CHOICE, "hllc", "Riemann solver: hllc (Toro et al. 1994) or hll", "hllc,hll", 0,
     0},
    {"solver", PA_CHOICE, "none",
     "none, or cg: implicit heat conduction each cycle by conjugate gradients", "none,cg", 0, 0},
    {"cfl", PA_DOUBLE, "0.5", "Courant number of each directional sweep", NULL, 0.001, 1},
    {"gamma", PA_DOUBLE, "1.4", "ratio of specific heats", NULL, 1.01, 5},
    {"cycles", PA_INT, "10", "cycles of each run (when end_time is 0)", NULL, 1, 1e8},
    {"end_time", PA_DOUBLE, "0", "run until this simulated time instead of `cycles` (0: cycles)",
     NULL, 0, 1e6},
    {"conductivity", PA_DOUBLE, "1",
     "solver=cg: heat diffusivity (kappa, box length 1 along "
     "`axis`)",
     NULL, 0, 1e12},
    {"cg_tolerance", PA_DOUBLE, "1e-8", "solver=cg: stop at ||r|| <= this x ||b||", NULL, 1e-15, 1},
    {"cg_iterations", PA_INT, "500", "solver=cg: most iterations per cycle", NULL, 1, 1e6},
    {"threads", PA_INT, "1", "OpenMP threads of each process", NULL, 1, 4096},
    {"repeat", PA_INT, "5", "timed runs, each from the initial state: one sample each", NULL, 1,
     1e6},
    {"warmup", PA_INT, "1", "untimed runs before those", NULL, 0, 1e6},
    {"state_file", PA_STRING, "",
     "write the final state of the global grid here: float64 (rho, rho u, rho v, rho w, E) per "
     "cell, native byte order, x fastest, then y, then z",
     NULL, 0, 0},
};

/* Peak bytes per owned cell while the slab is built and run: the ghost candidates (12 x 8 B,
 * freed before the fields), the neighbour table (12 x 4 B), U and W (2 x 40 B, ghosts aside),
 * the fluxes (40 B) and the conduction vectors (5 x 8 B). */
#define BYTES_PER_CELL (12 * 8 + 12 * 4 + 2 * 40 + 40 + 5 * 8)

static int choice(const pa_args *args, const char *name, const char *const *words)
{
    const char *text = pa_arg_text(args, name);
    int i = 0;
    while (strcmp(words[i], text) != 0)
        i++;
    return i;
}

/* The global grid and the checks only the process count can decide. */
static void setup(pa_hydro *hy, const pa_world *world, const pa_args *args)
{
    static const char *const problems[] = {"wave", "sod", "expansion"};
    static const char *const axes[] = {"x", "y", "z"};
    static const char *const riemann[] = {"hllc", "hll"};
    const long cells = pa_arg_int(args, "cells_per_pe");
    const long nx = pa_arg_int(args, "nx"), ny = pa_arg_int(args, "ny");
    pa_comm_require(world, cells >= PA_GHOST_WIDTH,
                    "cells_per_pe=%ld is fewer than the ghost width of %d cells: give at least %d",
                    cells, PA_GHOST_WIDTH, PA_GHOST_WIDTH);
    const long total = cells * world->size, plane = nx * ny;
    pa_comm_require(world, total % plane == 0,
                    "np=%d x cells_per_pe=%ld = %ld cells is not a whole number of nx x ny = %ld "
                    "x %ld planes: give cells_per_pe, nx and ny such that nx ny divides np "
                    "cells_per_pe",
                    world->size, cells, total, nx, ny);
    *hy = (pa_hydro){
        .gas = {.gamma = pa_arg_double(args, "gamma"),
                .riemann = choice(args, "riemann", riemann) ? PA_RIEMANN_HLL : PA_RIEMANN_HLLC},
        .problem = (pa_problem)choice(args, "problem", problems),
        .axis = choice(args, "axis", axes),
        .cfl = pa_arg_double(args, "cfl"),
        .end_time = pa_arg_double(args, "end_time"),
        .speed = pa_arg_double(args, "speed"),
        .pressure_ratio = pa_arg_double(args, "pressure_ratio"),
        .cycles = pa_arg_int(args, "cycles"),
        .cg = strcmp(pa_arg_text(args, "solver"), "cg") == 0,
        .conductivity = pa_arg_double(args, "conductivity"),
        .cg_tolerance = pa_arg_double(args, "cg_tolerance"),
        .cg_max_iterations = (int)pa_arg_int(args, "cg_iterations"),
    };
    const long n[3] = {nx, ny, total / plane};
    for (int a = 0; a < 3; a++)
        pa_comm_require(world, n[a] == 1 || n[a] >= 2 * PA_GHOST_WIDTH,
                        "the global grid has %ld cells along %s, fewer than the %d that a ghost "
                        "width of %d on each side needs (1 makes the axis flat): change nx, ny or "
                        "cells_per_pe",
                        n[a], axes[a], 2 * PA_GHOST_WIDTH, PA_GHOST_WIDTH);
    if (hy->problem != PA_PROBLEM_WAVE)
        pa_comm_require(world, n[hy->axis] > 1,
                        "the shock tube runs along %s, which is one cell long: give more cells "
                        "along it",
                        axes[hy->axis]);
    hy->h = 1.0 / (double)n[hy->axis];
    char what[64];
    snprintf(what, sizeof what, "cells_per_pe=%ld", cells);
    pa_require_memory((double)cells * BYTES_PER_CELL, what, "the slab's fields and tables");
    pa_slab_build(&hy->slab, n, cells, hy->problem == PA_PROBLEM_WAVE, PA_NVAR, MPI_COMM_WORLD);
    pa_hydro_alloc(hy);
}

static void write_state(const pa_hydro *hy, const pa_world *world, FILE *file, const char *path)
{
    const long count = hy->slab.cells * PA_NVAR;
    double *all = NULL;
    if (world->rank == 0)
        all = pa_alloc((size_t)count * (size_t)world->size, sizeof(double), "the gathered state");
    MPI_Gather(hy->u, (int)count, MPI_DOUBLE, all, (int)count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (world->rank != 0)
        return;
    const size_t values = (size_t)count * (size_t)world->size;
    int failed = fwrite(all, sizeof(double), values, file) != values;
    failed |= fclose(file) != 0;
    if (failed)
        pa_comm_wrong("cannot write the state file %s: %s", path, strerror(errno));
    free(all);
}

/* One timed run from the initial state: the slowest rank's time per cycle, and each phase's. */
static void timed_run(pa_hydro *hy, pa_hydro_outcome *o, int r)
{
    pa_hydro_initialize(hy);
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t start = pa_ticks();
    pa_hydro_run(hy);
    double local[1 + PA_PHASES] = {pa_ticks_to_seconds(pa_ticks() - start)}, slowest[1 + PA_PHASES];
    for (int p = 0; p < PA_PHASES; p++)
        local[1 + p] = hy->seconds[p];
    MPI_Allreduce(local, slowest, 1 + PA_PHASES, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double cycles = (double)hy->cycle;
    o->seconds_per_cell = slowest[1 + PA_PHASE_COMPUTE] / cycles / (double)hy->slab.cells;
    if (r < 0)
        return;
    o->cycle_s[r] = slowest[0] / cycles;
    for (int p = 0; p < PA_PHASES; p++)
        o->phase_s[p][r] = slowest[1 + p] / cycles;
    o->rate[r] = (double)hy->slab.cells / o->cycle_s[r];
}

static void check_conservation(const pa_hydro *hy, pa_hydro_outcome *o)
{
    static const char *const names[PA_NVAR] = {"mass", "x-momentum", "y-momentum", "z-momentum",
                                               "energy"};
    o->conservation_checked = hy->problem == PA_PROBLEM_WAVE;
    for (int v = 0; v < PA_NVAR; v++) {
        const double scale = o->initial[PA_NVAR + v];
        o->change[v] = scale > 0 ? fabs(o->final[v] - o->initial[v]) / scale : 0.0;
        if (o->conservation_checked && !(o->change[v] <= PA_CONSERVATION_LIMIT))
            pa_comm_wrong_everywhere("%s is not conserved on the periodic box: %.17g before, "
                                     "%.17g after, a relative change of %.3g above %.0g",
                                     names[v], o->initial[v], o->final[v], o->change[v],
                                     PA_CONSERVATION_LIMIT);
    }
}

int main(int argc, char **argv)
{
    pa_args args;
    pa_args_parse(&args, "pa-hydro",
                  "SAGE-style Eulerian hydrodynamics: MUSCL-Hancock + HLLC on 1-D ordered slabs "
                  "(MPI + OpenMP)",
                  params, sizeof params / sizeof *params, argc, argv);
    pa_world world;
    pa_comm_start(&argc, &argv, &world);
    pa_openmp_start((int)pa_arg_int(&args, "threads")); /* before the slab is allocated */
    FILE *state = pa_comm_open_output(&world, pa_arg_text(&args, "state_file"), "the state file");
    pa_hydro hy;
    setup(&hy, &world, &args);
    pa_comm_require(&world,
                    !*pa_arg_text(&args, "state_file") || hy.slab.cells * PA_NVAR <= INT_MAX,
                    "state_file needs at most %d cells per process (MPI_Gather counts), not %ld",
                    INT_MAX / PA_NVAR, hy.slab.cells);

    pa_hydro_outcome o = {.repeat = (int)pa_arg_int(&args, "repeat")};
    o.cycle_s = pa_calloc((size_t)o.repeat, sizeof(double), "cycle_s");
    o.rate = pa_calloc((size_t)o.repeat, sizeof(double), "cc_per_s_per_pe");
    for (int p = 0; p < PA_PHASES; p++)
        o.phase_s[p] = pa_calloc((size_t)o.repeat, sizeof(double), "phase seconds");
    pa_hydro_initialize(&hy);
    pa_hydro_totals(&hy, o.initial);
    for (int r = -(int)pa_arg_int(&args, "warmup"); r < o.repeat; r++)
        timed_run(&hy, &o, r);
    pa_hydro_totals(&hy, o.final); /* the last run's outcome: every run is the same */
    check_conservation(&hy, &o);
    if (hy.problem != PA_PROBLEM_WAVE)
        pa_hydro_shock_errors(&hy, o.l1, o.star);
    o.checksum = pa_hydro_checksum(&hy);
    if (*pa_arg_text(&args, "state_file"))
        write_state(&hy, &world, state, pa_arg_text(&args, "state_file"));
    int write_failed = pa_hydro_document(&args, &hy, &o, &world);
    pa_slab_free(&hy.slab);
    pa_hydro_free(&hy);
    return pa_comm_finish(&world, write_failed);
}
