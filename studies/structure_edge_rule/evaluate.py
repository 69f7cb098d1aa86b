"""Exact recovery of candidate edge rules on the collected scores (collect.py), without refitting.

A fit recovers the graph under cut-off c iff every non-edge scores below c and every edge above.
Rules: the Bonferroni normal quantile at a family-wise alpha over the m pairs, alpha either fixed or
shrinking with the release's public-noise n estimate. Prints per (p, k, rho) the recovery rate by n,
n50 (log-linear) and the false positives per fit.

Run: python studies/structure_edge_rule/evaluate.py studies/structure_edge_rule/scores_*.jsonl
"""

import json
import math
import sys
from collections import defaultdict

import numpy as np
from scipy.stats import norm

HALF_NORMAL_MEDIAN = float(norm.isf(0.25))


def rules():
    yield "alpha 0.2", lambda n, m: 0.2
    yield "alpha 0.05", lambda n, m: 0.05
    for n0 in (1000, 3000, 10000):
        yield f"0.2 min(1, {n0}/n)", lambda n, m, n0=n0: 0.2 * min(1.0, n0 / n)
    for n0 in (1000, 3000):
        yield f"0.2 sqrt({n0}/n)", lambda n, m, n0=n0: 0.2 * min(1.0, math.sqrt(n0 / n))
    for n0 in (1000, 2000):
        yield f"0.2 min(1, {n0}/n)^2", lambda n, m, n0=n0: 0.2 * min(1.0, n0 / n) ** 2


def n50(ns, rates, level=0.5):
    if rates[0] >= level:
        return f"<={ns[0]}"
    for a in range(len(ns) - 1):
        if rates[a] < level <= rates[a + 1]:
            f = (level - rates[a]) / (rates[a + 1] - rates[a])
            return f"{math.exp(math.log(ns[a]) + f * math.log(ns[a + 1] / ns[a])):,.0f}"
    return f">{ns[-1]}"


def main(paths):
    fits = [json.loads(line) for path in paths for line in open(path)]
    table = defaultdict(lambda: defaultdict(list))
    for f in fits:
        s = np.asarray(f["score"])
        edge = np.asarray(f["edge"], dtype=bool)
        spread = min(1.0, float(np.median(s)) / HALF_NORMAL_MEDIAN)
        s = s / max(spread, 1e-12)
        m = len(s)
        for name, rule in rules():
            c = float(norm.isf(rule(f["n_hat"], m) / (2 * m)))
            fp = int(np.sum(s[~edge] > c))
            fn = int(np.sum(s[edge] <= c))
            table[f["p"], f["k"], f["rho"], name][f["n"]].append((fp == 0 and fn == 0, fp, fn))
    cells = sorted({key[:3] for key in table})
    for cell in cells:
        print(f"\n## p={cell[0]} k={cell[1]} rho={cell[2]}")
        for name, _ in rules():
            by_n = table[(*cell, name)]
            ns = sorted(by_n)
            rates = [np.mean([r[0] for r in by_n[n]]) for n in ns]
            fps = [np.mean([r[1] for r in by_n[n]]) for n in ns]
            fns = [np.mean([r[2] for r in by_n[n]]) for n in ns]
            print(f"{name:22s} n50 {n50(ns, rates):>8s} n90 {n50(ns, rates, 0.9):>8s} | rate "
                  + " ".join(f"{r:.2f}" for r in rates) + " | fp " + " ".join(f"{x:.1f}" for x in fps)
                  + " | fn " + " ".join(f"{x:.1f}" for x in fns))


if __name__ == "__main__":
    main(sys.argv[1:])
