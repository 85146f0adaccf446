/* hetbal_mpi.h from C, on 4 ranks: a ring redistribution of malloc'ed items
   (each item its global position and a payload) checked item by item, with a
   plan, with a plan with start-ups, and on a path where one rank holds no
   item before (its buffer NULL) and another none after, then
   every bad input refused on every rank with each rank's items untouched.
   Run: mpirun -np 4 redistribute. Exit 0 when everything holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetbal_mpi.h"
#include "mpi_check.h"

typedef struct { uint64_t position; double payload[3]; } item;

static const uint64_t LOADS[4] = {9, 1, 1, 1}, TARGETS[4] = {1, 1, 3, 7};

/* This rank's items before, with `loads`: global positions first .. first +
   count - 1 (NULL for none). */
static item *fresh(const uint64_t *loads, uint64_t *count) {
    uint64_t first = 0;
    for (int r = 0; r < rank; r++) first += loads[r];
    *count = loads[rank];
    item *items = *count ? malloc(*count * sizeof(item)) : NULL;
    for (uint64_t k = 0; k < *count; k++)
        items[k] = (item){first + k, {1.0 * (first + k), -2.0, 0.5}};
    return items;
}

static int untouched(const item *items, uint64_t count) {
    uint64_t expected_count;
    item *expected = fresh(LOADS, &expected_count);
    int same = count == expected_count && memcmp(items, expected, count * sizeof(item)) == 0;
    free(expected);
    return same;
}

/* Redistributes fresh items with `plan` (from `loads` to `targets`, 12 items)
   and checks that every item arrives once, undamaged, in the global cyclic
   order; on a `path`, in the global order from rank 0 (no item crossed the
   link between the last rank and the first). */
static void redistributed_in_order(const hetbal_plan *plan, const uint64_t *loads, const uint64_t *targets, int path,
                                   const char *what) {
    uint64_t count;
    item *items = fresh(loads, &count);
    void *buffer = items;
    CHECK(hetbal_mpi_ring_redistribute(MPI_COMM_WORLD, plan, sizeof(item), &buffer, &count) == HETBAL_OK,
          "%s: redistribute", what);
    items = buffer;
    CHECK(count == targets[rank], "%s: count %llu, expected %llu", what, (unsigned long long)count,
          (unsigned long long)targets[rank]);
    for (uint64_t k = 0; k < count; k++)
        CHECK(items[k].payload[0] == 1.0 * items[k].position && items[k].payload[1] == -2.0,
              "%s: item %llu damaged", what, (unsigned long long)k);
    /* The plan says where this rank's items start now. */
    CHECK(count == 0 || items[0].position == hetbal_plan_first_position(plan, (size_t)rank),
          "%s: first position %llu, the plan says %llu", what,
          (unsigned long long)items[0].position,
          (unsigned long long)hetbal_plan_first_position(plan, (size_t)rank));
    CHECK(hetbal_plan_first_position(plan, 4) == UINT64_MAX, "%s: processor 4 of 4", what);
    /* Gathered in rank order, the positions are a rotation of 0..11. */
    uint64_t all[12];
    int counts[4], displs[4];
    for (int r = 0, d = 0; r < 4; d += (int)targets[r], r++) counts[r] = (int)targets[r], displs[r] = d;
    uint64_t mine[12];
    for (uint64_t k = 0; k < count && k < 12; k++) mine[k] = items[k].position;
    MPI_Gatherv(mine, (int)count, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int k = 1; k < 12; k++)
            CHECK(all[k] == (all[k - 1] + 1) % 12, "%s: position %d is %llu after %llu", what, k,
                  (unsigned long long)all[k], (unsigned long long)all[k - 1]);
    if (rank == 0 && path) CHECK(all[0] == 0, "%s: rank 0's first item is %llu", what, (unsigned long long)all[0]);
    free(items);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double c[4] = {2.0, 1.0, 1.5, 1.0}, back[4] = {1.0, 1.0, 1.0, 1.0};
    hetbal_plan *plan = NULL;
    CHECK(hetbal_ring_plan(4, LOADS, TARGETS, c, back, &plan) == HETBAL_OK, "plan");

    redistributed_in_order(plan, LOADS, TARGETS, 0, "plan");
    /* With start-ups (one message per planned transfer): the same items, the
       same order. */
    double l[4] = {3.0, 0.0, 2.0, 1.0};
    hetbal_plan *startups = NULL;
    CHECK(hetbal_ring_plan_startups(4, LOADS, TARGETS, c, back, l, l, &startups) == HETBAL_OK,
          "plan with start-ups");
    redistributed_in_order(startups, LOADS, TARGETS, 0, "plan with start-ups");
    hetbal_plan_free(startups);
    /* A path: rank 0 holds no item (its buffer NULL), rank 3 ends with none;
       P1 gives 4 to P0, P2 2 to P1, P3 3 to P2, none over the missing link. */
    static const uint64_t PATH_LOADS[4] = {0, 6, 3, 3}, PATH_TARGETS[4] = {4, 4, 4, 0};
    hetbal_plan *path = NULL;
    CHECK(hetbal_ring_plan_path(4, PATH_LOADS, PATH_TARGETS, c, back, NULL, NULL, &path) == HETBAL_OK, "path plan");
    redistributed_in_order(path, PATH_LOADS, PATH_TARGETS, 1, "path");
    hetbal_plan_free(path);
    CHECK(hetbal_ring_plan_path(4, PATH_LOADS, PATH_TARGETS, c, back, l, l, &path) == HETBAL_OK,
          "path plan with start-ups");
    redistributed_in_order(path, PATH_LOADS, PATH_TARGETS, 1, "path with start-ups");
    hetbal_plan_free(path);

    uint64_t count;
    item *items;
    void *buffer;
    /* Bad inputs: refused on every rank, nothing moved. */
    items = fresh(LOADS, &count);
    buffer = items;
    CHECK(hetbal_mpi_ring_redistribute(MPI_COMM_WORLD, plan, 0, &buffer, &count) == HETBAL_ERROR_INPUT,
          "item_bytes 0");
    CHECK(strstr(hetbal_last_error(), "item_bytes") != NULL, "item_bytes 0: message");
    /* Rank 2 passes NULL items: it is told so, the others that rank 2 was wrong. */
    hetbal_status s = hetbal_mpi_ring_redistribute(MPI_COMM_WORLD, plan, sizeof(item),
                                                   rank == 2 ? NULL : &buffer, &count);
    CHECK(s == HETBAL_ERROR_INPUT, "NULL items on rank 2: status %d", s);
    CHECK(strstr(hetbal_last_error(), rank == 2 ? "items is NULL" : "rank 2") != NULL, "NULL items: message");
    /* Rank 1 gives one item more than the plan's load (its buffer has room). */
    buffer = realloc(buffer, (count + 1) * sizeof(item));
    uint64_t wrong = rank == 1 ? count + 1 : count;
    s = hetbal_mpi_ring_redistribute(MPI_COMM_WORLD, plan, sizeof(item), &buffer, &wrong);
    CHECK(s == HETBAL_ERROR_INPUT, "a count that is not the load: status %d", s);
    CHECK(wrong == (rank == 1 ? count + 1 : count), "the count changed on a failure");
    uint64_t huge = UINT64_MAX / 2;
    CHECK(hetbal_mpi_ring_redistribute(MPI_COMM_WORLD, plan, sizeof(item), &buffer, &huge) == HETBAL_ERROR_INPUT,
          "count x item_bytes overflows");
    CHECK(strstr(hetbal_last_error(), "overflows") != NULL, "overflow: message");
    CHECK(hetbal_mpi_ring_redistribute(MPI_COMM_NULL, plan, sizeof(item), &buffer, &count) == HETBAL_ERROR_INPUT,
          "MPI_COMM_NULL");
    CHECK(strstr(hetbal_last_error(), "MPI_COMM_NULL") != NULL, "MPI_COMM_NULL: message");
    CHECK(untouched(buffer, count), "the items changed after refused calls");

    /* A freed plan is refused on every rank. */
    hetbal_plan_free(plan);
    CHECK(hetbal_mpi_ring_redistribute(MPI_COMM_WORLD, plan, sizeof(item), &buffer, &count) == HETBAL_ERROR_INPUT,
          "freed plan");
    CHECK(untouched(buffer, count), "the items changed after a freed plan");
    free(buffer);

    /* The balancer: bad arguments, then measured links on a real run. */
    hetbal_balancer *b = NULL;
    double nan_costs[4] = {1, 1, 0.0 / 0.0, 1};
    CHECK(hetbal_mpi_balancer_create(MPI_COMM_WORLD, 8, nan_costs, NULL, &b) == HETBAL_ERROR_INPUT && b == NULL,
          "NaN link cost");
    CHECK(hetbal_mpi_balancer_create(MPI_COMM_WORLD, 0, NULL, NULL, &b) == HETBAL_ERROR_INPUT, "item_bytes 0");
    CHECK(hetbal_mpi_balancer_create(MPI_COMM_WORLD, 8, NULL, back, &b) == HETBAL_ERROR_INPUT, "c_pred alone");
    CHECK(hetbal_mpi_balancer_create(MPI_COMM_WORLD, 8, NULL, NULL, &b) == HETBAL_OK, "measured balancer");
    hetbal_decision d;
    uint64_t n = 100;
    void *cells = calloc(n, 8);
    CHECK(hetbal_mpi_balancer_step(b, -1.0, 10, &cells, &n, &d) == HETBAL_ERROR_INPUT, "negative time");
    CHECK(hetbal_mpi_balancer_step(b, 0.01, 10, &cells, &n, NULL) == HETBAL_ERROR_INPUT, "NULL decision");
    CHECK(hetbal_mpi_balancer_step(NULL, 0.01, 10, &cells, &n, &d) == HETBAL_ERROR_INPUT, "NULL balancer");
    CHECK(n == 100, "count changed by refused steps");
    hetbal_mpi_balancer_free(b);
    hetbal_mpi_balancer_free(b); /* twice: no harm */
    hetbal_mpi_balancer_free(NULL);
    free(cells);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf("hetbal_mpi.h: 12 items redistributed in order on 4 ranks, with and without start-ups, on a path with "
               "empty ranks, every bad input refused on every rank\n");
    MPI_Finalize();
    return total ? 1 : 0;
}
