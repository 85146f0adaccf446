/* hetbal.h from C: the ring instances of the Rust test suite with the
   makespans the Rust tests expect, processors holding no item before or
   after, paths (hetbal_ring_plan_path), hetbal_balance, and every bad input the
   interface must refuse with HETBAL_ERROR_INPUT and a message naming the
   argument. Exit 0 when everything holds; each failure is printed. */
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

typedef struct {
    size_t n;
    uint64_t loads[8], targets[8];
    double c_succ[8], c_pred[8];
    int bidirectional;
    double makespan;
    const char *where; /* the Rust test that expects this makespan */
} ring_case;

static const ring_case CASES[] = {
    {4, {1, 2, 3, 1}, {4, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, 1, 3, "known_bidirectional_rings (Lemma 6)"},
    {3, {1, 2, 2}, {3, 1, 1}, {1, 1, 2}, {1, 1, 3}, 1, 3, "known_bidirectional_rings (System 6)"},
    {4, {5, 1, 1, 1}, {1, 1, 1, 5}, {1, 2, 1, 3}, {3, 3, 3, 3}, 1, 7, "known_bidirectional_rings (System 6 + 1)"},
    {4, {1, 1, 19, 2}, {1, 1, 2, 19}, {1, 2.5, 3, 4}, {3, 3.5, 3, 1.5}, 1, 51, "exact search beats every heuristic"},
    {4, {5, 1, 1, 1}, {1, 1, 1, 5}, {3, 1, 3, 1}, {0}, 0, 12, "saturated_chain_keeps_its_gaps"},
    {4, {9, 1, 1, 1}, {1, 1, 3, 7}, {2, 1, 1.5, 1}, {0}, 0, 16, "batching_counts_on_a_forwarding_ring"},
    {7, {1, 7, 1, 2, 2, 9, 1}, {8, 2, 6, 2, 2, 2, 1}, {0.5, 4, 2.5, 3, 1.5, 1.5, 2}, {2.5, 4, 1, 3, 4, 4, 3}, 1, 20, "rings_once_beyond_the_search_budget"},
    {8, {1, 1, 2, 19, 2, 1, 1, 19}, {1, 1, 2, 20, 2, 1, 18, 1}, {4, 0.5, 4, 0.5, 4, 3, 1, 2.5}, {2.5, 3.5, 2.5, 3, 3, 1, 2.5, 3.5}, 1, 54, "rings_once_beyond_the_search_budget"},
    {7, {1, 2, 1, 2, 1, 12, 1}, {1, 2, 1, 2, 1, 2, 11}, {3.5, 1.5, 1, 2, 0.5, 4, 0.5}, {2, 3.5, 1.5, 2.5, 3.5, 1.5, 3.5}, 1, 26, "rings_once_beyond_the_search_budget"},
    {7, {21, 1, 11, 1, 1, 1, 19}, {30, 1, 1, 20, 1, 1, 1}, {2.5, 2.5, 3, 2.5, 3, 4, 4}, {3, 4, 4, 0.5, 2, 3, 2}, 1, 44, "rings_once_beyond_the_search_budget"},
    {7, {2, 2, 21, 2, 18, 1, 1}, {2, 21, 2, 18, 2, 1, 1}, {0.5, 1.5, 2, 3, 2, 3.5, 1.5}, {3, 3, 1, 0.5, 2.5, 0.5, 3}, 1, 35, "rings_once_beyond_the_search_budget"},
};

static void plans(void) {
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const ring_case *c = &CASES[k];
        hetbal_plan *plan = NULL;
        hetbal_status s = hetbal_ring_plan(c->n, c->loads, c->targets, c->c_succ,
                                           c->bidirectional ? c->c_pred : NULL, &plan);
        CHECK(s == HETBAL_OK && plan != NULL, "case %zu (%s): status %d", k, c->where, s);
        if (plan == NULL) continue;
        CHECK(hetbal_plan_makespan(plan) == c->makespan, "case %zu (%s): makespan %g, expected %g",
              k, c->where, hetbal_plan_makespan(plan), c->makespan);
        CHECK(hetbal_plan_optimal(plan) == 1, "case %zu: not proven optimal", k);
        CHECK(hetbal_plan_lower_bound(plan) == c->makespan, "case %zu: lower bound %g", k,
              hetbal_plan_lower_bound(plan));
        /* The transfers: each between neighbours, ending by the makespan, and the
           net items moved make the loads the targets. */
        size_t m = hetbal_plan_transfer_count(plan);
        hetbal_transfer t[4096];
        CHECK(m > 0 && m <= 4096, "case %zu: %zu transfers", k, m);
        if (m > 0) refused(hetbal_plan_transfers(plan, t, m - 1), "capacity", "capacity too small");
        CHECK(hetbal_plan_transfers(plan, t, 4096) == HETBAL_OK, "case %zu: transfers", k);
        long long held[8];
        for (size_t i = 0; i < c->n; i++) held[i] = (long long)c->loads[i];
        double end = 0;
        for (size_t j = 0; j < m && j < 4096; j++) {
            CHECK(t[j].to == (t[j].from + 1) % c->n || t[j].from == (t[j].to + 1) % c->n,
                  "case %zu: transfer %zu is not between neighbours", k, j);
            held[t[j].from] -= (long long)t[j].items;
            held[t[j].to] += (long long)t[j].items;
            if (t[j].end > end) end = t[j].end;
        }
        CHECK(end == c->makespan, "case %zu: last transfer ends at %g", k, end);
        for (size_t i = 0; i < c->n; i++)
            CHECK(held[i] == (long long)c->targets[i], "case %zu: processor %zu ends with %lld", k, i, held[i]);
        hetbal_plan_free(plan);
        hetbal_plan_free(plan); /* freed twice: no harm */
        CHECK(isnan(hetbal_plan_makespan(plan)), "a freed plan still answers");
        CHECK(strstr(hetbal_last_error(), "not a live plan") != NULL, "freed plan: message");
    }
}

static void balance(void) {
    double w[3] = {1.0, 2.0, 4.0};
    uint64_t targets[3];
    double time = 0;
    CHECK(hetbal_balance(3, 700, w, targets, &time) == HETBAL_OK, "balance");
    CHECK(targets[0] == 400 && targets[1] == 200 && targets[2] == 100, "balance: %llu %llu %llu",
          (unsigned long long)targets[0], (unsigned long long)targets[1], (unsigned long long)targets[2]);
    CHECK(time == 400.0, "balance: iteration time %g", time);
    CHECK(hetbal_balance(3, 700, w, targets, NULL) == HETBAL_OK, "balance without the time");
    refused(hetbal_balance(0, 700, w, targets, &time), "n is 0", "n = 0");
    refused(hetbal_balance(3, 700, NULL, targets, &time), "seconds_per_item", "NULL times");
    refused(hetbal_balance(3, 700, w, NULL, &time), "targets_out", "NULL targets");
    double bad[3] = {1.0, NAN, 1.0};
    refused(hetbal_balance(3, 700, bad, targets, &time), "seconds_per_item[1]", "NaN time");
    bad[1] = 0.0;
    refused(hetbal_balance(3, 700, bad, targets, &time), "seconds_per_item[1]", "zero time");
    refused(hetbal_balance(3, 2, w, targets, &time), "items", "fewer items than processors");
}

/* Speeds that depend on the load: one point each is the constant model; a
   memory cliff; bad input refused. */
static void balance_points(void) {
    size_t counts[3] = {1, 1, 1};
    uint64_t loads[3] = {10, 10, 10};
    double seconds[3] = {10.0, 20.0, 40.0};
    uint64_t targets[3];
    double time = 0;
    CHECK(hetbal_balance_points(3, 700, counts, loads, seconds, 0, targets, &time) == HETBAL_OK,
          "balance_points");
    CHECK(targets[0] == 400 && targets[1] == 200 && targets[2] == 100 && time == 400.0,
          "balance_points: %llu %llu %llu, %g", (unsigned long long)targets[0],
          (unsigned long long)targets[1], (unsigned long long)targets[2], time);
    /* Processor 0: 1 ms per item to 1000, then 10 ms; processor 1: 2 ms. */
    size_t two[2] = {2, 1};
    uint64_t cliff_loads[3] = {1000, 2000, 1000};
    double cliff_seconds[3] = {1.0, 11.0, 2.0};
    CHECK(hetbal_balance_points(2, 3000, two, cliff_loads, cliff_seconds, 1, targets, &time) ==
              HETBAL_OK && targets[0] + targets[1] == 3000 && targets[0] > 1000 && targets[0] < 1500,
          "balance_points: cliff %llu %llu", (unsigned long long)targets[0],
          (unsigned long long)targets[1]);
    refused(hetbal_balance_points(0, 7, counts, loads, seconds, 0, targets, &time), "n is 0", "n = 0");
    refused(hetbal_balance_points(3, 7, counts, loads, seconds, 2, targets, &time), "cubic = 2",
            "bad model");
    double nan_seconds[3] = {1.0, NAN, 1.0};
    refused(hetbal_balance_points(3, 7, counts, loads, nan_seconds, 0, targets, &time), "processor 1",
            "NaN time");
    size_t none[3] = {1, 0, 1};
    refused(hetbal_balance_points(3, 7, none, loads, seconds, 0, targets, &time), "processor 1",
            "no point");
}

static void bad_plans(void) {
    uint64_t loads[3] = {4, 1, 1}, targets[3] = {2, 2, 2}, more[3] = {3, 3, 3};
    double c[3] = {1, 1, 1}, nan[3] = {1, NAN, 1}, negative[3] = {1, 1, -1};
    hetbal_plan *plan = (hetbal_plan *)1;
    refused(hetbal_ring_plan(3, loads, targets, c, NULL, NULL), "plan_out", "NULL plan_out");
    refused(hetbal_ring_plan(0, loads, targets, c, NULL, &plan), "n is 0", "n = 0");
    CHECK(plan == NULL, "plan_out is not NULL after a failure");
    refused(hetbal_ring_plan(3, NULL, targets, c, NULL, &plan), "loads", "NULL loads");
    refused(hetbal_ring_plan(3, loads, NULL, c, NULL, &plan), "targets", "NULL targets");
    refused(hetbal_ring_plan(3, loads, targets, NULL, NULL, &plan), "c_succ", "NULL c_succ");
    refused(hetbal_ring_plan(3, loads, targets, nan, NULL, &plan), "c_succ[1]", "NaN cost");
    refused(hetbal_ring_plan(3, loads, targets, c, negative, &plan), "c_pred[2]", "negative cost");
    refused(hetbal_ring_plan(3, loads, more, c, NULL, &plan), "add up", "totals differ");
    refused(hetbal_ring_plan((size_t)1 << 50, loads, targets, c, NULL, &plan), "beyond", "absurd n");
    refused(hetbal_plan_transfers(NULL, NULL, 0), "NULL", "transfers of NULL");
    CHECK(isnan(hetbal_plan_makespan(NULL)) && isnan(hetbal_plan_lower_bound(NULL)), "NULL plan answers");
    CHECK(hetbal_plan_optimal(NULL) == -1 && hetbal_plan_transfer_count(NULL) == 0, "NULL plan answers");
    hetbal_plan_free(NULL); /* no harm */
    hetbal_plan_free((hetbal_plan *)&plan); /* never made by hetbal: no harm */
    CHECK(hetbal_last_error() != NULL, "last error is NULL");
    void *buffer = hetbal_alloc(64);
    CHECK(buffer != NULL, "hetbal_alloc");
    hetbal_free(buffer);
    hetbal_free(NULL);
    CHECK(hetbal_alloc(0) == NULL && strstr(hetbal_last_error(), "0") != NULL, "hetbal_alloc(0)");
}

/* Plans with start-ups: a transfer of m items costs l + m c. */
static void startups(void) {
    /* P0 gives 2 items to P2 through P1 (per item 1, per message 2): some item
       crosses both links, one message each: (2 + 1) + (2 + 1) = 6, optimal. */
    uint64_t loads[3] = {3, 1, 1}, targets[3] = {1, 1, 3};
    double c[3] = {1, 1, 1}, l[3] = {2, 2, 2}, zero[3] = {0, 0, 0};
    hetbal_plan *plan = NULL;
    CHECK(hetbal_ring_plan_startups(3, loads, targets, c, NULL, l, NULL, &plan) == HETBAL_OK, "start-ups");
    CHECK(hetbal_plan_makespan(plan) == 6 && hetbal_plan_lower_bound(plan) == 6,
          "start-ups: makespan %g, bound %g, expected 6", hetbal_plan_makespan(plan),
          hetbal_plan_lower_bound(plan));
    hetbal_transfer t[16];
    size_t m = hetbal_plan_transfer_count(plan);
    CHECK(m > 0 && m <= 16 && hetbal_plan_transfers(plan, t, 16) == HETBAL_OK, "start-ups: %zu transfers", m);
    for (size_t j = 0; j < m && j < 16; j++)
        CHECK(t[j].end - t[j].start == 2 + (double)t[j].items, "start-ups: transfer %zu lasts %g for %llu items",
              j, t[j].end - t[j].start, (unsigned long long)t[j].items);
    hetbal_plan_free(plan);
    /* Start-ups of 0 (or none given) plan as hetbal_ring_plan does, on every case. */
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const ring_case *r = &CASES[k];
        const double *pred = r->bidirectional ? r->c_pred : NULL;
        double zeros[8] = {0};
        CHECK(hetbal_ring_plan_startups(r->n, r->loads, r->targets, r->c_succ, pred, zeros, zeros, &plan) == HETBAL_OK &&
                  hetbal_plan_makespan(plan) == r->makespan,
              "case %zu with start-ups 0: makespan %g, expected %g", k, hetbal_plan_makespan(plan), r->makespan);
        hetbal_plan_free(plan);
        CHECK(hetbal_ring_plan_startups(r->n, r->loads, r->targets, r->c_succ, pred, NULL, NULL, &plan) == HETBAL_OK &&
                  hetbal_plan_makespan(plan) == r->makespan,
              "case %zu without start-ups: makespan %g", k, hetbal_plan_makespan(plan));
        hetbal_plan_free(plan);
    }
    double nan[3] = {0, NAN, 0}, negative[3] = {0, 0, -1};
    refused(hetbal_ring_plan_startups(3, loads, targets, c, NULL, nan, NULL, &plan), "l_succ[1]", "NaN start-up");
    CHECK(plan == NULL, "plan_out is not NULL after a failure");
    refused(hetbal_ring_plan_startups(3, loads, targets, c, c, zero, negative, &plan), "l_pred[2]",
            "negative start-up");
    refused(hetbal_ring_plan_startups(3, loads, targets, c, NULL, l, NULL, NULL), "plan_out", "NULL plan_out");
}

/* Plans `n` processors with `plan` (already made, status `s`) and checks it:
   made, at `makespan` (proven optimal), its transfers between neighbours,
   never over the link between processors n - 1 and 0 when `path`, turning
   the loads into the targets. Frees the plan. */
static void check_plan(hetbal_status s, hetbal_plan *plan, size_t n, const uint64_t *loads, const uint64_t *targets,
                       int path, double makespan, const char *what) {
    CHECK(s == HETBAL_OK && plan != NULL, "%s: status %d", what, s);
    if (plan == NULL) return;
    CHECK(hetbal_plan_makespan(plan) == makespan, "%s: makespan %g, expected %g", what, hetbal_plan_makespan(plan),
          makespan);
    CHECK(hetbal_plan_optimal(plan) == 1, "%s: not proven optimal (lower bound %g)", what,
          hetbal_plan_lower_bound(plan));
    hetbal_transfer t[64];
    size_t m = hetbal_plan_transfer_count(plan);
    CHECK(m > 0 && m <= 64 && hetbal_plan_transfers(plan, t, 64) == HETBAL_OK, "%s: %zu transfers", what, m);
    long long held[8];
    for (size_t i = 0; i < n; i++) held[i] = (long long)loads[i];
    for (size_t j = 0; j < m && j < 64; j++) {
        CHECK(t[j].to == (t[j].from + 1) % n || t[j].from == (t[j].to + 1) % n,
              "%s: transfer %zu is not between neighbours", what, j);
        int wraps = (t[j].from == n - 1 && t[j].to == 0) || (t[j].from == 0 && t[j].to == n - 1);
        CHECK(!path || !wraps, "%s: transfer %zu from %zu to %zu crosses the path's missing link", what, j,
              t[j].from, t[j].to);
        held[t[j].from] -= (long long)t[j].items;
        held[t[j].to] += (long long)t[j].items;
    }
    for (size_t i = 0; i < n; i++)
        CHECK(held[i] == (long long)targets[i], "%s: processor %zu ends with %lld", what, i, held[i]);
    hetbal_plan_free(plan);
}

/* Outside the papers' model: processors holding no item before or after,
   and paths (no link between the last processor and the first). */
static void empty_processors_and_paths(void) {
    double c[3] = {1, 1, 1};
    hetbal_plan *plan = NULL;
    hetbal_status s;
    /* P0 holds none: P2 gives it 2 items over the wrap-around link (2), P1
       one to P2 meanwhile. */
    uint64_t filled[3] = {0, 3, 3}, even[3] = {2, 2, 2};
    s = hetbal_ring_plan(3, filled, even, c, NULL, &plan);
    check_plan(s, plan, 3, filled, even, 0, 2.0, "a processor holding no item");
    /* P2 ends with none: 2 items to P0 (2), P0 one of its own to P1. */
    uint64_t drained[3] = {3, 3, 0};
    s = hetbal_ring_plan(3, even, drained, c, NULL, &plan);
    check_plan(s, plan, 3, even, drained, 0, 2.0, "a processor ending with no item");
    s = hetbal_ring_plan_startups(3, even, drained, c, c, NULL, NULL, &plan);
    check_plan(s, plan, 3, even, drained, 0, 2.0, "a processor ending with no item (bidirectional)");

    /* P0's 2 items go to P2: on the ring over their link, 2 items x 1 = 2;
       on the path through P1, pipelined: the second item reaches P2 at 3. */
    uint64_t two[3] = {2, 0, 0}, moved[3] = {0, 0, 2};
    s = hetbal_ring_plan(3, two, moved, c, c, &plan);
    check_plan(s, plan, 3, two, moved, 0, 2.0, "the ring");
    s = hetbal_ring_plan_path(3, two, moved, c, c, NULL, NULL, &plan);
    check_plan(s, plan, 3, two, moved, 1, 3.0, "the path");
    /* Unidirectional: the same, P0 sends forward. */
    s = hetbal_ring_plan_path(3, two, moved, c, NULL, NULL, NULL, &plan);
    check_plan(s, plan, 3, two, moved, 1, 3.0, "the unidirectional path");
    /* With start-ups of 2 per message: each link one message of 2 items,
       (2 + 2) + (2 + 2) = 8. */
    double l[3] = {2, 2, 2};
    s = hetbal_ring_plan_path(3, two, moved, c, c, l, l, &plan);
    check_plan(s, plan, 3, two, moved, 1, 8.0, "the path with start-ups");

    /* Backwards on a unidirectional path: P0 must end with 3 but holds 1, and
       only the wrap-around link could bring it more. Bidirectional: fine. */
    uint64_t back_loads[3] = {1, 0, 3}, back_targets[3] = {3, 0, 1};
    plan = (hetbal_plan *)1;
    refused(hetbal_ring_plan_path(3, back_loads, back_targets, c, NULL, NULL, NULL, &plan),
            "hetbal_ring_plan_path: processors 0 to 0 (P0) hold 1 items but must end with 3", "backward move");
    CHECK(plan == NULL, "plan_out is not NULL after a failure");
    s = hetbal_ring_plan_path(3, back_loads, back_targets, c, c, NULL, NULL, &plan);
    check_plan(s, plan, 3, back_loads, back_targets, 1, 3.0, "the bidirectional path backwards");
    /* The ring's rules hold on a path. */
    double nan[3] = {1, NAN, 1};
    refused(hetbal_ring_plan_path(3, two, moved, c, NULL, nan, NULL, &plan), "l_succ[1]", "path: NaN start-up");
    refused(hetbal_ring_plan_path(3, two, even, c, NULL, NULL, NULL, &plan), "add up", "path: totals differ");
    refused(hetbal_ring_plan_path(1, two, moved, c, NULL, NULL, NULL, &plan), "at least 2", "path: n = 1");
    refused(hetbal_ring_plan_path(3, two, moved, c, NULL, NULL, NULL, NULL), "plan_out", "path: NULL plan_out");
}

int main(void) {
    plans();
    startups();
    empty_processors_and_paths();
    balance();
    balance_points();
    bad_plans();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("hetbal.h: %zu rings planned at their expected makespans, with start-ups too, empty processors and "
           "paths, every bad input refused\n",
           sizeof CASES / sizeof CASES[0]);
    return 0;
}
