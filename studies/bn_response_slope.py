"""Pilot: does the estimator follow the truth with slope one? (issue 14, Bayesian-network bands)

The normal band assumes the estimator's bias is the same at the truth as at the fit. Where the
fit is shrunk hard (alarm's ``P(BP | ANAPHYLAXIS = TRUE)``: about 100 records behind it), the
bias at the truth is several times the bias the refits measure at the fit
(``benchmarks/bn_interval_spread.py``): the estimator's mean answer moves by less than the
truth does, ``d E[p_hat] / d p = k < 1``.

This pilot measures ``k`` per state with a second level of refits under common random numbers:
for each first-level refit ``j`` (a fitted model ``theta*_j`` with answer ``p*_j``), one refit
drawn from ``theta*_j`` with the SAME seed for every ``j`` gives ``p**_j``. With the randomness
held fixed, ``p**_j`` moves with ``theta*_j`` only, so the slope of ``p**`` on ``p*`` over the
``B`` refits estimates ``k`` without the refits' own noise. Inverting the linear response gives
the band

    centre = p_hat - b_hat / k,   half-width = t * sqrt(1 + 1/B) * s_hat / k

(``k = 1``: the normal band). Both bands are scored against the TRUE network over ``M`` fits.

Run:  python benchmarks/bn_response_slope.py --network alarm --fits 10 --refits 20 --out bn_slope_alarm
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize

from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.uncertainty import _answerer, _band_t, _bayesian_refits, _bn_families

from bn_interval_spread import fit, query_set, truth_log_cpds
from interval_spread import answers  # noqa: E402  (benchmarks/ on sys.path)

RESULTS = Path(__file__).parent / "results"


def run(args) -> pd.DataFrame:
    from pgmpy_dp.datasets import load_network

    truth_bn = load_network(args.network)
    t0 = time.perf_counter()
    t_mult = _band_t(args.refits, 0.025)
    rows = []
    for m in range(args.fits):
        est = fit(truth_bn, truth_bn, args.n, args.eps, [args.seed, m])
        domain = Domain(dict(est.state_names_))
        families, theta_hat = _bn_families(est)
        if m == 0:
            qs = query_set(domain, args.conditionals, np.random.default_rng([args.seed, 10**6]))
            ans = [_answerer(domain, families, "junction-tree", [x], ev) for x, ev in qs]
            labels = [(f"P({x}|{ev})" if ev else f"P({x})", "conditional" if ev else "marginal", str(s))
                      for x, ev in qs for s in domain[x]]
            truth = answers(ans, [truth_log_cpds(truth_bn, families, domain)])[0]
        p_hat = answers(ans, [theta_hat])[0]
        first = _bayesian_refits(est, args.refits, np.random.default_rng([args.seed, m, 1]), False)
        p1 = answers(ans, first)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            second = [_bayesian_refits(est, 1, np.random.default_rng([args.seed, m, 2]), False, generator=th)[0]
                      for th in first]
        p2 = answers(ans, second)
        x = p1 - p1.mean(axis=0)
        y = p2 - p2.mean(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            k = (x * y).sum(axis=0) / (x * x).sum(axis=0)
            resid = y - k * x
            k_se = np.sqrt((resid**2).sum(axis=0) / (args.refits - 2) / (x * x).sum(axis=0))
        s = p1.std(axis=0, ddof=1)
        b = p1.mean(axis=0) - p_hat
        for j, (q, kind, state) in enumerate(labels):
            rows.append({"network": args.network, "fit": m, "query": q, "kind": kind, "state": state,
                         "truth": truth[j], "estimate": p_hat[j], "bias_hat": b[j], "s_hat": s[j],
                         "k": k[j], "k_se": k_se[j], "t": t_mult})
        print(f"{args.network}: fit {m} done {time.perf_counter() - t0:.0f}s", flush=True)
    return pd.DataFrame(rows)


def score(df: pd.DataFrame, k_min: float) -> pd.DataFrame:
    """Coverage and mean width per kind of: the normal band; the slope band (``k`` clipped to [k_min, 1], and to
    [k_min, inf)); the band centred on the uncorrected answer (``p_hat ± t s_hat``); and, for each of those, the
    normal band widened by one factor to the same mean width (``normal at equal width``), the fair comparison."""
    df = df[np.isfinite(df.s_hat) & (df.s_hat > 0)].copy()
    half = df.t * df.s_hat
    k = df.k.fillna(1.0)
    centre = df.estimate - df.bias_hat
    bands = {
        "normal": (centre, half),
        "slope, k in [k_min, 1]": (df.estimate - df.bias_hat / np.clip(k, k_min, 1.0), half / np.clip(k, k_min, 1.0)),
        "slope, k >= k_min": (df.estimate - df.bias_hat / np.clip(k, k_min, None), half / np.clip(k, k_min, None)),
        "uncorrected centre": (df.estimate, half),
    }

    def cover(c, h, m):
        lo, hi = np.clip(c - h, 0, 1), np.clip(c + h, 0, 1)
        return float(((lo <= df.truth + 1e-12) & (df.truth - 1e-12 <= hi))[m].mean()), float((hi - lo)[m].mean())

    rows = []
    for kind in ("marginal", "conditional"):
        m = (df.kind == kind).to_numpy()
        c0, w0 = cover(*bands["normal"], m)
        for name, (c, h) in bands.items():
            cov, w = cover(c, h, m)
            # the normal band widened by one factor to this band's mean width
            a = optimize.brentq(lambda a: cover(centre, half * a, m)[1] - w, 0.2, 20.0) if name != "normal" else 1.0
            rows.append({"network": df.network.iloc[0], "kind": kind, "band": name, "states": int(m.sum()),
                         "coverage": cov, "width_ratio": w / w0, "normal_at_equal_width": cover(centre, half * a, m)[0],
                         "median_k": float(np.nanmedian(df.k[m])), "median_k_se": float(np.nanmedian(df.k_se[m]))})
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--network", default="alarm")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--fits", type=int, default=10)
    ap.add_argument("--refits", type=int, default=20)
    ap.add_argument("--conditionals", type=int, default=30)
    ap.add_argument("--k-min", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1428)
    ap.add_argument("--score", help="only score results/<SCORE>.csv.gz")
    ap.add_argument("--out", default="bn_slope")
    args = ap.parse_args(argv)
    if args.score:
        df = pd.read_csv(RESULTS / f"{args.score}.csv.gz")
    else:
        df = run(args)
        RESULTS.mkdir(exist_ok=True)
        df.to_csv(RESULTS / f"{args.out}.csv.gz", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(score(df, args.k_min).round(4).to_string(index=False))


if __name__ == "__main__":
    main()
