"""Recovery per variant from pipeline.py's lines: rate by n, n50 / n90 (log-linear), false edges per fit.

Run: python studies/structure_edge_rule/summarise_pipeline.py studies/structure_edge_rule/pipeline_*.jsonl
"""

import math
import sys

import pandas as pd


def n_at(ns, rates, level):
    if rates[0] >= level:
        return f"<= {ns[0]:,}"
    for a in range(len(ns) - 1):
        if rates[a] < level <= rates[a + 1]:
            f = (level - rates[a]) / (rates[a + 1] - rates[a])
            return f"{math.exp(math.log(ns[a]) + f * math.log(ns[a + 1] / ns[a])):,.0f}"
    return f"> {ns[-1]:,}"


d = pd.concat([pd.read_json(p, lines=True) for p in sys.argv[1:]])
print("| p | k | rho | variant | models | n50 | n90 | exact recovery by n | false edges per fit by n | CPU s |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (p, k, rho, v), g in d.groupby(["p", "k", "rho", "variant"]):
    c = g.groupby("n").agg(rate=("exact", "mean"), fp=("fp", "mean"), m=("model", "nunique"))
    ns, rates = list(c.index), list(c.rate)
    print(f"| {p} | {k} | {rho:g} | {v} | {c.m.min()} | {n_at(ns, rates, .5)} | {n_at(ns, rates, .9)} | "
          + " / ".join(f"{r:.1f}" for r in rates) + " | " + " / ".join(f"{x:.1f}" for x in c.fp)
          + f" | {g.cpu.mean():.2f} |")
print("\nn:", sorted(d.n.unique()))
