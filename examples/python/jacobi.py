"""A 1-D Jacobi relaxation on a periodic domain with mpi4py and numpy, its cells
spread over the MPI ranks, which compute at different speeds (rank r repeats
its sweep r + 1 times). hetbal's balancer, fed each rank's compute time, moves
cells from slow ranks to fast ones when it pays. At the end every cell is
compared with a single-rank run: the results are the same to the bit.

Run (after `pip install ./crates/hetbal-py mpi4py`):
    mpirun -np 4 python examples/python/jacobi.py [cells] [iterations]
"""

import sys

import numpy as np
from mpi4py import MPI

import hetbal.mpi


def sweep(u, left, right):
    """One Jacobi sweep: u[i] = (u[i-1] + u[i+1]) / 2, with the halo values
    `left` (before u[0]) and `right` (after u[-1])."""
    padded = np.concatenate(([left], u, [right]))
    return (padded[:-2] + padded[2:]) * 0.5


def initial(positions):
    return ((positions * 7919) % 1000).astype(np.float64)


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    succ, pred = (rank + 1) % size, (rank - 1) % size

    # An even split: rank r holds global cells first .. first + count - 1.
    counts = [total // size + (r < total % size) for r in range(size)]
    first = sum(counts[:rank])
    cells = initial(np.arange(first, first + counts[rank], dtype=np.int64))

    # ANCHOR: create
    balancer = hetbal.mpi.Balancer(comm)  # links measured, adaptive policy
    # ANCHOR_END: create
    moves = 0
    started = MPI.Wtime()
    left, right = np.empty(1), np.empty(1)
    # ANCHOR: loop
    for it in range(iterations):
        # Halo exchange (not timed: it waits for the neighbours).
        comm.Sendrecv(cells[-1:], dest=succ, sendtag=0, recvbuf=left, source=pred, recvtag=0)
        comm.Sendrecv(cells[:1], dest=pred, sendtag=1, recvbuf=right, source=succ, recvtag=1)
        # The compute phase, timed: this rank is rank + 1 times slower.
        t0 = MPI.Wtime()
        for _ in range(rank):
            sweep(cells, left[0], right[0])
        cells = sweep(cells, left[0], right[0])
        compute = MPI.Wtime() - t0
        cells, d = balancer.step(cells, compute, iterations - it - 1)
        first = d.first
        moves += d.redistribute
        if d.redistribute and rank == 0 and moves <= 3:
            print(f"iteration {d.iteration}: moved the cells (step {d.current_step:.3g} s -> "
                  f"{d.balanced_step:.3g} s, predicted gain {d.predicted_gain or 0:.3g} s, "
                  f"move {d.redistribution_time:.3g} s)")
    # ANCHOR_END: loop
    elapsed = MPI.Wtime() - started
    if rank == 0 and moves > 3:
        print(f"... and {moves - 3} more")
    balancer.close()

    # Check against a single-rank run: every cell at its global position.
    parts = comm.gather((first, cells), root=0)
    if rank != 0:
        return 0
    every = np.empty(total)
    for at, part in parts:
        every[(at + np.arange(len(part))) % total] = part
    alone = initial(np.arange(total, dtype=np.int64))
    for _ in range(iterations):
        alone = sweep(alone, alone[-1], alone[0])
    differ = int(np.count_nonzero(alone != every))
    held = " ".join(str(len(part)) for _, part in parts)
    print(f"jacobi: {total} cells, {iterations} iterations on {size} ranks in {elapsed:.3f} s, "
          f"{moves} redistribution(s); cells per rank at the end: {held}")
    print(f"jacobi: {'WRONG' if differ else 'same results as one rank'} "
          f"({differ} of {total} cells differ from the single-rank run)")
    return 1 if differ else 0


if __name__ == "__main__":
    status = main()
    status = MPI.COMM_WORLD.allreduce(status, op=MPI.MAX)
    sys.exit(status)
