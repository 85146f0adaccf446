"""The MPI runtime of hetbal on mpi4py communicators (the package built with
the cargo feature ``mpi``, its default).

    from mpi4py import MPI
    import hetbal, hetbal.mpi
    new_array = hetbal.mpi.redistribute(MPI.COMM_WORLD, array, plan)
    data, offsets = hetbal.mpi.redistribute_items(MPI.COMM_WORLD, data, offsets, cuts)
    balancer = hetbal.mpi.Balancer(MPI.COMM_WORLD)
    weighted = hetbal.mpi.WeightedBalancer(MPI.COMM_WORLD)
    data, offsets, weights, decision = weighted.step(data, offsets, weights, seconds, remaining)
    array, decision = balancer.step(array, seconds, remaining)

Every function is collective: every rank of the communicator calls it, rank i
being position i of the ring. It runs the Rust runtime of ``hetbal-mpi`` on a
duplicate of the communicator (its messages never mix with the application's;
the communicator itself is never freed by hetbal). An item is a row of the
array: its first axis counts the items, any dtype (structured too) and any
trailing shape; rows move as bytes, in the global order of the items.

Nothing is lost: on any failure every rank raises (``RunError`` for a failed
run, ``hetbal.InputError`` for wrong arguments on any rank, before anything
moves) and every rank's array is untouched: hetbal never writes the caller's
array, it returns a new one (its rows copied once). An ``ItemBuffer`` instead
moves in place, with no copy of the rows a rank keeps:

    items = hetbal.mpi.ItemBuffer(array)
    hetbal.mpi.redistribute(MPI.COMM_WORLD, items, plan)
    items, decision = balancer.step(items, seconds, remaining)
    view = items.array
"""

# The implementation's imports go by private names: the module's namespace
# (dir(hetbal.mpi)) holds its API.
import typing as _typing

import numpy as _np
import numpy.typing as _npt

from . import _hetbal as _native
from ._hetbal import InputError, Plan as _Plan, RunError

if _typing.TYPE_CHECKING:
    from ._hetbal import _Costs, _Count, _Cost, _DeciderModel, _DeciderPolicy, _Fault

if not _native.WITH_MPI:
    raise ImportError(
        "hetbal was built without MPI (cargo feature `mpi`): reinstall it on a "
        "machine with an MPI library (OpenMPI or MPICH) and libclang"
    )

from mpi4py import MPI as _MPI  # noqa: E402  (initialises MPI)

__all__ = [
    "Balancer",
    "Decision",
    "InputError",
    "ItemBuffer",
    "RunError",
    "WeightedBalancer",
    "WeightedDecision",
    "redistribute",
    "redistribute_items",
]

# The element type of the caller's array, which the array returned keeps.
_Scalar = _typing.TypeVar("_Scalar", bound=_np.generic)


def _handle(comm: _MPI.Comm) -> int:
    """mpi4py's handle of `comm` (for OpenMPI the MPI_Comm pointer)."""
    if not isinstance(comm, _MPI.Comm):
        raise InputError(f"comm: an mpi4py communicator (mpi4py.MPI.Comm), not {type(comm).__name__}")
    if comm == _MPI.COMM_NULL:
        raise InputError("comm is MPI.COMM_NULL")
    return _MPI._handleof(comm)


def _prepare(
    array: _npt.NDArray[_Scalar],
) -> tuple[
    _typing.Optional[_npt.NDArray[_np.uint8]],
    _typing.Optional[str],
    _typing.Optional[_typing.Callable[[_npt.NDArray[_np.uint8]], _npt.NDArray[_Scalar]]],
]:
    """The rows of `array` as a C-contiguous (count, item_bytes) uint8 array
    (a view when the array is contiguous already), what is wrong with it (or
    None), and the function that gives received bytes the array's dtype and
    trailing shape back."""
    try:
        a = _np.asarray(array)
        if a.ndim == 0:
            raise InputError("array: a numpy array whose first axis counts the items, not a scalar")
        if a.dtype.hasobject:
            raise InputError(
                f"array: items of dtype {a.dtype} hold Python objects, which cannot move between processes"
            )
        trailing = a.shape[1:]
        item_bytes = a.dtype.itemsize * int(_np.prod(trailing, dtype=_np.int64))
        if item_bytes == 0:
            raise InputError(f"array: items of 0 bytes (dtype {a.dtype}, trailing shape {trailing})")
        rows = _np.ascontiguousarray(a).reshape(-1).view(_np.uint8).reshape(a.shape[0], item_bytes)
    except Exception as e:  # every rank must hear of it: passed on to the agreement
        return None, f"{e}" if isinstance(e, InputError) else f"array: {e}", None

    def restore(data: _npt.NDArray[_np.uint8]) -> _npt.NDArray[_Scalar]:
        return data.view(a.dtype).reshape((-1,) + trailing)

    return rows, None, restore


class ItemBuffer:
    """This rank's items (the rows of an array) in memory that
    ``redistribute`` grows in place: the rows a rank keeps are never copied or
    moved, and the rows it receives land beside them. Use it when a rank holds
    much data; ``redistribute`` on a plain array copies the rows once.

    ``ItemBuffer(array)`` copies `array`'s rows once (any dtype without Python
    objects, any trailing shape). ``buffer.array`` is a numpy array of the
    rows as they are now, without a copy, writable. Take it again after each
    redistribution: an older one shows the memory where the rows were (other
    rows, or zeros where memory was given back; never freed memory, as each
    array keeps the buffer alive).

        items = hetbal.mpi.ItemBuffer(cells)
        hetbal.mpi.redistribute(comm, items, plan)   # in place
        cells = items.array

    Linux only (the buffer reserves 1 TiB of addresses with ``mmap``; memory is
    used only where rows are). Like numpy's large arrays, the buffer asks the
    system for transparent huge pages, so rows arrive in fresh memory with one
    page fault per 2 MiB rather than per 4 KiB.
    """

    def __init__(self, array: _npt.NDArray[_typing.Any]) -> None:
        rows, problem, _ = _prepare(array)
        if problem is not None:
            raise InputError(problem)
        assert rows is not None
        a = _np.asarray(array)
        self._dtype = a.dtype
        self._trailing = a.shape[1:]
        self._native = _native._ItemBuffer(rows)

    @property
    def array(self) -> _npt.NDArray[_typing.Any]:
        """The rows as they are now: a view, not a copy."""
        return self._native.view().view(self._dtype).reshape((-1,) + self._trailing)

    @property
    def dtype(self) -> _np.dtype[_typing.Any]:
        """The rows' dtype."""
        return self._dtype

    @property
    def give_back_sent(self) -> bool:
        """Whether redistributions give back the memory of the rows this rank
        sends as soon as they have left, by whole pages (default False: at the
        commit). A rank that keeps, sends and receives at once then holds its
        rows plus a few chunks, instead of its rows plus all it receives. The
        price: a redistribution that fails after rows left leaves this buffer
        only its rows that had not left, in order (the other ranks as usual);
        failures found before anything moves change nothing."""
        return bool(self._native.give_back_sent)

    @give_back_sent.setter
    def give_back_sent(self, on: bool) -> None:
        self._native.give_back_sent = bool(on)

    def __len__(self) -> int:
        return len(self._native)

    def __repr__(self) -> str:
        return f"<hetbal.mpi.ItemBuffer: {len(self)} rows of {self._dtype}, trailing shape {self._trailing}>"


@_typing.overload
def redistribute(
    comm: _MPI.Comm,
    array: ItemBuffer,
    plan: _Plan,
    *,
    fault: "_typing.Optional[tuple[int, _Fault]]" = None,
) -> ItemBuffer: ...


@_typing.overload
def redistribute(
    comm: _MPI.Comm,
    array: _npt.NDArray[_Scalar],
    plan: _Plan,
    *,
    fault: "_typing.Optional[tuple[int, _Fault]]" = None,
) -> _npt.NDArray[_Scalar]: ...


def redistribute(
    comm: _MPI.Comm,
    array: "_typing.Union[_npt.NDArray[_Scalar], ItemBuffer]",
    plan: _Plan,
    *,
    fault: "_typing.Optional[tuple[int, _Fault]]" = None,
) -> "_typing.Union[_npt.NDArray[_Scalar], ItemBuffer]":
    """Moves this rank's rows of `array` as `plan` (a ``hetbal.Plan`` for as
    many processors as `comm` has ranks) says. Collective.

    `array`'s first axis counts this rank's items: exactly the plan's load of
    this rank. Returns a new array of this rank's items afterwards (the plan's
    target), in the global order, with `array`'s dtype and trailing shape.
    `array` itself is never written.

    Memory: the rows are copied once, into an item buffer that grows in place
    to receive (the copied rows never move again, whichever side items arrive
    on); the returned array views that buffer, which it keeps alive, without
    another copy.

    Given an ``ItemBuffer`` instead, the rows move in place, without any copy
    of the rows this rank keeps, and the same ``ItemBuffer`` is returned (take
    its ``array`` again). Every rank passes an array, or every rank an
    ``ItemBuffer`` (the Python layer cannot check the other ranks': mixing
    them is an error on the ranks that disagree with the plan only).

    `fault=(rank, name)` makes one rank misbehave on purpose ("corrupt",
    "short" or "fail-before-commit"), to check that nothing is lost.

    Raises ``hetbal.InputError`` on every rank when any rank's arguments are
    wrong (nothing moved); ``RunError`` on every rank when the run fails (every
    rank keeps its array).
    """
    handle = _handle(comm)
    if isinstance(array, ItemBuffer):
        _native.mpi_redistribute_buffer(handle, plan, array._native, None, fault)
        return array
    rows, problem, restore = _prepare(array)
    data = _native.mpi_redistribute(handle, plan, rows, problem, fault)
    assert restore is not None  # else the call above raised InputError
    return restore(data)


def _as_counts(values: object, name: str) -> _npt.NDArray[_np.uint64]:
    """`values` as a contiguous 1-D uint64 array, or InputError naming `name`."""
    a = _np.asarray(values)
    if a.ndim != 1:
        raise InputError(f"{name}: a 1-D array of counts, not of shape {a.shape}")
    if a.size and a.dtype.kind not in "ui":
        raise InputError(f"{name}: integers, not {a.dtype}")
    if a.size and a.dtype.kind == "i" and int(a.min()) < 0:
        raise InputError(f"{name}: counts are never negative (found {int(a.min())})")
    return _np.ascontiguousarray(a, dtype=_np.uint64)


def redistribute_items(
    comm: _MPI.Comm,
    data: _npt.NDArray[_Scalar],
    offsets: _npt.ArrayLike,
    cuts: _npt.ArrayLike,
    *,
    fault: "_typing.Optional[tuple[int, _Fault]]" = None,
) -> tuple[_npt.NDArray[_Scalar], _npt.NDArray[_np.uint64]]:
    """Moves items of different sizes so that rank r holds items
    ``cuts[r]:cuts[r + 1]`` of the global order (the ranks' items, rank after
    rank). Collective.

    `data` is this rank's items one after another, a 1-D array of any dtype
    (structured too); `offsets` its ``k + 1`` offsets in elements of `data`
    (item i is ``data[offsets[i]:offsets[i + 1]]``; from 0, never decreasing,
    ending at ``len(data)``; items may be empty); `cuts` the ``p + 1`` global
    item indices, the same on every rank (from 0, never decreasing, ending at
    the total number of items; a rank may end with none). The items move
    along a chain (never from the last rank to the first), every check of
    ``redistribute`` made.

    Returns the new ``(data, offsets)``: this rank's items
    ``cuts[rank]:cuts[rank + 1]`` in order, `data`'s dtype kept, and their
    offsets (uint64, in elements). The arrays given are never written.

    Raises ``hetbal.InputError`` on every rank when any rank's arguments are
    wrong (nothing moved); ``RunError`` on every rank when the run fails.
    """
    handle = _handle(comm)
    items = _Items.of(data, offsets)
    cut: _typing.Optional[_npt.NDArray[_np.uint64]] = None
    if items.problem is None:
        try:
            cut = _as_counts(cuts, "cuts")
        except InputError as e:
            items.problem = str(e)
    new_data, new_offsets = _native.mpi_redistribute_items(
        handle, items.raw, items.dtype.itemsize, items.offsets, cut, items.problem, fault
    )
    return new_data.view(items.dtype), new_offsets


class _Items:
    """A rank's variable-size items as the extension takes them: the data's
    bytes, its dtype and the offsets (uint64), or what is wrong with them (every
    rank must hear of it: it goes to the agreement)."""

    def __init__(self) -> None:
        self.raw: _typing.Optional[_npt.NDArray[_np.uint8]] = None
        self.offsets: _typing.Optional[_npt.NDArray[_np.uint64]] = None
        self.dtype = _np.dtype(_np.uint8)
        self.problem: _typing.Optional[str] = None

    @staticmethod
    def of(data: object, offsets: object) -> "_Items":
        items = _Items()
        try:
            a = _np.asarray(data)
            if a.ndim != 1:
                raise InputError(f"data: a 1-D array of elements, not of shape {a.shape}")
            if a.dtype.hasobject:
                raise InputError(f"data: elements of dtype {a.dtype} hold Python objects, which cannot move")
            if a.dtype.itemsize == 0:
                raise InputError(f"data: elements of 0 bytes (dtype {a.dtype})")
            items.dtype = a.dtype
            items.raw = _np.ascontiguousarray(a).view(_np.uint8)
            items.offsets = _as_counts(offsets, "offsets")
        except Exception as e:
            items.problem = f"{e}" if isinstance(e, InputError) else f"data: {e}"
        return items


class Decision(_typing.NamedTuple):
    """What the balancer decided after an iteration (the same on every rank but
    `first` and `count`)."""

    #: The iteration just measured (from 1).
    iteration: int
    #: True when the items moved (the array returned is a new one).
    redistribute: bool
    #: The iteration time with the loads before: the slowest rank's compute.
    current_step: float
    #: The iteration time with the balanced loads, at the same speeds.
    balanced_step: float
    #: The predicted time of the move to the balanced loads, in seconds: its plan's
    #: makespan (0 when the loads are balanced already). With measured links, when a
    #: lower bound on that time already shows the move does not pay, the bound.
    redistribution_time: float
    #: The gain the policy predicted over the remaining iterations (None when it weighed none).
    predicted_gain: _typing.Optional[float]
    #: The global position of this rank's first item now.
    first: int
    #: This rank's items now.
    count: int  # type: ignore[assignment]  # (the field hides tuple.count)


class Balancer:
    """The balancer of an iterative application on `comm` (rank i is ring
    position i). Collective.

    After each iteration every rank calls ``step`` with its items and its
    compute time; the balancer gathers every rank's numbers, decides with its
    policy (by default the adaptive one, hetbal's best online policy) whether
    moving the data pays over the remaining iterations, and when it does moves
    the items to the balanced counts (order kept, nothing lost).

    Links: measured by the balancer itself (neighbour ping-pongs, a few
    milliseconds, at the first step, priced for that step's item size), or
    given: `c_succ[i]` / `c_pred[i]` seconds per item from rank i to i+1 / i-1
    (`c_succ` alone: items move towards successors only). Measured links have a
    start-up per message: the items then move as hetbal's plan with start-ups
    says (one message per planned transfer), the policy weighs each move at
    that plan's price, and a decision that moves gives that plan's makespan as
    ``redistribution_time``, as the Rust and C balancers do.

    `model`: how the decider models each rank's compute time, as
    ``hetbal.Decider``'s: "constant" (one time per item per rank, the
    default), "functional" (a piecewise-linear function of the rank's items,
    learned from every step: GPUs with launch overheads, shares that stop
    fitting in memory) or "monotone-cubic". "constant" stays the default
    because it is the library's default: the functional model is not
    documented as never worse (it spends up to 6 exploring moves learning,
    one more than the constant model on steady speeds in the guide's table,
    and the adaptive policy's speed model still learns from times per item);
    on memory cliffs, where the constant model moves after every step and
    never settles, choose "functional". Every rank passes the same model.

    `policy`: when to move, as ``hetbal.Decider``'s: "adaptive" (the
    default: learns how often the speeds change), "profitability" (move when
    the gain predicted over the remaining iterations repays the move),
    "never", or "fixed-N" (N moves evenly spaced over the run). An unknown
    name, or "offline-best" (it needs the future speeds), raises
    ``hetbal.InputError``. Every rank passes the same policy.

    The balancer decides at every ``step``. To decide every K iterations,
    call ``step`` after every K-th iteration only, with the mean compute time
    of those K iterations and `remaining` counted in decisions left
    (``examples/python/jacobi.py --every K`` does).

    `fault=(rank, name)`: one rank misbehaves on purpose in every
    redistribution (tests; see ``redistribute``).
    """

    def __init__(
        self,
        comm: _MPI.Comm,
        *,
        c_succ: "_typing.Optional[_Costs]" = None,
        c_pred: "_typing.Optional[_Costs]" = None,
        fault: "_typing.Optional[tuple[int, _Fault]]" = None,
        model: "_DeciderModel" = "constant",
        policy: "_DeciderPolicy" = "adaptive",
    ) -> None:
        self._native = _native._Balancer(_handle(comm), c_succ, c_pred, fault, model, policy)

    @_typing.overload
    def step(self, array: ItemBuffer, seconds: "_Cost", remaining: "_Count") -> tuple[ItemBuffer, Decision]: ...

    @_typing.overload
    def step(
        self, array: _npt.NDArray[_Scalar], seconds: "_Cost", remaining: "_Count"
    ) -> tuple[_npt.NDArray[_Scalar], Decision]: ...

    def step(
        self,
        array: "_typing.Union[_npt.NDArray[_Scalar], ItemBuffer]",
        seconds: "_Cost",
        remaining: "_Count",
    ) -> "tuple[_typing.Union[_npt.NDArray[_Scalar], ItemBuffer], Decision]":
        """One call per iteration, on every rank: `array` holds this rank's
        items (first axis), `seconds` is this rank's compute time in the
        iteration just run (exclude halo exchanges: with wall time every rank
        reports the slowest one's and nothing ever moves), `remaining` the
        iterations still to run.

        Returns ``(array, decision)``: `array` itself when nothing moved, else a
        new array of this rank's items (``decision.first`` is the global
        position of its first row). On failure (``RunError`` or
        ``hetbal.InputError``, on every rank) `array` is untouched and the
        balancer forgets the decision.

        Given an ``ItemBuffer``, the rows move in place (those this rank keeps
        never move) and the same buffer is returned: take its ``array`` again.
        Every rank passes an array, or every rank an ``ItemBuffer``.
        """
        if isinstance(array, ItemBuffer):
            decision = self._native.step_buffer(array._native, seconds, remaining)
            return array, Decision(**decision)
        rows, problem, restore = _prepare(array)
        data, decision = self._native.step(rows, seconds, remaining, problem)
        if data is None:
            return array, Decision(**decision)
        assert restore is not None  # else the call above raised InputError
        return restore(data), Decision(**decision)

    def close(self) -> None:
        """Frees the balancer's duplicate of the communicator (call it on every
        rank before MPI is finalised, or let the balancer be collected)."""
        self._native.close()

    def __enter__(self) -> "Balancer":
        return self

    def __exit__(self, *exc: object) -> _typing.Literal[False]:
        self.close()
        return False


class WeightedDecision(_typing.NamedTuple):
    """What the weighted balancer decided at a step (the same on every rank
    but `first` and `items`)."""

    #: True when the items moved.
    redistribute: bool
    #: The ``p + 1`` cuts after the step (global item indices).
    cuts: list[int]
    #: This rank's first global item index, and its items, after the step.
    first: int
    items: int
    #: The iteration time of the current cuts at the speeds learned (s).
    current_seconds: float
    #: That of the least-moving partition within the tolerance (s).
    balanced_seconds: float
    #: The least iteration time of any partition (s).
    optimum_seconds: float
    #: Items and bytes that change owner in that partition.
    moved_items: int
    moved_bytes: int
    #: The move's estimated time on the links, and the time it saves over
    #: the iterations left (s).
    move_seconds: float
    saved_seconds: float


class WeightedBalancer:
    """The balancer of an application whose items differ in cost and size
    (cells of a particle code, AMR blocks, sparse rows). Collective: every
    rank makes one and calls ``step`` at the same iterations.

    At each step it learns every rank's seconds per unit of weight, finds the
    optimal partition of the items' weights for those speeds and, among the
    partitions within ``1 + tolerance`` of it, the one moving the fewest
    bytes; it moves there when the time saved over the iterations left
    exceeds the move's time on the links (measured at the first step). The
    items move along a chain, as ``redistribute_items``, with their weights.

        balancer = hetbal.mpi.WeightedBalancer(MPI.COMM_WORLD, tolerance=0.05)
        data, offsets, weights, d = balancer.step(data, offsets, weights, seconds, remaining)

    `fault=(rank, name)` makes one rank spoil its first message on purpose
    (tests).
    """

    def __init__(
        self,
        comm: _MPI.Comm,
        *,
        tolerance: float = 0.05,
        fault: "_typing.Optional[tuple[int, _Fault]]" = None,
    ) -> None:
        self._native = _native._WeightedBalancer(_handle(comm), tolerance, fault)

    def step(
        self,
        data: _npt.NDArray[_Scalar],
        offsets: _npt.ArrayLike,
        weights: _npt.ArrayLike,
        seconds: float,
        remaining: int,
    ) -> tuple[_npt.NDArray[_Scalar], _npt.NDArray[_np.uint64], _npt.NDArray[_np.float64], WeightedDecision]:
        """After an iteration: `data` and `offsets` this rank's items (as
        ``redistribute_items``), `weights` each item's cost (finite, >= 0),
        `seconds` this rank's compute time in it, `remaining` the iterations
        still to run. Returns the items (data, offsets in elements, weights)
        after the step, new arrays when they moved, and the decision. The
        arrays given are never written.

        Raises ``hetbal.InputError`` on every rank when any rank's arguments
        are wrong, ``RunError`` when a move fails (every rank keeps its items).
        """
        items = _Items.of(data, offsets)
        w: _typing.Optional[_npt.NDArray[_np.float64]] = None
        if items.problem is None:
            try:
                w = _np.ascontiguousarray(weights, dtype=_np.float64)
                if w.ndim != 1:
                    raise InputError(f"weights: a 1-D array, not of shape {w.shape}")
            except (TypeError, ValueError) as e:
                items.problem = f"weights: {e}"
            except InputError as e:
                items.problem = str(e)
        moved, fields = self._native.step(
            items.raw, items.dtype.itemsize, items.offsets, w, seconds, remaining, items.problem
        )
        decision = WeightedDecision(**fields)
        if moved is None:
            assert items.offsets is not None and w is not None  # else step raised
            return _np.asarray(data), items.offsets, w, decision
        new_data, new_offsets, new_weights = moved
        return new_data.view(items.dtype), new_offsets, new_weights, decision

    def close(self) -> None:
        """Frees the balancer's duplicate of the communicator."""
        self._native.close()

    def __enter__(self) -> "WeightedBalancer":
        return self

    def __exit__(self, *exc: object) -> _typing.Literal[False]:
        self.close()
        return False
