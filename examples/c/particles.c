/* Particles in a 2-D periodic box, balanced by hetbal (the C twin of
   examples/python/particles.py): the box is cut into cells ordered along a
   Morton (Z-order) curve, each rank holds a run of cells, and a cell's data is
   its particles (a different number in every cell). A dense cluster drifts
   across the box, so the work moves from rank to rank; the ranks compute at
   different speeds (a particle costs rank r SLOWDOWN[r % 4] times
   PARTICLE_SECONDS, emulated by a sleep after the push itself, so that ranks
   sharing a core do not slow each other down). The same particles run three
   times:

   - static: the cells split evenly among the ranks, never moved;
   - count: cells moved so that each rank's share of cells suits its speed (as
     if every cell cost the same: today's count balancing);
   - weighted: cells moved by their weights (their particle counts) with the
     optimal weighted partition, moving the fewest bytes within 5 % of it
     (hetbal_mpi_weighted_balancer_step).

   Each prints its time per step, bytes moved and total time, and every run's
   particles are compared with a single-rank run: the same to the bit. The exit
   status is 1 on every rank when a run differs or a hetbal call fails.

   Build and run (after crates/hetbal-c/install.sh PREFIX):
     export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
     mpicc -O2 -o particles examples/c/particles.c $(pkg-config --cflags --libs hetbal) -lm
     mpirun -np 4 ./particles [particles] [steps] [grid]                         */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hetbal_mpi.h>

/* How many times slower than rank 0 each rank is (cycled over the ranks), and
   what a particle costs rank 0 in a step (seconds). */
static const int SLOWDOWN[4] = {1, 1, 2, 3};
static const double PARTICLE_SECONDS = 2e-6;
static const double DT = 1.0;

/* A particle: 40 bytes, no padding (the check compares them byte for byte). */
typedef struct {
    int64_t id;
    double x, y, vx, vy;
} particle;

/* The Morton (Z-order) index of cell (ix, iy): the bits of ix and iy
   interleaved. */
static uint64_t morton(uint64_t ix, uint64_t iy) {
    uint64_t code = 0;
    for (int bit = 0; bit < 16; bit++) {
        code |= ((ix >> bit) & 1) << (2 * bit);
        code |= ((iy >> bit) & 1) << (2 * bit + 1);
    }
    return code;
}

/* The Morton cell of a particle on a grid x grid box. */
static uint64_t cell_of(const particle *p, uint64_t grid) {
    uint64_t ix = (uint64_t)(p->x * (double)grid), iy = (uint64_t)(p->y * (double)grid);
    return morton(ix < grid - 1 ? ix : grid - 1, iy < grid - 1 ? iy : grid - 1);
}

/* The rank that owns `cell` with these cuts (size + 1 of them): the last r
   with cuts[r] <= cell. */
static int owner_of(uint64_t cell, const uint64_t *cuts, int size) {
    int lo = 0, hi = size; /* cuts[lo] <= cell < cuts[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (cuts[mid] <= cell) lo = mid; else hi = mid;
    }
    return lo;
}

/* x wrapped into [0, 1) as Python's x % 1.0 (a floored modulo). */
static double wrap(double x) { return x - floor(x); }

/* A splitmix64 generator: the same numbers on every rank. */
static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double uniform(uint64_t *state) { return (double)(next_random(state) >> 11) * 0x1.0p-53; }

/* Standard normal (Box-Muller, one of the pair). */
static double normal(uint64_t *state) {
    double u1 = (double)((next_random(state) >> 11) + 1) * 0x1.0p-53; /* (0, 1] */
    double u2 = uniform(state);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* `total` particles (a malloc'ed array): a third in a dense cluster drifting
   across the box, the others spread out and slow. The same on every rank. */
static particle *initial(uint64_t total) {
    uint64_t state = 7;
    particle *p = malloc((total ? total : 1) * sizeof(particle));
    uint64_t cluster = total / 3;
    for (uint64_t i = 0; i < total; i++) p[i].id = (int64_t)i;
    for (uint64_t i = 0; i < cluster; i++) p[i].x = wrap(0.2 + 0.04 * normal(&state));
    for (uint64_t i = 0; i < cluster; i++) p[i].y = wrap(0.2 + 0.04 * normal(&state));
    for (uint64_t i = 0; i < cluster; i++) p[i].vx = 0.013, p[i].vy = 0.007;
    for (uint64_t i = cluster; i < total; i++) p[i].x = uniform(&state);
    for (uint64_t i = cluster; i < total; i++) p[i].y = uniform(&state);
    for (uint64_t i = cluster; i < total; i++) p[i].vx = 0.002 * normal(&state);
    for (uint64_t i = cluster; i < total; i++) p[i].vy = 0.002 * normal(&state);
    return p;
}

/* One step of the n particles of `p` (in place): a drift, and a small swirl
   computed from the position (additions and products only, so that every
   rank computes every particle to the bit as one rank would). */
static void push(particle *p, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        double u = p[i].x - 0.5, v = p[i].y - 0.5;
        double swirl = 4e-3 * u * v * (1.0 - u * u) * (1.0 - v * v);
        p[i].x = wrap(p[i].x + DT * (p[i].vx + swirl));
        p[i].y = wrap(p[i].y + DT * (p[i].vy - swirl));
    }
}

/* Sleeps `seconds`: this rank's speed. */
static void pause_for(double seconds) {
    struct timespec t = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&t, &t) != 0) {}
}

typedef struct {
    uint64_t cell;
    particle p;
} keyed;

static int by_cell_then_id(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->cell != y->cell) return x->cell < y->cell ? -1 : 1;
    return (x->p.id > y->p.id) - (x->p.id < y->p.id);
}

static int by_id(const void *a, const void *b) {
    const particle *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* This rank's n particles `p` (all in its cells cuts[rank] .. cuts[rank + 1])
   sorted by cell, then id, in place; *offsets and *weights (freed first, then
   malloc'ed) the offsets of its cells and their weights (particles); returns
   the number of cells. */
static uint64_t as_cells(particle *p, uint64_t n, const uint64_t *cuts, int rank, uint64_t grid,
                         uint64_t **offsets, double **weights) {
    keyed *k = malloc((n ? n : 1) * sizeof(keyed));
    for (uint64_t i = 0; i < n; i++) k[i] = (keyed){cell_of(&p[i], grid), p[i]};
    qsort(k, n, sizeof(keyed), by_cell_then_id);
    for (uint64_t i = 0; i < n; i++) p[i] = k[i].p;
    uint64_t count = cuts[rank + 1] - cuts[rank];
    free(*offsets);
    free(*weights);
    *offsets = malloc((count + 1) * sizeof(uint64_t));
    *weights = malloc((count ? count : 1) * sizeof(double));
    uint64_t at = 0;
    for (uint64_t c = 0; c <= count; c++) {
        while (at < n && k[at].cell < cuts[rank] + c) at++;
        (*offsets)[c] = at;
    }
    for (uint64_t c = 0; c < count; c++) (*weights)[c] = (double)((*offsets)[c + 1] - (*offsets)[c]);
    free(k);
    return count;
}

/* Sends every particle of *p (*n of them, malloc'ed) to the rank that owns
   its cell now (one all-to-all); *p and *n become this rank's particles. */
static void migrate(particle **p, uint64_t *n, const uint64_t *cuts, uint64_t grid, int size) {
    int *owner = malloc((*n ? *n : 1) * sizeof(int));
    int *send_counts = calloc(size, sizeof(int)), *recv_counts = malloc(size * sizeof(int));
    int *send_displs = malloc(size * sizeof(int)), *recv_displs = malloc(size * sizeof(int));
    for (uint64_t i = 0; i < *n; i++) {
        owner[i] = owner_of(cell_of(&(*p)[i], grid), cuts, size);
        send_counts[owner[i]] += (int)sizeof(particle);
    }
    MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, MPI_COMM_WORLD);
    int sent = 0, received = 0;
    for (int r = 0; r < size; r++) {
        send_displs[r] = sent, sent += send_counts[r];
        recv_displs[r] = received, received += recv_counts[r];
    }
    /* The particles in the order of their owners (stable). */
    particle *out = malloc(sent ? sent : 1);
    int *place = malloc(size * sizeof(int));
    for (int r = 0; r < size; r++) place[r] = send_displs[r] / (int)sizeof(particle);
    for (uint64_t i = 0; i < *n; i++) out[place[owner[i]]++] = (*p)[i];
    particle *in = malloc(received ? received : 1);
    MPI_Alltoallv(out, send_counts, send_displs, MPI_BYTE, in, recv_counts, recv_displs, MPI_BYTE,
                  MPI_COMM_WORLD);
    free(*p);
    *p = in;
    *n = (uint64_t)received / sizeof(particle);
    free(out);
    free(place);
    free(owner);
    free(send_counts);
    free(recv_counts);
    free(send_displs);
    free(recv_displs);
}

/* What a run measured. */
typedef struct {
    double step, worst_step, balancing, total;
    int moves;
    uint64_t moved_bytes;
} figures;

/* The simulation with `strategy` ("static", "count" or "weighted"); fills
   *f and returns this rank's particles (*n of them, malloc'ed); *failed is 1
   when a hetbal call failed (on every rank alike: hetbal agrees on its errors
   before returning). */
static particle *run(const char *strategy, uint64_t total, uint64_t steps, uint64_t grid,
                     figures *f, uint64_t *n, int *failed) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t cells = grid * grid;
    uint64_t *cuts = malloc((size + 1) * sizeof(uint64_t));
    for (int c = 0; c <= size; c++) cuts[c] = (uint64_t)c * cells / (uint64_t)size;
    particle *everything = initial(total);
    particle *p = malloc((total ? total : 1) * sizeof(particle));
    *n = 0;
    for (uint64_t i = 0; i < total; i++)
        if (owner_of(cell_of(&everything[i], grid), cuts, size) == rank) p[(*n)++] = everything[i];
    free(everything);
    uint64_t *offsets = NULL;
    double *weights = NULL;
    uint64_t count = as_cells(p, *n, cuts, rank, grid, &offsets, &weights);
    int weighted = strcmp(strategy, "weighted") == 0;
    hetbal_weighted_balancer *balancer = NULL;
    *failed = 0;
    if (strcmp(strategy, "static") != 0) {
        hetbal_status s = hetbal_mpi_weighted_balancer_create(MPI_COMM_WORLD, 0.05, &balancer);
        if (s != HETBAL_OK) {
            fprintf(stderr, "particles: rank %d: hetbal_mpi_weighted_balancer_create failed (status %d): %s\n",
                    rank, s, hetbal_last_error());
            *failed = 1;
        }
    }
    double slowdown = SLOWDOWN[rank % 4], balancing = 0.0, sum = 0.0, worst = 0.0;
    uint64_t ran = 0;
    *f = (figures){0};
    MPI_Barrier(MPI_COMM_WORLD);
    double started = MPI_Wtime();
    for (uint64_t step = 0; step < steps && !*failed; step++) {
        double t0 = MPI_Wtime();
        push(p, *n);
        pause_for((double)*n * PARTICLE_SECONDS * slowdown); /* this rank's speed */
        double compute = MPI_Wtime() - t0, slowest;
        MPI_Allreduce(&compute, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        sum += slowest;
        ran++;
        worst = slowest > worst ? slowest : worst;
        migrate(&p, n, cuts, grid, size);
        count = as_cells(p, *n, cuts, rank, grid, &offsets, &weights);
        /* ANCHOR: step */
        if (balancer != NULL) {
            if (!weighted) /* count: every cell costs the same */
                for (uint64_t c = 0; c < count; c++) weights[c] = 1.0;
            hetbal_weighted_decision d;
            void *buffer = p;
            t0 = MPI_Wtime();
            hetbal_status s = hetbal_mpi_weighted_balancer_step(
                balancer, sizeof(particle), &buffer, &offsets, &weights, &count, compute,
                steps - step - 1, &d);
            balancing += MPI_Wtime() - t0;
            p = buffer; /* maybe realloc'ed, as offsets and weights */
            *n = offsets[count];
            if (s != HETBAL_OK) {
                fprintf(stderr, "particles: rank %d: hetbal_mpi_weighted_balancer_step failed (status %d): %s\n",
                        rank, s, hetbal_last_error());
                *failed = 1;
            } else if (d.redistribute) {
                /* This rank now holds cells d.first .. d.first + d.count;
                   every rank's cells, for the migration: the new cuts. */
                hetbal_mpi_weighted_balancer_cuts(balancer, cuts, (size_t)size + 1);
                f->moved_bytes += d.moved_bytes;
                f->moves++;
            }
        }
        /* ANCHOR_END: step */
    }
    f->total = MPI_Wtime() - started;
    f->step = ran ? sum / (double)ran : 0.0;
    f->worst_step = worst;
    MPI_Allreduce(&balancing, &f->balancing, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    hetbal_mpi_weighted_balancer_free(balancer);
    free(offsets);
    free(weights);
    free(cuts);
    return p;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t total = argc > 1 ? strtoull(argv[1], NULL, 10) : 60000;
    uint64_t steps = argc > 2 ? strtoull(argv[2], NULL, 10) : 30;
    uint64_t grid = argc > 3 ? strtoull(argv[3], NULL, 10) : 64;
    /* The Morton indices of a grid x grid box are 0 .. grid * grid - 1 only
       when grid is a power of two; MPI counts bytes in an int. */
    if (grid == 0 || grid > 4096 || (grid & (grid - 1)) != 0 ||
        total > (uint64_t)INT_MAX / sizeof(particle)) {
        if (rank == 0)
            fprintf(stderr, "usage: particles [particles] [steps] [grid] (grid a power of two up to "
                            "4096, at most %llu particles)\n",
                    (unsigned long long)(INT_MAX / sizeof(particle)));
        MPI_Finalize();
        return 2;
    }

    /* The single-rank run every strategy must match, bit for bit (rank 0
       compares). */
    particle *alone = NULL;
    if (rank == 0) {
        alone = initial(total);
        for (uint64_t step = 0; step < steps; step++) push(alone, total);
    }

    const char *strategies[3] = {"static", "count", "weighted"};
    figures rows[3];
    int same[3] = {0, 0, 0}, failures[3] = {0, 0, 0}, status = 0;
    for (int k = 0; k < 3; k++) {
        uint64_t n;
        particle *p = run(strategies[k], total, steps, grid, &rows[k], &n, &failures[k]);
        status |= failures[k];
        /* Every particle to rank 0, sorted by id, compared with the
           single-rank run. */
        int bytes = (int)(n * sizeof(particle)), *counts = NULL, *displs = NULL, all = 0;
        particle *every = NULL;
        if (rank == 0) {
            counts = malloc(size * sizeof(int));
            displs = malloc(size * sizeof(int));
        }
        MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            for (int r = 0; r < size; r++) displs[r] = all, all += counts[r];
            every = malloc(all ? all : 1);
        }
        MPI_Gatherv(p, bytes, MPI_BYTE, every, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            uint64_t got = (uint64_t)all / sizeof(particle);
            qsort(every, got, sizeof(particle), by_id);
            same[k] = got == total && memcmp(every, alone, got * sizeof(particle)) == 0;
            status |= !same[k];
        }
        free(every);
        free(counts);
        free(displs);
        free(p);
    }
    if (rank == 0) {
        printf("particles: %llu particles, %llux%llu cells along a Morton curve, %llu steps on %d ranks "
               "(slowdowns [",
               (unsigned long long)total, (unsigned long long)grid, (unsigned long long)grid,
               (unsigned long long)steps, size);
        for (int r = 0; r < size && r < 4; r++) printf("%s%d", r ? ", " : "", SLOWDOWN[r]);
        printf("])\n");
        printf("%-10s %10s %11s %6s %12s %13s %10s  physics\n", "strategy", "step (ms)", "worst (ms)",
               "moves", "moved (MiB)", "balancer (s)", "total (s)");
        for (int k = 0; k < 3; k++)
            printf("%-10s %10.2f %11.2f %6d %12.2f %13.3f %10.3f  %s\n", strategies[k],
                   1e3 * rows[k].step, 1e3 * rows[k].worst_step, rows[k].moves,
                   (double)rows[k].moved_bytes / 1048576.0, rows[k].balancing, rows[k].total,
                   failures[k] ? "hetbal failed" : same[k] ? "same as one rank" : "WRONG");
    }
    free(alone);
    int any = 0;
    MPI_Allreduce(&status, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}
