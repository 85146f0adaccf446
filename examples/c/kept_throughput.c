/* A rank that already holds data receives more in front of it, from C: the
   ring redistribution of a malloc'ed buffer (hetbal_mpi_ring_redistribute:
   the buffer is realloc'ed and the kept items shift once, a memmove) and of an
   item buffer (hetbal_mpi_ring_redistribute_buffer: the kept items never
   move), the same with an item buffer that gives back the memory of what it
   sends as it leaves (hetbal_item_buffer_give_back_sent), against a plain MPI
   transfer of the same bytes into a freshly malloc'ed buffer (by a rank 1
   that holds nothing, and by one that holds its data, as in the
   redistributions); the five alternated run by run, each run in another
   order.

   mpirun -np 2 kept_throughput [HELD_MIB] [MOVED_MIB] [RUNS]

   Rank 0 holds MOVED_MIB + 1 items of 1 MiB and sends MOVED_MIB of them to
   rank 1, which holds HELD_MIB (default 1024 and 1023, 5 runs); the items
   arrive in front of rank 1's (from its predecessor). Prints each way's
   median seconds (rank 0's clock, between barriers: the call's wall time on
   both ranks, checks included), every run's, the ratio to the plain transfer
   by a holding receiver, and the median of rank 1's own time (from its call
   to its return, without the barrier: what the receiver pays; the sender may
   return later); then a memcpy of HELD_MIB into memory touched before. Each
   run checks the items (one byte of each) and that the item buffer's kept
   items stayed where they were. Build: mpicc -O2 kept_throughput.c
   $(pkg-config --cflags --libs hetbal). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hetbal_mpi.h>

#define MIB ((size_t)1 << 20)

static int rank;

static void fail(const char *what) {
    fprintf(stderr, "kept_throughput, rank %d: %s (%s)\n", rank, what, hetbal_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static uint64_t arg(int argc, char **argv, int k, uint64_t fallback) {
    if (argc <= k) return fallback;
    char *end;
    unsigned long long v = strtoull(argv[k], &end, 10);
    if (*end || v == 0 || v > (1u << 20)) fail("HELD_MIB, MOVED_MIB and RUNS are positive whole numbers");
    return v;
}

/* Items first .. first + count - 1 of 1 MiB at `at`, each byte its index mod 251. */
static void fill(unsigned char *at, uint64_t first, uint64_t count) {
    for (uint64_t k = 0; k < count; k++) memset(at + k * MIB, (int)((first + k) % 251), MIB);
}

/* Rank 1's items after the move: `expected` items from item 1 on (rank 0
   keeps item 0), one byte of each checked. */
static void check(const unsigned char *at, uint64_t count, uint64_t expected) {
    if (count != expected) fail("wrong count after the move");
    for (uint64_t k = 0; k < count; k++)
        if (at[k * MIB + (k * 4099) % MIB] != (unsigned char)((k + 1) % 251)) fail("an item is wrong after the move");
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of `n` values (the upper one of the middle two when n is even). */
static double median(const double *values, uint64_t n) {
    double *sorted = malloc(n * sizeof(double));
    if (!sorted) fail("out of memory");
    memcpy(sorted, values, n * sizeof(double));
    qsort(sorted, n, sizeof(double), by_value);
    double m = sorted[n / 2];
    free(sorted);
    return m;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks != 2) fail("run with mpirun -np 2");
    const uint64_t held = arg(argc, argv, 1, 1024), moved = arg(argc, argv, 2, 1023), runs = arg(argc, argv, 3, 5);
    const uint64_t loads[2] = {moved + 1, held}, targets[2] = {1, held + moved};
    const double c_succ[2] = {1.0, 1.0};
    hetbal_plan *plan = NULL;
    if (hetbal_ring_plan(2, loads, targets, c_succ, NULL, &plan) != HETBAL_OK) fail("plan");
    /* Rank 0's items are 0 .. moved, rank 1's moved + 1 .. moved + held;
       rank 1 ends with items 1 .. moved + held. */
    enum { PLAIN_EMPTY, PLAIN_HOLDING, MALLOC, HANDLE, GIVING_BACK, WAYS };
    static const char *NAMES[WAYS] = {"plain MPI, new buffer, rank 1 empty", "plain MPI, new buffer, rank 1 holding",
                                      "ring, malloc'ed buffer", "ring, item buffer",
                                      "ring, item buffer giving back"};
    double *times = calloc(WAYS * runs, sizeof(double)), *own = calloc(WAYS * runs, sizeof(double));
    for (uint64_t run = 0; run < runs; run++) {
        for (int w = 0; w < WAYS; w++) {
            int way = (int)((w + run) % WAYS);
            double seconds = 0.0, t1 = 0.0;
            if (way == PLAIN_EMPTY || way == PLAIN_HOLDING) {
                unsigned char *data = NULL, *holding = NULL;
                if (rank == 0) {
                    if (!(data = malloc(moved * MIB))) fail("out of memory");
                    fill(data, 0, moved);
                } else if (way == PLAIN_HOLDING) {
                    if (!(holding = malloc(held * MIB))) fail("out of memory");
                    fill(holding, moved + 1, held);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (rank == 0) {
                    for (uint64_t k = 0; k < moved; k++)
                        MPI_Send(data + k * MIB, (int)MIB, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                } else {
                    unsigned char *fresh = malloc(moved * MIB);
                    if (!fresh) fail("out of memory");
                    for (uint64_t k = 0; k < moved; k++)
                        MPI_Recv(fresh + k * MIB, (int)MIB, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    data = fresh;
                }
                t1 = MPI_Wtime();
                MPI_Barrier(MPI_COMM_WORLD);
                seconds = MPI_Wtime() - t0;
                own[way * runs + run] = t1 - t0;
                free(data);
                free(holding);
            } else if (way == MALLOC) {
                uint64_t count = loads[rank], first = rank == 0 ? 0 : moved + 1;
                unsigned char *items = malloc(count * MIB);
                if (!items) fail("out of memory");
                fill(items, first, count);
                void *buffer = items;
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (hetbal_mpi_ring_redistribute(MPI_COMM_WORLD, plan, MIB, &buffer, &count) != HETBAL_OK)
                    fail("hetbal_mpi_ring_redistribute");
                t1 = MPI_Wtime();
                MPI_Barrier(MPI_COMM_WORLD);
                seconds = MPI_Wtime() - t0;
                own[way * runs + run] = t1 - t0;
                if (rank == 1) check(buffer, count, held + moved);
                free(buffer);
            } else {
                uint64_t count = loads[rank], first = rank == 0 ? 0 : moved + 1;
                hetbal_item_buffer *buffer = NULL;
                if (hetbal_item_buffer_create(MIB, &buffer) != HETBAL_OK ||
                    hetbal_item_buffer_resize(buffer, count) != HETBAL_OK ||
                    hetbal_item_buffer_give_back_sent(buffer, way == GIVING_BACK) != HETBAL_OK)
                    fail("hetbal_item_buffer");
                unsigned char *items = hetbal_item_buffer_data(buffer);
                fill(items, first, count);
                const unsigned char *last_kept = items + (count - 1) * MIB;
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (hetbal_mpi_ring_redistribute_buffer(MPI_COMM_WORLD, plan, MIB, buffer) != HETBAL_OK)
                    fail("hetbal_mpi_ring_redistribute_buffer");
                t1 = MPI_Wtime();
                MPI_Barrier(MPI_COMM_WORLD);
                seconds = MPI_Wtime() - t0;
                own[way * runs + run] = t1 - t0;
                count = hetbal_item_buffer_count(buffer);
                items = hetbal_item_buffer_data(buffer);
                if (rank == 1) {
                    check(items, count, held + moved);
                    if (items + (count - 1) * MIB != last_kept) fail("the item buffer's last kept item moved");
                }
                hetbal_item_buffer_free(buffer);
            }
            times[way * runs + run] = seconds;
        }
    }
    /* The machine's bandwidth: a memcpy of the held bytes into memory touched
       before. */
    double copy = 0.0;
    if (rank == 0) {
        size_t bytes = held * MIB;
        unsigned char *from = malloc(bytes), *to = malloc(bytes);
        if (!from || !to) fail("out of memory");
        memset(from, 1, bytes);
        /* Touched page by page through volatile writes, and read back the
           same way: the compiler keeps the copy. */
        volatile unsigned char *touch = to;
        for (size_t k = 0; k < bytes; k += 4096) touch[k] = 2;
        double t0 = MPI_Wtime();
        memcpy(to, from, bytes);
        copy = MPI_Wtime() - t0;
        size_t sum = 0;
        for (size_t k = 0; k < bytes; k += 4096) sum += touch[k];
        if (sum != bytes / 4096) fail("memcpy");
        free(from);
        free(to);
    }
    /* Rank 1's own times, to rank 0. */
    if (rank == 1) MPI_Send(own, (int)(WAYS * runs), MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
    else MPI_Recv(own, (int)(WAYS * runs), MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0) {
        printf("rank 1 holds %llu MiB and receives %llu MiB in front, %llu runs each (median seconds); memcpy of %llu "
               "MiB: %.3f s (%.1f GB/s)\n",
               (unsigned long long)held, (unsigned long long)moved, (unsigned long long)runs,
               (unsigned long long)held, copy, 1e-9 * (double)(held * MIB) / copy);
        double medians[WAYS], receiver[WAYS];
        for (int way = 0; way < WAYS; way++) {
            medians[way] = median(times + way * runs, runs);
            receiver[way] = median(own + way * runs, runs);
        }
        for (int way = 0; way < WAYS; way++) {
            printf("%-38s %.3f s  %4.0f%% of plain holding, rank 1's own %.3f s   [", NAMES[way], medians[way],
                   100.0 * medians[PLAIN_HOLDING] / medians[way], receiver[way]);
            for (uint64_t run = 0; run < runs; run++) printf(run ? " %.3f" : "%.3f", times[way * runs + run]);
            printf("]\n");
        }
    }
    free(times);
    free(own);
    hetbal_plan_free(plan);
    MPI_Finalize();
    return 0;
}
