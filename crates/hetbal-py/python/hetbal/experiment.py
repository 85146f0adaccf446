"""The papers' experiments, run by the library; each returns its table as rows
(a list of dicts, the rows of formats.md's "Experiment tables") that
``pandas.DataFrame(rows)`` takes directly.
"""

import json as _json
import typing as _typing

from . import _hetbal as _native
from ._hetbal import InputError

if _typing.TYPE_CHECKING:
    from ._hetbal import _Count, _Counts, _Costs

__all__ = ["ring_iterative"]


def ring_iterative(
    rings: "_Counts" = (8, 32),
    ratios: "_Costs" = (1, 2, 5, 10, 20, 50, 100),
    draws: "_Count" = 10,
    iterations: "_Count" = 100,
    items: "_Count" = 1000,
    border_items: "_Count" = 0,
    kind: _typing.Literal["bidirectional", "unidirectional"] = "bidirectional",
    spread: float = 3.0,
    seed: "_Count" = 2004,
    progress: _typing.Optional[_typing.Callable[[int, int], object]] = None,
) -> list[dict[str, _typing.Any]]:
    """The ring paper's section 7 study, as ``hetbal experiment ring-iterative``
    runs it (built-in engine, the paper's generated platform of 90 hosts; the
    defaults are the command's).

    An iterative application whose processors change speed twice (by a factor
    drawn log-uniformly in [1/spread, spread]) runs on rings of each size in
    ``rings``, under every policy: ``none``, ``fixed-1``, ``fixed-4``,
    ``fixed-9``, ``fixed-19`` (the paper's schemes), ``profitability``,
    ``adaptive`` and ``offline-best``, at every cost ratio of ``ratios`` (the
    cost of one redistribution over the time of one iteration), averaged over
    ``draws`` random draws. ``kind`` ("bidirectional" or "unidirectional") is
    the ring whose planner prices the redistributions; ``progress(done,
    total)``, if given, is called after each (ring, draw, ratio).

    Returns one dict per (ring, ratio, policy), in that order, with keys
    ``ring``, ``ratio``, ``policy``, ``redistributions`` (mean number that moved
    data), ``time`` (mean run time) and ``normalized_time`` (mean of time /
    time of ``none`` on the same draw).

    Raises ``InputError`` for a setting out of range (the message starts with
    the setting's name).
    """
    if not isinstance(kind, str):
        raise InputError(f"kind: 'bidirectional' or 'unidirectional', not {kind!r}")
    text = _native.ring_iterative_rows(
        rings, ratios, draws, iterations, items, border_items, kind, spread, seed, progress
    )
    rows: list[dict[str, _typing.Any]] = _json.loads(text)
    return rows
