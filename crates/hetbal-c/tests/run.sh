#!/usr/bin/env bash
# Builds the C and Fortran tests and examples against an installed hetbal
# (crates/hetbal-c/install.sh PREFIX) with pkg-config, and runs them under
# mpirun (the Jacobi examples also deciding every 5 iterations, and on a memory
# cliff where the functional model must settle and the constant one keep
# moving); then the fuzz of the C interface (c/fuzz.c), and the C and Fortran
# tests and the fuzz again built with AddressSanitizer (see below).
# Usage: run.sh PREFIX. HETBAL_FUZZ_SEED sets the fuzz's seed (default 1).
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
mpicc "${cflags[@]}" -o "$build/items" "$here/c/items.c" $(pkg-config --cflags --libs hetbal)
mpicc "${cflags[@]}" -o "$build/balancer" "$here/c/balancer.c" $(pkg-config --cflags --libs hetbal)
mpicc "${cflags[@]}" -o "$build/item_buffer" "$here/c/item_buffer.c" $(pkg-config --cflags --libs hetbal)
mpicc "${cflags[@]}" -o "$build/kept-throughput-c" "$root/examples/c/kept_throughput.c" $(pkg-config --cflags --libs hetbal)
mpicc "${cflags[@]}" -o "$build/jacobi-c" "$root/examples/c/jacobi.c" $(pkg-config --cflags --libs hetbal)
mpicc "${cflags[@]}" -o "$build/particles-c" "$root/examples/c/particles.c" $(pkg-config --cflags --libs hetbal) -lm
mpicc "${cflags[@]}" -o "$build/fuzz" "$here/c/fuzz.c" $(pkg-config --cflags --libs hetbal) -lm
# Linked statically (hetbal-static.pc): no libhetbal.so among its libraries.
mpicc "${cflags[@]}" -o "$build/plan-static" "$here/c/plan.c" $(pkg-config --cflags --libs hetbal-static)
if ldd "$build/plan-static" | grep -q libhetbal; then
    echo "run.sh: plan-static links libhetbal.so" >&2
    exit 1
fi
"$build/plan-static"
(cd "$build" &&
    mpif90 -O2 -o plan-f "$here/fortran/plan.f90" $(pkg-config --cflags --libs hetbal-fortran) &&
    mpif90 -O2 -o partition-f "$here/fortran/partition.f90" $(pkg-config --cflags --libs hetbal-fortran) &&
    mpif90 -O2 -o items-f "$here/fortran/items.f90" $(pkg-config --cflags --libs hetbal-fortran) &&
    mpif90 -O2 -o item_buffer-f "$here/fortran/item_buffer.f90" $(pkg-config --cflags --libs hetbal-fortran) &&
    mpif90 -O2 -o jacobi-f "$root/examples/fortran/jacobi.f90" $(pkg-config --cflags --libs hetbal-fortran) &&
    mpif90 -O2 -o kept-throughput-f "$root/examples/fortran/kept_throughput.f90" \
        $(pkg-config --cflags --libs hetbal-fortran))
"$build/plan"
"$build/partition"
"$build/partition-f"
mpirun -np 4 "$build/redistribute"
mpirun -np 4 "$build/items"
mpirun -np 4 "$build/balancer"
# Kept items never move in an item buffer (and do in a malloc'ed one).
mpirun -np 4 "$build/item_buffer"
# The benchmark of a receiver that holds data, small (8 MiB held, 7 MiB
# received, one run): that it runs and its checks pass, not its times.
mpirun -np 2 "$build/kept-throughput-c" 8 7 1
mpirun -np 4 "$build/plan-f"
mpirun -np 4 "$build/items-f"
# The item buffer from Fortran: kept items never move there either.
mpirun -np 4 "$build/item_buffer-f"
# Its benchmark from Fortran, small as the C one's.
mpirun -np 2 "$build/kept-throughput-f" 8 7 1
mpirun -np 4 "$build/jacobi-c" 100000 100
# Deciding every 5 iterations (--every 5): the cells still the single-rank
# run's (each example exits 1 otherwise).
mpirun -np 4 "$build/jacobi-c" 100000 100 --every 5
mpirun -np 4 "$build/jacobi-f" 100000 100 --every 5 --policy profitability --model functional
# A memory cliff (--cliff: rank 0 ten times slower per cell past 1,200,000
# cells; the costs reported are the emulated ones, --emulate, so that the
# timing noise of a shared machine does not decide), in C and in Fortran: the
# functional model settles (at most 6 moves, none after iteration 20), the
# constant one keeps moving (more than 20 moves). A run that breaks this fails.
# (Measured: 4 moves, the last after iteration 4, against 99 moves in both.)
# cliff PROGRAM MODEL runs it (set -e: a run whose cells differ from the
# single-rank run's fails) and sets `moves` and `last`, the moves and the last
# iteration after which the cells moved, from its summary line.
# (3 to 5 s each on a quiet machine, once 589 s under heavy load: `timeout`
# fails a hung run rather than waiting for ever.)
cliff() {
    timeout --kill-after=10 900 mpirun -np 4 "$build/$1" 4000000 100 --cliff 1200000 \
        --policy profitability --emulate 1e-9 --model "$2" >"$build/cliff.txt"
    cat "$build/cliff.txt" >&2
    local summary
    summary=$(sed -n 's/^jacobi[^:]*: \([0-9]*\) moves, the last after iteration \([0-9]*\);.*/\1 \2/p' \
        "$build/cliff.txt")
    if [ -z "$summary" ]; then
        echo "run.sh: $1 --cliff --model $2 printed no summary line" >&2
        exit 1
    fi
    read -r moves last <<<"$summary"
}
for program in jacobi-c jacobi-f; do
    cliff "$program" functional
    if [ "$moves" -gt 6 ] || [ "$last" -gt 20 ]; then
        echo "run.sh: $program --cliff, functional model: $moves moves, the last after iteration $last" >&2
        exit 1
    fi
    cliff "$program" constant
    if [ "$moves" -le 20 ]; then
        echo "run.sh: $program --cliff, constant model: $moves moves (no oscillation?)" >&2
        exit 1
    fi
done
# A wrong option: a message and exit status 2.
status=0
mpirun -np 4 "$build/jacobi-f" --every 0 2>"$build/usage.txt" || status=$?
if [ "$status" -ne 2 ] || ! grep -q '^usage: jacobi' "$build/usage.txt"; then
    echo "run.sh: jacobi-f --every 0: exit status $status" >&2
    cat "$build/usage.txt" >&2
    exit 1
fi
# Fewer cells than ranks: refused with exit status 2 (C).
status=0
mpirun -np 4 "$build/jacobi-c" 3 10 2>"$build/usage.txt" || status=$?
if [ "$status" -ne 2 ] || ! grep -q 'one cell per rank' "$build/usage.txt"; then
    echo "run.sh: jacobi-c 3 10: exit status $status" >&2
    cat "$build/usage.txt" >&2
    exit 1
fi
mpirun -np 4 "$build/particles-c" 20000 12 32
mpirun -np 3 "$build/jacobi-f"

# The fuzz (c/fuzz.c): hetbal.h's functions called with random arguments
# (NULLs, lengths, NaNs, freed handles), then hetbal_mpi.h's collectives with
# one rank's arguments broken; seeded, a few seconds each. `timeout`: a hang
# (a rank returning alone while the others wait) fails the run.
seed=${HETBAL_FUZZ_SEED:-1}
"$build/fuzz" "$seed"
timeout --kill-after=10 300 mpirun -np 4 "$build/fuzz" --mpi "$seed"

# Memory checking: the C and Fortran tests and the fuzz again, built with
# AddressSanitizer (out-of-bounds accesses, use after free, double free: the
# run stops with a report and fails) and LeakSanitizer (leaks, reported at
# exit: the run fails). The library allocates with malloc (its Rust global
# allocator), so ASan checks its allocations too, though not its own
# accesses (it is not rebuilt instrumented). ASan rather than valgrind: it
# works with OpenMPI (4.1) with the settings below, and runs the fuzz ten
# times faster. The settings:
#   - OMPI_MCA_memory=^patcher: no memory hooks. OpenMPI's patch the C
#     library's munmap and friends at run time, functions ASan intercepts;
#     the runs pass with them too, but they serve only the registration
#     caches of RDMA networks, unused on one machine.
#   - no_dlclose.c, linked into each program (and exported, -rdynamic): it
#     keeps OpenMPI's plugins loaded at exit, so that LeakSanitizer names
#     them in its stacks (else "<unknown module>", or a wrong name).
#   - lsan.supp: OpenMPI's own leaks (in MPI_Init and PMIx), each commented;
#     none of hetbal's is suppressed. A leak LeakSanitizer reports is either
#     hetbal's (a bug) or a new one of OpenMPI's, to add there once its full
#     stack (ASAN_OPTIONS=fast_unwind_on_malloc=0) shows it is.
sanitize=(-O1 -g -fsanitize=address -fno-omit-frame-pointer)
asan="$build/asan"
mkdir -p "$asan"
mpicc "${sanitize[@]}" -c -o "$asan/no_dlclose.o" "$here/no_dlclose.c"
for test in plan partition redistribute items balancer item_buffer fuzz; do
    mpicc "${cflags[@]}" "${sanitize[@]}" -rdynamic -o "$asan/$test" "$here/c/$test.c" "$asan/no_dlclose.o" \
        $(pkg-config --cflags --libs hetbal) -lm
done
(cd "$asan" &&
    mpif90 "${sanitize[@]}" -rdynamic -o plan-f "$here/fortran/plan.f90" no_dlclose.o \
        $(pkg-config --cflags --libs hetbal-fortran) &&
    mpif90 "${sanitize[@]}" -rdynamic -o partition-f "$here/fortran/partition.f90" no_dlclose.o \
        $(pkg-config --cflags --libs hetbal-fortran) &&
    mpif90 "${sanitize[@]}" -rdynamic -o items-f "$here/fortran/items.f90" no_dlclose.o \
        $(pkg-config --cflags --libs hetbal-fortran) &&
    mpif90 "${sanitize[@]}" -rdynamic -o item_buffer-f "$here/fortran/item_buffer.f90" no_dlclose.o \
        $(pkg-config --cflags --libs hetbal-fortran))
(
    export OMPI_MCA_memory=^patcher
    export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
    export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
    "$asan/plan"
    "$asan/partition"
    "$asan/partition-f"
    "$asan/fuzz" "$seed"
    timeout --kill-after=10 300 mpirun -np 4 "$asan/redistribute"
    timeout --kill-after=10 300 mpirun -np 4 "$asan/items"
    timeout --kill-after=10 300 mpirun -np 4 "$asan/balancer"
    timeout --kill-after=10 300 mpirun -np 4 "$asan/item_buffer"
    timeout --kill-after=10 300 mpirun -np 4 "$asan/plan-f"
    timeout --kill-after=10 300 mpirun -np 4 "$asan/items-f"
    timeout --kill-after=10 300 mpirun -np 4 "$asan/item_buffer-f"
    timeout --kill-after=10 300 mpirun -np 4 "$asan/fuzz" --mpi "$seed"
)
echo "run.sh: the C and Fortran tests and the fuzz pass, under AddressSanitizer too" >&2
