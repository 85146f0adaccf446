"""hetbal.mpi on 4 ranks (`mpirun -np 4 python -m pytest tests/test_mpi.py`):
float64 rows and a structured dtype moved and checked element by element (on a
path with empty ranks too), bad arguments and injected faults raising on every
rank with every array intact, the balancer moving the rows of a slow rank.
Skipped on any other size."""

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
    assert int(plan.firsts[RANK]) == start  # the plan says where the items start
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


def test_the_array_returned_views_an_item_buffer():
    """The rows are copied once, into an item buffer that grows in place (the
    copy never moves again): the array returned views it, keeps it alive and
    is writable."""
    loads = [5, 1, 2, 8]
    rows = np.arange(16 * 3, dtype=np.float64).reshape(16, 3)
    out = mpi.redistribute(COMM, mine(rows, loads), BIDIRECTIONAL)
    base = out
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    assert type(base).__name__ == "_ItemBuffer"
    del base
    import gc

    gc.collect()
    assert out.tobytes() == expected(rows, BIDIRECTIONAL).tobytes()
    out[:] = 1.0
    assert np.all(out == 1.0)


def test_a_path_with_empty_ranks():
    """Rank 0 holds no row before, rank 3 none after; on a path no row crosses
    the link between rank 3 and rank 0: rank 1 gives 4 to rank 0, rank 2 two
    to rank 1, rank 3 three to rank 2, and the rows keep the global order."""
    loads, targets = [0, 6, 3, 3], [4, 4, 4, 0]
    plan = hetbal.ring_plan(loads, targets, [1.0] * 4, [1.0] * 4, path=True)
    assert all({int(t["from"]), int(t["to"])} != {0, 3} for t in plan.transfers)
    rows = np.arange(12 * 2, dtype=np.float64).reshape(12, 2) + 0.5
    array = mine(rows, loads)
    assert array.shape == (loads[RANK], 2)
    out = mpi.redistribute(COMM, array, plan)
    want = rows[sum(targets[:RANK]):sum(targets[:RANK + 1])]  # from rank 0's first row: no rotation
    assert out.shape == (targets[RANK], 2) and out.dtype == np.float64
    assert out.tobytes() == want.tobytes() and expected(rows, plan).tobytes() == want.tobytes()
    assert everyone(True)


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


def address(array, row):
    """The address of `array`'s row `row`."""
    return array.__array_interface__["data"][0] + row * array.strides[0]


@pytest.mark.parametrize("plan", [BIDIRECTIONAL, FORWARDING], ids=["bidirectional", "forwarding"])
def test_an_item_buffer_moves_in_place(plan):
    # The rows a rank keeps stay at their addresses: none is copied or moved;
    # the rows received land beside them; the values are those of a copy run.
    loads = [int(x) for x in plan.loads]
    total = sum(loads)
    rows = np.arange(total * 3, dtype=np.float64).reshape(total, 3) * 1.5 + 0.25
    items = mpi.ItemBuffer(mine(rows, loads))
    assert len(items) == loads[RANK] and items.dtype == np.float64
    old = items.array
    start = int(boundaries(loads)[RANK])
    at = {start + k: address(old, k) for k in range(len(old))}  # global row -> address
    out = mpi.redistribute(COMM, items, plan)
    assert out is items
    new = items.array
    assert new.shape == (int(plan.targets[RANK]), 3)
    assert new.tobytes() == expected(rows, plan).tobytes()
    first = int(plan.firsts[RANK])
    kept = 0
    for k in range(len(new)):
        g = (first + k) % total
        if g in at:
            assert address(new, k) == at[g], f"row {g} moved"
            kept += 1
    assert kept == len(set(at) & {(first + k) % total for k in range(len(new))})
    # The old view still reads memory of the buffer (never freed memory).
    float(old.sum()) if len(old) else None
    # Written through the view, read by the next move.
    new[:] += 1.0
    back = hetbal.ring_plan(
        [int(x) for x in plan.targets], loads, [1.0] * 4, [1.0] * 4
    )
    mpi.redistribute(COMM, items, back)
    assert len(items) == loads[RANK]
    # The global order from rank 0's first row, after the first move.
    moved = np.roll(rows, -int(plan.firsts[0]), axis=0) + 1.0
    assert everyone(items.array.tobytes() == expected(moved, back).tobytes())


def test_an_item_buffer_keeps_its_rows_on_failure():
    loads = [int(x) for x in FORWARDING.loads]
    rows = np.arange(sum(loads) * 2, dtype=np.float64).reshape(-1, 2)
    items = mpi.ItemBuffer(mine(rows, loads))
    before = items.array.copy()
    at = address(items.array, 0) if len(items) else None
    with pytest.raises(mpi.RunError):
        mpi.redistribute(COMM, items, FORWARDING, fault=(1, "corrupt"))
    assert everyone(items.array.tobytes() == before.tobytes())
    assert at is None or address(items.array, 0) == at
    # Wrong counts on one rank: refused on every rank, nothing moved.
    wrong = mpi.ItemBuffer(np.ones((loads[RANK] + (RANK == 3), 2)))
    with pytest.raises(hetbal.InputError) as caught:
        mpi.redistribute(COMM, wrong, FORWARDING)
    if RANK == 3:
        assert "rank 3 holds 4 rows but the plan's load of rank 3 is 3" in str(caught.value)
    else:
        assert "rank 3 gave wrong arguments" in str(caught.value)
    assert len(wrong) == loads[RANK] + (RANK == 3)
    out = mpi.redistribute(COMM, items, FORWARDING)
    assert out.array.tobytes() == expected(rows, FORWARDING).tobytes()
    with pytest.raises(hetbal.InputError, match="object"):
        mpi.ItemBuffer(np.empty(3, dtype=object))


def test_an_item_buffer_giving_back_loses_only_the_rows_sent():
    """With give_back_sent, a move is the same; a failure after rows left
    leaves each rank its rows that had not left (rank 0 sent its last 6, rank
    1 its 2 with 2 passed on, rank 2 its last 2, rank 3 none)."""
    loads = [int(x) for x in FORWARDING.loads]
    rows = np.arange(sum(loads) * 2, dtype=np.float64).reshape(-1, 2)
    items = mpi.ItemBuffer(mine(rows, loads))
    assert items.give_back_sent is False
    items.give_back_sent = True
    assert items.give_back_sent is True
    with pytest.raises(mpi.RunError):
        mpi.redistribute(COMM, items, FORWARDING, fault=(1, "fail-before-commit"))
    sent = [6, 2, 2, 0][RANK]
    assert everyone(items.array.tobytes() == mine(rows, loads)[: loads[RANK] - sent].tobytes())
    again = mpi.ItemBuffer(mine(rows, loads))
    again.give_back_sent = True
    out = mpi.redistribute(COMM, again, FORWARDING)
    assert everyone(out.array.tobytes() == expected(rows, FORWARDING).tobytes())


def test_the_balancer_moves_an_item_buffer_in_place():
    # The slow rank of test_the_balancer_moves_rows_off_a_slow_rank, its rows
    # in an ItemBuffer: the balancer moves them in place (the rows a rank
    # keeps stay at their addresses) and every row is where the decision says.
    total = 200
    rows = np.arange(total * 2, dtype=np.float64).reshape(total, 2)
    items = mpi.ItemBuffer(rows[50 * RANK:50 * (RANK + 1)])
    with mpi.Balancer(COMM, c_succ=[1e-7] * 4, c_pred=[1e-7] * 4, policy="profitability") as balancer:
        old = items.array
        at = {50 * RANK + k: address(old, k) for k in range(len(old))}
        out, d = balancer.step(items, 0.04 if RANK == 2 else 0.01, 10)
        assert out is items and d.redistribute and d.count == len(items)
        new = items.array
        assert new.tobytes() == rows[(d.first + np.arange(len(new))) % total].tobytes()
        for k in range(len(new)):
            g = (d.first + k) % total
            if g in at:
                assert address(new, k) == at[g], f"row {g} moved"
        assert everyone(len(items) == d.count)
        assert COMM.allreduce(len(items)) == total
        _, d = balancer.step(items, 0.01, 9)
        assert not d.redistribute


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


def cliff_seconds(rank, items):
    """The compute seconds of `rank` holding `items` rows on a memory cliff:
    rank 0 computes 1e-4 s per row up to 1500 rows and 10 times slower per
    row past them, rank 1 2e-4 s up to 2500, ranks 2 and 3 steady."""
    per_item, capacity = [1e-4, 2e-4, 5e-4, 1e-3][rank], [1500, 2500, None, None][rank]
    return per_item * items * (1 if capacity is None or items <= capacity else 10)


def moves_on_the_cliff(model, policy, iterations=16):
    """The iterations after which the balancer with `model` and `policy` (None:
    the default, adaptive) moved the rows on the cliff of `cliff_seconds`,
    checking at every step that it decides exactly as hetbal.Decider with the
    same policy and model on every rank's numbers."""
    links, total = [1e-6] * 4, 8000
    rows = np.arange(total, dtype=np.int64)
    reference = hetbal.Decider(links, links, policy=policy or "adaptive", model=model)
    loads = np.full(4, 2000, dtype=np.uint64)
    moves = []
    chosen = {} if policy is None else {"policy": policy}
    with mpi.Balancer(COMM, c_succ=links, c_pred=links, model=model, **chosen) as balancer:
        array = rows[2000 * RANK:2000 * (RANK + 1)].copy()
        for k in range(1, iterations + 1):
            want = reference.observe(
                loads, [cliff_seconds(r, int(x)) for r, x in enumerate(loads)], iterations - k
            )
            array, d = balancer.step(array, cliff_seconds(RANK, len(array)), iterations - k)
            assert d.redistribute == want.redistribute and d.iteration == k
            assert d.current_step == want.current_step and d.balanced_step == want.balanced_step
            assert len(array) == int(want.targets[RANK])
            assert np.array_equal(array, rows[(d.first + np.arange(len(array))) % total])
            if d.redistribute:
                moves.append(k)
            loads = want.targets
    return moves


@pytest.mark.parametrize("model", ["functional", "monotone-cubic", "constant"])
def test_the_balancer_model_decides_as_the_decider(model):
    # The balancer (adaptive policy) with `model` moves the rows exactly as
    # hetbal.Decider with the same policy and model decides on every rank's
    # numbers; the functional model settles, the constant one keeps moving.
    moves = moves_on_the_cliff(model, None)
    if model == "functional":
        assert moves and max(moves) < 10, moves
    if model == "constant":  # still moving late in the run (the adaptive guard spaces the moves)
        assert len(moves) >= 5 and max(moves) > 10, moves


@pytest.mark.parametrize("policy", ["never", "profitability", "fixed-2", "adaptive"])
def test_the_balancer_policy_decides_as_the_decider(policy):
    # The policy takes effect: the balancer moves as hetbal.Decider with that
    # policy (and the constant model, which on the cliff wants to move every
    # two or three steps).
    moves = moves_on_the_cliff("constant", policy)
    if policy == "never":
        assert moves == []
    if policy == "fixed-2":  # after iterations 16 * m / 3
        assert moves == [5, 10], moves
    if policy == "profitability":  # the rule repays every move: it moves whenever it believes a change
        assert len(moves) >= 5 and max(moves) > 10, moves


def test_the_never_policy_on_measured_links_never_moves():
    # The slow rank of test_the_balancer_moves_rows_off_a_slow_rank, which the
    # default policy relieves: "never" leaves every row where it is.
    loads = [50, 50, 50, 50]
    rows = np.arange(200 * 4, dtype=np.float64).reshape(200, 4)
    with mpi.Balancer(COMM, policy="never") as balancer:
        array, decisions, failures = run_balancer(balancer, rows, mine(rows, loads), 50 * RANK, 20)
    assert failures == [] and len(decisions) == 20
    assert not any(d.redistribute for d in decisions)
    assert len(array) == 50


def test_balancer_policy_names_checked():
    # The binding's error, on every rank, naming the policies it knows.
    with pytest.raises(hetbal.InputError, match='unknown policy "sometimes": choose one of'):
        mpi.Balancer(COMM, c_succ=[1e-6] * 4, policy="sometimes")
    # The offline policy needs the future speeds: refused when the balancer is
    # made, with measured links too (not at the first step).
    with pytest.raises(hetbal.InputError, match='policy "offline-best": .*future speeds'):
        mpi.Balancer(COMM, policy="offline-best")
    with pytest.raises(hetbal.InputError, match='policy "offline-best"'):
        mpi.Balancer(COMM, c_succ=[1e-6] * 4, policy="offline-best")
    # Every rank must choose the same policy.
    with pytest.raises(hetbal.InputError, match="different arguments"):
        mpi.Balancer(COMM, c_succ=[1e-6] * 4, policy="never" if RANK == 1 else "adaptive")


def test_balancer_model_names_checked():
    with pytest.raises(hetbal.InputError, match='unknown model "linear"'):
        mpi.Balancer(COMM, c_succ=[1e-6] * 4, model="linear")


# Variable-size items: item g holds sizes(g) elements (0 to 9; every fifth
# empty), each element naming its item and place.
ITEMS = 60


def item_sizes():
    g = np.arange(ITEMS)
    return np.where(g % 5 == 3, 0, (g * 7) % 10).astype(np.uint64)


def items_of(first, last, dtype=np.float64):
    """The data and offsets of items first..last (dtype: of the elements)."""
    sizes = item_sizes()[first:last]
    data = np.concatenate(
        [g * 100.0 + np.arange(int(sizes[g - first])) for g in range(first, last)] + [np.zeros(0)]
    ).astype(dtype)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.uint64)
    return data, offsets


@pytest.mark.parametrize("dtype", [np.float64, np.int16, np.dtype([("x", "f4"), ("n", "u1")])])
def test_variable_size_items_move_to_new_cuts(dtype):
    cuts = [0, 15, 30, 45, ITEMS]
    plain = np.dtype(dtype).fields is None
    for new in ([0, 0, 40, 41, ITEMS], [0, 22, 22, 60, ITEMS], [0, 5, 30, 55, ITEMS], cuts):
        data, offsets = items_of(cuts[RANK], cuts[RANK + 1])
        if not plain:
            structured = np.zeros(len(data), dtype=dtype)
            structured["x"], structured["n"] = data, 7
            data = structured
        else:
            data = data.astype(dtype)
        before = (data.copy(), offsets.copy())
        got, got_offsets = mpi.redistribute_items(COMM, data, offsets, np.array(new, dtype=np.uint64))
        want, want_offsets = items_of(new[RANK], new[RANK + 1])
        assert got.dtype == data.dtype and got_offsets.dtype == np.uint64
        assert np.array_equal(got_offsets, want_offsets)
        values = got["x"] if not plain else got
        assert np.array_equal(values, want.astype(values.dtype))
        # The arrays given are never written.
        assert data.tobytes() == before[0].tobytes() and np.array_equal(offsets, before[1])
        cuts = new


def test_variable_size_items_refused_on_every_rank():
    cuts = [0, 15, 30, 45, ITEMS]
    data, offsets = items_of(cuts[RANK], cuts[RANK + 1])
    bad = offsets.copy()
    if RANK == 2:
        bad[-1] += 1
    with pytest.raises(hetbal.InputError) as caught:
        mpi.redistribute_items(COMM, data, bad, cuts)
    if RANK == 2:
        assert "the offsets end at" in str(caught.value)
    else:
        assert "rank 2 refused its arguments" in str(caught.value)
    mismatched = list(cuts)
    if RANK == 1:
        mismatched[2] += 1
    with pytest.raises(hetbal.InputError, match="different arguments"):
        mpi.redistribute_items(COMM, data, offsets, mismatched)
    with pytest.raises(hetbal.InputError, match="cuts end at 61 but the ranks hold 60 items"):
        mpi.redistribute_items(COMM, data, offsets, cuts[:-1] + [ITEMS + 1])
    with pytest.raises(hetbal.InputError, match="counts are never negative"):
        mpi.redistribute_items(COMM, data, offsets, [0, -1, 30, 45, ITEMS])
    with pytest.raises(hetbal.InputError, match="data: a 1-D array"):
        mpi.redistribute_items(COMM, data.reshape(-1, 1), offsets, cuts)


@pytest.mark.parametrize("fault", ["corrupt", "short", "fail-before-commit"])
def test_a_fault_moving_items_loses_nothing(fault):
    cuts = [0, 15, 30, 45, ITEMS]
    data, offsets = items_of(cuts[RANK], cuts[RANK + 1])
    # Rank 1 sends its items to rank 0: its first message is spoiled.
    with pytest.raises(mpi.RunError):
        mpi.redistribute_items(COMM, data, offsets, [0, 30, 30, 40, ITEMS], fault=(1, fault))
    # The same move without the fault commits: nothing was left over.
    got, got_offsets = mpi.redistribute_items(COMM, data, offsets, [0, 30, 30, 40, ITEMS])
    want, want_offsets = items_of(*[[0, 30, 30, 40, ITEMS][RANK + i] for i in (0, 1)])
    assert np.array_equal(got, want) and np.array_equal(got_offsets, want_offsets)


def test_the_weighted_balancer_moves_heavy_cells_off_a_slow_rank():
    # Rank 3 three times slower; items 20..29 ten times heavier.
    cuts = [0, 15, 30, 45, ITEMS]
    data, offsets = items_of(cuts[RANK], cuts[RANK + 1])
    weights = np.where((np.arange(ITEMS) >= 20) & (np.arange(ITEMS) < 30), 10.0, 1.0)
    mine_w = weights[cuts[RANK]:cuts[RANK + 1]]
    speed = [1e-3, 1e-3, 1e-3, 3e-3][RANK]
    with mpi.WeightedBalancer(COMM, tolerance=0.05) as balancer:
        data, offsets, w, d = balancer.step(data, offsets, mine_w, speed * mine_w.sum(), 50)
        assert d.redistribute and d.balanced_seconds <= 1.05 * d.optimum_seconds
        assert d.current_seconds > 1.3 * d.balanced_seconds
        new = d.cuts
        want, want_offsets = items_of(new[RANK], new[RANK + 1])
        assert np.array_equal(data, want) and np.array_equal(offsets, want_offsets)
        assert np.array_equal(w, weights[new[RANK]:new[RANK + 1]])
        assert (d.first, d.items) == (new[RANK], new[RANK + 1] - new[RANK])
        # Balanced now: the next step keeps the arrays.
        again = balancer.step(data, offsets, w, speed * w.sum(), 49)
        assert not again[3].redistribute and again[0] is not None
        # Bad weights on one rank: every rank raises.
        bad = w.copy()
        if RANK == 1 and len(bad):
            bad[0] = -1.0
        elif RANK == 1:
            bad = np.array([1.0])
        with pytest.raises(hetbal.InputError):
            balancer.step(data, offsets, bad, 1.0, 10)
