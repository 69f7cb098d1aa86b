"""Coverage of the REAL data's answer by ``query_interval`` on synthesizer models, supported and not (issue 46).

A REDUCED grid, not the issue's: two tables (scikit-learn's breast-cancer table with public round-number
bins, 569 rows; the Adult census, 48,842 rows), two methods (AIM, PrivBayes), epsilon 1 (delta 1e-9 for
AIM), ``--queries`` conditional queries ``P(a | b = s)`` per table drawn once with a fixed seed before any
fit (``s`` among the states of ``b`` that at least 20 real records hold, so the real answer exists), and
``--fits`` fits per (table, method). Band: ``interval="normal"`` with ``--n-samples`` refits.

Per (fit, query) the coverage of the real answer is averaged over the states of ``a``; the standard error
is over (fit, query) units. ``band``: the returned band (for a supported answer, the hull of the model's
band and the supporting tables' direct band); ``model``: the bootstrap band alone (``attrs["model_band"]``).

Run:  python benchmarks/synth_coverage.py                    # 10 queries, breast 8 fits, adult 3 fits
      python benchmarks/synth_coverage.py --quick            # breast cancer only, 3 fits, 5 queries
      python benchmarks/synth_coverage.py --adult-fits 0 --followup --out synth_coverage_followup
                                                             # plus a follow-up release per unsupported answer
Writes results/synth_coverage_runs.csv and results/synth_coverage.csv (the summary).
"""

from __future__ import annotations

import os
import pickle
import time
import warnings
from pathlib import Path

import harness
import numpy as np
import pandas as pd

import pgmpy_dp

DATA = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))
CUTS = {"mean radius": [0, 10, 12, 14, 17, 20, 40], "mean texture": [0, 15, 18, 21, 25, 50],
        "mean smoothness": [0, 0.08, 0.09, 0.1, 0.11, 0.2], "mean symmetry": [0, 0.16, 0.18, 0.2, 0.22, 0.4],
        "mean concavity": [0, 0.03, 0.06, 0.1, 0.2, 0.5], "worst area": [0, 500, 750, 1000, 1500, 5000]}


def breast_cancer():
    from sklearn.datasets import load_breast_cancer

    raw = load_breast_cancer(as_frame=True).frame
    df = pd.DataFrame({c: pd.cut(raw[c], bins, labels=False, include_lowest=True) for c, bins in CUTS.items()})
    df["diagnosis"] = raw["target"].map({0: "malignant", 1: "benign"})
    domain = {c: list(range(len(b) - 1)) for c, b in CUTS.items()}
    domain["diagnosis"] = ["malignant", "benign"]
    return df, domain


def adult():
    codes, sizes = harness.load_adult(DATA)
    return codes, {c: list(range(k)) for c, k in sizes.items()}


def draw_queries(df, domain, n, rng) -> list[tuple[str, str, object]]:
    """``n`` queries ``(a, b, s)``; ``s`` a state of ``b`` held by at least 20 real records."""
    cols, out = list(domain), []
    if "diagnosis" in cols:  # the query first
        out.append(("diagnosis", "mean radius", 4))
    while len(out) < n:
        a, b = rng.choice(cols, 2, replace=False)
        counts = df[b].value_counts()
        states = [s for s in domain[b] if counts.get(s, 0) >= 20]
        out.append((str(a), str(b), states[rng.integers(len(states))]))
    return out


def real_answer(df, domain, a, b, s) -> np.ndarray:
    sub = df.loc[df[b] == s, a]
    return sub.value_counts().reindex(domain[a], fill_value=0).to_numpy() / len(sub)


def followup_coverage(synth, df, domain, a, b, s, truth, n_samples, seed) -> dict:
    """An unsupported answer after ``synth.measure`` of its marginal at 10% of the fit's loss (on a copy)."""
    extra = dict(epsilon=0.1 * synth.loss_.epsilon) if synth.epsilon_ is not None else dict(rho=0.1 * synth.loss_.rho)
    copy = pickle.loads(pickle.dumps(synth))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        copy.measure(df, [(a, b)], random_state=np.random.default_rng([seed, 4646]), **extra)
        iv = pgmpy_dp.query_interval(copy, a, evidence={b: s}, interval="normal", n_samples=n_samples,
                                     random_state=seed, show_progress=False)
    return {"followup_supported": bool(iv.supported.iloc[0]),
            "coverage_followup": float(np.mean((iv.lower.to_numpy() <= truth) & (truth <= iv.upper.to_numpy()))),
            "width_followup": float(np.mean(iv.upper - iv.lower))}


def run(name, df, domain, method, fits, queries, n_samples, seed, followup=False) -> list[dict]:
    rows = []
    budget = dict(epsilon=1.0) if method == "privbayes" else dict(epsilon=1.0, delta=1e-9)
    for f in range(fits):
        c0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            synth = pgmpy_dp.PrivateSynthesizer(method=method, random_state=np.random.default_rng([seed, f, 46]),
                                                show_progress=False, **budget).fit(df, domain=domain)
        fit_cpu = time.process_time() - c0
        for q, (a, b, s) in enumerate(queries):
            truth = real_answer(df, domain, a, b, s)
            c0 = time.process_time()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                iv = pgmpy_dp.query_interval(synth, a, evidence={b: s}, interval="normal", n_samples=n_samples,
                                             random_state=f, show_progress=False)
            lo, hi = iv.attrs["model_band"]
            rows.append({
                "table": name, "method": method, "fit": f, "query": q, "a": a, "b": b, "s": s,
                "supported": bool(iv.supported.iloc[0]),
                "warned": any(w.category.__name__ == "UnsupportedAnswerWarning" for w in caught),
                "coverage_band": float(np.mean((iv.lower.to_numpy() <= truth) & (truth <= iv.upper.to_numpy()))),
                "coverage_model": float(np.mean((lo <= truth) & (truth <= hi))),
                "width_band": float(np.mean(iv.upper - iv.lower)), "width_model": float(np.mean(hi - lo)),
                "query_cpu_seconds": time.process_time() - c0, "fit_cpu_seconds": fit_cpu,
            })
            if followup and not rows[-1]["supported"]:
                rows[-1].update(followup_coverage(synth, df, domain, a, b, s, truth, n_samples, f))
        print(name, method, "fit", f, "done", flush=True)
    return rows


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    def se(x):
        return x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan

    g = runs.groupby(["table", "method", "supported"])
    out = g.agg(answers=("coverage_band", "size"), coverage_band=("coverage_band", "mean"),
                se_band=("coverage_band", se), coverage_model=("coverage_model", "mean"),
                se_model=("coverage_model", se), width_band=("width_band", "mean"),
                width_model=("width_model", "mean"), flagged=("warned", "mean"),
                query_cpu_seconds=("query_cpu_seconds", "mean"))
    if "coverage_followup" in runs:
        extra = g.agg(followups=("coverage_followup", "count"), coverage_followup=("coverage_followup", "mean"),
                      se_followup=("coverage_followup", se), width_followup=("width_followup", "mean"))
        out = out.join(extra)
    out = out.reset_index()
    flagged = out.pop("flagged")
    out["flagged_right"] = np.where(out["supported"], 1 - flagged, flagged)  # warned exactly when unsupported
    return out


def main(argv=None) -> None:
    ap = harness.parser(__doc__, out="synth_coverage")
    ap.add_argument("--queries", type=int, default=10)
    ap.add_argument("--fits", type=int, default=8, help="fits per method on the breast-cancer table")
    ap.add_argument("--adult-fits", type=int, default=3, help="fits per method on Adult (0: skip Adult)")
    ap.add_argument("--n-samples", type=int, default=20)
    ap.add_argument("--methods", nargs="+", default=["aim", "privbayes"])
    ap.add_argument("--followup", action="store_true",
                    help="for each unsupported answer also measure its marginal at 10%% more budget and ask again")
    args = harness.parse(ap, argv, queries=5, fits=3, adult_fits=0)
    tables = [("breast-cancer", breast_cancer(), args.fits)]
    if args.adult_fits:
        tables.append(("adult", adult(), args.adult_fits))
    runs = []
    for name, (df, domain), fits in tables:
        queries = draw_queries(df, domain, args.queries, np.random.default_rng([args.seed, len(name)]))
        for method in args.methods:
            runs += run(name, df, domain, method, fits, queries, args.n_samples, args.seed, args.followup)
            harness.write_csv(pd.DataFrame(runs), f"{args.out}_runs")
    table = summary(pd.DataFrame(runs))
    print(table.round(3).to_string(index=False))
    print("wrote", harness.write_csv(table, args.out))


if __name__ == "__main__":
    main()
