"""Issue 14 (after cov14aa, a pilot on SEEN seeds): how noisy is the response band's per-query slope?

cov14aa found the response band over-widening asia-bn's conditionals (median slope 0.999, mean factor 1.07): the
slope ``k`` of ``response_factor`` comes from ``B`` second-level refits and is clipped to [0, 1], so where the
estimator does not shrink, half the queries read 1 and the rest read below 1 by noise. This pilot re-runs
``coverage_calibrated.py``'s repetitions (cov14aa's seed 1540, so SEEN) with ``interval="response"``, records
each query's first- and second-level answers (by wrapping ``response_factor``), and compares per query the slope,
its standard error (least squares through the means, pooled over states, ``B (states - 1) - 1`` degrees of
freedom: the states of an answer sum to 1) and the factor at the slope's one-sided 90% upper confidence limit
(clipped to 1), which leaves the band alone where the slope cannot be told from 1.

Run:  python benchmarks/response_slope_error.py --cells asia-bn:10000:1 er-8:1000:1 --reps 15 --out resp14_ucl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).parent))
import coverage_calibrated  # noqa: E402

from pgmpy_dp import uncertainty  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def slope_and_error(first: np.ndarray, second: np.ndarray) -> tuple[float, float, int]:
    """Least-squares slope of ``second`` on ``first`` through the per-state means, its standard error, its dof."""
    ok = np.all(np.isfinite(first), axis=0) & np.all(np.isfinite(second), axis=0)
    x = first[:, ok] - first[:, ok].mean(axis=0)
    y = second[:, ok] - second[:, ok].mean(axis=0)
    sxx = float(np.sum(x * x))
    if not sxx > 0:
        return 1.0, 0.0, 1
    k = float(np.sum(x * y)) / sxx
    dof = max(1, len(first) * max(1, int(ok.sum()) - 1) - 1)
    resid = y - k * x
    return k, float(np.sqrt(np.sum(resid * resid) / dof / sxx)), dof


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", nargs="+", default=["asia-bn:10000:1", "er-8:1000:1"])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1540)
    ap.add_argument("--out", default="resp14_ucl")
    args = ap.parse_args(argv)
    seen = []
    real = uncertainty.response_factor

    def recording(first, second):
        seen.append((np.asarray(first, dtype=float), np.asarray(second, dtype=float).reshape(np.shape(first))))
        return real(first, second)

    uncertainty.response_factor = recording
    run = argparse.Namespace(seed=args.seed, queries=3, bn_samples=30, samples=30, rules=["response"], level=0.95,
                             worlds=15, inner=15)
    rows = []
    for rep in range(args.reps):
        for cell in args.cells:
            spec, n, eps = cell.split(":")
            seen.clear()
            out = pd.DataFrame(coverage_calibrated.library_rep(spec, int(n), float(eps), rep, run))
            queries = out.drop_duplicates("query")[["kind", "query"]].to_numpy()
            for (kind, query), (first, second) in zip(queries, seen):
                k, se, dof = slope_and_error(first, second)
                ucl = min(1.0, max(0.0, k + stats.t.ppf(0.9, dof) * se))
                b = len(first)
                factor = lambda s: float(np.sqrt(((2 - s) ** 2 + 1 / b) / (1 + 1 / b)))  # noqa: E731
                rows.append({"model": spec, "rep": rep, "kind": kind, "query": query, "k": k, "se": se,
                             "factor": factor(min(max(k, 0.0), 1.0)), "factor_ucl": factor(ucl)})
            print(f"rep={rep} {cell}", flush=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(RESULTS / f"{args.out}.csv", index=False)
    print(frame.groupby(["model", "kind"]).agg(
        queries=("k", "size"), k_median=("k", "median"), se_median=("se", "median"), factor_mean=("factor", "mean"),
        factor_ucl_mean=("factor_ucl", "mean"), widened=("factor", lambda f: (f > 1.0001).mean()),
        widened_ucl=("factor_ucl", lambda f: (f > 1.0001).mean())).round(3).to_string())


if __name__ == "__main__":
    main()
