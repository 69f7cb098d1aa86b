"""Issue 12 (bn12h): summarise the runs of ``prior_weight="evidence"`` against the pre-stated rules.

The runs come from ``bn_accuracy.py`` with ``lik:evidence`` refitted to the default's own noisy tables
(paired). The rules are in ``benchmarks/rules/issue12_evidence.md``:

* pilot (``--rule pilot``, runs 0-4 of 9 cells, ``results/bn_accuracy_t1_runs.csv``):
  go on iff on query L1 ``lik:evidence`` is lower in >= 5 of 9 cells and significantly worse in no more
  cells than significantly better, and on joint KL and weighted CPD L1 significantly worse in <= 1 cell each;
* subset (``--rule subset``): the fresh-noise rule of that file.

    python benchmarks/bn_evidence.py --rule pilot results/bn_accuracy_t1_runs.csv

prints, per cell, the relative change of the mean against the default (``*``: beyond two paired
standard errors) for ``lik:evidence`` and any other method in the file (e.g. ``mbi``), the counts
the rule reads, and its verdict.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from bn_accuracy import paired  # noqa: E402

METRICS = ("joint_kl", "cpd_l1_weighted", "query_l1")


def change_table(runs: pd.DataFrame, method: str, baseline: str = "default") -> pd.DataFrame:
    """Per cell and metric: relative change of the mean against ``baseline``, and its significance."""
    rows = None
    for metric in METRICS:
        p = paired(runs, method, baseline, metric)
        p[metric] = 100 * p["diff"] / p["baseline"]
        p[metric + "_sig"] = (p["diff"] > 2 * p["se"]).astype(int) - (p["diff"] < -2 * p["se"]).astype(int)
        p = p[["network", "records", "epsilon", "runs", metric, metric + "_sig"]]
        rows = p if rows is None else rows.merge(p, on=["network", "records", "epsilon", "runs"])
    return rows


def markdown(table: pd.DataFrame, method: str) -> str:
    lines = [f"| network | N | eps | runs | {method}: joint KL | weighted CPD L1 | query L1 |", "|---|---:|---:|---:|---:|---:|---:|"]
    for _, r in table.iterrows():
        cells = [f"{r[m]:+.1f}%{'*' if r[m + '_sig'] else ''}" for m in METRICS]
        lines.append(f"| {r.network} | {r.records:.0e} | {r.epsilon:g} | {r.runs} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def counts(table: pd.DataFrame) -> dict:
    """Per metric: cells, lower mean, significantly better, significantly worse."""
    return {m: dict(cells=len(table), lower=int((table[m] < 0).sum()), better=int((table[m + "_sig"] < 0).sum()),
                    worse=int((table[m + "_sig"] > 0).sum())) for m in METRICS}


def pilot_verdict(c: dict) -> tuple[bool, str]:
    q = c["query_l1"]
    ok_q = q["lower"] >= 5 and q["worse"] <= q["better"]
    ok_kl, ok_cpd = c["joint_kl"]["worse"] <= 1, c["cpd_l1_weighted"]["worse"] <= 1
    text = (f"(i) query L1: lower in {q['lower']}/{q['cells']} (need >= 5), significantly worse {q['worse']} vs better "
            f"{q['better']}: {'holds' if ok_q else 'fails'}; (ii) significantly worse: joint KL {c['joint_kl']['worse']}, "
            f"weighted CPD L1 {c['cpd_l1_weighted']['worse']} (each <= 1): {'holds' if ok_kl and ok_cpd else 'fails'}")
    return ok_q and ok_kl and ok_cpd, text


def subset_verdict(c: dict) -> tuple[bool, str]:
    ok_a = all(c[m]["worse"] == 0 for m in METRICS)
    ok_b = all(2 * c[m]["lower"] >= c[m]["cells"] for m in METRICS)
    text = ("(a) significantly worse cells: " + ", ".join(f"{m} {c[m]['worse']}" for m in METRICS)
            + f" (need 0 each): {'holds' if ok_a else 'fails'}; (b) lower mean: "
            + ", ".join(f"{m} {c[m]['lower']}/{c[m]['cells']}" for m in METRICS)
            + f" (need at least half each): {'holds' if ok_b else 'fails'}")
    return ok_a and ok_b, text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--rule", choices=["pilot", "subset"], required=True)
    args = parser.parse_args(argv)
    runs = pd.concat([pd.read_csv(f) for f in args.runs], ignore_index=True)
    runs = runs[runs.method != "non-private MLE"]
    table = change_table(runs, "lik:evidence")
    print(markdown(table, "lik:evidence"))
    c = counts(table)
    print(c)
    ok, text = (pilot_verdict if args.rule == "pilot" else subset_verdict)(c)
    print(f"\n{args.rule} rule: {'PASSES' if ok else 'FAILS'}: {text}\n")
    for other in [m for m in dict.fromkeys(runs.method) if m not in ("default", "lik:evidence")]:
        print(markdown(change_table(runs, other), other))
        print(counts(change_table(runs, other)))
        # where the other method stands against lik:evidence, too
        print(markdown(change_table(runs, other, baseline="lik:evidence"), f"{other} vs lik:evidence"))


if __name__ == "__main__":
    main()
