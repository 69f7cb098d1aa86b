"""The naive-MLE solver, old against new: scipy's L-BFGS-B against Fisher-preconditioned L-BFGS.

Fits ``PrivateMarkovEstimator`` (``naive-mle`` and ``cgm-em``, defaults otherwise) on the
cells of ``mn_profile.py`` with each naive solver, alternating solver by solver within each
release so both see the same load. Counts the inference calls of the warm start (the naive
fit) and of the whole fit, and the KL of each fit to the true model:

    python benchmarks/mn_naive_solver.py --releases 2

Prints one line per fit and writes ``results/mn_naive_solver.csv``.

``--mbi-grid`` instead runs ``mn_accuracy.py``'s grid (its arguments after ``--``, e.g.
``--mbi-grid -- --n 1e6 --mbi mbi-md --populations 2 --replications 2``) with every
naive-MLE and CGM-EM fit done twice in a row, once per solver; the Fisher fits are added
as methods ``naive-mle-fisher`` and ``cgm-em-fisher`` (``results/<out>_grid.csv``).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp
import pgmpy_dp.estimators.markov as markov_module
from pgmpy_dp.engine import ConvergenceWarning
from pgmpy_dp.evaluation.markov import kl_divergence_potentials
from pgmpy_dp.tables import release_from_codes

from mn_profile import CELLS, Counter, population

RESULTS = Path(__file__).parent / "results"
SOLVERS = ("lbfgs", "fisher")


def use_solver(solver: str) -> None:
    """The naive fit's solver, for naive MLE and for CGM-EM's warm start alike (whose cap stays its default)."""
    markov_module._NAIVE_SOLVER = markov_module._WARM_SOLVER = solver


def correct_seconds(both: pd.DataFrame) -> pd.DataFrame:
    """mn_accuracy.py times ``est.fit``, which runs the Fisher twin first: take the twin's seconds off."""
    both = both.copy()
    keys = ["model", "N", "epsilon", "population", "replication"]
    for method in ("naive-mle", "cgm-em"):
        base = both["method"] == method
        twin = both[both["method"] == f"{method}-fisher"].set_index(keys)["seconds"]
        both.loc[base, "seconds"] = both.loc[base, "seconds"].to_numpy() - twin.loc[
            pd.MultiIndex.from_frame(both.loc[base, keys])
        ].to_numpy()
    return both


def grid(out: str, accuracy_argv: list[str]) -> None:
    """mn_accuracy.py's run with a Fisher-solver twin of every naive-MLE and CGM-EM fit."""
    import mn_accuracy

    pending: list = []  # the Fisher twin of the fit whose KL mn_accuracy computes next
    extra: list[dict] = []

    class Twin(pgmpy_dp.PrivateMarkovEstimator):
        def fit(self, model, release, *a, **k):
            use_solver("fisher")
            twin = pgmpy_dp.PrivateMarkovEstimator(method=self.method, show_progress=False)
            t0 = time.perf_counter()
            twin.fit(model, release, *a, **k)
            pending.append((self.method, twin, time.perf_counter() - t0))
            use_solver("lbfgs")
            return super().fit(model, release, *a, **k)

    kl_orig = mn_accuracy.kl_divergence_potentials

    def kl(domain, edges, theta, cliques, th):
        if pending:
            method, twin, secs = pending.pop()
            value = kl_orig(domain, edges, theta, twin.cliques_, twin.log_potentials_)
            extra.append(dict(method=f"{method}-fisher", kl=value, seconds=secs, n_iter=twin.n_iter_))
        return kl_orig(domain, edges, theta, cliques, th)

    mn_accuracy.PrivateMarkovEstimator = Twin
    mn_accuracy.kl_divergence_potentials = kl
    captured = {}
    run_orig = mn_accuracy.run

    def run(args):
        captured["df"] = run_orig(args)
        return captured["df"]

    mn_accuracy.run = run
    # mn_accuracy's own CSVs carry the twins' seconds in the L-BFGS-B rows: only <out>_grid.csv is kept
    mn_accuracy.main(accuracy_argv + ["--out", f"{out}_accuracy"])
    for suffix in (".csv", "_summary.csv", ".png"):
        (RESULTS / f"{out}_accuracy{suffix}").unlink(missing_ok=True)
    df = captured["df"]
    base = df[df["method"].isin(["naive-mle", "cgm-em"])].reset_index(drop=True)
    twins = pd.DataFrame(extra)
    assert len(twins) == len(base), (len(twins), len(base))
    keys = ["model", "N", "epsilon", "population", "replication"]
    twins = pd.concat([base[keys], twins], axis=1)
    both = correct_seconds(pd.concat([df, twins], ignore_index=True))
    RESULTS.mkdir(exist_ok=True)
    both.to_csv(RESULTS / f"{out}_grid.csv", index=False)
    print(both.groupby(["model", "N", "epsilon", "method"])[["kl", "seconds"]].mean().to_string())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=2)
    parser.add_argument("--out", default="mn_naive_solver")
    parser.add_argument("--mbi-grid", action="store_true")
    args, rest = parser.parse_known_args(argv)
    if args.mbi_grid:
        grid(args.out, [a for a in rest if a != "--"])
        return
    counter = Counter()
    rows = []
    for kind, n, eps in CELLS:
        domain, edges, theta, _, codes = population(kind, n)
        for r in range(args.releases):
            release = release_from_codes(codes, domain, edges, eps, random_state=np.random.default_rng([1, r]))
            for method in ("naive-mle", "cgm-em"):
                for solver in SOLVERS:
                    use_solver(solver)
                    counter.reset()
                    est = pgmpy_dp.PrivateMarkovEstimator(method=method, show_progress=False)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        t0 = time.perf_counter()
                        est.fit(DiscreteMarkovNetwork(edges), release)
                        secs = time.perf_counter() - t0
                    warm_s = counter.seconds.get("warm start", 0.0)
                    row = dict(
                        model=kind, N=n, epsilon=eps, release=r, method=method, solver=solver,
                        kl=kl_divergence_potentials(domain, edges, theta, est.cliques_, est.log_potentials_),
                        seconds=round(secs, 3), warm_start_calls=counter.calls.get("warm start", 0),
                        warm_start_inference_seconds=round(warm_s, 3),
                        total_calls=sum(counter.calls.values()), mle_iterations=est.mle_n_iter_,
                    )
                    rows.append(row)
                    print(row, flush=True)
    RESULTS.mkdir(exist_ok=True)
    pd.DataFrame(rows).to_csv(RESULTS / f"{args.out}.csv", index=False)


if __name__ == "__main__":
    main()
