"""Simulation of a fit's measurements and the refits of its estimator (post-processing, no budget).

A simulated data set draws ``N`` records from the fitted model, counts the fit's tables, adds fresh noise
of each table's public mechanism and scale and refits; a ``FitView`` holds what Bayesian and Markov
fits differ in. The seeded random numbers are public simulation, not privacy noise.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import inspect
import os
import warnings
from collections.abc import Callable

import numpy as np

from .._progress import progress
from ..engine import ConvergenceWarning, JunctionTree, make_inference
from ..estimators.bayesian import DiscretePrivateMLE
from ..estimators.conditionals import cpd_values
from ..estimators.evidence import pooled_n_records
from ..estimators.fitted import estimator_of
from ..estimators.markov import PrivateMarkovEstimator

# The Markov fit itself: a refit runs the very stages, under the very settings, of the fit it repeats.
from ..estimators.markov_fit import Evidence, fit_markov
from ..estimators.measurements import clique_measurements
from ..privacy.domain import Domain
from ..privacy.mechanisms import GAUSSIAN_MECHANISM, discrete_gaussian_noise, discrete_laplace_noise
from ..privacy.random_state import check_random_state
from ..tables.artifact import MarginalRelease
from ..tables.counting import contingency_table


@dataclasses.dataclass(frozen=True)
class FitView:
    """What the simulation needs of a fitted estimator.

    Attributes
    ----------
    domain : Domain
        The model's variables and their states.
    cliques : list of tuple of str
        The scopes of ``theta``: a Markov network's cliques, a Bayesian network's families ``(node, *parents)``.
    theta : list of numpy.ndarray
        The fitted log-potentials (log-CPDs for a Bayesian network), one per clique.
    inference : str
        ``"junction-tree"`` or ``"loopy"``.
    releases : list of tuple
        Per simulated release: ``(domain, tables, mechanism, n_records)``.
    n_draw : int
        Records per simulated data set.
    make_fit : callable
        ``make_fit(engine)`` returns the fitting step, ``fit(releases) -> log-potentials`` (picklable).
    fitted : object
        The estimator's fitted parameters, which tell kept refits apart from an earlier fit's.
    """

    domain: Domain
    cliques: list
    theta: list
    inference: str
    releases: list
    n_draw: int
    make_fit: Callable
    fitted: object


def fit_view(estimator) -> FitView:
    """The ``FitView`` of a fitted estimator.

    Parameters
    ----------
    estimator : PrivateMarkovEstimator, DiscretePrivateMLE or pgmpy model
        A fitted estimator, or the model it fitted (see `estimator_of`).

    Examples
    --------
    >>> import pandas as pd
    >>> import pgmpy_dp
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> df = pd.DataFrame({"a": [0, 1] * 500, "b": [0, 0, 1, 1] * 250})
    >>> est = pgmpy_dp.PrivateMarkovEstimator(random_state=0, show_progress=False)
    >>> _ = est.fit(DiscreteMarkovNetwork([("a", "b")]), df, epsilon=1.0, domain={"a": [0, 1], "b": [0, 1]})
    >>> view = fit_view(est)
    >>> view.cliques, view.inference, [t.attrs for t in view.releases[0][1]]
    ([('a', 'b')], 'junction-tree', [('a', 'b')])
    >>> fits = refits(view, 3, random_state=0)   # three refits, one log-potential array per clique
    >>> len(fits), fits[0][0].shape
    (3, (2, 2))
    """
    if hasattr(estimator, "check_model"):  # a pgmpy model stands for the estimator that fitted it
        estimator = estimator_of(estimator)
    if isinstance(estimator, DiscretePrivateMLE):
        if not hasattr(estimator, "parameters_"):
            raise ValueError("estimator is not fitted; fit it first, e.g. model.fit(df, estimator=DiscretePrivateMLE(...))")
        return _bayesian_view(estimator)
    if isinstance(estimator, PrivateMarkovEstimator):
        if not hasattr(estimator, "log_potentials_"):
            raise ValueError("estimator is not fitted; call estimator.fit(model, data) first")
        return _markov_view(estimator)
    raise TypeError(
        f"estimator must be a fitted PrivateMarkovEstimator, DiscretePrivateMLE or PrivateSynthesizer, or a "
        f"model one of them fitted, got {type(estimator).__name__}"
    )


def refits(view: FitView, n_samples: int, random_state, theta=None, n_jobs: int = 1, show: bool = False,
           desc: str = "bootstrap refits") -> list[list[np.ndarray]]:
    """``n_samples`` refits on data sets simulated from ``theta`` (default: the fit).

    The data sets come from one random stream here, so the refits do not depend on ``n_jobs``.
    """
    rng = check_random_state(random_state) or np.random.default_rng()
    fit, simulated = _simulate(view, n_samples, rng, theta)
    return _map_refits(fit, simulated, n_jobs, show, desc)


def response_refits(view: FitView, generators: list, seed: int, n_jobs: int = 1, show: bool = False) -> list:
    """One refit drawn from each of ``generators``, every draw from ``numpy.random.default_rng(seed)``.

    Common random numbers: the answers then move with their generators only.
    """
    fit, simulated = None, []
    for theta in generators:
        fit, (boot,) = _simulate(view, 1, np.random.default_rng(seed), theta)
        simulated.append(boot)
    return _map_refits(fit, simulated, n_jobs, show, "response refits")


def check_n_jobs(n_jobs) -> int:
    """Worker processes for the refits' fits: a positive integer, or -1 for every CPU."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or not (n_jobs >= 1 or n_jobs == -1):
        raise ValueError(f"n_jobs must be a positive integer or -1 (every CPU), got {n_jobs!r}")
    return (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)


# -- the two kinds of fit ------------------------------------------------------------------


def _markov_view(est) -> FitView:
    """A ``PrivateMarkovEstimator``: its measured tables inside the cliques, refitted under its ``fit_settings_``."""
    _check_record_level(est.releases_)
    cliques = list(est.cliques_)
    theta = [np.asarray(t, dtype=np.float64) for t in est.log_potentials_]
    n = float(est.n_records_)
    # one simulated release per release: separate releases may measure the same attribute set
    releases = []
    for r in est.releases_:
        tables = [t for t in r.tables if any(set(t.attrs) <= set(c) for c in cliques)]
        if tables:
            releases.append((r.domain, tables, r.mechanism, n))

    def make_fit(engine):
        return functools.partial(_markov_refit, est.fit_settings_, engine, cliques=cliques, tied=est.tied_,
                                 theta_hat=theta, n=n)

    return FitView(est.domain_, cliques, theta, est.inference_, releases, max(1, int(round(n))), make_fit,
                   est.log_potentials_)


def _bayesian_view(est) -> FitView:
    """A ``DiscretePrivateMLE``: the released tables over its nodes, refitted by its consistency step.

    The noise scales are the point fit's (a data-dependent allocation is not re-run).
    """
    domain = Domain(dict(est.state_names_))
    cpds = {c.variable: c for c in est.parameters_}
    families, theta = [], []
    for node in est.state_names_:
        families.append(tuple(cpds[node].variables))
        with np.errstate(divide="ignore"):
            theta.append(np.log(np.asarray(cpds[node].get_values(), dtype=np.float64)).reshape(cpds[node].cardinality))
    released = est.release_ if isinstance(est.release_, list) else [est.release_]
    _check_record_level(released)
    nodes = set(domain.attrs)
    # a fit from releases ignores pooled tables and tables over other attributes
    releases = [(r.domain, kept, r.mechanism, r.n_records) for r in released
                if (kept := [t for t in r if set(t.attrs) <= nodes and t.members is None])]
    # the estimator's own consistency step and settings, on a bare copy (the fit stays untouched)
    settings = {"consistency": est.consistency, "max_iter": est.max_iter, "show_progress": False}
    accepted = inspect.signature(DiscretePrivateMLE).parameters  # the prior settings this estimator offers
    settings.update({k: getattr(est, k) for k in ("prior_weight", "cpd_prior", "prior_strength") if k in accepted})
    step = DiscretePrivateMLE(**settings)
    n_draw = max(1, int(round(pooled_n_records(released))))

    def make_fit(engine):  # the consistency step builds its own engines
        return functools.partial(_bayesian_refit, step, domain, families)

    return FitView(domain, families, theta, "junction-tree", releases, n_draw, make_fit, est.parameters_)


#: EM maps of a CGM-EM refit, which starts at the fitted potentials (the simulation's truth, near every
#: refit's optimum) and skips the naive stage: on the Adult AIM model its answers correlate 0.976-1.0 with
#: full refits' at a fifth of the cost (benchmarks/synth_interval_cost.py).
WARM_MAPS = 20


def _markov_refit(settings, engine, boots, *, cliques, tied, theta_hat, n: float) -> list[np.ndarray]:
    """The fit's own two stages (`fit_markov`) on simulated tables, under the settings it recorded.

    The naive stage starts from the fitted parameters, near the refit's optimum; a CGM-EM fit skips it
    and runs at most `WARM_MAPS` maps from them.
    """
    evidence = Evidence(cliques, *clique_measurements(boots, cliques, tied), n, tied)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # convergence chatter of simulated fits
        if settings.method == "cgm-em":
            warm = dataclasses.replace(settings, max_iter=min(settings.max_iter, WARM_MAPS))
            return fit_markov(engine, evidence, warm, init=theta_hat).log_potentials
        return fit_markov(engine, evidence, settings, naive_init=theta_hat).log_potentials


def _bayesian_refit(step, domain, families, boots) -> list[np.ndarray]:
    """``step``'s consistency step on the simulated releases, as log-CPDs over ``families``."""
    with warnings.catch_warnings(), np.errstate(divide="ignore"):
        warnings.simplefilter("ignore")  # convergence chatter of simulated fits
        fitted = step.family_tables(boots, domain, families)
        return [np.log(cpd_values(t)).reshape(t.shape) for t in fitted]


# -- drawing the data sets -----------------------------------------------------------------


def _simulate(view: FitView, n_samples: int, rng, theta=None) -> tuple:
    """``(fit, data sets)``: ``n_samples`` simulated lists of releases, and the fitting step.

    With a junction tree the records are drawn from ``theta`` and counted; with loopy inference
    each table is drawn from its own multinomial. The fitting step is bound to this call's engine.
    """
    theta = view.theta if theta is None else [np.asarray(t, dtype=np.float64) for t in theta]
    if [t.shape for t in theta] != [t.shape for t in view.theta]:
        raise ValueError(f"theta must hold one array per clique, shaped {[t.shape for t in view.theta]}")
    engine = make_inference(view.domain, view.cliques, view.inference)
    tables = [t for _, ts, _, _ in view.releases for t in ts]
    if isinstance(engine, JunctionTree):
        def draw():
            codes = engine.sample(theta, view.n_draw, random_state=rng)
            return [sum(contingency_table(codes, view.domain, m) for m in _members(t)) for t in tables]
    else:
        marginals, _ = engine.marginals(theta)

        def draw():
            return [sum(_multinomial(rng, view.n_draw, _table_marginal(marginals, view.cliques, m)) for m in _members(t))
                    for t in tables]
    simulated = []
    for _ in range(n_samples):
        counts = iter(draw())
        simulated.append([
            MarginalRelease(d, [dataclasses.replace(t, values=next(counts) + _noise(t, rng)) for t in ts], mech,
                            "seeded", n)
            for d, ts, mech, n in view.releases
        ])
    return view.make_fit(engine), simulated


def _map_refits(fit, simulated: list, n_jobs: int, show: bool, desc: str) -> list:
    """``fit`` of every simulated data set in order, here or in ``n_jobs`` worker processes."""
    if n_jobs == 1:
        return list(progress(map(fit, simulated), show, desc=desc, total=len(simulated)))
    with concurrent.futures.ProcessPoolExecutor(max_workers=n_jobs) as pool:
        return list(progress(pool.map(fit, simulated), show, desc=desc, total=len(simulated)))


def _check_record_level(releases) -> None:
    """Refits simulate records, not individuals: refuse individual-level releases."""
    units = [r.privacy_unit for r in releases if r.privacy_unit is not None]
    if units:
        raise NotImplementedError(
            f"query_interval simulates record-level tables, but the fit used an individual-level release "
            f"(privacy_unit={units[0]!r}), whose noise and contribution bounding the simulation would not "
            "reproduce; use the point answer (pgmpy_dp.query) or fit from a record-level release"
        )


def _members(table) -> tuple:
    """The attribute tuples a table counts: its members if pooled (one record adds to each), else its own."""
    return table.members or (table.attrs,)


def _multinomial(rng, n: int, p: np.ndarray) -> np.ndarray:
    """``n`` records' counts over the cells of the probability table ``p``."""
    q = np.clip(p.ravel(), 0, None)
    return rng.multinomial(n, q / q.sum()).reshape(p.shape)


def _table_marginal(marginals, cliques, attrs) -> np.ndarray:
    """The model's marginal over ``attrs`` (in that order) from a clique marginal containing them."""
    i = next(i for i, c in enumerate(cliques) if set(attrs) <= set(c))
    c = cliques[i]
    other = tuple(k for k, a in enumerate(c) if a not in attrs)
    m = marginals[i].sum(axis=other) if other else marginals[i]
    kept = [a for a in c if a in attrs]
    return np.transpose(m, [kept.index(a) for a in attrs])


def _noise(table, rng) -> np.ndarray:
    if table.mechanism == GAUSSIAN_MECHANISM:
        return discrete_gaussian_noise(table.values.shape, table.scale, random_state=rng)
    return discrete_laplace_noise(table.values.shape, table.scale, random_state=rng)
