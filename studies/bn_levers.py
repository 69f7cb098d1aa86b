"""Summary of the fifth round of issue 12: per-family prior weights and measuring only the maximal families.

Reads the runs of ``bn_accuracy.py`` (all paired by run: seed ``1000 + r``) and prints the tables of
``docs/bayesian.md``:

* ``r1``: the default and ``lik:per-clique`` (refitted to the default's tables), 5 runs on the pilot cells;
* ``r2``: ``tables="maximal"`` with the dropped families read off their hosts (``maximal-host``), 5 runs;
* ``r3``, ``r4``: the default (``default`` in r3, ``all-tables`` in r4: one table per family; r4 ran while
  ``tables="maximal"`` was briefly the default, see docs/bayesian.md) and ``maximal``, 10 runs;
* ``r5``: the two halves of the per-clique weights (``lik:per-clique-lower`` / ``-raise``), 5 runs;

and D-Ind from the grid's files (``g1``, ``g2``, ``n7``, ``m6``, ``n6``: the same seeds and samples).
Writes ``results/bn_levers.csv`` (per cell and metric: the default's mean, the paired difference of
``maximal`` and its standard error). Commands that produced the runs (two processes at a time, ``nice -n 5``,
each ``--out`` a partial file then merged):

    python bn_accuracy.py --networks hepar2 --records 10000 --epsilons 0.1 --runs 5 --methods default lik:per-clique
    python bn_accuracy.py --networks insurance --records 10000 --epsilons 0.1 0.5 --runs 5 --methods default lik:per-clique
    python bn_accuracy.py --networks sachs --records 10000 --epsilons 0.1 0.5 3 --runs 5 --methods default lik:per-clique
    python bn_accuracy.py --networks alarm --records 10000 --epsilons 0.1 1 --runs 5 --methods default lik:per-clique
    python bn_accuracy.py --networks child --records 100000 --epsilons 0.5 --runs 5 --methods default lik:per-clique
    (r2: the same cells with --methods maximal maximal+per-clique at commit d5fbd55, renamed maximal-host*)
    python bn_accuracy.py --networks alarm --records 10000 --runs 10 --methods default maximal
    python bn_accuracy.py --networks hepar2 --records 10000 --epsilons 0.1 --runs 10 --methods default maximal
    python bn_accuracy.py --networks insurance --records 10000 --epsilons 0.1 0.5 1 2 --runs 10 --methods default maximal
    python bn_accuracy.py --networks asia sachs child --records 10000 --runs 10 --methods default maximal
    python bn_accuracy.py --networks child --records 100000 --epsilons 0.5 --runs 10 --methods default maximal
    python bn_accuracy.py --networks sachs --records 100000 --runs 10 --methods default maximal
    python bn_accuracy.py --networks alarm --records 100000 --epsilons 0.1 --runs 10 --methods default maximal
    (r4, --methods all-tables maximal on hepar2 1e4 eps >= 0.5, insurance 1e4 eps 3
     and 1e5, asia 1e5, child 1e5 eps != 0.5, alarm 1e5 eps >= 0.5, hepar2 1e5: the cells that finished)
    python bn_accuracy.py --networks sachs alarm --records 10000 --epsilons 0.1 --runs 5 \\
        --methods default lik:per-clique-lower lik:per-clique-raise
    python bn_levers.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bn_accuracy import paired, win_counts

RESULTS = Path(__file__).parent / "results"
KEYS = ["network", "records", "epsilon", "run"]
METRICS = ["joint_kl", "cpd_l1_weighted", "query_l1"]


def _read(tags) -> pd.DataFrame:
    files = [RESULTS / f"bn_accuracy_{t}_runs.csv" for t in tags]
    return pd.concat([pd.read_csv(f) for f in files if f.exists()], ignore_index=True)


def change_table(runs: pd.DataFrame, method: str, baseline: str) -> str:
    """Markdown: per cell, the baseline's mean, the method's, and the relative change (bold: beyond two paired se)."""
    parts = {m: paired(runs, method, baseline, m) for m in METRICS}
    lines = ["| network | N | eps | runs | " + " | ".join(METRICS) + " |", "|---|---:|---:|---:|" + "---|" * len(METRICS)]
    for i, cell in parts[METRICS[0]].iterrows():
        out = []
        for m in METRICS:
            p = parts[m].iloc[i]
            rel = f"{100 * p['diff'] / p['baseline']:+.1f}%"
            if abs(p["diff"]) > 2 * p["se"]:
                rel = f"**{rel}**"
            out.append(f"{p['baseline']:.3g} -> {p['baseline'] + p['diff']:.3g} ({rel})")
        lines.append(f"| {cell.network} | {cell.records:.0e} | {cell.epsilon:g} | {cell.runs} | " + " | ".join(out) + " |")
    return "\n".join(lines)


def main() -> None:
    pd.set_option("display.width", 200)
    pilot = _read(["r1", "r2", "r5"])
    pilot = pilot[pilot.method != "non-private MLE"].drop_duplicates(["network", "records", "epsilon", "method", "run"])
    for method in ("lik:per-clique", "maximal-host", "lik:per-clique-lower", "lik:per-clique-raise"):
        if (pilot.method == method).any():
            print(f"\n{method} against the default of its runs (paired):\n" + change_table(pilot, method, "default"))
            print(win_counts(pilot, method, "default").to_string(index=False))
    grid = _read(["r3", "r4"])
    grid = grid.assign(method=grid.method.replace({"all-tables": "default"}))
    grid = grid[grid.method.isin(["default", "maximal"])]
    ran = grid[grid.method == "maximal"].set_index(KEYS).index
    both = ran.intersection(grid[grid.method == "default"].set_index(KEYS).index)
    grid = grid[grid.set_index(KEYS).index.isin(both)]
    dind = _read(["g1", "g2", "n7", "m6", "n6"])
    dind = dind[(dind.method == "D-Ind") & dind.set_index(KEYS).index.isin(both)].drop_duplicates(KEYS)
    runs = pd.concat([grid, dind], ignore_index=True)
    print(f"\ntables='maximal' against the default (paired), {len(both)} runs:")
    print(change_table(runs, "maximal", "default"))
    print(win_counts(runs, "maximal", "default").to_string(index=False))
    rows = [win_counts(runs, m, "D-Ind").assign(method=m) for m in ("default", "maximal")]
    print("\nagainst D-Ind on the same runs:")
    print(pd.concat(rows).sort_values(["metric", "method"], kind="stable").to_string(index=False))
    for method in ("default", "maximal"):
        for m in METRICS:
            p = paired(runs, method, "D-Ind", m)
            worse = p[p["diff"] > 2 * p["se"]]
            if len(worse):
                print(f"cells where D-Ind's {m} is significantly lower than {method}'s:")
                print(worse.assign(change=100 * worse["diff"] / worse["baseline"]).to_string(index=False))
    # the second target: epsilon 1 against D-Ind at epsilon 2, per (network, N)
    means = runs.groupby(["network", "records", "epsilon", "method"])[["query_l1", "cpd_l1_weighted", "joint_kl"]].mean()
    print("\nat epsilon 1 / D-Ind at epsilon 2 (below 1: target met):")
    for (name, n), _ in runs.groupby(["network", "records"]):
        try:
            a, b = means.loc[(name, n, 1.0, "maximal")], means.loc[(name, n, 2.0, "D-Ind")]
            c = means.loc[(name, n, 1.0, "default")]
        except KeyError:
            continue
        print(f"{name:9s} {n:.0e}: " + ", ".join(f"{m} maximal {a[m] / b[m]:.2f}, default {c[m] / b[m]:.2f}" for m in a.index))
    # mbi ran on the default's noisy tables: against maximal it is paired by sample and seed only
    mbi = _read(["g1", "g2", "g3", "m6", "n6"])
    mbi = mbi[(mbi.method == "mbi") & mbi.set_index(KEYS).index.isin(both)].drop_duplicates(KEYS)
    runs = pd.concat([runs, mbi], ignore_index=True)
    rows = [win_counts(runs, m, "mbi").assign(method=m) for m in ("default", "maximal")]
    print("\nagainst mbi (fitted to the default's tables) on the same runs:")
    print(pd.concat(rows).sort_values(["metric", "method"], kind="stable").to_string(index=False))
    for method in ("default", "maximal"):
        p = paired(runs, method, "mbi", "query_l1")
        worse = p[p["diff"] > 2 * p["se"]]
        print(f"cells where mbi's query L1 is significantly lower than {method}'s:")
        print(worse.assign(change=100 * worse["diff"] / worse["baseline"]).to_string(index=False))
    table = pd.concat([paired(runs, "maximal", "default", m).assign(metric=m) for m in METRICS])
    table.to_csv(RESULTS / "bn_levers.csv", index=False)


if __name__ == "__main__":
    main()
