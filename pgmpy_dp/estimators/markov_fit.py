"""The one fit of a Markov network's log-potentials to noisy tables: a naive warm start, then CGM-EM.

The Markov estimator, the synthesizer's rounds and the refits of ``pgmpy_dp.query_interval`` all fit
here. [`fit_settings`][pgmpy_dp.estimators.markov_fit.fit_settings] derives everything a fit runs under
from public facts; a refit passes them back to [`fit_markov`][pgmpy_dp.estimators.markov_fit.fit_markov].
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from ..engine import cgm_em, fit_log_potentials
from ..privacy.domain import Domain
from .measurements import warm_start_targets
from .priors import markov_weights

#: CGM-EM's EM maps under the default ``max_iter=None``: a fixed budget that does not warn (docs/markov.md).
EM_BUDGET = 30


class Evidence(NamedTuple):
    """The cliques, then what [`clique_measurements`][pgmpy_dp.estimators.measurements.clique_measurements]
    makes of the releases for them, the record count and the tied groups (indices into ``cliques``)."""

    cliques: list
    measurements: list
    clique_tables: list
    n_records: float
    tied: list | None = None


@dataclasses.dataclass(frozen=True, eq=False)  # a weight may be an array: no elementwise ==
class FitSettings:
    """How a Markov fit runs: everything a refit of it must repeat.

    ``method``, ``max_iter`` (EM maps), ``tol``, ``naive_tol`` (`naive_tolerance`), ``warm_start`` (the naive
    stage's targets: ``"reconciled"``, ``"noisy"`` for tied potentials, None for naive MLE), both stages' L2
    weights against all ``N`` records, and CGM-EM's ``m_step_iter`` and ``e_step_iter`` (its ``nlbp_iter``).
    """

    method: str
    max_iter: int
    tol: float
    naive_tol: float
    warm_start: str | None
    naive_regularization: float
    cgm_regularization: float | np.ndarray
    m_step_iter: int | None = None
    e_step_iter: int = 10


class MarkovFitResult(NamedTuple):
    """The log-potentials; the method's own iterations, convergence and last change (see
    ``PrivateMarkovEstimator``), EM's objectives, and the naive stage's iterations (0 if skipped)."""

    log_potentials: list
    n_iter: int
    converged: bool
    tolerance: float
    log_likelihood: list
    mle_n_iter: int


def naive_tolerance(method: str, tol: float, measurements, n_records: float) -> float:
    """Gradient tolerance (max-norm, per record) of the naive stage: ``tol * 1e-2``, or as CGM-EM's
    warm start the most precise table's noise scale per record if larger.

    Examples
    --------
    >>> from pgmpy_dp.engine import Measurement
    >>> ms = [Measurement(("a",), np.zeros(2), 4.0), Measurement(("b",), np.zeros(2), 2.0)]
    >>> naive_tolerance("cgm-em", 1e-6, ms, 1000.0), naive_tolerance("naive-mle", 1e-6, ms, 1000.0)
    (0.002, 1e-08)
    """
    out = tol * 1e-2
    if method == "cgm-em":
        out = max(out, min(m.scale for m in measurements) / n_records)
    return out


def fit_settings(method: str, evidence: Evidence, regularization="auto", max_iter: int | None = None,
                 tol: float = 1e-6, per_clique: bool = True, m_step_iter: int | None = None,
                 e_step_iter: int = 10) -> FitSettings:
    """The settings of a fit of ``evidence``; ``max_iter=None`` is `EM_BUDGET`, ``regularization`` and
    ``per_clique`` are [`markov_weights`][pgmpy_dp.estimators.priors.markov_weights]' (an example: `fit_markov`).
    """
    naive, cgm = markov_weights(regularization, evidence.cliques, evidence.clique_tables, evidence.measurements,
                                evidence.tied, evidence.n_records, per_clique)
    budget = EM_BUDGET if max_iter is None else int(max_iter)
    naive_tol = naive_tolerance(method, tol, evidence.measurements, evidence.n_records)
    warm_start = None if method != "cgm-em" else "noisy" if any(len(g) > 1 for g in evidence.tied or []) else "reconciled"
    return FitSettings(method, budget, tol, naive_tol, warm_start, naive, cgm, m_step_iter, e_step_iter)


def fit_markov(engine, evidence: Evidence, settings: FitSettings, *, init: Sequence[np.ndarray] | None = None,
               naive_init: Sequence[np.ndarray] | None = None, callback=None) -> MarkovFitResult:
    """Fit log-potentials to ``evidence`` under ``settings`` with ``engine``: the naive stage, then CGM-EM.

    ``init`` (one array per clique, `start_potentials`) is where the method's own loop starts (CGM-EM
    then skips the naive stage); ``naive_init`` is where the naive stage starts. ``callback`` is CGM-EM's.

    Examples
    --------
    >>> import pandas as pd
    >>> from pgmpy_dp.engine import JunctionTree
    >>> from pgmpy_dp.estimators.measurements import clique_measurements
    >>> df = pd.DataFrame({"a": [0, 1, 1, 0] * 250, "b": [0, 1, 0, 0] * 250})
    >>> rel = df.dp.release([("a", "b")], epsilon=1.0, domain={"a": [0, 1], "b": [0, 1]}, random_state=0)
    >>> evidence = Evidence([("a", "b")], *clique_measurements([rel], [("a", "b")]), 1000.0)
    >>> settings = fit_settings("cgm-em", evidence)
    >>> settings.max_iter, settings.warm_start, settings.naive_tol   # EM_BUDGET; scale 1 over 1000 records
    (30, 'reconciled', 0.001)
    >>> fit = fit_markov(JunctionTree(rel.domain, evidence.cliques), evidence, settings)
    >>> len(fit.log_potentials), fit.log_potentials[0].shape, fit.mle_n_iter > 0
    (1, (2, 2), True)
    """
    naive = None
    if init is None or settings.method == "naive-mle":
        n = evidence.n_records
        targets = warm_start_targets(settings.warm_start, evidence.cliques, evidence.clique_tables, n)
        naive = fit_log_potentials(
            engine, targets, settings.naive_regularization / n, evidence.tied,
            init=init if init is not None else naive_init, max_iter=max(1000, settings.max_iter),
            tol=settings.naive_tol, warn=settings.method == "naive-mle",  # as a warm start it need not converge
        )
        if settings.method == "naive-mle":
            return MarkovFitResult(naive.log_potentials, naive.n_iter, naive.converged, naive.gradient_norm, [],
                                   naive.n_iter)
    result = cgm_em(
        engine, evidence.measurements, evidence.n_records, settings.cgm_regularization / evidence.n_records,
        evidence.tied, init=naive.log_potentials if naive is not None else init, max_iter=settings.max_iter,
        tol=settings.tol, m_step_iter=settings.m_step_iter, nlbp_iter=settings.e_step_iter, callback=callback,
        warn=False,
    )
    return MarkovFitResult(result.log_potentials, result.n_iter, result.converged, result.tolerance,
                           list(result.log_likelihood), 0 if naive is None else naive.n_iter)


def start_potentials(init: Mapping | None, cliques, domain: Domain) -> list[np.ndarray] | None:
    """``init`` (clique -> log-potentials, axes in the key's order) as one start per clique, zero where it has
    none; its keys and shapes are checked.

    Examples
    --------
    >>> d = Domain({"a": [0, 1], "b": [0, 1, 2]})
    >>> start = start_potentials({("b", "a"): np.ones((3, 2))}, [("a", "b"), ("a",)], d)
    >>> [s.shape for s in start], float(start[1].sum())
    ([(2, 3), (2,)], 0.0)
    """
    if init is None:
        return None
    index = {frozenset(c): c for c in cliques}
    given = {}
    for key, values in init.items():
        key = (key,) if isinstance(key, str) else tuple(key)
        c = index.get(frozenset(key))
        if c is None:
            raise ValueError(f"init has a potential for {key}, which is not a clique of the model ({cliques})")
        values = np.asarray(values, dtype=float)
        if values.shape != domain.shape(key) or not np.all(np.isfinite(values)):
            raise ValueError(
                f"init[{key}] must be a finite array of shape {domain.shape(key)} (the states of {key}), "
                f"got shape {values.shape}"
            )
        given[frozenset(key)] = np.transpose(values, [key.index(a) for a in c])
    return [given.get(frozenset(c), np.zeros(domain.shape(c))) for c in cliques]
