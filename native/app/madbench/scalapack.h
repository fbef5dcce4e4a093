/* The BLACS, PBLAS, ScaLAPACK and LAPACK entry points pa-madbench calls; the libraries ship no C
 * header. The BLACS have a C interface (Cblacs_*); the rest are Fortran symbols (trailing
 * underscore, every argument by reference). The Fortran routines with CHARACTER arguments take
 * their hidden lengths last (gfortran's convention), which are passed explicitly; the PBLAS
 * (pd*mm_, pdtran_) and the redistribution routine pdgemr2d_ are written in C and take none.
 *
 * Descriptors are the 9 integers of a dense block-cyclic matrix (ScaLAPACK Users' Guide, 4.3.3):
 * DTYPE=1, CTXT, M, N, MB, NB, RSRC, CSRC, LLD. */
#ifndef PA_MADBENCH_SCALAPACK_H
#define PA_MADBENCH_SCALAPACK_H

#include <stddef.h>

enum {
    PA_DESC_CTXT = 1,
    PA_DESC_LEN = 9
};

/* BLACS: process information and grids (a context is an int). */
void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_get(int context, int what, int *value);
void Cblacs_gridinit(int *context, char *order, int nprow, int npcol);
void Cblacs_gridmap(int *context, int *usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridinfo(int context, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int context);
void Cblacs_exit(int keep_mpi);

/* ScaLAPACK tools. */
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *context, const int *lld, int *info);

/* Cholesky factorization and inverse of a distributed SPD matrix (Fortran). */
void pdpotrf_(const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, int *info, size_t uplo_length);
void pdpotri_(const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, int *info, size_t uplo_length);

/* PBLAS (C): C = alpha op(A) op(B) + beta C, and C = beta C + alpha A^T. */
void pdgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);
void pdtran_(const int *m, const int *n, const double *alpha, const double *a, const int *ia,
             const int *ja, const int *desca, const double *beta, double *c, const int *ic,
             const int *jc, const int *descc);

/* Copies a submatrix between two distributions; `context` spans every process of both (C). */
void pdgemr2d_(const int *m, const int *n, const double *a, const int *ia, const int *ja,
               const int *desca, double *b, const int *ib, const int *jb, const int *descb,
               const int *context);

/* LAPACK: solves A X = B for SPD A by Cholesky (Fortran). */
void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda, double *b,
            const int *ldb, int *info, size_t uplo_length);

#endif
