"""The ring paper's section 7 study from Python: an iterative application whose
processors change speed, redistributed by every policy (none, the paper's
fixed schemes, profitability, adaptive, the offline best) at every cost ratio.
hetbal runs the study; this script prints the table (with pandas when it is
installed) and plots the normalised time against the ratio with matplotlib
(when installed), one panel per ring size.

Run (after `pip install ./crates/hetbal-py`, optionally pandas and matplotlib):
    python examples/python/ring_iterative.py [--rings 8,32] [--draws 10] [--out ring-iterative.svg]
"""

import argparse
import sys

import hetbal


def numbers(text, kind):
    return [kind(x) for x in text.split(",")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rings", default="8,32", help="ring sizes, comma-separated")
    parser.add_argument("--ratios", default="1,2,5,10,20,50,100",
                        help="cost of a redistribution / time of an iteration, comma-separated")
    parser.add_argument("--draws", type=int, default=10, help="random draws per ring size")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2004)
    parser.add_argument("--out", default="ring-iterative.svg", help="the plot (SVG, PNG or PDF)")
    args = parser.parse_args()

    def progress(done, total):
        print(f"\r{done}/{total} runs", end="", file=sys.stderr, flush=True)

    try:
        rows = hetbal.experiment.ring_iterative(
            rings=numbers(args.rings, int), ratios=numbers(args.ratios, float), draws=args.draws,
            iterations=args.iterations, seed=args.seed, progress=progress)
    except hetbal.InputError as e:
        sys.exit(f"ring_iterative: {e}")
    print(file=sys.stderr)

    try:
        import pandas
    except ImportError:
        pandas = None
    if pandas is not None:
        table = pandas.DataFrame(rows).pivot_table(
            index=["ring", "ratio"], columns="policy", values="normalized_time", sort=False)
        print("normalised time (time / time without redistribution), mean over the draws:")
        print(table.round(3).to_string())
    else:
        print("ring ratio policy normalized_time redistributions")
        for r in rows:
            print(f"{r['ring']} {r['ratio']:g} {r['policy']} {r['normalized_time']:.3f} {r['redistributions']:.1f}")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(install matplotlib for the plot)", file=sys.stderr)
        return
    rings = sorted({r["ring"] for r in rows})
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    figure, axes = plt.subplots(1, len(rings), figsize=(6 * len(rings), 4.5), squeeze=False)
    for ax, ring in zip(axes[0], rings):
        for policy in policies:
            points = [(r["ratio"], r["normalized_time"]) for r in rows if r["ring"] == ring and r["policy"] == policy]
            ax.plot(*zip(*points), marker="o", label=policy)
        ax.set_xscale("log")
        ax.set_title(f"ring of {ring} processors")
        ax.set_xlabel("cost of a redistribution / time of an iteration")
        ax.set_ylabel("time / time without redistribution")
        ax.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(args.out)
    print(f"plot written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
