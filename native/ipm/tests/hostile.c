/* pa-ipm-hostile: programs that once made perfatlas-ipm write a wrong profile, for
 * tests/test_ipm_hostile.py (docs/safety/profiles.md). Any number of ranks; one mode per run:
 *
 *   fork       every rank forks a child before MPI_Finalize; the child waits until its parent
 *              has finalized (and written its profile), then calls exit(0), so that its atexit
 *              handlers run: the child must not write profile files
 *   names      regions named exactly: "a/b" (1 MPI_Barrier), "a" > "b" (2), "<script>" (3),
 *              "back\slash" (4), a name with a quote and a tab (5), one of 40 x "é" (80 bytes,
 *              more than a region name keeps: 6), "</script>" (7) and "" (8)
 *   deep N     N regions nested, "level1" > "level2" > ... > "levelN", one MPI_Barrier in the
 *              innermost, left innermost first; then one MPI_Barrier outside every region
 *   many N     in region "outer", N regions one after another, "r1" ... "rN", one MPI_Barrier in
 *              each: more than the region table holds
 *   levels     MPI_Pcontrol's standard levels 0 and 2 without a name, then levels 1 and -1 with
 *              what is no name (NULL, an unmapped address, bytes that are not UTF-8, 2 KiB without
 *              a NUL), one MPI_Barrier after each of the 10 calls, none in a region; then region
 *              "named" (2 MPI_Barrier)
 *   linger     one MPI_Barrier, then rank 0 prints "lingering" and every rank makes an
 *              MPI_Barrier every 10 ms for 60 s: a job to be stopped by SIGTERM
 *   spawn      the ranks spawn one process of this program (mode "spawned"), make 2
 *              MPI_Barrier and disconnect from it; the spawned process makes 3 MPI_Barrier in its
 *              own world and disconnects: the child job must not write over its parent's files */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void barriers(const char *region, int count)
{
    MPI_Pcontrol(1, region);
    for (int i = 0; i < count; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(-1, region);
}

static void names(void)
{
    barriers("a/b", 1);
    MPI_Pcontrol(1, "a");
    barriers("b", 2);
    MPI_Pcontrol(-1, "a");
    barriers("<script>", 3);
    barriers("back\\slash", 4);
    barriers("say \"hi\"\there", 5);
    char long_name[81] = "";
    for (int i = 0; i < 40; i++)
        strcat(long_name, "\xc3\xa9"); /* é */
    barriers(long_name, 6);
    barriers("</script>", 7);
    barriers("", 8);
}

static void deep(int levels)
{
    char name[32];
    for (int level = 1; level <= levels; level++) {
        snprintf(name, sizeof name, "level%d", level);
        MPI_Pcontrol(1, name);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int level = levels; level >= 1; level--) {
        snprintf(name, sizeof name, "level%d", level);
        MPI_Pcontrol(-1, name);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void many(int count)
{
    char name[32];
    MPI_Pcontrol(1, "outer");
    for (int i = 1; i <= count; i++) {
        snprintf(name, sizeof name, "r%d", i);
        barriers(name, 1);
    }
    MPI_Pcontrol(-1, "outer");
}

static void levels(void)
{
    static char unterminated[2048];
    memset(unterminated, 'x', sizeof unterminated);
    const char *no_names[] = {NULL, (const char *)16, "\xff\xfe", unterminated};
    MPI_Pcontrol(0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(2);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 4; i++) {
        MPI_Pcontrol(1, no_names[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Pcontrol(-1, no_names[i]);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    barriers("named", 2);
}

static void linger(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("lingering\n");
        fflush(stdout);
    }
    for (int i = 0; i < 6000; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        usleep(10000);
    }
}

static void spawn(const char *self)
{
    char *words[] = {"spawned", NULL};
    MPI_Comm child;
    MPI_Comm_spawn(self, words, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &child, MPI_ERRCODES_IGNORE);
    for (int i = 0; i < 2; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_disconnect(&child);
}

static void spawned(void)
{
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    for (int i = 0; i < 3; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_disconnect(&parent);
}

/* A child that outlives MPI_Finalize: it exits (atexit handlers included) once the parent writes
 * to the pipe, after its MPI_Finalize. */
static int fork_and_finalize(void)
{
    int wake[2];
    if (pipe(wake) != 0)
        return 1;
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        char byte;
        close(wake[1]);
        ssize_t got = read(wake[0], &byte, 1);
        exit(got == 1 ? 0 : 3);
    }
    close(wake[0]);
    MPI_Finalize();
    int status = 0;
    ssize_t put = write(wake[1], "x", 1);
    waitpid(child, &status, 0);
    return put == 1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "";
    int count = argc > 2 ? atoi(argv[2]) : 0;
    if (strcmp(mode, "fork") == 0)
        return fork_and_finalize();
    if (strcmp(mode, "names") == 0)
        names();
    else if (strcmp(mode, "deep") == 0 && count > 0)
        deep(count);
    else if (strcmp(mode, "levels") == 0)
        levels();
    else if (strcmp(mode, "linger") == 0)
        linger();
    else if (strcmp(mode, "spawn") == 0)
        spawn(argv[0]);
    else if (strcmp(mode, "spawned") == 0)
        spawned();
    else if (strcmp(mode, "many") == 0 && count > 0)
        many(count);
    else {
        fprintf(stderr,
                "pa-ipm-hostile: say fork, names, deep N, levels, linger, spawn or many N\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Finalize();
    return 0;
}
