"""Types of the extension module hetbal._hetbal (src/*.rs), which the package
re-exports: the functions and classes of ``hetbal`` and the native part of
``hetbal.mpi``. Their documentation is in the module itself (``help()``).

What the functions take, as the module reads it:

- a count is an int or a numpy integer (anything with ``__index__``), never a
  float;
- counts are a sequence of counts or a 1-D numpy integer array;
- a cost or time is a real number (an int, a float, a numpy number);
- costs are a sequence of numbers or a 1-D numpy float or integer array.

The module refuses booleans, negative counts and the like at run time with
``InputError``: these types do not try to.
"""

from typing import (
    Any, Callable, Final, Iterable, Literal, Optional, Sequence, SupportsFloat, SupportsIndex,
    TypedDict, Union, final,
)

import numpy as np
import numpy.typing as npt

from ._partition import Partition

__all__ = [
    "Decider",
    "Decision",
    "GenBlockPlan",
    "InputError",
    "Plan",
    "PlanError",
    "RunError",
    "ScatterPlan",
    "WITH_MPI",
    "_Balancer",
    "_ItemBuffer",
    "_WeightedBalancer",
    "balance",
    "genblock_plan",
    "mpi_redistribute",
    "mpi_redistribute_buffer",
    "mpi_redistribute_items",
    "partition",
    "ring_iterative_rows",
    "ring_plan",
    "ring_plan_from_json",
    "scatter_plan",
]

_Count = SupportsIndex
_Counts = Union[npt.NDArray[np.integer[Any]], Iterable[SupportsIndex]]
_Cost = SupportsFloat
_Costs = Union[npt.NDArray[Union[np.floating[Any], np.integer[Any]]], Iterable[SupportsFloat]]
# What numpy.asarray makes a 1-D array of numbers of.
_Weights = Union[
    npt.NDArray[Union[np.floating[Any], np.integer[Any]]],
    Sequence[Union[float, np.floating[Any], np.integer[Any]]],
]

# The names the module accepts (an unknown one raises InputError listing them).
_RingAlgorithm = Literal[
    "unidirectional-homogeneous",
    "unidirectional-heterogeneous",
    "unidirectional-batched",
    "unidirectional-convoys",
    "bidirectional-blocks",
    "bidirectional-lemma9",
    "bidirectional-list",
    "bidirectional-segments",
    "exact-search",
    "system8",
    "paper-alg3",
    "startup-batches",
]
_RingKind = Literal["unidirectional", "bidirectional"]
_ScatterMethod = Literal["exact", "naive-dp", "lp", "linear"]
_ScatterOrder = Literal["best", "bandwidth", "given"]
_GenBlockMethod = Literal["best", "paper"]
_Fault = Literal["corrupt", "short", "fail-before-commit"]
_DeciderModel = Literal["functional", "monotone-cubic", "constant"]
# The library's online policies by name ("fixed-N": N redistributions evenly
# spaced over the run; "none" is "never").
_DeciderPolicy = Union[Literal["profitability", "adaptive", "never", "none"], str]

class InputError(ValueError):
    """A bad input; the message names the argument and the rule."""

class PlanError(RuntimeError):
    """An invalid schedule (the paper's Algorithm 3 can make one) or a bug."""

class RunError(RuntimeError):
    """A distributed operation that did not commit (hetbal.mpi.RunError)."""

# True when the module was built with the cargo feature `mpi` (then
# mpi_redistribute and _Balancer exist).
WITH_MPI: Final[bool]

def balance(
    total: _Count,
    seconds_per_item: Optional[_Costs] = None,
    *,
    points: Optional[Sequence[Union[Sequence[Sequence[float]], npt.NDArray[Any]]]] = None,
    model: Literal["piecewise-linear", "monotone-cubic"] = "piecewise-linear",
) -> tuple[npt.NDArray[np.uint64], float]: ...
def ring_plan(
    loads: _Counts,
    targets: _Counts,
    c_succ: _Costs,
    c_pred: Optional[_Costs] = None,
    algorithm: Optional[_RingAlgorithm] = None,
    *,
    l_succ: Optional[_Costs] = None,
    l_pred: Optional[_Costs] = None,
    path: bool = False,
) -> Plan: ...
def ring_plan_from_json(
    instance: Union[str, dict[str, Any]], algorithm: Optional[_RingAlgorithm] = None
) -> Plan: ...
def partition(
    weights: _Weights,
    seconds_per_unit: _Costs,
    current: Optional[_Counts] = None,
    tolerance: Optional[_Cost] = None,
    sizes: Optional[_Counts] = None,
) -> Partition: ...
def scatter_plan(
    items: _Count,
    root: _Count,
    comm: _Costs,
    comp: _Costs,
    method: Optional[_ScatterMethod] = None,
    order: Optional[_ScatterOrder] = None,
) -> ScatterPlan: ...
def genblock_plan(
    source: _Counts,
    target: _Counts,
    startup: _Cost,
    unit: _Cost,
    method: Optional[_GenBlockMethod] = None,
) -> GenBlockPlan: ...
def ring_iterative_rows(
    rings: _Counts,
    ratios: _Costs,
    draws: _Count,
    iterations: _Count,
    items: _Count,
    border_items: _Count,
    kind: str,
    spread: _Cost,
    seed: _Count,
    progress: Optional[Callable[[int, int], object]] = None,
) -> str: ...
@final
class Plan:
    """A ring redistribution plan (from ring_plan)."""

    @property
    def makespan(self) -> float: ...
    @property
    def lower_bound(self) -> float: ...
    @property
    def optimal(self) -> bool: ...
    @property
    def algorithm(self) -> str: ...
    @property
    def ring(self) -> _RingKind: ...
    @property
    def light(self) -> bool: ...
    @property
    def loads(self) -> npt.NDArray[np.uint64]: ...
    @property
    def targets(self) -> npt.NDArray[np.uint64]: ...
    @property
    def firsts(self) -> npt.NDArray[np.uint64]: ...
    # Fields from, to (int64), items (uint64), start, end, period (float64).
    @property
    def transfers(self) -> npt.NDArray[np.void]: ...
    # Fields from, to (int64), items (uint64).
    @property
    def flows(self) -> npt.NDArray[np.void]: ...
    def instance_json(self) -> str: ...
    def to_json(self) -> str: ...
    def _repr_svg_(self) -> Optional[str]: ...

@final
class ScatterPlan:
    """A scatter plan (from scatter_plan)."""

    @property
    def method(self) -> _ScatterMethod: ...
    @property
    def order(self) -> npt.NDArray[np.int64]: ...
    @property
    def counts(self) -> npt.NDArray[np.uint64]: ...
    @property
    def displacements(self) -> npt.NDArray[np.uint64]: ...
    @property
    def counts_by_processor(self) -> npt.NDArray[np.uint64]: ...
    @property
    def displacements_by_processor(self) -> npt.NDArray[np.uint64]: ...
    @property
    def finish_times(self) -> npt.NDArray[np.float64]: ...
    @property
    def makespan(self) -> float: ...
    @property
    def lower_bound(self) -> float: ...
    @property
    def optimal_for_order(self) -> bool: ...
    def to_json(self) -> str: ...
    def _repr_svg_(self) -> Optional[str]: ...

@final
class GenBlockPlan:
    """A GEN_BLOCK plan (from genblock_plan)."""

    @property
    def method(self) -> _GenBlockMethod: ...
    # Fields step, from, to (int64), size (uint64).
    @property
    def steps(self) -> npt.NDArray[np.void]: ...
    @property
    def step_count(self) -> int: ...
    @property
    def cost(self) -> float: ...
    @property
    def lower_bound(self) -> float: ...
    @property
    def degree(self) -> int: ...
    @property
    def plain_cost(self) -> float: ...
    @property
    def paper_cost(self) -> float: ...
    @property
    def paper_bound(self) -> float: ...
    def to_json(self) -> str: ...
    def _repr_svg_(self) -> Optional[str]: ...

@final
class Decider:
    """Decides after every iteration of a running code whether moving its
    data pays, and where to: hetbal's online decider
    (hetbal::iterative::online::Decider), without MPI. Feed it every
    processor's items and compute seconds after each iteration (gathered as
    the code likes); it answers with a ``Decision``. It moves nothing: when
    ``d.redistribute``, move the items to ``d.targets`` (``d.flows`` says how
    many cross each link of the ring) and pass those loads next time.

    - `c_succ[i]`, `c_pred[i]`: seconds per item from processor i to i+1 and
      to i-1 (`c_pred` None: items move clockwise only);
    - `policy`: "profitability" (move when the gain predicted over the
      remaining iterations repays the move), "adaptive" (learns how often the
      speeds change), "never", or "fixed-N" (N moves evenly spaced);
    - `model`: "functional" (each processor's time learned as a piecewise
      linear function of its load: GPUs with launch overheads, memory
      cliffs; it does not move on a gain within the measured noise),
      "monotone-cubic" (the same with monotone cubic interpolation) or
      "constant" (one time per item per processor: the library's default).

    Time the compute phase only: with wall time every processor reports the
    slowest one's and nothing ever moves. Bad input (lengths, NaN or
    non-positive seconds, a load of 0, unknown names) raises ``InputError``
    with the library's message.

    >>> import hetbal
    >>> dec = hetbal.Decider([1e-3, 1e-3], [1e-3, 1e-3], model="constant")
    >>> d = dec.observe([50, 50], [0.5, 1.0], 100)
    >>> d.redistribute, d.targets.tolist()
    (True, [67, 33])
    """

    def __new__(
        cls,
        c_succ: _Costs,
        c_pred: Optional[_Costs] = None,
        *,
        policy: _DeciderPolicy = "profitability",
        model: _DeciderModel = "functional",
    ) -> Decider: ...
    def observe(self, loads: _Counts, seconds: _Costs, remaining: _Count) -> Decision:
        """Decides after one more iteration: `loads[i]` items (>= 1) and
        `seconds[i]` compute seconds (> 0) of processor i in it, `remaining`
        iterations still to run (0: nothing moves)."""
    @property
    def policy(self) -> str: ...
    @property
    def model(self) -> _DeciderModel: ...
    @property
    def iterations(self) -> int: ...

@final
class Decision:
    """What a Decider decided after one iteration (the library's Decision)."""

    # The iteration just measured (from 1).
    @property
    def iteration(self) -> int: ...
    # True when the items should move to `targets`.
    @property
    def redistribute(self) -> bool: ...
    # The iteration time with the current loads and with the balanced targets
    # (the slowest processor's predicted compute), in seconds.
    @property
    def current_step(self) -> float: ...
    @property
    def balanced_step(self) -> float: ...
    # The move's predicted time (its plan's makespan; 0 when nothing would move).
    @property
    def redistribution_time(self) -> float: ...
    # True when redistribution_time is a plan's makespan (not a lower bound).
    @property
    def planned(self) -> bool: ...
    # The gain the policy predicted over the remaining iterations, if it weighed one.
    @property
    def predicted_gain(self) -> Optional[float]: ...
    # Items per processor before, and after the decision (the loads when it stays).
    @property
    def loads(self) -> npt.NDArray[np.uint64]: ...
    @property
    def targets(self) -> npt.NDArray[np.uint64]: ...
    # The net flow on each link (i, i+1), positive clockwise (all 0 when it stays).
    @property
    def flows(self) -> list[int]: ...
    # The global position of each processor's first item once carried out.
    @property
    def firsts(self) -> npt.NDArray[np.uint64]: ...

# The native part of hetbal.mpi (with WITH_MPI only). `comm` is mpi4py's handle
# of a communicator (MPI._handleof), `rows` a C-contiguous (count, item_bytes)
# uint8 array, or None with `problem` saying what is wrong with the caller's.

def mpi_redistribute(
    comm: int,
    plan: Plan,
    rows: Optional[npt.NDArray[np.uint8]],
    problem: Optional[str] = None,
    fault: Optional[tuple[int, _Fault]] = None,
) -> npt.NDArray[np.uint8]: ...
def mpi_redistribute_buffer(
    comm: int,
    plan: Plan,
    buffer: _ItemBuffer,
    problem: Optional[str] = None,
    fault: Optional[tuple[int, _Fault]] = None,
) -> None: ...

@final
class _ItemBuffer:
    """Rows in memory that grows in place (hetbal.mpi.ItemBuffer wraps it)."""

    def __new__(cls, rows: npt.NDArray[np.uint8]) -> _ItemBuffer: ...
    @property
    def item_bytes(self) -> int: ...
    @property
    def give_back_sent(self) -> bool: ...
    @give_back_sent.setter
    def give_back_sent(self, on: bool) -> None: ...
    def __len__(self) -> int: ...
    def view(self) -> npt.NDArray[np.uint8]: ...

def mpi_redistribute_items(
    comm: int,
    data: Optional[npt.NDArray[np.uint8]],
    element_bytes: int,
    offsets: Optional[npt.NDArray[np.uint64]],
    cuts: Optional[npt.NDArray[np.uint64]],
    problem: Optional[str] = None,
    fault: Optional[tuple[int, _Fault]] = None,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint64]]: ...

class _WeightedFields(TypedDict):
    """The fields of hetbal.mpi.WeightedDecision."""

    redistribute: bool
    cuts: list[int]
    first: int
    items: int
    current_seconds: float
    balanced_seconds: float
    optimum_seconds: float
    moved_items: int
    moved_bytes: int
    move_seconds: float
    saved_seconds: float

@final
class _WeightedBalancer:
    """The weighted balancer (hetbal.mpi.WeightedBalancer wraps it)."""

    def __new__(
        cls, comm: int, tolerance: float = 0.05, fault: Optional[tuple[int, _Fault]] = None
    ) -> _WeightedBalancer: ...
    def step(
        self,
        data: Optional[npt.NDArray[np.uint8]],
        element_bytes: int,
        offsets: Optional[npt.NDArray[np.uint64]],
        weights: Optional[npt.NDArray[np.float64]],
        seconds: float,
        remaining: int,
        problem: Optional[str] = None,
    ) -> tuple[
        Optional[tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint64], npt.NDArray[np.float64]]],
        _WeightedFields,
    ]: ...
    def close(self) -> None: ...

class _DecisionFields(TypedDict):
    """The fields of hetbal.mpi.Decision."""

    iteration: int
    redistribute: bool
    current_step: float
    balanced_step: float
    redistribution_time: float
    predicted_gain: Optional[float]
    first: int
    count: int

@final
class _Balancer:
    """The balancer of an iterative application (hetbal.mpi.Balancer wraps it)."""

    def __new__(
        cls,
        comm: int,
        c_succ: Optional[_Costs] = None,
        c_pred: Optional[_Costs] = None,
        fault: Optional[tuple[int, _Fault]] = None,
        model: _DeciderModel = "constant",
        policy: _DeciderPolicy = "adaptive",
    ) -> _Balancer: ...
    def step(
        self,
        rows: Optional[npt.NDArray[np.uint8]],
        seconds: _Cost,
        remaining: _Count,
        problem: Optional[str] = None,
    ) -> tuple[Optional[npt.NDArray[np.uint8]], _DecisionFields]: ...
    def step_buffer(self, buffer: _ItemBuffer, seconds: _Cost, remaining: _Count) -> _DecisionFields: ...
    def close(self) -> None: ...
