"""Judge a CGM-EM variant against the default on an ``mn_accuracy.py`` run (issue 13, seventh round).

Reads ``results/<run>.csv`` (one row per fit) and applies the adoption rule fixed before the run
(``benchmarks/rules/issue13_round7.md``): (a) in no cell is the variant's mean KL above the default's by more
than two paired standard errors (paired over the cell's fits, same release); (b) the variant's
mean KL is below naive MLE's in every cell; (c) the variant's total seconds over the grid are at
most the default's, and it is at or below mbi-md's mean seconds in at least as many cells as the
default. Prints the verdict and a markdown table per cell.

Run:  python benchmarks/mn_adoption_rule.py mn_accuracy_cgm13g --variant cgm-em-recmax
      python benchmarks/mn_adoption_rule.py mn_accuracy_em13j --variant cgm-em-anderson --clock cpu_seconds   # round 8
      python benchmarks/mn_adoption_rule.py mn_accuracy_em13n --variant cgm-em-tol --clock cpu_seconds --rule round11

``--rule round11`` (benchmarks/rules/issue13_round11.md) replaces part (a)'s per-cell two-SE test, which
with 4 fits a cell flags a change that does nothing in about 7% of cells (1.3 of 18 expected), by
(a1) a one-sided paired t-test per cell at level 0.05 / cells (Bonferroni) and (a2) a one-sided
t-test, at level 0.05, of the mean over cells of the paired log KL ratio (variant / default): no cell
clearly worse, and no small loss spread over the grid.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

RESULTS = Path(__file__).parent / "results"
KEYS = ["model", "N", "epsilon"]
FIT = KEYS + ["population", "replication"]


def judge(
    df: pd.DataFrame, variant: str, default: str = "cgm-em", mbi: str = "mbi-md", clock: str = "seconds",
    rule: str = "round7",
) -> tuple[pd.DataFrame, dict]:
    """Per-cell table and the three parts of the rule; ``clock`` is the column part (c) reads
    (``"seconds"``, wall-clock, as in the seventh round, or ``"cpu_seconds"``, the eighth round's);
    ``rule="round11"`` judges part (a) by the Bonferroni and grid-level tests of the module docstring."""
    by = {m: df[df["method"] == m].set_index(FIT) for m in (default, variant, "naive-mle", mbi)}
    for m in by:
        by[m] = by[m].assign(seconds=by[m][clock])
    diff = (by[variant]["kl"] - by[default]["kl"]).groupby(level=[0, 1, 2])
    cells = pd.DataFrame({
        "kl_naive": by["naive-mle"]["kl"].groupby(level=[0, 1, 2]).mean(),
        "kl_default": by[default]["kl"].groupby(level=[0, 1, 2]).mean(),
        "kl_variant": by[variant]["kl"].groupby(level=[0, 1, 2]).mean(),
        "kl_mbi": by[mbi]["kl"].groupby(level=[0, 1, 2]).mean(),
        "diff": diff.mean(), "diff_se": diff.std(ddof=1) / np.sqrt(diff.size()), "fits": diff.size(),
        "s_naive": by["naive-mle"]["seconds"].groupby(level=[0, 1, 2]).mean(),
        "s_default": by[default]["seconds"].groupby(level=[0, 1, 2]).mean(),
        "s_variant": by[variant]["seconds"].groupby(level=[0, 1, 2]).mean(),
        "s_mbi": by[mbi]["seconds"].groupby(level=[0, 1, 2]).mean(),
    })
    log_ratio = (np.log(by[variant]["kl"]) - np.log(by[default]["kl"])).groupby(level=[0, 1, 2])
    cells["log_ratio"] = log_ratio.mean()
    dof = cells["fits"] - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        t_cell = cells["diff"] / cells["diff_se"]
    cells["p_worse"] = stats.t.sf(t_cell, dof)  # one-sided: the variant's KL above the default's
    cells["p_better"] = stats.t.cdf(t_cell, dof)
    if rule == "round11":
        level = 0.05 / len(cells)
        cells["worse"] = cells["p_worse"] < level
        cells["better"] = cells["p_better"] < level
    else:
        cells["worse"] = cells["diff"] > 2 * cells["diff_se"]
        cells["better"] = cells["diff"] < -2 * cells["diff_se"]
    cells["variant_below_naive"] = cells["kl_variant"] < cells["kl_naive"]
    cells["default_le_mbi_time"] = cells["s_default"] <= cells["s_mbi"]
    cells["variant_le_mbi_time"] = cells["s_variant"] <= cells["s_mbi"]
    total_default, total_variant = by[default]["seconds"].sum(), by[variant]["seconds"].sum()
    parts = {
        "a_cells_significantly_worse": int(cells["worse"].sum()),
        "a_cells_significantly_better": int(cells["better"].sum()),
        "b_cells_below_naive": int(cells["variant_below_naive"].sum()),
        "cells": len(cells),
        "c_total_seconds_default": float(total_default),
        "c_total_seconds_variant": float(total_variant),
        "c_cells_le_mbi_default": int(cells["default_le_mbi_time"].sum()),
        "c_cells_le_mbi_variant": int(cells["variant_le_mbi_time"].sum()),
        "mean_kl_ratio": float((cells["kl_variant"] / cells["kl_default"]).mean()),
        "mean_paired_diff": float(cells["diff"].mean()),
    }
    parts["a"] = parts["a_cells_significantly_worse"] == 0
    if rule == "round11":
        lr = cells["log_ratio"].to_numpy()
        se = lr.std(ddof=1) / np.sqrt(lr.size)
        parts["a2_mean_log_kl_ratio"] = float(lr.mean())
        parts["a2_se"] = float(se)
        parts["a2_p_worse"] = float(stats.t.sf(lr.mean() / se, lr.size - 1))
        parts["a2"] = parts["a2_p_worse"] >= 0.05
        parts["a"] = parts["a"] and parts["a2"]
    parts["b"] = parts["b_cells_below_naive"] == parts["cells"]
    parts["c"] = (total_variant <= total_default) and parts["c_cells_le_mbi_variant"] >= parts["c_cells_le_mbi_default"]
    parts["adopt"] = parts["a"] and parts["b"] and parts["c"]
    return cells.reset_index(), parts


def markdown(cells: pd.DataFrame, name: str) -> str:
    head = (f"| model | N | eps | naive MLE | default | {name} | mbi MD | {name} - default (SE) | naive s | default s | "
            f"{name} s | mbi s | default/mbi time | {name}/mbi time | {name}/naive time |")
    lines = [head, "|---|---:|---:|" + "---:|" * 12]
    for r in cells.itertuples():
        d = f"{r.diff:+.3g} ({r.diff_se:.2g})"
        d = f"**{d}**" if (r.worse or r.better) else d
        lines.append(
            f"| {r.model} | {r.N:.0e} | {r.epsilon:g} | {r.kl_naive:.4g} | {r.kl_default:.4g} | {r.kl_variant:.4g} | "
            f"{r.kl_mbi:.4g} | {d} | {r.s_naive:.2f} | {r.s_default:.2f} | {r.s_variant:.2f} | {r.s_mbi:.2f} | "
            f"{r.s_default / r.s_mbi:.2f}x | {r.s_variant / r.s_mbi:.2f}x | {r.s_variant / r.s_naive:.1f}x |"
        )
    return "\n".join(lines).replace("e+04", "e4").replace("e+05", "e5").replace("e+06", "e6")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="name of the run's CSV in results/, without .csv")
    parser.add_argument("--variant", default="cgm-em-recmax")
    parser.add_argument("--clock", choices=["seconds", "cpu_seconds"], default="seconds",
                        help="the time column of part (c): wall-clock (round 7) or process CPU (round 8)")
    parser.add_argument("--rule", choices=["round7", "round11"], default="round7",
                        help="part (a): two paired SEs per cell (rounds 7-10) or Bonferroni per cell plus a grid-level test (round 11)")
    args = parser.parse_args(argv)
    cells, parts = judge(pd.read_csv(RESULTS / f"{args.run}.csv"), args.variant, clock=args.clock, rule=args.rule)
    print(f"clock: {args.clock}")
    print(markdown(cells, args.variant.removeprefix("cgm-em-")))
    for k, v in parts.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
