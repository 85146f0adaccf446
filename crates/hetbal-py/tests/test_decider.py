"""hetbal.Decider, the library's run-time decider without MPI: on a simulated
memory cliff the functional model settles and the constant one keeps moving,
as the library's closed loop does; the targets always add up to the total;
every bad input is refused with InputError and the library's message."""

import math

import numpy as np
import pytest

import hetbal

# Four processors of 2000 items each (links of 1 us per item both ways), as the
# library's memory-cliff scenario: P0 computes 1e-4 s per item up to 1500
# items and 10 times slower per item past them, P1 2e-4 s up to 2500 items and
# 10 times slower past them, P2 and P3 steady at 5e-4 and 1e-3 s per item.
PER_ITEM = [1e-4, 2e-4, 5e-4, 1e-3]
CAPACITY = [1500, 2500, None, None]
LINKS = [1e-6] * 4
ITERATIONS = 30


def compute_seconds(loads):
    """The simulated processors' compute times at `loads`."""
    seconds = []
    for x, c, cap in zip(loads, PER_ITEM, CAPACITY):
        x = int(x)
        seconds.append(c * x if cap is None or x <= cap else 10 * c * x)
    return seconds


def optimum_step(total=8000):
    """The least iteration time over every split of `total` items (each
    processor at least one): the least time T at which the loads each
    processor computes within T add up to `total` (the times never decrease
    with the load)."""
    x = np.arange(1, total + 1)
    times = [np.array([compute_seconds([0] * i + [int(v)] + [0] * (3 - i))[i] for v in x])
             for i in range(4)]
    candidates = np.unique(np.concatenate(times))

    def fits(t):
        return sum(int(np.searchsorted(ti, t, side="right")) for ti in times) >= total

    lo, hi = 0, len(candidates) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(candidates[mid]):
            hi = mid
        else:
            lo = mid + 1
    return float(candidates[lo])


def closed_loop(model, policy="profitability"):
    """Runs a Decider with `model` in closed loop on the cliff: the loads
    of every iteration, its moves, and every decision."""
    dec = hetbal.Decider(LINKS, LINKS, policy=policy, model=model)
    loads = np.array([2000] * 4, dtype=np.uint64)
    history, decisions = [], []
    for k in range(1, ITERATIONS + 1):
        history.append(loads.copy())
        d = dec.observe(loads, compute_seconds(loads), ITERATIONS - k)
        decisions.append(d)
        assert d.iteration == k
        assert d.targets.dtype == np.uint64
        assert int(d.targets.sum()) == 8000
        if d.redistribute:
            loads = d.targets
        else:
            assert np.array_equal(d.targets, d.loads)
    return history, decisions


def step(loads):
    return max(compute_seconds(loads))


def test_functional_decider_settles_on_a_memory_cliff():
    history, decisions = closed_loop("functional")
    moves = [k for k, d in enumerate(decisions, 1) if d.redistribute]
    # Settled within 10 observations: no move after the 10th, and every
    # iteration from the 10th within 5% of the optimum.
    assert moves and max(moves) < 10, moves
    assert len(moves) <= 6, moves
    best = optimum_step()
    for k in range(9, ITERATIONS):
        assert step(history[k]) <= 1.05 * best, (k + 1, history[k], best)


def test_constant_decider_keeps_moving_on_a_memory_cliff():
    history, decisions = closed_loop("constant")
    moves = sum(d.redistribute for d in decisions)
    # A move every two or three iterations: P0's time per item, now fast, now
    # slow, is believed once measured twice at a load.
    assert moves >= (ITERATIONS - 1) // 3, moves
    best = optimum_step()
    # P0 is alternately below its capacity and past it, far from the optimum.
    moved = [history[k] for k in range(1, ITERATIONS) if list(history[k]) != list(history[k - 1])]
    for a, b in zip(moved, moved[1:]):
        assert (a[0] > 1500) != (b[0] > 1500), (a, b)
    for k in range(1, ITERATIONS):
        assert step(history[k]) > 3 * best, (k, history[k])


def test_monotone_cubic_model_runs_and_keeps_the_total():
    _, decisions = closed_loop("monotone-cubic")
    assert sum(d.redistribute for d in decisions) <= 8


@pytest.mark.parametrize("policy", ["profitability", "adaptive", "never", "none", "fixed-3"])
def test_targets_add_up_to_the_total(policy):
    rng = np.random.default_rng(5)
    for model in ["functional", "monotone-cubic", "constant"]:
        dec = hetbal.Decider(np.full(5, 1e-5), policy=policy, model=model)
        assert dec.model == model
        loads = rng.integers(1, 500, size=5).astype(np.uint64)
        total = int(loads.sum())
        for remaining in range(20, -1, -1):
            seconds = rng.uniform(0.5, 2.0, size=5) * 1e-3 * loads
            d = dec.observe(loads, seconds, remaining)
            assert int(d.targets.sum()) == total
            assert len(d.flows) == 5 and len(d.firsts) == 5
            assert d.redistribution_time >= 0.0
            if policy in ("never", "none"):
                assert not d.redistribute
            if d.redistribute:
                loads = d.targets
        assert dec.iterations == 21


def test_decision_fields_are_the_library_ones():
    # The library's doc example: P1 twice slower, links of 1 ms per item.
    dec = hetbal.Decider([1e-3, 1e-3], [1e-3, 1e-3], model="constant")
    assert dec.policy == "profitability" and dec.model == "constant"
    d = dec.observe([50, 50], [0.5, 1.0], 100)
    assert d.redistribute and d.planned
    assert d.targets.tolist() == [67, 33]
    assert d.loads.tolist() == [50, 50]
    assert d.flows == [0, 17]
    assert d.firsts.tolist() == [83, 50]
    assert d.current_step == pytest.approx(1.0)
    assert d.balanced_step == pytest.approx(max(67 * 0.01, 33 * 0.02))
    assert d.predicted_gain == pytest.approx(100 * (d.current_step - d.balanced_step))
    assert d.redistribution_time > 0
    assert "redistribute" in repr(d) and "Decider" in repr(dec)
    # The default model is the functional one: it explores at most a halving.
    dec = hetbal.Decider([1e-3, 1e-3])
    assert dec.model == "functional"
    assert dec.observe([50, 50], [0.5, 2.0], 10).targets.tolist() == [75, 25]
    # Fixed-1 over 1 + 9 iterations moves after iteration 5 only.
    dec = hetbal.Decider([1e-3] * 3, policy="fixed-1", model="constant")
    d = dec.observe([30, 30, 30], [0.3, 0.3, 1.2], 9)
    assert not d.redistribute and d.predicted_gain is None


def test_bad_inputs_are_refused():
    dec = hetbal.Decider([1e-3] * 3, [1e-3] * 3)
    with pytest.raises(hetbal.InputError, match="seconds has 2 values but loads has 3"):
        dec.observe([1, 2, 3], [1.0, 1.0], 5)
    with pytest.raises(hetbal.InputError, match=r"rank 1 reported 2 items and NaN s"):
        dec.observe([1, 2, 3], [1.0, float("nan"), 1.0], 5)
    with pytest.raises(hetbal.InputError, match=r"rank 2 reported 3 items and -1 s"):
        dec.observe([1, 2, 3], [1.0, 1.0, -1.0], 5)
    with pytest.raises(hetbal.InputError, match=r"rank 0 reported 0 items"):
        dec.observe([0, 2, 3], [1.0, 1.0, 1.0], 5)
    with pytest.raises(hetbal.InputError, match="4 ranks report"):
        dec.observe([1, 2, 3, 4], [1.0] * 4, 5)
    with pytest.raises(hetbal.InputError):
        dec.observe([1, 2.5, 3], [1.0] * 3, 5)
    with pytest.raises(hetbal.InputError):
        dec.observe([1, 2, 3], [1.0] * 3, -1)
    assert dec.iterations == 0  # nothing refused was observed
    with pytest.raises(hetbal.InputError, match='unknown policy "fastest"'):
        hetbal.Decider([1e-3], policy="fastest")
    with pytest.raises(hetbal.InputError, match="offline-best policy needs the future speeds"):
        hetbal.Decider([1e-3], policy="offline-best")
    with pytest.raises(
        hetbal.InputError,
        match='unknown model "linear": choose one of functional, monotone-cubic, constant',
    ):
        hetbal.Decider([1e-3], model="linear")
    with pytest.raises(hetbal.InputError, match=r"c_succ\[1\] = NaN"):
        hetbal.Decider([1e-3, float("nan")])
    with pytest.raises(hetbal.InputError, match="c_pred has 1 values but c_succ has 2"):
        hetbal.Decider([1e-3, 1e-3], [1e-3])
    with pytest.raises(TypeError):
        hetbal.Decider([1e-3], None, "adaptive")  # policy and model are keyword-only
