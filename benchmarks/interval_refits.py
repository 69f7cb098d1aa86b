"""How many bootstrap refits does a query band need? An accuracy check of ``n_samples``.

One fitted model per setting (a chain of 5 ternary nodes as in coverage.py and
asia as a Markov network), ``--pool`` refits drawn once. The reference band of each
rule is the one from all refits; bands from disjoint groups of ``B`` refits are
compared with it: the mean absolute error of the endpoints as a share of the
reference width, and the mean width ratio. For every query: all states of
``P(x)`` and ``P(x | y = s)`` of ``--queries`` random query pairs.

Run:  python benchmarks/interval_refits.py          # ~5-10 min on the shared machine
Writes results/coverage_refits.csv.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from coverage import fitted_mn, random_mn_queries

from pgmpy_dp.engine import ConvergenceWarning
from pgmpy_dp.uncertainty import _answerer, band_limits, bootstrap_log_potentials

RESULTS = Path(__file__).parent / "results"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", type=int, default=240)
    ap.add_argument("--groups", nargs="+", type=int, default=[10, 20, 30, 60])
    ap.add_argument("--queries", type=int, default=4)
    args = ap.parse_args(argv)
    rows = []
    for spec, n, eps in [("chain-5", 1000, 0.5), ("asia", 10000, 1.0)]:
        rng = np.random.default_rng([14, n])
        domain, cliques, _, _, _, est = fitted_mn(spec, n, eps, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t0 = time.perf_counter()
            pool = bootstrap_log_potentials(est, args.pool, random_state=0, show_progress=False)
        per_refit = (time.perf_counter() - t0) / args.pool
        for _, x, ev in random_mn_queries(domain, cliques, rng, args.queries):
            answer = _answerer(domain, est.cliques_, est.inference_, [x], ev)
            est_p = answer(est.log_potentials_).ravel()
            answers = np.array([answer(th).ravel() for th in pool])
            for rule in ("logit", "bc", "percentile"):
                ref_lo, ref_hi = band_limits(est_p, answers, 0.95, rule)
                ref_w = np.maximum(ref_hi - ref_lo, 1e-12)
                for b in args.groups:
                    for g in range(args.pool // b):
                        lo, hi = band_limits(est_p, answers[g * b:(g + 1) * b], 0.95, rule)
                        rows.append(dict(model=spec, query=f"P({x}|{ev})", rule=rule, B=b, group=g,
                                         endpoint_error=float(np.mean((np.abs(lo - ref_lo) + np.abs(hi - ref_hi)) / (2 * ref_w))),
                                         width_ratio=float(np.mean((hi - lo) / ref_w)), seconds_per_refit=per_refit))
        print(f"{spec}: {per_refit:.2f} s per refit", flush=True)
    df = pd.DataFrame(rows)
    df.to_csv(RESULTS / "coverage_refits.csv", index=False)
    summary = df.groupby(["model", "rule", "B"])[["endpoint_error", "width_ratio"]].mean().round(3)
    print(summary.unstack("B").to_string())


if __name__ == "__main__":
    main()
