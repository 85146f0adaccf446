"""The cost of a call from Python: hetbal.ring_plan on the `drift` ring of
n = 10^4 processors of the Rust benchmark (crates/hetbal/benches/ring.rs,
`drift/plan/10000`), timed with timeit, to set against

    cargo bench -p hetbal --bench ring -- 'drift/plan/10000$'

The ring is rebuilt exactly as the benchmark builds it (the same SplitMix64
draws, reproduced below); the makespan and transfers printed can be checked
against the benchmark's line `drift n = 10000: batched ... transfers`.

    python crates/hetbal-py/benches/ring_plan.py [n]
"""

import statistics
import sys
import timeit

import numpy as np

import hetbal

MASK = 2**64 - 1


class SplitMix64:
    """hetbal::random::SplitMix64, to rebuild the benchmark's ring."""

    def __init__(self, seed):
        self.state = seed

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below_u64(self, n):
        return self.next_u64() % max(n, 1)

    def range(self, lo, hi):
        return lo + (hi - lo) * ((self.next_u64() >> 11) / float(1 << 53))


def drift_ring(n, seed):
    """The benchmark's `drift_ring(n, seed)`: (loads, targets, c_succ)."""
    rng = SplitMix64(seed)
    loads = [501 + rng.below_u64(1000) for _ in range(n)]
    loads[0] += 3000
    flow, flows = 1500, []
    for _ in range(n):
        flow = abs(flow + rng.below_u64(801) - 400)
        if flow > 3000:
            flow = 6000 - flow
        flows.append(flow)
    costs = [rng.range(0.5, 2.0) for _ in range(n)]
    targets = [loads[i] - (flows[i] - flows[(i - 1) % n]) for i in range(n)]
    return loads, targets, costs


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    loads, targets, costs = drift_ring(n, 0x5EED ^ n)
    plan = hetbal.ring_plan(loads, targets, costs)
    print(f"drift n = {n}: {plan.algorithm}, {len(plan.transfers)} transfers, "
          f"makespan {plan.makespan} = lower bound {plan.lower_bound}")
    arrays = (np.array(loads, dtype=np.uint64), np.array(targets, dtype=np.uint64), np.array(costs))
    for name, args in [("numpy arrays", arrays), ("Python lists", (loads, targets, costs))]:
        timer = timeit.Timer(lambda: hetbal.ring_plan(*args))
        number, _ = timer.autorange()
        runs = [t / number for t in timer.repeat(repeat=15, number=number)]
        print(f"hetbal.ring_plan from {name}: median {statistics.median(runs) * 1e3:.3f} ms, "
              f"min {min(runs) * 1e3:.3f} ms ({15 * number} calls)")
    plan_with_outputs = timeit.Timer(lambda: hetbal.ring_plan(*arrays).transfers)
    number, _ = plan_with_outputs.autorange()
    runs = [t / number for t in plan_with_outputs.repeat(repeat=15, number=number)]
    print(f"... and reading plan.transfers too: median {statistics.median(runs) * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
