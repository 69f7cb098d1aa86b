"""Issue 14: the pre-stated adoption rule of the ``"inverted"`` band (benchmarks/rules/issue14_inverted.md), applied.

Reads a ``benchmarks/coverage.py --inverted`` run (the normal and inverted bands of the same queries,
from the same fits and the same refits), and prints and writes, per (cell, kind): coverage and mean
width of both bands on the same states, the rule's checks (a)-(d), the minimum of repetitions, the
cost bound and the verdict; besides, coverage on the states the normal band clips, and the band after
one tilted refit set per end (``inverted1``) where the run has it.

Run:  python benchmarks/coverage_inverted.py --run cov14m_run   # results/cov14m_run_inverted.csv, _clipped.csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from coverage import RESULTS, results_csv  # noqa: E402
from coverage_score import paired  # noqa: E402

LOW, HIGH, WIDTH, SMALL, SMALL_DROP, MIN_REPS, COST = 0.93, 0.97, 1.10, 0.02, 0.02, 40, 3.0
RULE = "inverted"


def rule_table(w: pd.DataFrame, cost: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (model, n, eps, kind), g in w.groupby(["model", "N", "epsilon", "kind"], sort=True):
        row = dict(model=model, N=n, epsilon=eps, kind=kind, reps=g.rep.nunique(),
                   queries=g.groupby(["rep", "query", "ask"]).ngroups, states=len(g))
        for r in ("normal", RULE):
            row[f"coverage_{r}"] = g[f"covered_{r}"].mean()
            row[f"width_{r}"] = g[f"width_{r}"].mean()
        row["width_ratio"] = row[f"width_{RULE}"] / row["width_normal"]
        row["inside_normal"] = LOW <= row["coverage_normal"] <= HIGH
        row[f"inside_{RULE}"] = LOW <= row[f"coverage_{RULE}"] <= HIGH
        row["changed_states"] = int(((g[f"lower_{RULE}"] != g.lower_normal) | (g[f"upper_{RULE}"] != g.upper_normal)).sum())
        rows.append(row)
    return pd.DataFrame(rows).merge(cost, on=["model", "N", "epsilon"], how="left")


def cost_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per cell: the normal band's interval time per fit (first query + later ones) and the inverted band's extra."""
    q = df[(df.kind != "cell")]
    per_query = ["model", "N", "epsilon", "rep", "kind", "query"]
    normal = q[q.rule == "normal"].groupby(per_query).agg(cold=("cold_s", "first"), warm=("warm_s", "first"))
    extra = q[q.rule == RULE].groupby(per_query).agg(extra=("extra_s", "first"), tilted=("tilted_refits", "first"))
    both = normal.join(extra, how="inner").reset_index()
    rows = []
    for (model, n, eps), g in both.groupby(["model", "N", "epsilon"]):
        base = np.nansum(g.cold) + np.nansum(g.warm)
        rows.append(dict(model=model, N=n, epsilon=eps, normal_s_per_fit=base / g.rep.nunique(),
                         extra_s_per_fit=g.extra.sum() / g.rep.nunique(), tilted_refits_per_fit=g.tilted.sum() / g.rep.nunique(),
                         cost_ratio=(base + g.extra.sum()) / base))
    return pd.DataFrame(rows)


def verdict(t: pd.DataFrame, w: pd.DataFrame) -> dict:
    small = w[(w.kind == "conditional") & (w.truth <= SMALL)]
    reps = t.groupby(["model", "N", "epsilon"]).reps.min()
    out = {
        f"minimum: >= {MIN_REPS} repetitions in every cell": bool((reps >= MIN_REPS).all()),
        "a: every pair inside with normal stays inside": bool(t[t.inside_normal][f"inside_{RULE}"].all()),
        "b: strictly more pairs inside": bool(t[f"inside_{RULE}"].sum() > t.inside_normal.sum()),
        f"c: width ratio <= {WIDTH} everywhere": bool((t.width_ratio <= WIDTH).all()),
        f"d: conditionals with truth <= {SMALL}: {RULE} >= normal - {SMALL_DROP}": bool(
            small[f"covered_{RULE}"].mean() >= small.covered_normal.mean() - SMALL_DROP
        ),
        f"cost: <= {COST}x the normal band's per fit in every cell": bool((t.cost_ratio <= COST).all()),
    }
    out["detail"] = (
        f"repetitions per cell {dict(reps)}; pairs inside: normal {int(t.inside_normal.sum())}, {RULE} "
        f"{int(t[f'inside_{RULE}'].sum())} of {len(t)}; max width ratio {t.width_ratio.max():.3f}; truth <= {SMALL} "
        f"conditionals ({len(small)} states): normal {small.covered_normal.mean():.3f}, {RULE} "
        f"{small[f'covered_{RULE}'].mean():.3f}; cost ratios {t.groupby('model').cost_ratio.first().round(2).to_dict()}"
    )
    checks = [v for k, v in out.items() if k[:2] in ("a:", "b:", "c:", "d:")]
    if not out[f"minimum: >= {MIN_REPS} repetitions in every cell"]:
        out["verdict"] = "not met: unfinished (fewer repetitions than the stated minimum); no default changes"
    elif not all(checks):
        out["verdict"] = "rule fails: the default stays 'normal', 'inverted' stays an option"
    elif not out[f"cost: <= {COST}x the normal band's per fit in every cell"]:
        out["verdict"] = "rule holds, cost bound fails: 'inverted' stays an option"
    else:
        out["verdict"] = "rule holds within the cost bound: 'inverted' becomes the Markov-network default"
    return out


def clipped(w: pd.DataFrame, rules) -> pd.DataFrame:
    """Coverage and width on the states the normal band clips at 0 or at 1, and on all states, per kind (cells pooled)."""
    w = w.assign(ends=np.select([w.lower_normal <= 1e-12, w.upper_normal >= 1 - 1e-12], ["at 0", "at 1"], "inside (0, 1)"))
    rows = []
    for (model, kind, ends), g in w.groupby(["model", "kind", "ends"], sort=True):
        row = dict(model=model, kind=kind, ends=ends, states=len(g))
        for r in rules:
            row[f"coverage_{r}"] = g[f"covered_{r}"].mean()
            row[f"width_{r}"] = g[f"width_{r}"].mean()
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", default="cov14m_run")
    args = ap.parse_args(argv)
    df = pd.read_csv(results_csv(args.run))
    w = paired(df, ("normal", RULE))
    t = rule_table(w, cost_table(df))
    rules = ["normal", RULE] + (["inverted1"] if "inverted1" in set(df.rule) else [])
    c = clipped(paired(df, tuple(rules)), rules)
    t.to_csv(RESULTS / f"{args.run}_inverted.csv", index=False)
    c.to_csv(RESULTS / f"{args.run}_clipped.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(t.round(4).to_string(index=False))
        print(c.round(4).to_string(index=False))
    for k, v in verdict(t, w).items():
        print(f"{k}: {v}")
    print("\n| model | N | eps | kind | reps | queries | states | coverage: normal / inverted | mean width: normal / "
          "inverted | ratio | states changed |\n|---|---|---|---|---|---|---|---|---|---|---|")
    for r in t.itertuples():
        print(f"| {r.model} | {r.N:,} | {r.epsilon:g} | {r.kind} | {r.reps} | {r.queries} | {r.states} | "
              f"{r.coverage_normal:.3f} / {r.coverage_inverted:.3f} | {r.width_normal:.4f} / {r.width_inverted:.4f} | "
              f"{r.width_ratio:.3f} | {r.changed_states} |")


if __name__ == "__main__":
    main()
