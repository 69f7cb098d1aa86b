"""The final fit alone, on the releases of one AIM run dumped by run_one.py --dump.

Scores (3-way / 2-way L1 on Adult, as benchmarks/synthesis.py) the last round's fit, the published
model fitted cold (naive warm start) and warm (from the last round's fit) at several EM budgets,
and optionally mbi's MirrorDescent on the same measurements. CPU seconds per fit.

  OMP_NUM_THREADS=1 python studies/aim_rounds/final_fit.py /tmp/e1_2.pkl --budgets 10 30 --mbi
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import synthesis  # noqa: E402
from peers_synthesis import Marginals  # noqa: E402

from pgmpy_dp.estimators import markov  # noqa: E402
from pgmpy_dp.structure import marginals  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--budgets", type=int, nargs="+", default=[30])
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--mbi", action="store_true")
    ap.add_argument("--mbi-iters", type=int, default=1000)
    a = ap.parse_args()
    with open(a.dump, "rb") as f:
        releases, domain, fit = pickle.load(f)
    _, codes, sizes, states, _ = synthesis.load("adult", 0, 0, Path("/tmp"))

    def scored(name, cliques, theta, cpu, **extra):
        s = synthesis.score(codes, sizes, [], model=Marginals(sizes, cliques, theta))
        print(json.dumps({"dump": a.dump, "fit": name, "l1_3": s["l1_3"], "l1_2": s["l1_2"], "cpu": cpu, **extra}),
              flush=True)

    scored("last-round", fit.cliques, fit.theta, 0.0, n_releases=len(releases))
    starts = ([("cold", None)] if a.cold else []) + [("warm", fit)]
    for budget in a.budgets:
        markov.EM_BUDGET = budget
        for name, start in starts:
            c0 = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = marginals.fit_final_model(releases, domain, False, start=start)
            cpu = time.process_time() - c0
            scored(f"{name}@{budget}", est.cliques_, est.log_potentials_, cpu, n_iter=est.n_iter_,
                   converged=bool(est.converged_), tolerance=est.tolerance_)
    if a.mbi:
        import peers_synthesis as peers

        mbi = peers._mbi()
        dom = mbi.Domain(list(sizes), list(sizes.values()))
        ms = [mbi.LinearMeasurement(np.asarray(t.values, dtype=float).ravel(), tuple(t.attrs), stddev=t.scale)
              for r in releases for t in r.tables]
        c0 = time.process_time()
        model = mbi.estimation.MirrorDescent().estimate(dom, ms, iters=a.mbi_iters)
        cpu = time.process_time() - c0
        pots = model.potentials
        scored(f"mbi-md@{a.mbi_iters}", [tuple(c) for c in pots.cliques],
               [np.asarray(pots[c].values, dtype=float) for c in pots.cliques], cpu)


if __name__ == "__main__":
    main()
