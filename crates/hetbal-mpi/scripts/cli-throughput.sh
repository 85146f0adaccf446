#!/usr/bin/env bash
# What a user runs, against plain MPI: `hetbal-mpi ring` and `hetbal-mpi genblock`
# moving MEBIBYTES (default 1024) MiB from rank 0 to rank 1 in items of 1 MiB
# (checks included: their `measured_seconds`), and examples/plain_transfer.rs
# moving the same bytes into a new buffer, in turn, RUNS times (default 5); prints
# each median and its ratio to the plain transfer's (100% = as fast). Two rows:
# rank 1 holding one item, and rank 1 holding MEBIBYTES MiB already (the plain
# transfer then also by a rank 1 holding that much, and by an empty one).
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
# Row "empty": rank 0 holds MEBIBYTES + 1 items and keeps one; rank 1 holds one
# and gets the rest. Row "full": rank 1 holds MEBIBYTES items and gets
# MEBIBYTES - 1 more from rank 0, which keeps one.
write_instances() { # ROW LOAD0 LOAD1 TARGET1
    cat >"$work/ring-$1.json" <<JSON
{"ring": "unidirectional", "processors": [
  {"load": $2, "target": 1, "c_succ": 1.0},
  {"load": $3, "target": $4, "c_succ": 1.0}]}
JSON
    cat >"$work/genblock-$1.json" <<JSON
{"source": [$2, $3], "target": [1, $4], "startup": 0.0, "unit": 1.0}
JSON
}
write_instances empty $((mib + 1)) 1 $((mib + 1))
write_instances full "$mib" "$mib" $((2 * mib - 1))
seconds() { # the `measured_seconds` of a command's JSON report, once verified
    python3 -c 'import json, sys
d = json.load(sys.stdin)
if not d["verified"]:
    sys.exit("not verified")
print(d["measured_seconds"])'
}
: >"$work/times"
for _ in $(seq "$runs"); do
    echo "empty plain $(mpirun -np 2 "$target/release/examples/plain_transfer" "$mib")" >>"$work/times"
    echo "full plain-holding $(mpirun -np 2 "$target/release/examples/plain_transfer" "$((mib - 1))" 1024 "$mib")" >>"$work/times"
    echo "full plain $(mpirun -np 2 "$target/release/examples/plain_transfer" "$((mib - 1))")" >>"$work/times"
    for row in empty full; do
        for kind in ring genblock; do
            echo "$row $kind $(mpirun -np 2 "$target/release/hetbal-mpi" "$kind" \
                --instance "$work/$kind-$row.json" --item-bytes 1048576 --json | seconds)" >>"$work/times"
        done
    done
done
python3 - "$work/times" "$mib" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    row, kind, t = line.split()
    times.setdefault((row, kind), []).append(float(t))
mib = sys.argv[2]
for row, title in [("empty", f"rank 1 holds 1 item and receives {mib} MiB"),
                   ("full", f"rank 1 holds {mib} MiB and receives {int(mib) - 1} MiB more")]:
    plain = statistics.median(times[(row, "plain")])
    print(f"{title}, {len(times[(row, 'plain')])} runs each (median seconds)")
    for kind in ["plain", "plain-holding", "ring", "genblock"]:
        if (row, kind) not in times:
            continue
        m = statistics.median(times[(row, kind)])
        runs = " ".join(f"{t:.3f}" for t in times[(row, kind)])
        print(f"  {kind:<14} {m:.3f} s  {100 * plain / m:4.0f}% of plain   [{runs}]")
PY
