/* Variable-size items and the weighted balancer from C, on 4 ranks: items of
   0 to 9 elements (a 16-byte struct each) moved to new cuts ten times, ranks
   left empty and filled again, every element checked; bad offsets or cuts on
   one rank refused on every rank with every buffer untouched; the weighted
   balancer moving heavy items off a slow rank, items and weights checked.
   Run: mpirun -np 4 items. Exit 0 when everything holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetbal_mpi.h"
#include "mpi_check.h"

typedef struct { uint64_t item; uint64_t place; } element;

enum { RANKS = 4, ITEMS = 80 };

/* Elements of item g: 0 to 9, every sixth empty. */
static uint64_t size_of_item(uint64_t g) { return g % 6 == 2 ? 0 : (g * 7) % 10; }

/* The items first .. last: malloc'ed data (NULL when empty) and offsets. */
static void items(uint64_t first, uint64_t last, element **data, uint64_t **offsets) {
    *offsets = malloc((last - first + 1) * sizeof(uint64_t));
    (*offsets)[0] = 0;
    for (uint64_t g = first; g < last; g++)
        (*offsets)[g - first + 1] = (*offsets)[g - first] + size_of_item(g);
    uint64_t n = (*offsets)[last - first];
    *data = n ? malloc(n * sizeof(element)) : NULL;
    for (uint64_t g = first; g < last; g++)
        for (uint64_t j = 0; j < size_of_item(g); j++)
            (*data)[(*offsets)[g - first] + j] = (element){g, j};
}

/* Whether data and offsets hold exactly the items first .. last. */
static int holds(const element *data, const uint64_t *offsets, uint64_t count,
                 uint64_t first, uint64_t last) {
    element *want;
    uint64_t *want_offsets;
    items(first, last, &want, &want_offsets);
    int same = count == last - first &&
               memcmp(offsets, want_offsets, (count + 1) * sizeof(uint64_t)) == 0 &&
               (offsets[count] == 0 ||
                memcmp(data, want, offsets[count] * sizeof(element)) == 0);
    free(want);
    free(want_offsets);
    return same;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    uint64_t cuts[RANKS + 1] = {0, 20, 40, 60, ITEMS};
    element *data;
    uint64_t *offsets, count = cuts[rank + 1] - cuts[rank];
    items(cuts[rank], cuts[rank + 1], &data, &offsets);

    /* Ten moves, some ranks left empty. */
    for (int m = 0; m < 10; m++) {
        uint64_t next[RANKS + 1] = {0, 0, 0, 0, ITEMS};
        for (int r = 1; r < RANKS; r++) next[r] = (uint64_t)((m * 17 + r * 23) % ITEMS);
        if (m % 3 == 1) next[2] = next[1];
        for (int r = 1; r <= RANKS; r++) if (next[r] < next[r - 1]) next[r] = next[r - 1];
        void *buffer = data;
        hetbal_status s = hetbal_mpi_redistribute_items(MPI_COMM_WORLD, sizeof(element), &buffer,
                                                        &offsets, &count, next, RANKS + 1);
        data = buffer;
        CHECK(s == HETBAL_OK, "move %d", m);
        CHECK(holds(data, offsets, count, next[rank], next[rank + 1]), "move %d: wrong items", m);
        memcpy(cuts, next, sizeof(cuts));
    }

    /* Bad offsets on rank 2, cuts that differ on rank 1: refused on every
       rank, nothing changed. */
    uint64_t saved = count > 0 ? offsets[1] : 0;
    if (rank == 2 && count > 1) offsets[1] = offsets[count] + 1;
    void *buffer = data;
    hetbal_status s = hetbal_mpi_redistribute_items(MPI_COMM_WORLD, sizeof(element), &buffer,
                                                    &offsets, &count, cuts, RANKS + 1);
    data = buffer;
    if (rank == 2 && count > 1) offsets[1] = saved;
    CHECK(s == HETBAL_ERROR_INPUT, "bad offsets on rank 2 not refused: %d", (int)s);
    CHECK(holds(data, offsets, count, cuts[rank], cuts[rank + 1]), "bad offsets: items changed");
    uint64_t other[RANKS + 1];
    memcpy(other, cuts, sizeof(other));
    if (rank == 1) other[2] = other[2] < ITEMS ? other[2] + 1 : other[2] - 1;
    s = hetbal_mpi_redistribute_items(MPI_COMM_WORLD, sizeof(element), &buffer, &offsets, &count,
                                      other, RANKS + 1);
    data = buffer;
    CHECK(s == HETBAL_ERROR_INPUT, "cuts that differ not refused: %d", (int)s);
    CHECK(holds(data, offsets, count, cuts[rank], cuts[rank + 1]), "other cuts: items changed");
    s = hetbal_mpi_redistribute_items(MPI_COMM_WORLD, sizeof(element), &buffer, &offsets, &count,
                                      cuts, RANKS);
    CHECK(s == HETBAL_ERROR_INPUT, "too few cuts not refused: %d", (int)s);

    /* The weighted balancer: back to even cuts, items 30 .. 39 ten times
       heavier, rank 3 three times slower (its compute time given). */
    uint64_t even[RANKS + 1] = {0, 20, 40, 60, ITEMS};
    s = hetbal_mpi_redistribute_items(MPI_COMM_WORLD, sizeof(element), &buffer, &offsets, &count,
                                      even, RANKS + 1);
    data = buffer;
    CHECK(s == HETBAL_OK, "back to even cuts");
    double *weights = malloc(count * sizeof(double));
    double load = 0.0;
    for (uint64_t k = 0; k < count; k++) {
        uint64_t g = even[rank] + k;
        weights[k] = g >= 30 && g < 40 ? 10.0 : 1.0;
        load += weights[k];
    }
    const double speed[RANKS] = {1e-3, 1e-3, 1e-3, 3e-3};
    hetbal_weighted_balancer *b = NULL;
    CHECK(hetbal_mpi_weighted_balancer_create(MPI_COMM_WORLD, 0.05, &b) == HETBAL_OK, "create");
    hetbal_weighted_decision d;
    buffer = data;
    s = hetbal_mpi_weighted_balancer_step(b, sizeof(element), &buffer, &offsets, &weights, &count,
                                          speed[rank] * load, 50, &d);
    data = buffer;
    CHECK(s == HETBAL_OK && d.redistribute == 1, "the weighted step did not move");
    CHECK(d.balanced_seconds <= 1.05 * d.optimum_seconds + 1e-15, "not within 5 %%");
    CHECK(d.count == count, "decision count %llu, count %llu", (unsigned long long)d.count,
          (unsigned long long)count);
    CHECK(holds(data, offsets, count, d.first, d.first + count), "weighted move: wrong items");
    for (uint64_t k = 0; k < count; k++) {
        uint64_t g = d.first + k;
        CHECK(weights[k] == (g >= 30 && g < 40 ? 10.0 : 1.0), "the weight of item %llu",
              (unsigned long long)g);
    }
    /* Every rank's cuts after the step: rank r holds cuts[r] .. cuts[r + 1]. */
    uint64_t after[RANKS + 1];
    CHECK(hetbal_mpi_weighted_balancer_cuts(b, after, RANKS + 1) == HETBAL_OK, "cuts");
    CHECK(after[rank] == d.first && after[rank + 1] == d.first + count && after[RANKS] == ITEMS,
          "cuts %llu .. %llu, decision %llu + %llu", (unsigned long long)after[rank],
          (unsigned long long)after[rank + 1], (unsigned long long)d.first,
          (unsigned long long)count);
    CHECK(hetbal_mpi_weighted_balancer_cuts(b, after, RANKS) == HETBAL_ERROR_INPUT,
          "too small a capacity accepted");
    /* A NaN weight on rank 0: refused on every rank. */
    double kept = count ? weights[0] : 0.0;
    if (rank == 0 && count) weights[0] = 0.0 / 0.0;
    buffer = data;
    s = hetbal_mpi_weighted_balancer_step(b, sizeof(element), &buffer, &offsets, &weights, &count,
                                          1e-3, 10, &d);
    data = buffer;
    if (rank == 0 && count) weights[0] = kept;
    CHECK(s == HETBAL_ERROR_INPUT, "a NaN weight not refused: %d", (int)s);
    hetbal_mpi_weighted_balancer_free(b);
    hetbal_mpi_weighted_balancer_free(b); /* freed: does nothing */

    free(data);
    free(offsets);
    free(weights);
    int all_failures = 0;
    MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all_failures == 0)
        printf("hetbal_mpi.h: ten moves of variable-size items and a weighted balancer step checked, bad input refused on every rank\n");
    MPI_Finalize();
    return all_failures != 0;
}
