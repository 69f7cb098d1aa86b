"""Issue 14: the pre-stated adoption rule of the ``"score"`` band (benchmarks/rules/issue14_band.md), applied.

Reads a ``benchmarks/coverage.py`` run (both bands are computed there from the same refits of the same
fits), and prints and writes, per (cell, kind): coverage and mean width of the normal and score bands
on the same states, the rule's four checks (a)-(d) and the verdict; besides, coverage split by where the
normal band ends (inside (0, 1), at 0, at 1) and by the true answer, and the pivot's spread (``pivot``).

Run:  python benchmarks/coverage_score.py --run cov14k_run   # results/cov14k_run_score.csv, _split.csv, _pivot.csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).parent))
from coverage import RESULTS, results_csv  # noqa: E402

LOW, HIGH, WIDTH, SMALL, SMALL_DROP = 0.93, 0.97, 1.10, 0.02, 0.02
KEY = ["model", "N", "epsilon", "rep", "kind", "query", "state", "ask"]


def paired(df: pd.DataFrame, rules=("normal", "score")) -> pd.DataFrame:
    """One row per query state that has every rule: ``covered_<rule>``, ``width_<rule>``, ``lower_<rule>``..."""
    q = df[(df.kind != "cell") & df.rule.isin(rules)].copy()
    q["ask"] = q.groupby(KEY[:-1] + ["rule"]).cumcount()  # a repetition can ask the same query twice
    q["width"] = q.upper - q.lower
    wide = q.pivot_table(index=KEY, columns="rule", values=["covered", "width", "lower", "upper", "truth"],
                         aggfunc="first")
    wide.columns = [f"{v}_{r}" for v, r in wide.columns]
    wide = wide.dropna(subset=[f"covered_{r}" for r in rules]).reset_index()
    wide["truth"] = wide[f"truth_{rules[0]}"]
    return wide


def rule_table(w: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (model, n, eps, kind), g in w.groupby(["model", "N", "epsilon", "kind"], sort=True):
        row = dict(model=model, N=n, epsilon=eps, kind=kind, reps=g.rep.nunique(),
                   queries=g.groupby(["rep", "query", "ask"]).ngroups, states=len(g))
        for r in ("normal", "score"):
            row[f"coverage_{r}"] = g[f"covered_{r}"].mean()
            row[f"width_{r}"] = g[f"width_{r}"].mean()
        row["width_ratio"] = row["width_score"] / row["width_normal"]
        row["inside_normal"] = LOW <= row["coverage_normal"] <= HIGH
        row["inside_score"] = LOW <= row["coverage_score"] <= HIGH
        rows.append(row)
    return pd.DataFrame(rows)


def verdict(t: pd.DataFrame, w: pd.DataFrame) -> dict:
    small = w[(w.kind == "conditional") & (w.truth <= SMALL)]
    out = {
        "a: every pair inside with normal stays inside": bool(t[t.inside_normal].inside_score.all()),
        "b: strictly more pairs inside": bool(t.inside_score.sum() > t.inside_normal.sum()),
        f"c: width ratio <= {WIDTH} everywhere": bool((t.width_ratio <= WIDTH).all()),
        f"d: conditionals with truth <= {SMALL}: score >= normal - {SMALL_DROP}": bool(
            small.covered_score.mean() >= small.covered_normal.mean() - SMALL_DROP
        ),
    }
    out["detail"] = (f"pairs inside: normal {int(t.inside_normal.sum())}, score {int(t.inside_score.sum())} of {len(t)}; "
                     f"max width ratio {t.width_ratio.max():.3f}; truth <= {SMALL} conditionals ({len(small)} states): "
                     f"normal {small.covered_normal.mean():.3f}, score {small.covered_score.mean():.3f}")
    out["adopt"] = all(v for k, v in out.items() if k[:2] in ("a:", "b:", "c:", "d:"))
    return out


def split(w: pd.DataFrame) -> pd.DataFrame:
    """Coverage by where the normal band ends and by the true answer, both bands, per kind (all cells pooled)."""
    w = w.assign(
        ends=np.select([w.lower_normal <= 1e-12, w.upper_normal >= 1 - 1e-12], ["at 0", "at 1"], "inside (0, 1)"),
        truth_bin=pd.cut(w.truth, [-1e-12, 0.02, 0.1, 0.3, 0.7, 1.0],
                         labels=["<= 0.02", "0.02-0.1", "0.1-0.3", "0.3-0.7", "> 0.7"]).astype(str),
    )
    rows = []
    for by in ("ends", "truth_bin"):
        for (kind, val), g in w.groupby(["kind", by], sort=True):
            rows.append(dict(kind=kind, split=by, group=val, states=len(g), coverage_normal=g.covered_normal.mean(),
                             coverage_score=g.covered_score.mean(), width_normal=g.width_normal.mean(),
                             width_score=g.width_score.mean()))
    return pd.DataFrame(rows)


def pivot(df: pd.DataFrame) -> pd.DataFrame:
    """Why the score band moves little: per (cell, kind), from the refits' moments kept in the CSV.

    ``z = (truth - m) / s_hat`` with the normal band's centre ``m = 2 p_hat - mean(refits)``: the pivot both
    bands assume is about N(0, 1) (a Student t with n_refits - 1 degrees of freedom, sd 1.04 at 30 refits).
    ``binomial share`` is ``p_hat (1 - p_hat) / n_records / s_hat^2``, the part of the refits' variance the
    score band treats as record sampling (capped at 1 by the band).
    """
    q = df[(df.kind != "cell") & (df.rule == "normal")].copy()
    q["z"] = (q.truth - (2 * q.estimate - q.boot_mean)) / q.boot_sd
    q["share"] = q.estimate * (1 - q.estimate) / q.n_records / q.boot_sd ** 2
    rows = []
    for (model, n, eps, kind), g in q.groupby(["model", "N", "epsilon", "kind"], sort=True):
        z = g.z[np.isfinite(g.z)]
        t = float(stats.t.ppf(0.975, int(g.n_refits.iloc[0]) - 1))
        rows.append(dict(model=model, N=n, epsilon=eps, kind=kind, states=len(g), sd_z=z.std(),
                         robust_sd_z=1.4826 * np.median(np.abs(z - np.median(z))),
                         beyond_t=float((z.abs() > t).mean()), beyond_3=float((z.abs() > 3).mean()),
                         binomial_share_median=g.share.median(), binomial_share_over_1=float((g.share > 1).mean())))
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", default="cov14k_run")
    args = ap.parse_args(argv)
    df = pd.read_csv(results_csv(args.run))
    w = paired(df)
    t = rule_table(w)
    s = split(w)
    z = pivot(df)
    z.to_csv(RESULTS / f"{args.run}_pivot.csv", index=False)
    t.to_csv(RESULTS / f"{args.run}_score.csv", index=False)
    s.to_csv(RESULTS / f"{args.run}_split.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(t.round(4).to_string(index=False))
        print(s.round(4).to_string(index=False))
        print(z.round(3).to_string(index=False))
    for k, v in verdict(t, w).items():
        print(f"{k}: {v}")
    print("\n| model | N | eps | kind | reps | queries | states | coverage: normal / score | mean width: normal / score "
          "| ratio |\n|---|---|---|---|---|---|---|---|---|---|")
    for r in t.itertuples():
        print(f"| {r.model} | {r.N:,} | {r.epsilon:g} | {r.kind} | {r.reps} | {r.queries} | {r.states} | "
              f"{r.coverage_normal:.3f} / {r.coverage_score:.3f} | {r.width_normal:.4f} / {r.width_score:.4f} | "
              f"{r.width_ratio:.3f} |")


if __name__ == "__main__":
    main()
