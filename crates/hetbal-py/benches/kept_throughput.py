"""A rank that already holds data receives more in front of it, from Python:
``hetbal.mpi.redistribute`` on a numpy array (its rows copied once into the
runtime's buffer) and on a ``hetbal.mpi.ItemBuffer`` (the rows rank 1 keeps
never move), against a plain mpi4py transfer of the same bytes into a new
numpy array (``Recv`` of 1 MiB messages) by a rank 1 that holds nothing and by
one that holds its data, alternated run by run, and the machine's memory
bandwidth (a copy of 1 GiB into an array touched before).

    mpirun -np 2 python crates/hetbal-py/benches/kept_throughput.py [HELD_MIB] [MOVED_MIB] [RUNS]

Rank 0 holds MOVED_MIB + 1 MiB and sends MOVED_MIB MiB to rank 1, which holds
HELD_MIB MiB (defaults 1024, 1023, 5), in rows of 1 MiB; prints each way's
median seconds between barriers and its ratio to the plain transfer's.
"""

import statistics
import sys

import numpy as np
from mpi4py import MPI

import hetbal
import hetbal.mpi

MIB = 1 << 20
COMM = MPI.COMM_WORLD
RANK = COMM.Get_rank()


def timed(work):
    """Seconds between two barriers around `work()` (rank 0's clock)."""
    COMM.Barrier()
    start = MPI.Wtime()
    work()
    COMM.Barrier()
    return MPI.Wtime() - start


def main():
    if COMM.Get_size() != 2:
        sys.exit("kept_throughput: run on 2 ranks")
    held, moved, runs = (int(a) for a in (sys.argv[1:] + ["1024", "1023", "5"][len(sys.argv) - 1:])[:3])
    loads = [moved + 1, held]
    # Rank 0 keeps one row and gives rank 1 the rest, in front of rank 1's
    # own rows (a unidirectional ring, rank 0 -> rank 1).
    plan = hetbal.ring_plan(loads, [1, held + moved], [1.0, 1.0], algorithm="unidirectional-heterogeneous")
    there = hetbal.ring_plan([1, held + moved], loads, [1.0, 1.0], [1.0, 1.0])

    def fresh():
        rows = np.empty((loads[RANK], MIB), dtype=np.uint8)
        rows[:, ::4096] = RANK + 1  # touched
        return rows

    def plain():
        if RANK == 0:
            rows = fresh()
            for k in range(moved):
                COMM.Send(rows[k], dest=1, tag=k)
        else:
            out = np.empty((moved, MIB), dtype=np.uint8)
            for k in range(moved):
                COMM.Recv(out[k], source=0, tag=k)

    times = {"plain": [], "plain, holding": [], "array": [], "ItemBuffer": []}
    for _ in range(runs):
        times["plain"].append(timed(plain))
        held_rows = fresh()  # rank 1 holds its rows
        times["plain, holding"].append(timed(plain))
        del held_rows
        array = fresh()
        times["array"].append(timed(lambda: hetbal.mpi.redistribute(COMM, array, plan)))
        del array
        items = hetbal.mpi.ItemBuffer(fresh())
        times["ItemBuffer"].append(timed(lambda: hetbal.mpi.redistribute(COMM, items, plan)))
        assert len(items) == (1 if RANK == 0 else held + moved)
        del items
    source = np.ones(1024 * MIB, dtype=np.uint8)
    target = np.zeros(1024 * MIB, dtype=np.uint8)
    copy = min(timed(lambda: np.copyto(target, source)) for _ in range(3))
    if RANK == 0:
        base = statistics.median(times["plain"])
        holding = statistics.median(times["plain, holding"])
        print(f"rank 1 holds {held} MiB and receives {moved} MiB in front (rows of 1 MiB), medians of {runs}:")
        for name, t in times.items():
            m = statistics.median(t)
            print(f"  {name:14} {m:7.3f} s  {moved / 1024 / m:6.2f} GiB/s  {100 * base / m:5.0f}% of plain, "
                  f"{100 * holding / m:5.0f}% of plain holding")
        print(f"  memcpy of 1 GiB: {copy:.3f} s ({1 / copy:.2f} GiB/s)")


main()
