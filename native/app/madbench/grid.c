#include "grid.h"
#include "alloc.h"

#include <stdlib.h>

static void read_back(pa_grid *grid)
{
    grid->myrow = grid->mycol = -1;
    if (grid->context >= 0) {
        int rows, cols;
        Cblacs_gridinfo(grid->context, &rows, &cols, &grid->myrow, &grid->mycol);
    }
}

void pa_grid_square(pa_grid *grid, int q)
{
    *grid = (pa_grid){.rows = q, .cols = q, .first_rank = 0};
    Cblacs_get(0, 0, &grid->context); /* the system context: every process */
    Cblacs_gridinit(&grid->context, "Row", q, q);
    read_back(grid);
}

void pa_grid_of_ranks(pa_grid *grid, int first, int rows, int cols, int world_rank)
{
    *grid = (pa_grid){.rows = rows, .cols = cols, .first_rank = first};
    int *map = pa_alloc((size_t)rows * (size_t)cols, sizeof(int), "the process grid map");
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            map[i + j * rows] = first + i * cols + j; /* usermap is column-major, ld = rows */
    Cblacs_get(0, 0, &grid->context);
    Cblacs_gridmap(&grid->context, map, rows, rows, cols);
    free(map);
    int inside = world_rank >= first && world_rank < first + rows * cols;
    if (!inside)
        grid->context = -1;
    read_back(grid);
}

void pa_grid_free(pa_grid *grid)
{
    if (grid->context >= 0)
        Cblacs_gridexit(grid->context);
    grid->context = -1;
}

int pa_grid_member(const pa_grid *grid) { return grid->context >= 0 && grid->myrow >= 0; }

/* Local index l of block-cyclic dimension: block l / nb of this process, which is global block
 * (l / nb) * procs + coord (source process 0). */
static int global_index(int l, int nb, int coord, int procs)
{
    return (l / nb * procs + coord) * nb + l % nb;
}

int pa_matrix_alloc(pa_block_matrix *matrix, const pa_grid *grid, int n, int nb)
{
    *matrix = (pa_block_matrix){.grid = grid, .n = n, .nb = nb};
    const int zero = 0;
    if (!pa_grid_member(grid)) {
        /* outside the grid: a descriptor whose context is -1 (pdgemr2d_ skips this process) */
        int desc[PA_DESC_LEN] = {1, -1, n, n, nb, nb, 0, 0, 1};
        for (int k = 0; k < PA_DESC_LEN; k++)
            matrix->desc[k] = desc[k];
        return 0;
    }
    matrix->rows = numroc_(&n, &nb, &grid->myrow, &zero, &grid->rows);
    matrix->cols = numroc_(&n, &nb, &grid->mycol, &zero, &grid->cols);
    int lld = matrix->rows > 1 ? matrix->rows : 1, info = 0;
    descinit_(matrix->desc, &n, &n, &nb, &nb, &zero, &zero, &grid->context, &lld, &info);
    size_t count = pa_matrix_local_count(matrix);
    matrix->local = pa_calloc(count ? count : 1, sizeof(double), "a distributed matrix block");
    matrix->row_of = pa_alloc((size_t)lld, sizeof(int), "row_of");
    matrix->col_of = pa_alloc((size_t)(matrix->cols > 0 ? matrix->cols : 1), sizeof(int), "col_of");
    if (!matrix->local || !matrix->row_of || !matrix->col_of || info != 0)
        return -1;
    for (int i = 0; i < matrix->rows; i++)
        matrix->row_of[i] = global_index(i, nb, grid->myrow, grid->rows);
    for (int j = 0; j < matrix->cols; j++)
        matrix->col_of[j] = global_index(j, nb, grid->mycol, grid->cols);
    return 0;
}

void pa_matrix_free(pa_block_matrix *matrix)
{
    free(matrix->local);
    free(matrix->row_of);
    free(matrix->col_of);
    matrix->local = NULL;
    matrix->row_of = matrix->col_of = NULL;
}

size_t pa_matrix_local_count(const pa_block_matrix *matrix)
{
    return (size_t)matrix->rows * (size_t)matrix->cols;
}
