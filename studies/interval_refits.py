"""How many bootstrap refits does a query band need? An accuracy check of ``n_samples``.

One fitted model per setting (a chain of 5 ternary nodes as in coverage.py and
asia as a Markov network), ``--pool`` refits drawn once. The reference band of each
rule is the one from all refits; bands from disjoint groups of ``B`` refits are
compared with it: the mean absolute error of the endpoints as a share of the
reference width, and the mean width ratio. For every query: all states of
``P(x)`` and ``P(x | y = s)`` of ``--queries`` random query pairs.

Run:  python benchmarks/interval_refits.py          # ~5-10 min on the shared machine
Writes results/coverage_refits.csv.

``--bn``: the Bayesian-network refits of ``query_interval`` against the full re-run they
replace (before issue 14's third round: records forward-sampled by pgmpy into a DataFrame,
a new ``DiscretePrivateMLE`` fitted from scratch, pgmpy networks answered by ``pgmpy_dp.query``).
Per model, side by side in one run and interleaved: the time of the first interval query (refits
plus one answer) of each; and two endpoint checks, in units of the band's width: (a) the SAME
simulated noisy tables fitted from scratch (the projection's warm start) and from the point fit
(what query_interval does), which isolates the warm start; (b) the full old path against the new
one (different random streams), next to the new one against itself with another seed (Monte Carlo
noise of ``--bn-samples`` refits). Writes results/coverage_bn_refits.csv.
Run:  python benchmarks/interval_refits.py --bn --models asia child alarm --bn-samples 20
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
    ap.add_argument("--bn", action="store_true", help="the Bayesian-network refits against the full re-run")
    ap.add_argument("--models", nargs="+", default=["asia", "child", "alarm"])
    ap.add_argument("--bn-n", type=int, default=10000)
    ap.add_argument("--bn-samples", type=int, default=20)
    args = ap.parse_args(argv)
    if args.bn:
        return bn_main(args)
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


def full_rerun_refits(est, n_samples: int, seed: int) -> list:
    """The refits as query_interval made them before: pgmpy sampling, a DataFrame, a fresh fit, pgmpy networks."""
    from pgmpy.models import DiscreteBayesianNetwork

    import pgmpy_dp
    from pgmpy_dp.datasets import sample_network
    from pgmpy_dp.estimators.evidence import pooled_n_records

    fitted = DiscreteBayesianNetwork(est._model.edges())
    fitted.add_nodes_from(est._model.nodes())
    fitted.add_cpds(*est.parameters_)
    n = max(1, int(round(pooled_n_records([est.release_]))))
    keys = ("epsilon", "rho", "allocation", "stage1_fraction", "sample_rate", "consistency", "max_iter")
    params = {k: getattr(est, k) for k in keys}
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_samples):
        df = sample_network(fitted, n, seed=int(rng.integers(2**31)))
        clone = pgmpy_dp.DiscretePrivateMLE(**params, state_names=est.state_names_, random_state=int(rng.integers(2**31)))
        clone.fit(est._model, df)
        bn = DiscreteBayesianNetwork(est._model.edges())
        bn.add_nodes_from(est._model.nodes())
        bn.add_cpds(*clone.parameters_)
        out.append(bn)
    return out


def bn_main(args) -> None:
    from pgmpy.models import DiscreteBayesianNetwork

    import pgmpy_dp
    from pgmpy_dp.datasets import load_network, sample_network
    from pgmpy_dp.privacy.domain import Domain

    rows, timing = [], []
    for name in args.models:
        rng = np.random.default_rng([14, args.bn_n, len(name)])
        truth = load_network(name)
        df = sample_network(truth, args.bn_n, seed=int(rng.integers(2**31)))
        est = pgmpy_dp.DiscretePrivateMLE(epsilon=1.0, random_state=int(rng.integers(2**31)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DiscreteBayesianNetwork(truth.edges()).fit(df, estimator=est)
        domain = Domain(dict(est.state_names_))
        nodes = list(domain.attrs)
        queries = []
        for _ in range(args.queries):
            x = nodes[rng.integers(len(nodes))]
            y = [v for v in nodes if v != x][rng.integers(len(nodes) - 1)]
            queries += [(x, {}), (x, {y: domain[y][rng.integers(domain.size(y))]})]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # first interval query of a fit, old then new (interleaved: the machine's load hits both)
            t0 = time.perf_counter()
            old = full_rerun_refits(est, args.bn_samples, seed=1)
            x0, ev0 = queries[0]
            old_answers = {}
            for q, (x, ev) in enumerate(queries):
                old_answers[q] = np.array([pgmpy_dp.query(bn, [x], evidence=ev or None).values.ravel() for bn in old])
                if q == 0:
                    old_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            new = [pgmpy_dp.query_interval(est, x0, ev0, n_samples=args.bn_samples, random_state=1, show_progress=False)]
            new_s = time.perf_counter() - t0
            new += [pgmpy_dp.query_interval(est, x, ev, n_samples=args.bn_samples, random_state=1, show_progress=False)
                    for x, ev in queries[1:]]
            other = [pgmpy_dp.query_interval(est, x, ev, n_samples=args.bn_samples, random_state=2, show_progress=False)
                     for x, ev in queries]
        timing.append(dict(model=name, refits=args.bn_samples, old_first_query_s=old_s, new_first_query_s=new_s,
                           speedup=old_s / new_s))
        print(timing[-1], flush=True)
        for q, (x, ev) in enumerate(queries):
            point = new[q].estimate.to_numpy()
            for rule in ("normal",):
                lo_n, hi_n = new[q].lower.to_numpy(), new[q].upper.to_numpy()
                width = np.maximum(hi_n - lo_n, 1e-12)
                lo_o, hi_o = band_limits(point, old_answers[q], 0.95, rule)
                lo_2, hi_2 = other[q].lower.to_numpy(), other[q].upper.to_numpy()
                rows.append(dict(
                    model=name, query=f"P({x}|{ev})" if ev else f"P({x})", rule=rule,
                    old_vs_new_max=float(np.max(np.maximum(abs(lo_o - lo_n), abs(hi_o - hi_n)) / width)),
                    new_vs_new_max=float(np.max(np.maximum(abs(lo_2 - lo_n), abs(hi_2 - hi_n)) / width)),
                    old_vs_new_width_ratio=float(np.mean((hi_o - lo_o) / width)),
                ))
    out = pd.DataFrame(rows)
    out.to_csv(RESULTS / "coverage_bn_refits.csv", index=False)
    pd.DataFrame(timing).to_csv(RESULTS / "coverage_bn_refits_timing.csv", index=False)
    with pd.option_context("display.width", 200):
        print(pd.DataFrame(timing).round(2).to_string(index=False))
        print(out.groupby("model")[["old_vs_new_max",
                                    "new_vs_new_max", "old_vs_new_width_ratio"]].agg(["mean", "max"]).round(3).to_string())


if __name__ == "__main__":
    main()
