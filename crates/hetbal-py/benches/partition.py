"""The cost of hetbal.partition from Python against numpy.cumsum of the same
weights, in the same process: n = 5 * 10^7 float64 weights drawn in [0, 1),
p = 10^4 processors of seconds per unit drawn in [1, 4]. The partition makes
one pass over the weights (their prefix sums, n + 1 float64, read in place
without a copy) and then probes of O(p log(n/p)) each, so that it should cost
about what a cumulative sum costs (the goal: within 1.5 times).

    python crates/hetbal-py/benches/partition.py [n] [p]
"""

import statistics
import sys
import time

import numpy as np

import hetbal

RUNS = 5


def median_seconds(f):
    """The median of RUNS timed calls of f (after one untimed call)."""
    f()
    runs = []
    for _ in range(RUNS):
        start = time.perf_counter()
        f()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs), min(runs)


def main():
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 5 * 10**7
    p = int(float(sys.argv[2])) if len(sys.argv) > 2 else 10**4
    rng = np.random.default_rng(0x5EED)
    weights = rng.random(n)
    seconds_per_unit = rng.uniform(1.0, 4.0, p)
    result = hetbal.partition(weights, seconds_per_unit)
    print(f"n = {n} float64 weights in [0, 1), p = {p} processors of 1 to 4 seconds per unit: "
          f"bottleneck {result.bottleneck!r} (lower bound {result.lower_bound!r}, "
          f"{'optimal' if result.optimal else 'not proven optimal'}), {result.probes} probes")
    partition, partition_min = median_seconds(lambda: hetbal.partition(weights, seconds_per_unit))
    cumsum, cumsum_min = median_seconds(lambda: np.cumsum(weights))
    print(f"hetbal.partition: median {partition * 1e3:.1f} ms, min {partition_min * 1e3:.1f} ms ({RUNS} calls)")
    print(f"numpy.cumsum:     median {cumsum * 1e3:.1f} ms, min {cumsum_min * 1e3:.1f} ms ({RUNS} calls)")
    print(f"ratio partition / cumsum: {partition / cumsum:.2f} (medians)")


if __name__ == "__main__":
    main()
