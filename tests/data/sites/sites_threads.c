/* Call sites from threads (tests/test_ipm_sites.py): under MPI_THREAD_MULTIPLE two threads of
 * each rank send to themselves at once, each from its own line, a number of times its own. */
#include <mpi.h>
#include <pthread.h>

static void *first(void *unused)
{
    int sent = 1, got;
    for (int i = 0; i < 300; i++)
        MPI_Sendrecv(&sent, 1, MPI_INT, MPI_PROC_NULL, 1, &got, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* site: thread-1 */
    return unused;
}

static void *second(void *unused)
{
    int sent = 2, got;
    for (int i = 0; i < 500; i++)
        MPI_Sendrecv(&sent, 1, MPI_INT, MPI_PROC_NULL, 2, &got, 1, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* site: thread-2 */
    return unused;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE)
        MPI_Abort(MPI_COMM_WORLD, 3);
    pthread_t threads[2];
    pthread_create(&threads[0], NULL, first, NULL);
    pthread_create(&threads[1], NULL, second, NULL);
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    MPI_Finalize();
    return 0;
}
