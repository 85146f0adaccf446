/* A 1-D Jacobi relaxation on a periodic domain, its cells spread over the MPI
   ranks, which compute at different speeds (rank r repeats its sweep r + 1
   times). hetbal's balancer, fed each rank's compute time, moves cells from
   slow ranks to fast ones when it pays. At the end every cell is compared with
   a single-rank run: the results are the same to the bit.

   Build and run (after crates/hetbal-c/install.sh PREFIX):
     export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
     mpicc -O2 -o jacobi examples/c/jacobi.c $(pkg-config --cflags --libs hetbal)
     mpirun -np 4 ./jacobi [cells] [iterations]                                   */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hetbal_mpi.h>

/* One sweep in place: u[i] = (u[i-1] + u[i+1]) / 2, with the halo values
   left (before u[0]) and right (after u[n-1]). */
static void sweep(double *u, uint64_t n, double left, double right) {
    double previous = left;
    for (uint64_t i = 0; i < n; i++) {
        double next = i + 1 < n ? u[i + 1] : right;
        double value = (previous + next) * 0.5;
        previous = u[i];
        u[i] = value;
    }
}

static double initial(uint64_t position) { return (double)((position * 7919) % 1000); }

static int fail(const char *what, hetbal_status status) {
    fprintf(stderr, "jacobi: %s failed (status %d): %s\n", what, status, hetbal_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t total = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000;
    uint64_t iterations = argc > 2 ? strtoull(argv[2], NULL, 10) : 200;
    int succ = (rank + 1) % size, pred = (rank + size - 1) % size;

    /* An even split: rank r holds global cells first .. first + count - 1. */
    uint64_t count = total / size + ((uint64_t)rank < total % size), first = 0;
    for (int r = 0; r < rank; r++) first += total / size + ((uint64_t)r < total % size);
    double *cells = malloc(count * sizeof(double));
    for (uint64_t k = 0; k < count; k++) cells[k] = initial(first + k);

    /* ANCHOR: create */
    /* Links measured by the balancer itself (c_succ NULL); adaptive policy. */
    hetbal_balancer *balancer = NULL;
    hetbal_status s = hetbal_mpi_balancer_create(MPI_COMM_WORLD, sizeof(double), NULL, NULL, &balancer);
    if (s != HETBAL_OK) return fail("hetbal_mpi_balancer_create", s);
    /* ANCHOR_END: create */

    int moves = 0;
    double started = MPI_Wtime();
    /* ANCHOR: loop */
    for (uint64_t it = 0; it < iterations; it++) {
        /* Halo exchange (not timed: it waits for the neighbours). */
        double left, right;
        MPI_Sendrecv(&cells[count - 1], 1, MPI_DOUBLE, succ, 0, &left, 1, MPI_DOUBLE, pred, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&cells[0], 1, MPI_DOUBLE, pred, 1, &right, 1, MPI_DOUBLE, succ, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* The compute phase, timed: this rank is rank + 1 times slower. */
        double t0 = MPI_Wtime();
        double *copy = malloc(count * sizeof(double));
        for (int repeat = 0; repeat <= rank; repeat++) {
            if (repeat < rank) memcpy(copy, cells, count * sizeof(double));
            double *u = repeat < rank ? copy : cells;
            sweep(u, count, left, right);
        }
        free(copy);
        double compute = MPI_Wtime() - t0;
        hetbal_decision d;
        void *buffer = cells;
        s = hetbal_mpi_balancer_step(balancer, compute, iterations - it - 1, &buffer, &count, &d);
        if (s != HETBAL_OK) return fail("hetbal_mpi_balancer_step", s);
        cells = buffer;
        first = d.first;
        moves += d.redistribute;
        if (d.redistribute && rank == 0)
            printf("iteration %u: moved the cells (step %.3g s -> %.3g s, predicted gain %.3g s, move %.3g s)\n",
                   d.iteration, d.current_step, d.balanced_step, d.predicted_gain, d.redistribution_time);
    }
    /* ANCHOR_END: loop */
    double elapsed = MPI_Wtime() - started;
    hetbal_mpi_balancer_free(balancer);

    /* Check against a single-rank run: gather every cell at its global position. */
    uint64_t *counts = NULL, *firsts = NULL;
    double *all = NULL;
    if (rank == 0) {
        counts = malloc(size * sizeof(uint64_t));
        firsts = malloc(size * sizeof(uint64_t));
        all = malloc(total * sizeof(double));
    }
    MPI_Gather(&count, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_Gather(&first, 1, MPI_UINT64_T, firsts, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        uint64_t at = 0;
        for (uint64_t k = 0; k < count; k++) all[(first + k) % total] = cells[k];
        for (int r = 1; r < size; r++) {
            double *part = malloc(counts[r] * sizeof(double));
            MPI_Recv(part, (int)counts[r], MPI_DOUBLE, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (uint64_t k = 0; k < counts[r]; k++) all[(firsts[r] + k) % total] = part[k];
            free(part);
            at += counts[r];
        }
        double *alone = malloc(total * sizeof(double));
        for (uint64_t k = 0; k < total; k++) alone[k] = initial(k);
        for (uint64_t it = 0; it < iterations; it++) {
            double left = alone[total - 1], right = alone[0];
            sweep(alone, total, left, right);
        }
        uint64_t differ = 0;
        for (uint64_t k = 0; k < total; k++) differ += alone[k] != all[k];
        printf("jacobi: %llu cells, %llu iterations on %d ranks in %.3f s, %d redistribution(s); "
               "cells per rank at the end:", (unsigned long long)total, (unsigned long long)iterations,
               size, elapsed, moves);
        for (int r = 0; r < size; r++) printf(" %llu", (unsigned long long)counts[r]);
        printf("\njacobi: %s (%llu of %llu cells differ from the single-rank run)\n",
               differ ? "WRONG" : "same results as one rank", (unsigned long long)differ,
               (unsigned long long)total);
        free(alone);
        free(all);
        free(counts);
        free(firsts);
        (void)at;
        free(cells);
        MPI_Finalize();
        return differ ? 1 : 0;
    }
    MPI_Send(cells, (int)count, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    free(cells);
    MPI_Finalize();
    return 0;
}
