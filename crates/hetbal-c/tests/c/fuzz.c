/* A bad-input fuzz of hetbal's C interface, seeded and deterministic (the
   same seed, the same calls).

   fuzz [SEED [ITERATIONS]]
       hetbal.h, no MPI: ITERATIONS (default 50000, about a second) calls of
       its functions with random arguments: lengths 0 to 6 (now and then a
       huge one, its arrays NULL), arrays allocated with exactly their length
       or NULL, doubles among normal values, 0, -0, -1, NaN, infinities,
       1e308, 1e-308 and subnormals, integers among 0, 1, small ones, 2^52,
       2^63 and UINT64_MAX, outputs NULL or valid, plan handles live, freed,
       never made (the address of a local variable) or NULL; and item
       buffers (hetbal_item_buffer_*, not collective) created, appended to,
       resized, written through their data pointer and freed, with item
       sizes 0, small or huge, items NULL or not, counts small or huge, and
       handles live, freed, never made or NULL.
       Checked: every status is a hetbal_status; a failure leaves a message
       that starts with the function's name, and no "internal error" (a panic
       caught); an input this program knows to be wrong is refused with
       HETBAL_ERROR_INPUT and leaves the outputs as they were; a valid one
       succeeds, or is refused only for an overflow, a limit or an algorithm
       that does not apply; a success's outputs hold together (targets >= 1
       summing to the total and the iteration time theirs; cuts from 0 to
       n_items, non-decreasing, with their bottleneck, no worse than one
       processor alone or than the tolerance allows, and the bytes moved
       counted again here; a plan's makespan finite and at least its lower
       bound, equal when optimal, its transfers as many as it counts, between
       neighbours (successors only on a unidirectional ring, never over a
       path's missing link), within the
       makespan, turning the loads into the targets); a handle that is not a
       live plan gives NaN, -1, 0 and HETBAL_ERROR_INPUT; hetbal_alloc(0) is
       NULL, hetbal_free(NULL) does nothing; an item buffer holds exactly the
       bytes appended, written and zero-filled by resize (a copy is kept
       here), keeps them through refused calls, and a handle that is not a
       live buffer is refused by every call.

   mpirun -np 4 fuzz --mpi [SEED [ROUNDS]]
       hetbal_mpi.h: ROUNDS (default 500, a few seconds) collective calls of
       hetbal_mpi_ring_redistribute, hetbal_mpi_balancer_create and
       hetbal_mpi_balancer_step. Every rank starts from valid arguments (a
       plan of the ring, its items malloc'ed, each holding its global
       position) and, in most rounds, ONE rank (the same on every rank: drawn
       from the shared seed) breaks one of them: NULL pointers, item_bytes 0,
       a count off by one, 0 or overflowing, a NULL, freed or never made plan,
       a plan for other targets, other loads or more processors, other
       item_bytes, a plan with start-ups where the others have none, a NaN,
       infinite or negative cost, c_pred without c_succ, a compute time NaN,
       0, negative or infinite.
       Checked: every rank returns (run it under `timeout`), every rank's
       status is the same, a round without a broken argument succeeds and one
       with a wrong argument fails, a failure leaves every rank's items and
       count as they were, a success moves every item once and keeps the
       global order (and the balancer's decision says where they are).

   Arguments not broken on one rank only:
     - those the library checks before the ranks agree on their arguments (a
       rank failing there returns while the others wait in a collective; the
       contract is that they match on every rank): the communicator of
       hetbal_mpi_ring_redistribute and hetbal_mpi_balancer_create
       (MPI_COMM_NULL: refused before MPI_Comm_dup, itself collective) and the
       balancer of hetbal_mpi_balancer_step (NULL, freed, a plan, in use by
       another thread: refused before the agreement). They are broken on
       every rank at once here, which must fail on every rank.
   Valid values that differ between ranks are broken on one rank too: c_succ
   NULL (measured links) on one rank and costs on the others, other costs or
   another item size in hetbal_mpi_balancer_create, another `remaining` in
   hetbal_mpi_balancer_step: the library agrees on a fingerprint of them, so
   every rank fails.
   Left out of the calls without MPI: loads of 2^52 or more with start-ups
   (plans of up to 10^7 messages, seconds each).

   Exit 0 when every check holds; each failure is printed with the seed and
   the iteration or round. HETBAL_FUZZ_VERBOSE=1 prints each call's arguments
   as it goes (a reproducer) and how often each function returned each
   status. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetbal_mpi.h"

/* ---------------------------------------------------------------- checks */

static int failures = 0, rank = 0, verbose = 0;
static unsigned long long seed = 1;
static unsigned long step = 0; /* the iteration or round */

#define FAIL(...)                                                                              \
    do {                                                                                       \
        failures++;                                                                            \
        if (failures <= 40) {                                                                  \
            fprintf(stderr, "rank %d FAILED (seed %llu, step %lu) %s:%d: ", rank, seed, step,   \
                    __FILE__, __LINE__);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, " (last error: %s)\n", hetbal_last_error());                       \
        }                                                                                      \
    } while (0)
#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) FAIL(__VA_ARGS__);                                                        \
    } while (0)

/* Sets this thread's last error to another function's, so that a failure
   that does not set its own is seen. */
static void reset_error(void) {
    void *p = hetbal_alloc(0);
    CHECK(p == NULL, "hetbal_alloc(0) is not NULL");
    free(p);
}

/* How often each function returned each status (the coverage). */
#define FUNCTIONS 24
static const char *counted[FUNCTIONS];
static unsigned long counts[FUNCTIONS][5];
static void tally(const char *fn, int s) {
    size_t k = 0;
    while (k < FUNCTIONS && counted[k] && strcmp(counted[k], fn) != 0) k++;
    if (k == FUNCTIONS) return;
    counted[k] = fn;
    if (s >= 0 && s <= 4) counts[k][s]++;
}
static void print_counts(void) {
    printf("%-30s %8s %8s %8s %8s %8s\n", "calls", "OK", "INPUT", "N/A", "LIMIT", "RUN");
    for (size_t k = 0; k < FUNCTIONS && counted[k]; k++)
        printf("%-30s %8lu %8lu %8lu %8lu %8lu\n", counted[k], counts[k][0], counts[k][1], counts[k][2],
               counts[k][3], counts[k][4]);
}

/* A status of `fn`: one of the enum's; on failure a message of its own. */
static void check_status(const char *fn, hetbal_status status) {
    int s = (int)status;
    tally(fn, s);
    CHECK(s >= HETBAL_OK && s <= HETBAL_ERROR_RUN, "%s: status %d is not a hetbal_status", fn, s);
    const char *message = hetbal_last_error();
    CHECK(message != NULL, "%s: hetbal_last_error() is NULL", fn);
    if (s == HETBAL_OK || message == NULL) return;
    CHECK(strcmp(message, "no error") != 0, "%s failed with no message", fn);
    CHECK(strncmp(message, fn, strlen(fn)) == 0, "%s failed (status %d) with a message not its own", fn, s);
    CHECK(strstr(message, "internal error") == NULL, "%s: a panic (a bug)", fn);
}

/* A failure of a valid input: only an overflow, a limit or an algorithm that
   does not apply. */
static void check_refusal_of_valid(const char *fn, hetbal_status status) {
    if (status == HETBAL_OK) return;
    const char *message = hetbal_last_error();
    int overflow = status == HETBAL_ERROR_INPUT && message && strstr(message, "overflow");
    CHECK(overflow || status == HETBAL_ERROR_LIMIT || status == HETBAL_ERROR_NOT_APPLICABLE,
          "%s: a valid input refused with status %d", fn, status);
}

/* ------------------------------------------------------- random arguments */

static uint64_t state;

static uint64_t next(void) { /* splitmix64 */
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return n ? next() % n : 0; }
static double unit(void) { return (double)(next() >> 11) * 0x1.0p-53; }
static int chance(double p) { return unit() < p; }

/* A positive, finite, normal double of a few magnitudes. */
static double normal(void) {
    switch (below(4)) {
    case 0: return 0.5 + 4 * unit();
    case 1: return pow(10.0, -3 + 6 * unit());
    case 2: return (double)(1 + below(9));
    default: return 1.0;
    }
}

/* 0, -1, NaN, infinities, extremes, subnormals, -0. */
static double special(void) {
    switch (below(10)) {
    case 0: return 0.0;
    case 1: return -1.0;
    case 2: return NAN;
    case 3: return INFINITY;
    case 4: return -INFINITY;
    case 5: return 1e308;
    case 6: return 1e-308;
    case 7: return DBL_TRUE_MIN * (double)(1 + below(1000)); /* subnormal */
    case 8: return -0.0;
    default: return -normal();
    }
}

/* 0, 1, small, 2^52, 2^63, UINT64_MAX (small most of the time). */
static uint64_t any_u64(void) {
    switch (below(11)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return UINT64_C(1) << 63;
    case 3: return UINT64_MAX;
    case 4: return UINT64_C(1) << 52;
    default: return 2 + below(9);
    }
}

/* A length: 0 to 6, or now and then a huge one (`huge` set: then every
   array of that length must be NULL). */
static size_t length(int *huge) {
    if (!chance(0.03)) return (size_t)below(7);
    *huge = 1;
    static const size_t HUGE_N[] = {(size_t)1 << 40, ((size_t)1 << 40) + 1, (size_t)1 << 62, SIZE_MAX,
                                    SIZE_MAX / 8, (size_t)1 << 31};
    return HUGE_N[below(sizeof HUGE_N / sizeof HUGE_N[0])];
}

/* malloc'ed with exactly `n` elements (1 byte for 0, so that reading an
   element is out of bounds for ASan, yet the pointer is not NULL). */
static void *array(size_t n, size_t size) {
    void *p = malloc(n ? n * size : 1);
    if (p == NULL) {
        fprintf(stderr, "fuzz: out of memory\n");
        exit(2);
    }
    return p;
}

/* `n` doubles: clean (all normal) most of the time, else with specials;
   NULL with probability `p_null` or when `huge`. */
static double *doubles(size_t n, int huge, double p_null) {
    if (huge || chance(p_null)) return NULL;
    double *a = array(n, sizeof *a);
    int clean = chance(0.6);
    for (size_t i = 0; i < n; i++) a[i] = clean || chance(0.7) ? normal() : special();
    return a;
}

/* `n` integers, small ones most of the time; with `big`, now and then 2^52,
   2^63 or UINT64_MAX, else at most 10. */
static uint64_t *u64s(size_t n, int huge, double p_null, int big) {
    if (huge || chance(p_null)) return NULL;
    uint64_t *a = array(n, sizeof *a);
    int clean = chance(0.6);
    for (size_t i = 0; i < n; i++) {
        a[i] = clean || chance(0.7) ? 1 + below(9) : any_u64();
        if (!big && a[i] > 10) a[i] = below(11);
    }
    return a;
}

/* An output array of `n` elements filled with a canary, or NULL. */
static const uint64_t CANARY = UINT64_C(0xC0FFEE0DDBA11);
static uint64_t *canaries(size_t n, int huge, double p_null) {
    if (huge || chance(p_null)) return NULL;
    uint64_t *a = array(n, sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = CANARY;
    return a;
}
static int all_canaries(const uint64_t *a, size_t n) {
    for (size_t i = 0; a && i < n; i++)
        if (a[i] != CANARY) return 0;
    return 1;
}

/* The arguments, for HETBAL_FUZZ_VERBOSE (a reproducer's). */
static void print_doubles(const char *name, const double *a, size_t n, int huge) {
    fprintf(stderr, ", %s", name);
    if (a == NULL || huge) {
        fprintf(stderr, " NULL");
        return;
    }
    for (size_t i = 0; i < n; i++) fprintf(stderr, "%s%.17g", i ? " " : " {", a[i]);
    fprintf(stderr, n ? "}" : " {}");
}
static void print_u64s(const char *name, const uint64_t *a, size_t n, int huge) {
    fprintf(stderr, ", %s", name);
    if (a == NULL || huge) {
        fprintf(stderr, " NULL");
        return;
    }
    for (size_t i = 0; i < n; i++) fprintf(stderr, "%s%" PRIu64, i ? " " : " {", a[i]);
    fprintf(stderr, n ? "}" : " {}");
}

static int finite_positive(const double *a, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(isfinite(a[i]) && a[i] > 0)) return 0;
    return 1;
}
static int finite_nonnegative(const double *a, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(isfinite(a[i]) && a[i] >= 0)) return 0;
    return 1;
}
/* Every value a normal one of normal(): the range where this program's
   floating-point sums can be compared with the library's. */
static int tame(const double *a, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(a[i] >= 1e-3 && a[i] <= 1e3)) return 0;
    return 1;
}
static int close_to(double a, double b, double rel) {
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-300;
}

/* -------------------------------------------------------- hetbal_balance */

static void fuzz_balance(void) {
    int huge = 0;
    size_t n = length(&huge);
    double *s = doubles(n, huge, 0.1);
    uint64_t total = chance(0.5) ? any_u64() : (uint64_t)n + below(100);
    uint64_t *out = canaries(n, huge, 0.1);
    double time = -7, *time_out = chance(0.8) ? &time : NULL;
    if (verbose) {
        fprintf(stderr, "%lu: hetbal_balance(n %zu, total %" PRIu64, step, n, total);
        print_doubles("seconds_per_item", s, n, huge);
        fprintf(stderr, ")\n");
    }
    reset_error();
    hetbal_status st = hetbal_balance(n, total, s, out, time_out);
    check_status("hetbal_balance", st);
    int valid = n >= 1 && !huge && s && out && finite_positive(s, n) && total >= n;
    if (!valid) CHECK(st == HETBAL_ERROR_INPUT, "hetbal_balance: wrong input, status %d", st);
    else check_refusal_of_valid("hetbal_balance", st);
    if (st == HETBAL_OK && valid) {
        unsigned __int128 sum = 0;
        double slowest = 0;
        for (size_t i = 0; i < n; i++) {
            CHECK(out[i] >= 1, "hetbal_balance: processor %zu gets %" PRIu64, i, out[i]);
            sum += out[i];
            slowest = fmax(slowest, (double)out[i] * s[i]);
        }
        CHECK(sum == total, "hetbal_balance: the targets do not sum to the total");
        if (tame(s, n)) {
            /* The least time: a little less holds fewer than `total` items,
               or leaves a processor without one. */
            double t = slowest * (1 - 1e-9);
            unsigned __int128 room = 0;
            int everyone = 1;
            for (size_t i = 0; i < n; i++) {
                double k = floor(t / s[i]);
                everyone = everyone && k >= 1;
                room += k >= 0x1p64 ? UINT64_MAX : (uint64_t)k;
            }
            CHECK(!everyone || room < total, "hetbal_balance: %g s would do, not %g", t, slowest);
        }
        if (time_out)
            CHECK(isfinite(time) && time > 0 && close_to(time, slowest, 1e-9),
                  "hetbal_balance: iteration time %g, the slowest takes %g", time, slowest);
    } else {
        CHECK(all_canaries(out, n) && time == -7, "hetbal_balance: a failure wrote its outputs");
    }
    free(s);
    free(out);
}

/* ------------------------------------------------------------ ring plans */

typedef struct {
    hetbal_plan *plan;
    size_t n;
    uint64_t loads[6], targets[6];
    int unidirectional, path;
} live_plan;

#define LIVE 8
#define FREED 64
static live_plan live[LIVE];
static size_t n_live = 0;
static hetbal_plan *freed[FREED];
static size_t n_freed = 0;

static void forget(size_t k) {
    hetbal_plan_free(live[k].plan);
    freed[n_freed++ % FREED] = live[k].plan;
    live[k] = live[--n_live];
}

/* Everything a live plan says, checked against its instance. */
static void check_plan(const live_plan *p) {
    const hetbal_plan *plan = p->plan;
    size_t n = p->n;
    double makespan = hetbal_plan_makespan(plan), bound = hetbal_plan_lower_bound(plan);
    int optimal = hetbal_plan_optimal(plan);
    size_t count = hetbal_plan_transfer_count(plan);
    tally("hetbal_plan_makespan", HETBAL_OK);
    tally("hetbal_plan_lower_bound", HETBAL_OK);
    tally("hetbal_plan_optimal", HETBAL_OK);
    tally("hetbal_plan_transfer_count", HETBAL_OK);
    double tol = 1e-9 * fmax(1.0, fabs(makespan));
    CHECK(isfinite(makespan) && makespan >= 0, "plan: makespan %g", makespan);
    CHECK(isfinite(bound) && bound >= 0 && makespan >= bound - tol, "plan: makespan %g, lower bound %g",
          makespan, bound);
    CHECK(optimal == 0 || optimal == 1, "plan: optimal is %d", optimal);
    if (optimal == 1) CHECK(close_to(makespan, bound, 1e-9), "plan: optimal, but %g > %g", makespan, bound);
    if (count > 100000) {
        FAIL("plan: %zu transfers for %zu processors", count, n);
        return;
    }
    hetbal_transfer *t = array(count + 1, sizeof *t);
    memset(t, 0xAB, (count + 1) * sizeof *t);
    if (count > 0) {
        reset_error();
        hetbal_status st = hetbal_plan_transfers(plan, t, count - 1);
        check_status("hetbal_plan_transfers", st);
        CHECK(st == HETBAL_ERROR_INPUT, "hetbal_plan_transfers: capacity %zu < %zu accepted", count - 1, count);
        st = hetbal_plan_transfers(plan, NULL, count + below(3));
        check_status("hetbal_plan_transfers", st);
        CHECK(st == HETBAL_ERROR_INPUT, "hetbal_plan_transfers: out NULL for %zu transfers accepted", count);
        unsigned char *bytes = (unsigned char *)t;
        for (size_t i = 0; i < (count + 1) * sizeof *t; i++)
            if (bytes[i] != 0xAB) {
                FAIL("hetbal_plan_transfers: a failure wrote its output");
                break;
            }
    } else {
        CHECK(hetbal_plan_transfers(plan, NULL, 0) == HETBAL_OK, "hetbal_plan_transfers: no transfer, out NULL");
    }
    hetbal_status st = hetbal_plan_transfers(plan, t, count + below(2));
    check_status("hetbal_plan_transfers", st);
    CHECK(st == HETBAL_OK, "hetbal_plan_transfers of a live plan: status %d", st);
    __int128 held[6];
    for (size_t i = 0; i < n; i++) held[i] = (__int128)p->loads[i];
    double end = 0;
    for (size_t j = 0; st == HETBAL_OK && j < count; j++) {
        CHECK(t[j].from < n && t[j].to < n, "transfer %zu: from %zu to %zu on %zu processors", j, t[j].from,
              t[j].to, n);
        if (t[j].from >= n || t[j].to >= n) break;
        int to_succ = t[j].to == (t[j].from + 1) % n, to_pred = t[j].from == (t[j].to + 1) % n;
        CHECK(n > 1 && (to_succ || (to_pred && !p->unidirectional)),
              "transfer %zu: from %zu to %zu is not along the ring%s", j, t[j].from, t[j].to,
              p->unidirectional ? " (unidirectional)" : "");
        /* (On 2 processors the link from 1 to 0 is also the one from 0 to 1,
           which a path keeps: a transfer does not say which way it went.) */
        int wraps = n > 2 && ((t[j].from == n - 1 && t[j].to == 0) || (t[j].from == 0 && t[j].to == n - 1));
        CHECK(!(p->path && wraps), "transfer %zu: from %zu to %zu crosses the path's missing link", j, t[j].from,
              t[j].to);
        CHECK(t[j].items >= 1, "transfer %zu: no item", j);
        CHECK(isfinite(t[j].start) && t[j].start >= -tol && t[j].end >= t[j].start && t[j].end <= makespan + tol,
              "transfer %zu: from %g to %g, makespan %g", j, t[j].start, t[j].end, makespan);
        CHECK(isfinite(t[j].period) && t[j].period >= 0, "transfer %zu: period %g", j, t[j].period);
        held[t[j].from] -= t[j].items;
        held[t[j].to] += t[j].items;
        end = fmax(end, t[j].end);
    }
    for (size_t i = 0; st == HETBAL_OK && i < n; i++)
        CHECK(held[i] == (__int128)p->targets[i], "plan: processor %zu does not end with its target", i);
    if (st == HETBAL_OK && count > 0)
        CHECK(close_to(end, makespan, 1e-9), "plan: last transfer ends at %g, makespan %g", end, makespan);
    if (count == 0) CHECK(makespan == 0, "plan: no transfer, makespan %g", makespan);
    free(t);
}

/* A handle that is not a live plan: NaN, -1, 0, HETBAL_ERROR_INPUT. */
static void check_bad_handle(const hetbal_plan *plan, const char *what) {
    reset_error();
    double makespan = hetbal_plan_makespan(plan);
    check_status("hetbal_plan_makespan", HETBAL_ERROR_INPUT);
    CHECK(isnan(makespan), "%s plan: makespan %g", what, makespan);
    CHECK(strstr(hetbal_last_error(), plan ? "not a live plan" : "NULL") != NULL, "%s plan: message", what);
    reset_error();
    CHECK(isnan(hetbal_plan_lower_bound(plan)), "%s plan: lower bound", what);
    check_status("hetbal_plan_lower_bound", HETBAL_ERROR_INPUT);
    reset_error();
    CHECK(hetbal_plan_optimal(plan) == -1, "%s plan: optimal", what);
    check_status("hetbal_plan_optimal", HETBAL_ERROR_INPUT);
    reset_error();
    CHECK(hetbal_plan_transfer_count(plan) == 0, "%s plan: transfer count", what);
    check_status("hetbal_plan_transfer_count", HETBAL_ERROR_INPUT);
    hetbal_transfer t[2];
    memset(t, 0xAB, sizeof t);
    reset_error();
    hetbal_status st = hetbal_plan_transfers(plan, chance(0.5) ? t : NULL, below(3));
    check_status("hetbal_plan_transfers", st);
    CHECK(st == HETBAL_ERROR_INPUT, "%s plan: transfers status %d", what, st);
    CHECK(((unsigned char *)t)[0] == 0xAB && ((unsigned char *)t)[sizeof t - 1] == 0xAB,
          "%s plan: transfers written", what);
    hetbal_plan_free((hetbal_plan *)plan); /* no harm */
}

static int costs_ok(const double *c, size_t n) { return c == NULL || finite_nonnegative(c, n); }

/* `mode` 0: hetbal_ring_plan, 1: hetbal_ring_plan_startups, 2:
   hetbal_ring_plan_path (start-ups or NULL). */
static void fuzz_ring_plan(int mode) {
    static const char *NAMES[] = {"hetbal_ring_plan", "hetbal_ring_plan_startups", "hetbal_ring_plan_path"};
    const char *fn = NAMES[mode];
    int startups = mode > 0, path = mode == 2;
    int huge = 0;
    size_t n = length(&huge);
    /* Loads of 2^52, 2^63 or UINT64_MAX with start-ups are left out: their
       plans pipeline the items in up to 10^7 messages (the start-up planner's
       limit), seconds and gigabytes each, where this fuzz runs thousands of
       calls a second. */
    uint64_t *loads = u64s(n, huge, 0.05, !startups), *targets = NULL;
    if (!huge && loads && chance(0.7)) {
        /* The same total: items moved between processors, each keeping one. */
        targets = array(n, sizeof *targets);
        memcpy(targets, loads, n * sizeof *targets);
        for (size_t k = 0; n > 0 && k < 3; k++) {
            size_t i = below(n), j = below(n);
            if (targets[i] == 0) continue;
            uint64_t m = below(targets[i]);
            if (targets[j] > UINT64_MAX - m) continue;
            targets[i] -= m;
            targets[j] += m;
        }
    } else {
        targets = u64s(n, huge, 0.05, !startups);
    }
    double *c_succ = doubles(n, huge, 0.05), *c_pred = doubles(n, huge, 0.3);
    double *l_succ = startups ? doubles(n, huge, 0.3) : NULL, *l_pred = startups ? doubles(n, huge, 0.3) : NULL;
    if (startups && l_succ && chance(0.3))
        for (size_t i = 0; i < n; i++) l_succ[i] = 0; /* start-ups of 0: hetbal_ring_plan's plan */
    int local = 0;
    hetbal_plan *plan = (hetbal_plan *)&local, **plan_out = chance(0.95) ? &plan : NULL;
    /* A ring has 2 processors at least, and its costs per item are > 0 (the
       header says "n = 0" and "a NaN or negative cost": n = 1 and costs of 0
       are refused too); start-ups may be 0; loads and targets too. */
    int valid = plan_out && n >= 2 && !huge && loads && targets && c_succ && finite_positive(c_succ, n) &&
                (c_pred == NULL || finite_positive(c_pred, n)) && costs_ok(l_succ, n) &&
                (c_pred == NULL || costs_ok(l_pred, n));
    unsigned __int128 sum_loads = 0, sum_targets = 0;
    int backwards = 0; /* a unidirectional path whose first processors lack items */
    for (size_t i = 0; valid && i < n; i++) {
        sum_loads += loads[i];
        sum_targets += targets[i];
        backwards = backwards || sum_loads < sum_targets;
    }
    valid = valid && sum_loads == sum_targets && sum_loads <= UINT64_MAX && !(path && c_pred == NULL && backwards);
    if (verbose) {
        fprintf(stderr, "%lu: %s(n %zu", step, fn, n);
        print_u64s("loads", loads, n, huge);
        print_u64s("targets", targets, n, huge);
        print_doubles("c_succ", c_succ, n, huge);
        print_doubles("c_pred", c_pred, n, huge);
        if (startups) print_doubles("l_succ", l_succ, n, huge), print_doubles("l_pred", l_pred, n, huge);
        fprintf(stderr, ")\n");
    }
    /* Valid rings whose times pass 2^52 (items times the largest cost), or
       whose costs differ by more than 2^40 (1e-308 next to 1), are planned
       like any other: a plan past what f64 resolves has its durations
       recomputed as the validator computes them, or is retimed in its
       order, before it is validated. */
    reset_error();
    hetbal_status st = path       ? hetbal_ring_plan_path(n, loads, targets, c_succ, c_pred, l_succ, l_pred, plan_out)
                       : startups ? hetbal_ring_plan_startups(n, loads, targets, c_succ, c_pred, l_succ, l_pred,
                                                              plan_out)
                                  : hetbal_ring_plan(n, loads, targets, c_succ, c_pred, plan_out);
    check_status(fn, st);
    /* l_pred is ignored on a unidirectional ring: a wrong one there may be
       refused or not. */
    int ignored = startups && c_pred == NULL && !costs_ok(l_pred, n);
    if (!valid) CHECK(st == HETBAL_ERROR_INPUT, "%s: wrong input, status %d", fn, st);
    else if (!ignored) check_refusal_of_valid(fn, st);
    if (plan_out && st != HETBAL_OK) CHECK(plan == NULL, "%s: *plan_out not NULL after a failure", fn);
    if (st == HETBAL_OK) CHECK(plan != NULL && plan != (hetbal_plan *)&local, "%s: no plan", fn);
    if (st == HETBAL_OK && valid && plan && plan != (hetbal_plan *)&local) {
        live_plan p = {.plan = plan, .n = n, .unidirectional = c_pred == NULL, .path = path};
        memcpy(p.loads, loads, n * sizeof *loads);
        memcpy(p.targets, targets, n * sizeof *targets);
        check_plan(&p);
        /* Start-ups of 0 (or none): hetbal_ring_plan's makespan. */
        int none = 1;
        for (size_t i = 0; startups && i < n; i++)
            none = none && (!l_succ || l_succ[i] == 0) && (!l_pred || !c_pred || l_pred[i] == 0);
        if (startups && !path && none) {
            hetbal_plan *plain = NULL;
            CHECK(hetbal_ring_plan(n, loads, targets, c_succ, c_pred, &plain) == HETBAL_OK &&
                      hetbal_plan_makespan(plain) == hetbal_plan_makespan(plan),
                  "hetbal_ring_plan_startups without start-ups: makespan %g, hetbal_ring_plan's %g",
                  hetbal_plan_makespan(plan), hetbal_plan_makespan(plain));
            hetbal_plan_free(plain);
        }
        if (n_live == LIVE) forget(below(LIVE));
        live[n_live++] = p;
    }
    free(loads);
    free(targets);
    free(c_succ);
    free(c_pred);
    free(l_succ);
    free(l_pred);
}

/* The accessors on a live, freed, never made or NULL plan; now and then a
   live plan freed. */
static void fuzz_handles(void) {
    int local = 0;
    switch (below(4)) {
    case 0:
        if (n_live) {
            size_t k = below(n_live);
            if (verbose) fprintf(stderr, "%lu: live plan\n", step);
            check_plan(&live[k]);
            if (chance(0.3)) forget(k);
            break;
        }
        /* fall through */
    case 1:
        if (n_freed) {
            if (verbose) fprintf(stderr, "%lu: freed plan\n", step);
            check_bad_handle(freed[below(n_freed < FREED ? n_freed : FREED)], "a freed");
            break;
        }
        /* fall through */
    case 2:
        if (verbose) fprintf(stderr, "%lu: never made plan\n", step);
        check_bad_handle((const hetbal_plan *)&local, "a never made");
        break;
    default:
        if (verbose) fprintf(stderr, "%lu: NULL plan\n", step);
        check_bad_handle(NULL, "a NULL");
    }
}

/* ------------------------------------------------------------ partitions */

/* The cuts of `n_items` items over `n_procs` processors: from 0 to n_items,
   non-decreasing. */
static int cuts_ok(const uint64_t *cuts, size_t n_procs, size_t n_items) {
    if (cuts[0] != 0 || cuts[n_procs] != n_items) return 0;
    for (size_t j = 0; j < n_procs; j++)
        if (cuts[j] > cuts[j + 1]) return 0;
    return 1;
}

/* The bottleneck of `cuts`, summed here. */
static double bottleneck_of(const uint64_t *cuts, size_t n_procs, const double *w, const double *s) {
    double worst = 0;
    for (size_t j = 0; j < n_procs; j++) {
        double sum = 0;
        for (uint64_t i = cuts[j]; i < cuts[j + 1]; i++) sum += w[i];
        worst = fmax(worst, s[j] * sum);
    }
    return worst;
}

/* Weights finite, >= 0, with a finite sum. */
static int weights_ok(const double *w, size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(isfinite(w[i]) && w[i] >= 0)) return 0;
        sum += w[i];
    }
    return isfinite(sum);
}

static void fuzz_partition(void) {
    int huge_items = 0, huge_procs = 0;
    size_t n_items = length(&huge_items), n_procs = length(&huge_procs);
    double *w = doubles(n_items, huge_items, n_items ? 0.05 : 0.5);
    double *s = doubles(n_procs, huge_procs, 0.05);
    uint64_t *cuts = canaries(n_procs + 1, huge_procs, 0.05);
    double bottleneck = -7, *bottleneck_out = chance(0.8) ? &bottleneck : NULL;
    if (verbose) {
        fprintf(stderr, "%lu: hetbal_partition(n_items %zu", step, n_items);
        print_doubles("weights", w, n_items, huge_items);
        fprintf(stderr, ", n_procs %zu", n_procs);
        print_doubles("seconds_per_unit", s, n_procs, huge_procs);
        fprintf(stderr, ")\n");
    }
    reset_error();
    hetbal_status st = hetbal_partition(n_items, w, n_procs, s, cuts, bottleneck_out);
    check_status("hetbal_partition", st);
    int valid = !huge_items && !huge_procs && n_procs >= 1 && (w || n_items == 0) && s && cuts &&
                (n_items == 0 || weights_ok(w, n_items)) && finite_positive(s, n_procs);
    if (!valid) CHECK(st == HETBAL_ERROR_INPUT, "hetbal_partition: wrong input, status %d", st);
    else check_refusal_of_valid("hetbal_partition", st);
    if (st == HETBAL_OK && valid) {
        CHECK(cuts_ok(cuts, n_procs, n_items), "hetbal_partition: cuts not from 0 to %zu", n_items);
        if (bottleneck_out) {
            CHECK(isfinite(bottleneck) && bottleneck >= 0, "hetbal_partition: bottleneck %g", bottleneck);
            if (cuts_ok(cuts, n_procs, n_items) && (n_items == 0 || tame(w, n_items)) && tame(s, n_procs)) {
                double mine = bottleneck_of(cuts, n_procs, w, s);
                CHECK(close_to(bottleneck, mine, 1e-9), "hetbal_partition: bottleneck %g, its cuts' %g",
                      bottleneck, mine);
                /* No worse than every item on one processor. */
                double total = 0, best_single = INFINITY;
                for (size_t i = 0; i < n_items; i++) total += w[i];
                for (size_t j = 0; j < n_procs; j++) best_single = fmin(best_single, s[j] * total);
                CHECK(bottleneck <= best_single * (1 + 1e-9), "hetbal_partition: %g, worse than one processor's %g",
                      bottleneck, best_single);
            }
        }
    } else {
        CHECK(all_canaries(cuts, huge_procs ? 0 : n_procs + 1) && bottleneck == -7,
              "hetbal_partition: a failure wrote its outputs");
    }
    free(w);
    free(s);
    free(cuts);
}

static void fuzz_partition_moving(void) {
    int huge_items = 0, huge_procs = 0;
    size_t n_items = length(&huge_items), n_procs = length(&huge_procs);
    double *w = doubles(n_items, huge_items, n_items ? 0.05 : 0.5);
    double *s = doubles(n_procs, huge_procs, 0.05);
    uint64_t *current = NULL;
    if (!huge_procs && !chance(0.05)) {
        current = array(n_procs + 1, sizeof *current);
        /* Cuts: sorted draws from 0..n_items, the ends 0 and n_items. */
        current[0] = 0;
        for (size_t j = 1; j < n_procs; j++) current[j] = below(n_items + 1);
        current[n_procs] = n_items;
        for (size_t j = 1; j < n_procs; j++)
            for (size_t k = j; k > 1 && current[k - 1] > current[k]; k--) {
                uint64_t x = current[k];
                current[k] = current[k - 1];
                current[k - 1] = x;
            }
        if (chance(0.2)) current[below(n_procs + 1)] = any_u64(); /* likely broken */
    }
    static const double TOLERANCES[] = {0, 0.05, 0.25, 1, 1e308, -0.0};
    double tolerance = chance(0.8) ? TOLERANCES[below(6)] : special();
    uint64_t *sizes = chance(0.5) ? u64s(n_items, huge_items, 0.0, 1) : NULL;
    int in_place = current && chance(0.25);
    uint64_t *cuts = in_place ? current : canaries(n_procs + 1, huge_procs, 0.05);
    uint64_t *before = NULL;
    if (current) {
        before = array(n_procs + 1, sizeof *before);
        memcpy(before, current, (n_procs + 1) * sizeof *before);
    }
    double bottleneck = -7, *bottleneck_out = chance(0.8) ? &bottleneck : NULL;
    uint64_t moved = CANARY, *moved_out = chance(0.8) ? &moved : NULL;
    if (verbose) {
        fprintf(stderr, "%lu: hetbal_partition_moving(n_items %zu", step, n_items);
        print_doubles("weights", w, n_items, huge_items);
        fprintf(stderr, ", n_procs %zu", n_procs);
        print_doubles("seconds_per_unit", s, n_procs, huge_procs);
        print_u64s("current", current, n_procs + 1, huge_procs);
        fprintf(stderr, ", tolerance %.17g", tolerance);
        print_u64s("sizes", sizes, n_items, huge_items);
        fprintf(stderr, "%s)\n", in_place ? ", in place" : "");
    }
    reset_error();
    hetbal_status st = hetbal_partition_moving(n_items, w, n_procs, s, current, tolerance, sizes, cuts,
                                               bottleneck_out, moved_out);
    check_status("hetbal_partition_moving", st);
    unsigned __int128 size_sum = 0;
    for (size_t i = 0; sizes && i < n_items; i++) size_sum += sizes[i];
    int valid = !huge_items && !huge_procs && n_procs >= 1 && (w || n_items == 0) && s && cuts && current &&
                (n_items == 0 || weights_ok(w, n_items)) && finite_positive(s, n_procs) &&
                cuts_ok(before, n_procs, n_items) && isfinite(tolerance) && tolerance >= 0 &&
                size_sum <= UINT64_MAX;
    /* Sizes adding up to 2^63 bytes or more (but within u64) are a limit of
       the library (HETBAL_ERROR_LIMIT, which hetbal.h does not list here),
       checked before the weights, the speeds and the cuts. */
    int limit = size_sum > (unsigned __int128)INT64_MAX && size_sum <= UINT64_MAX;
    if (!valid) CHECK(st == HETBAL_ERROR_INPUT || (limit && st == HETBAL_ERROR_LIMIT),
                      "hetbal_partition_moving: wrong input, status %d", st);
    else check_refusal_of_valid("hetbal_partition_moving", st);
    if (st == HETBAL_OK && valid) {
        CHECK(cuts_ok(cuts, n_procs, n_items), "hetbal_partition_moving: cuts not from 0 to %zu", n_items);
        if (cuts_ok(cuts, n_procs, n_items)) {
            /* The bytes whose owner changed. */
            uint64_t mine = 0;
            for (size_t i = 0, a = 0, b = 0; i < n_items; i++) {
                while (before[a + 1] <= i) a++;
                while (cuts[b + 1] <= i) b++;
                if (a != b) mine += sizes ? sizes[i] : 1;
            }
            if (moved_out) CHECK(moved == mine, "hetbal_partition_moving: moved %" PRIu64 ", the cuts move %" PRIu64,
                                 moved, mine);
            if (bottleneck_out && (n_items == 0 || tame(w, n_items)) && tame(s, n_procs)) {
                CHECK(close_to(bottleneck, bottleneck_of(cuts, n_procs, w, s), 1e-9),
                      "hetbal_partition_moving: bottleneck %g, its cuts' %g", bottleneck,
                      bottleneck_of(cuts, n_procs, w, s));
                uint64_t *best = array(n_procs + 1, sizeof *best);
                double optimum = -1;
                CHECK(hetbal_partition(n_items, w, n_procs, s, best, &optimum) == HETBAL_OK,
                      "hetbal_partition_moving succeeded where hetbal_partition fails");
                if (tolerance <= 1e300)
                    CHECK(bottleneck <= optimum * (1 + tolerance) * (1 + 1e-9) + 1e-300,
                          "hetbal_partition_moving: bottleneck %g beyond %g x (1 + %g)", bottleneck, optimum,
                          tolerance);
                free(best);
            }
        }
    } else {
        if (current) CHECK(memcmp(current, before, (n_procs + 1) * sizeof *before) == 0,
                           "hetbal_partition_moving: a failure changed current");
        if (!in_place)
            CHECK(all_canaries(cuts, huge_procs ? 0 : n_procs + 1), "hetbal_partition_moving: a failure wrote cuts_out");
        CHECK(bottleneck == -7 && moved == CANARY, "hetbal_partition_moving: a failure wrote its outputs");
    }
    free(w);
    free(s);
    free(current);
    if (!in_place) free(cuts);
    free(before);
    free(sizes);
}

/* ------------------------------------------------- hetbal_alloc and _free */

static void fuzz_alloc(void) {
    static const size_t SIZES[] = {0, 1, 7, 8, 64, 4096};
    size_t bytes = SIZES[below(6)];
    if (verbose) fprintf(stderr, "%lu: hetbal_alloc(%zu)\n", step, bytes);
    void *p = hetbal_alloc(bytes);
    if (bytes == 0) {
        CHECK(p == NULL, "hetbal_alloc(0) is not NULL");
        CHECK(strncmp(hetbal_last_error(), "hetbal_alloc", 12) == 0, "hetbal_alloc(0): message");
    } else {
        CHECK(p != NULL, "hetbal_alloc(%zu) is NULL", bytes);
        if (p) memset(p, 0x5A, bytes); /* every byte writable (ASan checks) */
    }
    /* Too much memory: NULL and a message (without ASan only, which aborts
       on such a request unless allocator_may_return_null=1). */
    if (chance(0.05)) {
#ifndef __SANITIZE_ADDRESS__
        void *q = hetbal_alloc(SIZE_MAX / 2);
        CHECK(q == NULL && strstr(hetbal_last_error(), "cannot allocate"), "hetbal_alloc(SIZE_MAX / 2)");
        free(q);
#endif
    }
    if (chance(0.5)) hetbal_free(p);
    else free(p);
    hetbal_free(NULL);
}

/* ------------------------------------------------- hetbal_balance_points */

static void fuzz_balance_points(void) {
    int huge = 0;
    size_t n = length(&huge);
    size_t *counts = NULL, all = 0;
    if (!huge && chance(0.95)) {
        counts = array(n, sizeof *counts);
        for (size_t i = 0; i < n; i++) all += counts[i] = (size_t)below(4);
    }
    uint64_t *loads = u64s(all, huge, 0.05, 1);
    double *seconds = doubles(all, huge, 0.05);
    int cubic = chance(0.9) ? (int)below(2) : (int)any_u64();
    uint64_t total = chance(0.5) ? any_u64() : below(1000);
    uint64_t *out = canaries(n, huge, 0.05);
    double time = -7, *time_out = chance(0.8) ? &time : NULL;
    if (verbose) {
        fprintf(stderr, "%lu: hetbal_balance_points(n %zu, total %" PRIu64 ", %zu points, cubic %d",
                step, n, total, all, cubic);
        for (size_t k = 0; loads && seconds && k < all; k++)
            fprintf(stderr, " (%" PRIu64 ", %.17g)", loads[k], seconds[k]);
        fprintf(stderr, ")\n");
    }
    reset_error();
    hetbal_status st = hetbal_balance_points(n, total, counts, loads, seconds, cubic, out, time_out);
    check_status("hetbal_balance_points", st);
    int times_ok = 1;
    for (size_t k = 0; seconds && k < all; k++)
        if (!(isfinite(seconds[k]) && seconds[k] >= 0)) times_ok = 0;
    int surely_wrong = n == 0 || huge || !counts || !loads || !seconds || !out ||
                       (cubic != 0 && cubic != 1) || !times_ok;
    if (surely_wrong)
        CHECK(st == HETBAL_ERROR_INPUT, "hetbal_balance_points: wrong input, status %d", st);
    if (st == HETBAL_OK) {
        unsigned __int128 sum = 0;
        for (size_t i = 0; i < n; i++) sum += out[i];
        CHECK(sum == total, "hetbal_balance_points: the loads do not sum to the total");
        CHECK(time_out == NULL || time >= 0, "hetbal_balance_points: time %g", time);
    } else {
        CHECK(all_canaries(out, n), "hetbal_balance_points: failed, yet wrote its output");
    }
    free(counts);
    free(loads);
    free(seconds);
    free(out);
}

/* ---------------------------------------------------------- item buffers */

/* Item buffers (not collective): a few live ones, each with a copy here of
   what it must hold, and freed ones. Calls with random arguments: item_bytes
   0, small or beyond a reservation; items NULL or not; counts 0, small,
   2^52, 2^63 or UINT64_MAX; handles live, freed, never made or NULL. */
#define BUFFERS 4
typedef struct {
    hetbal_item_buffer *buffer;
    size_t item_bytes;
    unsigned char *copy; /* what the buffer must hold */
    uint64_t count;
} live_buffer;
static live_buffer buffers[BUFFERS];
static size_t n_buffers = 0;
static hetbal_item_buffer *freed_buffers[FREED];
static size_t n_freed_buffers = 0;

/* The buffer holds exactly the copy kept here, and says so. */
static void check_buffer(const live_buffer *b, const char *after) {
    CHECK(hetbal_item_buffer_count(b->buffer) == b->count, "item buffer: count %" PRIu64 " after %s, %" PRIu64 " expected",
          hetbal_item_buffer_count(b->buffer), after, b->count);
    CHECK(hetbal_item_buffer_item_bytes(b->buffer) == b->item_bytes, "item buffer: item_bytes changed after %s", after);
    const unsigned char *data = hetbal_item_buffer_data(b->buffer);
    CHECK(data != NULL, "item buffer: no data after %s", after);
    if (data && b->count)
        CHECK(memcmp(data, b->copy, b->count * b->item_bytes) == 0, "item buffer: items changed after %s", after);
}

/* A handle that is not a live buffer is refused by every call. */
static void check_bad_buffer(hetbal_item_buffer *buffer, const char *what) {
    unsigned char item = 7;
    reset_error();
    CHECK(hetbal_item_buffer_data(buffer) == NULL, "item buffer: %s handle gave data", what);
    CHECK(hetbal_item_buffer_count(buffer) == 0, "item buffer: %s handle gave a count", what);
    CHECK(hetbal_item_buffer_item_bytes(buffer) == 0, "item buffer: %s handle gave item_bytes", what);
    hetbal_status st = hetbal_item_buffer_append(buffer, &item, 1);
    check_status("hetbal_item_buffer_append", st);
    CHECK(st == HETBAL_ERROR_INPUT, "hetbal_item_buffer_append: %s handle, status %d", what, st);
    st = hetbal_item_buffer_resize(buffer, 1);
    check_status("hetbal_item_buffer_resize", st);
    CHECK(st == HETBAL_ERROR_INPUT, "hetbal_item_buffer_resize: %s handle, status %d", what, st);
    st = hetbal_item_buffer_give_back_sent(buffer, 1);
    check_status("hetbal_item_buffer_give_back_sent", st);
    CHECK(st == HETBAL_ERROR_INPUT, "hetbal_item_buffer_give_back_sent: %s handle, status %d", what, st);
    hetbal_item_buffer_free(buffer); /* does nothing */
}

static void forget_buffer(size_t k) {
    hetbal_item_buffer_free(buffers[k].buffer);
    freed_buffers[n_freed_buffers++ % FREED] = buffers[k].buffer;
    free(buffers[k].copy);
    buffers[k] = buffers[--n_buffers];
}

static void fuzz_item_buffer(void) {
    int local = 0;
    uint64_t count = chance(0.8) ? below(40) : any_u64();
    if (n_buffers == 0 || (n_buffers < BUFFERS && chance(0.2))) {
        size_t item_bytes = chance(0.8) ? (size_t)below(65) : (size_t)any_u64();
        hetbal_item_buffer *made = NULL;
        int null_out = chance(0.1);
        if (verbose) fprintf(stderr, "%lu: hetbal_item_buffer_create(%zu, %s)\n", step, item_bytes, null_out ? "NULL" : "out");
        reset_error();
        hetbal_status st = hetbal_item_buffer_create(item_bytes, null_out ? NULL : &made);
        check_status("hetbal_item_buffer_create", st);
        int surely_wrong = null_out || item_bytes == 0 || item_bytes > (size_t)1 << 39;
        if (surely_wrong) CHECK(st == HETBAL_ERROR_INPUT, "hetbal_item_buffer_create: wrong input, status %d", st);
        if (st == HETBAL_OK) {
            buffers[n_buffers++] = (live_buffer){made, item_bytes, NULL, 0};
            check_buffer(&buffers[n_buffers - 1], "create");
        } else {
            CHECK(made == NULL, "hetbal_item_buffer_create: failed, yet wrote its output");
        }
        return;
    }
    live_buffer *b = &buffers[below(n_buffers)];
    switch (below(6)) {
    case 0: { /* append */
        int null_items = chance(0.1); /* NULL items (refused unless count is 0) */
        uint64_t bytes = 0;
        int overflow = __builtin_mul_overflow(count, (uint64_t)b->item_bytes, &bytes);
        /* Copies kept small: at most 64 MiB a buffer. */
        int fits = !overflow && bytes <= ((uint64_t)1 << 26) && b->count * b->item_bytes + bytes <= ((uint64_t)1 << 26);
        unsigned char *items = NULL;
        if (!null_items && fits && bytes) {
            items = malloc(bytes);
            for (uint64_t i = 0; i < bytes; i++) items[i] = (unsigned char)next();
        }
        if (verbose) fprintf(stderr, "%lu: hetbal_item_buffer_append(%" PRIu64 " items%s)\n", step, count, items ? "" : ", NULL");
        reset_error();
        hetbal_status st = hetbal_item_buffer_append(b->buffer, items, count);
        check_status("hetbal_item_buffer_append", st);
        if ((items == NULL && count > 0) || overflow)
            CHECK(st == HETBAL_ERROR_INPUT, "hetbal_item_buffer_append: wrong input, status %d", st);
        if (st == HETBAL_OK) {
            b->copy = realloc(b->copy, b->count * b->item_bytes + bytes + 1);
            if (bytes) memcpy(b->copy + b->count * b->item_bytes, items, bytes);
            b->count += count;
        }
        free(items);
        check_buffer(b, "append");
        break;
    }
    case 1: { /* resize */
        uint64_t bytes = 0;
        int overflow = __builtin_mul_overflow(count, (uint64_t)b->item_bytes, &bytes);
        if (!overflow && bytes > ((uint64_t)1 << 26)) count = below(40), bytes = count * b->item_bytes;
        if (verbose) fprintf(stderr, "%lu: hetbal_item_buffer_resize(%" PRIu64 ")\n", step, count);
        reset_error();
        hetbal_status st = hetbal_item_buffer_resize(b->buffer, count);
        check_status("hetbal_item_buffer_resize", st);
        if (overflow) CHECK(st == HETBAL_ERROR_INPUT, "hetbal_item_buffer_resize: overflow, status %d", st);
        if (st == HETBAL_OK) {
            b->copy = realloc(b->copy, bytes + 1);
            if (count > b->count) memset(b->copy + b->count * b->item_bytes, 0, bytes - b->count * b->item_bytes);
            b->count = count;
        }
        check_buffer(b, "resize");
        break;
    }
    case 2: /* write through the data pointer, or switch giving back (any int) */
        if (b->count) {
            unsigned char *data = hetbal_item_buffer_data(b->buffer);
            uint64_t at = below(b->count * b->item_bytes);
            if (data) data[at] = b->copy[at] = (unsigned char)next();
        }
        if (chance(0.3)) {
            reset_error();
            hetbal_status st = hetbal_item_buffer_give_back_sent(b->buffer, (int)next());
            check_status("hetbal_item_buffer_give_back_sent", st);
            CHECK(st == HETBAL_OK, "hetbal_item_buffer_give_back_sent: a live buffer, status %d", st);
        }
        check_buffer(b, "a write");
        break;
    case 3:
        if (verbose) fprintf(stderr, "%lu: free item buffer\n", step);
        forget_buffer((size_t)(b - buffers));
        break;
    case 4:
        if (n_freed_buffers) {
            check_bad_buffer(freed_buffers[below(n_freed_buffers < FREED ? n_freed_buffers : FREED)], "a freed");
            break;
        }
        /* fall through */
    default:
        if (chance(0.5))
            check_bad_buffer(NULL, "a NULL");
        else
            check_bad_buffer((hetbal_item_buffer *)&local, "a never made");
    }
}

static int run_api(unsigned long iterations) {
    for (step = 0; step < iterations; step++) {
        switch (below(10)) {
        case 0: fuzz_balance(); break;
        case 8: fuzz_balance_points(); break;
        case 1: case 2: fuzz_ring_plan(0); break;
        case 3: fuzz_ring_plan(chance(0.5) ? 1 : 2); break;
        case 4: fuzz_handles(); break;
        case 5: case 6: fuzz_partition(); break;
        case 7: fuzz_partition_moving(); break;
        case 9: if (chance(0.5)) { fuzz_item_buffer(); break; } /* fall through */
        default: fuzz_alloc();
        }
    }
    while (n_live) forget(0);
    while (n_buffers) forget_buffer(0);
    return failures;
}

/* -------------------------------------------------------------- with MPI */

static int size = 1;

/* Every rank's status, the same: 1 when they agree. */
static int agreed(const char *fn, hetbal_status st) {
    int mine[2] = {(int)st, -(int)st}, low[2];
    MPI_Allreduce(mine, low, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(low[0] == -low[1], "%s: the ranks' statuses differ (%d to %d)", fn, low[0], -low[1]);
    return low[0] == -low[1];
}

/* Item bytes: the item's global position (8 bytes), then bytes derived from
   it. */
static void fill(unsigned char *items, uint64_t first, uint64_t count, uint64_t total, size_t item_bytes) {
    for (uint64_t k = 0; k < count; k++) {
        uint64_t p = (first + k) % total;
        unsigned char *item = items + k * item_bytes;
        memcpy(item, &p, 8);
        for (size_t j = 8; j < item_bytes; j++) item[j] = (unsigned char)(p * 31 + j);
    }
}

/* This rank's `count` items, consecutive global positions from the first
   one's (its position in `*first`), each's bytes as fill() made them. */
static int consecutive(const unsigned char *items, uint64_t count, uint64_t total, size_t item_bytes,
                       uint64_t *first) {
    if (count == 0) return 1;
    memcpy(first, items, 8);
    for (uint64_t k = 0; k < count; k++) {
        uint64_t p = (*first + k) % total, got;
        const unsigned char *item = items + k * item_bytes;
        memcpy(&got, item, 8);
        if (got != p) return 0;
        for (size_t j = 8; j < item_bytes; j++)
            if (item[j] != (unsigned char)(p * 31 + j)) return 0;
    }
    return 1;
}

/* Every rank's items together: rank r+1's first position follows rank r's
   last, `counts` the expected counts when not NULL. */
static void check_ring_order(const char *fn, uint64_t first, uint64_t count, uint64_t total, const uint64_t *counts) {
    uint64_t mine[2] = {first, count}, *all = array(2 * (size_t)size, sizeof *all);
    MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, MPI_COMM_WORLD);
    uint64_t sum = 0;
    for (int r = 0; r < size; r++) {
        sum += all[2 * r + 1];
        if (counts) CHECK(all[2 * r + 1] == counts[r], "%s: rank %d holds %" PRIu64 " items, expected %" PRIu64,
                          fn, r, all[2 * r + 1], counts[r]);
        int s = (r + 1) % size;
        CHECK(all[2 * s] == (all[2 * r] + all[2 * r + 1]) % total, "%s: rank %d's items do not follow rank %d's", fn,
              s, r);
    }
    CHECK(sum == total, "%s: %" PRIu64 " items on the ring, expected %" PRIu64, fn, sum, total);
    free(all);
}

/* How one rank breaks the arguments of hetbal_mpi_ring_redistribute. */
enum {
    R_NONE, R_NULL_ITEMS, R_NULL_COUNT, R_NULL_BUFFER, R_ITEM_BYTES_0, R_COUNT_PLUS_1, R_COUNT_MINUS_1,
    R_COUNT_HUGE, R_NULL_PLAN, R_FREED_PLAN, R_NEVER_MADE_PLAN, R_OTHER_TARGETS, R_OTHER_LOADS, R_OTHER_SIZE,
    R_OTHER_ITEM_BYTES, R_STARTUPS, R_KINDS
};
static const char *R_NAMES[] = {"none", "items NULL", "count NULL", "*items NULL", "item_bytes 0", "count + 1",
                                "count - 1", "count huge", "plan NULL", "plan freed", "plan never made",
                                "a plan for other targets", "a plan for other loads", "a plan for one processor more",
                                "other item_bytes", "a plan with start-ups"};

/* Targets of `total` items over `n` processors, each at least 1. */
static void split(uint64_t total, size_t n, uint64_t *out) {
    for (size_t i = 0; i < n; i++) out[i] = 1;
    for (uint64_t left = total - n; left > 0; left--) out[below(n)]++;
}

static void redistribute_round(void) {
    size_t n = (size_t)size;
    uint64_t *loads = array(n, 8), *targets = array(n, 8), *other = array(n, 8);
    double *c_succ = array(n, 8), *c_pred = array(n, 8), *l = array(n, 8);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) total += loads[i] = 1 + below(chance(0.2) ? 40 : 5);
    split(total, n, targets);
    for (size_t i = 0; i < n; i++) c_succ[i] = normal(), c_pred[i] = normal(), l[i] = normal();
    int bidirectional = chance(0.7), with_startups = chance(0.3);
    static const size_t ITEM_BYTES[] = {8, 12, 16, 40};
    size_t item_bytes = ITEM_BYTES[below(4)];
    int breaking = chance(0.75) ? 1 + (int)below(R_KINDS - 1) : R_NONE, bad = (int)below(n);
    if (rank != bad) breaking = breaking == R_NONE ? R_NONE : -breaking; /* the others keep theirs */
    hetbal_plan *plan = NULL, *own = NULL, *scrap = NULL;
    const double *pred = bidirectional ? c_pred : NULL;
    hetbal_status st = with_startups ? hetbal_ring_plan_startups(n, loads, targets, c_succ, pred, l, l, &plan)
                                     : hetbal_ring_plan(n, loads, targets, c_succ, pred, &plan);
    CHECK(st == HETBAL_OK, "the round's plan: status %d", st);
    /* The other plans, drawn on every rank alike (whoever breaks): other
       loads (one more item here and there), other targets (the same total:
       if it has no other split, other loads instead), one processor more. */
    uint64_t *other_loads = array(n + 1, 8), *other_loads_targets = array(n + 1, 8);
    uint64_t *more_loads = array(n + 1, 8), *more_targets = array(n + 1, 8);
    memcpy(other_loads, loads, n * 8);
    other_loads[below(n)] += 1 + below(3);
    uint64_t other_total = 0;
    for (size_t i = 0; i < n; i++) other_total += other_loads[i];
    split(other_total, n, other_loads_targets);
    split(total, n, other);
    if (memcmp(other, targets, n * 8) == 0) /* one item moved on */
        for (size_t i = 0; i < n; i++)
            if (other[i] > 1) {
                other[i]--;
                other[(i + 1) % n]++;
                break;
            }
    if (memcmp(other, targets, n * 8) == 0 && (breaking == R_OTHER_TARGETS || breaking == -R_OTHER_TARGETS))
        breaking = breaking < 0 ? -R_OTHER_LOADS : R_OTHER_LOADS;
    memcpy(more_loads, loads, n * 8);
    more_loads[n] = 1;
    split(total + 1, n + 1, more_targets);
    if (verbose && rank == bad)
        fprintf(stderr, "%lu: hetbal_mpi_ring_redistribute, %" PRIu64 " items, rank %d: %s\n", step, total, bad,
                R_NAMES[breaking < 0 ? -breaking : breaking]);
    const hetbal_plan *arg_plan = plan;
    size_t arg_bytes = item_bytes;
    uint64_t count = loads[rank], first = 0, arg_count;
    for (int r = 0; r < rank; r++) first += loads[r];
    int local = 0;
    switch (breaking) {
    case R_NULL_PLAN: arg_plan = NULL; break;
    case R_NEVER_MADE_PLAN: arg_plan = (const hetbal_plan *)&local; break;
    case R_FREED_PLAN:
        CHECK(hetbal_ring_plan(n, loads, targets, c_succ, NULL, &scrap) == HETBAL_OK, "scrap plan");
        hetbal_plan_free(scrap);
        arg_plan = scrap;
        break;
    case R_OTHER_TARGETS:
        CHECK(hetbal_ring_plan(n, loads, other, c_succ, c_pred, &own) == HETBAL_OK, "plan for other targets");
        arg_plan = own;
        break;
    case R_OTHER_LOADS:
        CHECK(hetbal_ring_plan(n, other_loads, other_loads_targets, c_succ, c_pred, &own) == HETBAL_OK,
              "plan for other loads");
        arg_plan = own;
        break;
    case R_OTHER_SIZE: {
        double *c = array(n + 1, 8);
        for (size_t i = 0; i <= n; i++) c[i] = 1;
        CHECK(hetbal_ring_plan(n + 1, more_loads, more_targets, c, NULL, &own) == HETBAL_OK,
              "plan for one processor more");
        free(c);
        arg_plan = own;
        break;
    }
    case R_STARTUPS:
        if (with_startups)
            CHECK(hetbal_ring_plan(n, loads, targets, c_succ, pred, &own) == HETBAL_OK, "plan");
        else
            CHECK(hetbal_ring_plan_startups(n, loads, targets, c_succ, pred, l, l, &own) == HETBAL_OK,
                  "plan with start-ups");
        arg_plan = own;
        break;
    case R_ITEM_BYTES_0: arg_bytes = 0; break;
    case R_OTHER_ITEM_BYTES: arg_bytes = 2 * item_bytes; break;
    }
    /* This rank's items: `count` of them (one more with room when its count
       is one more), of arg_bytes bytes when it gives other item bytes. */
    size_t held_bytes = arg_bytes ? arg_bytes : item_bytes;
    uint64_t held = breaking == R_COUNT_PLUS_1 ? count + 1 : count;
    unsigned char *buffer = array(held * held_bytes, 1);
    fill(buffer, first, held, breaking == R_COUNT_PLUS_1 ? total + 1 : total, held_bytes);
    unsigned char *original = array(held * held_bytes, 1);
    memcpy(original, buffer, held * held_bytes);
    arg_count = held;
    if (breaking == R_COUNT_MINUS_1) arg_count = count - 1;
    if (breaking == R_COUNT_HUGE) arg_count = UINT64_MAX / 4;
    void *items = buffer, **arg_items = breaking == R_NULL_ITEMS ? NULL : &items;
    uint64_t *arg_count_ptr = breaking == R_NULL_COUNT ? NULL : &arg_count;
    if (breaking == R_NULL_BUFFER) items = NULL;
    reset_error();
    st = hetbal_mpi_ring_redistribute(MPI_COMM_WORLD, arg_plan, arg_bytes, arg_items, arg_count_ptr);
    check_status("hetbal_mpi_ring_redistribute", st);
    if (breaking == R_NULL_BUFFER) items = buffer;
    int any_break = breaking != R_NONE, must_fail = any_break && breaking != R_STARTUPS && breaking != -R_STARTUPS;
    int same = agreed("hetbal_mpi_ring_redistribute", st);
    const char *kind = R_NAMES[breaking < 0 ? -breaking : breaking];
    if (!any_break) CHECK(st == HETBAL_OK, "hetbal_mpi_ring_redistribute: valid arguments, status %d", st);
    if (must_fail) CHECK(st != HETBAL_OK, "hetbal_mpi_ring_redistribute: rank %d's %s accepted", bad, kind);
    if (st == HETBAL_OK && same) {
        uint64_t mine = 0;
        int ok = consecutive(items, arg_count, total, item_bytes, &mine);
        CHECK(ok, "hetbal_mpi_ring_redistribute: items damaged or out of order (%s)", kind);
        int all_ok;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (all_ok) check_ring_order("hetbal_mpi_ring_redistribute", mine, arg_count, total, targets);
    } else {
        uint64_t expected = breaking == R_COUNT_MINUS_1 ? count - 1 : breaking == R_COUNT_HUGE ? UINT64_MAX / 4 : held;
        CHECK(arg_count == expected, "hetbal_mpi_ring_redistribute: a failure changed the count (%s)", kind);
        CHECK(memcmp(items, original, held * held_bytes) == 0,
              "hetbal_mpi_ring_redistribute: a failure changed the items (%s)", kind);
    }
    free(items);
    free(original);
    hetbal_plan_free(plan);
    hetbal_plan_free(own);
    free(loads);
    free(targets);
    free(other);
    free(other_loads);
    free(other_loads_targets);
    free(more_loads);
    free(more_targets);
    free(c_succ);
    free(c_pred);
    free(l);
}

/* How one rank breaks the arguments of hetbal_mpi_balancer_create. */
enum { C_NONE, C_NAN_SUCC, C_NEGATIVE_PRED, C_INFINITE_SUCC, C_NULL_OUT, C_ITEM_BYTES_0, C_PRED_ALONE,
       C_MEASURED_ALONE, C_OTHER_COSTS, C_OTHER_ITEM_BYTES, C_KINDS };
static const char *C_NAMES[] = {"none", "NaN in c_succ", "-1 in c_pred", "inf in c_succ", "balancer_out NULL",
                                "item_bytes 0", "c_pred without c_succ", "measured links alone",
                                "other costs", "other item_bytes"};

static void create_round(void) {
    size_t n = (size_t)size;
    double *c_succ = array(n, 8), *c_pred = array(n, 8);
    for (size_t i = 0; i < n; i++) c_succ[i] = 1e-7 * normal(), c_pred[i] = 1e-7 * normal();
    int bidirectional = chance(0.7), measured = chance(0.05);
    size_t item_bytes = 8 * (1 + below(4));
    int breaking = chance(0.75) ? 1 + (int)below(C_KINDS - 1) : C_NONE, bad = (int)below(n);
    size_t where = below(n);
    if (measured && (breaking == C_NAN_SUCC || breaking == C_INFINITE_SUCC || breaking == C_PRED_ALONE ||
                     breaking == C_NEGATIVE_PRED || breaking == C_MEASURED_ALONE || breaking == C_OTHER_COSTS))
        measured = 0;
    if (rank != bad) breaking = C_NONE;
    if (verbose && rank == bad) fprintf(stderr, "%lu: hetbal_mpi_balancer_create, rank %d: %s%s\n", step, bad,
                                        C_NAMES[breaking], measured ? " (measured links)" : "");
    const double *succ = measured ? NULL : c_succ, *pred = measured || !bidirectional ? NULL : c_pred;
    switch (breaking) {
    case C_NAN_SUCC: c_succ[where] = NAN; break;
    case C_INFINITE_SUCC: c_succ[where] = INFINITY; break;
    case C_NEGATIVE_PRED: c_pred[where] = -1; pred = c_pred; break;
    case C_ITEM_BYTES_0: item_bytes = 0; break;
    case C_PRED_ALONE: succ = NULL; pred = c_pred; break;
    case C_MEASURED_ALONE: succ = NULL; pred = NULL; break;
    case C_OTHER_COSTS: c_succ[where] *= 2; break;
    case C_OTHER_ITEM_BYTES: item_bytes += 8; break;
    }
    int local = 0;
    hetbal_balancer *b = (hetbal_balancer *)&local, **out = breaking == C_NULL_OUT ? NULL : &b;
    reset_error();
    hetbal_status st = hetbal_mpi_balancer_create(MPI_COMM_WORLD, item_bytes, succ, pred, out);
    check_status("hetbal_mpi_balancer_create", st);
    int any_break;
    MPI_Allreduce(&breaking, &any_break, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    agreed("hetbal_mpi_balancer_create", st);
    if (any_break) CHECK(st != HETBAL_OK, "hetbal_mpi_balancer_create: rank %d's %s accepted", bad, C_NAMES[any_break]);
    else CHECK(st == HETBAL_OK, "hetbal_mpi_balancer_create: valid arguments, status %d", st);
    if (st != HETBAL_OK && out) CHECK(b == NULL, "hetbal_mpi_balancer_create: *balancer_out not NULL after a failure");
    if (st == HETBAL_OK) {
        hetbal_mpi_balancer_free(b);
        hetbal_mpi_balancer_free(b); /* twice: no harm */
    }
    free(c_succ);
    free(c_pred);
}

/* The balancer of the step rounds, this rank's items and what it knows. */
static hetbal_balancer *balancer = NULL;
static unsigned char *cells = NULL;
static uint64_t n_cells = 0, cells_total = 0, cells_first = 0;
static uint32_t last_iteration = 0;
static unsigned long moves = 0; /* steps that moved items */
static double speed = 0;        /* this rank's seconds per cell */
static const size_t CELL_BYTES = 16;

static void start_balancer(void) {
    size_t n = (size_t)size;
    double *c = array(n, 8);
    for (size_t i = 0; i < n; i++) c[i] = 1e-6 * normal();
    cells_total = 0, cells_first = 0;
    for (int r = 0; r < size; r++) {
        uint64_t load = 1 + below(60);
        if (r < rank) cells_first += load;
        if (r == rank) n_cells = load;
        cells_total += load;
    }
    /* Each rank's seconds per cell: a heterogeneous ring, so that moving
       pays now and then. */
    for (int r = 0; r < size; r++) {
        double s = 1e-4 * (1 + 20 * unit());
        if (r == rank) speed = s;
    }
    cells = array(n_cells * CELL_BYTES, 1);
    fill(cells, cells_first, n_cells, cells_total, CELL_BYTES);
    hetbal_status st = hetbal_mpi_balancer_create(MPI_COMM_WORLD, CELL_BYTES, c, chance(0.5) ? c : NULL, &balancer);
    CHECK(st == HETBAL_OK, "the step rounds' balancer: status %d", st);
    last_iteration = 0;
    free(c);
}

/* How one rank breaks the arguments of hetbal_mpi_balancer_step. */
enum { S_NONE, S_NAN, S_ZERO, S_NEGATIVE, S_INFINITE, S_NULL_DECISION, S_NULL_ITEMS, S_NULL_COUNT, S_NULL_BUFFER,
       S_COUNT_0, S_OTHER_REMAINING, S_KINDS };
static const char *S_NAMES[] = {"none", "compute_seconds NaN", "compute_seconds 0", "compute_seconds -1",
                                "compute_seconds inf", "decision_out NULL", "items NULL", "count NULL",
                                "*items NULL", "count 0", "other remaining"};

static void step_round(void) {
    double jitter = 1;
    for (int r = 0; r < size; r++) {
        double j = 1 + 0.05 * unit();
        if (r == rank) jitter = j;
    }
    uint64_t remaining = below(60);
    int breaking = chance(0.5) ? 1 + (int)below(S_KINDS - 1) : S_NONE, bad = (int)below((uint64_t)size);
    if (rank != bad) breaking = S_NONE;
    if (verbose && rank == bad) fprintf(stderr, "%lu: hetbal_mpi_balancer_step, rank %d: %s\n", step, bad,
                                        S_NAMES[breaking]);
    double seconds = (double)n_cells * speed * jitter;
    switch (breaking) {
    case S_NAN: seconds = NAN; break;
    case S_ZERO: seconds = 0; break;
    case S_NEGATIVE: seconds = -1; break;
    case S_INFINITE: seconds = INFINITY; break;
    case S_OTHER_REMAINING: remaining += 1; break;
    }
    void *items = cells, **arg_items = breaking == S_NULL_ITEMS ? NULL : &items;
    uint64_t count = breaking == S_COUNT_0 ? 0 : n_cells, *arg_count = breaking == S_NULL_COUNT ? NULL : &count;
    if (breaking == S_NULL_BUFFER) items = NULL;
    hetbal_decision d;
    memset(&d, 0xAB, sizeof d);
    hetbal_decision *arg_d = breaking == S_NULL_DECISION ? NULL : &d;
    unsigned char *original = array(n_cells * CELL_BYTES, 1);
    memcpy(original, cells, n_cells * CELL_BYTES);
    reset_error();
    hetbal_status st = hetbal_mpi_balancer_step(balancer, seconds, remaining, arg_items, arg_count, arg_d);
    check_status("hetbal_mpi_balancer_step", st);
    if (breaking == S_NULL_BUFFER) items = cells;
    int any_break;
    MPI_Allreduce(&breaking, &any_break, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int same = agreed("hetbal_mpi_balancer_step", st);
    if (any_break) CHECK(st != HETBAL_OK, "hetbal_mpi_balancer_step: rank %d's %s accepted", bad, S_NAMES[any_break]);
    else CHECK(st == HETBAL_OK, "hetbal_mpi_balancer_step: valid arguments, status %d", st);
    if (st == HETBAL_OK && same) {
        cells = items;
        n_cells = count;
        CHECK(d.count == count, "hetbal_mpi_balancer_step: decision's count %" PRIu64 ", *count %" PRIu64, d.count,
              count);
        CHECK(d.redistribute == 0 || d.redistribute == 1, "hetbal_mpi_balancer_step: redistribute %d", d.redistribute);
        CHECK(d.iteration > last_iteration, "hetbal_mpi_balancer_step: iteration %u after %u", d.iteration,
              last_iteration);
        last_iteration = d.iteration;
        moves += d.redistribute == 1;
        uint64_t first = 0;
        int ok = consecutive(cells, n_cells, cells_total, CELL_BYTES, &first);
        CHECK(ok, "hetbal_mpi_balancer_step: items damaged or out of order");
        CHECK(n_cells == 0 || d.first == first, "hetbal_mpi_balancer_step: decision's first %" PRIu64
              ", the items' %" PRIu64, d.first, first);
        int all_ok;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (all_ok) check_ring_order("hetbal_mpi_balancer_step", first, n_cells, cells_total, NULL);
    } else {
        CHECK(count == (breaking == S_COUNT_0 ? 0 : n_cells), "hetbal_mpi_balancer_step: a failure changed the count");
        cells = items; /* the same items, maybe in a buffer realloc'ed */
        CHECK(memcmp(cells, original, n_cells * CELL_BYTES) == 0,
              "hetbal_mpi_balancer_step: a failure changed the items");
    }
    free(original);
}

/* The arguments that must match on every rank, broken on every rank: a
   failure everywhere, nothing changed. */
static void everywhere_round(void) {
    static const char *NAMES[] = {"step: balancer NULL", "step: balancer never made", "step: balancer freed",
                                  "step: a plan as the balancer", "redistribute: MPI_COMM_NULL",
                                  "create: MPI_COMM_NULL"};
    int local = 0, kind = (int)below(6);
    if (verbose && rank == 0) fprintf(stderr, "%lu: every rank: %s\n", step, NAMES[kind]);
    hetbal_decision d;
    void *items = cells;
    uint64_t count = n_cells;
    hetbal_balancer *b = (hetbal_balancer *)&local;
    hetbal_plan *plan = NULL;
    hetbal_status st;
    switch (kind) {
    case 2:
        CHECK(hetbal_mpi_balancer_create(MPI_COMM_WORLD, 8, NULL, NULL, &b) == HETBAL_OK, "a measured balancer");
        hetbal_mpi_balancer_free(b);
        break;
    case 3: {
        uint64_t loads[2] = {2, 1}, targets[2] = {1, 2};
        double c[2] = {1, 1};
        CHECK(hetbal_ring_plan(2, loads, targets, c, c, &plan) == HETBAL_OK, "a plan");
        b = (hetbal_balancer *)plan;
        break;
    }
    case 0: b = NULL; break;
    }
    reset_error();
    const char *fn = kind < 4 ? "hetbal_mpi_balancer_step" : kind == 4 ? "hetbal_mpi_ring_redistribute"
                                                                       : "hetbal_mpi_balancer_create";
    if (kind < 4) st = hetbal_mpi_balancer_step(b, 1.0, 1, &items, &count, &d);
    else if (kind == 4) st = hetbal_mpi_ring_redistribute(MPI_COMM_NULL, NULL, 8, &items, &count);
    else st = hetbal_mpi_balancer_create(MPI_COMM_NULL, 8, NULL, NULL, &b);
    check_status(fn, st);
    agreed(fn, st);
    CHECK(st == HETBAL_ERROR_INPUT, "%s: status %d", NAMES[kind], st);
    CHECK(items == cells && count == n_cells, "%s: a refused call changed the items", NAMES[kind]);
    if (kind == 3) {
        hetbal_mpi_balancer_free((hetbal_balancer *)plan); /* not a balancer: nothing done */
        CHECK(hetbal_plan_makespan(plan) == 1, "a plan freed as a balancer");
        hetbal_plan_free(plan);
    }
}

static int run_mpi(unsigned long rounds) {
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "fuzz --mpi: run it on 2 ranks or more (mpirun -np 4)\n");
        return 1;
    }
    start_balancer();
    for (step = 0; step < rounds; step++) {
        uint64_t kind = below(10);
        if (kind < 5) redistribute_round();
        else if (kind < 6) create_round();
        else if (kind < 9) {
            step_round();
            if (chance(0.05)) { /* a new balancer, new speeds */
                hetbal_mpi_balancer_free(balancer);
                free(cells);
                start_balancer();
            }
        }
        else everywhere_round();
    }
    hetbal_mpi_balancer_free(balancer);
    hetbal_mpi_balancer_free(balancer); /* twice: no harm */
    free(cells);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

int main(int argc, char **argv) {
    int mpi = argc > 1 && strcmp(argv[1], "--mpi") == 0;
    int arg = 1 + mpi;
    seed = argc > arg ? strtoull(argv[arg], NULL, 10) : 1;
    unsigned long steps = argc > arg + 1 ? strtoul(argv[arg + 1], NULL, 10) : (mpi ? 500 : 50000);
    const char *v = getenv("HETBAL_FUZZ_VERBOSE");
    verbose = v && *v && strcmp(v, "0") != 0;
    state = seed * 0x2545F4914F6CDD1DULL + 1;
    int total;
    if (mpi) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        total = run_mpi(steps);
        if (verbose && rank == 0) print_counts();
        if (rank == 0 && total == 0)
            printf("fuzz --mpi (seed %llu): %lu rounds on %d ranks (%lu balancer steps moved items), each rank's bad "
                   "arguments refused on every rank, nothing lost\n", seed, steps, size, moves);
        MPI_Finalize();
    } else {
        total = run_api(steps);
        if (verbose) print_counts();
        if (total == 0)
            printf("fuzz (seed %llu): %lu calls of hetbal.h and the item buffers with random arguments, every check held\n", seed, steps);
    }
    if (total && rank == 0) fprintf(stderr, "fuzz: %d check(s) failed (seed %llu)\n", total, seed);
    return total ? 1 : 0;
}
