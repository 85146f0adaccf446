"""hetbal.partition from Python: the known answers and exhaustive search, every
weight dtype, the least-moving form, the weights read in place (no copy, the
caller's arrays untouched, the GIL released) and every bad input refused with
InputError naming the argument."""

import doctest
import itertools
import os
import pickle
import threading
import time
import tracemalloc

import numpy as np
import pytest

import hetbal


def refused(word, f, *args, **kwargs):
    """f(*args) raises InputError (a ValueError) whose message contains word."""
    with pytest.raises(hetbal.InputError) as caught:
        f(*args, **kwargs)
    assert isinstance(caught.value, ValueError)
    assert word in str(caught.value), str(caught.value)
    return str(caught.value)


def all_cuts(n, p):
    """Every list of p + 1 cuts from 0 to n, non-decreasing."""
    for inner in itertools.combinations_with_replacement(range(n + 1), p - 1):
        yield [0, *inner, n]


def bottleneck_of(weights, speeds, cuts):
    return max(s * sum(weights[cuts[j]:cuts[j + 1]]) for j, s in enumerate(speeds))


def moved_bytes(sizes, a, b):
    owner = lambda cuts, i: next(j for j in range(len(cuts) - 1) if cuts[j] <= i < cuts[j + 1])
    return sum(z for i, z in enumerate(sizes) if owner(a, i) != owner(b, i))


def test_known_answers():
    # P0 takes 1 second per unit, P1 2: 1+2+3+4+5 = 15 units on P0 (15 s) and
    # 6 on P1 (12 s). The cuts [0, 4, 6] would make P1 take 2 * 11 = 22 s.
    cuts, bottleneck = hetbal.partition(np.array([1, 2, 3, 4, 5, 6], dtype=np.int64), [1.0, 2.0])
    assert cuts.dtype == np.uint64 and cuts.tolist() == [0, 5, 6]
    assert type(bottleneck) is float and bottleneck == 15.0
    assert bottleneck == min(bottleneck_of([1, 2, 3, 4, 5, 6], [1, 2], c) for c in all_cuts(6, 2))
    # A very slow processor in the middle gets nothing.
    result = hetbal.partition([3.0, 1.0, 2.0, 2.0], [1.0, 100.0, 1.0])
    cuts, bottleneck = result
    assert cuts.tolist() == [0, 2, 2, 4] and bottleneck == 4.0
    assert result.optimal is True and result.lower_bound == 4.0
    assert result.times.dtype == np.float64 and result.times.tolist() == [4.0, 0.0, 4.0]
    assert result.optimal_bottleneck == 4.0
    assert result.moved_bytes is None and result.moved_items is None and result.limit is None


def test_the_result_is_a_pair():
    result = hetbal.partition(np.array([3.0, 1.0, 2.0, 2.0]), [1.0, 100.0, 1.0])
    assert isinstance(result, tuple) and isinstance(result, hetbal.Partition) and len(result) == 2
    assert result[0] is result.cuts and result[1] == result.bottleneck
    assert [len(x) if i == 0 else x for i, x in enumerate(result)] == [4, 4.0]
    assert repr(result) == "<hetbal.Partition: 4 items on 3 processors, bottleneck 4.0 (optimal), cuts [0, 2, 2, 4]>"
    assert isinstance(result.probes, int) and result.probes >= 1
    again = pickle.loads(pickle.dumps(result))
    assert type(again) is hetbal.Partition and again.cuts.tolist() == [0, 2, 2, 4]
    assert again.optimal is True and again.times.tolist() == [4.0, 0.0, 4.0]
    many = hetbal.partition(np.ones(1000), np.ones(100))
    assert "1000 items on 100 processors" in repr(many) and "..." in repr(many)


def test_the_docstring_examples_run():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for test in finder.find(hetbal.partition, "partition", globs={}) + finder.find(hetbal.Partition):
        runner.run(test)
    assert runner.failures == 0 and runner.tries >= 6
    assert "Complexity" in hetbal.partition.__doc__ and "Raises" in hetbal.partition.__doc__


def test_against_exhaustive_search():
    rng = np.random.default_rng(7)
    for _ in range(300):
        n, p = int(rng.integers(0, 8)), int(rng.integers(1, 4))
        weights = rng.integers(0, 7, n)
        speeds = rng.choice([0.5, 1.0, 2.0, 3.0, 7.0], p)
        result = hetbal.partition(weights, speeds)
        cuts = result.cuts.tolist()
        assert len(cuts) == p + 1 and cuts[0] == 0 and cuts[-1] == n
        assert all(a <= b for a, b in zip(cuts, cuts[1:]))
        best = min(bottleneck_of(weights.tolist(), speeds.tolist(), c) for c in all_cuts(n, p))
        assert result.bottleneck == best == bottleneck_of(weights.tolist(), speeds.tolist(), cuts)
        assert result.optimal and result.lower_bound <= best


WEIGHTS = [3, 0, 7, 1, 1, 4, 9, 2, 2, 5, 0, 6]
SPEEDS = [1.0, 2.5, 0.5, 1.5]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint64, np.int32, np.uint32,
                                   # converted to 64 bits (a copy): other widths and byte orders
                                   np.int8, np.uint8, np.int16, np.uint16, np.float16, ">f8", ">i4"])
def test_every_dtype_gives_the_same_cuts(dtype):
    expected = hetbal.partition(np.array(WEIGHTS, dtype=np.float64), SPEEDS)
    result = hetbal.partition(np.array(WEIGHTS, dtype=dtype), SPEEDS)
    assert result.cuts.tolist() == expected.cuts.tolist()
    assert result.bottleneck == expected.bottleneck
    assert result.times.tolist() == expected.times.tolist()


def test_lists_tuples_and_strided_arrays():
    expected = hetbal.partition(np.array(WEIGHTS, dtype=np.int64), SPEEDS)
    for weights in [WEIGHTS, tuple(WEIGHTS), [float(w) for w in WEIGHTS], [np.int64(w) for w in WEIGHTS],
                    np.repeat(np.array(WEIGHTS, dtype=np.float64), 2)[::2],  # strided: copied once
                    np.array(WEIGHTS[::-1], dtype=np.int32)[::-1]]:
        result = hetbal.partition(weights, SPEEDS)
        assert result.cuts.tolist() == expected.cuts.tolist()
        assert result.bottleneck == expected.bottleneck
    for speeds in [tuple(SPEEDS), np.array(SPEEDS), np.array(SPEEDS, dtype=np.float32), [1, 2.5, 0.5, 1.5]]:
        assert hetbal.partition(WEIGHTS, speeds).cuts.tolist() == expected.cuts.tolist()
    # Integers beyond int64 (a list numpy reads as uint64) are summed exactly.
    big = hetbal.partition([2**63, 2**62, 2**62], [1.0, 1.0])
    assert big.cuts.tolist() == [0, 1, 3] and big.bottleneck == float(2**63)


def test_the_least_moving_partition():
    ones = np.ones(8, dtype=np.int64)
    exact = hetbal.partition(ones, [1.0, 1.0], current=[0, 5, 8])
    cuts, bottleneck = exact
    assert cuts.tolist() == [0, 4, 8] and bottleneck == 4.0
    assert (exact.moved_bytes, exact.moved_items) == (1, 1)
    assert exact.limit == 4.0 and exact.optimal_bottleneck == 4.0 and exact.optimal is True
    assert exact.optimal_cuts.tolist() == [0, 4, 8] and exact.times.tolist() == [4.0, 4.0]
    lazy = hetbal.partition(ones, [1.0, 1.0], current=[0, 5, 8], tolerance=0.25)
    cuts, bottleneck = lazy
    assert cuts.tolist() == [0, 5, 8] and bottleneck == 5.0
    assert (lazy.moved_bytes, lazy.moved_items) == (0, 0)
    assert lazy.limit == 5.0 and lazy.optimal_bottleneck == 4.0 and lazy.optimal is False
    assert "moved 0 bytes (0 items)" in repr(lazy) and "optimal 4.0" in repr(lazy)
    # tolerance given as an int or a numpy float; current as a numpy array.
    assert hetbal.partition(ones, [1, 1], current=np.array([0, 5, 8]), tolerance=0).cuts.tolist() == [0, 4, 8]
    assert hetbal.partition(ones, [1, 1], np.array([0, 5, 8], dtype=np.uint64), np.float64(0.25)).moved_items == 0


def test_sizes_count_bytes():
    weights = np.ones(8)
    # Moving item 4 costs 100 bytes, item 3 only 1: the cut moves down.
    sizes = [1, 1, 1, 1, 100, 1, 1, 1]
    for given in [sizes, np.array(sizes, dtype=np.uint64), np.array(sizes, dtype=np.int32),
                  np.repeat(np.array(sizes, dtype=np.uint64), 2)[::2]]:
        result = hetbal.partition(weights, [1.0, 1.0], current=[0, 3, 8], sizes=given)
        assert result.cuts.tolist() == [0, 4, 8] and result.moved_bytes == 1 and result.moved_items == 1
    result = hetbal.partition(weights, [1.0, 1.0], current=[0, 5, 8], sizes=sizes)
    assert result.cuts.tolist() == [0, 4, 8] and result.moved_bytes == 100


def test_the_least_moving_partition_against_exhaustive_search():
    rng = np.random.default_rng(11)
    for _ in range(200):
        n, p = int(rng.integers(0, 7)), int(rng.integers(1, 4))
        weights = rng.integers(0, 5, n).tolist()
        speeds = rng.choice([0.5, 1.0, 2.0, 3.0], p).tolist()
        sizes = rng.integers(0, 9, n).tolist()
        current = [0, *sorted(rng.integers(0, n + 1, p - 1).tolist()), n]
        tolerance = float(rng.choice([0.0, 0.1, 0.5]))
        result = hetbal.partition(weights, speeds, current=current, tolerance=tolerance, sizes=sizes)
        optimum = min(bottleneck_of(weights, speeds, c) for c in all_cuts(n, p))
        limit = optimum * (1 + tolerance)
        least = min(moved_bytes(sizes, current, c) for c in all_cuts(n, p)
                    if bottleneck_of(weights, speeds, c) <= limit)
        cuts = result.cuts.tolist()
        assert result.optimal_bottleneck == optimum and result.limit == limit
        assert result.bottleneck == bottleneck_of(weights, speeds, cuts) <= limit
        assert result.moved_bytes == least == moved_bytes(sizes, current, cuts)


def peak_rss_reset():
    """Resets the process's peak resident set (Linux), False where it cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def test_the_weights_are_read_in_place():
    n = 10**7
    weights = np.random.default_rng(1).random(n)
    speeds = np.random.default_rng(2).uniform(1.0, 4.0, 100)
    kept_weights, kept_speeds = weights.copy(), speeds.copy()
    expected = hetbal.partition(weights, speeds)
    # numpy's allocations (a conversion, astype, ascontiguousarray) show in
    # tracemalloc: none of the weights' size may happen.
    tracemalloc.start()
    try:
        result = hetbal.partition(weights, speeds)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < weights.nbytes / 8, f"{peak} bytes traced during the call"
    assert result.cuts.tolist() == expected.cuts.tolist()
    # Rust's allocations do not show in tracemalloc, but in the peak resident
    # set: the prefix sums (n + 1 float64) may be there, a copy of the weights
    # too would double it.
    if os.path.exists("/proc/self/status") and peak_rss_reset():
        before = status_kib("VmRSS")
        hetbal.partition(weights, speeds)
        grown = (status_kib("VmHWM") - before) * 1024
        assert grown < 1.5 * weights.nbytes, f"the peak resident set grew by {grown} bytes"
    # The caller's arrays are untouched, and free again (no borrow left).
    assert np.array_equal(weights, kept_weights) and np.array_equal(speeds, kept_speeds)
    assert weights.flags.writeable and weights.flags.c_contiguous
    weights[0] = 0.5


def test_the_movement_form_leaves_its_arguments_alone():
    weights = np.arange(20, dtype=np.int32)
    current = np.array([0, 10, 15, 20], dtype=np.uint64)
    sizes = np.arange(1, 21, dtype=np.uint64)
    copies = [weights.copy(), current.copy(), sizes.copy()]
    result = hetbal.partition(weights, [1.0, 2.0, 1.0], current=current, tolerance=0.1, sizes=sizes)
    assert result.moved_bytes > 0
    for given, kept in zip([weights, current, sizes], copies):
        assert np.array_equal(given, kept) and given.dtype == kept.dtype and given.flags.writeable


def test_read_only_arrays_are_read():
    weights = np.array(WEIGHTS, dtype=np.float64)
    weights.flags.writeable = False
    assert hetbal.partition(weights, SPEEDS).cuts.tolist() == hetbal.partition(WEIGHTS, SPEEDS).cuts.tolist()
    # A broadcast array (stride 0, read-only) is copied once.
    assert hetbal.partition(np.broadcast_to(np.float64(1.0), (8,)), [1.0, 1.0]).cuts.tolist() == [0, 4, 8]


def test_the_gil_is_released():
    """Another thread runs while the library computes: its longest pause is far
    shorter than the call."""
    weights = np.random.default_rng(3).random(2 * 10**7)
    speeds = [1.0] * 1000
    done = threading.Event()
    span = []

    def call():
        start = time.perf_counter()
        hetbal.partition(weights, speeds)
        span.append(time.perf_counter() - start)
        done.set()

    worker = threading.Thread(target=call)
    last, longest = time.perf_counter(), 0.0
    worker.start()
    while not done.is_set():
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    worker.join()
    assert longest < span[0] / 2, f"paused {longest:.3f} s during a call of {span[0]:.3f} s"


def test_bad_weights():
    speeds = [1.0, 2.0]
    refused("weights[1] = -2: a weight must be finite and >= 0", hetbal.partition, [1, -2, 3], speeds)
    refused("weights[1] = -2", hetbal.partition, np.array([1, -2, 3], dtype=np.int64), speeds)
    refused("weights[2] = -3", hetbal.partition, np.array([1, 2, -3], dtype=np.int32), speeds)
    refused("weights[1] = -0.5", hetbal.partition, np.array([1.0, -0.5]), speeds)
    refused("weights[1] = NaN", hetbal.partition, [1.0, float("nan")], speeds)
    refused("weights[0] = inf", hetbal.partition, np.array([np.inf, 1.0], dtype=np.float32), speeds)
    refused("weights[0] = -inf", hetbal.partition, [-np.inf], speeds)
    refused("weights overflow at weights[1]", hetbal.partition, np.array([2**63, 2**63], dtype=np.uint64), speeds)
    refused("weights overflow at weights[1]", hetbal.partition, np.array([1e308, 1e308]), speeds)
    refused("weights must be a 1-D array", hetbal.partition, np.ones((2, 3)), speeds)
    assert "shape (2, 3)" in refused("weights must be a 1-D array", hetbal.partition, [[1, 2, 3], [4, 5, 6]], speeds)
    refused("weights must be a 1-D array", hetbal.partition, np.float64(3.0), speeds)
    refused("weights: a 1-D array or a list of numbers, not str", hetbal.partition, "123", speeds)
    refused("weights: a 1-D array or a list of numbers, not bytes", hetbal.partition, b"123", speeds)
    refused("weights: a 1-D array or a list of numbers, not NoneType", hetbal.partition, None, speeds)
    refused("weights: an array of <U1", hetbal.partition, np.array(["1", "2"]), speeds)
    refused("not strings", hetbal.partition, ["1", "2"], speeds)
    refused("weights: an array of bool", hetbal.partition, np.array([True, False]), speeds)
    refused("not booleans", hetbal.partition, [True, False], speeds)
    refused("weights: an array of object", hetbal.partition, np.array([1, 2], dtype=object), speeds)
    refused("weights", hetbal.partition, [1, None], speeds)
    refused("weights", hetbal.partition, [[1, 2], [3]], speeds)
    refused("weights: an array of complex128", hetbal.partition, np.array([1 + 2j]), speeds)


def test_bad_speeds():
    weights = np.array([1.0, 2.0, 3.0])
    refused("seconds_per_unit is empty", hetbal.partition, weights, [])
    refused("seconds_per_unit is empty", hetbal.partition, weights, np.array([]))
    refused("seconds_per_unit[1] = 0: seconds per unit of weight must be finite and > 0",
            hetbal.partition, weights, [1.0, 0.0])
    refused("seconds_per_unit[0] = -1", hetbal.partition, weights, [-1.0, 1.0])
    refused("seconds_per_unit[1] = NaN", hetbal.partition, weights, np.array([1.0, np.nan]))
    refused("seconds_per_unit[0] = inf", hetbal.partition, weights, [np.inf])
    refused("seconds_per_unit[1] = 'x'", hetbal.partition, weights, [1.0, "x"])
    refused("seconds_per_unit[0] = True", hetbal.partition, weights, [True])
    refused("seconds_per_unit: an array of bool", hetbal.partition, weights, np.array([True]))
    refused("seconds_per_unit: a 1-D array", hetbal.partition, weights, np.ones((2, 2)))
    refused("seconds_per_unit: a sequence or numpy array of numbers, not str", hetbal.partition, weights, "12")


def test_bad_movement_arguments():
    ones = np.ones(8)
    speeds = [1.0, 1.0]
    refused("tolerance given without current: current", hetbal.partition, ones, speeds, tolerance=0.1)
    refused("sizes given without current: current", hetbal.partition, ones, speeds, sizes=[1] * 8)
    refused("tolerance and sizes given without current", hetbal.partition, ones, speeds, tolerance=0.0, sizes=[1] * 8)
    refused("current has 2 entries; it must have 3", hetbal.partition, ones, speeds, current=[0, 8])
    refused("current[0]: the first cut is 1; it must be 0", hetbal.partition, ones, speeds, current=[1, 4, 8])
    refused("current[2]: the cuts decrease (3 after 5)", hetbal.partition, ones, speeds, current=[0, 5, 3])
    refused("current[2]: the last cut is 7; it must be the number of items, 8", hetbal.partition, ones, speeds,
            current=[0, 4, 7])
    refused("current[1] = -1: a count must be >= 0", hetbal.partition, ones, speeds, current=[0, -1, 8])
    refused("current[1] = 4.0", hetbal.partition, ones, speeds, current=[0, 4.0, 8])
    refused("current: an array of float64", hetbal.partition, ones, speeds, current=np.array([0.0, 4.0, 8.0]))
    refused("tolerance = -0.1: it must be finite and >= 0", hetbal.partition, ones, speeds, current=[0, 4, 8],
            tolerance=-0.1)
    refused("tolerance = NaN", hetbal.partition, ones, speeds, current=[0, 4, 8], tolerance=float("nan"))
    refused("tolerance = inf", hetbal.partition, ones, speeds, current=[0, 4, 8], tolerance=float("inf"))
    refused("tolerance = 'x'", hetbal.partition, ones, speeds, current=[0, 4, 8], tolerance="x")
    refused("tolerance = True", hetbal.partition, ones, speeds, current=[0, 4, 8], tolerance=True)
    refused("sizes has 7 entries; it must have 8", hetbal.partition, ones, speeds, current=[0, 4, 8], sizes=[1] * 7)
    refused("sizes has 9 entries", hetbal.partition, ones, speeds, current=[0, 4, 8],
            sizes=np.ones(9, dtype=np.uint64))
    refused("sizes[2] = -1", hetbal.partition, ones, speeds, current=[0, 4, 8], sizes=[1, 1, -1, 1, 1, 1, 1, 1])
    refused("sizes: an array of float64", hetbal.partition, ones, speeds, current=[0, 4, 8], sizes=np.ones(8))
    refused("sizes overflow at sizes[1]", hetbal.partition, ones, speeds, current=[0, 4, 8],
            sizes=[2**63, 2**63, 0, 0, 0, 0, 0, 0])
    # The weights are still checked in the movement form.
    refused("weights[0] = -1", hetbal.partition, [-1.0, 1.0], speeds, current=[0, 1, 2])
    refused("weights must be a 1-D array", hetbal.partition, np.ones((2, 4)), speeds, current=[0, 4, 8])
