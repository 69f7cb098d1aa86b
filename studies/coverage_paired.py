"""The default band of two coverage runs on the same repetitions: coverage, width and point error.

Each repetition of ``coverage.py`` is seeded by its cell and number, so two runs made with different
estimator defaults see the same samples, releases and queries. This compares a new run (``--new``,
a ``results/<name>.csv``) with the merged runs (``results/coverage.csv.gz``) on the repetitions the
new run finished, per model and kind of query. Used after issue 13's seventh round changed CGM-EM's
defaults (docs/intervals.md):

    python benchmarks/coverage.py --models er-8 --n 1000 --eps 1.0 --samples 30 --queries 4 --out cov_new_er1k
    python benchmarks/coverage.py --models asia --samples 30 --queries 4 --out cov_new_asia
    python benchmarks/coverage_paired.py --new cov_new_er1k cov_new_asia
"""

from __future__ import annotations

import argparse

import pandas as pd

from coverage import DEFAULT, RESULTS, results_csv


def paired(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Per (model, N, eps, kind): coverage, mean width and mean |estimate - truth| of the default band, old and new."""
    key = ["model", "N", "epsilon", "rep"]
    new = new[(new.rule == DEFAULT) & (new.kind != "cell")]
    old = old[(old.rule == DEFAULT) & (old.kind != "cell")].merge(new[key].drop_duplicates(), on=key)
    rows = []
    for label, frame in (("old", old), ("new", new)):
        f = frame.assign(width=frame.upper - frame.lower, error=(frame.estimate - frame.truth).abs())
        g = f.groupby(["model", "N", "epsilon", "kind"])
        rows.append(g.agg(reps=("rep", "nunique"), states=("covered", "size"), coverage=("covered", "mean"),
                          width=("width", "mean"), error=("error", "mean")).add_prefix(f"{label}_"))
    return pd.concat(rows, axis=1).reset_index()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--new", nargs="+", required=True, help="coverage.py runs (by --out name) made with the new defaults")
    ap.add_argument("--old", default="coverage", help="the merged earlier runs (default: coverage)")
    ap.add_argument("--out", default="coverage_paired")
    args = ap.parse_args(argv)
    new = pd.concat([pd.read_csv(results_csv(n)) for n in args.new], ignore_index=True)
    table = paired(pd.read_csv(results_csv(args.old)), new)
    table.to_csv(RESULTS / f"{args.out}.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(table.round(4).to_string(index=False))


if __name__ == "__main__":
    main()
