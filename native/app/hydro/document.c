/* The perfatlas.result/1 document of pa-hydro (docs/contract.md). */
#include <stdlib.h>

#include "alloc.h"
#include "hydro.h"

/* Every rank's exchange lists, gathered to rank 0: per rank nrecv, nsend, then (peer, cells)
 * of each receive and of each send. Returns the concatenation on rank 0 (NULL elsewhere) and
 * each rank's offset into it. */
static long long *gather_exchanges(const pa_slab *s, const pa_world *world, int **offsets)
{
    const int mine = 2 + 2 * (s->nrecv + s->nsend);
    long long *own = pa_alloc((size_t)mine, sizeof(long long), "the exchange lists");
    own[0] = s->nrecv, own[1] = s->nsend;
    int at = 2;
    for (int p = 0; p < s->nrecv; p++)
        own[at++] = s->recv[p].rank, own[at++] = s->recv[p].count;
    for (int p = 0; p < s->nsend; p++)
        own[at++] = s->send[p].rank, own[at++] = s->send[p].count;
    int *counts = NULL, total = 0;
    long long *all = NULL;
    if (world->rank == 0) {
        counts = pa_alloc((size_t)world->size, sizeof(int), "exchange counts");
        *offsets = pa_alloc((size_t)world->size, sizeof(int), "exchange offsets");
    }
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (world->rank == 0) {
        for (int r = 0; r < world->size; r++)
            (*offsets)[r] = total, total += counts[r];
        all = pa_alloc((size_t)total, sizeof(long long), "every rank's exchange lists");
    }
    MPI_Gatherv(own, mine, MPI_LONG_LONG, all, counts, world->rank == 0 ? *offsets : NULL,
                MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    free(own), free(counts);
    return all;
}

static void write_pairs(pa_json *json, const char *key, const long long *pairs, long n)
{
    pa_json_key(json, key);
    pa_json_begin_array(json);
    for (long i = 0; i < n; i++) {
        pa_json_begin_object(json);
        pa_json_key_int(json, "rank", pairs[2 * i]);
        pa_json_key_int(json, "cells", pairs[2 * i + 1]);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
}

/* "exchange": the neighbours each rank's slab touches and the ghost cells it receives from and
 * sends to each, with the counts per cycle of the last run. */
static void write_exchange(pa_json *json, const pa_hydro *hy, const long long *all,
                           const int *offsets, const pa_world *world)
{
    pa_json_key(json, "exchange");
    pa_json_begin_object(json);
    pa_json_key_int(json, "ghost_width", PA_GHOST_WIDTH);
    pa_json_key_int(json, "bytes_per_cell", 8 * PA_NVAR);
    pa_json_key_int(json, "cg_bytes_per_cell", 8);
    const double cycles = (double)hy->cycle;
    pa_json_key_double(json, "exchanges_per_cycle", (double)hy->exchanges / cycles);
    pa_json_key_double(json, "cg_exchanges_per_cycle", (double)hy->cg_exchanges / cycles);
    pa_json_key_double(json, "reductions_per_cycle", (double)hy->reductions / cycles);
    pa_json_key_string(json, "definition",
                       "per rank: the ranks it receives ghost cells from and sends owned cells "
                       "to, with the cells of each message; one gather/scatter per sweep "
                       "(bytes_per_cell each) and, with solver=cg, one per CG iteration and one "
                       "after (cg_bytes_per_cell); reductions: the time step's and, with "
                       "solver=cg, 1 + 2 per CG iteration");
    long most = 0, fewest = -1, ghosts_most = 0;
    pa_json_key(json, "per_rank");
    pa_json_begin_array(json);
    for (int r = 0; r < world->size; r++) {
        const long long *row = all + offsets[r];
        long neighbours = 0, ghosts = 0;
        for (long long i = 0; i < row[0]; i++)
            ghosts += row[2 + 2 * i + 1];
        /* distinct peers of the receive and send lists */
        for (long long i = 0; i < row[0] + row[1]; i++) {
            int seen = 0;
            for (long long j = 0; j < i; j++)
                seen |= row[2 + 2 * j] == row[2 + 2 * i];
            neighbours += !seen;
        }
        most = neighbours > most ? neighbours : most;
        fewest = fewest < 0 || neighbours < fewest ? neighbours : fewest;
        ghosts_most = ghosts > ghosts_most ? ghosts : ghosts_most;
        pa_json_begin_object(json);
        pa_json_key_int(json, "rank", r);
        pa_json_key_int(json, "neighbours", neighbours);
        pa_json_key_int(json, "ghost_cells", ghosts);
        write_pairs(json, "receive", row + 2, row[0]);
        write_pairs(json, "send", row + 2 + 2 * row[0], row[1]);
        pa_json_end_object(json);
    }
    pa_json_end_array(json);
    pa_json_key_int(json, "neighbours_max", most);
    pa_json_key_int(json, "neighbours_min", fewest);
    pa_json_key_int(json, "ghost_cells_max", ghosts_most);
    pa_json_end_object(json);
}

static void write_conservation(pa_json *json, const pa_hydro_outcome *o)
{
    static const char *const names[PA_NVAR] = {"mass", "momentum_x", "momentum_y", "momentum_z",
                                               "energy"};
    pa_json_key(json, "conservation");
    pa_json_begin_object(json);
    pa_json_key_string(json, "definition",
                       "totals over the grid (sum of U x cell volume) before and after the run; "
                       "relative_change = |after - before| / sum |U| before; checked on the "
                       "periodic box (problem=wave), where they are conserved to rounding");
    pa_json_key_bool(json, "checked", o->conservation_checked);
    pa_json_key_double(json, "limit", PA_CONSERVATION_LIMIT);
    for (int v = 0; v < PA_NVAR; v++) {
        pa_json_key(json, names[v]);
        pa_json_begin_object(json);
        pa_json_key_double(json, "before", o->initial[v]);
        pa_json_key_double(json, "after", o->final[v]);
        pa_json_key_double(json, "relative_change", o->change[v]);
        pa_json_end_object(json);
    }
    pa_json_end_object(json);
}

static void write_shock_tube(pa_json *json, const pa_hydro *hy, const pa_hydro_outcome *o)
{
    pa_json_key(json, "exact");
    if (hy->problem == PA_PROBLEM_WAVE) {
        pa_json_null(json);
        return;
    }
    pa_json_begin_object(json);
    pa_json_key_string(json, "definition",
                       "L1 = mean over cells of |numerical - exact| at the final time, the exact "
                       "Riemann solution (Toro ch. 4) sampled at the cell centres along the axis");
    pa_json_key_int(json, "cells_along_axis", hy->slab.n[hy->axis]);
    pa_json_key_double(json, "l1_density", o->l1[0]);
    pa_json_key_double(json, "l1_velocity", o->l1[1]);
    pa_json_key_double(json, "l1_pressure", o->l1[2]);
    pa_json_key_double(json, "star_pressure", o->star[0]);
    pa_json_key_double(json, "star_velocity", o->star[1]);
    pa_json_end_object(json);
}

static void write_cg(pa_json *json, const pa_hydro *hy)
{
    pa_json_key(json, "cg");
    if (!hy->cg) {
        pa_json_null(json);
        return;
    }
    pa_json_begin_object(json);
    pa_json_key_int(json, "iterations", hy->cg_iterations);
    pa_json_key_double(json, "iterations_per_cycle", (double)hy->cg_iterations / hy->cycle);
    pa_json_key_int(json, "most_iterations", hy->cg_most);
    pa_json_key_int(json, "unconverged_cycles", hy->cg_unconverged);
    pa_json_key_double(json, "final_sigma", hy->dt * hy->conductivity / (hy->h * hy->h));
    pa_json_end_object(json);
}

static void write_derived(pa_json *json, const pa_hydro *hy, const pa_hydro_outcome *o,
                          const long long *exchanges, const int *offsets, const pa_world *world)
{
    const pa_slab *s = &hy->slab;
    pa_json_key(json, "derived");
    pa_json_begin_object(json);
    pa_json_key_string(json, "method",
                       "3-D compressible Euler, ideal gas; MUSCL-Hancock (van Leer slopes of the "
                       "primitive variables), directionally split with Strang's alternation; "
                       "cells ordered x fastest and cut into equal slabs (SAGE)");
    pa_json_key_string(json, "riemann", hy->gas.riemann == PA_RIEMANN_HLL ? "hll" : "hllc");
    pa_json_key(json, "global_grid");
    pa_json_begin_array(json);
    for (int a = 0; a < 3; a++)
        pa_json_int(json, s->n[a]);
    pa_json_end_array(json);
    pa_json_key_int(json, "cells", s->total);
    pa_json_key_int(json, "cells_per_process", s->cells);
    pa_json_key_double(json, "slab_planes", (double)s->cells / (double)(s->n[0] * s->n[1]));
    pa_json_key_double(json, "cell_size", hy->h);
    pa_json_key_string(json, "boundaries", s->periodic ? "periodic" : "outflow");
    pa_json_key_int(json, "cycles", hy->cycle);
    pa_json_key_double(json, "time", hy->time);
    pa_json_key_double(json, "last_dt", hy->dt);
    pa_json_key_double(json, "compute_s_per_cell",
                       o->seconds_per_cell); /* last run, slowest rank, per cell and cycle */
    pa_json_key_string(json, "cycle_definition",
                       "cycle_s: a run from a common barrier to the slowest rank, per cycle; "
                       "compute_s, gather_scatter_s, reduction_s: the slowest rank's time in "
                       "each phase per cycle (waits for other ranks fall in gather_scatter and "
                       "reduction); cc_per_s_per_pe: cells_per_pe / cycle_s");
    write_exchange(json, hy, exchanges, offsets, world);
    write_cg(json, hy);
    write_conservation(json, o);
    write_shock_tube(json, hy, o);
    char text[24];
    snprintf(text, sizeof text, "%016llx", o->checksum);
    pa_json_key_string(json, "checksum", text);
    pa_json_key_string(json, "checksum_definition",
                       "XOR over cells of FNV-1a 64 of (global cell index, U): equal exactly when "
                       "every cell holds the same bits, whatever the process count");
    pa_json_key_bool(json, "verified", 1);
    pa_json_end_object(json);
}

int pa_hydro_document(const pa_args *args, const pa_hydro *hy, const pa_hydro_outcome *o,
                      const pa_world *world)
{
    int *offsets = NULL;
    long long *exchanges = gather_exchanges(&hy->slab, world, &offsets);
    if (world->rank != 0)
        return 0;
    pa_json json;
    pa_json_init(&json, pa_args_output(args));
    pa_comm_doc_begin(&json, "app.hydro", args, world);
    int *ranks = pa_alloc((size_t)world->size, sizeof(int), "ranks");
    for (int r = 0; r < world->size; r++)
        ranks[r] = r;
    pa_comm_doc_context(&json, world, ranks, world->size);
    free(ranks);
    pa_metric metrics[2 + PA_PHASES] = {
        {"cycle_s", "s", o->cycle_s, o->repeat},
        {"compute_s", "s", o->phase_s[PA_PHASE_COMPUTE], o->repeat},
        {"gather_scatter_s", "s", o->phase_s[PA_PHASE_EXCHANGE], o->repeat},
        {"reduction_s", "s", o->phase_s[PA_PHASE_REDUCTION], o->repeat},
        {"cc_per_s_per_pe", "1/s", o->rate, o->repeat},
    };
    pa_comm_doc_samples(&json, metrics, 2 + PA_PHASES, o->cycle_s, o->repeat);
    write_derived(&json, hy, o, exchanges, offsets, world);
    pa_result_end(&json);
    free(exchanges), free(offsets);
    return pa_json_finish(&json);
}
