"""A 1-D Jacobi relaxation on a periodic domain with mpi4py and numpy, its cells
spread over the MPI ranks, which compute at different speeds (rank r repeats
its sweep r + 1 times). hetbal's balancer, fed each rank's compute time, moves
cells from slow ranks to fast ones when it pays. At the end every cell is
compared with a single-rank run: the results are the same to the bit.

Options (anywhere on the command line), as examples/c/jacobi.c's:
  --cliff CAPACITY  rank 0 gets a memory cliff: its time per cell is that of
                    one sweep up to CAPACITY cells and ten times that (it
                    repeats its sweep 10 times) whenever it holds more.
  --model NAME      the balancer's model of the compute times: constant (the
                    default), functional (a time function of the load per
                    rank, learned) or monotone-cubic.
  --policy NAME     the balancer's policy: adaptive (the default),
                    profitability, never or fixed-N (hetbal.mpi.Balancer's
                    names).
  --emulate S       report to the balancer S seconds per cell per sweep (rank
                    r's sweeps times its cells times S) instead of the
                    measured compute time; the sweeps still run.
  --every K         decide every K iterations (the default: 1), with the mean
                    compute time of the K iterations since the last decision
                    and the decisions left as `remaining`.
At the end rank 0 prints the moves, the last iteration after which the cells
moved, and the mean wall time of the last 10 iterations. Wrong options: a
message and exit status 2.

Run (after `pip install ./crates/hetbal-py mpi4py`):
    mpirun -np 4 python examples/python/jacobi.py [cells] [iterations]
        [--cliff CAPACITY] [--model NAME] [--policy NAME] [--emulate S] [--every K]
"""

import argparse
import sys

import numpy as np
from mpi4py import MPI

import hetbal
import hetbal.mpi


def sweep(u, left, right):
    """One Jacobi sweep: u[i] = (u[i-1] + u[i+1]) / 2, with the halo values
    `left` (before u[0]) and `right` (after u[-1])."""
    padded = np.concatenate(([left], u, [right]))
    return (padded[:-2] + padded[2:]) * 0.5


def initial(positions):
    return ((positions * 7919) % 1000).astype(np.float64)


class Parser(argparse.ArgumentParser):
    """argparse whose errors rank 0 alone prints (every rank exits with
    status 2)."""

    def error(self, message):
        if MPI.COMM_WORLD.Get_rank() == 0:
            self.print_usage(sys.stderr)
            sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)


def positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r}: give a positive number")
        return value
    return parse


def arguments():
    parser = Parser(prog="jacobi.py", description="A 1-D Jacobi relaxation balanced by hetbal.")
    parser.add_argument("cells", nargs="?", type=positive(int), default=200_000)
    parser.add_argument("iterations", nargs="?", type=positive(int), default=200)
    parser.add_argument("--cliff", type=positive(int), metavar="CAPACITY",
                        help="rank 0 ten times slower per cell past CAPACITY cells")
    parser.add_argument("--model", default="constant",
                        choices=["constant", "functional", "monotone-cubic"])
    parser.add_argument("--policy", default="adaptive",
                        help="adaptive (default), profitability, never or fixed-N")
    parser.add_argument("--emulate", type=positive(float), metavar="S",
                        help="report S seconds per cell per sweep instead of the measured time")
    parser.add_argument("--every", type=positive(int), default=1, metavar="K",
                        help="decide every K iterations")
    args = parser.parse_args()
    if args.cells < MPI.COMM_WORLD.Get_size():
        parser.error(f"cells: {args.cells} for {MPI.COMM_WORLD.Get_size()} ranks (one at least each)")
    return args, parser


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    args, parser = arguments()
    total, iterations, every = args.cells, args.iterations, args.every
    capacity = args.cliff if args.cliff is not None else total
    succ, pred = (rank + 1) % size, (rank - 1) % size

    # An even split: rank r holds global cells first .. first + count - 1.
    counts = [total // size + (r < total % size) for r in range(size)]
    first = sum(counts[:rank])
    cells = initial(np.arange(first, first + counts[rank], dtype=np.int64))

    # ANCHOR: create
    # Links measured; the adaptive policy and the constant model by default.
    try:
        balancer = hetbal.mpi.Balancer(comm, model=args.model, policy=args.policy)
    except hetbal.InputError as e:  # on every rank: an unknown policy
        parser.error(f"--policy: {e}")
    # ANCHOR_END: create
    moves, last_move, group = 0, 0, 0.0
    walls = []  # each iteration's wall time
    # A warm-up, not timed (as jacobi.c's): the first sweeps after start-up
    # run slower, and a time function learned from them would see a cliff.
    for _ in range(rank + 1):
        sweep(cells, 0.0, 0.0)
    comm.Barrier()
    started = MPI.Wtime()
    left, right = np.empty(1), np.empty(1)
    # ANCHOR: loop
    for it in range(iterations):
        begun = MPI.Wtime()
        # Halo exchange (not timed: it waits for the neighbours).
        comm.Sendrecv(cells[-1:], dest=succ, sendtag=0, recvbuf=left, source=pred, recvtag=0)
        comm.Sendrecv(cells[:1], dest=pred, sendtag=1, recvbuf=right, source=succ, recvtag=1)
        # The compute phase, timed: this rank is rank + 1 times slower (with
        # --cliff, rank 0 ten times slower beyond its capacity).
        t0 = MPI.Wtime()
        extra = 9 if rank == 0 and len(cells) > capacity else rank
        for _ in range(extra):
            sweep(cells, left[0], right[0])
        cells = sweep(cells, left[0], right[0])
        if args.emulate:
            group += args.emulate * (extra + 1) * len(cells)
        else:
            group += MPI.Wtime() - t0
        # A decision after every `every`-th iteration (all of them by
        # default) but the last, on the mean compute time since the last one,
        # with the decisions left as `remaining`.
        if (it + 1) % every == 0 and it + 1 < iterations:
            cells, d = balancer.step(cells, group / every, (iterations - it - 1) // every)
            first, group = d.first, 0.0
            moves += d.redistribute
            if d.redistribute:
                last_move = it + 1
            if d.redistribute and rank == 0 and moves <= 3:
                print(f"iteration {it + 1}: moved the cells (step {d.current_step:.3g} s -> "
                      f"{d.balanced_step:.3g} s, predicted gain {d.predicted_gain or 0:.3g} s, "
                      f"move {d.redistribution_time:.3g} s)")
        walls.append(MPI.Wtime() - begun)
    # ANCHOR_END: loop
    elapsed = MPI.Wtime() - started
    if rank == 0 and moves > 3:
        print(f"... and {moves - 3} more")
    balancer.close()

    # Check against a single-rank run: every cell at its global position.
    parts = comm.gather((first, cells), root=0)
    if rank != 0:
        return 0
    every_cell = np.empty(total)
    for at, part in parts:
        every_cell[(at + np.arange(len(part))) % total] = part
    alone = initial(np.arange(total, dtype=np.int64))
    for _ in range(iterations):
        alone = sweep(alone, alone[-1], alone[0])
    differ = int(np.count_nonzero(alone != every_cell))
    held = " ".join(str(len(part)) for _, part in parts)
    print(f"jacobi: {total} cells, {iterations} iterations on {size} ranks in {elapsed:.3f} s, "
          f"{moves} redistribution(s); cells per rank at the end: {held}")
    # The optimum of the emulated costs: shares as 1 / (r + 1), rank 0's at
    # most its capacity.
    weights = sum(1.0 / (r + 1) for r in range(size))
    rank0 = min(total / weights, capacity)
    optimum = [rank0] + [(total - rank0) / (r + 1) / (weights - 1.0) for r in range(1, size)]
    print("jacobi: cells per rank at the optimum of the emulated costs: "
          + " ".join(f"{x:.0f}" for x in optimum))
    tail = min(iterations, 10)
    print(f"jacobi: {moves} moves, the last after iteration {last_move}; the last {tail} "
          f"iterations took {sum(walls[-tail:]) / tail * 1e3:.3g} ms each on average")
    print(f"jacobi: {'WRONG' if differ else 'same results as one rank'} "
          f"({differ} of {total} cells differ from the single-rank run)")
    return 1 if differ else 0


if __name__ == "__main__":
    status = main()
    status = MPI.COMM_WORLD.allreduce(status, op=MPI.MAX)
    sys.exit(status)
