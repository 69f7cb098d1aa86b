"""Three-state structure learning at a negligible privacy cost: the default's parameter error against
non-private fits (docs/structure.md and docs/benchmarks.md, "k = 3 target").

Models: ``random_pairwise_model(p, k=3, max_degree=3, eta=0.5)`` (seeds ``50_000 + model``), ``n`` rows
sampled exactly (seeds ``60_000 + model``); p = 8 (3^8 joint cells: the tables route's exact MLE and Wald
rule), n = 10,000, 5 models, rho = 1e6 (the privacy noise is about 0.004 counts). Max parameter error is
``max |W_ij(a, b) - W_hat_ij(a, b)|`` over all pairs and states (doubly centred), for

* ``default``: ``PrivatePairwiseEstimator(random_state=model).fit(df, rho=1e6)`` (route auto);
* ``fw-default``: the same with ``route="frank-wolfe"`` (width, eta and iterations from the defaults;
  skipped by ``--no-fw``: its theory iteration count at rho = 1e6 is large);
* ``mle-true`` / ``mle-complete``: non-private naive MLE on the true / the complete pairwise graph from
  the exact two-way counts;
* ``sklearn``: non-private l1 logistic regressions (``harness.sklearn_weights``).

Writes ``results/<out>.csv`` (one row per model and fit) and prints the markdown table (mean and range of
the max error, graphs recovered) and the default / mle-true ratio.

Run:  python benchmarks/structure_k3.py [--models 5] [--no-fw]
      python benchmarks/structure_k3.py --quick        # 1 model, p = 4, n = 1,000, no Frank-Wolfe: seconds
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd

import harness
from harness import doubly_centred, sklearn_weights
from pgmpy_dp import PrivatePairwiseEstimator
from pgmpy_dp.privacy import Domain
from pgmpy_dp.structure.tables_route import _split_potentials, refit_on_edges
from pgmpy_dp.tables.artifact import MarginalRelease, NoisyTable
from pgmpy_dp.testing.pairwise_models import model_edges, random_pairwise_model, sample_pairwise_model

K, RHO = 3, 1e6


def exact_release(codes, dom) -> MarginalRelease:
    """The two-way count tables without noise (a MarginalRelease with scale ~0: non-private)."""
    tables = []
    for a, b in itertools.combinations(dom.attrs, 2):
        t = np.zeros((dom.size(a), dom.size(b)))
        np.add.at(t, (codes[a], codes[b]), 1.0)
        tables.append(NoisyTable((a, b), t, None, 1e-3, mechanism="discrete_gaussian", rho=RHO))
    return MarginalRelease(dom, tables, "discrete_gaussian", "numpy", len(codes[dom.attrs[0]]))


def max_err(W, weights, cols) -> float:
    idx = {c: i for i, c in enumerate(cols)}
    err = 0.0
    for i, j in itertools.combinations(range(W.shape[0]), 2):
        w = None
        for (a, b), v in weights.items():
            if {idx[a], idx[b]} == {i, j}:
                w = doubly_centred(np.asarray(v) if idx[a] == i else np.asarray(v).T)
        err = max(err, float(np.abs(W[i, j] - (0.0 if w is None else w)).max()))
    return err


def run_model(model: int, p: int, n: int, fw: bool) -> list[dict]:
    """Every fit of one model: a row each (fit, max error, graph recovered, route)."""
    W, theta = random_pairwise_model(p, k=K, max_degree=3, eta=0.5, seed=50_000 + model)
    df = sample_pairwise_model(W, theta, n, seed=60_000 + model)
    cols = list(df.columns)
    truth = set(model_edges(W, cols))
    dom = Domain.from_dataframe(df)
    codes = dom.encode(df)
    rows = []

    def row(fit, weights, recovered, route):
        rows.append({"model": model, "p": p, "n": n, "fit": fit, "max_err": max_err(W, weights, cols),
                     "recovered": bool(recovered), "route": route})

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = PrivatePairwiseEstimator(random_state=model).fit(df, rho=RHO)
        row("default", est.weights_, set(est.edges_) == truth, est.route_)
        if fw:
            est = PrivatePairwiseEstimator(route="frank-wolfe", random_state=model).fit(df, rho=RHO)
            row("fw-default", est.weights_, set(est.edges_) == truth, est.route_)
        release = exact_release(codes, dom)
        for name, edges in (("mle-true", sorted(truth)), ("mle-complete", list(itertools.combinations(cols, 2)))):
            fit = refit_on_edges(release, dom, edges)
            weights, _ = _split_potentials(fit.cliques_, fit.log_potentials_, dom)
            row(name, weights, True, "-")
    sk = sklearn_weights(np.column_stack([codes[a] for a in cols]).astype(np.intp), K)
    row("sklearn", {(cols[i], cols[j]): v for (i, j), v in sk.items()}, True, "-")
    return rows


def summary(runs: pd.DataFrame) -> str:
    """The markdown table of the docs and the default / mle-true ratio."""
    lines = ["| fit | mean max error | min-max over models | graphs recovered |", "|---|---|---|---|"]
    for fit, group in runs.groupby("fit", sort=False):
        e = group.max_err
        lines.append(f"| {fit} | {e.mean():.3f} | {e.min():.3f}-{e.max():.3f} | "
                     f"{int(group.recovered.sum())}/{len(group)} |")
    by = runs.pivot(index="model", columns="fit", values="max_err")
    ratio = by["default"] / by["mle-true"]
    lines.append(f"\ndefault / mle-true per model: {np.round(ratio, 2).tolist()}; ratio of the mean errors "
                 f"{by['default'].mean() / by['mle-true'].mean():.2f}")
    return "\n".join(lines)


def main(argv=None) -> pd.DataFrame:
    ap = harness.parser(__doc__, out="structure_k3")
    ap.add_argument("--models", type=int, default=5)
    ap.add_argument("--p", type=int, default=8)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--no-fw", action="store_true", help="skip the slow Frank-Wolfe fit")
    args = harness.parse(ap, argv, models=1, p=4, n=1_000, no_fw=True)
    runs = pd.DataFrame([r for model in range(args.models)
                         for r in run_model(model, args.p, args.n, fw=not args.no_fw)])
    harness.write_csv(runs, args.out)
    print(summary(runs))
    return runs


if __name__ == "__main__":
    main()
