/* The balancer's model and policy from C, on 4 ranks, stepped on emulated
   compute times (each rank reports the time its items would take on the
   library's memory-cliff scenario: rank 0 computes 1e-4 s per item up to 1500
   items and 20 times slower per item past them, rank 1 2e-4 s up to 2500 and
   15 times slower past them, ranks 2 and 3 steady at 5e-4 and 1e-3 s per
   item; 2000 items each, links of 1 us per item). With
   hetbal_mpi_balancer_set_model(b, HETBAL_MODEL_FUNCTIONAL) and the
   profitability policy the balancer moves at most 6 times, never after
   iteration 9, and ends within 5% of the optimum; with the constant model it
   moves every two or three iterations and ends far from it. Every rank's items are checked
   after every step (order kept, nothing lost). HETBAL_POLICY_FIXED with 1
   redistribution over 10 iterations moves after iteration 5 only; a bad model
   or policy is refused and leaves the balancer as it was; a model set on one
   rank only makes the next step fail on every rank, nothing moved.
   Run: mpirun -np 4 balancer. Exit 0 when everything holds. */
#include <stdio.h>
#include <stdlib.h>

#include "hetbal_mpi.h"
#include "mpi_check.h"

enum { RANKS = 4, EACH = 2000, TOTAL = RANKS * EACH, ITERATIONS = 30 };

/* The compute seconds of rank r holding x items (the memory-cliff scenario). */
static double seconds_of(int r, uint64_t x) {
    double per_item[RANKS] = {1e-4, 2e-4, 5e-4, 1e-3};
    double beyond[RANKS] = {2e-3, 3e-3, 5e-4, 1e-3};
    uint64_t capacity[RANKS] = {1500, 2500, UINT64_MAX, UINT64_MAX};
    return (x <= capacity[r] ? per_item[r] : beyond[r]) * (double)x;
}

/* Whether items[0..count) are the global positions first, first + 1, ...
   (mod TOTAL). */
static int holds(const uint64_t *items, uint64_t count, uint64_t first) {
    for (uint64_t k = 0; k < count; k++)
        if (items[k] != (first + k) % TOTAL) return 0;
    return 1;
}

/* The slowest rank's time with every rank's count. */
static double step_time(uint64_t count) {
    double mine = seconds_of(rank, count), slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/* A balancer on links of 1 us per item (both ways) with `model` and the
   profitability policy, stepped `iterations` times from 2000 items each.
   Returns its moves; `last_move` the last iteration that moved, `final` the
   last iteration's time. */
static int run(int model, int policy, uint32_t redistributions, int iterations, int *last_move,
               double *final) {
    double links[RANKS] = {1e-6, 1e-6, 1e-6, 1e-6};
    hetbal_balancer *b = NULL;
    CHECK(hetbal_mpi_balancer_create(MPI_COMM_WORLD, sizeof(uint64_t), links, links, &b) == HETBAL_OK,
          "create");
    CHECK(hetbal_mpi_balancer_set_model(b, model) == HETBAL_OK, "set_model %d", model);
    CHECK(hetbal_mpi_balancer_set_policy(b, policy, redistributions) == HETBAL_OK, "set_policy %d",
          policy);
    uint64_t count = EACH;
    uint64_t *items = malloc(count * sizeof(uint64_t));
    for (uint64_t k = 0; k < count; k++) items[k] = (uint64_t)rank * EACH + k;
    int moves = 0;
    *last_move = 0;
    for (int k = 1; k <= iterations; k++) {
        *final = step_time(count);
        hetbal_decision d;
        void *buffer = items;
        hetbal_status s = hetbal_mpi_balancer_step(b, seconds_of(rank, count),
                                                   (uint64_t)(iterations - k), &buffer, &count, &d);
        items = buffer;
        CHECK(s == HETBAL_OK, "model %d, iteration %d: step", model, k);
        CHECK(d.iteration == (uint32_t)k, "iteration %u, not %d", d.iteration, k);
        CHECK(d.count == count, "the decision's count");
        CHECK(holds(items, count, d.first), "model %d, iteration %d: wrong items", model, k);
        uint64_t all = 0;
        MPI_Allreduce(&count, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        CHECK(all == TOTAL, "%llu items in all", (unsigned long long)all);
        if (d.redistribute) {
            moves++;
            *last_move = k;
        }
    }
    free(items);
    hetbal_mpi_balancer_free(b);
    return moves;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != RANKS) {
        if (rank == 0) fprintf(stderr, "balancer: run on %d ranks\n", RANKS);
        MPI_Finalize();
        return 1;
    }
    /* The optimum: rank 0 at its capacity (1500), rank 1 at its (2500), ranks
       2 and 3 sharing 4000 as 2 to 1 (1.3335 s at 2667 and 1333). */
    const double optimum = 1.3335;
    int last = 0;
    double final = 0;
    int moves = run(HETBAL_MODEL_FUNCTIONAL, HETBAL_POLICY_PROFITABILITY, 0, ITERATIONS, &last, &final);
    CHECK(moves >= 1 && moves <= 6, "functional: %d moves", moves);
    CHECK(last <= 9, "functional: moved at iteration %d", last);
    CHECK(final <= 1.05 * optimum, "functional: %g s at the end", final);
    int cubic = run(HETBAL_MODEL_MONOTONE_CUBIC, HETBAL_POLICY_PROFITABILITY, 0, ITERATIONS, &last, &final);
    CHECK(cubic >= 1 && cubic < ITERATIONS - 1, "monotone cubic: %d moves", cubic);
    int constant = run(HETBAL_MODEL_CONSTANT, HETBAL_POLICY_PROFITABILITY, 0, ITERATIONS, &last, &final);
    CHECK(constant >= (ITERATIONS - 1) / 3, "constant: %d moves", constant);
    CHECK(final > 5 * optimum, "constant: %g s at the end", final);
    /* One redistribution over 10 iterations: after iteration 5. */
    int fixed = run(HETBAL_MODEL_CONSTANT, HETBAL_POLICY_FIXED, 1, 10, &last, &final);
    CHECK(fixed == 1 && last == 5, "fixed-1: %d moves, the last at %d", fixed, last);
    int never = run(HETBAL_MODEL_FUNCTIONAL, HETBAL_POLICY_NEVER, 0, 10, &last, &final);
    CHECK(never == 0, "never: %d moves", never);

    /* Bad settings: refused, the balancer unchanged. */
    double links[RANKS] = {1e-6, 1e-6, 1e-6, 1e-6};
    hetbal_balancer *b = NULL;
    CHECK(hetbal_mpi_balancer_create(MPI_COMM_WORLD, sizeof(uint64_t), links, links, &b) == HETBAL_OK,
          "create");
    CHECK(hetbal_mpi_balancer_set_model(b, 3) == HETBAL_ERROR_INPUT, "model 3 accepted");
    CHECK(hetbal_mpi_balancer_set_model(b, -1) == HETBAL_ERROR_INPUT, "model -1 accepted");
    CHECK(hetbal_mpi_balancer_set_policy(b, 4, 0) == HETBAL_ERROR_INPUT, "policy 4 accepted");
    CHECK(hetbal_mpi_balancer_set_model(NULL, HETBAL_MODEL_CONSTANT) == HETBAL_ERROR_INPUT,
          "a NULL balancer accepted");
    CHECK(hetbal_mpi_balancer_set_policy(NULL, HETBAL_POLICY_NEVER, 0) == HETBAL_ERROR_INPUT,
          "a NULL balancer accepted");
    /* A model set on rank 1 only: the step fails on every rank, nothing moves. */
    if (rank == 1)
        CHECK(hetbal_mpi_balancer_set_model(b, HETBAL_MODEL_FUNCTIONAL) == HETBAL_OK, "set_model");
    uint64_t count = EACH;
    uint64_t *items = malloc(count * sizeof(uint64_t));
    for (uint64_t k = 0; k < count; k++) items[k] = (uint64_t)rank * EACH + k;
    hetbal_decision d;
    void *buffer = items;
    hetbal_status s = hetbal_mpi_balancer_step(b, seconds_of(rank, count), 10, &buffer, &count, &d);
    items = buffer;
    CHECK(s == HETBAL_ERROR_INPUT, "another model on rank 1: %d", (int)s);
    CHECK(count == EACH && holds(items, count, (uint64_t)rank * EACH), "items changed");
    hetbal_mpi_balancer_free(b);
    CHECK(hetbal_mpi_balancer_set_model(b, HETBAL_MODEL_CONSTANT) == HETBAL_ERROR_INPUT,
          "a freed balancer accepted");
    free(items);

    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all_failures == 0)
        printf("hetbal_mpi.h: the balancer's models on a memory cliff (functional %d moves, "
               "monotone cubic %d, constant %d), fixed and never policies, bad settings refused\n",
               moves, cubic, constant);
    MPI_Finalize();
    return all_failures != 0;
}
