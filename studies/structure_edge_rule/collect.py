"""Raw edge scores of the tables route's selection fit, to choose the default edge rule offline.

For random sparse pairwise models (as in benchmarks/structure.py, but seeds 10_000 + model so the
benchmark's models stay held out) and every (n, rho): one release of all two-way tables, the route's
selection fit (exact MLE or icov), the Wald score of every pair before the spread correction, the
spread, the public n estimate, and which pairs are true edges. One JSON line per fit.

Run from the repository root:
  PYTHONPATH=. OMP_NUM_THREADS=1 python studies/structure_edge_rule/collect.py P K MODELS OUT.jsonl
"""

import itertools
import json
import sys
import warnings

import numpy as np

from pgmpy_dp.structure import tables_route as tr
from pgmpy_dp.structure.sampling import model_edges, random_pairwise_model, sample_pairwise_model
from pgmpy_dp.privacy import Domain

NS = [500, 1000, 2000, 5000, 10000, 30000]
RHOS = [0.1, 1.0, 10.0]


def raw_scores(release, dom):
    sizes = [dom.size(a) for a in dom.attrs]
    sigma = float(max(t.scale for t in release.tables))
    n_hat = max(float(release.n_records_estimate), 1.0)
    if tr.is_exact(sizes):
        est, weights, _ = tr._exact_weights(release, dom)
        cov = tr._exact_covariance(est, dom, sigma, n_hat)
    else:
        weights, prec = tr._icov_weights(release, dom, sigma, n_hat)
        cov = tr._icov_covariance(prec, dom, sigma, n_hat)
    score, _ = tr.wald_scores(weights, cov)
    strength = {e: float(np.abs(w).max()) for e, w in weights.items()}
    return score, strength, n_hat, sigma


def main(p, k, models, out):
    with open(out, "a") as fh:
        for model in range(models):
            W, theta = random_pairwise_model(p, k=k, max_degree=3, eta=0.5, seed=10_000 + model)
            cols = [f"x{i}" for i in range(p)]
            truth = {tuple(e) for e in model_edges(W, cols)}
            for n in NS:
                df = sample_pairwise_model(W, theta, n, seed=20_000 + 97 * model + n)
                dom = Domain.from_dataframe(df)
                codes = dom.encode(df)
                for rho in RHOS:
                    rel = tr.release_pair_tables(codes, dom, rho, random_state=np.random.default_rng(
                        [model, n, int(rho * 1000)]))
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        score, strength, n_hat, sigma = raw_scores(rel, dom)
                    pairs = list(itertools.combinations(cols, 2))
                    fh.write(json.dumps(dict(p=p, k=k, model=model, n=n, rho=rho, n_hat=n_hat, sigma=sigma,
                                             score=[score[e] for e in pairs], strength=[strength[e] for e in pairs],
                                             edge=[int(e in truth) for e in pairs])) + "\n")
                    fh.flush()
                print(p, k, model, n, flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
