"""Paired pilot runs of CGM-EM's knobs: the same releases fitted with each variant; KL, calls, seconds.

Each variant is a JSON object with up to three keys: ``"cgm"`` (keywords for ``cgm_em``, plus
``"m_noise": c`` for an M-step gradient tolerance of ``c`` noise scales per record), ``"warm"``
(keywords for the naive warm start's ``fit_log_potentials``, e.g. ``{"solver": "fisher",
"max_iter": 300}``) and ``"method"`` (``"naive-mle"`` for the baseline). The cells are population
0 of ``mn_profile.py``'s models; release ``r`` of a cell uses seed ``100 + r`` for every variant,
so the variants see the same noisy tables. Inference calls are counted, which the machine's load
does not change; seconds are for orientation only.

    python benchmarks/mn_em_knobs.py '{"old": {"cgm": {"m_step_iter": 20}, "warm": {"solver": "lbfgs", "max_iter": 1000}},
        "new": {}}' '[["chain3", 1000000, 0.5], ["er", 10000, 0.5]]' 2 results/mn_em_knobs.csv

Prints one line per fit and the means per cell and variant; appends the fits to the CSV. Per fit it
also records the process CPU seconds, CGM-EM's final objective, and the accelerator's steps
(``cycles``: accelerated steps taken; ``jumps``: those beyond a plain or double EM step; ``max_step``),
e.g. issue 13's eighth round:

    python benchmarks/mn_em_knobs.py '{"sq30": {}, "plain30": {"cgm": {"accelerate": false}},
        "aa30": {"cgm": {"accelerate": "anderson"}}, "aa15": {"cgm": {"accelerate": "anderson", "max_iter": 15}}}'
        '[["chain3", 10000, 0.1], ["er", 100000, 0.5], ["chain3", 1000000, 0.5], ["er", 1000000, 1.0]]' 2 out.csv
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp
import pgmpy_dp.engine.cgm as cgm_module
import pgmpy_dp.estimators.markov as markov_module
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.evaluation.markov import kl_divergence_potentials
from pgmpy_dp.tables import release_from_codes

from mn_profile import population

_calls = [0]
_marginals = JunctionTree.marginals


def _counted(jt, theta):
    _calls[0] += 1
    return _marginals(jt, theta)


def run(variant: dict, cells, releases: int) -> list[dict]:
    """Fit every release of every cell with one variant's knobs; one row per fit."""
    cgm_kw, warm_kw = dict(variant.get("cgm", {})), dict(variant.get("warm", {}))
    last: dict = {"result": None}

    def cgm(engine, measurements, n_records, *a, **k):
        kw = dict(cgm_kw)
        c = kw.pop("m_noise", None)
        if c is not None:
            kw["m_tol"] = max(1e-8, c * min(m.scale for m in measurements) / n_records)
        result = cgm_module.cgm_em(engine, measurements, n_records, *a, **{**k, **kw})
        last["result"] = result
        return result

    def warm(*a, **k):
        return fit_orig(*a, **{**k, **warm_kw})

    fit_orig = markov_module.fit_log_potentials
    saved = markov_module.cgm_em, markov_module.fit_log_potentials
    markov_module.cgm_em, markov_module.fit_log_potentials = cgm, warm
    JunctionTree.marginals = _counted
    rows = []
    try:
        for kind, n, eps in cells:
            domain, edges, theta, _, codes = population(kind, int(n))
            for r in range(releases):
                release = release_from_codes(codes, domain, edges, eps, random_state=np.random.default_rng(100 + r))
                est = pgmpy_dp.PrivateMarkovEstimator(method=variant.get("method", "cgm-em"), show_progress=False)
                _calls[0] = 0
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    last["result"] = None
                    t0, c0 = time.perf_counter(), time.process_time()
                    est.fit(DiscreteMarkovNetwork(edges), release)
                    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
                kl = kl_divergence_potentials(domain, edges, theta, est.cliques_, est.log_potentials_)
                res = last["result"]
                steps = [] if res is None else list(res.steps)
                trace = [] if res is None else list(res.log_likelihood)
                rows.append(dict(model=kind, N=int(n), epsilon=eps, release=r, kl=kl, seconds=secs, cpu_seconds=cpu,
                                 calls=_calls[0], em_iterations=est.n_iter_, warm_start_iterations=est.mle_n_iter_,
                                 # accelerated cycles: how many, how many jumped beyond the double EM step, the largest step
                                 cycles=len(steps), jumps=sum(a > 1.0 for a in steps), max_step=max(steps, default=0.0),
                                 objective=trace[-1] if trace else float("nan")))
    finally:
        markov_module.cgm_em, markov_module.fit_log_potentials = saved
        JunctionTree.marginals = _marginals
    return rows


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    variants, cells, releases = json.loads(argv[0]), json.loads(argv[1]), int(argv[2])
    rows = []
    for name, variant in variants.items():
        for row in run(variant, cells, releases):
            row["variant"] = name
            rows.append(row)
            print(row, flush=True)
    df = pd.DataFrame(rows)
    means = df.groupby(["model", "N", "epsilon", "variant"])[["kl", "cpu_seconds", "calls", "em_iterations", "cycles", "jumps", "objective"]].mean()
    print(means.to_string())
    if len(argv) > 3:
        path = Path(argv[3])
        df.to_csv(path, mode="a", header=not path.exists(), index=False)


if __name__ == "__main__":
    main()
