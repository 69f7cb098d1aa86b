"""Issue 14: the pre-stated adoption rule of the ``"ratio"`` band (benchmarks/rules/issue14_ratio.md), applied.

Reads ``benchmarks/coverage.py`` runs (every rule scored from the same fits, refits and queries; the
``"ratio"`` rows need the denominators that coverage.py keeps since the rule was written) and prints and
writes, per (cell, conditional): coverage and mean width of the normal and ratio bands on the same states,
the rule's checks (a)-(d), the minimum of repetitions and the verdict; besides, coverage by the records
behind the evidence per cell, and the normal band widened by one factor to the ratio band's mean width.

Run:  python benchmarks/coverage_ratio.py --runs cov14r_a cov14r_b cov14r_bn --out cov14r   # results/cov14r_ratio*.csv, _rule.txt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize, special

sys.path.insert(0, str(Path(__file__).parent))
from coverage import RESULTS, results_csv  # noqa: E402

LOW, HIGH, WIDTH_RESOLVED, DROP, MIN_MN, MIN_BN = 0.93, 0.97, 1.03, 0.01, 100, 60
BINS = [0, 100, 200, 400, 800, np.inf]
LABELS = ["<=100", "100-200", "200-400", "400-800", ">800"]


def load(runs: list[str]) -> pd.DataFrame:
    """Conditional states, one row per (fit, query, state) with the normal and ratio bands side by side."""
    frames = []
    for run in runs:
        path = results_csv(run)
        if not path.exists():
            path = RESULTS / f"{run}.csv.gz"
        frames.append(pd.read_csv(path))
    df = pd.concat(frames, ignore_index=True)
    df = df[df.kind == "conditional"].copy()
    df["width"] = df.upper - df.lower
    keys = ["model", "N", "epsilon", "rep", "query", "state"]
    df["ask"] = df.groupby([*keys, "rule"]).cumcount()  # a query asked twice in one repetition
    keep = ["covered", "width", "lower", "upper"]
    normal = df[df.rule == "normal"].set_index([*keys, "ask"])
    ratio = df[df.rule == "ratio"].set_index([*keys, "ask"])[keep].add_suffix("_ratio")
    both = normal[[*keep, "truth", "estimate", "boot_mean", "boot_sd", "n_records", "n_refits", "warm_s"]].join(
        ratio, how="inner")
    both = both.rename(columns={k: f"{k}_normal" for k in keep}).reset_index()
    both["records"] = pd.cut(both.n_records, BINS, labels=LABELS)
    return both


def widened(g: pd.DataFrame) -> tuple[float, float]:
    """The factor that widens the normal band to the ratio band's mean width, and its coverage there."""
    t = special.stdtrit(g.n_refits - 1, 0.975) * np.sqrt(1 + 1 / g.n_refits)
    centre, half = 2 * g.estimate - g.boot_mean, t * g.boot_sd

    def band(f):
        return np.clip(centre - f * half, 0, 1), np.clip(centre + f * half, 0, 1)

    target = g.width_ratio.mean()
    f = optimize.brentq(lambda f: (lambda lo, hi: (hi - lo).mean())(*band(f)) - target, 0.2, 10)
    lo, hi = band(f)
    return f, float(((lo - 1e-12 <= g.truth) & (g.truth <= hi + 1e-12)).mean())


def rule_table(w: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (model, n, eps), g in w.groupby(["model", "N", "epsilon"], sort=True):
        f, cov_f = widened(g)
        row = dict(model=model, N=n, epsilon=eps, reps=g.rep.nunique(), queries=g.groupby(["rep", "query", "ask"]).ngroups,
                   states=len(g), coverage_normal=g.covered_normal.mean(), coverage_ratio=g.covered_ratio.mean(),
                   width_normal=g.width_normal.mean(), width_ratio=g.width_ratio.mean(),
                   widened_factor=f, widened_coverage=cov_f)
        row["width_x"] = row["width_ratio"] / row["width_normal"]
        row["inside_normal"] = LOW <= row["coverage_normal"] <= HIGH
        row["inside_ratio"] = LOW <= row["coverage_ratio"] <= HIGH
        rows.append(row)
    return pd.DataFrame(rows)


def by_records(w: pd.DataFrame, per_cell: bool) -> pd.DataFrame:
    keys = (["model", "N", "epsilon"] if per_cell else []) + ["records"]
    out = w.groupby(keys, observed=True).agg(states=("covered_normal", "size"), normal=("covered_normal", "mean"),
                                             ratio=("covered_ratio", "mean"), width_normal=("width_normal", "mean"),
                                             width_ratio=("width_ratio", "mean"))
    return out.reset_index()


def verdict(table: pd.DataFrame, pooled: pd.DataFrame, w: pd.DataFrame) -> list[str]:
    lines = []
    bn = table.model.str.endswith("-bn")
    short = table[(bn & (table.reps < MIN_BN)) | (~bn & (table.reps < MIN_MN))]
    a = bool((~table.inside_normal | table.inside_ratio).all())
    b = int(table.inside_ratio.sum()) > int(table.inside_normal.sum())
    low = w[w.n_records <= 200]
    c1 = low.covered_ratio.mean() > low.covered_normal.mean()
    c2 = bool((pooled.ratio >= pooled.normal - DROP).all())
    hi = w[w.n_records > 800]
    d_x = hi.width_ratio.mean() / hi.width_normal.mean()
    d = d_x <= WIDTH_RESOLVED
    lines.append(f"(a) pairs inside [0.93, 0.97] with normal stay inside with ratio: {a}")
    lines.append(f"(b) pairs inside: normal {int(table.inside_normal.sum())}, ratio {int(table.inside_ratio.sum())}: {b}")
    lines.append(f"(c) n_records <= 200 ({len(low)} states): normal {low.covered_normal.mean():.3f}, ratio "
                 f"{low.covered_ratio.mean():.3f}: {c1}; no bin more than {DROP} below normal: {c2}")
    lines.append(f"(d) n_records > 800 ({len(hi)} states): width ratio {d_x:.4f} <= {WIDTH_RESOLVED}: {d}")
    if len(short):
        lines.append("minimum of repetitions NOT met: " + ", ".join(f"{r.model} N={r.N} ({r.reps})" for r in short.itertuples()))
        lines.append("VERDICT: not met: unfinished (no default changes)")
    else:
        ok = a and b and c1 and c2 and d
        lines.append("VERDICT: " + ("met: 'ratio' becomes the default" if ok else "not met: the default stays 'normal'"))
    return lines


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", required=True, help="coverage.py --out names (results/NAME.csv or .csv.gz)")
    ap.add_argument("--out", required=True, help="prefix of the written tables (results/PREFIX_ratio*.csv, _rule.txt)")
    args = ap.parse_args(argv)
    w = load(args.runs)
    table = rule_table(w)
    pooled = by_records(w, per_cell=False)
    cells = by_records(w, per_cell=True)
    lines = verdict(table, pooled, w)
    pd.set_option("display.width", 200)
    text = "\n".join([table.round(4).to_string(index=False), "", pooled.round(4).to_string(index=False), "",
                      cells.round(3).to_string(index=False), "", *lines])
    print(text)
    table.to_csv(RESULTS / f"{args.out}_ratio.csv", index=False)
    cells.to_csv(RESULTS / f"{args.out}_ratio_records.csv", index=False)
    (RESULTS / f"{args.out}_ratio_rule.txt").write_text(text + "\n")


if __name__ == "__main__":
    main()
