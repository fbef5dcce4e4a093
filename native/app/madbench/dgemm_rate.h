/* The reference rate of %peak: cblas_dgemm of one process on square matrices of order n, the
 * rate a process would reach if the whole pipeline ran at DGEMM speed (MADbench's figure of merit
 * compares each phase with the machine's peak; DGEMM is the attainable one). */
#ifndef PA_MADBENCH_DGEMM_RATE_H
#define PA_MADBENCH_DGEMM_RATE_H

typedef struct {
    int n;
    int calls;          /* timed calls (after one untimed) */
    double seconds;     /* their wall time */
    double flops_per_s; /* 2 n^3 calls / seconds */
    double worst_error; /* the check: max |C - A B| / (n max|A| max|B|) over two columns */
} pa_dgemm_rate;

/* Repeats C = A B (pseudo-random A, B) until min_seconds have passed, at least 3 times. Returns
 * -1 when memory runs out. */
int pa_dgemm_measure(pa_dgemm_rate *rate, int n, double min_seconds);

#endif
