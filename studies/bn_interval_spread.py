"""Why do the Bayesian-network bands under-cover? (issue 14: child-bn marginals 0.929, alarm-bn conditionals 0.925)

For one TRUE bnlearn network, every marginal ``P(x)`` and a seeded random set of conditionals
``P(x | y = s)``, this measures the fitted answer's spread and bias under three simulations,
the Bayesian-network counterpart of ``benchmarks/interval_spread.py``:

- ``sd_true``, ``bias_true`` (i): the estimator's real sampling law: ``R`` repetitions of
  (N records from the TRUE network, ``DiscretePrivateMLE(epsilon).fit``), as
  ``benchmarks/coverage.py`` makes them.
- ``sd_boot``, ``bias_boot`` (ii): what ``query_interval`` uses: ``B`` refits of one fit by
  ``uncertainty._bayesian_refits`` (records drawn from the fit, fresh noise, the fit's own
  consistency step), the refits' spread and mean shift from the fit, averaged over ``M`` fits
  (the first ``M`` of (i)).
- ``sd_full`` (iv): the full estimator (``sample_network`` of the fitted network, then
  ``DiscretePrivateMLE(epsilon).fit`` with fresh noise) on records drawn from the fit,
  averaged over the same ``M`` fits: (iv) against (ii) checks that the refits reproduce the
  estimator; (i) against (iv) measures "the fit is a different model".

Per state it also writes, over the ``M`` fits, the mean of ``z**2`` with
``z = (truth - centre) / s_hat`` and the normal band's centre ``2 p_hat - mean(refits)``: with a
correct band ``E z**2`` is about ``(B - 1)/(B - 3) * (1 + 1/B)`` (1.14 at B = 30), and the
coverage the moments predict: ``P(|centre - truth| <= t * sqrt(1 + 1/B) * sd_boot)`` for a normal
centre with the residual bias ``bias_true - bias_boot`` and spread ``sd_true * sqrt(1 + 1/B)``.

``results/bn_spread_child.csv`` and ``bn_spread_alarm.csv`` were written by a first version that took the
band's multiplier at the one-sided 95% quantile: their ``coverage_fits`` column was wrong and is dropped,
``coverage_predicted`` was recomputed from the saved moments with the two-sided multiplier (the moments
and ``mean_z2`` do not depend on it); ``*_fits.csv.gz`` (per fit) did not exist yet.

Run:  python benchmarks/bn_interval_spread.py --network child --reps 120 --fits 8 --refits 30 --out bn_spread_child
      python benchmarks/bn_interval_spread.py --network alarm --reps 120 --fits 8 --refits 30 --out bn_spread_alarm
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

import pgmpy_dp
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.uncertainty import _answerer, _band_t, _bayesian_refits, _bn_families

from interval_spread import answers, summary  # noqa: E402  (benchmarks/ on sys.path when run as a script)

RESULTS = Path(__file__).parent / "results"


def fit(truth_bn, network, n, eps, seed):
    """N records from ``network``, fitted by DiscretePrivateMLE's defaults on the TRUE DAG."""
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import sample_network

    rng = np.random.default_rng(seed)
    df = sample_network(network, n, seed=int(rng.integers(2**31)))
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=int(rng.integers(2**31)), show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DiscreteBayesianNetwork(truth_bn.edges()).fit(df, estimator=est)
    return est


def fitted_network(est):
    from pgmpy.models import DiscreteBayesianNetwork

    bn = DiscreteBayesianNetwork(est._model.edges())
    bn.add_nodes_from(est._model.nodes())
    bn.add_cpds(*est.parameters_)
    return bn


def query_set(domain, n_conditionals, rng):
    """Every marginal, and ``n_conditionals`` random ``P(x | y = s)`` (as coverage.py draws them)."""
    nodes = list(domain.attrs)
    out = [(x, {}) for x in nodes]
    for _ in range(n_conditionals):
        x = nodes[rng.integers(len(nodes))]
        y = [v for v in nodes if v != x][rng.integers(len(nodes) - 1)]
        out.append((x, {y: domain[y][rng.integers(domain.size(y))]}))
    return out


def truth_log_cpds(bn, families, domain) -> list[np.ndarray]:
    """The TRUE network's log-CPDs shaped over the fits' families (their variable and state order)."""
    out = []
    for fam in families:
        cpd = bn.get_cpds(fam[0])
        for v in cpd.variables:
            assert list(cpd.state_names[v]) == list(domain[v]), f"state order of {v} differs"
        values = np.asarray(cpd.get_values(), dtype=np.float64).reshape(cpd.cardinality)
        with np.errstate(divide="ignore"):
            out.append(np.log(np.transpose(values, [list(cpd.variables).index(v) for v in fam])))
    return out


def run(args) -> pd.DataFrame:
    from pgmpy_dp.datasets import load_network

    truth_bn = load_network(args.network)
    t0 = time.perf_counter()
    fits = [fit(truth_bn, truth_bn, args.n, args.eps, [args.seed, r]) for r in range(args.reps)]
    print(f"{args.network}: {args.reps} fits from the truth {time.perf_counter() - t0:.0f}s", flush=True)
    domain = Domain(dict(fits[0].state_names_))
    families, _ = _bn_families(fits[0])
    qs = query_set(domain, args.conditionals, np.random.default_rng([args.seed, 10**6]))
    ans = [_answerer(domain, families, "junction-tree", [x], ev) for x, ev in qs]
    labels = [(f"P({x}|{ev})" if ev else f"P({x})", "conditional" if ev else "marginal", str(s))
              for x, ev in qs for s in domain[x]]
    truth = answers(ans, [truth_log_cpds(truth_bn, families, domain)])[0]
    x, ev = qs[-1]  # the arrays answer as pgmpy does on the TRUE network
    check = pgmpy_dp.query(truth_bn, [x], evidence=ev or None).values.ravel()
    assert np.allclose(truth[-len(check):], check, atol=1e-9), "truth answers differ from pgmpy_dp.query"
    a_true = answers(ans, [_bn_families(f)[1] for f in fits])
    t_mult = _band_t(args.refits, 0.025)  # two-sided 95%: the quantile at 0.975
    sd_boot, bias_boot, sd_full, z2, hit, per_fit = [], [], [], [], [], []
    for m in range(args.fits):
        est = fits[m]
        a_hat = a_true[m]
        a_b = answers(ans, _bayesian_refits(est, args.refits, np.random.default_rng([args.seed, m, 1]), False))
        s = np.nanstd(a_b, axis=0, ddof=1)
        b = np.nanmean(a_b, axis=0) - a_hat
        sd_boot.append(s)
        bias_boot.append(b)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (truth - (a_hat - b)) / s
        z2.append(z**2)
        hit.append(np.abs(z) <= t_mult)
        per_fit.append(pd.DataFrame({"fit": m, "state_id": np.arange(len(labels)), "estimate": a_hat,
                                     "boot_mean": a_hat + b, "boot_sd": s}))
        if args.full:
            net = fitted_network(est)
            full = [fit(truth_bn, net, args.n, args.eps, [args.seed, m, 2, j]) for j in range(args.full_refits)]
            sd_full.append(np.nanstd(answers(ans, [_bn_families(f)[1] for f in full]), axis=0, ddof=1))
        print(f"{args.network}: fit {m} done {time.perf_counter() - t0:.0f}s", flush=True)
    frame = pd.DataFrame(labels, columns=["query", "kind", "state"])
    frame.insert(0, "model", args.network)
    frame["N"], frame["epsilon"] = args.n, args.eps
    frame["truth"] = truth
    frame["bias_true"] = np.nanmean(a_true, axis=0) - truth
    frame["sd_true"] = np.nanstd(a_true, axis=0, ddof=1)
    frame["sd_boot"] = np.nanmean(sd_boot, axis=0)
    frame["bias_boot"] = np.nanmean(bias_boot, axis=0)
    if args.full:
        frame["sd_full"] = np.nanmean(sd_full, axis=0)
    frame["mean_z2"] = np.nanmean(z2, axis=0)
    frame["coverage_fits"] = np.nanmean(hit, axis=0)
    # what the moments predict: a normal centre with the residual bias, the estimator's spread plus the
    # Monte Carlo error of the bias (the refits' mean), against the band's mean half-width
    half = t_mult * frame.sd_boot
    spread = frame.sd_true * np.sqrt(1 + 1 / args.refits)
    shift = frame.bias_true - frame.bias_boot
    with np.errstate(divide="ignore", invalid="ignore"):
        frame["coverage_predicted"] = (stats.norm.cdf((half - shift) / spread) - stats.norm.cdf((-half - shift) / spread))
    frame["excess_kurtosis"] = stats.kurtosis(a_true, axis=0, nan_policy="omit")
    frame.insert(0, "state_id", np.arange(len(labels)))
    return frame, pd.concat(per_fit, ignore_index=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--network", default="child")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=120, help="R: fits from the TRUE network")
    ap.add_argument("--fits", type=int, default=8, help="M: fits whose refits are measured")
    ap.add_argument("--refits", type=int, default=30, help="B: refits per fit")
    ap.add_argument("--full-refits", type=int, default=15, help="full-estimator fits per fit for (iv)")
    ap.add_argument("--no-full", dest="full", action="store_false", help="skip (iv)")
    ap.add_argument("--conditionals", type=int, default=30, help="random conditional queries")
    ap.add_argument("--seed", type=int, default=1426)
    ap.add_argument("--out", default="bn_spread")
    args = ap.parse_args(argv)
    df, per_fit = run(args)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / f"{args.out}.csv", index=False)
    per_fit.to_csv(RESULTS / f"{args.out}_fits.csv.gz", index=False)  # per fit and state: estimate, refits' mean, sd
    expected = (args.refits - 1) / (args.refits - 3) * (1 + 1 / args.refits)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(summary(df).round(3).to_string(index=False))
        g = df[df.sd_true > 1e-9]
        per_kind = g.groupby("kind").agg(
            states=("state", "size"), mean_z2=("mean_z2", "mean"), coverage_fits=("coverage_fits", "mean"),
            coverage_predicted=("coverage_predicted", "mean"),
        )
        per_kind["rms_residual_bias_over_sd"] = (
            ((g.bias_true - g.bias_boot) / g.sd_true) ** 2).groupby(g.kind).mean() ** 0.5
        per_kind["median_excess_kurtosis"] = g.groupby("kind").excess_kurtosis.median()
        print(f"E z^2 for a correct band: {expected:.3f}")
        print(per_kind.round(3).to_string())


if __name__ == "__main__":
    main()
