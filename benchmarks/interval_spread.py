"""Why do the bootstrap refits spread less than the estimator? (issue 14, asia as a Markov network, er-8 at N = 1k)

For one TRUE Markov network (the models of benchmarks/coverage.py) and every query
state of every marginal ``P(x)`` and conditional ``P(x | y = s)`` with ``x, y`` in one
clique, this measures the spread (standard deviation) of the fitted answer under
four simulations that differ in one thing at a time:

- ``sd_true`` (i): the estimator's real sampling spread: ``R`` independent repetitions
  of (N records from the TRUE model, release, ``PrivateMarkovEstimator().fit``).
- ``sd_boot`` (ii): what ``query_interval`` uses: ``B`` refits from ONE fit by
  ``bootstrap_log_potentials`` (records drawn from the fit, fresh noise, the estimator's
  two stages with the point fit's settings), averaged over ``M`` fits.
- ``sd_boot_truth`` (iii): the same refit procedure, but the records are drawn from the
  TRUE model (the point fit's settings otherwise): (iii) against (i) isolates the refit
  procedure, (ii) against (iii) isolates "the fit is a different model".
- ``sd_full`` (iv): the full estimator (``fit`` on a release made by ``release_from_codes``
  exactly as the real one, every data-derived setting re-derived) on records drawn from
  the fit, averaged over the same ``M`` fits: (iv) against (ii) checks that the refit
  procedure reproduces the estimator.
- ``sd_gen_<name>`` (extra generators, ``--generators``): ``bootstrap_log_potentials``
  with the refits' records drawn from another model derived from the same fit
  (``query_interval(..., generator=...)``), averaged over the same fits.

Also per state: the truth, the estimator's mean bias over the R fits (``bias_true``) and
the refits' mean shift (``bias_boot``). Ratios below 1 mean the bootstrap under-spreads.

Run:  python benchmarks/interval_spread.py --model asia --reps 100 --fits 6 --refits 30 --out interval_spread_asia
      python benchmarks/interval_spread.py --model er-8 --n 1000 --truths 3 --reps 60 --fits 4 --out interval_spread_er1k
"""

from __future__ import annotations

import argparse
import copy
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pgmpy_dp
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.tables import release_from_codes
from pgmpy_dp.uncertainty import _answerer, bootstrap_log_potentials

from coverage import asia_model, chain_model, er_model  # noqa: E402  (benchmarks/ on sys.path when run as a script)

RESULTS = Path(__file__).parent / "results"


def truth_model(spec: str, rng):
    if spec == "asia":
        return asia_model()
    if spec.startswith("er-"):
        return er_model(int(spec.split("-")[1]), 3, 0.3, rng)
    return chain_model(int(spec.split("-")[1]), 3, rng)


def mn_of(domain, cliques):
    from pgmpy.models import DiscreteMarkovNetwork

    model = DiscreteMarkovNetwork()
    model.add_nodes_from(domain.attrs)
    model.add_edges_from({(a, b) for c in cliques for i, a in enumerate(c) for b in c[i + 1:]})
    return model


def queries(domain, cliques):
    """Every marginal, and every conditional P(x | y = s) with x, y in one clique."""
    out = [(x, {}) for x in domain.attrs]
    pairs = sorted({(x, y) for c in cliques for x in c for y in c if x != y})
    out += [(x, {y: s}) for x, y in pairs for s in domain[y]]
    return out


def fit(domain, cliques, theta_gen, n, eps, rng):
    """N records from ``theta_gen``, released as coverage.py does, fitted by the estimator's defaults."""
    codes = JunctionTree(domain, cliques).sample(theta_gen, n, random_state=rng)
    release = release_from_codes(codes, domain, cliques, eps, random_state=rng)
    est = pgmpy_dp.PrivateMarkovEstimator(show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(mn_of(domain, cliques), release, cliques=cliques)
    return est


def answers(answerers, thetas) -> np.ndarray:
    """(len(thetas), states) answers of all queries, concatenated."""
    return np.array([np.concatenate([a(th).ravel() for a in answerers]) for th in thetas])


def refits_from(est, theta_gen, b, rng, generator=None):
    """bootstrap_log_potentials with the records drawn from ``theta_gen`` (the estimator's settings otherwise)."""
    g = copy.copy(est)
    g.log_potentials_ = theta_gen
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if generator is None:
            return bootstrap_log_potentials(g, b, random_state=rng, show_progress=False)
        return bootstrap_log_potentials(g, b, random_state=rng, show_progress=False, generator=generator)


def run_truth(args, t: int) -> pd.DataFrame:
    rng = np.random.default_rng([args.seed, t])
    domain, cliques, theta = truth_model(args.model, rng)
    qs = queries(domain, cliques)
    ans = [_answerer(domain, cliques, "junction-tree", [x], ev) for x, ev in qs]
    labels = [(f"P({x}|{ev})" if ev else f"P({x})", "conditional" if ev else "marginal", str(s))
              for x, ev in qs for s in domain[x]]
    truth = answers(ans, [theta])[0]
    t0 = time.perf_counter()
    fits = [fit(domain, cliques, theta, args.n, args.eps, rng) for _ in range(args.reps)]
    a_true = answers(ans, [f.log_potentials_ for f in fits])
    print(f"truth {t}: {args.reps} fits {time.perf_counter() - t0:.0f}s", flush=True)
    # the refit procedure with the records drawn from the TRUE model (settings of the first fit)
    a_bt = answers(ans, refits_from(fits[0], theta, args.truth_refits, rng))
    sd_boot, bias_boot, sd_full, sd_gen = [], [], [], {g: [] for g in args.generators}
    for m in range(args.fits):
        est = fits[m]
        a_hat = answers(ans, [est.log_potentials_])[0]
        a_b = answers(ans, refits_from(est, est.log_potentials_, args.refits, rng))
        sd_boot.append(np.nanstd(a_b, axis=0, ddof=1))
        bias_boot.append(np.nanmean(a_b, axis=0) - a_hat)
        for g in args.generators:
            a_g = answers(ans, refits_from(est, est.log_potentials_, args.refits, rng, generator=g))
            sd_gen[g].append(np.nanstd(a_g, axis=0, ddof=1))
        if args.full:
            full = [fit(domain, cliques, est.log_potentials_, args.n, args.eps, rng) for _ in range(args.refits)]
            sd_full.append(np.nanstd(answers(ans, [f.log_potentials_ for f in full]), axis=0, ddof=1))
        print(f"truth {t}: fit {m} done {time.perf_counter() - t0:.0f}s", flush=True)
    frame = pd.DataFrame(labels, columns=["query", "kind", "state"])
    frame.insert(0, "truth_id", t)
    frame.insert(0, "model", args.model)
    frame["N"], frame["epsilon"] = args.n, args.eps
    frame["truth"] = truth
    frame["bias_true"] = np.nanmean(a_true, axis=0) - truth
    frame["sd_true"] = np.nanstd(a_true, axis=0, ddof=1)
    frame["sd_boot"] = np.nanmean(sd_boot, axis=0)
    frame["bias_boot"] = np.nanmean(bias_boot, axis=0)
    frame["sd_boot_truth"] = np.nanstd(a_bt, axis=0, ddof=1)
    if args.full:
        frame["sd_full"] = np.nanmean(sd_full, axis=0)
    for g in args.generators:
        frame[f"sd_gen_{g}"] = np.nanmean(sd_gen[g], axis=0)
    return frame


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Root-mean-square spread of each simulation relative to the true one, per kind (states with sd_true > 0)."""
    cols = [c for c in df.columns if c.startswith("sd_") and c != "sd_true"]
    rows = []
    for kind, g in df[df.sd_true > 1e-9].groupby("kind"):
        row = {"kind": kind, "states": len(g)}
        for c in cols:
            row[f"{c}/sd_true"] = float(np.sqrt(np.nanmean(g[c] ** 2) / np.nanmean(g.sd_true ** 2)))
            row[f"median {c}/sd_true"] = float(np.nanmedian(g[c] / g.sd_true))
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="asia")
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--truths", type=int, default=1, help="TRUE models (er-/chain- models are random)")
    ap.add_argument("--reps", type=int, default=100, help="R: repetitions at the truth")
    ap.add_argument("--fits", type=int, default=6, help="M: fits whose refits are measured")
    ap.add_argument("--refits", type=int, default=30, help="B: refits per fit")
    ap.add_argument("--truth-refits", type=int, default=60, help="refits from the TRUE model")
    ap.add_argument("--no-full", dest="full", action="store_false", help="skip (iv), the full estimator on the fit")
    ap.add_argument("--generators", nargs="*", default=[], help="extra refit generators (query_interval's generator=)")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--out", default="interval_spread")
    args = ap.parse_args(argv)
    df = pd.concat([run_truth(args, t) for t in range(args.truths)], ignore_index=True)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / f"{args.out}.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(summary(df).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
