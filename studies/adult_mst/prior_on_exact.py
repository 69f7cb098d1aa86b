"""The L2 prior alone, no noise: penalised MLE of one Adult edge fitted to its EXACT table.

With the edge as the only clique, a main effect (the attribute's own margin) is carried by the
pairwise log-potential, replicated over every state of the partner, so the penalty
``lambda/2 ||theta||^2`` prices it ``|partner|`` times: a prior precision of ``lambda * |partner|``
on the margin's log-odds. A node potential carries it once. This prints the 1-way and 2-way L1
of the penalised fit for both parametrisations (lambda per record = weight / N, as the estimator).

    OMP_NUM_THREADS=1 /work/venv/bin/python -m studies.adult_mst.prior_on_exact
"""

import numpy as np

from pgmpy_dp.engine import JunctionTree, fit_log_potentials
from pgmpy_dp.privacy.domain import Domain

from .mst_measurements import contingency, load_adult, public_states

df, sizes = load_adult()
n = len(df)
print("| edge | weight | cliques | L1 2-way | L1 margin of 2nd attr |\n|---|---|---|---|---|")
for a, b in [("age", "fnlwgt"), ("capital-loss", "hours-per-week"), ("relationship", "sex")]:
    dom = Domain(public_states({a: sizes[a], b: sizes[b]}))
    t = contingency(df, sizes, (a, b)) / n
    for weight in (1.0, 0.6079):
        for cliques in ([(a, b)], [(a, b), (a,), (b,)]):
            targets = [t] + [t.sum(axis=1), t.sum(axis=0)][: len(cliques) - 1]
            jt = JunctionTree(dom, cliques)
            fit = fit_log_potentials(jt, targets, weight / n, warn=False)
            m = jt.marginals(fit.log_potentials)[0][0]
            label = "edge" if len(cliques) == 1 else "edge + nodes"
            print(f"| {a} - {b} | {weight:.3g} | {label} | {np.abs(m - t).sum():.3f} | "
                  f"{np.abs(m.sum(axis=0) - t.sum(axis=0)).sum():.3f} |")
