"""An AIM-like measurement set of Adult: ours against mbi 2.0 on the same noisy tables.

A study of the estimator, not of the selection: the marginals are chosen NON-privately, as
the attribute pairs and triples of highest true mutual information (total correlation for a
triple) whose tables have at most ``MAX_CELLS`` cells, greedily while the junction tree of the
model stays below ``MAX_JT_CELLS`` cells per clique and no two triples share two attributes. Measured, in one discrete Gaussian release
at rho = 0.014973 ((epsilon, delta) = (1, 1e-9)): every 1-way table, the ``--triples`` best
triples and the ``--pairs`` best pairs (a pair may lie inside a chosen triple, as AIM often
measures both). Every estimator gets exactly the same release of a seed:

* ``ours``: ``PrivateMarkovEstimator()`` with its defaults, cliques = the maximal measured sets
  (the library adds a potential for every measured set inside them);
* ``ours-every``: cliques = every measured set passed explicitly (the synthesizer's AIM);
* ``ours-1way``: only the measured 1-ways get a potential of their own (the measured pairs
  inside a triple do not);
* ``ours-pooled-weight``: ``ours`` with one CGM-EM weight for all cliques (from the mean over
  all tables) instead of one per clique;
* ``ours-none``: no potential besides the maximal measured sets, one weight (the fit before);
* ``mbi-1000``: mbi 2.0 ``MirrorDescent`` (1000 iterations, its own total estimate) on the same
  arrays with the same noise standard deviations.

Score: average L1 between the model's and the true normalised tables over all 364 3-way and
91 2-way marginals, computed exactly by variable elimination over the fitted potentials (the
same code for every estimator).

    OMP_NUM_THREADS=1 nice -n 10 /work/venv/bin/python -W ignore -m studies.adult_mst.aim_like --seeds 0 1 2 3 4
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from functools import lru_cache

import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp  # noqa: F401  (df.dp accessor)
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine import JunctionTree
from pgmpy_dp.estimators import measurements as measurements_module
from pgmpy_dp.privacy.budget import epsilon_delta_to_rho
from pgmpy_dp.privacy.domain import Domain

from .fitting import timed_fit
from .mst_measurements import DELTA, EPSILON, HERE, contingency, load_adult, public_states, true_marginals

os.environ.setdefault("JAX_ENABLE_COMPILATION_CACHE", "false")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

MAX_CELLS = 10_000
MAX_JT_CELLS = 200_000


def _entropy(t: np.ndarray) -> float:
    p = t[t > 0] / t.sum()
    return float(-(p * np.log(p)).sum())


@lru_cache(maxsize=4)
def select(n_triples: int, n_pairs: int) -> tuple[tuple[str, ...], ...]:
    """The measured 2- and 3-way sets, by true mutual information (non-private), triples first."""
    df, sizes = load_adult()
    attrs = list(sizes)
    h1 = {a: _entropy(contingency(df, sizes, (a,))) for a in attrs}

    def score(c):
        return sum(h1[a] for a in c) - _entropy(contingency(df, sizes, c))

    domain = Domain(public_states(sizes))
    chosen: list[tuple[str, ...]] = []
    for k, quota in ((3, n_triples), (2, n_pairs)):
        cand = [c for c in itertools.combinations(attrs, k) if np.prod([sizes[a] for a in c]) <= MAX_CELLS]
        taken = 0
        for c in sorted(cand, key=score, reverse=True):
            if taken == quota:
                break
            if k == 3 and any(len(set(c) & set(d)) > 1 for d in chosen):
                continue  # spread the triples: the best ones otherwise all hold marital-status and relationship
            cliques = chosen + [c] + [(a,) for a in attrs]
            if JunctionTree(domain, cliques).max_cells <= MAX_JT_CELLS:
                chosen.append(c)
                taken += 1
    return tuple(chosen)


def measurements(seed: int, n_triples: int, n_pairs: int):
    df, sizes = load_adult()
    rho = epsilon_delta_to_rho(EPSILON, DELTA)
    tables = [(a,) for a in sizes] + list(select(n_triples, n_pairs))
    rng = np.random.default_rng([seed, 36, 2])
    return df.dp.release(tables, rho=rho, domain=public_states(sizes), random_state=rng, show_progress=False)


def maximal(sets):
    fs = [frozenset(s) for s in sets]
    return [s for s, f in zip(sets, fs) if not any(f < g for g in fs)]


def eliminate(cliques, log_potentials, attrs) -> np.ndarray:
    """The normalised marginal over ``attrs`` of the model ``prod exp(theta_c)``, by einsum (exact)."""
    names = {a: i for i, a in enumerate(dict.fromkeys(a for c in cliques for a in c))}
    ops = []
    for c, t in zip(cliques, log_potentials):
        t = np.asarray(t, dtype=np.float64)
        ops += [np.exp(t - t.max()), [names[a] for a in c]]
    out = np.einsum(*ops, [names[a] for a in attrs], optimize="greedy")
    return out / out.sum()


def score(cliques, log_potentials) -> tuple[float, float]:
    truth = true_marginals()
    err = {k: float(np.abs(eliminate(cliques, log_potentials, k) - t).sum()) for k, t in truth.items()}
    return (float(np.mean([v for k, v in err.items() if len(k) == 2])),
            float(np.mean([v for k, v in err.items() if len(k) == 3])))


def fit_ours(release, variant: str):
    _, sizes = load_adult()
    measured = [t.attrs for t in release.tables]
    edges = {tuple(sorted(p)) for c in measured for p in itertools.combinations(c, 2)}
    model = DiscreteMarkovNetwork(sorted(edges))
    model.add_nodes_from(sizes)
    cliques = measured if variant == "ours-every" else maximal(measured)
    original = measurements_module.measured_subcliques
    rules = {}
    if variant in ("ours-none", "ours-pooled-weight"):
        rules["per_clique_weights"] = lambda rule, cl, tables, ms, tied, pooled: pooled
    if variant == "ours-none":
        rules["measured_subcliques"] = lambda releases, cl: []
    elif variant == "ours-1way":
        rules["measured_subcliques"] = lambda releases, cl: [c for c in original(releases, cl) if len(c) == 1]
    est = PrivateMarkovEstimator(show_progress=False)
    cpu = timed_fit(est, model, [release], cliques, **rules)
    return est.cliques_, est.log_potentials_, dict(cpu_seconds=cpu, n_iter=est.n_iter_, cliques=len(est.cliques_),
                                                   reg_cgm=float(np.mean(est.regularization_["cgm-em"])), n_records=est.n_records_)


def fit_mbi(release, iters: int = 1000):
    import jax

    jax.config.update("jax_enable_x64", True)
    import mbi
    from mbi import estimation

    _, sizes = load_adult()
    mdom = mbi.Domain(list(sizes), [sizes[a] for a in sizes])
    ms = [mbi.LinearMeasurement(t.values.ravel(), t.attrs, stddev=float(np.sqrt(t.variance))) for t in release.tables]
    t0 = time.process_time()
    model = estimation.MirrorDescent().estimate(mdom, ms, iters=iters)
    jax.block_until_ready(model.potentials)
    cpu = time.process_time() - t0
    cliques, theta = [], []
    for c in model.potentials.cliques:
        cliques.append(tuple(model.potentials[c].domain.attributes))
        theta.append(np.asarray(model.potentials[c].values, dtype=np.float64))
    return cliques, theta, dict(cpu_seconds=cpu, n_iter=iters, cliques=len(cliques), n_records=float(model.total))


VARIANTS = ["ours", "ours-every", "ours-1way", "ours-pooled-weight", "ours-none", "mbi-1000"]


def run(seeds, variants, n_triples, n_pairs, out) -> pd.DataFrame:
    rows = []
    print("measured:", select(n_triples, n_pairs), flush=True)
    for seed in seeds:
        release = measurements(seed, n_triples, n_pairs)
        for v in variants:
            cliques, theta, info = fit_mbi(release) if v == "mbi-1000" else fit_ours(release, v)
            l2, l3 = score(cliques, theta)
            rows.append(dict(seed=seed, config=v, l1_2way=l2, l1_3way=l3, **info))
            print(f"seed={seed} {v:12s} 2-way {l2:.4f} 3-way {l3:.4f} "
                  + " ".join(f"{k}={x:.4g}" for k, x in info.items()), flush=True)
            out.parent.mkdir(parents=True, exist_ok=True)
            pd.DataFrame(rows).to_csv(out, index=False)
    return pd.DataFrame(rows)


def main(argv=None):
    from .study import paired, summarise

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--variants", nargs="+", default=["ours", "mbi-1000", "ours-pooled-weight", "ours-none"],
                   choices=VARIANTS)
    p.add_argument("--triples", type=int, default=8)
    p.add_argument("--pairs", type=int, default=12)
    p.add_argument("--out", default="results/current_aim_like.csv")
    args = p.parse_args(argv)
    df = run(args.seeds, args.variants, args.triples, args.pairs, HERE / args.out)
    print(summarise(df).to_string(float_format=lambda x: f"{x:.4f}"))
    if (df.config == "mbi-1000").any():
        print(paired(df).to_string(index=False, float_format=lambda x: f"{x:+.4f}"))


if __name__ == "__main__":
    main()
