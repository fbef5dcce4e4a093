/* Process grids and block-cyclic matrices (ScaLAPACK Users' Guide, ch. 4).
 *
 * The world grid is square, q x q with q^2 = np, ranks in row-major order (BLACS "Row": the
 * process at grid row i, column j is world rank i q + j), as MADbench requires. A gang is a run
 * of np/ngang consecutive world ranks on a grid of its own, pr x pc from MPI_Dims_create
 * (pr <= pc, as square as the count allows), also row-major. A matrix of order n is split into
 * nb x nb blocks dealt cyclically over the grid; each process keeps its share column-major with
 * leading dimension max(1, local rows). */
#ifndef PA_MADBENCH_GRID_H
#define PA_MADBENCH_GRID_H

#include <stddef.h>

#include "scalapack.h"

typedef struct {
    int context; /* BLACS context; -1 on processes outside the grid */
    int rows, cols;
    int myrow, mycol; /* -1 outside */
    int first_rank;   /* the world rank at grid position (0, 0) */
} pa_grid;

typedef struct {
    const pa_grid *grid;
    int n, nb;
    int rows, cols; /* this process's share (numroc); 0 outside the grid */
    int desc[PA_DESC_LEN];
    double *local;        /* rows x cols, column-major */
    int *row_of, *col_of; /* the global (0-based) row of each local row, column of each column */
} pa_block_matrix;

/* The square world grid of `processes` = q^2 ranks (collective over all of them). */
void pa_grid_square(pa_grid *grid, int q);
/* The grid of ranks first .. first + rows cols - 1, row-major (collective over every rank). */
void pa_grid_of_ranks(pa_grid *grid, int first, int rows, int cols, int world_rank);
void pa_grid_free(pa_grid *grid);
int pa_grid_member(const pa_grid *grid);

/* Allocates this process's share of an n x n matrix (none outside the grid, where the
 * descriptor's context is -1 as pdgemr2d_ expects). Returns -1 when memory runs out. */
int pa_matrix_alloc(pa_block_matrix *matrix, const pa_grid *grid, int n, int nb);
void pa_matrix_free(pa_block_matrix *matrix);
size_t pa_matrix_local_count(const pa_block_matrix *matrix);

#endif
