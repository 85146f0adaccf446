"""hetbal.Partition, the result of hetbal.partition (made by the extension
module, which imports this class)."""

from typing import TYPE_CHECKING, Any, Iterable, Optional

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    # For type checkers, the tuple's two items: the cuts and the bottleneck.
    _Pair = tuple[npt.NDArray[np.uint64], float]
else:
    _Pair = tuple


class Partition(_Pair):
    """A partition of items over processors (from ``hetbal.partition``): a tuple
    ``(cuts, bottleneck)``, so that ``cuts, bottleneck = hetbal.partition(...)``
    works, with more attributes.

    - ``cuts``: numpy uint64, p + 1 item indices from 0 to n: processor j holds
      the items ``cuts[j]:cuts[j+1]``;
    - ``bottleneck``: the largest processor time under these cuts;
    - ``times``: each processor's time (numpy float64);
    - ``lower_bound``: no partition has a smaller bottleneck;
    - ``optimal``: these cuts are proven of least bottleneck
      (``bottleneck <= lower_bound``);
    - ``optimal_bottleneck``: the least bottleneck of any partition;
    - ``probes``: the probes the exact search made;
    - with ``current`` (else None): ``moved_bytes`` and ``moved_items`` (what
      changes owner from ``current``), ``limit`` (``optimal_bottleneck * (1 +
      tolerance)``, which no time exceeds) and ``optimal_cuts`` (the cuts of
      the plain optimum).

    >>> import hetbal
    >>> p = hetbal.partition([3.0, 1.0, 2.0, 2.0], [1.0, 100.0, 1.0])
    >>> p
    <hetbal.Partition: 4 items on 3 processors, bottleneck 4.0 (optimal), cuts [0, 2, 2, 4]>
    >>> cuts, bottleneck = p
    >>> cuts.tolist(), bottleneck, p.times.tolist()
    ([0, 2, 2, 4], 4.0, [4.0, 0.0, 4.0])
    """

    # Set by hetbal.partition on each instance (see above).
    times: npt.NDArray[np.float64]
    lower_bound: float
    optimal: bool
    optimal_bottleneck: float
    probes: int
    moved_bytes: Optional[int]
    moved_items: Optional[int]
    limit: Optional[float]
    optimal_cuts: Optional[npt.NDArray[np.uint64]]

    def __new__(cls, cuts_and_bottleneck: Iterable[Any] = (), **fields: Any) -> "Partition":
        self = super().__new__(cls, cuts_and_bottleneck)
        self.__dict__.update(fields)
        return self

    @property
    def cuts(self) -> npt.NDArray[np.uint64]:
        """p + 1 item indices (numpy uint64): processor j holds cuts[j]:cuts[j+1]."""
        return self[0]

    @property
    def bottleneck(self) -> float:
        """The largest processor time under the cuts."""
        return self[1]

    def __repr__(self) -> str:
        cuts, bottleneck = self
        items = int(cuts[-1]) if len(cuts) else 0
        text = f"<hetbal.Partition: {items} items on {len(cuts) - 1} processors, bottleneck {bottleneck!r}"
        moved = getattr(self, "moved_bytes", None)
        if moved is None:
            if getattr(self, "optimal", False):
                text += " (optimal)"
            else:
                text += f" (lower bound {getattr(self, 'lower_bound', None)!r})"
        else:
            text += (f" within limit {self.limit!r} (optimal {self.optimal_bottleneck!r}), "
                     f"moved {moved} bytes ({self.moved_items} items)")
        shown = np.array2string(np.asarray(cuts), separator=", ", threshold=12, edgeitems=3)
        return f"{text}, cuts {shown}>"


Partition.__module__ = "hetbal"
