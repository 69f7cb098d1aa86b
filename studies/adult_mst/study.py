"""Why CGM-EM trails mbi on MST's measurements of Adult: one fit per (seed, configuration).

Every estimator is fitted to exactly the same two releases of one seed
(``mst_measurements``): our ``PrivateMarkovEstimator`` on the tree model, and mbi 2.0's
``MirrorDescent`` on the same arrays with the same noise standard deviations. Each fitted
model is scored by the average L1 over all 91 2-way and 364 3-way normalised marginals.

Run from the worktree root, e.g.::

    OMP_NUM_THREADS=1 nice -n 10 /work/venv/bin/python -m studies.adult_mst.study \
        --seeds 0 1 2 3 4 --out results/current_mst.csv

Writes one row per fit to ``--out`` (relative to this folder) and the per-marginal
errors to ``<out>_marginals.csv.gz``.
"""

from __future__ import annotations

import argparse
import copy
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork

from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine import JunctionTree
from pgmpy_dp.estimators.evidence import pooled_n_records
from pgmpy_dp.privacy.domain import Domain

from .fitting import timed_fit
from .mst_measurements import HERE, TreeMarginals, l1_errors, load_adult, mst_measurements, public_states

os.environ.setdefault("JAX_ENABLE_COMPILATION_CACHE", "false")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")


def _ours(reg="auto", max_iter=None, method="cgm-em", declared_n=False, rules=None, **kw):
    return dict(kind="ours", reg=reg, max_iter=max_iter, method=method, declared_n=declared_n, rules=rules or {}, kw=kw)


#: one CGM-EM weight for every clique, from the mean over all tables (the rule before)
POOLED_WEIGHT = dict(per_clique_weights=lambda rule, cliques, tables, measurements, tied, pooled: pooled)
#: the fit before: the tree's edges only (no potential for the measured 1-ways), one weight
NO_NODES = dict(measured_subcliques=lambda releases, cliques: [], **POOLED_WEIGHT)

#: name -> how to fit. ``rules``: module-level names of ``pgmpy_dp.estimators.markov`` replaced for that fit only.
#: The library's default now gives every measured attribute its own potential (``cgm-em``); ``-edges`` is the old fit.
CONFIGS = {
    "cgm-em": _ours(),
    "cgm-em-it100": _ours(max_iter=100),
    "cgm-em-pooled-weight": _ours(rules=POOLED_WEIGHT),
    "cgm-em-edges": _ours(rules=NO_NODES),
    "cgm-em-edges-trueN": _ours(rules=NO_NODES, declared_n=True),
    "cgm-em-edges-reg0": _ours(rules=NO_NODES, reg=0.0),
    "cgm-em-reg1e-1": _ours(reg=0.1),
    "cgm-em-reg0": _ours(reg=0.0),
    "naive-mle": _ours(method="naive-mle"),
    "naive-mle-edges": _ours(method="naive-mle", rules=NO_NODES),
    "mbi-1000": dict(kind="mbi", iters=1000),
    "mbi-5000": dict(kind="mbi", iters=5000),
    "mbi-1000-ourN": dict(kind="mbi", iters=1000, our_n=True),
}


#: the configurations behind results/current_mst.csv
DEFAULT_CONFIGS = ["cgm-em", "cgm-em-pooled-weight", "mbi-1000", "cgm-em-edges", "naive-mle", "naive-mle-edges",
                   "cgm-em-it100"]


def fit_ours(releases, edges, sizes, cfg):
    if cfg["declared_n"]:  # the true record count, as if it were public (same noisy tables)
        releases = [copy.copy(r) for r in releases]
        for r in releases:
            r.n_records = float(len(load_adult()[0]))
    est = PrivateMarkovEstimator(
        method=cfg["method"], regularization=cfg["reg"], max_iter=cfg["max_iter"], show_progress=False, **cfg["kw"]
    )
    model = DiscreteMarkovNetwork(edges)
    cpu = timed_fit(est, model, releases, None, **cfg["rules"])
    domain = Domain(public_states({a: sizes[a] for a in sizes}))
    marg, _ = JunctionTree(domain, est.cliques_).marginals(est.log_potentials_)
    pairs = {tuple(c): m for c, m in zip(est.cliques_, marg) if len(c) == 2}
    info = dict(
        cpu_seconds=cpu, n_records=est.n_records_, n_iter=est.n_iter_, converged=est.converged_,
        cliques=len(est.cliques_),
        reg_cgm=float(np.mean(est.regularization_.get("cgm-em", np.nan))), reg_naive=est.regularization_["naive-mle"],
        loglik_first=est.log_likelihood_[0] if est.log_likelihood_ else np.nan,
        loglik_last=est.log_likelihood_[-1] if est.log_likelihood_ else np.nan,
    )
    return pairs, info


_MBI_CACHE: dict = {}


def fit_mbi(releases, edges, sizes, cfg, our_n=None):
    import jax

    jax.config.update("jax_enable_x64", True)
    import mbi
    from mbi import estimation

    mdom = mbi.Domain(list(sizes), [sizes[a] for a in sizes])
    ms = [
        mbi.LinearMeasurement(t.values.ravel(), t.attrs, stddev=float(np.sqrt(t.variance)))
        for r in releases for t in r.tables
    ]
    total = our_n if cfg.get("our_n") else None
    t0 = time.process_time()
    model = estimation.MirrorDescent().estimate(mdom, ms, known_total=total, iters=cfg["iters"])
    pairs = {}
    for e in edges:
        f = model.project(list(e))
        pairs[e] = np.asarray(f.values, dtype=float)
    cpu = time.process_time() - t0
    return pairs, dict(cpu_seconds=cpu, n_records=float(model.total), n_iter=cfg["iters"])


def run(seeds, configs, out: Path) -> pd.DataFrame:
    _, sizes = load_adult()
    rows, per = [], []
    for seed in seeds:
        rel1, rel2, edges, rho = mst_measurements(seed)
        our_n = None
        for name in configs:
            cfg = CONFIGS[name]
            if cfg["kind"] == "mbi":
                if our_n is None:
                    our_n = pooled_n_records([rel1, rel2])  # the record count our fits use
                pairs, info = fit_mbi([rel1, rel2], edges, sizes, cfg, our_n)
            else:
                pairs, info = fit_ours([rel1, rel2], edges, sizes, cfg)
            err = l1_errors(TreeMarginals(pairs))
            l2 = [v for k, v in err.items() if len(k) == 2]
            l3 = [v for k, v in err.items() if len(k) == 3]
            rows.append(dict(seed=seed, config=name, l1_2way=np.mean(l2), l1_3way=np.mean(l3), **info))
            per += [dict(seed=seed, config=name, attrs="|".join(k), l1=v) for k, v in err.items()]
            print(f"seed={seed} {name:24s} 2-way {np.mean(l2):.4f} 3-way {np.mean(l3):.4f} "
                  + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in info.items()), flush=True)
            out.parent.mkdir(parents=True, exist_ok=True)
            pd.DataFrame(rows).to_csv(out, index=False)
            pd.DataFrame(per).to_csv(out.with_name(out.stem + "_marginals.csv.gz"), index=False)
    return pd.DataFrame(rows)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby("config", sort=False)
    out = pd.DataFrame({
        "trials": g.size(),
        "l1_3way": g.l1_3way.mean(), "se_3way": g.l1_3way.sem(),
        "l1_2way": g.l1_2way.mean(), "se_2way": g.l1_2way.sem(),
        "n_records": g.n_records.mean(), "cpu_s": g.cpu_seconds.mean(),
    })
    return out


def paired(df: pd.DataFrame, base: str = "mbi-1000") -> pd.DataFrame:
    """Per-seed differences ``config - base`` in 2- and 3-way L1: mean and standard error over seeds."""
    rows = []
    for name, g in df.groupby("config", sort=False):
        if name == base:
            continue
        d = g.set_index("seed")[["l1_3way", "l1_2way"]] - df[df.config == base].set_index("seed")[["l1_3way", "l1_2way"]]
        d = d.dropna()
        rows.append(dict(config=name, vs=base, seeds=len(d), d3=d.l1_3way.mean(), se3=d.l1_3way.sem(),
                         d2=d.l1_2way.mean(), se2=d.l1_2way.sem()))
    return pd.DataFrame(rows)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS, choices=list(CONFIGS))
    p.add_argument("--out", default="results/current_mst.csv")
    args = p.parse_args(argv)
    df = run(args.seeds, args.configs, HERE / args.out)
    print(summarise(df).to_string(float_format=lambda x: f"{x:.4f}"))
    if (df.config == "mbi-1000").any():
        print(paired(df).to_string(index=False, float_format=lambda x: f"{x:+.4f}"))


if __name__ == "__main__":
    main()
