"""Exact recovery of tables-route edge-rule variants on held-out models (seeds 10_000 + model).

Variants (module constants of pgmpy_dp.structure.tables_route patched per fit, same release):
  old       : alpha = EDGE_ALPHA at every n, icov scores cut directly (no refit test)
  alpha-n   : alpha = edge_alpha(n_hat), icov scores cut directly
  screenS   : alpha = edge_alpha(n_hat); icov screen at family-wise S, refit, Monte Carlo Wald on the refit
One JSON line per (model, n, rho, variant): exact, fp, fn, method, cpu.

Run from the repository root:
  PYTHONPATH=. OMP_NUM_THREADS=1 python studies/structure_edge_rule/pipeline.py P K MODELS NS OUT.jsonl
"""

import json
import sys
import time
import warnings

import numpy as np

from pgmpy_dp.privacy import Domain
from pgmpy_dp.structure import tables_route as tr
from pgmpy_dp.structure.sampling import model_edges, random_pairwise_model, sample_pairwise_model

RHOS = [0.1, 1.0, 10.0]
CONFIRM = tr._confirm_on_refit


def variants(exact):
    yield "old", dict(alpha=tr.EDGE_ALPHA, screen=0.0, confirm=False)
    yield "alpha-n", dict(alpha=None, screen=0.0, confirm=False)
    if not exact:
        for s in (1.0, 4.0, 10.0):
            yield f"screen{s:g}", dict(alpha=None, screen=s, confirm=True)


def run(rel, dom, alpha, screen, confirm):
    tr.SCREEN_ALPHA = screen
    tr._confirm_on_refit = CONFIRM if confirm else (lambda *a, **k: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tr.fit_tables_route(rel, dom, alpha=alpha, random_state=0)


def main(p, k, models, ns, out):
    with open(out, "a") as fh:
        for model in range(models):
            W, theta = random_pairwise_model(p, k=k, max_degree=3, eta=0.5, seed=10_000 + model)
            cols = [f"x{i}" for i in range(p)]
            truth = {tuple(e) for e in model_edges(W, cols)}
            for n in ns:
                df = sample_pairwise_model(W, theta, n, seed=20_000 + 97 * model + n)
                dom = Domain.from_dataframe(df)
                codes = dom.encode(df)
                exact = tr.is_exact([dom.size(a) for a in dom.attrs])
                for rho in RHOS:
                    rel = tr.release_pair_tables(codes, dom, rho, random_state=np.random.default_rng(
                        [model, n, int(rho * 1000)]))
                    for name, kw in variants(exact):
                        t0 = time.process_time()
                        fit = run(rel, dom, **kw)
                        e = set(fit.edges)
                        fh.write(json.dumps(dict(p=p, k=k, model=model, n=n, rho=rho, variant=name,
                                                 exact=int(e == truth), fp=len(e - truth), fn=len(truth - e),
                                                 method=fit.method, cpu=round(time.process_time() - t0, 3))) + "\n")
                    fh.flush()
                print(p, k, model, n, flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), [int(x) for x in sys.argv[4].split(",")], sys.argv[5])
