"""The fitted estimator behind a saved synthesizer's model: its public record, and its rebuild on load (no refit).

``pgmpy_dp.query_interval`` refits the estimator that fitted a model to simulated data sets, so a loaded
model must stand for that estimator again. A PrivBayes model's estimator is fully given by the artifact:
its CPDs, its release and its default settings. A Markov model's estimator also needs the fit's
log-potentials (the stored factors are their normalized exponentials, which do not give them back
exactly) and its settings (AIM's L2 weight comes from its last round's fit): the artifact's ``"fit"``
record holds both, post-processing of the releases like the model. The rebuilt estimator's model is
checked against the stored factors, then the stored model is re-attached to it. MST's merge of rare
states is MST's own rule applied again to the saved 1-way release.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..engine import make_inference
from ..estimators.bayesian import DiscretePrivateMLE
from ..estimators.evidence import pooled_n_records, released_domain
from ..estimators.fitted import estimator_of, remember_fit
from ..estimators.markov import PrivateMarkovEstimator, fitted_network
from ..estimators.markov_fit import FitSettings
from .compression import Compression, expanded_from
from .marginals import clique_network

__all__ = ["fit_record", "restore_fit"]

#: Relative tolerance between the stored factors and those the stored log-potentials give (floating point only).
RTOL = 1e-9
_SETTINGS = [f.name for f in dataclasses.fields(FitSettings)]


def fit_record(model) -> dict | None:
    """The artifact's ``"fit"`` record of a synthesizer's model: the Markov fit's cliques, log-potentials
    (flat, C order) and `FitSettings` (all public: post-processing); None for a Bayesian network, or a
    Markov model with no estimator behind it (loaded from a format-1 file)."""
    if hasattr(model, "get_cpds"):
        return None
    expanded = expanded_from(model)
    try:
        est = estimator_of(model if expanded is None else expanded[0])
    except ValueError:
        return None
    settings = {k: v.item() if isinstance(v, np.generic) else v for k, v in dataclasses.asdict(est.fit_settings_).items()}
    reg = settings["cgm_regularization"]
    settings["cgm_regularization"] = np.asarray(reg, dtype=float).tolist() if np.ndim(reg) else float(reg)
    return {
        "cliques": [list(c) for c in est.cliques_],
        "log_potentials": [np.asarray(t, dtype=float).ravel().tolist() for t in est.log_potentials_],
        "settings": settings,
    }


def restore_fit(synth, record, error) -> None:
    """Attach to ``synth.model_`` the estimator that fitted it, rebuilt from the artifact.

    ``record`` is the ``"fit"`` record (None: a Bayesian network, or a format-1 Markov model, which gets no
    estimator); ``error(field, problem)`` builds the exception for a record that does not fit the artifact.
    """
    model = synth.model_
    if hasattr(model, "get_cpds"):
        _restore_bayesian(synth, model)
    elif record is not None:
        _restore_markov(synth, model, record, error)


def _restore_bayesian(synth, model) -> None:
    est = DiscretePrivateMLE(show_progress=False)  # PrivBayes fits with the default settings
    est.release_ = synth.releases_[0] if len(synth.releases_) == 1 else list(synth.releases_)
    est.state_names_ = {n: list(synth.domain_[n]) for n in model.nodes()}
    est.parameters_ = list(model.get_cpds())
    remember_fit(model, est, est.parameters_)


def _restore_markov(synth, model, record, error) -> None:
    releases, compression = list(synth.releases_), None
    if synth.method_ == "mst":  # MST's rule on its 1-way release: the merged states its fit read
        found = Compression.from_release(releases[0])
        if found.merged:
            compression, releases[0] = found, found.merge_release(releases[0])
    nodes = list(synth.domain_.attrs)
    domain = released_domain(releases, nodes).project(nodes)
    cliques, theta = _cliques_theta(record, domain, error)
    settings = _settings(record, error)
    if np.ndim(settings.cgm_regularization) and np.shape(settings.cgm_regularization) != (len(cliques),):
        raise error("fit.settings.cgm_regularization", f"must be one number, or one per clique ({len(cliques)})")
    network = clique_network(nodes, cliques)
    engine = make_inference(domain, cliques, "junction-tree")
    est = PrivateMarkovEstimator(inference="junction-tree", max_iter=settings.max_iter, show_progress=False)
    est.releases_, est.cliques_, est.tied_, est.log_potentials_ = releases, cliques, None, theta
    est.n_records_, est.domain_, est.inference_, est.fit_settings_ = pooled_n_records(releases), domain, "junction-tree", settings
    fitted = fitted_network(network, domain, cliques, theta, engine)
    expected = fitted if compression is None else compression.expand(fitted)
    stored = list(model.get_factors())
    rebuilt = list(expected.get_factors())
    if len(stored) != len(rebuilt) or not all(
        list(s.variables) == list(r.variables) and np.allclose(s.values, r.values, rtol=RTOL, atol=0.0)
        for s, r in zip(stored, rebuilt)
    ):
        raise error("fit.log_potentials", "do not give the model's factors; the file was edited or mixes two fits")
    if compression is None:
        est.model_ = model  # the stored parameters, re-attached
    else:
        est.model_ = fitted
        compression.attach(model, fitted)
    remember_fit(est.model_, est, est.model_.get_factors())


def _cliques_theta(record, domain, error) -> tuple[list, list]:
    cliques, values = record.get("cliques"), record.get("log_potentials")
    if not isinstance(cliques, list) or not cliques or any(
        not isinstance(c, list) or not c or len(set(map(str, c))) != len(c) or any(a not in domain for a in c)
        for c in cliques
    ):
        raise error("fit.cliques", "must be a non-empty list of cliques, each of distinct schema attributes")
    cliques = [tuple(c) for c in cliques]
    if not isinstance(values, list) or len(values) != len(cliques):
        raise error("fit.log_potentials", f"must hold one list per clique ({len(cliques)})")
    theta = []
    for i, (c, v) in enumerate(zip(cliques, values)):
        shape = domain.shape(list(c))
        try:
            t = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            t = None
        if t is None or t.shape != (math.prod(shape),) or not np.all(np.isfinite(t)):
            raise error(f"fit.log_potentials[{i}]", f"must be {math.prod(shape)} finite numbers (the shape of {list(c)})")
        theta.append(t.reshape(shape))
    return cliques, theta


def _settings(record, error) -> FitSettings:
    given = record.get("settings")
    if not isinstance(given, dict) or sorted(given) != sorted(_SETTINGS):
        raise error("fit.settings", f"must hold exactly the fit's settings {_SETTINGS}")
    given = dict(given)
    if given["method"] not in ("cgm-em", "naive-mle") or given["warm_start"] not in (None, "reconciled", "noisy"):
        raise error("fit.settings", f"names an unknown method or warm start: {given['method']!r}, {given['warm_start']!r}")
    for k in ("max_iter", "e_step_iter") + (("m_step_iter",) if given["m_step_iter"] is not None else ()):
        if isinstance(given[k], bool) or not isinstance(given[k], int) or given[k] < 0:
            raise error(f"fit.settings.{k}", f"must be a non-negative integer, got {given[k]!r}")
    for k in ("tol", "naive_tol", "naive_regularization", "cgm_regularization"):
        v = np.asarray(given[k], dtype=object)
        if v.dtype == object and not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v.ravel()):
            raise error(f"fit.settings.{k}", f"must be non-negative numbers, got {given[k]!r}")
        if not np.all(np.isfinite(v.astype(float))) or np.any(v.astype(float) < 0):
            raise error(f"fit.settings.{k}", f"must be finite non-negative numbers, got {given[k]!r}")
    if isinstance(given["cgm_regularization"], list):  # one weight per clique
        given["cgm_regularization"] = np.asarray(given["cgm_regularization"], dtype=float)
    return FitSettings(**given)
