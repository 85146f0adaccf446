"""The MPI runtime of hetbal on mpi4py communicators (the package built with
the cargo feature ``mpi``, its default).

    from mpi4py import MPI
    import hetbal, hetbal.mpi
    new_array = hetbal.mpi.redistribute(MPI.COMM_WORLD, array, plan)
    balancer = hetbal.mpi.Balancer(MPI.COMM_WORLD)
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
array, it returns a new one.
"""

# The implementation's imports go by private names: the module's namespace
# (dir(hetbal.mpi)) holds its API.
import typing as _typing

import numpy as _np
import numpy.typing as _npt

from . import _hetbal as _native
from ._hetbal import InputError, Plan as _Plan, RunError

if _typing.TYPE_CHECKING:
    from ._hetbal import _Costs, _Count, _Cost, _Fault

if not _native.WITH_MPI:
    raise ImportError(
        "hetbal was built without MPI (cargo feature `mpi`): reinstall it on a "
        "machine with an MPI library (OpenMPI or MPICH) and libclang"
    )

from mpi4py import MPI as _MPI  # noqa: E402  (initialises MPI)

__all__ = ["Balancer", "Decision", "InputError", "RunError", "redistribute"]

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


def redistribute(
    comm: _MPI.Comm,
    array: _npt.NDArray[_Scalar],
    plan: _Plan,
    *,
    fault: "_typing.Optional[tuple[int, _Fault]]" = None,
) -> _npt.NDArray[_Scalar]:
    """Moves this rank's rows of `array` as `plan` (a ``hetbal.Plan`` for as
    many processors as `comm` has ranks) says. Collective.

    `array`'s first axis counts this rank's items: exactly the plan's load of
    this rank. Returns a new array of this rank's items afterwards (the plan's
    target), in the global order, with `array`'s dtype and trailing shape.
    `array` itself is never written.

    Memory: the rows are copied once, into the buffer the runtime grows in
    place to receive (with room for what arrives from both neighbours); that
    buffer becomes the returned array without another copy.

    `fault=(rank, name)` makes one rank misbehave on purpose ("corrupt",
    "short" or "fail-before-commit"), to check that nothing is lost.

    Raises ``hetbal.InputError`` on every rank when any rank's arguments are
    wrong (nothing moved); ``RunError`` on every rank when the run fails (every
    rank keeps its array).
    """
    handle = _handle(comm)
    rows, problem, restore = _prepare(array)
    data = _native.mpi_redistribute(handle, plan, rows, problem, fault)
    assert restore is not None  # else the call above raised InputError
    return restore(data)


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
    compute time; the balancer gathers every rank's numbers, decides with the
    adaptive policy (hetbal's best online policy) whether moving the data pays
    over the remaining iterations, and when it does moves the items to the
    balanced counts (order kept, nothing lost).

    Links: measured by the balancer itself (neighbour ping-pongs, a few
    milliseconds, at the first step, priced for that step's item size), or
    given: `c_succ[i]` / `c_pred[i]` seconds per item from rank i to i+1 / i-1
    (`c_succ` alone: items move towards successors only). Measured links have a
    start-up per message: the items then move as hetbal's plan with start-ups
    says (one message per planned transfer), the policy weighs each move at
    that plan's price, and a decision that moves gives that plan's makespan as
    ``redistribution_time``, as the Rust and C balancers do.

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
    ) -> None:
        self._native = _native._Balancer(_handle(comm), c_succ, c_pred, fault)

    def step(
        self, array: _npt.NDArray[_Scalar], seconds: "_Cost", remaining: "_Count"
    ) -> tuple[_npt.NDArray[_Scalar], Decision]:
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
        """
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
