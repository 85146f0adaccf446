#!/usr/bin/env bash
# What a user runs, against plain MPI: `hetbal-mpi ring`, `hetbal-mpi genblock`
# and `hetbal-mpi scatter` moving data in items of 1 MiB (checks included: their
# `measured_seconds`), and examples/plain_transfer.rs moving the same bytes into
# a new buffer, in turn, RUNS times (default 5); prints each median and its ratio
# to the plain transfer's (100% = as fast), and the machine's memory bandwidth
# (a copy of 1 GiB). Rows (MEBIBYTES defaults to 1024):
#
# - empty: rank 1 holds one item and receives MEBIBYTES MiB from rank 0;
# - full: rank 1 holds MEBIBYTES MiB and receives MEBIBYTES - 1 more;
# - big: rank 1 holds BIG_MIB MiB (default 4096; 0 skips the row) and receives
#   MEBIBYTES - 1 more;
# - scatter: the root holds 2 x MEBIBYTES MiB, keeps half and scatters the other
#   half to rank 1 (ring and GEN_BLOCK do not apply);
# - chain: CHAIN_RANKS ranks (default 8; 0 skips the row) each hold MEBIBYTES / 2
#   MiB, and MEBIBYTES / 4 MiB go from every rank to the next but the last: every
#   rank but the first keeps its data and receives (the ring forwards rank 0's
#   surplus through every rank; GEN_BLOCK shifts every block boundary).
#
# The plain transfer is made by a receiver holding nothing, and by one holding
# what the command's receiver holds; ratios are given to both (a scatter's
# receiver holds nothing: its root keeps its share). Ring and GEN_BLOCK also
# run with --give-back-sent (each rank gives back the memory of what it sends
# as it leaves: "give-back"). Each command's row ends with the most any rank's
# peak resident memory exceeded what that rank holds before or after, the
# larger (the goal: at most 64 MiB), median over the runs.
#
#   crates/hetbal-mpi/scripts/cli-throughput.sh [MEBIBYTES] [RUNS] [BIG_MIB] [CHAIN_RANKS]
#
# Needs mpirun and python3; builds the release binaries first.
set -euo pipefail
cd "$(dirname "$0")/../../.."
mib=${1:-1024}
runs=${2:-5}
big=${3:-4096}
chain=${4:-8}
cargo build --release -q -p hetbal-mpi --bin hetbal-mpi --example plain_transfer
target=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A ring and a GEN_BLOCK instance for rank 0 holding LOAD0 items and keeping one,
# rank 1 holding LOAD1 and getting the rest.
write_pair() { # ROW LOAD0 LOAD1
    local target1=$(($2 + $3 - 1))
    cat >"$work/ring-$1.json" <<JSON
{"ring": "unidirectional", "processors": [
  {"load": $2, "target": 1, "c_succ": 1.0},
  {"load": $3, "target": $target1, "c_succ": 1.0}]}
JSON
    echo "{\"source\": [$2, $3], \"target\": [1, $target1], \"startup\": 0.0, \"unit\": 1.0}" \
        >"$work/genblock-$1.json"
}
write_pair empty $((mib + 1)) 1
write_pair full "$mib" "$mib"
[ "$big" -gt 0 ] && write_pair big "$mib" "$big"
cat >"$work/scatter.json" <<JSON
{"items": $((2 * mib)), "root": "root", "processors": [
  {"name": "other", "comm": {"per_item": 0.0, "startup": 0.0}, "comp": {"per_item": 1.0, "startup": 0.0}},
  {"name": "root", "comm": {"per_item": 0.0, "startup": 0.0}, "comp": {"per_item": 1.0, "startup": 0.0}}]}
JSON
held=$((mib / 2))
moved=$((mib / 4))
if [ "$chain" -gt 2 ]; then
    python3 - "$work" "$chain" "$held" "$moved" <<'PY'
import json, sys
work, n, held, moved = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
loads = [held + moved] + [held] * (n - 1)
targets = [held] * (n - 1) + [held + moved]
json.dump({"ring": "unidirectional", "processors": [
    {"load": l, "target": t, "c_succ": 1.0} for l, t in zip(loads, targets)]},
    open(f"{work}/ring-chain.json", "w"))
json.dump({"source": loads, "target": targets, "startup": 0.0, "unit": 1.0},
          open(f"{work}/genblock-chain.json", "w"))
PY
fi
seconds() { # HELD: the `measured_seconds` of a command's JSON report, once
    # verified, and the most a rank's peak resident memory exceeded the MiB it
    # holds before or after (HELD: comma-separated, one per rank)
    python3 -c 'import json, sys
d = json.load(sys.stdin)
if not d["verified"]:
    sys.exit("not verified")
held = [int(h) for h in sys.argv[1].split(",")]
excess = max(p / 2**20 - h for p, h in zip(d["peak_rss_bytes"], held))
print(d["measured_seconds"], f"{excess:.0f}")' "$1"
}
plain() { mpirun -np "$1" "$target/release/examples/plain_transfer" "${@:2}"; }
command() { # RANKS KIND INSTANCE HELD [FLAGS...]: a command's measured
    # seconds and peak memory beyond what a rank holds (HELD: see `seconds`)
    mpirun -np "$1" "$target/release/hetbal-mpi" "$2" --instance "$3" \
        --item-bytes 1048576 --json "${@:5}" | seconds "$4"
}
held_of() { # ROW: the MiB each rank holds before or after, the larger
    case $1 in
    empty) echo "$((mib + 1)),$((mib + 1))" ;;
    full) echo "$mib,$((2 * mib - 1))" ;;
    big) echo "$mib,$((mib + big - 1))" ;;
    chain) python3 -c "import sys; n, h, m = map(int, sys.argv[1:]); print(','.join([str(h + m)] + [str(h)] * (n - 2) + [str(h + m)]))" "$chain" "$held" "$moved" ;;
    scatter) echo "$mib,$((2 * mib))" ;;
    esac
}
: >"$work/times"
record() { # ROW KIND COMMAND...: appends the row, kind and the command's
    # seconds (and peak memory beyond what a rank holds, for hetbal's commands)
    local seconds
    seconds=$("${@:3}")
    echo "$1 $2 $seconds" >>"$work/times"
}
rows="empty full"
[ "$big" -gt 0 ] && rows="$rows big"
[ "$chain" -gt 2 ] && rows="$rows chain"
for _ in $(seq "$runs"); do
    record empty plain plain 2 "$mib"
    record full plain plain 2 $((mib - 1))
    record full plain-holding plain 2 $((mib - 1)) 1024 "$mib"
    [ "$big" -gt 0 ] && record big plain-holding plain 2 $((mib - 1)) 1024 "$big"
    if [ "$chain" -gt 2 ]; then
        record chain plain plain "$chain" "$moved"
        record chain plain-holding plain "$chain" "$moved" 1024 "$held"
    fi
    for row in $rows; do
        ranks=2
        [ "$row" = chain ] && ranks=$chain
        for kind in ring genblock; do
            record "$row" "$kind" command "$ranks" "$kind" "$work/$kind-$row.json" "$(held_of "$row")"
            record "$row" "$kind-give-back" command "$ranks" "$kind" "$work/$kind-$row.json" \
                "$(held_of "$row")" --give-back-sent
        done
    done
    record scatter scatter command 2 scatter "$work/scatter.json" "$(held_of scatter)"
done
python3 - "$work/times" "$mib" "$big" "$chain" <<'PY'
import statistics, sys, time
times, excess = {}, {}
for line in open(sys.argv[1]):
    row, kind, t, *beyond = line.split()
    times.setdefault((row, kind), []).append(float(t))
    if beyond:
        excess.setdefault((row, kind), []).append(float(beyond[0]))
mib, big, chain = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
source = bytearray(b"\1") * (1 << 30)
target = bytearray(b"\2") * (1 << 30)
started = time.perf_counter()
target[:] = source
copy = time.perf_counter() - started
print(f"memory bandwidth: a copy of 1 GiB takes {copy:.3f} s ({(1 << 30) / copy / 1e9:.1f} GB/s)")
titles = {
    "empty": f"rank 1 holds 1 item and receives {mib} MiB",
    "full": f"rank 1 holds {mib} MiB and receives {mib - 1} MiB more",
    "big": f"rank 1 holds {big} MiB and receives {mib - 1} MiB more",
    "scatter": f"the root holds {2 * mib} MiB, keeps {mib} MiB and sends {mib} MiB",
    "chain": f"{chain} ranks hold {mib // 2} MiB each; {mib // 4} MiB from each to the next",
}
# Rows that share the plain transfer into an empty receiver of another row.
same_plain = {"big": "full", "scatter": "empty"}
for row, title in titles.items():
    kinds = {k: v for (r, k), v in times.items() if r == row}
    if not kinds:
        continue
    plain = statistics.median(times[(same_plain.get(row, row), "plain")])
    holding = statistics.median(kinds.get("plain-holding", kinds.get("plain", [plain])))
    print(f"{title}, {max(map(len, kinds.values()))} runs each (median seconds)")
    for kind in ["plain", "plain-holding", "ring", "genblock", "scatter",
                 "ring-give-back", "genblock-give-back"]:
        if (row, kind) not in times:
            continue
        m = statistics.median(times[(row, kind)])
        runs = " ".join(f"{t:.3f}" for t in times[(row, kind)])
        beyond = excess.get((row, kind))
        memory = f", peak +{statistics.median(beyond):.0f} MiB" if beyond else ""
        print(f"  {kind:<18} {m:.3f} s  {100 * plain / m:4.0f}% of plain, "
              f"{100 * holding / m:4.0f}% of plain holding{memory}   [{runs}]")
PY
