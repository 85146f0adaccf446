#!/usr/bin/env bash
# Builds the C and Fortran tests and examples against an installed hetbal
# (crates/hetbal-c/install.sh PREFIX) with pkg-config, and runs them under
# mpirun. Usage: run.sh PREFIX
set -euo pipefail
prefix=${1:?usage: run.sh PREFIX}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
cflags=(-O2 -Wall -Wextra -std=c11)
# shellcheck disable=SC2046
mpicc "${cflags[@]}" -o "$build/plan" "$here/c/plan.c" $(pkg-config --cflags --libs hetbal) -lm
mpicc "${cflags[@]}" -o "$build/partition" "$here/c/partition.c" $(pkg-config --cflags --libs hetbal) -lm
mpicc "${cflags[@]}" -o "$build/redistribute" "$here/c/redistribute.c" $(pkg-config --cflags --libs hetbal)
mpicc "${cflags[@]}" -o "$build/jacobi-c" "$root/examples/c/jacobi.c" $(pkg-config --cflags --libs hetbal)
(cd "$build" &&
    mpif90 -O2 -o plan-f "$here/fortran/plan.f90" $(pkg-config --cflags --libs hetbal-fortran) &&
    mpif90 -O2 -o partition-f "$here/fortran/partition.f90" $(pkg-config --cflags --libs hetbal-fortran) &&
    mpif90 -O2 -o jacobi-f "$root/examples/fortran/jacobi.f90" $(pkg-config --cflags --libs hetbal-fortran))
"$build/plan"
"$build/partition"
"$build/partition-f"
mpirun -np 4 "$build/redistribute"
mpirun -np 4 "$build/plan-f"
mpirun -np 4 "$build/jacobi-c" 100000 100
mpirun -np 3 "$build/jacobi-f"
