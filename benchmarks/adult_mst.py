"""The Markov fit against mbi on the same noisy tables of Adult: own potentials for every measured set and
the prior weight per clique (docs/markov.md, "the Adult census"; docs/decisions.md).

Data: the Adult census (``PGMPY_DP_ADULT`` or ``--data``, default /work/shared/data: ``adult.csv`` and
``adult-domain.json``; 48,842 rows, 14 columns, domains up to 100 states). (epsilon, delta) = (1, 1e-9),
converted by ``epsilon_delta_to_rho`` (rho = 0.014973). Two measurement sets, drawn once per seed and fitted
by every contender:

* ``mst``: MST written from the paper, rho split in three: every 1-way table in one discrete Gaussian
  release, a private maximum spanning tree (the L1 between each pair's true table and the independence
  estimate from the noisy 1-ways, Kruskal with the exponential mechanism at ``sqrt(8 (rho/3) / (d - 1))``),
  the d - 1 tree tables in a second release. MST's domain compression is not done. Noise seed ``[seed, 36]``.
* ``aim-like``: every 1-way table plus the 8 triples and 12 pairs of highest true mutual information (chosen
  NON-privately: a study of the fit, not of the selection; at most 10,000 cells each, triples sharing at most
  one column, the model's junction tree below 200,000 cells per clique), one release at rho. Seed
  ``[seed, 36, 2]``.

Contenders (the model's cliques: the tree edges / the maximal measured sets):

* ``default``: ``PrivateMarkovEstimator().fit(model, releases, cliques=...)``: every set measured on its own
  inside a clique gets a potential, CGM-EM's floored weight is set per clique;
* ``pooled-weight``: the same potentials, one weight from all tables (``fit_settings(per_clique=False)``);
* ``before``: the cliques only and one weight (the fit before both changes);
* ``mbi-1000``: mbi 2.0's ``MirrorDescent`` (1000 iterations, its own total) on the same arrays with the
  same noise standard deviations; skipped, with a note, when mbi is not installed.

The three fits of ours run the library's Markov fit core (``estimators.markov_fit``); the first is the
estimator itself. Score: mean L1 between the model's exact normalised marginals (one calibrated junction
tree) and the data's, over all 2-way and 3-way marginals; CPU seconds per fit.

Writes ``results/<out>.csv`` (one row per seed, measurement set and contender) and prints the mean and
standard error per contender and the paired difference ``contender - mbi-1000``.

Run:  python benchmarks/adult_mst.py                      # seeds 0-4, both sets, mbi if installed
      python benchmarks/adult_mst.py --measurements mst   # one set
      python benchmarks/adult_mst.py --quick              # 3,000 rows, 6 columns, seed 0, no mbi: seconds
"""

from __future__ import annotations

import itertools
import math
import os
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork

import harness
from harness import have_mbi
import pgmpy_dp  # noqa: F401  (the df.dp accessor)
from pgmpy_dp import PrivateMarkovEstimator
from pgmpy_dp.engine import JunctionTree, project_simplex
from pgmpy_dp.estimators.evidence import pooled_n_records
from pgmpy_dp.estimators.markov_fit import Evidence, fit_markov, fit_settings
from pgmpy_dp.estimators.measurements import clique_measurements, measured_subcliques
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.privacy.parameters import epsilon_delta_to_rho
from pgmpy_dp.synthesis.marginals import tree_marginal

DATA = Path(os.environ.get("PGMPY_DP_ADULT", "/work/shared/data"))
EPSILON, DELTA = 1.0, 1e-9
CONTENDERS = ["default", "pooled-weight", "before", "mbi-1000"]
MAX_CELLS, MAX_JT_CELLS = 10_000, 200_000


# -- data -------------------------------------------------------------------------------------------


def states(sizes: dict) -> dict:
    return {a: list(range(k)) for a, k in sizes.items()}


# -- the two measurement sets -------------------------------------------------------------------------


def _exponential_mechanism(scores: np.ndarray, eps: float, rng) -> int:
    logits = 0.5 * eps * scores  # sensitivity 1, not monotone
    p = np.exp(logits - logits.max())
    return int(rng.choice(scores.size, p=p / p.sum()))


def select_tree(codes, sizes, one_way: dict, rho: float, rng) -> list[tuple[str, str]]:
    """MST's private maximum spanning tree on the L1 error of the noisy-independence estimate."""
    attrs = list(sizes)
    n_est = float(np.mean([t.sum() for t in one_way.values()]))
    probs = {a: project_simplex(one_way[a] / n_est) for a in attrs}
    weight = {(a, b): float(np.abs(harness.contingency(codes, sizes, (a, b)) - n_est * np.outer(probs[a], probs[b])).sum())
              for a, b in itertools.combinations(attrs, 2)}
    eps = math.sqrt(8.0 * rho / (len(attrs) - 1))
    components = nx.utils.UnionFind(attrs)
    edges = []
    for _ in range(len(attrs) - 1):
        cand = [e for e in weight if components[e[0]] != components[e[1]]]
        e = cand[_exponential_mechanism(np.array([weight[c] for c in cand]), eps, rng)]
        components.union(*e)
        edges.append(e)
    return edges


def mst_measurements(codes, sizes, seed: int, rho: float):
    """``(releases, model cliques)``: MST's two releases and its tree's edges."""
    rng = np.random.default_rng([seed, 36])
    attrs = list(sizes)
    rel1 = codes.dp.release([(a,) for a in attrs], rho=rho / 3, domain=states(sizes), random_state=rng,
                            show_progress=False)
    edges = select_tree(codes, sizes, {t.attrs[0]: t.values for t in rel1.tables}, rho / 3, rng)
    rel2 = codes.dp.release(edges, rho=rho / 3, domain=states(sizes), random_state=rng, show_progress=False)
    return [rel1, rel2], [tuple(e) for e in edges]


def _entropy(t: np.ndarray) -> float:
    p = t[t > 0] / t.sum()
    return float(-(p * np.log(p)).sum())


def select_by_information(codes, sizes, n_triples: int, n_pairs: int) -> list[tuple[str, ...]]:
    """The measured 2- and 3-way sets by true mutual information (non-private), triples first."""
    attrs = list(sizes)
    h1 = {a: _entropy(harness.contingency(codes, sizes, (a,))) for a in attrs}
    domain = Domain(states(sizes))
    chosen: list[tuple[str, ...]] = []
    for k, quota in ((3, n_triples), (2, n_pairs)):
        cand = [c for c in itertools.combinations(attrs, k) if math.prod(sizes[a] for a in c) <= MAX_CELLS]
        cand.sort(key=lambda c: sum(h1[a] for a in c) - _entropy(harness.contingency(codes, sizes, c)), reverse=True)
        taken = 0
        for c in cand:
            if taken == quota:
                break
            if _admissible(c, chosen, domain):
                chosen.append(c)
                taken += 1
    return chosen


def _admissible(c, chosen, domain: Domain) -> bool:
    """A triple shares at most one column with a chosen triple (the best ones otherwise all hold
    marital-status and relationship), and the model's junction tree stays small."""
    if len(c) == 3 and any(len(set(c) & set(d)) > 1 for d in chosen if len(d) == 3):
        return False
    return JunctionTree(domain, chosen + [c] + [(a,) for a in domain.attrs]).max_cells <= MAX_JT_CELLS


def aim_like_measurements(codes, sizes, seed: int, rho: float, n_triples: int = 8, n_pairs: int = 12):
    """``(releases, model cliques)``: one release of every 1-way table and the chosen sets; the maximal sets."""
    chosen = select_by_information(codes, sizes, n_triples, n_pairs)
    rng = np.random.default_rng([seed, 36, 2])
    rel = codes.dp.release([(a,) for a in sizes] + chosen, rho=rho, domain=states(sizes), random_state=rng,
                           show_progress=False)
    measured = [t.attrs for t in rel.tables]
    sets = [frozenset(c) for c in measured]
    return [rel], [c for c, f in zip(measured, sets) if not any(f < g for g in sets)]


# -- the fits -----------------------------------------------------------------------------------------


def fit_default(releases, cliques, sizes):
    """``(cliques, log-potentials)`` of the estimator's own fit."""
    model = DiscreteMarkovNetwork([(c[i], c[j]) for c in cliques for i, j in itertools.combinations(range(len(c)), 2)])
    model.add_nodes_from(sizes)
    est = PrivateMarkovEstimator(show_progress=False).fit(model, releases, cliques=cliques)
    return est.cliques_, est.log_potentials_


def fit_core(releases, cliques, sizes, own_potentials: bool, per_clique: bool):
    """``(cliques, log-potentials)`` of the library's Markov fit core, the two changes switched on or off.

    With both on this is the estimator's fit (``tests/benchmarks/test_benchmark_adult_mst.py`` checks it)."""
    cliques = list(cliques) + (measured_subcliques(releases, cliques) if own_potentials else [])
    evidence = Evidence(cliques, *clique_measurements(releases, cliques), pooled_n_records(releases))
    settings = fit_settings("cgm-em", evidence, per_clique=per_clique)
    fit = fit_markov(JunctionTree(Domain(states(sizes)), cliques), evidence, settings)
    return cliques, fit.log_potentials


def fit_mbi(releases, sizes, iters: int = 1000):
    import jax

    jax.config.update("jax_enable_x64", True)
    import mbi
    from mbi import estimation

    dom = mbi.Domain(list(sizes), [sizes[a] for a in sizes])
    ms = [mbi.LinearMeasurement(np.asarray(t.values, dtype=float).ravel(), tuple(t.attrs),
                                stddev=float(np.sqrt(t.variance))) for r in releases for t in r.tables]
    model = estimation.MirrorDescent().estimate(dom, ms, iters=iters)
    jax.block_until_ready(model.potentials)
    pots = model.potentials
    return ([tuple(pots[c].domain.attributes) for c in pots.cliques],
            [np.asarray(pots[c].values, dtype=np.float64) for c in pots.cliques])


def fit(contender: str, releases, cliques, sizes):
    if contender == "default":
        return fit_default(releases, cliques, sizes)
    if contender == "pooled-weight":
        return fit_core(releases, cliques, sizes, own_potentials=True, per_clique=False)
    if contender == "before":
        return fit_core(releases, cliques, sizes, own_potentials=False, per_clique=False)
    return fit_mbi(releases, sizes)


# -- score --------------------------------------------------------------------------------------------


def score(codes, sizes, cliques, log_potentials) -> dict:
    """Mean L1 between the model's and the data's normalised tables over every 2- and 3-way marginal."""
    jt = JunctionTree(Domain(states(sizes)), [tuple(c) for c in cliques])
    cal = jt.calibrate([np.asarray(t, dtype=float) for t in log_potentials])
    out = {}
    for k in (2, 3):
        errs = []
        for attrs in itertools.combinations(list(sizes), k):
            t = harness.contingency(codes, sizes, attrs)
            m = tree_marginal(jt, cal, attrs)
            errs.append(float(np.abs(m / m.sum() - t / t.sum()).sum()))
        out[f"l1_{k}way"] = float(np.mean(errs))
    return out


def run(codes, sizes, seeds, sets, contenders) -> pd.DataFrame:
    rho = epsilon_delta_to_rho(EPSILON, DELTA)
    rows = []
    for seed, name in itertools.product(seeds, sets):
        measure = mst_measurements if name == "mst" else aim_like_measurements
        releases, cliques = measure(codes, sizes, seed, rho)
        for contender in contenders:
            c0 = time.process_time()
            with harness.quiet():
                fitted = fit(contender, releases, cliques, sizes)
            cpu = time.process_time() - c0
            row = {"measurements": name, "seed": seed, "contender": contender, **score(codes, sizes, *fitted),
                   "cpu_seconds": cpu, "cliques": len(fitted[0]), "rows": len(codes), "columns": len(sizes)}
            print(" ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
            rows.append(row)
    return pd.DataFrame(rows)


def summary(runs: pd.DataFrame, baseline: str = "mbi-1000") -> pd.DataFrame:
    """Mean and standard error per measurement set and contender; paired difference from ``baseline``."""
    g = runs.groupby(["measurements", "contender"], sort=False)
    out = pd.DataFrame({"seeds": g.size(), "l1_3way": g.l1_3way.mean(), "se_3way": g.l1_3way.sem(),
                        "l1_2way": g.l1_2way.mean(), "se_2way": g.l1_2way.sem(), "cpu_s": g.cpu_seconds.mean()})
    if (runs.contender == baseline).any():
        for metric in ("l1_3way", "l1_2way"):
            by = runs.rename(columns={"contender": "method"})
            p = pd.concat([harness.paired(by, c, baseline, metric, cell=("measurements",), run="seed")
                           .assign(contender=c) for c in runs.contender.unique() if c != baseline])
            p = p.set_index(["measurements", "contender"])
            out[f"paired_{metric[3:]}"], out[f"paired_se_{metric[3:]}"] = p["diff"], p["se"]
    return out.reset_index()


def main(argv=None) -> pd.DataFrame:
    ap = harness.parser(__doc__, out="adult_mst")
    ap.add_argument("--data", type=Path, default=DATA, help="folder holding adult.csv and adult-domain.json")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--measurements", nargs="+", default=["mst", "aim-like"], choices=["mst", "aim-like"])
    ap.add_argument("--contenders", nargs="+", default=CONTENDERS, choices=CONTENDERS)
    ap.add_argument("--rows", type=int, default=None, help="a seeded subsample of this many rows")
    ap.add_argument("--columns", type=int, default=None, help="the first this many columns")
    args = harness.parse(ap, argv, seeds=[0], rows=3_000, columns=6, contenders=CONTENDERS[:3])
    contenders = list(args.contenders)
    if "mbi-1000" in contenders and not have_mbi():
        print("mbi is not installed: no mbi-1000 rows (pip install 'mbi>=2,<3', or the bench extra)")
        contenders.remove("mbi-1000")
    codes, sizes = harness.load_adult(args.data, args.rows, args.columns, args.seed)
    runs = run(codes, sizes, args.seeds, args.measurements, contenders)
    harness.write_csv(runs, args.out)
    print(summary(runs).to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    return runs


if __name__ == "__main__":
    main()
