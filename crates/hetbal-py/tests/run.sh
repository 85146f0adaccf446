#!/usr/bin/env bash
# Builds the Python package (crates/hetbal-py) with pip into a virtual
# environment of its own (.venv-test at the top of the clone; VENV overrides
# it), with numpy, mpi4py, pytest and pandas, and runs its tests: the planning
# and partition suites, the MPI suite on 4 ranks under mpirun, and the two
# examples. The `hetbal` binary, when built (cargo test does), checks that
# to_json() prints its bytes.
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
"$python" -m pip install -q --disable-pip-version-check maturin numpy mpi4py pytest pandas
# The one install command of the README, from the top of the clone.
(cd "$root" && "$python" -m pip install -q --disable-pip-version-check ./crates/hetbal-py)

cli=${CARGO_TARGET_DIR:-$root/target}/debug/hetbal
if [ -x "$cli" ]; then export HETBAL_CLI=$cli; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$python" -m pytest -q -p no:cacheprovider "$here/test_plan.py" "$here/test_partition.py"
timeout 600 mpirun -np 4 "$python" -m pytest -q --color=no -p no:cacheprovider "$here/test_mpi.py"
timeout 600 mpirun -np 4 "$python" "$root/examples/python/jacobi.py" 100000 100
"$python" "$root/examples/python/ring_iterative.py" --rings 8 --ratios 1,10,100 --draws 2 --out "$work/ring-iterative.svg"
