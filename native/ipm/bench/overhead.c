/* pa-ipm-overhead: the loops bench/ipm_overhead.py times with and without perfatlas-ipm.
 *
 * Exactly 2 ranks. Each sample times `calls` iterations of one loop on rank 0 with
 * clock_gettime (not MPI_Wtime, which the profiler may wrap):
 *   pingpong:  rank 0 MPI_Send of 0 bytes, rank 1 MPI_Recv then MPI_Send back, rank 0 MPI_Recv;
 *              four MPI calls, and four profiler shims, on the critical path of an iteration;
 *   pingpong8: the same with 8 bytes (one MPI_DOUBLE): the shims also size the message;
 *   allreduce: MPI_Allreduce of one double on both ranks; one shim per rank per iteration;
 *   proc_null: MPI_Send of 0 bytes to MPI_PROC_NULL on both ranks: no communication at all, so
 *              the difference with and without the profiler is its shim alone, free of the
 *              other rank's noise;
 *   test_poll: rank 0 MPI_Test on a posted MPI_Irecv that stays incomplete until the loop ends
 *              (the polling of a progress loop: hpcc's RandomAccess polls MPI_Testany tens of
 *              millions of times); one shim per iteration, on rank 0;
 *   region:    MPI_Pcontrol(1, "r") then MPI_Pcontrol(-1, "r") on both ranks: entering and
 *              leaving a region, as a program that marks its phases does each time step;
 *   timer:     no MPI call: two reads of the counter the profiler times calls with, as a shim
 *              takes them (pa_ticks_unfenced), their difference summed: the floor of any shim
 *              that times its call, the same with the profiler or without.
 * Every loop runs below LOOP_FRAMES frames of its own, so that a deeper call stack
 * (PERFATLAS_IPM_CALLSTACK up to 8) has as many frames to unwind as it keeps.
 * Prints one line per sample: "<loop> <nanoseconds per iteration>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timer.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

/* A ping-pong of `bytes` bytes (one double when 8: the received size is read from the status). */
static void pingpong_of(int rank, long calls, int bytes)
{
    double message = 0;
    void *buffer = bytes ? &message : NULL;
    MPI_Datatype type = bytes ? MPI_DOUBLE : MPI_BYTE;
    int count = bytes ? 1 : 0;
    for (long i = 0; i < calls; i++) {
        if (rank == 0) {
            MPI_Send(buffer, count, type, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buffer, count, type, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buffer, count, type, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buffer, count, type, 0, 0, MPI_COMM_WORLD);
        }
    }
}

static void pingpong(int rank, long calls) { pingpong_of(rank, calls, 0); }
static void pingpong8(int rank, long calls) { pingpong_of(rank, calls, 8); }

static void allreduce(int rank, long calls)
{
    double in = rank, out = 0;
    for (long i = 0; i < calls; i++)
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void proc_null(int rank, long calls)
{
    (void)rank;
    for (long i = 0; i < calls; i++)
        MPI_Send(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
}

static void region(int rank, long calls)
{
    (void)rank;
    for (long i = 0; i < calls; i++) {
        MPI_Pcontrol(1, "r");
        MPI_Pcontrol(-1, "r");
    }
}

static void test_poll(int rank, long calls)
{
    int flag = 0, go = 0;
    if (rank == 0) {
        MPI_Request request;
        MPI_Irecv(&go, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &request);
        for (long i = 0; i < calls; i++)
            MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            fprintf(stderr, "pa-ipm-overhead: the polled receive completed early\n");
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        MPI_Send(&go, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&go, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
}

#define LOOP_FRAMES 8

/* `loop` called `frames` calls deep (not tail calls: each frame stays on the stack). */
static __attribute__((noinline)) void below_frames(int frames, void (*loop)(int, long), int rank,
                                                   long calls)
{
    if (frames == 0)
        loop(rank, calls);
    else
        below_frames(frames - 1, loop, rank, calls);
    __asm__ volatile("" ::: "memory");
}

static volatile uint64_t timed_sink; /* the timer loop's sum: kept, so the reads are made */

static void timer(int rank, long calls)
{
    (void)rank;
    uint64_t sum = 0;
    for (long i = 0; i < calls; i++) {
        uint64_t start = pa_ticks_unfenced();
        sum += pa_ticks_unfenced() - start;
    }
    timed_sink = sum;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    pa_timer_init();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long calls = argc > 1 ? atol(argv[1]) : 100000;
    int samples = argc > 2 ? atoi(argv[2]) : 5;
    if (size != 2 || calls < 1 || samples < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 pa-ipm-overhead [CALLS [SAMPLES]]\n");
        MPI_Finalize();
        return 2;
    }
    struct {
        const char *name;
        void (*loop)(int, long);
    } loops[] = {{"pingpong", pingpong},   {"pingpong8", pingpong8}, {"allreduce", allreduce},
                 {"proc_null", proc_null}, {"test_poll", test_poll}, {"region", region},
                 {"timer", timer}};
    int nloops = sizeof loops / sizeof loops[0];
    for (int sample = -1; sample < samples; sample++) /* sample -1: warm-up */
        for (int l = 0; l < nloops; l++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double start = now_ns();
            below_frames(LOOP_FRAMES, loops[l].loop, rank, calls);
            double ns = (now_ns() - start) / (double)calls;
            if (rank == 0 && sample >= 0)
                printf("%s %.3f\n", loops[l].name, ns);
        }
    MPI_Finalize();
    return 0;
}
