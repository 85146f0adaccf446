/* hetbal.h from C: weighted partitions (hetbal_partition) and the least-moving
   partition within a tolerance (hetbal_partition_moving) on the answers the
   Rust tests and docs expect, and every bad input refused with
   HETBAL_ERROR_INPUT, a message naming the argument, and the outputs left as
   they were. Exit 0 when everything holds; each failure is printed. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hetbal.h"

static int failures = 0;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            failures++;                                                         \
            fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                       \
            fprintf(stderr, " (last error: %s)\n", hetbal_last_error());        \
        }                                                                       \
    } while (0)

/* An input error whose message contains `word`. */
static void refused(hetbal_status status, const char *word, const char *what) {
    CHECK(status == HETBAL_ERROR_INPUT, "%s: status %d, expected HETBAL_ERROR_INPUT", what, status);
    CHECK(strstr(hetbal_last_error(), word) != NULL, "%s: the message does not name %s", what, word);
}

static int same_cuts(const uint64_t *a, const uint64_t *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static void partitions(void) {
    /* Six cells with 1 to 6 particles; P0 is twice as fast as P1:
       P0 takes 1 + ... + 5 (15 s), P1 takes 6 (12 s). */
    const double w[6] = {1, 2, 3, 4, 5, 6}, s[2] = {1, 2};
    uint64_t cuts[3] = {9, 9, 9};
    double bottleneck = -1;
    CHECK(hetbal_partition(6, w, 2, s, cuts, &bottleneck) == HETBAL_OK, "partition");
    CHECK(same_cuts(cuts, (const uint64_t[]){0, 5, 6}, 3) && bottleneck == 15,
          "partition: cuts %llu %llu %llu, bottleneck %g", (unsigned long long)cuts[0],
          (unsigned long long)cuts[1], (unsigned long long)cuts[2], bottleneck);
    CHECK(hetbal_partition(6, w, 2, s, cuts, NULL) == HETBAL_OK, "partition without the bottleneck");
    /* A very slow processor in the middle gets nothing. */
    const double w2[4] = {3, 1, 2, 2}, s2[3] = {1, 100, 1};
    uint64_t cuts2[4];
    CHECK(hetbal_partition(4, w2, 3, s2, cuts2, &bottleneck) == HETBAL_OK, "slow processor");
    CHECK(same_cuts(cuts2, (const uint64_t[]){0, 2, 2, 4}, 4) && bottleneck == 4,
          "slow processor: cuts %llu %llu %llu %llu, bottleneck %g", (unsigned long long)cuts2[0],
          (unsigned long long)cuts2[1], (unsigned long long)cuts2[2], (unsigned long long)cuts2[3], bottleneck);
    /* No items (weights NULL): every cut is 0. */
    CHECK(hetbal_partition(0, NULL, 3, s2, cuts2, &bottleneck) == HETBAL_OK, "no items");
    CHECK(same_cuts(cuts2, (const uint64_t[]){0, 0, 0, 0}, 4) && bottleneck == 0, "no items: cuts");
}

static void moving(void) {
    /* Eight equal items on two equal processors, now 5 + 3. */
    const double w[8] = {1, 1, 1, 1, 1, 1, 1, 1}, s[2] = {1, 1};
    const uint64_t current[3] = {0, 5, 8};
    uint64_t cuts[3] = {9, 9, 9}, moved = 99;
    double bottleneck = -1;
    /* The optimum, 4 + 4: one item moves. */
    CHECK(hetbal_partition_moving(8, w, 2, s, current, 0.0, NULL, cuts, &bottleneck, &moved) == HETBAL_OK,
          "tolerance 0");
    CHECK(same_cuts(cuts, (const uint64_t[]){0, 4, 8}, 3) && bottleneck == 4 && moved == 1,
          "tolerance 0: cuts %llu %llu %llu, bottleneck %g, moved %llu", (unsigned long long)cuts[0],
          (unsigned long long)cuts[1], (unsigned long long)cuts[2], bottleneck, (unsigned long long)moved);
    /* 25 % above the optimum: 5 + 3 is within it, nothing moves. */
    CHECK(hetbal_partition_moving(8, w, 2, s, current, 0.25, NULL, cuts, &bottleneck, &moved) == HETBAL_OK,
          "tolerance 0.25");
    CHECK(same_cuts(cuts, current, 3) && bottleneck == 5 && moved == 0,
          "tolerance 0.25: cuts %llu %llu %llu, bottleneck %g, moved %llu", (unsigned long long)cuts[0],
          (unsigned long long)cuts[1], (unsigned long long)cuts[2], bottleneck, (unsigned long long)moved);
    /* Sizes in bytes: the item that moves weighs 100 bytes. */
    const uint64_t sizes[8] = {1, 1, 1, 1, 100, 1, 1, 1};
    CHECK(hetbal_partition_moving(8, w, 2, s, current, 0.0, sizes, cuts, NULL, &moved) == HETBAL_OK && moved == 100,
          "sizes: moved %llu", (unsigned long long)moved);
    /* In place (cuts_out is current), optional outputs NULL. */
    uint64_t now[3] = {0, 6, 8};
    CHECK(hetbal_partition_moving(8, w, 2, s, now, 0.0, NULL, now, NULL, NULL) == HETBAL_OK &&
              same_cuts(now, (const uint64_t[]){0, 4, 8}, 3),
          "in place: cuts %llu %llu %llu", (unsigned long long)now[0], (unsigned long long)now[1],
          (unsigned long long)now[2]);
}

static void bad_input(void) {
    const double w[3] = {1, 1, 1}, nan[3] = {1, NAN, 1}, s[2] = {1, 1}, zero[2] = {1, 0};
    const uint64_t current[3] = {0, 2, 3}, bad_current[3] = {1, 2, 3}, short_current[3] = {0, 2, 2};
    uint64_t cuts[3] = {7, 7, 7}, moved = 77;
    double bottleneck = -7;
    refused(hetbal_partition(3, nan, 2, s, cuts, &bottleneck), "weights[1]", "NaN weight");
    refused(hetbal_partition(3, (const double[]){1, -1, 1}, 2, s, cuts, &bottleneck), "weights[1]",
            "negative weight");
    refused(hetbal_partition(3, (const double[]){1, INFINITY, 1}, 2, s, cuts, &bottleneck), "weights[1]",
            "infinite weight");
    refused(hetbal_partition(3, w, 2, zero, cuts, &bottleneck), "seconds_per_unit[1]", "zero speed");
    refused(hetbal_partition(3, w, 2, (const double[]){NAN, 1}, cuts, &bottleneck), "seconds_per_unit[0]",
            "NaN speed");
    refused(hetbal_partition(3, w, 0, s, cuts, &bottleneck), "n_procs is 0", "n_procs = 0");
    refused(hetbal_partition(3, w, 2, s, NULL, &bottleneck), "cuts_out", "NULL cuts_out");
    refused(hetbal_partition(3, NULL, 2, s, cuts, &bottleneck), "weights", "NULL weights");
    refused(hetbal_partition(3, w, 2, NULL, cuts, &bottleneck), "seconds_per_unit", "NULL seconds_per_unit");
    refused(hetbal_partition((size_t)1 << 50, w, 2, s, cuts, &bottleneck), "beyond", "absurd n_items");
    CHECK(same_cuts(cuts, (const uint64_t[]){7, 7, 7}, 3) && bottleneck == -7, "outputs changed by a failure");

    refused(hetbal_partition_moving(3, nan, 2, s, current, 0, NULL, cuts, &bottleneck, &moved), "weights[1]",
            "moving: NaN weight");
    refused(hetbal_partition_moving(3, w, 0, s, current, 0, NULL, cuts, &bottleneck, &moved), "n_procs is 0",
            "moving: n_procs = 0");
    refused(hetbal_partition_moving(3, w, 2, s, current, 0, NULL, NULL, &bottleneck, &moved), "cuts_out",
            "moving: NULL cuts_out");
    refused(hetbal_partition_moving(3, w, 2, s, NULL, 0, NULL, cuts, &bottleneck, &moved), "current",
            "moving: NULL current");
    refused(hetbal_partition_moving(3, w, 2, s, bad_current, 0, NULL, cuts, &bottleneck, &moved), "current[0]",
            "moving: current not from 0");
    refused(hetbal_partition_moving(3, w, 2, s, short_current, 0, NULL, cuts, &bottleneck, &moved), "current[2]",
            "moving: current not up to n_items");
    refused(hetbal_partition_moving(3, w, 2, s, current, NAN, NULL, cuts, &bottleneck, &moved), "tolerance",
            "moving: NaN tolerance");
    refused(hetbal_partition_moving(3, w, 2, s, current, -0.5, NULL, cuts, &bottleneck, &moved), "tolerance",
            "moving: negative tolerance");
    const uint64_t huge[3] = {UINT64_MAX, 1, 1};
    refused(hetbal_partition_moving(3, w, 2, s, current, 0, huge, cuts, &bottleneck, &moved), "sizes[1]",
            "moving: sizes overflow");
    CHECK(same_cuts(cuts, (const uint64_t[]){7, 7, 7}, 3) && bottleneck == -7 && moved == 77,
          "moving: outputs changed by a failure");
}

int main(void) {
    partitions();
    moving();
    bad_input();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("hetbal.h: partitions and least-moving partitions as expected, every bad input refused\n");
    return 0;
}
