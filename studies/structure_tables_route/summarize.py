"""Markdown tables from compare.py's JSON lines: recovery (+- s.e.), n50 / n90, max |A - A_hat|, CPU.

Usage: python studies/structure_tables_route/summarize.py studies/structure_tables_route/results_*.jsonl
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd


def n_at(ns, rates, level):
    """Rows at which recovery first reaches ``level``, linear in log n between grid points."""
    for k in range(len(ns)):
        if rates[k] >= level:
            if k == 0:
                return f"<= {ns[0]}"
            r0, r1 = rates[k - 1], rates[k]
            f = (level - r0) / (r1 - r0)
            return f"{round(float(np.exp(np.log(ns[k - 1]) + f * (np.log(ns[k]) - np.log(ns[k - 1])))), -1):.0f}"
    return f"> {ns[-1]}"


def main(paths):
    df = pd.concat([pd.read_json(p, lines=True) for p in paths])
    g = df.groupby(["p", "rho", "route", "n"])
    cell = g.agg(models=("exact", "size"), rate=("exact", "mean"), err=("max_err", "mean"),
                 err_med=("max_err", "median"), fp=("fp", "mean"), fn=("fn", "mean"), cpu=("cpu", "mean"))
    cell["se"] = np.sqrt(cell.rate * (1 - cell.rate) / cell.models)
    print("## Exact recovery rate +- s.e. (models per cell in brackets), mean max |A - A_hat|\n")
    for (p, rho), sub in cell.groupby(level=["p", "rho"]):
        sub = sub.droplevel(["p", "rho"])
        ns = sorted(sub.index.get_level_values("n").unique())
        print(f"### p = {p}, rho = {rho}\n")
        print("| route | " + " | ".join(f"n={n}" for n in ns) + " |")
        print("|---" * (len(ns) + 1) + "|")
        for route, r in sub.groupby(level="route"):
            r = r.droplevel("route")
            row = []
            for n in ns:
                if n in r.index:
                    c = r.loc[n]
                    row.append(f"{c.rate:.2f}+-{c.se:.2f} ({int(c.models)}) / {c.err:.3f}")
                else:
                    row.append("-")
            print(f"| {route} | " + " | ".join(row) + " |")
        print()
    print("## Rows for 50% and 90% exact recovery (log-linear interpolation on the grid)\n")
    print("| p | rho | route | n50 | n90 | mean CPU s per fit (largest n) |")
    print("|---|---|---|---|---|---|")
    for (p, rho, route), r in cell.groupby(level=["p", "rho", "route"]):
        r = r.droplevel(["p", "rho", "route"])
        ns = list(r.index)
        print(f"| {p} | {rho} | {route} | {n_at(ns, list(r.rate), 0.5)} | {n_at(ns, list(r.rate), 0.9)} "
              f"| {r.cpu.iloc[-1]:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
