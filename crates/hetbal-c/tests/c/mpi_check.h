/* The MPI tests' check: CHECK(cond, format, ...) counts a failure on this rank
   and prints where, why, and the library's last error. Each test prints its
   verdict from `failures` at the end. */
#ifndef HETBAL_TEST_MPI_CHECK_H
#define HETBAL_TEST_MPI_CHECK_H

#include <stdio.h>

#include "hetbal_mpi.h"

static int failures = 0, rank = 0;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            failures++;                                                           \
            fprintf(stderr, "rank %d FAILED %s:%d: ", rank, __FILE__, __LINE__);  \
            fprintf(stderr, __VA_ARGS__);                                         \
            fprintf(stderr, " (last error: %s)\n", hetbal_last_error());          \
        }                                                                         \
    } while (0)

#endif
