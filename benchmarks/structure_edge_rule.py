"""The tables route's edge rule (docs/structure.md): exact recovery of its variants on held-out models.

Held-out models (seeds ``10_000 + model``; ``structure.py`` uses other seeds): random pairwise models with
max degree 3 and ``max |W_ij| = 0.5``; a fresh sample per n (seed ``20_000 + 97 model + n``); one release of
the two-way tables per (model, n, rho), every variant fitted on that same release with
``fit_tables_route`` (module constants of ``pgmpy_dp.structure.tables_route`` set per fit and restored):

* ``old``: the family-wise rate ``EDGE_ALPHA`` at every n, icov scores cut directly (no refit test);
* ``alpha-n``: the rate ``edge_alpha(n_hat)`` falling with n (the default where the MLE is exact);
* ``screenS`` (beyond the exact limit only): ``edge_alpha(n_hat)``, an icov screen at family-wise S, a
  refit on the screened graph and the Monte Carlo Wald test on the refit (the default is ``S = 4``).

Writes one row per (model, n, rho, variant): exact recovery, false positives and negatives, the method the
route used, CPU seconds; prints exact recovery and false edges per fit by n.

Run:  python benchmarks/structure_edge_rule.py --p 10 --k 3 --models 10
      python benchmarks/structure_edge_rule.py --p 20 --k 2 --models 10
      python benchmarks/structure_edge_rule.py --quick      # p = 5, one model, n = 1,000, rho = 1: seconds
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

import harness
from pgmpy_dp.privacy import Domain
from pgmpy_dp.structure import tables_route as tr
from pgmpy_dp.testing.pairwise_models import model_edges, random_pairwise_model, sample_pairwise_model

NS = [1000, 2000, 5000, 10000, 30000]
RHOS = [0.1, 1.0, 10.0]


def variants(exact: bool):
    yield "old", dict(alpha=tr.EDGE_ALPHA, screen=0.0, confirm=False)
    yield "alpha-n", dict(alpha=None, screen=0.0, confirm=False)
    if not exact:
        for s in (1.0, 4.0, 10.0):
            yield f"screen{s:g}", dict(alpha=None, screen=s, confirm=True)


def run(release, dom, alpha, screen, confirm):
    """``fit_tables_route`` under one variant; the module's screen and refit test are restored after it."""
    saved = tr.SCREEN_ALPHA, tr._confirm_on_refit
    tr.SCREEN_ALPHA = screen
    if not confirm:
        tr._confirm_on_refit = lambda *a, **k: None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return tr.fit_tables_route(release, dom, alpha=alpha, random_state=0)
    finally:
        tr.SCREEN_ALPHA, tr._confirm_on_refit = saved


def run_model(p, k, model, ns, rhos) -> list[dict]:
    W, theta = random_pairwise_model(p, k=k, max_degree=3, eta=0.5, seed=10_000 + model)
    truth = {tuple(e) for e in model_edges(W, [f"x{i}" for i in range(p)])}
    rows = []
    for n in ns:
        df = sample_pairwise_model(W, theta, n, seed=20_000 + 97 * model + n)
        dom = Domain.from_dataframe(df)
        codes = dom.encode(df)
        exact = tr.is_exact([dom.size(a) for a in dom.attrs])
        for rho in rhos:
            release = tr.release_pair_tables(codes, dom, rho,
                                             random_state=np.random.default_rng([model, n, int(rho * 1000)]))
            for name, kw in variants(exact):
                start = time.process_time()
                fit = run(release, dom, **kw)
                edges = set(fit.edges)
                rows.append(dict(p=p, k=k, model=model, n=n, rho=rho, variant=name, exact=int(edges == truth),
                                 fp=len(edges - truth), fn=len(truth - edges), method=fit.method,
                                 cpu=round(time.process_time() - start, 3)))
        print(p, k, model, n, flush=True)
    return rows


def summary(runs: pd.DataFrame) -> str:
    """Exact recovery and false edges per fit, by n, for each (p, k, rho, variant)."""
    lines = ["| p | k | rho | variant | models | exact recovery by n | false edges per fit by n |",
             "|---|---|---|---|---|---|---|"]
    for (p, k, rho, variant), g in runs.groupby(["p", "k", "rho", "variant"]):
        by_n = g.groupby("n")
        lines.append(f"| {p} | {k} | {rho:g} | {variant} | {g.model.nunique()} | "
                     f"{' / '.join(f'{x:.1f}' for x in by_n.exact.mean())} | "
                     f"{' / '.join(f'{x:.1f}' for x in by_n.fp.mean())} |")
    return "\n".join(lines)


def main(argv=None) -> pd.DataFrame:
    ap = harness.parser(__doc__, out="structure_edge_rule")
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--ns", type=int, nargs="+", default=NS)
    ap.add_argument("--rhos", type=float, nargs="+", default=RHOS)
    args = harness.parse(ap, argv, p=5, models=1, ns=[1000], rhos=[1.0])
    runs = pd.DataFrame([r for model in range(args.models)
                         for r in run_model(args.p, args.k, model, args.ns, args.rhos)])
    harness.write_csv(runs, f"{args.out}_p{args.p}k{args.k}")
    print(summary(runs))
    return runs


if __name__ == "__main__":
    main()
