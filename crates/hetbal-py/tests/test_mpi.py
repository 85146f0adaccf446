"""hetbal.mpi on 4 ranks (`mpirun -np 4 python -m pytest tests/test_mpi.py`):
float64 rows and a structured dtype moved and checked element by element, bad
arguments and injected faults raising on every rank with every array intact,
the balancer moving the rows of a slow rank. Skipped on any other size."""

import numpy as np
import pytest

import hetbal

try:
    import hetbal.mpi as mpi
    from mpi4py import MPI
except ImportError as e:  # built without MPI, or no mpi4py
    pytest.skip(f"no hetbal.mpi: {e}", allow_module_level=True)

COMM = MPI.COMM_WORLD
RANK = COMM.Get_rank()
pytestmark = pytest.mark.skipif(COMM.Get_size() != 4, reason="run under mpirun -np 4")


def boundaries(loads):
    """Global position of each rank's first item."""
    return np.concatenate(([0], np.cumsum(loads)[:-1])).astype(np.int64)


def mine(global_rows, loads):
    """This rank's rows of the global sequence before a redistribution."""
    start = int(boundaries(loads)[RANK])
    return global_rows[start:start + loads[RANK]].copy()


def expected(global_rows, plan):
    """This rank's rows after `plan`: the net flow f on link (i, i+1) moves the
    boundary between ranks i and i+1 back by f, items keeping their cyclic order."""
    n = len(plan.loads)
    loads = [int(x) for x in plan.loads]
    total = sum(loads)
    f = [0] * n
    for flow in plan.flows:
        a, b, k = int(flow["from"]), int(flow["to"]), int(flow["items"])
        if b == (a + 1) % n:
            f[a] += k
        else:
            f[b] -= k
    start = (int(boundaries(loads)[RANK]) - f[(RANK - 1) % n]) % total
    return global_rows[(start + np.arange(int(plan.targets[RANK]))) % total]


def everyone(flag):
    """True when `flag` holds on every rank."""
    return COMM.allreduce(bool(flag), op=MPI.LAND)


BIDIRECTIONAL = hetbal.ring_plan([5, 1, 2, 8], [4, 4, 4, 4], [1.0] * 4, [1.0] * 4)
# Every rank but the last sends: rank 1 forwards items of rank 0.
FORWARDING = hetbal.ring_plan([8, 2, 3, 3], [2, 4, 5, 5], [1.0, 2.0, 1.0, 1.0])


def test_float64_rows_move_element_by_element():
    loads = [5, 1, 2, 8]
    total = sum(loads)
    rows = np.arange(total * 3, dtype=np.float64).reshape(total, 3) * 1.5 + 0.25
    rows[2, 1], rows[7, 0], rows[11, 2] = np.nan, -np.inf, -0.0
    array = mine(rows, loads)
    before = array.copy()
    out = mpi.redistribute(COMM, array, BIDIRECTIONAL)
    want = expected(rows, BIDIRECTIONAL)
    assert out.dtype == np.float64 and out.shape == (4, 3)
    assert out.tobytes() == want.tobytes()  # bit for bit
    assert np.array_equal(out, want, equal_nan=True)  # and element by element
    assert array.tobytes() == before.tobytes()  # the caller's array is untouched
    # A strided view moves as well (copied to contiguous rows first).
    wide = np.zeros((loads[RANK], 6))
    wide[:, ::2] = array
    out = mpi.redistribute(COMM, wide[:, ::2], BIDIRECTIONAL)
    assert out.tobytes() == want.tobytes()


STRUCT = np.dtype([("id", "<u8"), ("pos", "<f4", (3,)), ("tag", "S5"), ("flag", "?")])


def test_structured_rows_with_a_trailing_shape():
    loads = [int(x) for x in FORWARDING.loads]
    total = sum(loads)
    rows = np.zeros((total, 2), dtype=STRUCT)
    for i in range(total):
        for j in range(2):
            rows[i, j] = (2**63 + 10 * i + j, (i, -j, 0.5 * i), f"r{i}c{j}".encode(), (i + j) % 2 == 0)
    array = mine(rows, loads)
    before = array.copy()
    out = mpi.redistribute(COMM, array, FORWARDING)
    want = expected(rows, FORWARDING)
    assert out.dtype == STRUCT and out.shape == (int(FORWARDING.targets[RANK]), 2)
    for name in STRUCT.names:
        assert np.array_equal(out[name], want[name]), name
    for got, exp in zip(out.ravel(), want.ravel()):
        assert got.tobytes() == exp.tobytes()
        assert got["id"] == exp["id"] and got["tag"] == exp["tag"] and got["flag"] == exp["flag"]
        assert np.array_equal(got["pos"], exp["pos"])
    assert array.tobytes() == before.tobytes()


def test_wrong_arguments_on_one_rank_raise_on_every_rank():
    loads = [5, 1, 2, 8]
    array = np.ones((loads[RANK] + (1 if RANK == 2 else 0), 2))
    before = array.copy()
    with pytest.raises(hetbal.InputError) as caught:
        mpi.redistribute(COMM, array, BIDIRECTIONAL)
    if RANK == 2:
        assert "rank 2 holds 3 rows but the plan's load of rank 2 is 2" in str(caught.value)
    else:
        assert "rank 2 gave wrong arguments" in str(caught.value)
    assert np.array_equal(array, before)
    # Python objects cannot move: refused on every rank too.
    objects = np.empty(loads[RANK], dtype=object) if RANK == 1 else np.ones(loads[RANK])
    with pytest.raises(hetbal.InputError):
        mpi.redistribute(COMM, objects, BIDIRECTIONAL)
    # A plan for another number of processors.
    three = hetbal.ring_plan([2, 1, 1], [1, 2, 1], [1.0] * 3)
    with pytest.raises(hetbal.InputError, match="4 ranks but the plan 3 processors"):
        mpi.redistribute(COMM, np.ones(2), three)
    with pytest.raises(hetbal.InputError, match="plan: a hetbal.Plan"):
        mpi.redistribute(COMM, array, "plan")
    with pytest.raises(hetbal.InputError, match="comm: an mpi4py communicator"):
        mpi.redistribute("world", array, BIDIRECTIONAL)
    assert COMM.allreduce(1) == 4  # the communicator is still the caller's


@pytest.mark.parametrize("fault", ["corrupt", "short", "fail-before-commit"])
def test_an_injected_fault_loses_nothing(fault):
    loads = [int(x) for x in FORWARDING.loads]
    rows = np.arange(sum(loads) * 2, dtype=np.float64).reshape(-1, 2)
    array = mine(rows, loads)
    before = array.copy()
    with pytest.raises(mpi.RunError) as caught:
        mpi.redistribute(COMM, array, FORWARDING, fault=(1, fault))
    assert "nothing committed" in str(caught.value) or "kept its original items" in str(caught.value)
    assert everyone(array.tobytes() == before.tobytes())
    # Nothing is left over either: the same move without the fault commits.
    out = mpi.redistribute(COMM, array, FORWARDING)
    assert out.tobytes() == expected(rows, FORWARDING).tobytes()


def test_a_bad_fault_is_refused():
    with pytest.raises(hetbal.InputError, match="choose one of corrupt, short, fail-before-commit"):
        mpi.redistribute(COMM, np.ones(int(FORWARDING.loads[RANK])), FORWARDING, fault=(1, "lost"))


SPEEDS = [1e-3, 1e-3, 1e-3, 4e-3]  # seconds per item: rank 3 is four times slower


def run_balancer(balancer, rows, array, first, iterations):
    """Steps `iterations` times with compute times from SPEEDS; checks after
    each step that the rows are the global sequence from `decision.first`.
    Returns the array, the decisions and the RunErrors raised."""
    total = len(rows)
    decisions, failures = [], []
    for it in range(iterations):
        before = array.copy()
        try:
            array, d = balancer.step(array, len(array) * SPEEDS[RANK], iterations - it - 1)
        except mpi.RunError as e:
            failures.append(str(e))
            assert array.tobytes() == before.tobytes()
            continue
        decisions.append(d)
        if d.redistribute:
            first = d.first
        assert d.count == len(array)
        assert np.array_equal(array, rows[(first + np.arange(len(array))) % total])
    return array, decisions, failures


def test_the_balancer_moves_rows_off_a_slow_rank():
    loads = [50, 50, 50, 50]
    rows = np.arange(200 * 4, dtype=np.float64).reshape(200, 4)
    with mpi.Balancer(COMM) as balancer:  # links measured at the first step
        array, decisions, failures = run_balancer(balancer, rows, mine(rows, loads), 50 * RANK, 20)
    assert failures == []
    assert any(d.redistribute for d in decisions)
    moved = next(d for d in decisions if d.redistribute)
    assert moved.balanced_step < moved.current_step
    assert COMM.allreduce(len(array)) == 200
    assert COMM.bcast(len(array), root=3) < 50  # the slow rank holds less
    d = decisions[0]
    assert isinstance(d, mpi.Decision) and d.iteration == 1 and d._asdict()["count"] == d.count


def test_a_balancer_fault_keeps_every_array():
    loads = [50, 50, 50, 50]
    rows = np.arange(200, dtype=np.int32)
    balancer = mpi.Balancer(COMM, c_succ=[1e-7] * 4, c_pred=[1e-7] * 4, fault=(2, "corrupt"))
    array, decisions, failures = run_balancer(balancer, rows, mine(rows, loads), 50 * RANK, 6)
    assert failures and everyone(len(failures) == COMM.bcast(len(failures)))
    assert len(array) == 50  # nothing ever moved
    balancer.close()
    with pytest.raises(hetbal.InputError, match="closed"):
        balancer.step(array, 1.0, 1)


def test_balancer_arguments_checked_on_every_rank():
    balancer = mpi.Balancer(COMM, c_succ=[1e-7] * 4)
    array = np.ones((10, 2))
    seconds = float("nan") if RANK == 2 else 0.01
    with pytest.raises(hetbal.InputError) as caught:
        balancer.step(array, seconds, 10)
    assert ("compute time" if RANK == 2 else "rank 2 gave wrong arguments") in str(caught.value)
    balancer.step(array, 0.01, 10)
    # The item size is the first step's.
    with pytest.raises(hetbal.InputError):
        balancer.step(np.ones((10, 3)) if RANK == 0 else array, 0.01, 9)
    with pytest.raises(hetbal.InputError, match="c_succ has 3 values"):
        mpi.Balancer(COMM, c_succ=[1.0] * 3)
    with pytest.raises(hetbal.InputError, match="c_pred is given without c_succ"):
        mpi.Balancer(COMM, c_pred=[1.0] * 4)
