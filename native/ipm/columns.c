/* What calls.def's bytes and peer columns compute beyond count x size (table.c): the bytes of the
 * v and w collectives, the root test of the scatters, and the target of a one-sided call as a rank
 * of MPI_COMM_WORLD. Only PMPI_ calls: nothing here is recorded. */
#include <pthread.h>
#include <stdlib.h>

#include "ipm.h"
#include "table.h"

/* The ranks a collective on comm sends to: its size, or its remote group's for an
 * intercommunicator; with `neighbors`, the out-degree of its topology (MPI-3.1, 7.6). */
static int destinations(MPI_Comm comm, int neighbors)
{
    int count = 0, inter = 0;
    if (!neighbors) {
        PMPI_Comm_test_inter(comm, &inter);
        (inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(comm, &count);
        return count;
    }
    int topology = MPI_UNDEFINED, rank = 0, in = 0, weighted = 0;
    PMPI_Topo_test(comm, &topology);
    if (topology == MPI_CART) {
        PMPI_Cartdim_get(comm, &count);
        count *= 2; /* a source and a destination per dimension */
    } else if (topology == MPI_GRAPH) {
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &count);
    } else if (topology == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, &in, &count, &weighted);
    }
    return count;
}

uint64_t pa_ipm_bytes_v(MPI_Comm comm, int neighbors, const int counts[],
                        const MPI_Datatype datatypes[], MPI_Datatype datatype)
{
    if (counts == NULL || comm == MPI_COMM_NULL)
        return 0;
    uint64_t bytes = 0;
    for (int rank = 0, n = destinations(comm, neighbors); rank < n; rank++)
        bytes += pa_ipm_bytes(counts[rank], datatypes ? datatypes[rank] : datatype);
    return bytes;
}

int pa_ipm_is_root(int root, MPI_Comm comm)
{
    if (root == MPI_ROOT) /* the root of an intercommunicator collective */
        return 1;
    int inter = 0, rank = -1;
    if (root < 0 || comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return 0;
    return !inter && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == root;
}

/* A window's ranks as ranks of MPI_COMM_WORLD, cached on the window as an attribute (freed with
 * it), as table.c caches a communicator's. */
static int window_key = MPI_KEYVAL_INVALID;
static pthread_once_t window_key_once = PTHREAD_ONCE_INIT;

static int free_window_cache(MPI_Win win, int key, void *cache, void *extra)
{
    (void)win, (void)key, (void)extra;
    free(cache);
    return MPI_SUCCESS;
}

static void create_window_key(void)
{
    PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, free_window_cache, &window_key, NULL);
}

static int *window_ranks(MPI_Win win)
{
    int *cache = NULL, found = 0;
    pthread_once(&window_key_once, create_window_key);
    PMPI_Win_get_attr(win, window_key, &cache, &found);
    if (found)
        return cache;
    MPI_Group group;
    if (PMPI_Win_get_group(win, &group) != MPI_SUCCESS)
        return NULL;
    cache = pa_ipm_world_ranks(group);
    if (cache != NULL)
        PMPI_Win_set_attr(win, window_key, cache);
    PMPI_Group_free(&group);
    return cache;
}

int pa_ipm_window_peer(int rank, MPI_Win win)
{
    if (rank < 0 || win == MPI_WIN_NULL || !pa_ipm_active)
        return -1;
    const int *ranks = window_ranks(win);
    return ranks == NULL || ranks[rank] == MPI_UNDEFINED ? -1 : ranks[rank];
}
