"""Empirical coverage of the intervals of issue 14: released cells and model query answers.

Every repetition of every cell of the grid (1) samples N records from the TRUE
model, (2) releases its tables, (3) checks the exact 95% cell intervals of
``MarginalRelease.interval`` against the true counts, (4) fits the private
estimator and (5) asks random marginal queries ``P(x)`` and conditional queries
``P(x | y = s)`` with ``pgmpy_dp.query_interval``, scoring each state's band
against the TRUE model's answer. All six band rules (``normal``, the default;
``logit``; ``bc``; ``percentile``; ``basic``; ``arcsine``) are computed from the same refits
(rows written before a rule existed lack it: the summary counts repetitions per rule).
``--generator prior-free`` and ``--refit estimator`` (Markov networks) also score the normal and
arcsine bands from a second set of refits made that way, with the same seed (rules
``normal@prior-free``, ``normal@estimator``, ...); ``--summarise --compare RULE ...`` sets rules side
by side on the states that have all of them. ``--inverted`` (Markov networks) also scores
``query_interval(interval="inverted")`` on the same fits and refits (rules ``inverted``, ``inverted1``;
its extra wall time per query in ``extra_s``; benchmarks/coverage_inverted.py applies its rule).

Markov networks (``PrivateMarkovEstimator``, CGM-EM, every clique table released
with discrete Laplace noise): ``chain-5`` (5-node chain, k = 3 states, Dirichlet(1)
edge potentials, a fresh model per repetition), ``er-8`` (Erdős-Rényi graph on 8
nodes with edge probability 0.3, k = 3, Dirichlet(1) edge potentials, fresh per
repetition; isolated nodes released as one-way tables) and ``asia`` (asia's moral
graph, its CPDs multiplied into the moral cliques). Queries: x, y in one clique.

Bayesian networks (``DiscretePrivateMLE`` with its defaults: the optimal allocation,
likelihood consistency, ``DEFAULT_MAX_ITER`` CGM-EM iterations): ``asia-bn``, ``child-bn``, ``alarm-bn`` (bnlearn, shipped
with pgmpy). Queries on any node, evidence on any other node.

Timing, measured side by side in the same repetition: ``point_s`` (the point
answer alone: one inference on the fitted model), ``cold_s`` (the first
``query_interval`` of a fit: it makes the refits) and ``warm_s`` (a later query of
the same fit, which reuses the refits kept on the estimator).

Repetitions are the OUTER loop and rows are appended to ``results/<out>.csv``
after every repetition, so a run stopped early leaves every cell with about the
same number of repetitions; ``--summarise`` rebuilds the summary and plot from the
CSV. Coverage is reported with a 95% Clopper-Pearson band computed on the number
of QUERIES (the states of one query are not independent, so this is conservative).

Run:  python benchmarks/coverage.py                           # the default grid, 100 repetitions (hours here)
      python benchmarks/coverage.py --models chain-5 --reps 2 --samples 20 --out smoke   # smoke run
      python benchmarks/coverage.py --summarise               # summary + plot from results/coverage.csv.gz
      python benchmarks/coverage.py --summarise --combine a b # merge results/a.csv, b.csv into coverage.csv.gz
      python benchmarks/coverage.py --summarise --compare normal normal@estimator --compare-models asia er-8
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from pgmpy.models import DiscreteMarkovNetwork
from scipy import stats

import pgmpy_dp
from pgmpy_dp.engine import ConvergenceWarning, JunctionTree
from pgmpy_dp.privacy.domain import Domain
from pgmpy_dp.tables import contingency_table, release_from_codes
from pgmpy_dp.uncertainty import _answerer, band_limits, bootstrap_log_potentials

RESULTS = Path(__file__).parent / "results"
RULES = ("normal", "logit", "bc", "percentile", "basic", "arcsine", "score", "ratio")
DEFAULT = RULES[0]  # query_interval's default band
BN_MODELS = {"asia-bn": "asia", "child-bn": "child", "alarm-bn": "alarm"}


def chain_model(n_nodes: int, k: int, rng: np.random.Generator):
    domain = Domain({f"x{i}": list(range(k)) for i in range(n_nodes)})
    edges = [(f"x{i}", f"x{i + 1}") for i in range(n_nodes - 1)]
    theta = [np.log(rng.dirichlet(np.ones(k * k)).reshape(k, k)) for _ in edges]
    return domain, edges, theta


def er_model(n_nodes: int, k: int, p: float, rng: np.random.Generator):
    """An Erdős-Rényi graph: each pair an edge with probability ``p``; isolated nodes get a unary clique."""
    domain = Domain({f"x{i}": list(range(k)) for i in range(n_nodes)})
    names = list(domain.attrs)
    iu, ju = np.triu_indices(n_nodes, 1)
    keep = rng.random(iu.size) < p
    cliques = [(names[i], names[j]) for i, j in zip(iu[keep], ju[keep])]
    touched = {a for c in cliques for a in c}
    cliques += [(a,) for a in names if a not in touched]
    theta = [np.log(rng.dirichlet(np.ones(k ** len(c))).reshape([k] * len(c))) for c in cliques]
    return domain, cliques, theta


def asia_model():
    """asia's moral graph as a Markov network: each CPD multiplied into the moral clique of its family."""
    from pgmpy_dp.datasets import load_network

    bn = load_network("asia")
    domain = Domain({v: list(bn.get_cpds(v).state_names[v]) for v in bn.nodes()})
    cliques, theta = [], []
    for v in bn.nodes():
        cpd = bn.get_cpds(v)
        scope = tuple(cpd.variables)  # (v, *parents), values shaped accordingly
        cliques.append(scope)
        vals = np.asarray(cpd.get_values()).reshape([domain.size(a) for a in scope])
        theta.append(np.log(np.maximum(vals, 1e-300)))
    return domain, cliques, theta


def random_mn_queries(domain, cliques, rng, pairs: int):
    out = []
    for _ in range(pairs):
        c = cliques[rng.integers(len(cliques))]
        x = c[rng.integers(len(c))]
        if len(c) >= 2:
            y = [a for a in c if a != x][rng.integers(len(c) - 1)]
        else:  # a unary clique: condition on any other variable (independent, or far away)
            y = [a for a in domain.attrs if a != x][rng.integers(len(domain.attrs) - 1)]
        out += [("marginal", x, {}), ("conditional", x, {y: domain[y][rng.integers(domain.size(y))]})]
    return out


def score(base, kind, query, iv, truth, point_s, cold_s, warm_s, level) -> list[dict]:
    """One row per rule and state: the band, the truth and whether it covers."""
    rows = []
    est = iv.estimate.to_numpy()
    boot = iv.attrs["bootstrap"]
    # the refits' moments and the records behind the answer: any moment rule can be recomputed from the CSV
    moments = dict(boot_mean=np.nanmean(boot, axis=0), boot_sd=np.nanstd(boot, axis=0, ddof=1))
    for rule in RULES:
        lo, hi = band_limits(est, boot, level, rule, n_records=iv.attrs["n_records"],
                             evidence_probability=iv.attrs["evidence_probability"],
                             evidence_bootstrap=iv.attrs["evidence_bootstrap"])
        for j, state in enumerate(iv.index):
            rows.append({**base, "kind": kind, "rule": rule, "query": query, "state": str(state),
                         "truth": truth[j], "estimate": est[j], "lower": lo[j], "upper": hi[j],
                         "boot_mean": moments["boot_mean"][j], "boot_sd": moments["boot_sd"][j],
                         "n_records": iv.attrs["n_records"], "n_refits": len(boot),
                         # the denominator's moments: the "ratio" rule can be recomputed from the CSV too
                         **_denominator_moments(iv, boot, j),
                         "covered": float(lo[j] - 1e-12 <= truth[j] <= hi[j] + 1e-12),
                         "point_s": point_s, "cold_s": cold_s, "warm_s": warm_s, "nominal": level})
    return rows


def _denominator_moments(iv, boot, j) -> dict:
    """``P(evidence)`` at the fit, the refits' mean and sd of it and its covariance with state ``j``'s joint."""
    b_hat, b = iv.attrs["evidence_probability"], iv.attrs["evidence_bootstrap"]
    if b_hat is None:
        return {"ev_p": np.nan, "ev_mean": np.nan, "ev_sd": np.nan, "joint_mean": np.nan, "joint_sd": np.nan,
                "joint_ev_cov": np.nan}
    a = boot[:, j] * b
    return {"ev_p": b_hat, "ev_mean": float(np.mean(b)), "ev_sd": float(np.std(b, ddof=1)),
            "joint_mean": float(np.mean(a)), "joint_sd": float(np.std(a, ddof=1)),
            "joint_ev_cov": float(np.cov(a, b)[0, 1])}


def fitted_mn(spec, n, eps, rng, k=3, er_p=0.3):
    """A TRUE Markov network, N records drawn from it, their release and the fitted PrivateMarkovEstimator."""
    if spec == "asia":
        domain, cliques, theta = asia_model()
    elif spec.startswith("er-"):
        domain, cliques, theta = er_model(int(spec.split("-")[1]), k, er_p, rng)
    else:
        domain, cliques, theta = chain_model(int(spec.split("-")[1]), k, rng)
    codes = JunctionTree(domain, cliques).sample(theta, n, random_state=rng)
    release = release_from_codes(codes, domain, cliques, eps, random_state=rng)
    model = DiscreteMarkovNetwork()
    model.add_nodes_from(domain.attrs)
    model.add_edges_from({(a, b) for c in cliques for i, a in enumerate(c) for b in c[i + 1:]})
    est = pgmpy_dp.PrivateMarkovEstimator(show_progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(model, release, cliques=cliques)
    return domain, cliques, theta, codes, release, est


def timed_interval(est, x, evidence, args, n_samples, seed, first):
    """query_interval and its wall time, as (frame, cold_s, warm_s); None if the fit gives the evidence no mass."""
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence chatter of the refits, pgmpy notices
            # interval="ratio": its frame carries P(evidence) of the fit and refits, which score() needs to
            # recompute that band (every rule is recomputed from the frame's attrs; the timing includes them)
            iv = pgmpy_dp.query_interval(est, x, evidence, level=args.level, n_samples=n_samples, interval="ratio",
                                         random_state=seed, show_progress=False, n_jobs=args.n_jobs)
    except ValueError:  # evidence the fit gives probability zero: no answer to bound
        return None
    secs = time.perf_counter() - t0
    return (iv, secs, np.nan) if first else (iv, np.nan, secs)


def mn_rep(args, spec, n, eps, rep, rng) -> list[dict]:
    domain, cliques, theta, codes, release, est = fitted_mn(spec, n, eps, rng, args.k, args.er_p)
    base = dict(model=spec, N=n, epsilon=eps, rep=rep)
    rows = cell_rows(base, release, codes, domain, list(cliques), args.level)
    seed = int(rng.integers(2**31))
    first = True
    asked = []
    for kind, x, evidence in random_mn_queries(domain, cliques, rng, args.queries):
        truth = _answerer(domain, cliques, "junction-tree", [x], evidence)(theta).ravel()
        answer = _answerer(domain, est.cliques_, est.inference_, [x], evidence)
        got = scored_query(base, kind, x, evidence, truth, lambda: answer(est.log_potentials_), est, args,
                           args.samples, seed, first)
        first = first and not got
        rows += got
        if got:
            asked.append((kind, x, evidence, truth, answer))
    if args.inverted and asked:
        rows += inverted_rows(base, est, asked, args, seed)
    if args.generator != "fit" and asked:
        rows += other_refit_rows(base, est, asked, args, seed, args.generator, generator=args.generator)
    if args.refit != "warm" and asked:
        rows += other_refit_rows(base, est, asked, args, seed, args.refit, refit=args.refit)
    return rows


def inverted_rows(base, est, asked, args, seed) -> list[dict]:
    """The ``"inverted"`` band of the same queries (rule ``inverted``), from the same fit and the same refits.

    ``query_interval(interval="inverted")`` reuses the fit's refits kept on the estimator (same
    ``n_samples`` and seed) and draws tilted refits only for states whose normal band is clipped;
    ``extra_s`` is its wall time per query (the normal band's is a few ms once the refits exist).
    Rule ``inverted1`` is the same band after one tilted refit set per end (the first secant root).
    """
    rows = []
    for kind, x, evidence, truth, _ in asked:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            iv = pgmpy_dp.query_interval(est, x, evidence, level=args.level, n_samples=args.samples,
                                         random_state=seed, show_progress=False, interval="inverted")
        extra = time.perf_counter() - t0
        rep = iv.attrs["inverted"]
        q = f"P({x}|{evidence})" if evidence else f"P({x})"
        lo1, hi1 = iv.lower.to_numpy().copy(), iv.upper.to_numpy().copy()
        for (j, end), steps in rep["steps"].items():
            if end == "upper":
                hi1[j] = steps[0]
            else:
                lo1[j] = steps[0]
        est_ = iv.estimate.to_numpy()
        for rule, lo, hi in (("inverted", iv.lower.to_numpy(), iv.upper.to_numpy()), ("inverted1", lo1, hi1)):
            for j, state in enumerate(iv.index):
                rows.append({**base, "kind": kind, "rule": rule, "query": q, "state": str(state),
                             "truth": truth[j], "estimate": est_[j], "lower": lo[j], "upper": hi[j],
                             "covered": float(lo[j] - 1e-12 <= truth[j] <= hi[j] + 1e-12),
                             "tilted_refits": rep["tilted_refits"], "left_normal": len(rep["left_normal"]),
                             "extra_s": extra, "point_s": np.nan, "cold_s": np.nan, "warm_s": np.nan,
                             "nominal": args.level})
    return rows


def other_refit_rows(base, est, asked, args, seed, tag, **variant) -> list[dict]:
    """The normal and arcsine bands of the same queries from refits made another way (rules ``rule@tag``):
    ``--generator`` (the model the records are drawn from) or ``--refit`` (how each refit is fitted).

    Same seed as the default refits (common random numbers): only the variant differs.
    """
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        refits = bootstrap_log_potentials(est, args.samples, random_state=seed, show_progress=False, **variant)
    cold = time.perf_counter() - t0
    rows = []
    for kind, x, evidence, truth, answer in asked:
        estimate = answer(est.log_potentials_).ravel()
        boot = np.array([answer(th).ravel() for th in refits])
        q = f"P({x}|{evidence})" if evidence else f"P({x})"
        for rule in ("normal", "arcsine"):
            lo, hi = band_limits(estimate, boot, args.level, rule)
            for j in range(estimate.size):
                rows.append({**base, "kind": kind, "rule": f"{rule}@{tag}", "query": q,
                             "state": str(est.domain_[x][j]), "truth": truth[j], "estimate": estimate[j],
                             "lower": lo[j], "upper": hi[j],
                             "covered": float(lo[j] - 1e-12 <= truth[j] <= hi[j] + 1e-12),
                             "point_s": np.nan, "cold_s": cold, "warm_s": np.nan, "nominal": args.level})
    return rows


def scored_query(base, kind, x, evidence, truth, point_answer, est, args, n_samples, seed, first) -> list[dict]:
    """Time the point answer and the interval query side by side; score the bands (no rows if no answer)."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pgmpy notices
        point = np.asarray(point_answer())
    point_s = time.perf_counter() - t0
    if not np.all(np.isfinite(point)):
        return []  # evidence the fit gives probability zero: no answer to bound
    got = timed_interval(est, x, evidence, args, n_samples, seed, first)
    if got is None:
        return []
    q = f"P({x}|{evidence})" if evidence else f"P({x})"
    return score(base, kind, q, got[0], truth, point_s, got[1], got[2], args.level)


def cell_rows(base, release, codes, domain, attrs_list, level) -> list[dict]:
    """Released cells: exact intervals against the exact counts (one row per table)."""
    rows = []
    for c in attrs_list:
        truth = contingency_table(codes, domain, c).ravel()
        iv = release.interval(c, level=level)
        hit = (iv.lower.to_numpy() <= truth) & (truth <= iv.upper.to_numpy())
        rows.append({**base, "kind": "cell", "rule": "exact", "query": str(tuple(c)), "state": f"{hit.size} cells",
                     "covered": hit.mean(), "n_cells": hit.size, "width": float((iv.upper - iv.lower).mean()),
                     "nominal": iv.attrs["coverage"]})
    return rows


def fitted_bn(spec, n, eps, rng):
    """A TRUE Bayesian network of ``BN_MODELS``, N records drawn from it and the default DiscretePrivateMLE fit."""
    from pgmpy.models import DiscreteBayesianNetwork

    from pgmpy_dp.datasets import load_network, sample_network

    truth_bn = load_network(BN_MODELS[spec])
    df = sample_network(truth_bn, n, seed=int(rng.integers(2**31)))
    est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=int(rng.integers(2**31)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DiscreteBayesianNetwork(truth_bn.edges()).fit(df, estimator=est)
    return truth_bn, df, est


def bn_rep(args, spec, n, eps, rep, rng) -> list[dict]:
    """One repetition for a Bayesian network: DiscretePrivateMLE and its own bootstrap."""
    from pgmpy.models import DiscreteBayesianNetwork

    truth_bn, df, est = fitted_bn(spec, n, eps, rng)
    base = dict(model=spec, N=n, epsilon=eps, rep=rep)
    domain = Domain({v: est.state_names_[v] for v in est.state_names_})
    codes = domain.encode(df, list(domain.attrs))
    rows = cell_rows(base, est.release_, codes, domain, [t.attrs for t in est.release_], args.level)
    fitted = DiscreteBayesianNetwork(est._model.edges())
    fitted.add_nodes_from(est._model.nodes())
    fitted.add_cpds(*est.parameters_)
    nodes = list(domain.attrs)
    seed = int(rng.integers(2**31))
    first = True
    for _ in range(args.queries):
        x = nodes[rng.integers(len(nodes))]
        y = [v for v in nodes if v != x][rng.integers(len(nodes) - 1)]
        ev = {y: domain[y][rng.integers(domain.size(y))]}
        for kind, evidence in (("marginal", {}), ("conditional", ev)):
            truth = pgmpy_dp.query(truth_bn, [x], evidence=evidence or None).values.ravel()
            if not np.all(np.isfinite(truth)):
                continue
            got = scored_query(base, kind, x, evidence, truth,
                               lambda: pgmpy_dp.query(fitted, [x], evidence=evidence or None).values,  # noqa: B023
                               est, args, args.bn_samples, seed, first)
            first = first and not got
            rows += got
    return rows


def grid(args):
    if args.cells:  # explicit MODEL:N:EPS cells, in the order given (repetitions stay the outer loop)
        for cell in args.cells:
            spec, n, eps = cell.split(":")
            yield spec, int(n), float(eps)
        return
    for spec in args.models:
        if spec == "asia":
            ns, epss = args.asia_n, args.asia_eps
        elif spec in BN_MODELS:
            ns, epss = (args.asia_n, args.asia_eps) if spec == "asia-bn" else (args.bn_n, args.bn_eps)
        else:
            ns, epss = args.n, args.eps
        for n in ns:
            for eps in epss:
                yield spec, n, eps


def results_csv(name: str) -> Path:
    """The CSV of run ``name`` in results/: the gzipped one (what ``--combine`` writes) if it exists, else plain."""
    gz = RESULTS / f"{name}.csv.gz"
    return gz if gz.exists() else RESULTS / f"{name}.csv"


def run(args) -> None:
    path = RESULTS / f"{args.out}.csv"
    if path.exists() and not args.append:
        path.unlink()
    models = list(args.models)
    for rep in range(args.start, args.reps):
        for spec, n, eps in grid(args):
            if spec not in models:
                models.append(spec)  # --cells: the seed's model index is its first appearance
            if spec in BN_MODELS and rep >= args.bn_reps:
                continue
            rng = np.random.default_rng([args.seed, models.index(spec), n, int(eps * 1000), rep])
            t0 = time.perf_counter()
            rows = (bn_rep if spec in BN_MODELS else mn_rep)(args, spec, n, eps, rep, rng)
            frame = pd.DataFrame(rows)
            frame.to_csv(path, mode="a", header=not path.exists(), index=False)
            q = frame[(frame.kind != "cell") & (frame.rule == DEFAULT)]
            print(f"rep={rep} {spec} N={n} eps={eps}: {time.perf_counter() - t0:.0f}s, {DEFAULT} covered "
                  f"{q.covered.mean():.2f} of {len(q)} states", flush=True)


def combine(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """One table of rows; a repetition (model, N, epsilon, rep) in a later frame replaces it in the earlier ones.

    Repetitions are seeded by their key, so a rerun of one with newer code (or more band rules)
    supersedes the old rows instead of counting twice.
    """
    key = ["model", "N", "epsilon", "rep"]
    out = frames[0]
    for f in frames[1:]:
        redone = out.set_index(key).index.isin(f.set_index(key).index)
        out = pd.concat([out[~redone], f], ignore_index=True)
    return out


def rule_table(df: pd.DataFrame, rules: list[str]) -> pd.DataFrame:
    """Coverage of ``rules`` on the query states that have all of them (the same refits), per kind and
    per bin of the true answer (conditionals), with the number of states and the mean width."""
    q = df[(df.kind != "cell") & df.rule.isin(rules)].copy()
    key = ["model", "N", "epsilon", "rep", "kind", "query", "state"]
    q["ask"] = q.groupby(key + ["rule"]).cumcount()  # a repetition can ask the same query twice
    key.append("ask")
    have = q.groupby(key).rule.transform("nunique") == len(rules)
    q = q[have]
    q["truth bin"] = pd.cut(q.truth, [-1e-12, 0.02, 0.1, 0.3, 0.7, 1.0],
                            labels=["<= 0.02", "0.02-0.1", "0.1-0.3", "0.3-0.7", "> 0.7"])
    out = []
    for rule in rules:
        r = q[q.rule == rule]
        row = {"rule": rule}
        for kind, g in r.groupby("kind"):
            row[kind] = g.covered.mean()
            row[f"{kind} states"] = len(g)
            row[f"{kind} width"] = (g.upper - g.lower).mean()
        for b, g in r[r.kind == "conditional"].groupby("truth bin", observed=True):
            row[f"conditional, truth {b}"] = g.covered.mean()
        out.append(row)
    return pd.DataFrame(out)


def clopper_pearson(k: float, n: int, conf: float = 0.95) -> tuple[float, float]:
    a = (1 - conf) / 2
    lo = stats.beta.ppf(a, k, n - k + 1) if k > 0 else 0.0
    hi = stats.beta.ppf(1 - a, k + 1, n - k) if k < n else 1.0
    return float(lo), float(hi)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (model, n, eps, kind, rule), g in df.groupby(["model", "N", "epsilon", "kind", "rule"], sort=True):
        if kind == "cell":
            checks = int(g.n_cells.sum())
            cov = float(np.average(g.covered, weights=g.n_cells))
            lo, hi = clopper_pearson(round(cov * checks), checks)
            out.append(dict(model=model, N=n, epsilon=eps, kind=kind, rule=rule, reps=g.rep.nunique(),
                            queries=len(g), checks=checks, coverage=cov, band_lo=lo, band_hi=hi,
                            mean_width=g.width.mean(), nominal=g.nominal.mean()))
            continue
        per_query = g.groupby(["rep", "query"]).covered.mean()
        nq = len(per_query)
        cov = float(g.covered.mean())
        lo, hi = clopper_pearson(round(cov * nq), nq)
        # a deterministic answer (asia's "either" given tub=yes is exactly 1) lies on the boundary, where no
        # band strictly inside (0, 1) can reach it; coverage_interior leaves those states out
        interior = (g.truth > 1e-9) & (g.truth < 1 - 1e-9)
        out.append(dict(model=model, N=n, epsilon=eps, kind=kind, rule=rule, reps=g.rep.nunique(), queries=nq,
                        checks=len(g), coverage=cov, band_lo=lo, band_hi=hi,
                        boundary_checks=int((~interior).sum()), coverage_interior=g.covered[interior].mean(),
                        mean_width=(g.upper - g.lower).mean(),
                        mean_abs_error=(g.estimate - g.truth).abs().mean(), nominal=g.nominal.mean(),
                        point_s=g.point_s.mean(), cold_s=g.cold_s.mean(), warm_s=g.warm_s.mean()))
    return pd.DataFrame(out)


def markdown(summary: pd.DataFrame) -> str:
    """The docs table: per cell, released cells, then the default (normal) bands and the other rules."""
    head = ("| model | N | eps | reps | released cells: coverage (exact level) | kind | queries | normal: coverage "
            "[95% band] | width | logit / bc / percentile / basic / arcsine / score | point query (ms) | first interval query (s) | "
            "later query (ms) | first / point |\n|" + "---|" * 14)
    lines = [head]
    for (model, n, eps), g in summary.groupby(["model", "N", "epsilon"], sort=False):
        cell = g[g.kind == "cell"]
        cells = f"{cell.coverage.iloc[0]:.3f} ({cell.nominal.iloc[0]:.3f})" if len(cell) else ""
        own = g[g.rule.isin(RULES)]  # rows of other refits (rule@variant) time those refits, not query_interval
        cold = float(np.nanmean(own.cold_s)) if own.cold_s.notna().any() else np.nan  # the first query of a fit
        for kind in ("marginal", "conditional"):
            k = g[g.kind == kind].set_index("rule")
            main = DEFAULT if DEFAULT in k.index else "logit"  # older rows: the default of their day
            if main not in k.index:
                continue
            lg = k.loc[main]
            others = " / ".join(f"{k.loc[r, 'coverage']:.2f}" if r in k.index else "-" for r in RULES[1:])
            reps = f"{lg.reps}" + ("" if main == DEFAULT else " (logit)")
            lines.append(
                f"| {model} | {n:,} | {eps:g} | {reps} | {cells} | {kind} | {lg.queries} | {lg.coverage:.3f} "
                f"[{lg.band_lo:.2f}, {lg.band_hi:.2f}] | {lg.mean_width:.3f} | {others} | {1e3 * lg.point_s:.1f} | "
                f"{cold:.1f} | {1e3 * lg.warm_s:.0f} | {cold / lg.point_s:,.0f}x |"
            )
            cells = ""
    return "\n".join(lines)


def plot(df: pd.DataFrame, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # optional extra
        print("matplotlib not installed: no plot")
        return
    q = df[(df.kind != "cell") & (df.rule == DEFAULT)]
    if q.empty:
        return
    models = list(dict.fromkeys(q.model))
    fig, axes = plt.subplots(len(models), 1, figsize=(10, 2.6 * len(models)), squeeze=False)
    for ax, model in zip(axes[:, 0], models):
        g = q[(q.model == model) & (q.kind == "conditional")]
        g = g.iloc[:: max(1, len(g) // 120)]  # at most ~120 states per panel, spread over the run
        g = g.sort_values("truth")
        xs = np.arange(len(g))
        miss = g.covered.to_numpy() < 0.5
        # a bias-corrected band need not contain the estimate: draw the band and the estimate separately
        ax.vlines(xs, g.lower, g.upper, lw=0.8, color="tab:blue", label=f"95% {DEFAULT} band")
        ax.plot(xs, g.estimate, "o", ms=2.5, color="tab:blue", label="estimate")
        ax.plot(xs, g.truth, "k_", ms=6, label="true answer")
        ax.plot(xs[miss], g.truth.to_numpy()[miss], "rx", ms=5, label="band misses the truth")
        ax.set_ylabel("probability")
        ax.set_title(f"{model}: conditional queries ({miss.mean():.0%} of shown bands miss)", fontsize=9)
    axes[0, 0].legend(loc="upper left", fontsize=8)
    axes[-1, 0].set_xlabel("query state (sorted by true probability)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["chain-5", "er-8", "asia", "asia-bn", "child-bn", "alarm-bn"])
    ap.add_argument("--cells", nargs="+", default=[], help="explicit cells MODEL:N:EPS (e.g. er-8:1000:1 asia:10000:1) "
                    "instead of the --models x --n x --eps grid; with --models, a model's seed index is its place there")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--er-p", type=float, default=0.3)
    ap.add_argument("--n", nargs="+", type=int, default=[1000, 10000])
    ap.add_argument("--eps", nargs="+", type=float, default=[0.5, 2.0])
    ap.add_argument("--asia-n", nargs="+", type=int, default=[10000], help="N grid for asia and asia-bn")
    ap.add_argument("--asia-eps", nargs="+", type=float, default=[1.0], help="eps grid for asia and asia-bn")
    ap.add_argument("--bn-n", nargs="+", type=int, default=[10000], help="N grid for child-bn and alarm-bn")
    ap.add_argument("--bn-eps", nargs="+", type=float, default=[1.0], help="eps grid for child-bn and alarm-bn")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--start", type=int, default=0, help="first repetition (to extend a stopped run with --append)")
    ap.add_argument("--bn-reps", type=int, default=100, help="repetitions for the Bayesian networks")
    ap.add_argument("--samples", type=int, default=30, help="bootstrap refits per Markov-network fit")
    ap.add_argument("--bn-samples", type=int, default=20, help="bootstrap refits per Bayesian-network fit (2-4 s each for child, alarm)")
    ap.add_argument("--queries", type=int, default=4, help="marginal + conditional query pairs per repetition")
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--generator", default="fit", choices=["fit", "prior-free"],
                    help="Markov networks: also score normal and arcsine bands from refits drawn from this model "
                         "(rules 'normal@prior-free', 'arcsine@prior-free'; the default refits are unchanged)")
    ap.add_argument("--refit", default="warm", choices=["warm", "estimator"],
                    help="Markov networks: also score normal and arcsine bands from refits fitted this way "
                         "(rules 'normal@estimator', 'arcsine@estimator': the estimator's own fit per refit)")
    ap.add_argument("--inverted", action="store_true",
                    help="Markov networks: also score query_interval(interval='inverted') on the same fits and "
                         "refits (rules 'inverted' and 'inverted1', wall time per query in 'extra_s')")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--n-jobs", type=int, default=1,
                    help="query_interval's n_jobs: the refits' fits in worker processes (same bands; cold_s changes)")
    ap.add_argument("--out", default="coverage")
    ap.add_argument("--append", action="store_true", help="append to an existing CSV instead of replacing it")
    ap.add_argument("--summarise", action="store_true", help="only rebuild summary and plot from the CSV")
    ap.add_argument("--compare", nargs="+", default=[], help="with --summarise: coverage of these rules on the states "
                    "that have all of them, per kind and bin of the true conditional (results/<out>_rules.csv)")
    ap.add_argument("--compare-models", nargs="+", default=[], help="with --compare: only these models")
    ap.add_argument("--combine", nargs="+", default=[], help="with --summarise: CSVs (by --out name) to merge into --out; a repetition in a later CSV "
                    "replaces the same repetition in earlier ones")
    args = ap.parse_args(argv)
    RESULTS.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    if not args.summarise:
        run(args)
    if args.combine:  # runs made in parallel (--out a, --out b, ...): one CSV, summary and plot
        # merged runs are kept gzipped (the full benchmark is ~20 MB of text); a plain CSV of the
        # same name is replaced by it
        merged = combine([pd.read_csv(results_csv(name)) for name in args.combine])
        merged.to_csv(RESULTS / f"{args.out}.csv.gz", index=False)
        (RESULTS / f"{args.out}.csv").unlink(missing_ok=True)
    df = pd.read_csv(results_csv(args.out))
    plot(df, RESULTS / f"{args.out}.png")
    summary = summarise(df)
    summary.to_csv(RESULTS / f"{args.out}_summary.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_rows", 400, "display.max_columns", 30):
        print(summary.round(4).to_string(index=False))
    print(markdown(summary))
    if args.compare:
        sel = df if not args.compare_models else df[df.model.isin(args.compare_models)]
        rules = rule_table(sel, args.compare)
        rules.to_csv(RESULTS / f"{args.out}_rules.csv", index=False)
        with pd.option_context("display.width", 250, "display.max_columns", 30):
            print(rules.round(3).to_string(index=False))
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
