/* The peer of app.spsolve's CHOLMOD path in bench/spsolve_overhead.py: the same library called
 * directly, as an application would -- read a Matrix Market file with cholmod_read_sparse, then
 * `repeat` times: analyze (AMD ordering + symbolic), factorize (supernodal), solve. Prints one
 * line per repetition: "analyze_s factorize_s solve_s", CLOCK_MONOTONIC around each call.
 *
 *     spsolve-direct FILE.mtx REPEAT */
#include <cholmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: spsolve-direct FILE.mtx REPEAT\n");
        return 2;
    }
    cholmod_common c;
    cholmod_start(&c);
    c.supernodal = CHOLMOD_SUPERNODAL;
    c.nmethods = 1;
    c.method[0].ordering = CHOLMOD_AMD;
    FILE *file = fopen(argv[1], "r");
    cholmod_sparse *a = file ? cholmod_read_sparse(file, &c) : NULL;
    if (!a) {
        fprintf(stderr, "spsolve-direct: cannot read %s\n", argv[1]);
        return 2;
    }
    fclose(file);
    cholmod_dense *b = cholmod_ones(a->nrow, 1, CHOLMOD_REAL, &c);
    for (int r = 0, repeat = atoi(argv[2]); r < repeat; r++) {
        double t0 = now();
        cholmod_factor *l = cholmod_analyze(a, &c);
        double t1 = now();
        cholmod_factorize(a, l, &c);
        double t2 = now();
        cholmod_dense *x = cholmod_solve(CHOLMOD_A, l, b, &c);
        double t3 = now();
        if (c.status != CHOLMOD_OK) {
            fprintf(stderr, "spsolve-direct: CHOLMOD status %d\n", c.status);
            return 3;
        }
        printf("%.9f %.9f %.9f\n", t1 - t0, t2 - t1, t3 - t2);
        cholmod_free_dense(&x, &c);
        cholmod_free_factor(&l, &c);
    }
    cholmod_free_dense(&b, &c);
    cholmod_free_sparse(&a, &c);
    cholmod_finish(&c);
    return 0;
}
