"""``query_interval``: a query answer of a fitted private model with a parametric-bootstrap band per state."""

from __future__ import annotations

import numbers
import weakref
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..engine import JunctionTree, make_inference
from ..engine.factor import log_marginal
from ..privacy.random_state import check_random_state
from ..tables.intervals import check_level
from .bands import normal_band, response_factor
from .simulate import FitView, check_n_jobs, fit_view, refits, response_refits
from .source import source_of
from .measured import measured_answer, measured_band
from .support import support, warn_unsupported

INTERVALS = ("response", "normal")


def query_interval(
    estimator,
    variables,
    evidence: Mapping[str, object] | None = None,
    level: float = 0.95,
    n_samples: int = 30,
    random_state=None,
    interval: str = "response",
    show_progress: bool = True,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """``P(variables | evidence)`` from a fitted private model, with a bootstrap interval per state.

    The fitted model plays the truth: ``n_samples`` data sets are drawn from it, their tables
    given fresh noise of the fit's mechanisms and refitted. Post-processing only: no budget is
    spent. See docs/intervals.md.

    Parameters
    ----------
    estimator : PrivateMarkovEstimator, DiscretePrivateMLE, PrivateSynthesizer or pgmpy model
        A fitted estimator or synthesizer, or the model it fitted (``est.model_``, ``synth.model_``, or what
        ``model.fit(df, estimator=est)`` returned); an MST model with merged states answers in the declared ones.
    variables : str or list of str
        Query variables. With loopy inference they must lie together in one clique of the model.
    evidence : dict, optional
        Observed states ``{variable: state}``.
    level : float
        Wanted coverage of each state's interval, strictly between 0 and 1.
    n_samples : int
        Refits (at least 2); a few dozen suffice.
    random_state : int or numpy.random.Generator, optional
        Seed of the simulation (public post-processing: seeding it is harmless).
    interval : {"response", "normal"}
        ``"normal"``: [`normal_band`][pgmpy_dp.uncertainty.bands.normal_band]; ``"response"`` (default): that
        band widened by [`response_factor`][pgmpy_dp.uncertainty.bands.response_factor] (twice the cost).
    show_progress : bool
        A progress bar over the refits.
    n_jobs : int
        Worker processes for the refits (``-1``: one per CPU); the bands do not depend on it. Loopy fits need 1.

    Returns
    -------
    pandas.DataFrame
        One row per joint state of ``variables`` (a MultiIndex for several), columns ``estimate``,
        ``lower``, ``upper`` and ``supported`` (whether one released table measured the query and evidence
        variables together; if not, one ``UnsupportedAnswerWarning``). A supported answer's band also covers
        the answer its supporting tables measured directly. ``frame.attrs`` holds ``level``, ``n_samples``,
        ``interval``, ``method``, ``bootstrap`` (the refits' answers), ``model_band`` (the bootstrap band
        alone), ``supported_by`` (the supporting table's attributes, or None), ``needs`` (the marginal that
        would support the answer) and, for ``"response"``, ``response`` (``factor``, ``slope``).
        A fit's refits are kept for later queries with the same ``n_samples`` and integer (or no) seed.

    Examples
    --------
    >>> import pandas as pd
    >>> import pgmpy_dp
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> df = pd.DataFrame({"a": [0, 0, 1, 1] * 500, "b": [0, 1, 1, 1] * 500})
    >>> est = pgmpy_dp.PrivateMarkovEstimator(random_state=0, show_progress=False)
    >>> _ = est.fit(DiscreteMarkovNetwork([("a", "b")]), df, epsilon=1.0, domain={"a": [0, 1], "b": [0, 1]})
    >>> iv = pgmpy_dp.query_interval(est, "b", evidence={"a": 0}, n_samples=10, random_state=0)
    >>> bool(((iv.lower <= iv.estimate) & (iv.estimate <= iv.upper)).all()), iv.attrs["interval"]
    (True, 'response')
    """
    level = check_level(level)
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {INTERVALS}, got {interval!r}")
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2 (bootstrap refits), got {n_samples!r}")
    n_jobs = check_n_jobs(n_jobs)
    source = source_of(estimator)
    estimator = source.estimator
    view = fit_view(estimator)
    variables = [variables] if isinstance(variables, str) else list(variables)
    evidence = dict(evidence or {})
    domain = source.domain(view.domain)
    _check_query(domain, variables, evidence)
    if n_jobs != 1 and view.inference != "junction-tree":
        raise ValueError(
            "n_jobs > 1 needs junction-tree inference: with inference='loopy' the refits run one after the "
            "other on one engine, whose messages carry over from call to call; leave n_jobs=1"
        )
    # a pooled table sums several attribute tuples' counts: it measures none of them on its own
    measured = [t.attrs for _, tables, _, _ in view.releases for t in tables if t.members is None]
    held = support(measured, variables, evidence)
    answer = _answerer(view, variables, source.evidence(evidence))
    estimate = answer(view.theta)
    if not np.all(np.isfinite(estimate)):
        raise ValueError(f"the fitted model gives the evidence {evidence} probability zero; no answer to bound")
    warn_unsupported(held, measured)
    first = _kept(estimator, view, ("refits", n_samples), random_state,
                  lambda: refits(view, n_samples, random_state, n_jobs=n_jobs, show=show_progress))
    answers = np.array([answer(theta) for theta in first])
    widen, report = 1.0, None
    if interval == "response":
        second = _kept(estimator, view, ("response", n_samples), random_state,
                       lambda: response_refits(view, first, _common_seed(random_state), n_jobs, show_progress))
        factor, slope = response_factor(answers, [answer(theta) for theta in second])
        widen, report = max(factor, 1.0), {"factor": factor, "slope": slope}
    lower, upper = normal_band(estimate, answers, level, widen)
    model_band = (source.answers(variables, lower), source.answers(variables, upper))
    if held.supported:  # the band also covers the answer the supporting tables measured directly
        tables = [t for _, ts, _, _ in view.releases for t in ts]
        direct, sd = measured_answer(tables, view.domain, variables, source.evidence(evidence))
        low, high = measured_band(direct, sd, level)
        lower, upper = np.minimum(lower, low), np.maximum(upper, high)
    estimate, lower, upper, answers = (source.answers(variables, a) for a in (estimate, lower, upper, answers))
    states = [list(domain[v]) for v in variables]
    if len(variables) == 1:
        index = pd.Index(states[0], name=variables[0])
    else:
        index = pd.MultiIndex.from_product(states, names=variables)
    frame = pd.DataFrame({"estimate": estimate, "lower": lower, "upper": upper, "supported": held.supported},
                         index=index)
    frame.attrs.update(level=level, n_samples=len(answers), interval=interval, method="parametric bootstrap",
                       bootstrap=answers, supported_by=held.marginal, needs=held.needed,
                       model_band=model_band)
    if report is not None:
        frame.attrs["response"] = report
    return frame


def _check_query(domain, variables, evidence) -> None:
    if not variables:
        raise ValueError("variables must name at least one model variable")
    for v in list(variables) + list(evidence):
        if not isinstance(v, str) or v not in domain:
            raise ValueError(f"variable {v!r} is not in the model (variables: {list(domain.attrs)})")
    if len(set(variables)) != len(variables):
        raise ValueError(f"variables {variables} name a variable twice")
    both = set(variables) & set(evidence)
    if both:
        raise ValueError(f"variable(s) {sorted(both)} are both queried and observed; drop them from one")
    for v, state in evidence.items():
        if state not in list(domain[v]):
            raise ValueError(f"evidence {v}={state!r} is not a state of {v}; states: {list(domain[v])}")


def _answerer(view: FitView, variables: list, evidence: dict):
    """A function ``theta -> P(variables | evidence)``, flat in the order of ``variables``, on the engine.

    Evidence is clamped by a unary log-potential per observed variable; with a junction tree,
    variables no clique holds together get one more, flat, clique.
    """
    domain, scopes = view.domain, list(view.cliques)
    wanted = set(variables)
    extra = []
    if view.inference == "junction-tree" and not any(wanted <= set(c) for c in scopes):
        extra = [tuple(variables)]
    padding = [np.zeros(domain.shape(c)) for c in extra]
    for v, state in evidence.items():
        clamp = np.full(domain.size(v), -np.inf)
        clamp[list(domain[v]).index(state)] = 0.0
        padding.append(clamp)
    engine = make_inference(domain, scopes + extra + [(v,) for v in evidence], view.inference)
    host = None
    if not isinstance(engine, JunctionTree):
        host = next((i for i, c in enumerate(engine.cliques) if wanted <= set(c)), None)
        if host is None:
            raise ValueError(
                f"variables {variables} lie in no model clique {scopes} (loopy inference); ask one variable at a time"
            )

    def answer(theta) -> np.ndarray:
        full = list(theta) + padding
        with np.errstate(invalid="ignore", divide="ignore"):
            if host is None:
                p = engine.marginal(engine.calibrate(full), variables)
            else:
                marginals, _ = engine.marginals(full)
                p = np.exp(log_marginal(np.log(marginals[host]), engine.cliques[host], variables))
            total = p.sum()
            return (p / total if total > 0 else np.full(p.shape, np.nan)).ravel()

    return answer


def _common_seed(random_state) -> int:
    """One integer seed for every second-level refit of the response band, from ``random_state``."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(np.random.default_rng([int(random_state), 15]).integers(2**63))
    return int((check_random_state(random_state) or np.random.default_rng()).integers(2**63))


#: refits kept per fitted estimator: ``id -> (weak reference, the fit's parameters, {key: refits})``.
#: Kept here rather than on the estimator, whose state stays its fitted attributes.
_KEPT: dict[int, tuple] = {}


def _kept(estimator, view: FitView, key: tuple, random_state, make):
    """``make()``, kept for later queries of the same fit with the same key and seed.

    The refits depend on the fit, ``n_samples`` and the seed, never on the query; a ``Generator``
    seed is stateful, so its refits are never kept.
    """
    if random_state is not None and not isinstance(random_state, numbers.Integral):
        return make()
    key = (*key, None if random_state is None else int(random_state))
    ident = id(estimator)
    entry = _KEPT.get(ident)
    if entry is None or entry[0]() is not estimator or entry[1] is not view.fitted:
        ref = weakref.ref(estimator, lambda _: _KEPT.pop(ident, None))
        entry = _KEPT[ident] = (ref, view.fitted, {})
    if key not in entry[2]:
        entry[2][key] = make()
    return entry[2][key]
