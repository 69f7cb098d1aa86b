"""k = 3 target: the default learner's parameter error at rho = 1e6 against non-private fits.

p = 8, k = 3 random pairwise models (benchmarks/structure.py's generator, max degree 3, max |W_ij| 0.5,
seeds 50_000 + model), n = 10,000 rows each. Max parameter error max |W_ij(a, b) - W_hat_ij(a, b)| over
all pairs (doubly centred) of:
  default      PrivatePairwiseEstimator(random_state=model).fit(df, rho=1e6)  (route auto)
  fw-default   the same with route="frank-wolfe" (width, eta, n_iter from the defaults)
  mle-true     non-private: naive MLE on the TRUE graph from the exact two-way counts
  mle-complete non-private: naive MLE on the complete pairwise graph from the exact counts
  sklearn      non-private l1 logistic regressions (benchmarks/structure.py's sklearn_weights)

Run from the repository root:
  PYTHONPATH=.:benchmarks OMP_NUM_THREADS=1 python studies/structure_k3_nonprivate/check.py [MODELS] [--no-fw]
(--no-fw skips the slow Frank-Wolfe fit at rho = 1e6: its theory iteration count is large.)
"""

import itertools
import sys
import warnings

import numpy as np

from pgmpy_dp import PrivatePairwiseEstimator
from pgmpy_dp.privacy import Domain
from pgmpy_dp.structure.sampling import model_edges, random_pairwise_model, sample_pairwise_model
from pgmpy_dp.structure.tables_route import _split_potentials, refit_on_edges
from pgmpy_dp.tables.artifact import MarginalRelease, NoisyTable

from structure import doubly_centred, sklearn_weights

P, K, N = 8, 3, 10_000


def exact_release(codes, dom):
    """The two-way count tables without noise (a MarginalRelease with scale ~0: non-private)."""
    tables = []
    for a, b in itertools.combinations(dom.attrs, 2):
        t = np.zeros((dom.size(a), dom.size(b)))
        np.add.at(t, (codes[a], codes[b]), 1.0)
        tables.append(NoisyTable((a, b), t, None, 1e-3, mechanism="discrete_gaussian", rho=1e6))
    return MarginalRelease(dom, tables, "discrete_gaussian", "numpy", len(codes[dom.attrs[0]]))


def max_err(W, weights, cols):
    idx = {c: i for i, c in enumerate(cols)}
    err = 0.0
    for i, j in itertools.combinations(range(W.shape[0]), 2):
        w = None
        for (a, b), v in weights.items():
            if {idx[a], idx[b]} == {i, j}:
                w = doubly_centred(np.asarray(v) if idx[a] == i else np.asarray(v).T)
        err = max(err, float(np.abs(W[i, j] - (0.0 if w is None else w)).max()))
    return err


def main(models):
    rows = []
    for model in range(models):
        W, theta = random_pairwise_model(P, k=K, max_degree=3, eta=0.5, seed=50_000 + model)
        df = sample_pairwise_model(W, theta, N, seed=60_000 + model)
        cols = list(df.columns)
        truth = model_edges(W, cols)
        dom = Domain.from_dataframe(df)
        codes = dom.encode(df)
        res = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = PrivatePairwiseEstimator(random_state=model).fit(df, rho=1e6)
            res["default"] = (max_err(W, est.weights_, cols), set(est.edges_) == set(truth), est.route_)
            if "--no-fw" not in sys.argv:
                fw = PrivatePairwiseEstimator(route="frank-wolfe", random_state=model).fit(df, rho=1e6)
                res["fw-default"] = (max_err(W, fw.weights_, cols), set(fw.edges_) == set(truth), fw.route_)
            rel = exact_release(codes, dom)
            for name, edges in (("mle-true", truth), ("mle-complete", list(itertools.combinations(cols, 2)))):
                fit = refit_on_edges(rel, dom, edges)
                w, _ = _split_potentials(fit.cliques_, fit.log_potentials_, dom)
                res[name] = (max_err(W, w, cols), True, "-")
        sk = sklearn_weights(np.column_stack([codes[a] for a in cols]).astype(np.intp), K)
        res["sklearn"] = (max_err(W, {(cols[i], cols[j]): v for (i, j), v in sk.items()}, cols), True, "-")
        rows.append(res)
        print(model, {k: f"{v[0]:.3f}{'' if v[1] else ' (graph wrong)'}" for k, v in res.items()}, flush=True)
    names = list(rows[0])
    print("\n| fit | mean max error | min-max over models | graphs recovered |\n|---|---|---|---|")
    for name in names:
        e = np.array([r[name][0] for r in rows])
        print(f"| {name} | {e.mean():.3f} | {e.min():.3f}-{e.max():.3f} | {sum(r[name][1] for r in rows)}/{len(rows)} |")
    ratio = np.array([r["default"][0] / r["mle-true"][0] for r in rows])
    print(f"\ndefault / mle-true per model: {np.round(ratio, 2).tolist()}; mean of errors ratio "
          f"{np.mean([r['default'][0] for r in rows]) / np.mean([r['mle-true'][0] for r in rows]):.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 5)
