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
Also per state: the truth, the estimator's mean bias over the R fits (``bias_true``) and
the refits' mean shift (``bias_boot``). Ratios below 1 mean the bootstrap under-spreads.

(results/interval_spread_asia.csv was made before ``generator=`` existed: its (iii) refits were also
warm-started from the TRUE model; interval_spread_asia_truthgen.csv is (iii) as described.)

Run:  python benchmarks/interval_spread.py --model asia --reps 100 --fits 6 --refits 30 --out interval_spread_asia
      python benchmarks/interval_spread.py --model asia --reps 100 --fits 0 --no-full --truth-refits 120 --out interval_spread_asia_truthgen
      python benchmarks/interval_spread.py --selection --reps 100 --out interval_spread_asia_selection
      python benchmarks/interval_spread.py --clip --out interval_spread_clip     # from results/coverage.csv.gz
      python benchmarks/interval_spread.py --model er-8 --n 1000 --truths 3 --reps 60 --fits 4 --out interval_spread_er1k
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

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


def refits_from(est, theta_gen, b, rng):
    """bootstrap_log_potentials with the records drawn from ``theta_gen`` (the fit's settings and warm start)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bootstrap_log_potentials(est, b, random_state=rng, show_progress=False, generator=theta_gen)


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
    sd_boot, bias_boot, sd_full = [], [], []
    for m in range(args.fits):
        est = fits[m]
        a_hat = answers(ans, [est.log_potentials_])[0]
        a_b = answers(ans, refits_from(est, est.log_potentials_, args.refits, rng))
        sd_boot.append(np.nanstd(a_b, axis=0, ddof=1))
        bias_boot.append(np.nanmean(a_b, axis=0) - a_hat)
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
    return frame


def selection_check(args) -> None:
    """Each asia marginal's estimator spread over coverage.py's repetitions ``start..reps-1``: all of them
    against those that asked that marginal (what the coverage table's misses are measured on).

    The repetitions are re-fitted from coverage.py's seeds (its CSV's estimates are checked to match).
    """
    from coverage import fitted_mn, results_csv

    cov = pd.read_csv(results_csv("coverage"))
    cov = cov[(cov.model == "asia") & (cov.rule == "normal") & (cov.kind == "marginal") & (cov.rep >= args.start)
              & (cov.rep < args.reps)]
    rows = []
    for rep in range(args.start, args.reps):
        rng = np.random.default_rng([args.seed, 0, args.n, int(args.eps * 1000), rep])  # coverage.py --models asia
        domain, cliques, theta, _, _, est = fitted_mn("asia", args.n, args.eps, rng)
        for x in domain.attrs:
            p = _answerer(domain, cliques, "junction-tree", [x], {})(est.log_potentials_).ravel()
            rows += [{"rep": rep, "query": f"P({x})", "state": str(s), "estimate": v} for s, v in zip(domain[x], p)]
    fits = pd.DataFrame(rows)
    key = ["rep", "query", "state"]
    asked = cov.merge(fits, on=key, suffixes=("", "_refit"))
    assert np.allclose(asked.estimate, asked.estimate_refit), "the refits do not reproduce results/coverage.csv.gz"
    t = float(special.stdtrit(29, 0.975))
    asked["s_hat"] = (asked.upper - asked.lower) / (2 * t)
    out = []
    for (q, s), g in fits.groupby(["query", "state"]):
        a = asked[(asked["query"] == q) & (asked.state == s)]
        out.append({"query": q, "state": s, "reps": len(g), "asked": len(a), "sd_all": g.estimate.std(),
                    "sd_asked": a.estimate.std(), "mean_s_hat_asked": a.s_hat.mean(), "coverage_asked": a.covered.mean()})
    frame = pd.DataFrame(out)
    frame.to_csv(RESULTS / f"{args.out}.csv", index=False)
    print(frame.round(5).to_string(index=False))


def clip_check(args) -> None:
    """Coverage of the Markov-network bands of results/<csv>.csv by where the band ends: at 0, at 1 or inside,
    with the side the truth lies on when missed, per rule (``--rules``)."""
    from coverage import results_csv

    cov = pd.read_csv(results_csv(args.csv))
    cov = cov[(cov.kind != "cell") & ~cov.model.str.endswith("-bn") & cov.rule.isin(args.rules)].copy()
    key = ["model", "N", "epsilon", "rep", "kind", "query", "state"]
    cov["ask"] = cov.groupby(key + ["rule"]).cumcount()  # a repetition can ask the same query twice
    key.append("ask")
    ref = cov[cov.rule == args.rules[0]].set_index(key)
    where = np.where(ref.lower <= 0, "lower = 0", np.where(ref.upper >= 1, "upper = 1", "inside"))
    cov = cov.join(pd.Series(where, index=ref.index, name=f"{args.rules[0]} band"), on=key)
    cov["above"] = (cov.covered == 0) & (cov.truth > cov.upper)
    cov["below"] = (cov.covered == 0) & (cov.truth < cov.lower)
    frame = (cov.groupby(["model", "N", "epsilon", "kind", f"{args.rules[0]} band", "rule"])
             .agg(states=("covered", "size"), coverage=("covered", "mean"), truth_above=("above", "sum"),
                  truth_below=("below", "sum"), median_truth=("truth", "median"))
             .reset_index())
    frame.to_csv(RESULTS / f"{args.out}.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_rows", 500):
        print(frame.round(3).to_string(index=False))


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
    ap.add_argument("--selection", action="store_true",
                    help="asia only: refit coverage.py's repetitions and compare each marginal's spread over all of "
                         "them with its spread over the repetitions that asked it (results/coverage.csv.gz)")
    ap.add_argument("--start", type=int, default=26, help="with --selection: first coverage.py repetition")
    ap.add_argument("--clip", action="store_true",
                    help="coverage of results/<--csv>.csv's bands by where the first --rules band ends (0, 1, inside)")
    ap.add_argument("--csv", default="coverage")
    ap.add_argument("--rules", nargs="+", default=["normal", "arcsine", "logit"])
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--out", default="interval_spread")
    args = ap.parse_args(argv)
    if args.selection:
        selection_check(args)
        return
    if args.clip:
        clip_check(args)
        return
    df = pd.concat([run_truth(args, t) for t in range(args.truths)], ignore_index=True)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / f"{args.out}.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(summary(df).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
