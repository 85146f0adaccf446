#!/usr/bin/env bash
# Checks formatting (rustfmt), lints (clippy, warnings as errors) and the API
# documentation (rustdoc, warnings as errors), then runs every test of hetbal:
# unit, property, exhaustive, CLI, MPI and documentation tests (the Rust
# examples of the README and of the user guide among them), the C and Fortran
# interface (crates/hetbal-c: installed into a temporary prefix, its
# tests and examples built with mpicc and mpif90), the Python package
# (crates/hetbal-py: pip installs it into a virtual environment of its own,
# .venv-test, with numpy, mpi4py and pytest from PyPI), then every example of the
# README and of the user guide (docs/guide/run-examples.py: shell sessions, C,
# Fortran and Python programs; it draws the guide's plots) and builds the guide
# with mdBook into target/guide (mdBook is installed with cargo when missing). The
# MPI crate (crates/hetbal-mpi) needs OpenMPI and libclang (for the MPI
# bindings), the SimGrid crate (crates/hetbal-simgrid, `hetbal replay`) needs
# SimGrid 3.32 or later (libsimgrid-dev); on Debian and Ubuntu they are installed
# here when missing, with gfortran and pkg-config.
set -euo pipefail
cd "$(dirname "$0")"

if command -v dpkg >/dev/null 2>&1; then
    missing=()
    for package in libopenmpi-dev openmpi-bin libclang-dev libsimgrid-dev gfortran pkg-config; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    if ((${#missing[@]})); then
        echo "test.sh: installing ${missing[*]} for the MPI, SimGrid, C and Fortran tests" >&2
        sudo=""
        if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
elif ! command -v mpicc >/dev/null 2>&1; then
    echo "test.sh: the MPI tests need an MPI library (OpenMPI or MPICH) and libclang" >&2
    exit 1
fi
# mpirun as root (containers, CI) and more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1

# The habits: formatted, no lint (warnings are errors), documentation without
# a broken link; then every test.
cargo fmt --all --check
cargo clippy --workspace --all-targets --features hetbal-cli/replay -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
cargo test --workspace --all-targets
# `hetbal replay` is built only with the cargo feature `replay` (SimGrid).
cargo test -p hetbal-cli --features replay --test replay_cli
cargo test --workspace --doc
# The C and Fortran interface (crates/hetbal-c): installed into a temporary
# prefix, then its C and Fortran tests and examples built with pkg-config and
# run under mpirun, a fuzz of its C interface with bad arguments, and the tests
# and the fuzz again under AddressSanitizer (memory errors and leaks).
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
crates/hetbal-c/install.sh "$prefix"
crates/hetbal-c/tests/run.sh "$prefix"
# The Python package (crates/hetbal-py): installed by pip into its own virtual
# environment (.venv-test) with maturin, numpy, mpi4py and pytest; its pytest
# suites (the MPI one on 4 ranks under mpirun) and its examples.
crates/hetbal-py/tests/run.sh
# The README and the user guide (docs/guide): every console, C, Fortran and
# Python example runs, with the binaries the tests above built (`hetbal` with
# `replay`: the build below only makes sure of it; `hetbal-mpi`), the prefix above
# and .venv-test, and the plots the guide shows are drawn; then the book is built
# with mdBook, installed when missing: without its server and watcher, and a
# debug build (1.5 minutes to compile on 2 cores instead of 4; the book builds
# in 2 s instead of 0.4).
target_dir=$(mkdir -p "${CARGO_TARGET_DIR:-target}" && cd "${CARGO_TARGET_DIR:-target}" && pwd)
cargo build -p hetbal-cli --features replay
python3 docs/guide/run-examples.py --bin-dir "$target_dir/debug" --prefix "$prefix" \
    --python "${VENV:-$PWD/.venv-test}/bin/python"
if ! command -v mdbook >/dev/null 2>&1; then
    echo "test.sh: installing mdBook (cargo install) to build the guide" >&2
    cargo install mdbook --version 0.5.4 --locked --no-default-features --features search --debug
fi
mdbook build docs/guide -d "$target_dir/guide"
echo "test.sh: the guide is in $target_dir/guide/index.html"
