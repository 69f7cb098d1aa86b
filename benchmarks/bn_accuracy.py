"""Privacy-utility study of DiscretePrivateMLE against the TRUE generating network.

For each network (asia, sachs, child, alarm, insurance, hepar2 from pgmpy's
offline BIF files) and record count N: sample N records from the network, fit
the non-private MLE (pgmpy ``DiscreteMLE``), then for each epsilon and run fit

* ``D-Ind``: ``allocation="uniform", consistency="projection"`` (the baseline of
  Roy Chowdhury et al. 2020);
* ``data-dependent``: ``allocation="data-dependent", consistency="projection"``
  (the paper's method, the library default before this study);
* ``optimal+projection``: ``allocation="optimal", consistency="projection"``;
* ``default``: ``DiscretePrivateMLE(epsilon)`` as shipped
  (``allocation="optimal", consistency="likelihood"``, one table per family);
* options run only when named in ``--methods`` (their own releases from the same seeds):
  ``maximal`` (``tables="maximal"``), ``all-tables`` (``tables="all"``), ``per-clique``
  (``prior_weight="per-clique"``), ``maximal+per-clique``; ``benchmarks/bn_levers.py`` lists the
  fifth round's commands and summarises its runs, ``benchmarks/bn_confirm.py`` the confirmation round's
  (fresh runs 10-14 of ``--methods D-Ind default maximal``);
* ``mbi``: private-pgm (``pip install mbi``, the ``bench`` extra) fitted to the
  SAME noisy family tables as ``default`` (Gaussian loss, each table weighted by
  its noise standard deviation, mirror descent), CPDs read off its family marginals.

and measure, against the TRUE network,

* ``joint_kl``: ``KL(P_true || P_est)`` of the joint, exactly (chain rule over
  families, :func:`pgmpy_dp.evaluation.bayesian.joint_kl`);
* ``cpd_l1``: ``sum |P - P~|`` per CPD (summed over parent configurations), mean over nodes;
* ``cpd_l1_weighted``: the same with each parent configuration weighted by its
  true probability (what :func:`~pgmpy_dp.estimators.allocation.error_optimal_allocation` minimises);
* ``query_l1``: L1 error of ``--queries`` random marginal and as many conditional
  queries (1-2 variables, 1-2 evidence variables at a random record's values);

plus ``query_l1_mle``: the query L1 against the non-private MLE network (the
cost of privacy alone). Queries are drawn once per (network, N) and shared by
all fits. Rows go to ``results/<out>_runs.csv`` as they finish (one file per
process; pass ``--out`` to split a grid across processes), the means to
``results/<out>.csv`` and ``results/<out>.png``.

Every method's noise is drawn from ``random_state = 1000 * seed + run``, so
runs are paired: the default, ``optimal+projection``, ``mbi`` and the
``lik:*`` refits share one set of noisy tables per run. The summary reports
mean +- standard error per cell, and per target the cells where the default's
mean is lower than D-Ind's (and mbi's, and a previous default's), by more than
two paired standard errors or not.

Full grid (6 networks x N in {1e4, 1e5} x 5 epsilons x 10 runs):
    python benchmarks/bn_accuracy.py --runs 10
What ran for docs/bayesian.md (each line one process, split by --out):
    python benchmarks/bn_accuracy.py --networks asia sachs --runs 10 --out bn_accuracy_g1
    python benchmarks/bn_accuracy.py --networks child alarm --runs 10 --out bn_accuracy_g2
    python benchmarks/bn_accuracy.py --networks asia sachs --runs 10 --methods default --out bn_accuracy_n1
    python benchmarks/bn_accuracy.py --networks insurance hepar2 --records 100000 --runs 10 \
        --methods D-Ind default mbi --out bn_accuracy_n6
    python benchmarks/bn_accuracy.py --networks hepar2 --records 10000 --runs 10 --methods D-Ind default mbi --out bn_accuracy_m6
    python benchmarks/bn_accuracy.py --networks insurance --records 10000 --runs 10 --methods D-Ind default --out bn_accuracy_n7
    ... (see docs/bayesian.md), then
    python benchmarks/bn_accuracy.py --markdown --summarise results/bn_accuracy_{n1,n2,n3a,n3,n3b,n3c,n7,m6,n4,n6}_runs.csv \
        --previous results/bn_accuracy_g*_runs.csv
(``--previous``: those files' ``default`` rows came from the earlier default; where a cell ran twice, the
first file listed wins.) The prior-centre and iteration-budget variants, refitted to the default's tables:
    python benchmarks/bn_accuracy.py --networks asia sachs --runs 10 --methods default lik:marginal-prior --out bn_accuracy_p1
    python benchmarks/bn_accuracy.py --networks child alarm --records 10000 --epsilons 0.1 0.5 1 2 --runs 6 \
        --methods default lik:marginal-prior --out bn_accuracy_p2
    (p3/p4: lik:converged on asia sachs / child alarm; p5/p6: lik:lower-order-prior; p7-p9: lik:iter50), then
    python benchmarks/bn_accuracy.py --out bn_prior_centres --markdown --summarise results/bn_accuracy_p*_runs.csv
max_iter=50 on the rest of the grid (q1-q6, each line one process; the default refitted beside it):
    python benchmarks/bn_accuracy.py --networks alarm --records 100000 --runs 5 --methods default lik:iter50 --out bn_accuracy_q1
    python benchmarks/bn_accuracy.py --networks asia --records 10000 --runs 10 --methods default lik:iter50 --out bn_accuracy_q1
    python benchmarks/bn_accuracy.py --networks insurance --records 100000 --runs 10 --methods default lik:iter50 --out bn_accuracy_q2
    python benchmarks/bn_accuracy.py --networks hepar2 --records 100000 --runs 6 --methods default lik:iter50 --out bn_accuracy_q3
    python benchmarks/bn_accuracy.py --networks sachs child alarm insurance hepar2 --records 10000 --epsilons 0.5 1 2 3 \
        --first-run 6 --runs 10 --methods default lik:iter50 --out bn_accuracy_q4
    python benchmarks/bn_accuracy.py --networks asia sachs child --records 100000 --epsilons 0.5 1 2 3 \
        --first-run 6 --runs 10 --methods default lik:iter50 --out bn_accuracy_q4
    python benchmarks/bn_accuracy.py --networks sachs child alarm insurance hepar2 --records 10000 --epsilons 0.1 \
        --runs 10 --methods default lik:iter50 --out bn_accuracy_q5
    python benchmarks/bn_accuracy.py --networks asia sachs child --records 100000 --epsilons 0.1 --runs 10 \
        --methods default lik:iter50 --out bn_accuracy_q5
    python benchmarks/bn_accuracy.py --networks hepar2 --records 100000 --first-run 6 --runs 10 \
        --methods default lik:iter50 --out bn_accuracy_q6
Issue 12, bn12h (prior weights chosen by the evidence; rules in benchmarks/rules/issue12_evidence.md,
summaries by benchmarks/bn_evidence.py), each line one process per (network, N, epsilons) of the 9 pilot cells:
    python benchmarks/bn_accuracy.py --networks insurance --records 10000 --epsilons 0.1 0.5 1 --runs 5 \
        --methods default lik:evidence mbi --out bn_accuracy_t1      (sachs 0.1 0.5, alarm 0.1, child 1, hepar2 0.1, alarm 1e5 1)
    python benchmarks/bn_accuracy.py ... --first-run 5 --runs 10 --methods default lik:evidence-prefit \
        lik:evidence-prefit-lower --out bn_accuracy_t2             (the same 9 cells)
    python benchmarks/bn_accuracy.py ... --runs 3 --methods default lik:weight-x0.3 lik:weight-x0.1 lik:weight-x3 \
        --out bn_accuracy_t3                                      (insurance 0.1 0.5 1, alarm 0.1, sachs 0.5)
    python benchmarks/bn_accuracy.py --networks NET --records 10000 --epsilons 0.1 0.5 1 --first-run 15 --runs 20 \
        --methods D-Ind default lik:weight-x0.3 --out bn_accuracy_t4 (each of the 6 networks)
Issue 12, bn12m (the weight capped at Jeffreys' 2 / pi^2; rule in benchmarks/rules/issue12_cap.md, judged by
``bn_evidence.py --rule cap``), the 7 cells where the cap binds, one process per line in sequence:
    python benchmarks/bn_accuracy.py --networks insurance --records 10000 --epsilons 0.1 0.5 --first-run 15 --runs 18 \
        --methods default lik:cap-jeffreys --out bn_accuracy_u1   (pilot; also hepar2 0.1 0.5, alarm/sachs/child 0.1)
    python benchmarks/bn_accuracy.py --networks insurance --records 10000 --epsilons 0.1 0.5 --first-run 20 --runs 30 \
        --methods D-Ind default lik:cap-jeffreys mbi --out bn_accuracy_u2   (judged; the same 7 cells)
Issue 12, bn12u (the weight capped at the uniform Dirichlet's 6 / pi^2; rule in benchmarks/rules/issue12_uniform_cap.md,
judged by ``bn_evidence.py --rule uniform-cap``; adopted), the 3 cells where it binds, runs 30-39:
    python benchmarks/bn_accuracy.py --networks alarm insurance hepar2 --records 10000 --epsilons 0.1 \
        --first-run 30 --runs 40 --methods D-Ind default lik:cap-uniform mbi --out bn_accuracy_v1
Since bn12u the ``lik:*`` variants refit with the default's capped weight (a variant without ``weight_cap``
reproduces runs made before it everywhere but those 3 cells).
Issue 12, bn12d (the Dirichlet prior on the CPD columns; rules/issue12_dirichlet.md; adopted), the full grid,
fresh runs 40-49 (the commands are in the rule; rows bn_accuracy_w1_runs.csv, w2_runs.csv). Since bn12d ``default``
is the Dirichlet fit and ``lik:gaussian`` the previous default; the other ``lik:*`` variants are Gaussian unless
they name ``prior="dirichlet"``. Issue 12, bn12s (the better of two starts where the cap binds;
rules/issue12_best_start.md; adopted), runs 50-59 of those 3 cells: bn_accuracy_x1_runs.csv.
and the grid with max_iter=50 reported as the default (the 20-iteration default as "previous default"):
    cd benchmarks/results && python ../bn_accuracy.py --out bn_accuracy --markdown --as-default lik:iter50 \
        --summarise bn_accuracy_{p7,p8,p9,q1,q2,q3,q4,q5,q6,n7,m6,n6}_runs.csv --previous bn_accuracy_g{1,2,3}_runs.csv
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pgmpy_dp
from pgmpy_dp.datasets import load_network, sample_network
from pgmpy_dp.estimators.conditionals import cpd_values
from pgmpy_dp.evaluation.bayesian import (
    answer_queries,
    cpd_errors,
    joint_kl,
    query_errors,
    random_queries,
    weighted_cpd_l1,
)

warnings.filterwarnings("ignore")
RESULTS = Path(__file__).parent / "results"
#: --data-per-run: run r of seed s samples its records with seed DATA_SEED_OFFSET + 1000 s + r (its noise: 1000 s + r)
DATA_SEED_OFFSET = 7_000_000
METHODS = ["D-Ind", "data-dependent", "optimal+projection", "default", "mbi"]
#: CGM-EM settings of the likelihood fit other than the default's, refitted to the default's noisy
#: tables (paired comparisons): full M- and E-steps, and the closed-form start without its L-BFGS refinement
LIKELIHOOD_VARIANTS = {
    "lik:full-steps": dict(m_step_iter=20, nlbp_iter=10),
    "lik:cpd-start": dict(warm_start="cpds"),
    "lik:marginal-prior": dict(prior="marginals"),
    "lik:converged": dict(max_iter=100),
    "lik:iter50": dict(max_iter=50),
    "lik:lower-order-prior": dict(prior="lower-order"),
    "lik:per-clique": dict(prior_weight="per-clique"),
    # the per-clique weights' two halves: only those below the global weight, only those above it
    "lik:per-clique-lower": dict(prior_weight="per-clique-lower"),
    "lik:per-clique-raise": dict(prior_weight="per-clique-raise"),
    # issue 12, bn12h: per-family weights chosen by the evidence (type-II ML) around the global weight
    "lik:evidence": dict(prior_weight="evidence", evidence_schedule="staged"),
    # the weights from two 10-iteration pre-fits, then the main fit from the warm start in one piece
    "lik:evidence-prefit": dict(prior_weight="evidence", evidence_schedule="prefit"),
    "lik:evidence-prefit-lower": dict(prior_weight="evidence", evidence_schedule="prefit", evidence_bounds=(0.1, 1.0)),
    "lik:evidence-prefit-raise": dict(prior_weight="evidence", evidence_schedule="prefit", evidence_bounds=(1.0, 10.0)),
    # its two halves (diagnosis): the evidence may only lower the global weight / only raise it
    "lik:evidence-lower": dict(prior_weight="evidence", evidence_bounds=(0.1, 1.0), evidence_schedule="staged"),
    "lik:evidence-raise": dict(prior_weight="evidence", evidence_bounds=(1.0, 10.0), evidence_schedule="staged"),
    # diagnosis (bn12h): the global weight scaled by a factor, every family alike (the warm start's unchanged)
    "lik:weight-x0.3": dict(weight_factor=0.3),
    "lik:weight-x0.1": dict(weight_factor=0.1),
    "lik:weight-x3": dict(weight_factor=3.0),
    # issue 12, bn12m: the global weight capped at Jeffreys' 1 / trigamma(1/2) = 2 / pi**2 (likelihood.BN_PRIOR_CAP)
    "lik:cap-jeffreys": dict(weight_cap="jeffreys"),
    # issue 12, bn12u: capped at the uniform Dirichlet's 1 / trigamma(1) = 6 / pi**2, the unresolved-cell precision
    # the Markov-network estimator floors its weight at (markov.UNRESOLVED_PRIOR_PRECISION); rules/issue12_uniform_cap.md.
    # Adopted: since then the default's own weight (likelihood.BN_WEIGHT_CAP), so this variant is the default refitted
    "lik:cap-uniform": dict(weight_cap="uniform"),
    # the control: the same three EM stages, the weights held at the global one (what staging alone does)
    "lik:evidence-staged": dict(prior_weight="evidence", evidence_bounds=(1.0, 1.0), evidence_schedule="staged"),
    # issue 12, bn12g (pilot): every Laplace table fitted under a Gaussian likelihood of the same variance
    # (mbi's squared loss; the prior unchanged), to ask whether the loss is what mbi wins by at epsilon 0.1
    "lik:gaussian-loss": dict(noise_model="gaussian"),
    # issue 12, bn12d (pilot): Dirichlet priors on the CPD columns instead of the Gaussian on the log-potentials,
    # a = dirichlet_pseudo_count(weight) pseudo-records per cell (1 at the cap 6/pi^2), exact closed-form M-step
    "lik:dirichlet": dict(prior="dirichlet"),
    # a halved, about (a ~ sqrt(weight)). Adopted (rules/issue12_dirichlet.md): since then the default's own fit
    # (DiscretePrivateMLE(cpd_prior="auto") with dirichlet_spread=2, the same pseudo-count), so this is the default refitted
    "lik:dirichlet-x0.5": dict(prior="dirichlet", weight_factor=0.25),
    # the Gaussian prior on the log-potentials, the default before bn12d (every lik:* variant above is a Gaussian one)
    "lik:gaussian": dict(),
    # issue 12, bn12s (pilot): the Dirichlet default started from the network of the projected tables' CPDs (closed
    # form; smoother at high noise, not exact for noiseless tables), and the better of the two starts by final EM objective
    # (fit_family_tables(warm_start="best"); the pilot's runs used a copy of that loop here, with the same result)
    "lik:dirichlet-cpds": dict(prior="dirichlet", weight_factor=0.25, warm_start="cpds"),
    "lik:dirichlet-best-start": dict(prior="dirichlet", weight_factor=0.25, warm_start="best"),
    "lik:dirichlet-first-start": dict(prior="dirichlet", weight_factor=0.25, warm_start="first"),
    # ... and only where the noise swamps the tables (the global weight's cap 6/pi^2 binds; rules/issue12_best_start.md).
    # Adopted: since then the default's own fit (lik:dirichlet-x0.5 is the default only where the cap does not bind)
    "lik:dirichlet-best-at-cap": dict(prior="dirichlet", weight_factor=0.25, warm_start="best-at-cap"),
    # issue 12, bn12t (pilot): the Dirichlet default with fewer NLBP sweeps per E-step (its E-steps use all 10, the
    # Gaussian's about 5: alarm at 1e6 rows took about twice the Gaussian's time)
    "lik:dirichlet-nlbp5": dict(prior="dirichlet", weight_factor=0.25, nlbp_iter=5),
    "lik:dirichlet-nlbp3": dict(prior="dirichlet", weight_factor=0.25, nlbp_iter=3),
    "lik:dirichlet-jeffreys": dict(prior="dirichlet", weight_cap="jeffreys"),  # a at most 1/2 (Jeffreys' Dirichlet)
    # a = the weight itself: the Dirichlet whose log-density has the Gaussian's curvature at the uniform column
    "lik:dirichlet-curvature": dict(prior="dirichlet", dirichlet_match="curvature"),
    # bn12m (sachs against mbi, seen runs): is mbi's query-L1 lead the prior's level, CGM-EM stopping early, or the
    # E-step's message passes? The default's Dirichlet at a smaller weight, run to convergence, with more NLBP passes,
    # and with mbi's squared loss
    "lik:d-iter200": dict(prior="dirichlet", weight_factor=0.25, max_iter=200, tol=1e-9, count_tol=1e-5),
    "lik:d-nlbp30": dict(prior="dirichlet", weight_factor=0.25, nlbp_iter=30),
    "lik:d-x0.05": dict(prior="dirichlet", weight_factor=0.05),
    "lik:d-x0.05-iter200": dict(prior="dirichlet", weight_factor=0.05, max_iter=200, tol=1e-9, count_tol=1e-5),
    "lik:d-x0.01": dict(prior="dirichlet", weight_factor=0.01),
    "lik:d-x0.01-gaussloss": dict(prior="dirichlet", weight_factor=0.01, noise_model="gaussian"),
}
METRICS = ["joint_kl", "cpd_l1", "cpd_l1_weighted", "query_l1", "query_l1_mle"]
_SETTINGS = {
    "D-Ind": {"allocation": "uniform", "consistency": "projection"},
    "data-dependent": {"allocation": "data-dependent", "consistency": "projection"},
    "optimal+projection": {"allocation": "optimal", "consistency": "projection"},
    "default": {},
    # issue 12, fifth round: options of the default's estimator, each its own release from the same seeds
    "maximal": {"tables": "maximal"},
    "all-tables": {"tables": "all"},  # the default, explicitly (runs r4 ran it while the default was tables="maximal")
    "per-clique": {"prior_weight": "per-clique"},
    "maximal+per-clique": {"tables": "maximal", "prior_weight": "per-clique"},
    # issue 12, bn12a (diagnosis): D-Ind's uniform split fitted by the default's likelihood consistency
    "uniform+likelihood": {"allocation": "uniform"},
}
#: methods run only when --methods names them
OPTIONS = ["maximal", "per-clique", "maximal+per-clique", "all-tables", "uniform+likelihood"]


def _empty_model(net):
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork(net.edges())
    model.add_nodes_from(net.nodes())
    return model


def _model_from_tables(net, release, tables):
    """A pgmpy network on ``net``'s DAG whose CPDs are read off family count tables (axes: node, parents)."""
    from pgmpy.factors.discrete import TabularCPD

    model = _empty_model(net)
    cpds = []
    for t, table in zip(release, tables):
        node, *pa = t.attrs
        dom = release.domain
        cpds.append(TabularCPD(node, dom.size(node), cpd_values(table), evidence=pa or None,
                               evidence_card=[dom.size(p) for p in pa] or None,
                               state_names={v: list(dom[v]) for v in t.attrs}))
    model.add_cpds(*cpds)
    return model


def mbi_tables(release, iters):
    """private-pgm's estimate of every family table of ``release`` (Gaussian loss, weights 1/std)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_compilation_cache", False)
    import mbi

    attrs = list(release.domain.attrs)
    domain = mbi.Domain(tuple(attrs), tuple(release.domain.size(a) for a in attrs))
    measurements = [
        mbi.LinearMeasurement(np.asarray(t.values, dtype=np.float64).ravel(), t.attrs,
                              stddev=float(np.sqrt(t.variance)))
        for t in release
    ]
    model = mbi.estimation.MirrorDescent().estimate(domain, measurements, iters=iters)
    return [np.clip(np.asarray(model.project(t.attrs).datavector(flatten=False)), 0, None) for t in release]


def likelihood_tables(release, options):
    """The likelihood fit's family tables from ``release`` with CGM-EM ``options`` (same prior as the estimator;
    ``prior_weight="per-clique"`` among them: the estimator's per-family prior weights)."""
    from pgmpy_dp.estimators.likelihood import (
        BN_PRIOR_CAP, BN_WEIGHT_CAP, _noise_excess, clique_noise_regularization, fit_family_tables, measurement_for,
        noise_regularization,
    )
    from pgmpy_dp.engine.cgm import Measurement
    from pgmpy_dp.estimators.evidence import pooled_n_records

    tables = list(release)
    n = pooled_n_records([release])
    options = dict(options)
    prior_weight = options.pop("prior_weight", "global")
    measurements = [measurement_for(t) for t in tables]
    if options.pop("noise_model", None) == "gaussian":
        measurements = [Measurement(m.attrs, m.values, float(np.sqrt(t.variance)), noise="gaussian")
                        for m, t in zip(measurements, tables)]
    # no weight_cap: the estimator's own (the uniform Dirichlet's since bn12u; before it, no cap below 1)
    cap = {None: BN_WEIGHT_CAP, "jeffreys": BN_PRIOR_CAP, "uniform": BN_WEIGHT_CAP}[options.pop("weight_cap", None)]
    weights, naive = noise_regularization(tables, n, cap=cap) / n, _noise_excess(tables, n) / n
    weights *= options.pop("weight_factor", 1.0)
    if prior_weight == "evidence":
        options["prior_weight"] = "evidence"  # fit_family_tables chooses them around the global weights
    elif prior_weight != "global":
        per, per_naive = clique_noise_regularization(tables, n, [t.attrs for t in tables])  # the families are the cliques
        pick = {"per-clique": lambda c, g: c, "per-clique-lower": min, "per-clique-raise": max}[prior_weight]
        weights, naive = [pick(c, weights) for c in per], [pick(c, naive) for c in per_naive]
    if options.get("warm_start") == "best-at-cap":  # bn12s: "best" where the weight's cap binds, else the default
        binds = noise_regularization(tables, n) > BN_WEIGHT_CAP
        options = {**options, "warm_start": "best" if binds else "mle"}
    if options.get("warm_start") == "first":  # the start whose first EM map scores higher, then the full fit (bn12s)
        firsts = [fit_family_tables(release.domain, [t.attrs for t in tables], measurements, n, regularization=weights,
                                    naive_regularization=naive, **{**options, "warm_start": start, "max_iter": 1})
                  for start in ("mle", "cpds")]
        start = ("mle", "cpds")[int(firsts[1].log_likelihood[-1] > firsts[0].log_likelihood[-1])]
        options = {**options, "warm_start": start}
    fit = fit_family_tables(release.domain, [t.attrs for t in tables], measurements, n,
                            regularization=weights, naive_regularization=naive, **options)
    return fit.tables


def study(name, n, args, out_path):
    from pgmpy.parameter_estimator import DiscreteMLE

    net = load_network(name)
    df = sample_network(net, n, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    queries = random_queries(net, df, args.queries, False, rng) + random_queries(net, df, args.queries, True, rng)
    true_answers = answer_queries(net, queries, show_progress=False)

    def reference_for(data, run):
        """The non-private MLE of ``data``, its row, and its answers to the queries."""
        reference = _empty_model(net).fit(data, estimator=DiscreteMLE(state_names=net.states))
        row = {"network": name, "records": n, "epsilon": np.inf, "method": "non-private MLE", "run": run,
               "joint_kl": joint_kl(net, reference), "cpd_l1": cpd_errors(reference, net)["l1"].mean(),
               "cpd_l1_weighted": weighted_cpd_l1(net, reference),
               "query_l1": query_errors(reference, true_answers, queries, False)["l1"].mean(),
               "query_l1_mle": 0.0, "fit_seconds": np.nan}
        return row, answer_queries(reference, queries, show_progress=False)

    if not args.data_per_run:
        mle_row, mle_answers = reference_for(df, 0)
        _append(out_path, mle_row)
    for eps in args.epsilons:
        for run in range(args.first_run, args.runs):
            if args.data_per_run:
                # a fresh sample of the network per run (the queries stay those drawn above), so that a paired
                # difference's standard error covers the sampling of the records as well as the noise
                df = sample_network(net, n, seed=DATA_SEED_OFFSET + 1000 * args.seed + run)
                mle_row, mle_answers = reference_for(df, run)
                if eps == args.epsilons[0]:
                    _append(out_path, mle_row)
            default_release = None
            for method in args.methods:
                if method in LIKELIHOOD_VARIANTS and default_release is None:
                    # the default's noisy tables: they depend on the allocation and the seed, not on the fit
                    est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=args.seed * 1000 + run, consistency=None)
                    _empty_model(net).fit(df, estimator=est)
                    default_release = est.release_
                t0 = time.perf_counter()
                if method in LIKELIHOOD_VARIANTS:
                    model = _model_from_tables(net, default_release,
                                               likelihood_tables(default_release, LIKELIHOOD_VARIANTS[method]))
                elif method == "mbi":
                    if default_release is None:
                        raise ValueError("put 'default' before 'mbi' in --methods: mbi uses the default's tables")
                    model = _model_from_tables(net, default_release, mbi_tables(default_release, args.mbi_iters))
                else:
                    est = pgmpy_dp.DiscretePrivateMLE(epsilon=eps, random_state=args.seed * 1000 + run,
                                                      **_SETTINGS[method])
                    model = _empty_model(net).fit(df, estimator=est)
                    if method == "default":
                        default_release = est.release_
                seconds = time.perf_counter() - t0
                row = {"network": name, "records": n, "epsilon": eps, "method": method, "run": run,
                       "joint_kl": joint_kl(net, model), "cpd_l1": cpd_errors(model, net)["l1"].mean(),
                       "cpd_l1_weighted": weighted_cpd_l1(net, model),
                       "query_l1": query_errors(model, true_answers, queries, False)["l1"].mean(),
                       "query_l1_mle": query_errors(model, mle_answers, queries, False)["l1"].mean(),
                       "fit_seconds": seconds}
                _append(out_path, row)
                print(f"{name:9s} N={n:<7d} eps={eps:<4g} run={run} {method:18s} KL {row['joint_kl']:.4f} "
                      f"CPD-L1 {row['cpd_l1']:.4f} query-L1 {row['query_l1']:.4f} ({seconds:.1f}s)", flush=True)


def _append(path: Path, row: dict) -> None:
    pd.DataFrame([row]).to_csv(path, mode="a", header=not path.exists(), index=False)


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error of every metric per (network, records, epsilon, method), with the number of runs."""
    keys = ["network", "records", "epsilon", "method"]
    grouped = runs.groupby(keys, sort=False)[[*METRICS, "fit_seconds"]]
    summary = grouped.mean()
    summary = summary.join(grouped.sem()[METRICS].add_suffix("_se"))
    summary["runs"] = runs.groupby(keys, sort=False).size()
    return summary.reset_index()


def paired(runs: pd.DataFrame, method: str, baseline: str, metric: str) -> pd.DataFrame:
    """Per cell: mean paired difference ``method - baseline`` of ``metric`` over runs (same seed, same
    sample), its standard error, and in how many runs ``method`` was lower."""
    keys = ["network", "records", "epsilon", "run"]
    a = runs[runs.method == method].set_index(keys)[metric]
    b = runs[runs.method == baseline].set_index(keys)[metric]
    d = (a - b).dropna().rename("diff").reset_index()
    g = d.groupby(["network", "records", "epsilon"], sort=False)["diff"]
    out = pd.DataFrame({"diff": g.mean(), "se": g.sem(), "runs": g.size(), "wins": g.apply(lambda x: int((x < 0).sum()))})
    out["baseline"] = b.groupby(["network", "records", "epsilon"]).mean().reindex(out.index)
    return out.reset_index()


def win_counts(runs: pd.DataFrame, method: str, baseline: str) -> pd.DataFrame:
    """Per metric: cells where ``method`` has the lower mean, and where it is lower by more than two
    paired standard errors (significant) or higher by more than two (significantly worse)."""
    rows = []
    for metric in ("joint_kl", "cpd_l1", "cpd_l1_weighted", "query_l1"):
        p = paired(runs, method, baseline, metric)
        if not len(p):
            continue
        rows.append({"metric": metric, "cells": len(p), "better": int((p["diff"] < 0).sum()),
                     "significantly_better": int((p["diff"] < -2 * p["se"]).sum()),
                     "significantly_worse": int((p["diff"] > 2 * p["se"]).sum()),
                     "run_wins": f"{int(p['wins'].sum())}/{int(p['runs'].sum())}"})
    return pd.DataFrame(rows)


def paired_cells(runs: pd.DataFrame, method: str, baseline: str) -> pd.DataFrame:
    """Per cell and metric: ``method``'s mean change against ``baseline`` in percent of the baseline's mean,
    marked ``*`` where higher by more than two paired standard errors and ``-`` where lower by more."""
    table = None
    for metric in ("query_l1", "cpd_l1_weighted", "cpd_l1", "joint_kl", "query_l1_mle"):
        p = paired(runs, method, baseline, metric)
        mark = np.where(p["diff"] > 2 * p["se"], "*", np.where(p["diff"] < -2 * p["se"], "-", ""))
        col = [f"{100 * d / b:+.1f}%{m}" for d, b, m in zip(p["diff"], p["baseline"], mark)]
        cells = p[["network", "records", "epsilon"]].assign(**{metric: col})
        table = cells if table is None else table.merge(cells, on=["network", "records", "epsilon"])
    return table


def variant_against_baseline(runs: pd.DataFrame, variant: str, baseline: str = "D-Ind") -> pd.DataFrame:
    """Win counts against ``baseline`` of ``variant`` and of the default on the SAME (cell, run) pairs:
    only the runs where ``variant`` ran (with the default on the same noisy tables) are counted for
    both, so the two rows of each metric differ by the variant alone."""
    keys = ["network", "records", "epsilon", "run"]
    ran = runs[runs.method == variant].set_index(keys).index
    both = ran.intersection(runs[runs.method == "default"].set_index(keys).index)
    inside = runs.set_index(keys).index.isin(both)
    sub = runs[inside & runs.method.isin([variant, "default", baseline])]
    rows = [win_counts(sub, m, baseline).assign(method=m) for m in ("default", variant)]
    table = pd.concat(rows, ignore_index=True)
    order = {"joint_kl": 0, "cpd_l1": 1, "cpd_l1_weighted": 2, "query_l1": 3}
    table = table.sort_values(["metric", "method"], key=lambda c: c.map(order) if c.name == "metric" else c,
                              kind="stable")
    return table[["metric", "method", "cells", "better", "significantly_better", "significantly_worse", "run_wins"]]


def variant_table(runs: pd.DataFrame, baseline: str = "default") -> str:
    """Markdown: per ``lik:*`` variant and (network, N), the paired change against ``baseline`` of
    joint KL, weighted CPD L1 and query L1 (median over epsilons of the relative mean change, and the
    epsilons where it is more than two paired standard errors better / worse)."""
    metrics = ("joint_kl", "cpd_l1_weighted", "query_l1")
    lines = ["| variant | network | N | epsilons | " + " | ".join(f"{m}: median change, better/worse" for m in metrics) + " |",
             "|---|---|---:|---|" + "---|" * len(metrics)]
    for variant in [m for m in dict.fromkeys(runs.method) if m in LIKELIHOOD_VARIANTS or m in OPTIONS]:
        parts = {m: paired(runs, variant, baseline, m) for m in metrics}
        for (name, n), cell in parts[metrics[0]].groupby(["network", "records"], sort=False):
            cells = []
            for m in metrics:
                p = parts[m][(parts[m].network == name) & (parts[m].records == n)]
                rel = 100 * p["diff"] / p["baseline"]
                cells.append(f"{rel.median():+.1f}%, {int((p['diff'] < -2 * p['se']).sum())}/{int((p['diff'] > 2 * p['se']).sum())}")
            eps = ", ".join(f"{e:g}" for e in cell.epsilon)
            lines.append(f"| {variant} | {name} | {n:.0e} | {eps} ({int(cell.runs.min())}-{int(cell.runs.max())} runs) | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(summary: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    private = summary[np.isfinite(summary["epsilon"])]
    settings = list(dict.fromkeys(zip(private["network"], private["records"])))
    shown = ["joint_kl", "cpd_l1", "cpd_l1_weighted", "query_l1"]
    styles = {"D-Ind": "s--", "data-dependent": "^:", "optimal+projection": "d-.", "previous default": "v:",
              "default": "o-", "mbi": "x-"}
    fig, axes = plt.subplots(len(settings), len(shown), figsize=(3.6 * len(shown), 2.5 * len(settings)),
                             squeeze=False)
    for r, (name, n) in enumerate(settings):
        for c, metric in enumerate(shown):
            ax = axes[r, c]
            for method, style in styles.items():
                part = private[(private.network == name) & (private.records == n) & (private.method == method)]
                if len(part):
                    ax.plot(part["epsilon"], part[metric], style, label=method, ms=4)
            ax.set_yscale("log")
            ax.set_title(f"{name}, N={n:,}: {metric}", fontsize=9)
            ax.set_xlabel("epsilon")
            ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("DiscretePrivateMLE: error against the true network (lower is better)")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))  # room for the title
    fig.savefig(path, dpi=100)
    plt.close(fig)


def markdown_table(summary: pd.DataFrame) -> str:
    """The docs' table: mean +- standard error of joint KL, query L1 and weighted CPD L1 per cell."""
    s = summary.set_index(["network", "records", "epsilon", "method"])
    cols = [("joint_kl", ("D-Ind", "previous default", "default", "mbi")),
            ("query_l1", ("D-Ind", "previous default", "default", "mbi")),
            ("cpd_l1_weighted", ("D-Ind", "default"))]
    head = "| network | N | eps | " + " | ".join(f"{m}: {k}" for m, ks in cols for k in ks) + " |"
    lines = [head, "|---|---:|---:|" + "---:|" * sum(len(ks) for _, ks in cols)]
    private = summary[np.isfinite(summary["epsilon"])]
    for (name, n, eps) in dict.fromkeys(zip(private["network"], private["records"], private["epsilon"])):
        cells = []
        for metric, methods in cols:
            values = {k: s.loc[(name, n, eps, k)] for k in methods if (name, n, eps, k) in s.index}
            best = min((v[metric] for v in values.values()), default=None)
            for k in methods:
                if k not in values:
                    cells.append("")
                    continue
                v = values[k]
                text = f"{v[metric]:.3g} ± {v[metric + '_se']:.1g}" if v["runs"] > 1 else f"{v[metric]:.3g}"
                cells.append(f"**{text}**" if v[metric] == best else text)
        lines.append(f"| {name} | {n:.0e} | {eps:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets(summary: pd.DataFrame, runs: pd.DataFrame | None = None) -> list[str]:
    """The issue's bars, checked on whatever grid was run."""
    lines = []
    s = summary.set_index(["network", "records", "epsilon", "method"])
    if runs is not None:
        for base in ("D-Ind", "mbi", "previous default"):
            if base in set(runs.method) and "default" in set(runs.method):
                lines.append(f"default vs {base} (paired, per (network, N, epsilon) cell):")
                lines.append(win_counts(runs, "default", base).to_string(index=False))
    reached = {m: 0 for m in ("joint_kl", "cpd_l1_weighted", "query_l1")}
    pairs = 0
    for (name, n) in dict.fromkeys(zip(summary["network"], summary["records"])):
        if (name, n, 1.0, "default") in s.index and (name, n, 2.0, "D-Ind") in s.index:
            d, b = s.loc[(name, n, 1.0, "default")], s.loc[(name, n, 2.0, "D-Ind")]
            pairs += 1
            got = [m for m in reached if d[m] <= b[m]]
            for m in got:
                reached[m] += 1
            lines.append(f"{name:9s} N={n:<7d} default@1 vs D-Ind@2: KL {d.joint_kl:.4g} vs {b.joint_kl:.4g}, "
                         f"weighted CPD-L1 {d.cpd_l1_weighted:.4g} vs {b.cpd_l1_weighted:.4g}, "
                         f"query-L1 {d.query_l1:.4g} vs {b.query_l1:.4g}: reached in {', '.join(got) or 'none'}")
    if pairs:
        lines.append("default@1 reaches D-Ind@2 on " + ", ".join(f"{m} {k}/{pairs}" for m, k in reached.items()))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--networks", nargs="+", default=["asia", "sachs", "child", "alarm", "insurance", "hepar2"])
    parser.add_argument("--records", nargs="+", type=int, default=[10_000, 100_000])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.1, 0.5, 1.0, 2.0, 3.0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--first-run", type=int, default=0,
                        help="start at this run (runs first-run .. runs-1: complete a cell that ran fewer runs)")
    parser.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS + OPTIONS + list(LIKELIHOOD_VARIANTS))
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument("--mbi-iters", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-per-run", action="store_true",
                        help="sample fresh records per run (default: one sample per network and N, shared by all runs, "
                             "so the runs vary only the noise)")
    parser.add_argument("--out", default="bn_accuracy")
    parser.add_argument("--summarise", nargs="*", metavar="RUNS_CSV",
                        help="only summarise these runs files (default: results/<out>_runs.csv) and plot")
    parser.add_argument("--markdown", action="store_true", help="also print the docs' table")
    parser.add_argument("--previous", nargs="*", default=[], metavar="RUNS_CSV",
                        help="with --summarise: runs files whose 'default' rows came from an earlier default; "
                             "they are summarised as 'previous default'")
    parser.add_argument("--paired-cells", nargs="*", metavar="BASELINE",
                        help="with --summarise: also print the default's change per cell against each BASELINE "
                             "(percent of its mean; * significantly higher, - significantly lower)")
    parser.add_argument("--as-default", choices=list(LIKELIHOOD_VARIANTS), metavar="VARIANT",
                        help="with --summarise: report VARIANT as 'default' and the default's rows as "
                             "'previous default' (what adopting VARIANT would change)")
    args = parser.parse_args(argv)
    RESULTS.mkdir(exist_ok=True)
    runs_path = RESULTS / f"{args.out}_runs.csv"
    if args.summarise is None:
        for name in args.networks:
            for n in args.records:
                study(name, n, args, runs_path)
        files = [runs_path]
    else:
        files = [Path(f) for f in args.summarise] or [runs_path]
    frames = [pd.read_csv(f) for f in files]
    for f in args.previous:
        old = pd.read_csv(f)
        frames.append(old.assign(method=old["method"].replace({"default": "previous default"})))
    runs = pd.concat(frames, ignore_index=True)
    if args.as_default:
        # summarise a variant as if it were the default: its rows become "default", the default's
        # rows (same noisy tables) "previous default"; the --previous files' defaults are dropped
        runs = runs[runs.method != "previous default"]
        runs = runs.assign(method=runs.method.replace({"default": "previous default", args.as_default: "default"}))
    # a (network, N, epsilon, method, run) run in several files (the non-private MLE row of every
    # file, D-Ind rerun beside a new default) is the same fit from the same seeds: keep one
    runs = runs.drop_duplicates(["network", "records", "epsilon", "method", "run"], ignore_index=True)
    summary = summarise(runs)
    summary.to_csv(RESULTS / f"{args.out}.csv", index=False)
    plot(summary, RESULTS / f"{args.out}.png")
    pd.set_option("display.width", 200)
    print(summary.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print("\n".join(["", "targets:"] + targets(summary, runs)))
    if args.markdown:
        print("\n" + markdown_table(summary))
        if any(m in LIKELIHOOD_VARIANTS or m in OPTIONS for m in set(runs.method)):
            print("\n" + variant_table(runs))
    for baseline in args.paired_cells or []:
        print(f"\nthe default against {baseline}, per cell (paired):")
        print(paired_cells(runs, "default", baseline).to_string(index=False))
    for variant in [m for m in dict.fromkeys(runs.method) if m in LIKELIHOOD_VARIANTS or m in OPTIONS]:
        if {"D-Ind", "default"} <= set(runs.method):  # a run of options alone (all-tables maximal) has no default rows
            print(f"\n{variant} and the default against D-Ind on the runs {variant} ran:")
            print(variant_against_baseline(runs, variant).to_string(index=False))
        print(f"\n{variant} against the default (paired):")
        print(win_counts(runs, variant, "default").to_string(index=False))


if __name__ == "__main__":
    main()
