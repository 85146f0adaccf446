"""hetbal: balance data-parallel work on heterogeneous processors, and move the
data there as fast as the network allows.

A thin layer over the Rust library (every algorithm is the library's):

>>> import hetbal
>>> targets, iteration_time = hetbal.balance(12, [1.0, 2.0, 2.0])
>>> targets.tolist(), iteration_time
([6, 3, 3], 6.0)
>>> plan = hetbal.ring_plan([2, 2, 8], targets, [1.0, 1.0, 1.0])
>>> plan.makespan, plan.lower_bound, plan.optimal, plan.algorithm
(5.0, 5.0, True, 'unidirectional-homogeneous')
>>> plan.transfers["items"].tolist()
[1, 5]
>>> cuts, bottleneck = hetbal.partition([1, 2, 3, 4, 5, 6], [1.0, 2.0])
>>> cuts.tolist(), bottleneck
([0, 5, 6], 15.0)

- ``balance(total, seconds_per_item)``: the exact integer split that makes the
  slowest processor finish first; ``(targets, iteration_time)``. With
  ``points=`` instead, each processor's measured ``(load, seconds)`` pairs
  (speeds that depend on the load: a GPU, a memory cliff).
- ``partition(weights, seconds_per_unit, current=None, tolerance=None,
  sizes=None)``: items of unequal weight cut into contiguous ranges, one per
  processor, with the least bottleneck (exact), or with ``current`` the
  partition within ``1 + tolerance`` of it that moves the fewest bytes; a
  ``Partition``, the tuple ``(cuts, bottleneck)`` with ``lower_bound``,
  ``optimal``, ``times``... The weights (a numpy array of float64, float32,
  int64, uint64, int32 or uint32) are read in place, without a copy.
- ``ring_plan(loads, targets, c_succ, c_pred=None, algorithm=None, *,
  l_succ=None, l_pred=None, path=False)``: the fastest redistribution on a
  ring of processors (loads and targets may be 0; with a start-up per message
  where ``l_succ``/``l_pred`` give one; with ``path=True`` no item crosses the
  link between the last processor and the first), as a ``Plan``: ``makespan``,
  ``lower_bound``, ``optimal``, ``algorithm``, ``transfers`` and ``flows``
  (numpy structured arrays), ``to_json()`` (the plan document of formats.md,
  as ``hetbal ring plan --json`` prints it), ``instance_json()``; in Jupyter
  its Gantt chart. ``ring_plan_from_json(instance)`` plans an instance
  document of formats.md (what ``hetbal ring plan`` reads).
- ``scatter_plan(items, root, comm, comp, method=None, order=None)``: a
  load-balanced scatter from `root` (the counts and displacements of
  MPI_Scatterv, the sending order, finish times), as a ``ScatterPlan``.
- ``genblock_plan(source, target, startup, unit, method=None)``: a GEN_BLOCK
  redistribution (an array's blocks resized) in communication steps, as a
  ``GenBlockPlan``.
- ``Decider(c_succ, c_pred=None, *, policy="profitability",
  model="functional")``: hetbal's run-time decider without MPI, for codes
  that gather the numbers and move the data themselves: ``d =
  dec.observe(loads, seconds, remaining)`` says whether moving pays
  (``d.redistribute``) and where to (``d.targets``, a uint64 array), with
  the predicted steps, the move's time and the gain. ``model="functional"``
  learns each processor's time as a function of its load (memory cliffs,
  GPU overheads); ``"constant"`` is one time per item.
- ``hetbal.experiment``: the papers' experiments, as rows ``pandas.DataFrame``
  takes.
- ``hetbal.mpi`` (built with MPI): ring redistributions of numpy arrays and the
  balancer of iterative applications on mpi4py communicators.
- ``__version__``: the version of the installed distribution.

Counts (loads, targets, totals) are integers in 0..2^64: ints, numpy integers
or numpy integer arrays, never floats. Every bad input raises ``InputError``
(a ``ValueError``) with the message of the ``hetbal`` command.
"""

from ._hetbal import (
    Decider, Decision, GenBlockPlan, InputError, Plan, PlanError, ScatterPlan, balance,
    genblock_plan, partition, ring_plan, ring_plan_from_json, scatter_plan,
)
from ._partition import Partition
from . import experiment


def _installed_version() -> str:
    """The version of the installed distribution ``hetbal``, or "0+unknown" for
    sources imported without installing them."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hetbal")
    except PackageNotFoundError:
        return "0+unknown"


__version__: str = _installed_version()
del _installed_version

__all__ = [
    "Decider", "Decision", "GenBlockPlan", "InputError", "Partition", "Plan", "PlanError",
    "ScatterPlan", "balance", "experiment", "genblock_plan", "partition", "ring_plan", "ring_plan_from_json", "scatter_plan",
]
