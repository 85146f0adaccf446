#!/usr/bin/env bash
# What a user runs, against plain MPI: `hetbal-mpi ring` and `hetbal-mpi genblock`
# moving MEBIBYTES (default 1024) MiB from rank 0 to rank 1 in items of 1 MiB
# (checks included: their `measured_seconds`), and examples/plain_transfer.rs
# moving the same bytes into a new buffer, in turn, RUNS times (default 5); prints
# each median and its ratio to the plain transfer's (100% = as fast).
#
#   crates/hetbal-mpi/scripts/cli-throughput.sh [MEBIBYTES] [RUNS]
#
# Needs mpirun and python3; builds the release binaries first.
set -euo pipefail
cd "$(dirname "$0")/../../.."
mib=${1:-1024}
runs=${2:-5}
cargo build --release -q -p hetbal-mpi --bin hetbal-mpi --example plain_transfer
target=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Rank 0 holds MEBIBYTES + 1 items and keeps one; rank 1 holds one and gets the rest.
cat >"$work/ring.json" <<JSON
{"ring": "unidirectional", "processors": [
  {"load": $((mib + 1)), "target": 1, "c_succ": 1.0},
  {"load": 1, "target": $((mib + 1)), "c_succ": 1.0}]}
JSON
cat >"$work/genblock.json" <<JSON
{"source": [$((mib + 1)), 1], "target": [1, $((mib + 1))], "startup": 0.0, "unit": 1.0}
JSON
seconds() { # the `measured_seconds` of a command's JSON report, once verified
    python3 -c 'import json, sys
d = json.load(sys.stdin)
if not d["verified"]:
    sys.exit("not verified")
print(d["measured_seconds"])'
}
: >"$work/times"
for _ in $(seq "$runs"); do
    echo "plain $(mpirun -np 2 "$target/release/examples/plain_transfer" "$mib")" >>"$work/times"
    for kind in ring genblock; do
        echo "$kind $(mpirun -np 2 "$target/release/hetbal-mpi" "$kind" \
            --instance "$work/$kind.json" --item-bytes 1048576 --json | seconds)" >>"$work/times"
    done
done
python3 - "$work/times" "$mib" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    kind, t = line.split()
    times.setdefault(kind, []).append(float(t))
plain = statistics.median(times["plain"])
print(f"{sys.argv[2]} MiB between 2 ranks, {len(times['plain'])} runs each (median seconds)")
for kind in ["plain", "ring", "genblock"]:
    m = statistics.median(times[kind])
    runs = " ".join(f"{t:.3f}" for t in times[kind])
    print(f"{kind:<9} {m:.3f} s  {100 * plain / m:4.0f}% of plain   [{runs}]")
PY
