"""Particles in a 2-D periodic box, balanced by hetbal: the box is cut into
cells ordered along a Morton (Z-order) curve, each rank holds a run of cells,
and a cell's data is its particles (a different number in every cell). A dense
cluster drifts across the box, so the work moves from rank to rank; the ranks
compute at different speeds (a particle costs rank r SLOWDOWN[r] times
PARTICLE_SECONDS, emulated by a sleep after the push itself, so that ranks
sharing a core do not slow each other down). The same particles run three
times:

- static: the cells split evenly among the ranks, never moved;
- count: cells moved so that each rank's share of cells suits its speed (as if
  every cell cost the same: today's count balancing);
- weighted: cells moved by their weights (their particle counts) with the
  optimal weighted partition, moving the fewest bytes within 5 % of it
  (hetbal.mpi.WeightedBalancer).

Each prints its time per step, bytes moved and total time, and every run's
particles are compared with a single-rank run: the same to the bit.

Run (after `pip install ./crates/hetbal-py mpi4py`):
    mpirun -np 4 python examples/python/particles.py [particles] [steps] [grid]
"""

import sys
import time

import numpy as np
from mpi4py import MPI

import hetbal.mpi

# How many times slower than rank 0 each rank is (cycled over the ranks), and
# what a particle costs rank 0 in a step (seconds).
SLOWDOWN = [1, 1, 2, 3]
PARTICLE_SECONDS = 2e-6
PARTICLE = np.dtype([("id", "<i8"), ("x", "<f8"), ("y", "<f8"), ("vx", "<f8"), ("vy", "<f8")])
DT = 1.0


def morton(ix, iy):
    """The Morton (Z-order) index of cell (ix, iy): the bits of ix and iy
    interleaved."""
    code = np.zeros(np.shape(ix), dtype=np.int64)
    for bit in range(16):
        code |= ((ix >> bit) & 1) << (2 * bit)
        code |= ((iy >> bit) & 1) << (2 * bit + 1)
    return code


def cell_of(p, grid):
    """The Morton cell of each particle of `p` on a grid x grid box."""
    ix = np.minimum((p["x"] * grid).astype(np.int64), grid - 1)
    iy = np.minimum((p["y"] * grid).astype(np.int64), grid - 1)
    return morton(ix, iy)


def initial(total):
    """`total` particles: a third in a dense cluster drifting across the box,
    the others spread out and slow. The same on every rank."""
    rng = np.random.default_rng(7)
    p = np.zeros(total, dtype=PARTICLE)
    p["id"] = np.arange(total)
    cluster = total // 3
    p["x"][:cluster] = (0.2 + 0.04 * rng.standard_normal(cluster)) % 1.0
    p["y"][:cluster] = (0.2 + 0.04 * rng.standard_normal(cluster)) % 1.0
    p["vx"][:cluster], p["vy"][:cluster] = 0.013, 0.007
    p["x"][cluster:] = rng.random(total - cluster)
    p["y"][cluster:] = rng.random(total - cluster)
    p["vx"][cluster:] = 0.002 * rng.standard_normal(total - cluster)
    p["vy"][cluster:] = 0.002 * rng.standard_normal(total - cluster)
    return p


def push(p):
    """One step of every particle of `p` (in place): a drift, and a small
    swirl computed from the position (additions and products only, so that
    every rank computes every particle to the bit as one rank would)."""
    u, v = p["x"] - 0.5, p["y"] - 0.5
    swirl = 4e-3 * u * v * (1.0 - u * u) * (1.0 - v * v)
    p["x"] = (p["x"] + DT * (p["vx"] + swirl)) % 1.0
    p["y"] = (p["y"] + DT * (p["vy"] - swirl)) % 1.0


# ANCHOR: cells
def as_cells(p, cuts, rank, grid):
    """This rank's particles `p` sorted by cell (then id), with the offsets of
    its cells cuts[rank] .. cuts[rank + 1] and their weights (particles)."""
    cells = cell_of(p, grid)
    order = np.lexsort((p["id"], cells))
    p, cells = p[order], cells[order]
    mine = np.arange(cuts[rank], cuts[rank + 1] + 1)
    offsets = np.searchsorted(cells, mine, side="left").astype(np.uint64)
    weights = np.diff(offsets).astype(np.float64)
    return p, offsets, weights
# ANCHOR_END: cells


def migrate(comm, p, cuts, grid):
    """Sends every particle to the rank that owns its cell now (one
    all-to-all); returns this rank's particles."""
    owner = np.searchsorted(cuts, cell_of(p, grid), side="right") - 1
    order = np.argsort(owner, kind="stable")
    p, owner = p[order], owner[order]
    size = comm.Get_size()
    send_counts = np.bincount(owner, minlength=size) * PARTICLE.itemsize
    recv_counts = np.empty(size, dtype=np.int64)
    comm.Alltoall(send_counts, recv_counts)
    received = np.empty(int(recv_counts.sum()) // PARTICLE.itemsize, dtype=PARTICLE)
    send_displs = np.concatenate(([0], np.cumsum(send_counts)[:-1]))
    recv_displs = np.concatenate(([0], np.cumsum(recv_counts)[:-1]))
    comm.Alltoallv(
        [p.view(np.uint8), (send_counts, send_displs), MPI.BYTE],
        [received.view(np.uint8), (recv_counts, recv_displs), MPI.BYTE],
    )
    return received


def run(comm, strategy, total, steps, grid):
    """The simulation with `strategy` ("static", "count" or "weighted");
    returns its figures and this rank's particles at the end."""
    rank, size = comm.Get_rank(), comm.Get_size()
    cells = grid * grid
    cuts = np.array([c * cells // size for c in range(size + 1)], dtype=np.uint64)
    everything = initial(total)
    p = everything[(np.searchsorted(cuts, cell_of(everything, grid), side="right") - 1) == rank]
    p, offsets, weights = as_cells(p, cuts, rank, grid)
    balancer = None if strategy == "static" else hetbal.mpi.WeightedBalancer(comm)
    slowdown = SLOWDOWN[rank % len(SLOWDOWN)]
    step_times, moved_bytes, moves, balancing = [], 0, 0, 0.0
    comm.Barrier()
    started = MPI.Wtime()
    for step in range(steps):
        t0 = MPI.Wtime()
        push(p)
        time.sleep(len(p) * PARTICLE_SECONDS * slowdown)  # this rank's speed
        compute = MPI.Wtime() - t0
        step_times.append(comm.allreduce(compute, op=MPI.MAX))
        p = migrate(comm, p, cuts, grid)
        p, offsets, weights = as_cells(p, cuts, rank, grid)
        # ANCHOR: step
        if balancer is not None:
            costs = weights if strategy == "weighted" else np.ones_like(weights)
            t0 = MPI.Wtime()
            p, offsets, costs, d = balancer.step(p, offsets, costs, compute, steps - step - 1)
            balancing += MPI.Wtime() - t0
            if d.redistribute:
                cuts = np.asarray(d.cuts, dtype=np.uint64)
                moved_bytes += d.moved_bytes
                moves += 1
        # ANCHOR_END: step
    elapsed = MPI.Wtime() - started
    return {
        "step": float(np.mean(step_times)),
        "worst step": float(np.max(step_times)),
        "moves": moves,
        "bytes moved": moved_bytes,
        "balancing": comm.allreduce(balancing, op=MPI.MAX),
        "total": elapsed,
    }, p


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 60_000
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    grid = int(sys.argv[3]) if len(sys.argv) > 3 else 64

    # The single-rank run every strategy must match, bit for bit.
    alone = initial(total)
    for _ in range(steps):
        push(alone)

    status = 0
    rows = []
    for strategy in ("static", "count", "weighted"):
        figures, p = run(comm, strategy, total, steps, grid)
        parts = comm.gather(p, root=0)
        if rank == 0:
            every = np.concatenate(parts)
            every = every[np.argsort(every["id"])]
            same = len(every) == total and every.tobytes() == alone.tobytes()
            status |= 0 if same else 1
            rows.append((strategy, figures, same))
    if rank == 0:
        print(f"particles: {total} particles, {grid}x{grid} cells along a Morton curve, "
              f"{steps} steps on {size} ranks (slowdowns {SLOWDOWN[:size]})")
        print(f"{'strategy':<10} {'step (ms)':>10} {'worst (ms)':>11} {'moves':>6} "
              f"{'moved (MiB)':>12} {'balancer (s)':>13} {'total (s)':>10}  physics")
        for strategy, f, same in rows:
            print(f"{strategy:<10} {1e3 * f['step']:>10.2f} {1e3 * f['worst step']:>11.2f} "
                  f"{f['moves']:>6} {f['bytes moved'] / 2**20:>12.2f} {f['balancing']:>13.3f} "
                  f"{f['total']:>10.3f}  {'same as one rank' if same else 'WRONG'}")
    return status


if __name__ == "__main__":
    status = main()
    status = MPI.COMM_WORLD.allreduce(status, op=MPI.MAX)
    sys.exit(status)
