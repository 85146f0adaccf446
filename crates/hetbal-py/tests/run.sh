#!/usr/bin/env bash
# Builds the Python package (crates/hetbal-py) with pip into a virtual
# environment of its own (.venv-test at the top of the clone; VENV overrides
# it), with numpy, mpi4py, pytest, pandas and mypy, and runs its tests: the
# types it ships (stubtest, mypy --strict), the planning and partition suites,
# the MPI suite on 4 ranks under mpirun, and the three examples (the Jacobi
# one also deciding every 5 iterations, and on a memory cliff where the
# functional model must settle and the constant one keep moving). The `hetbal`
# binary, when built (cargo test does), checks that to_json() prints its bytes.
set -euo pipefail
# mpirun as root (containers, CI) and more ranks than cores, as test.sh.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
venv=${VENV:-$root/.venv-test}
python=$venv/bin/python
if ! "$python" -c 'import sys; assert sys.version_info >= (3, 9)' 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv" || {
        echo "run.sh: cannot create a virtual environment (on Debian: apt-get install python3-venv)" >&2
        exit 1
    }
fi
"$python" -m pip install -q --disable-pip-version-check maturin numpy mpi4py pytest pandas mypy
# The one install command of the README, from the top of the clone, with the
# build machine's paths (its cargo home and this clone, as panic locations in
# the crates the extension uses) remapped: cargo has no stable way to trim them
# yet (`trim-paths`), so the build says so with RUSTFLAGS (as the guide's
# Interfaces chapter shows for wheels to share), and the installed extension is
# checked for them.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
remap="--remap-path-prefix=$cargo_home=/cargo --remap-path-prefix=$root=/hetbal"
(cd "$root" && RUSTFLAGS="${RUSTFLAGS:-} $remap" \
    "$python" -m pip install -q --disable-pip-version-check ./crates/hetbal-py)
extension=$("$python" -c 'import hetbal._hetbal as m; print(m.__file__)')
for path in "$cargo_home" "$root"; do
    if grep -q -a -F "$path/" "$extension"; then
        echo "run.sh: $extension holds the build machine's path $path" >&2
        exit 1
    fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# The types the package ships (py.typed, python/hetbal/_hetbal.pyi), checked on
# the installed package: the stubs match the extension module (every name,
# signature and class; the allowlist says what stubtest cannot match, and why),
# and the package and a typed use of its API pass mypy --strict. The
# "type: ignore" lines must stay errors: --strict reports an ignore not needed.
"$python" -m mypy.stubtest hetbal --allowlist "$here/stubtest-allowlist.txt"
"$python" -m mypy --strict -p hetbal
cat >"$work/typed_use.py" <<'PY'
import typing

import numpy as np
import numpy.typing as npt
from mpi4py import MPI

import hetbal
import hetbal.mpi

version: str = hetbal.__version__
targets, iteration_time = hetbal.balance(12, np.array([1.0, 2.0, 2.0]))
plan = hetbal.ring_plan([2, 2, 8], targets, [1.0, 1.0, 1.0], algorithm="unidirectional-homogeneous")
makespan: float = plan.makespan
cuts, bottleneck = hetbal.partition(np.arange(6, dtype=np.uint32), [1.0, 2.0], current=[0, 3, 6])
times: npt.NDArray[np.float64] = hetbal.partition([1.0, 2.0], [1.0]).times
counts: npt.NDArray[np.uint64] = hetbal.scatter_plan(10, 0, [0.0, 1.0], [1.0, 1.0], order="given").counts
cost: float = hetbal.genblock_plan([4, 4], [2, 6], 1.0, 0.1).cost
rows = hetbal.experiment.ring_iterative(rings=[8], ratios=[1.0], draws=np.uint64(1))
hetbal.balance(12.0, [1.0])  # type: ignore[arg-type]  # a count is never a float
hetbal.ring_plan([1], [1], [1.0], algorithm="fastest")  # type: ignore[arg-type]
with hetbal.mpi.Balancer(MPI.COMM_WORLD, c_succ=np.ones(4), policy="fixed-2") as balancer:
    cells: npt.NDArray[np.float64] = np.zeros(8)
    cells, decision = balancer.step(cells, 0.1, 10)
    first: int = decision.first
    cells = hetbal.mpi.redistribute(MPI.COMM_WORLD, cells, plan)
    kept = hetbal.mpi.ItemBuffer(cells)
    kept = hetbal.mpi.redistribute(MPI.COMM_WORLD, kept, plan)
    view: npt.NDArray[typing.Any] = kept.array
    hetbal.mpi.redistribute(MPI.COMM_WORLD, kept, plan).array.sum()
    kept, decision = balancer.step(kept, 0.1, 9)
decider = hetbal.Decider([1e-3, 1e-3], policy="adaptive", model="monotone-cubic")
decided = decider.observe([50, 50], [0.5, 1.0], 10)
moving: bool = decided.redistribute
aimed: npt.NDArray[np.uint64] = decided.targets
gain: "typing.Optional[float]" = decided.predicted_gain
hetbal.Decider([1e-3], model="linear")  # type: ignore[arg-type]
PY
"$python" -m mypy --strict "$work/typed_use.py"
# The names the stubs' Literal types allow (algorithms, methods, orders, ring
# kinds) are those the module accepts: the ones it lists for an unknown name.
# (The fault names of hetbal.mpi would need a collective call: not checked.)
"$python" - <<'PY'
import ast, pathlib, re

import hetbal
from hetbal import _hetbal

stub = ast.parse(pathlib.Path(_hetbal.__file__).with_name("_hetbal.pyi").read_text())
allowed = {
    node.targets[0].id: {e.value for e in node.value.slice.elts}
    for node in stub.body
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript)
    and getattr(node.value.value, "id", None) == "Literal"
}
calls = {
    "_RingAlgorithm": lambda: hetbal.ring_plan([1, 1], [1, 1], [1.0, 1.0], algorithm="?"),
    "_ScatterMethod": lambda: hetbal.scatter_plan(1, 0, [0.0], [1.0], method="?"),
    "_ScatterOrder": lambda: hetbal.scatter_plan(1, 0, [0.0], [1.0], order="?"),
    "_GenBlockMethod": lambda: hetbal.genblock_plan([1], [1], 0.0, 0.0, method="?"),
    "_DeciderModel": lambda: hetbal.Decider([1.0], model="?"),
    "_RingKind": lambda: _hetbal.ring_iterative_rows([8], [1.0], 1, 1, 1, 0, "?", 3.0, 1),
}
for alias, call in calls.items():
    try:
        call()
    except hetbal.InputError as e:
        accepted = set(re.search(r"choose one of (.*)$", str(e)).group(1).split(", "))
    else:
        raise AssertionError(f"{alias}: an unknown name was accepted")
    assert allowed[alias] == accepted, f"{alias} allows {sorted(allowed[alias])}, the module {sorted(accepted)}"
PY

cli=${CARGO_TARGET_DIR:-$root/target}/debug/hetbal
if [ -x "$cli" ]; then export HETBAL_CLI=$cli; fi
"$python" -m pytest -q -p no:cacheprovider "$here/test_plan.py" "$here/test_partition.py" "$here/test_decider.py"
timeout 600 mpirun -np 4 "$python" -m pytest -q --color=no -p no:cacheprovider "$here/test_mpi.py"
timeout 600 mpirun -np 4 "$python" "$root/examples/python/jacobi.py" 100000 100
# Deciding every 5 iterations: the cells still the single-rank run's (the
# example exits 1 otherwise).
timeout 600 mpirun -np 4 "$python" "$root/examples/python/jacobi.py" 100000 100 --every 5
# A memory cliff, as crates/hetbal-c/tests/run.sh's for C and Fortran with ten
# times fewer cells (rank 0 ten times slower per cell past 120,000 of 400,000;
# emulated costs, so that the timing noise does not decide; 1.5 and 3 s): the
# functional model settles (at most 6 moves, none after iteration 20), the
# constant one keeps moving (more than 20 moves). Measured: 4 moves, the last
# after iteration 4, against 99.
cliff() { # MODEL: sets `moves` and `last` from the summary line
    timeout 600 mpirun -np 4 "$python" "$root/examples/python/jacobi.py" 400000 100 --cliff 120000 \
        --policy profitability --emulate 1e-9 --model "$1" >"$work/cliff.txt"
    cat "$work/cliff.txt" >&2
    local summary
    summary=$(sed -n 's/^jacobi: \([0-9]*\) moves, the last after iteration \([0-9]*\);.*/\1 \2/p' \
        "$work/cliff.txt")
    if [ -z "$summary" ]; then
        echo "run.sh: jacobi.py --cliff --model $1 printed no summary line" >&2
        exit 1
    fi
    read -r moves last <<<"$summary"
}
cliff functional
if [ "$moves" -gt 6 ] || [ "$last" -gt 20 ]; then
    echo "run.sh: jacobi.py --cliff, functional model: $moves moves, the last after iteration $last" >&2
    exit 1
fi
cliff constant
if [ "$moves" -le 20 ]; then
    echo "run.sh: jacobi.py --cliff, constant model: $moves moves (no oscillation?)" >&2
    exit 1
fi
# A wrong option: a message and exit status 2.
status=0
mpirun -np 4 "$python" "$root/examples/python/jacobi.py" --policy sometimes 2>"$work/usage.txt" || status=$?
if [ "$status" -ne 2 ] || ! grep -q 'unknown policy "sometimes"' "$work/usage.txt"; then
    echo "run.sh: jacobi.py --policy sometimes: exit status $status" >&2
    cat "$work/usage.txt" >&2
    exit 1
fi
# The particle code: three strategies, every one's particles the same as one
# rank's (the example exits 1 otherwise).
timeout 600 mpirun -np 4 "$python" "$root/examples/python/particles.py" 20000 12 32
"$python" "$root/examples/python/ring_iterative.py" --rings 8 --ratios 1,10,100 --draws 2 --out "$work/ring-iterative.svg"
