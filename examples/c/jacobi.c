/* A 1-D Jacobi relaxation on a periodic domain, its cells spread over the MPI
   ranks, which compute at different speeds (rank r repeats its sweep r + 1
   times). hetbal's balancer, fed each rank's compute time, moves cells from
   slow ranks to fast ones when it pays. At the end every cell is compared with
   a single-rank run: the results are the same to the bit.

   Options (anywhere on the command line):
     --cliff CAPACITY  rank 0 gets a memory cliff (as the library's
                       LoadProfile::cliff): its time per cell is that of one
                       sweep up to CAPACITY cells and ten times that (it
                       repeats its sweep 10 times) whenever it holds more.
     --model NAME      the balancer's model of the compute times: constant
                       (the default: one time per cell per rank), functional
                       (a time function of the load per rank, learned) or
                       monotone-cubic.
     --policy NAME     the balancer's policy: adaptive (the default) or
                       profitability (move when the predicted gain over the
                       remaining iterations exceeds the move's price).
     --emulate S       report to the balancer S seconds per cell per sweep
                       (the emulated cost: rank r's sweeps times its cells
                       times S) instead of the measured compute time; the
                       sweeps still run. The decisions then do not depend on
                       the machine's timing noise (4 ranks on 2 shared cores
                       time their sweeps within +-50%).
     --every K         decide every K iterations (the default: 1), as
                       `hetbal-mpi jacobi --every K`: the balancer is called
                       after every K-th iteration only, with the mean compute
                       time of the K iterations since the last decision and
                       `remaining` counted in decisions left.
   At the end rank 0 prints the moves, the last iteration that moved, and the
   mean wall time of the last 10 iterations.

   Build and run (after crates/hetbal-c/install.sh PREFIX):
     export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
     mpicc -O2 -o jacobi examples/c/jacobi.c $(pkg-config --cflags --libs hetbal)
     mpirun -np 4 ./jacobi [cells] [iterations] [--cliff CAPACITY] [--model NAME]
                      [--policy NAME] [--emulate S] [--every K]            */
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
    uint64_t total = 200000, iterations = 200, capacity = UINT64_MAX, every = 1;
    double emulate = 0; /* seconds per cell per sweep reported (0: measured) */
    int model = HETBAL_MODEL_CONSTANT, policy = HETBAL_POLICY_ADAPTIVE, positional = 0, bad = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--cliff") == 0 && a + 1 < argc) {
            capacity = strtoull(argv[++a], NULL, 10);
        } else if (strcmp(argv[a], "--model") == 0 && a + 1 < argc) {
            const char *name = argv[++a];
            model = strcmp(name, "constant") == 0         ? HETBAL_MODEL_CONSTANT
                    : strcmp(name, "functional") == 0     ? HETBAL_MODEL_FUNCTIONAL
                    : strcmp(name, "monotone-cubic") == 0 ? HETBAL_MODEL_MONOTONE_CUBIC
                                                          : -1;
        } else if (strcmp(argv[a], "--policy") == 0 && a + 1 < argc) {
            const char *name = argv[++a];
            policy = strcmp(name, "adaptive") == 0        ? HETBAL_POLICY_ADAPTIVE
                     : strcmp(name, "profitability") == 0 ? HETBAL_POLICY_PROFITABILITY
                                                          : -1;
        } else if (strcmp(argv[a], "--emulate") == 0 && a + 1 < argc) {
            emulate = strtod(argv[++a], NULL);
            bad = !(emulate > 0);
        } else if (strcmp(argv[a], "--every") == 0 && a + 1 < argc) {
            every = strtoull(argv[++a], NULL, 10);
            bad = every == 0;
        } else if (argv[a][0] != '-' && positional < 2) {
            *(positional++ == 0 ? &total : &iterations) = strtoull(argv[a], NULL, 10);
        } else {
            bad = 1;
        }
        if (bad || model < 0 || policy < 0) {
            if (rank == 0)
                fprintf(stderr, "usage: jacobi [cells] [iterations] [--cliff CAPACITY] "
                                "[--model constant|functional|monotone-cubic] "
                                "[--policy adaptive|profitability] [--emulate S] [--every K]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (total < (uint64_t)size || iterations == 0) {
        /* Every rank must hold a cell (the balancer counts on it), and the run
           needs an iteration. */
        if (rank == 0)
            fprintf(stderr, "jacobi: %llu cells and %llu iterations on %d ranks: give at least "
                            "one cell per rank and one iteration\n",
                    (unsigned long long)total, (unsigned long long)iterations, size);
        MPI_Finalize();
        return 2;
    }
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
    /* ANCHOR: model */
    s = hetbal_mpi_balancer_set_model(balancer, model);
    if (s != HETBAL_OK) return fail("hetbal_mpi_balancer_set_model", s);
    s = hetbal_mpi_balancer_set_policy(balancer, policy, 0);
    if (s != HETBAL_OK) return fail("hetbal_mpi_balancer_set_policy", s);
    /* ANCHOR_END: model */

    int moves = 0;
    uint64_t last_move = 0;    /* the iteration after which the cells last moved */
    double group = 0;          /* compute time since the last decision */
    double *walls = malloc(iterations * sizeof(double)); /* each iteration's wall time */
    /* The scratch of the repeated sweeps, as large as any share and touched
       here: its page faults are not timed. */
    double *copy = calloc(total, sizeof(double));
    memset(copy, 0, total * sizeof(double));
    /* A warm-up, not timed: the first sweeps after start-up run several
       times slower (cold caches, ranks still starting), and a time function
       learned from them would see a cliff where there is none. */
    for (int repeat = 0; repeat <= rank; repeat++) {
        memcpy(copy, cells, count * sizeof(double));
        sweep(copy, count, 0.0, 0.0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double started = MPI_Wtime();
    /* ANCHOR: loop */
    for (uint64_t it = 0; it < iterations; it++) {
        double begun = MPI_Wtime();
        /* Halo exchange (not timed: it waits for the neighbours). */
        double left, right;
        MPI_Sendrecv(&cells[count - 1], 1, MPI_DOUBLE, succ, 0, &left, 1, MPI_DOUBLE, pred, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&cells[0], 1, MPI_DOUBLE, pred, 1, &right, 1, MPI_DOUBLE, succ, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* The compute phase, timed: this rank is rank + 1 times slower (with
           --cliff, rank 0 ten times slower beyond its capacity). */
        double t0 = MPI_Wtime();
        int extra = rank == 0 && count > capacity ? 9 : rank;
        for (int repeat = 0; repeat <= extra; repeat++) {
            if (repeat < extra) memcpy(copy, cells, count * sizeof(double));
            double *u = repeat < extra ? copy : cells;
            sweep(u, count, left, right);
        }
        group += emulate > 0 ? emulate * (extra + 1) * (double)count : MPI_Wtime() - t0;
        /* A decision after every `every`-th iteration (all of them by
           default) but the last, on the mean compute time since the last
           one, with the decisions left as `remaining`. */
        if ((it + 1) % every == 0 && it + 1 < iterations) {
            hetbal_decision d;
            void *buffer = cells;
            s = hetbal_mpi_balancer_step(balancer, group / (double)every,
                                         (iterations - it - 1) / every, &buffer, &count, &d);
            if (s != HETBAL_OK) return fail("hetbal_mpi_balancer_step", s);
            cells = buffer;
            first = d.first;
            group = 0;
            moves += d.redistribute;
            if (d.redistribute) last_move = it + 1;
            if (d.redistribute && rank == 0 && moves <= 3)
                printf("iteration %llu: moved the cells (step %.3g s -> %.3g s, predicted gain "
                       "%.3g s, move %.3g s)\n", (unsigned long long)(it + 1), d.current_step,
                       d.balanced_step, d.predicted_gain, d.redistribution_time);
        }
        walls[it] = MPI_Wtime() - begun;
    }
    /* ANCHOR_END: loop */
    double elapsed = MPI_Wtime() - started;
    hetbal_mpi_balancer_free(balancer);
    uint64_t tail = iterations < 10 ? iterations : 10;
    double last = 0;
    for (uint64_t it = iterations - tail; it < iterations; it++) last += walls[it] / (double)tail;
    free(walls);
    free(copy);

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
        if (moves > 3) printf("... and %d more\n", moves - 3);
        printf("jacobi: %llu cells, %llu iterations on %d ranks in %.3f s, %d redistribution(s); "
               "cells per rank at the end:", (unsigned long long)total, (unsigned long long)iterations,
               size, elapsed, moves);
        for (int r = 0; r < size; r++) printf(" %llu", (unsigned long long)counts[r]);
        /* The optimum of the emulated costs: shares as 1 / (r + 1), rank 0's
           at most its capacity (past it, at ten sweeps per cell, it would be
           the slowest with these shares). */
        double weights = 0;
        for (int r = 0; r < size; r++) weights += 1.0 / (r + 1);
        double rank0 = (double)total / weights;
        if (rank0 > (double)capacity) rank0 = (double)capacity;
        printf("\njacobi: cells per rank at the optimum of the emulated costs: %.0f", rank0);
        for (int r = 1; r < size; r++)
            printf(" %.0f", ((double)total - rank0) / (r + 1) / (weights - 1.0));
        printf("\njacobi: %d moves, the last after iteration %llu; the last %llu iterations took "
               "%.3g ms each on average\n",
               moves, (unsigned long long)last_move, (unsigned long long)tail, last * 1e3);
        printf("jacobi: %s (%llu of %llu cells differ from the single-rank run)\n",
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
