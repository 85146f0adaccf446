/* hetbal_mpi.h's item buffer from C, on 4 ranks: kept items never move.
   Each rank's items (each its global position and a payload) live in a
   hetbal_item_buffer and go through a series of ring redistributions (plans
   with and without start-ups, rings and paths, ranks receiving in front of
   their items and behind them, a rank ending empty, ranks starting empty);
   after each one every item is checked (value, order, the plan's first
   position) and every item a rank kept must be at the address it had before:
   the test fails if a redistribution copies or moves a rank's kept items. The
   same moves through the malloc path (hetbal_mpi_ring_redistribute) give the
   same items, and shift the kept ones (so the address check can see a move).
   Then the balancer's step on an item buffer, the same check; then every bad
   argument (NULL, freed or foreign handles, an item size that is not the
   buffer's, counts that are not the plan's load, an empty buffer) refused on
   every rank with the library's message, every buffer untouched (items,
   count and addresses); and the buffer functions' own refusals.
   Run: mpirun -np 4 item_buffer. Exit 0 when everything holds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetbal_mpi.h"
#include "mpi_check.h"

typedef struct { uint64_t position; double payload[3]; } item;

#define TOTAL 1200

static item make(uint64_t g) { return (item){g, {1.0 * (double)g, -2.0, 0.5 + (double)(g % 7)}}; }

static int intact(const item *it) {
    item expected = make(it->position);
    return it->position < TOTAL && memcmp(it, &expected, sizeof(item)) == 0;
}

/* A new buffer holding this rank's items with `loads` (positions from
   `origin` on, in rank order), filled half by resize and the data pointer,
   half by append. */
static hetbal_item_buffer *filled(const uint64_t *loads, uint64_t origin) {
    uint64_t first = origin;
    for (int r = 0; r < rank; r++) first += loads[r];
    hetbal_item_buffer *b = NULL;
    CHECK(hetbal_item_buffer_create(sizeof(item), &b) == HETBAL_OK, "create");
    uint64_t half = loads[rank] / 2;
    CHECK(hetbal_item_buffer_resize(b, half) == HETBAL_OK, "resize");
    item *items = hetbal_item_buffer_data(b);
    for (uint64_t k = 0; k < half; k++) {
        CHECK(items[k].position == 0 && items[k].payload[0] == 0.0, "resize: item %llu not zeroed",
              (unsigned long long)k);
        items[k] = make((first + k) % TOTAL);
    }
    for (uint64_t k = half; k < loads[rank]; k++) {
        item it = make((first + k) % TOTAL);
        CHECK(hetbal_item_buffer_append(b, &it, 1) == HETBAL_OK, "append");
    }
    CHECK(hetbal_item_buffer_count(b) == loads[rank], "filled: count");
    return b;
}

/* The global position of the first item in rank order (every rank's answer
   alike), or TOTAL when no rank holds any. */
static uint64_t origin_of(const item *items, uint64_t count) {
    uint64_t mine[2] = {count, count ? items[0].position : TOTAL}, all[8];
    MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, MPI_COMM_WORLD);
    for (int r = 0; r < 4; r++)
        if (all[2 * r]) return all[2 * r + 1];
    return TOTAL;
}

/* What the moves showed, summed over the run on this rank. */
static uint64_t kept_checked = 0, kept_with_front = 0, kept_with_behind = 0, malloc_moved = 0;
static int started_empty = 0, ended_empty = 0;

/* Checks this rank's items after a move planned by `plan` from positions
   starting at `origin`: `count` of them, intact, consecutive, starting at the
   plan's first position; rank 0 checks that every position is held once, in
   the ring's order. */
static void check_items(const hetbal_plan *plan, uint64_t origin, const item *items, uint64_t count,
                        uint64_t target, const char *what) {
    CHECK(count == target, "%s: count %llu, expected %llu", what, (unsigned long long)count,
          (unsigned long long)target);
    for (uint64_t k = 0; k < count; k++) {
        CHECK(intact(&items[k]), "%s: item %llu damaged", what, (unsigned long long)k);
        if (k) CHECK(items[k].position == (items[k - 1].position + 1) % TOTAL, "%s: item %llu out of order", what,
                     (unsigned long long)k);
    }
    uint64_t expected = (origin + hetbal_plan_first_position(plan, (size_t)rank)) % TOTAL;
    CHECK(count == 0 || items[0].position == expected, "%s: first position %llu, the plan says %llu", what,
          (unsigned long long)items[0].position, (unsigned long long)expected);
    int n = (int)count, counts[4], displs[4];
    MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0, d = 0; r < 4; d += counts[r], r++) displs[r] = d;
    static uint64_t mine[TOTAL], all[TOTAL];
    for (uint64_t k = 0; k < count; k++) mine[k] = items[k].position;
    MPI_Gatherv(mine, n, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0 && counts[0] + counts[1] + counts[2] + counts[3] == TOTAL)
        for (int k = 1; k < TOTAL; k++)
            CHECK(all[k] == (all[k - 1] + 1) % TOTAL, "%s: position %d is %llu after %llu", what, k,
                  (unsigned long long)all[k], (unsigned long long)all[k - 1]);
}

/* Moves the items of `*buffer` (holding `loads`) to `targets` as `plan`
   says, through the item buffer and, on a copy, through the malloc path;
   checks the items, that the two paths agree, and that every kept item of
   the item buffer stayed at its address. */
static void moved(hetbal_item_buffer *buffer, const hetbal_plan *plan, const uint64_t *loads,
                  const uint64_t *targets, const char *what) {
    static const item *where[TOTAL];
    memset(where, 0, sizeof where);
    uint64_t count = hetbal_item_buffer_count(buffer);
    CHECK(count == loads[rank], "%s: the buffer holds %llu items, expected %llu", what, (unsigned long long)count,
          (unsigned long long)loads[rank]);
    const item *items = hetbal_item_buffer_data(buffer);
    for (uint64_t k = 0; k < count; k++) where[items[k].position] = &items[k];
    uint64_t origin = origin_of(items, count);
    started_empty |= count == 0;

    /* The malloc path on a copy: the same items; a shift of the kept ones
       when items arrive in front of them. */
    uint64_t copy_count = count;
    void *copy = count ? malloc(count * sizeof(item)) : NULL;
    if (count) memcpy(copy, items, count * sizeof(item));
    static const item *copy_where[TOTAL];
    memset(copy_where, 0, sizeof copy_where);
    for (uint64_t k = 0; k < count; k++) copy_where[((item *)copy)[k].position] = &((item *)copy)[k];
    CHECK(hetbal_mpi_ring_redistribute(MPI_COMM_WORLD, plan, sizeof(item), &copy, &copy_count) == HETBAL_OK,
          "%s: malloc path", what);
    check_items(plan, origin, copy, copy_count, targets[rank], what);
    for (uint64_t k = 0; k < copy_count; k++) {
        const item *at = &((item *)copy)[k], *before = at->position < TOTAL ? copy_where[at->position] : NULL;
        malloc_moved += before && before != at;
    }

    CHECK(hetbal_mpi_ring_redistribute_buffer(MPI_COMM_WORLD, plan, sizeof(item), buffer) == HETBAL_OK,
          "%s: item buffer", what);
    count = hetbal_item_buffer_count(buffer);
    items = hetbal_item_buffer_data(buffer);
    check_items(plan, origin, items, count, targets[rank], what);
    CHECK(count == copy_count && (count == 0 || memcmp(items, copy, count * sizeof(item)) == 0),
          "%s: the malloc path and the item buffer hold different items", what);
    free(copy);
    /* The no-move guarantee: each item kept is where it was. */
    uint64_t kept = 0, front = count;
    for (uint64_t k = 0; k < count; k++) {
        const item *before = items[k].position < TOTAL ? where[items[k].position] : NULL;
        if (!before) continue;
        CHECK(before == &items[k], "%s: kept item %llu moved from %p to %p", what,
              (unsigned long long)items[k].position, (const void *)before, (const void *)&items[k]);
        if (kept++ == 0) front = k;
    }
    kept_checked += kept;
    if (kept && front > 0) kept_with_front += kept;
    if (kept && front + kept < count) kept_with_behind += kept;
    ended_empty |= count == 0;
}

/* Every rank's buffer unchanged since `snapshot` (items, count, address). */
static int unchanged(hetbal_item_buffer *b, const item *snapshot, uint64_t count, const void *data) {
    return hetbal_item_buffer_count(b) == count && hetbal_item_buffer_data(b) == data &&
           (count == 0 || memcmp(data, snapshot, count * sizeof(item)) == 0);
}

/* The message of the last failure names `text` (this rank's, or the rank
   whose arguments were wrong). */
static int says(const char *text) { return strstr(hetbal_last_error(), text) != NULL; }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int ranks;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks != 4) {
        if (rank == 0) fprintf(stderr, "run with mpirun -np 4\n");
        MPI_Finalize();
        return 2;
    }
    const double c[4] = {2.0, 1.0, 1.5, 1.0}, back[4] = {1.0, 1.0, 1.0, 1.0}, l[4] = {3.0, 0.0, 2.0, 1.0};
    /* The loads, one move after another (1,200 items). */
    enum { RING, RING_STARTUPS, PATH, PATH_STARTUPS, UNIDIRECTIONAL };
    static const struct { int kind; uint64_t targets[4]; const char *what; } MOVES[] = {
        {RING, {100, 500, 300, 300}, "ring"},
        {RING_STARTUPS, {300, 300, 300, 300}, "ring with start-ups"},
        {PATH, {0, 400, 400, 400}, "path, rank 0 ends empty"},
        {PATH_STARTUPS, {600, 600, 0, 0}, "path with start-ups, rank 0 starts empty, 2 and 3 end so"},
        {RING, {200, 300, 400, 300}, "ring, ranks 2 and 3 start empty"},
        {UNIDIRECTIONAL, {500, 200, 200, 300}, "unidirectional ring"},
        {RING, {300, 300, 300, 300}, "ring, back to even"},
    };
    const size_t moves = sizeof MOVES / sizeof MOVES[0];
    uint64_t loads[4] = {600, 100, 100, 400};
    hetbal_item_buffer *buffer = filled(loads, 0);
    /* Odd ranks give back what they send as it leaves: the same items. */
    CHECK(hetbal_item_buffer_give_back_sent(buffer, rank % 2) == HETBAL_OK, "give back sent");
    for (size_t m = 0; m < moves; m++) {
        const uint64_t *targets = MOVES[m].targets;
        hetbal_plan *plan = NULL;
        hetbal_status s = HETBAL_ERROR_RUN;
        switch (MOVES[m].kind) {
        case RING: s = hetbal_ring_plan(4, loads, targets, c, back, &plan); break;
        case RING_STARTUPS: s = hetbal_ring_plan_startups(4, loads, targets, c, back, l, l, &plan); break;
        case PATH: s = hetbal_ring_plan_path(4, loads, targets, c, back, NULL, NULL, &plan); break;
        case PATH_STARTUPS: s = hetbal_ring_plan_path(4, loads, targets, c, back, l, l, &plan); break;
        case UNIDIRECTIONAL: s = hetbal_ring_plan(4, loads, targets, c, NULL, &plan); break;
        }
        CHECK(s == HETBAL_OK, "%s: plan", MOVES[m].what);
        moved(buffer, plan, loads, targets, MOVES[m].what);
        hetbal_plan_free(plan);
        memcpy(loads, targets, sizeof loads);
    }
    /* Every case happened somewhere, and the malloc path's shift was seen. */
    uint64_t mine[4] = {kept_checked, kept_with_front, kept_with_behind, malloc_moved}, sums[4];
    MPI_Allreduce(mine, sums, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    int empties[2] = {started_empty, ended_empty}, any_empty[2];
    MPI_Allreduce(empties, any_empty, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(sums[0] > 0 && sums[1] > 0 && sums[2] > 0,
          "kept items checked %llu, with items received in front %llu, behind %llu",
          (unsigned long long)sums[0], (unsigned long long)sums[1], (unsigned long long)sums[2]);
    CHECK(sums[3] > 0, "the malloc path never moved a kept item: the address check would see nothing");
    CHECK(any_empty[0] && any_empty[1], "no rank started or ended empty");

    /* Bad arguments: refused on every rank, every buffer untouched. The
       plan: the loads now to others. */
    const uint64_t targets[4] = {100, 500, 300, 300};
    hetbal_plan *plan = NULL, *small = NULL;
    CHECK(hetbal_ring_plan(4, loads, targets, c, back, &plan) == HETBAL_OK, "plan");
    CHECK(hetbal_ring_plan(3, loads, loads, c, back, &small) == HETBAL_OK, "plan of 3");
    uint64_t count = hetbal_item_buffer_count(buffer);
    const void *data = hetbal_item_buffer_data(buffer);
    item *snapshot = malloc(count * sizeof(item));
    memcpy(snapshot, data, count * sizeof(item));
    hetbal_item_buffer *freed = NULL, *empty = NULL, *other = NULL;
    CHECK(hetbal_item_buffer_create(sizeof(item), &freed) == HETBAL_OK, "create");
    hetbal_item_buffer_free(freed);
    CHECK(hetbal_item_buffer_create(sizeof(item), &empty) == HETBAL_OK, "create");
    CHECK(hetbal_item_buffer_create(sizeof(item) + 8, &other) == HETBAL_OK, "create");
    struct {
        const char *what;
        int bad_rank;
        hetbal_item_buffer *bad_buffer;
        size_t bad_bytes;
        const char *says;
    } bad[] = {
        {"NULL buffer on rank 2", 2, NULL, sizeof(item), "buffer is NULL, freed or not an item buffer"},
        {"freed buffer on rank 1", 1, freed, sizeof(item), "buffer is NULL, freed or not an item buffer"},
        {"a plan as a buffer on rank 0", 0, (hetbal_item_buffer *)plan, sizeof(item), "not an item buffer"},
        {"item_bytes not the buffer's on rank 3", 3, buffer, sizeof(item) + 8,
         "item_bytes is 40 but the buffer holds items of 32 bytes"},
        {"a buffer of other items on rank 3", 3, other, sizeof(item) + 8, "the buffer's count is 0"},
        {"item_bytes 0 on rank 1", 1, buffer, 0, "item_bytes is 0"},
        {"an empty buffer on rank 0", 0, empty, sizeof(item), "the buffer's count is 0 but the plan's load"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int me = rank == bad[k].bad_rank;
        hetbal_status s = hetbal_mpi_ring_redistribute_buffer(MPI_COMM_WORLD, plan, me ? bad[k].bad_bytes : sizeof(item),
                                                              me ? bad[k].bad_buffer : buffer);
        char other_rank[16];
        snprintf(other_rank, sizeof other_rank, "rank %d", bad[k].bad_rank);
        CHECK(s == HETBAL_ERROR_INPUT, "%s: status %d", bad[k].what, s);
        CHECK(says(me ? bad[k].says : other_rank), "%s: message", bad[k].what);
        CHECK(unchanged(buffer, snapshot, count, data), "%s: the items changed", bad[k].what);
    }
    /* Rank 1 holds one item more than the plan's load. */
    if (rank == 1) {
        item extra = make(0);
        CHECK(hetbal_item_buffer_append(buffer, &extra, 1) == HETBAL_OK, "append");
    }
    hetbal_status s = hetbal_mpi_ring_redistribute_buffer(MPI_COMM_WORLD, plan, sizeof(item), buffer);
    CHECK(s == HETBAL_ERROR_INPUT, "a count that is not the load: status %d", s);
    CHECK(says(rank == 1 ? "the buffer's count is 301 but the plan's load of rank 1 is 300" : "rank 1"),
          "a count that is not the load: message");
    if (rank == 1) {
        CHECK(hetbal_item_buffer_count(buffer) == count + 1, "the count changed on a failure");
        CHECK(hetbal_item_buffer_resize(buffer, count) == HETBAL_OK, "resize back");
    }
    CHECK(unchanged(buffer, snapshot, count, data), "a count that is not the load: the items changed");
    CHECK(hetbal_mpi_ring_redistribute_buffer(MPI_COMM_WORLD, NULL, sizeof(item), buffer) == HETBAL_ERROR_INPUT &&
              says("plan is NULL"),
          "NULL plan");
    CHECK(hetbal_mpi_ring_redistribute_buffer(MPI_COMM_WORLD, small, sizeof(item), buffer) == HETBAL_ERROR_INPUT &&
              says("the communicator has 4 ranks but the plan 3 processors"),
          "a plan of 3 processors on 4 ranks");
    CHECK(hetbal_mpi_ring_redistribute_buffer(MPI_COMM_NULL, plan, sizeof(item), buffer) == HETBAL_ERROR_INPUT &&
              says("MPI_COMM_NULL"),
          "MPI_COMM_NULL");
    CHECK(unchanged(buffer, snapshot, count, data), "the items changed after refused calls");
    /* And the move itself still works. */
    moved(buffer, plan, loads, targets, "after the refusals");
    memcpy(loads, targets, sizeof loads);
    hetbal_plan_free(small);
    hetbal_plan_free(plan);
    free(snapshot);

    /* The buffer functions' own refusals (not collective). */
    hetbal_item_buffer *b = NULL;
    CHECK(hetbal_item_buffer_create(0, &b) == HETBAL_ERROR_INPUT && b == NULL && says("item_bytes is 0"),
          "create: item_bytes 0");
    CHECK(hetbal_item_buffer_create(SIZE_MAX, &b) == HETBAL_ERROR_INPUT && b == NULL && says("at most"),
          "create: absurd item_bytes");
    CHECK(hetbal_item_buffer_create(8, NULL) == HETBAL_ERROR_INPUT && says("buffer_out is NULL"),
          "create: NULL buffer_out");
    item one = make(1);
    CHECK(hetbal_item_buffer_append(NULL, &one, 1) == HETBAL_ERROR_INPUT && says("buffer is NULL"), "append: NULL");
    CHECK(hetbal_item_buffer_append(freed, &one, 1) == HETBAL_ERROR_INPUT && says("freed"), "append: freed");
    CHECK(hetbal_item_buffer_give_back_sent(NULL, 1) == HETBAL_ERROR_INPUT && says("buffer is NULL"),
          "give back: NULL");
    CHECK(hetbal_item_buffer_give_back_sent(freed, 1) == HETBAL_ERROR_INPUT && says("freed"), "give back: freed");
    CHECK(hetbal_item_buffer_append(empty, NULL, 3) == HETBAL_ERROR_INPUT && says("items is NULL but count is 3"),
          "append: NULL items");
    CHECK(hetbal_item_buffer_append(empty, &one, UINT64_MAX / 2) == HETBAL_ERROR_INPUT && says("overflows"),
          "append: overflow");
    CHECK(hetbal_item_buffer_resize(empty, UINT64_MAX / 2) == HETBAL_ERROR_INPUT && says("overflows"),
          "resize: overflow");
    CHECK(hetbal_item_buffer_resize(empty, (uint64_t)1 << 50) == HETBAL_ERROR_INPUT && says("beyond"),
          "resize: beyond the reservation");
    CHECK(hetbal_item_buffer_resize(NULL, 1) == HETBAL_ERROR_INPUT && says("buffer is NULL"), "resize: NULL");
    CHECK(hetbal_item_buffer_count(empty) == 0 && hetbal_item_buffer_data(empty) != NULL &&
              hetbal_item_buffer_item_bytes(empty) == sizeof(item),
          "an empty buffer");
    CHECK(hetbal_item_buffer_count(NULL) == 0 && says("hetbal_item_buffer_count: buffer is NULL"), "count: NULL");
    CHECK(hetbal_item_buffer_item_bytes(freed) == 0 && says("freed"), "item_bytes: freed");
    CHECK(hetbal_item_buffer_data(NULL) == NULL && says("hetbal_item_buffer_data: buffer is NULL"), "data: NULL");
    hetbal_item_buffer_free(freed); /* twice: nothing */
    hetbal_item_buffer_free(NULL);

    /* The balancer's step on an item buffer: rank 3 is four times slower per
       item; the items move, and the kept ones stay where they are. */
    hetbal_balancer *balancer = NULL;
    const double link[4] = {1e-9, 1e-9, 1e-9, 1e-9};
    CHECK(hetbal_mpi_balancer_create(MPI_COMM_WORLD, sizeof(item), link, link, &balancer) == HETBAL_OK,
          "balancer");
    hetbal_mpi_balancer_set_policy(balancer, HETBAL_POLICY_PROFITABILITY, 0);
    hetbal_item_buffer_free(buffer);
    const uint64_t even[4] = {300, 300, 300, 300};
    buffer = filled(even, 0);
    uint64_t steps_moved = 0;
    for (int it = 0; it < 6; it++) {
        static const item *where[TOTAL];
        memset(where, 0, sizeof where);
        count = hetbal_item_buffer_count(buffer);
        const item *items = hetbal_item_buffer_data(buffer);
        for (uint64_t k = 0; k < count; k++) where[items[k].position] = &items[k];
        hetbal_decision d;
        double seconds = 1e-5 * (double)count * (rank == 3 ? 4.0 : 1.0);
        CHECK(hetbal_mpi_balancer_step_buffer(balancer, seconds, 100, buffer, &d) == HETBAL_OK, "step %d", it);
        count = hetbal_item_buffer_count(buffer);
        items = hetbal_item_buffer_data(buffer);
        CHECK(d.count == count, "step %d: the decision's count %llu, the buffer's %llu", it,
              (unsigned long long)d.count, (unsigned long long)count);
        CHECK(count > 0 && items[0].position == d.first, "step %d: first position", it);
        for (uint64_t k = 0; k < count; k++) {
            CHECK(intact(&items[k]), "step %d: item %llu damaged", it, (unsigned long long)k);
            const item *before = items[k].position < TOTAL ? where[items[k].position] : NULL;
            CHECK(!before || before == &items[k], "step %d: kept item %llu moved", it,
                  (unsigned long long)items[k].position);
        }
        steps_moved += d.redistribute;
    }
    CHECK(steps_moved > 0, "the balancer never moved the items");
    CHECK(rank != 3 || hetbal_item_buffer_count(buffer) < 300, "rank 3 (slow) still holds %llu items",
          (unsigned long long)hetbal_item_buffer_count(buffer));
    /* Refused on every rank: a buffer of other items on rank 2, NULL on
       rank 1, an empty one on rank 0; nothing changes. */
    count = hetbal_item_buffer_count(buffer);
    data = hetbal_item_buffer_data(buffer);
    snapshot = malloc(count * sizeof(item));
    memcpy(snapshot, data, count * sizeof(item));
    struct {
        int bad_rank;
        hetbal_item_buffer *bad_buffer;
        const char *says;
    } bad_steps[] = {
        {2, other, "the buffer holds items of 40 bytes but the balancer's are 32 bytes"},
        {1, NULL, "buffer is NULL"},
        {0, empty, "the buffer is empty"},
    };
    for (size_t k = 0; k < sizeof bad_steps / sizeof bad_steps[0]; k++) {
        hetbal_decision d;
        int me = rank == bad_steps[k].bad_rank;
        hetbal_status s = hetbal_mpi_balancer_step_buffer(balancer, 1e-3, 100, me ? bad_steps[k].bad_buffer : buffer, &d);
        char other_rank[16];
        snprintf(other_rank, sizeof other_rank, "rank %d", bad_steps[k].bad_rank);
        CHECK(s == HETBAL_ERROR_INPUT, "step, %s on rank %d: status %d", bad_steps[k].says, bad_steps[k].bad_rank, s);
        CHECK(says(me ? bad_steps[k].says : other_rank), "step, %s: message", bad_steps[k].says);
        CHECK(unchanged(buffer, snapshot, count, data), "step, %s: the items changed", bad_steps[k].says);
    }
    free(snapshot);
    hetbal_mpi_balancer_free(balancer);
    hetbal_item_buffer_free(buffer);
    hetbal_item_buffer_free(empty);
    hetbal_item_buffer_free(other);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf("hetbal_item_buffer: %zu moves on 4 ranks, %llu kept items checked in place (%llu with items received "
               "in front, %llu behind; the malloc path shifted %llu), %llu balancer moves, every bad input refused "
               "on every rank\n",
               moves + 1, (unsigned long long)sums[0], (unsigned long long)sums[1], (unsigned long long)sums[2],
               (unsigned long long)sums[3], (unsigned long long)steps_moved);
    MPI_Finalize();
    return total ? 1 : 0;
}
