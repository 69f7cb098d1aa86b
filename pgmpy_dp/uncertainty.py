"""Intervals on the answers of fitted private models: a parametric bootstrap of the measurements.

A private model is a function of noisy tables ``y = x + Z`` whose
noise law is public (mechanism and scale per table). The spread of a query
answer that comes from the noise can therefore be simulated without touching
the data: take the fitted model as the truth, draw ``N`` records from it and
count the released tables (``sampling=True``, so the bands also cover the
sampling of the records from their population; ``sampling=False`` keeps the
fitted expected counts and simulates the noise only), add fresh noise of each
table's own mechanism and scale, run the *same* estimator on the simulated
tables and ask the query of every refit. For a Markov network the refit is the
estimator's two stages on the engine's arrays (naive MLE warm-started from the
fit, then CGM-EM); a ``DiscretePrivateMLE`` is re-run as a whole on the sampled
records. The spread of those answers estimates the sampling distribution of the
fitted answer (Williams and McSherry 2010 treat noisy measurements as evidence
about the latent counts in the same way; we use the frequentist bootstrap
rather than a Bayesian posterior because the estimators are regularised point
fits, not samplers, and refitting reuses their code).

We chose the bootstrap over a Laplace approximation of the EM objective
because the answers of interest are non-linear functions (conditionals) of
the potentials and the noisy-count likelihood is not smooth at the mode
(Laplace noise); the bootstrap needs neither a Hessian nor smoothness.

Everything here is post-processing of the releases: no budget is spent, and
the seeded random numbers are public simulation, not privacy noise.

Calibration: the fits are regularised (shrunk towards the uniform model), so
the fitted answer is biased, and the estimator repeats that bias on its own
simulated data: the refits are centred on a twice-shrunk answer. A plain
percentile band therefore sits on the wrong side of the estimate and
under-covers exactly where regularisation matters (small N, small epsilon,
rare evidence). The default band (``interval="normal"``) is derived from the
pivot ``(p_hat - b - p) / s ~ N(0, 1)`` on the probability scale, where ``b``
and ``s`` are the estimator's bias and spread at the truth ``p``; the
bootstrap estimates them at the fit (``b_hat`` = mean shift of the refits,
``s_hat`` their standard deviation), giving ``p_hat - b_hat ± t s_hat sqrt(1 + 1/B)``
clipped to ``[0, 1]`` for ``B = n_samples`` refits, with Student's ``t`` for ``B - 1``
degrees of freedom (``s_hat`` is estimated) and ``sqrt(1 + 1/B)`` for the Monte Carlo
error of ``b_hat``, a mean of ``B`` refits. The probability scale is where that pivot is close to
free of ``p``: the shrinkage comes from the noise (a cell's count is pulled up
by about the noise scale whatever its true count) and the prior, both of which
add mass to a cell rather than multiply it, so the bias is about the same at
``p_hat`` as at ``p`` on the probability scale, while on the log-odds scale it
grows like ``1 / p`` and the bias measured at the (shrunk-up) ``p_hat``
under-corrects small probabilities. ``interval="logit"`` (the same band on
the log-odds scale, the default before; it keeps the band strictly inside
``(0, 1)``) missed true conditionals below 0.02 in about half the cases at
N = 1000; the probability-scale band covers them (docs/intervals.md). A normal
band needs only a mean and a spread, which settle with a few dozen refits where
2.5% quantiles need hundreds. ``"arcsine"`` (the same band on
``arcsin(sqrt(p))``), ``"bc"`` (Efron's bias-corrected percentile),
``"percentile"`` and ``"basic"`` remain available; benchmarks/coverage.py
measures all six from the same refits (docs/intervals.md).

Where the default falls short (benchmarks/interval_spread.py, docs/intervals.md,
"Diagnosis"): the refit procedure reproduces the estimator (the full estimator
re-run on data drawn from the fit spreads as the refits do), and averaged over
fits the refits spread as the estimator does at the truth. The misses are bands
clipped at 0 or 1 after a fit far from the truth: refits drawn from a fit that
came out low spread less than the estimator does at the (larger) truth, the
Wald-interval failure of a proportion. Neither the variance-stabilising
``"arcsine"`` scale, nor refits drawn from a less-shrunk model
(``generator="prior-free"``: CGM-EM's prior is weak, so this model is almost the
fit), nor refits that run the estimator's own ``fit`` (``refit="estimator"``: its
cold naive start and data-derived tolerance; bands 1-5% wider) closed it; all
three are kept as options with their measurements. Nor did ``"score"`` (the
spread evaluated at the band's ends, binomial records plus a noise floor): on
fresh runs under CGM-EM's new defaults it covered clipped bands 2.5 points more
and conditionals with a true answer <= 0.02 2.5 points less, and failed its
pre-stated adoption rule (benchmarks/rules/issue14_band.md, docs/intervals.md).
``"inverted"`` (Markov networks) keeps the normal band except where it is clipped at
0 or 1, and finds that band's far end by test inversion: refits drawn from the fit
tilted to the candidate answer, with the fit's own seed (``query_interval``'s Notes;
measured against its pre-stated rule, benchmarks/rules/issue14_inverted.md).
``"ratio"`` (Fieller's band for ``P(x, e) / P(e)``, from the refits' numerators and
denominators) addresses what the normal band's conditional coverage falls with: the
records behind the evidence (``band_limits``' Notes; benchmarks/rules/issue14_ratio.md).
``"calibrated"`` asks the bootstrap itself how short the normal band is: some of the fit's
refits play the truth of a bootstrap world and are refitted in turn, and the band is widened by
how far, in those worlds' band widths, the fit's answer falls (``calibration_factor``; Hall's
iterated bootstrap); it costs a second level of refits per fit (benchmarks/rules/issue14_calibrated.md).
``"response"`` measures how the estimator's answer follows the truth: one refit drawn from each of the
fit's refits, all with one seed, gives the slope ``k`` of the answer on its generator's answer; a
shrunk estimator has ``k < 1``, and the normal band's bias correction, itself a function of the fit,
then spreads ``2 - k`` times as much as the fit (``response_factor``); it costs one more refit per refit.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import numbers
import os
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import special

from ._progress import progress
from .engine import ConvergenceWarning, JunctionTree, cgm_em, fit_log_potentials, make_inference
from .engine.factor import log_marginal
from .estimators.bayesian import DiscretePrivateMLE
from .estimators.evidence import pooled_n_records
from .estimators.markov import PrivateMarkovEstimator, _measurements, _naive_targets, _start_targets
from .privacy.domain import Domain
from .privacy.mechanisms import GAUSSIAN_MECHANISM, discrete_gaussian_noise, discrete_laplace_noise
from .privacy.random_state import check_random_state
from .tables.counting import contingency_table
from .tables.intervals import check_level
from .tables.release import MarginalRelease

__all__ = [
    "band_limits", "bootstrap_log_potentials", "calibration_factor", "prior_free_log_potentials", "query_interval",
    "response_factor",
]

_INTERVALS = ("normal", "ratio", "score", "logit", "arcsine", "bc", "percentile", "basic", "calibrated", "response")
#: the bands that are the normal band widened by a factor (``band_limits``' ``calibration``)
_WIDENED = ("calibrated", "response")
_GENERATORS = ("fit", "prior-free")


def query_interval(
    estimator,
    variables,
    evidence: Mapping[str, object] | None = None,
    level: float = 0.95,
    n_samples: int = 30,
    random_state=None,
    interval: str = "normal",
    sampling: bool = True,
    refits: list | None = None,
    show_progress: bool = True,
    generator: str = "fit",
    refit: str = "warm",
    n_jobs: int = 1,
    calibration: tuple[int, int] = (15, 15),
) -> pd.DataFrame:
    """``P(variables | evidence)`` from a fitted private model, with a bootstrap interval per state.

    Parameters
    ----------
    estimator : PrivateMarkovEstimator or DiscretePrivateMLE
        A fitted estimator. A ``PrivateMarkovEstimator`` keeps the releases,
        cliques and fitted log-potentials, and refits run on the engine's arrays.
        A ``DiscretePrivateMLE`` is re-run as a whole on records forward-sampled
        from its fitted network (same parameters, its own seeded noise, no
        budget object); if it was fitted from releases (``fit_release``), the same
        released tables are counted from those records, given fresh noise of their
        own mechanism and scale and fitted again. It needs ``sampling=True`` and no ``refits``.
    variables : str or list of str
        Query variables. For a Markov network they must lie together in one clique
        of the model's junction tree (with loopy inference: in one model clique);
        they need not have been measured together. For a Bayesian network any
        variables. Evidence variables can be anywhere.
    evidence : dict, optional
        Observed states ``{variable: state}``.
    level : float
        Wanted coverage of each per-state interval, strictly between 0 and 1.
    n_samples : int
        Bootstrap refits (at least 2). The default ``"normal"`` band needs only the
        refits' mean and spread (its quantile is Student's t with ``n_samples - 1``
        degrees of freedom, which accounts for the spread being estimated, times
        ``sqrt(1 + 1/n_samples)`` for the bias being a mean of the refits), so a few
        dozen suffice; quantile bands (``"percentile"``, ``"basic"``, ``"bc"``) want 100
        or more for 95%.
    random_state : int or numpy.random.Generator, optional
        Seed of the simulation (public post-processing: seeding it is harmless).
    interval : {"normal", "calibrated", "response", "ratio", "score", "logit", "arcsine", "bc", "percentile", "basic", "inverted"}
        How the refits' answers become a band (see [`band_limits`][pgmpy_dp.uncertainty.band_limits]).
        ``"normal"`` (default): bias-corrected normal band on the probability scale; it
        removes the shrinkage bias the regularised estimator repeats on its own
        simulated data, which the plain ``"percentile"`` band doubles (centred on a
        twice-shrunk answer). ``"ratio"``: for a conditional, Fieller's band for
        ``P(x, e) / P(e)`` from the refits' numerators and denominators, for answers with
        few records behind the evidence (the normal band for a marginal). ``"score"``: the same centre, with the spread evaluated at
        each end of the band (binomial record variance plus a constant noise floor, the
        records being ``N`` times the fitted probability of the evidence) instead of at the
        fit, for fits far from the truth (docs/intervals.md measures it). ``"logit"``: the same on the log-odds scale (strictly
        inside ``(0, 1)``, but it under-corrects the bias of small probabilities). ``"arcsine"``:
        the same on ``arcsin(sqrt(p))``, where a proportion's sampling spread does not depend on
        ``p`` (docs/intervals.md compares it). ``"bc"``: Efron's bias-corrected percentile band.
        ``"percentile"``: the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of the
        refits' answers. ``"basic"``: those quantiles reflected about the estimate.
        ``"inverted"`` (Markov networks): the normal band, except that where it is clipped at 0
        (or 1) its far end is found by inverting the test at the candidate end (see Notes); it
        costs up to 2 x ``n_samples`` more refits per clipped state. ``"calibrated"``: the normal band
        widened by a second bootstrap level (see ``calibration`` and
        [`calibration_factor`][pgmpy_dp.uncertainty.calibration_factor]), for fits far from the truth
        (small N); it costs ``worlds x refits`` more refits per fit (docs/intervals.md measures it).
        ``"response"``: the normal band widened by ``sqrt((2 - k)^2 + 1/B) / sqrt(1 + 1/B)``, ``k`` the
        slope of the estimator's answer on the truth's, measured by one more refit per refit under common
        random numbers ([`response_factor`][pgmpy_dp.uncertainty.response_factor]); ``B = n_samples`` more
        refits per fit, kept with its refits (their fits run in ``n_jobs`` workers too). It lifts short
        conditionals (over 100 fresh repetitions, cov14ab: alarm as a Bayesian network 0.911 -> 0.949, er-8 at
        N = 1,000 0.899 -> 0.934, chain-5 0.918 -> 0.937), with every (model, kind) pair measured inside 93-97%
        where the normal band had 8 of 12; its per-query slope is noisy, so where the estimator does not shrink
        it still widens a little (asia's conditionals 0.953 -> 0.978 on cov14aa). Not the default until the
        issue's author decides (docs/intervals.md, benchmarks/rules/issue14_target_reading.md).
    sampling : bool
        ``True`` (default): each refit's tables are counted from ``N`` records
        drawn from the fitted model (``N`` = the record count the fit used)
        before the noise is added, so the bands
        cover the answer of the model that generated the data (sampling plus
        privacy noise). ``False``: noise only, around the fitted counts: the bands
        then describe the answer on the private data set itself (its true counts).
    refits : list, optional
        Bootstrap fits from [`bootstrap_log_potentials`][pgmpy_dp.uncertainty.bootstrap_log_potentials] to reuse: several
        queries of one model can share one set of refits (then ``n_samples``,
        ``random_state`` and ``sampling`` are those of that call). Without it, the
        refits are kept on the fitted estimator and reused by later calls with the
        same ``n_samples``, ``sampling`` and an integer (or ``None``) ``random_state``,
        so only the first query of a fitted model pays for them (a ``Generator``
        seed always draws fresh refits; refitting the estimator drops them).
    show_progress : bool
        A progress bar over the refits, drawn once they take more than 2 seconds.
    generator : {"fit", "prior-free"}
        The model the refits' records are drawn from (Markov networks; see
        [`bootstrap_log_potentials`][pgmpy_dp.uncertainty.bootstrap_log_potentials]).
        ``"prior-free"`` is an option measured in docs/intervals.md, not the default.
    refit : {"warm", "estimator"}
        How each Markov-network refit is fitted (see ``bootstrap_log_potentials``):
        ``"estimator"`` runs the estimator's own ``fit``; an option measured in docs/intervals.md.
    n_jobs : int
        Worker processes for the refits' fits (``-1``: one per CPU). The simulated tables are
        drawn in this process from one random stream and only the fits run in the workers, so
        the bands are the same, bit for bit, for every ``n_jobs``; the refits kept for later
        queries are shared across ``n_jobs`` too. Worth it for the first query of a fit (each
        refit is a whole fit) and for ``"inverted"``'s tilted refits. A Markov network fitted with
        ``inference="loopy"`` needs 1: its refits run one after the other on one engine, whose
        messages carry over from call to call.
    calibration : (int, int)
        ``interval="calibrated"`` only: ``(worlds, refits)``. The first ``worlds`` of the fit's
        ``n_samples`` refits each play the truth of a bootstrap world and are refitted ``refits`` times
        (simulated from that refit, with the estimator's settings); how far the fit's answer falls from
        each world's normal band sets the widening (``calibration_factor``). Kept with the fit's refits,
        so only the first calibrated query of a fit pays for them. Default ``(15, 15)``: 225 more refits.

    Returns
    -------
    pandas.DataFrame
        One row per joint state of ``variables`` (a MultiIndex for several), columns
        ``estimate`` (the fitted model's answer), ``lower``, ``upper``.
        ``frame.attrs`` holds ``level``, ``n_samples``, ``interval``, ``method``,
        ``bootstrap``: the refits' answers, shape ``(n_samples, number of states)``, and
        ``n_records``: the records behind the answer (``band_limits``'s argument of that name),
        ``evidence_probability`` and ``evidence_bootstrap``: ``P(evidence)`` under the fit and under each
        refit (with ``interval="ratio"`` and evidence; else ``None``), and
        with ``interval="inverted"`` ``inverted``: the states whose upper (lower) end was inverted, those
        left normal, the tilted refits drawn (``tilted_refits``) and each end's candidates (``steps``);
        with ``interval="calibrated"`` ``calibration``: the factor and the ``worlds`` and ``refits`` it rests on;
        with ``interval="response"`` ``response``: the ``factor`` and the ``slope`` it comes from.

    Notes
    -----
    The ``"inverted"`` band. The normal band takes the estimator's bias and spread at the truth
    to be those at the fit. For a fit far below the truth they are not: refits drawn from a fit
    near 0 spread less than the estimator does at a larger truth, and a band clipped at 0 is
    short on the truth's side (docs/intervals.md, "Diagnosis", finding 3). Test inversion asks
    instead, per candidate end ``p0``: if the true answer were ``p0``, would the estimator come out
    at or below the observed ``p_hat`` with probability at least ``alpha/2 = (1 - level)/2``? The
    upper end ``U`` is the largest ``p0`` so accepted; a band ending at 1 gets its lower end ``L``,
    the smallest ``p0`` whose estimator comes out at or above ``p_hat`` with probability
    ``alpha/2``. Other states keep the normal band.

    The model at ``p0`` is the fit tilted on the query's event: ``eta`` is added to the
    log-potential of the cells of one clique that hold the queried state and the evidence
    (``x = s, y = e``; ``x = s`` for a marginal). That multiplies the mass of every configuration
    in the event by ``e^eta`` and nothing else, so the answer ``r`` becomes
    ``r e^eta / (r e^eta + 1 - r)`` and ``eta = logit(p0) - logit(r)`` exactly (with loopy inference a
    root-finder corrects it); ``-log(r e^eta + 1 - r)`` added on the evidence's cells keeps
    ``P(evidence)``, so the records behind the answer, as fitted (and makes the tilts of the two
    states of a binary query one family of models). If no clique holds the query and evidence variables together, that
    state's band stays the normal one (``attrs["inverted"]["left_normal"]``). At each ``p0``,
    ``n_samples`` refits are drawn from the tilted model with the same seed as the fit's own refits
    (common random numbers: the acceptance changes smoothly with ``p0``, and at ``p0 = p_hat`` it is
    the fit's refits, free). ``p0`` is accepted if ``p_hat >= mean - t sd`` of the refits' answers
    (``mean + t sd >= p_hat`` for a lower end), ``t`` the normal band's multiplier: a normal
    approximation rather than the refits' 2.5% quantile, which a few dozen refits cannot place
    (docs/intervals.md, "Cost"), and the rule under which the inverted end equals the normal one
    when bias and spread do not depend on the truth. The end is searched outwards from the normal
    end: extrapolation through the accepted points (a doubled step where the acceptance is flat:
    near 0 the estimator's law barely moves with the truth), regula falsi once a rejected point
    brackets it, 2 tilted refit sets per end, the end being the next candidate. Cost: the first
    query of a fit pays for the fit's ``n_samples`` refits as every rule does; each clipped state
    adds up to ``2 x n_samples`` refits (nothing for a state whose band is not clipped).

    Examples
    --------
    >>> import pgmpy_dp
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> rng = np.random.default_rng(0)
    >>> a = rng.random(2000) < 0.3
    >>> b = np.where(a, rng.random(2000) < 0.8, rng.random(2000) < 0.2)
    >>> df = pd.DataFrame({"a": a, "b": b})
    >>> rel = df.dp.release([("a", "b")], epsilon=1.0, random_state=0, domain={"a": [False, True], "b": [False, True]})
    >>> est = pgmpy_dp.PrivateMarkovEstimator(random_state=0, show_progress=False)
    >>> _ = est.fit(DiscreteMarkovNetwork([("a", "b")]), rel)
    >>> iv = query_interval(est, "b", evidence={"a": True}, n_samples=20, random_state=0)
    >>> list(iv.columns), bool((iv.lower <= iv.estimate).all() and (iv.estimate <= iv.upper).all())
    (['estimate', 'lower', 'upper'], True)

    A rare state whose normal band is clipped at 0 (and, the query being binary, the other state's at 1):
    the inverted band moves those two far ends and draws 2 x 10 tilted refits for each.

    >>> rare = pd.DataFrame({"a": a, "b": np.where(a, rng.random(2000) < 0.02, rng.random(2000) < 0.5)})
    >>> rel = rare.dp.release([("a", "b")], epsilon=0.3, random_state=1, domain={"a": [False, True], "b": [False, True]})
    >>> est = pgmpy_dp.PrivateMarkovEstimator(random_state=0, show_progress=False)
    >>> _ = est.fit(DiscreteMarkovNetwork([("a", "b")]), rel)
    >>> normal = query_interval(est, "b", evidence={"a": True}, n_samples=10, random_state=0)
    >>> inv = query_interval(est, "b", evidence={"a": True}, n_samples=10, random_state=0, interval="inverted")
    >>> rep = inv.attrs["inverted"]
    >>> float(normal.lower[True]), float(normal.upper[False]), rep["upper_inverted"], rep["lower_inverted"], rep["tilted_refits"]
    (0.0, 1.0, [1], [0], 40)
    >>> print(pd.concat({"normal": normal, "inverted": inv}, axis=1).round(3).to_string())
            normal               inverted              
          estimate  lower  upper estimate  lower  upper
    b                                                  
    False    0.984  0.971  1.000    0.984  0.958  1.000
    True     0.016  0.000  0.029    0.016  0.000  0.042
    """
    level = check_level(level)
    if generator not in _GENERATORS:
        raise ValueError(f"generator must be one of {_GENERATORS}, got {generator!r}")
    if isinstance(estimator, DiscretePrivateMLE):
        if interval == "inverted":
            raise NotImplementedError(
                "interval='inverted' is implemented for PrivateMarkovEstimator fits only (it tilts the fitted "
                "log-potentials); for a DiscretePrivateMLE use interval='normal'"
            )
        if generator != "fit" or refit != "warm":
            raise ValueError(
                "generator= and refit= are only supported for PrivateMarkovEstimator; leave them at 'fit' and 'warm'"
            )
        return _bayesian_interval(
            estimator, variables, evidence, level, n_samples, random_state, interval, sampling, refits, show_progress,
            _check_n_jobs(n_jobs), calibration,
        )
    n_jobs = _check_n_jobs(n_jobs)
    _check_estimator(estimator)
    domain, cliques = estimator.domain_, list(estimator.cliques_)
    variables = [variables] if isinstance(variables, str) else list(variables)
    evidence = dict(evidence or {})
    _check_query(domain, variables, evidence)
    if interval not in _INTERVALS + ("inverted",):
        raise ValueError(f"interval must be one of {_INTERVALS + ('inverted',)}, got {interval!r}")
    if refits is not None and len(refits) < 2:
        raise ValueError(f"refits must hold at least 2 bootstrap fits, got {len(refits)}")
    if refits is None and (isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 2):
        raise ValueError(f"n_samples must be an integer >= 2 (bootstrap refits), got {n_samples!r}")
    if interval == "calibrated":
        calibration = _check_calibration(calibration, n_samples if refits is None else len(refits))
    seed = random_state
    if interval == "inverted":
        if refits is not None:
            raise ValueError(
                "interval='inverted' draws its own refits (the fit's and the tilted models', with one seed for "
                "common random numbers); leave refits=None and pass n_samples= and random_state= instead"
            )
        if generator != "fit":
            raise ValueError("interval='inverted' draws refits from tilts of the fit; leave generator='fit'")
        if not isinstance(random_state, numbers.Integral) or isinstance(random_state, bool):
            # common random numbers need one integer seed for every model the refits are drawn from
            seed = int((check_random_state(random_state) or np.random.default_rng()).integers(2**31))

    answer = _answerer(domain, cliques, estimator.inference_, variables, evidence)
    estimate = answer([np.asarray(t, dtype=np.float64) for t in estimator.log_potentials_])
    if not np.all(np.isfinite(estimate)):
        raise ValueError(f"the fitted model gives the evidence {evidence} probability zero; no answer to bound")
    if refits is None:
        refits = _cached(
            estimator, "log_potentials_", (n_samples, sampling, generator, refit), seed,
            lambda: bootstrap_log_potentials(
                estimator, n_samples, random_state=seed, sampling=sampling, show_progress=show_progress,
                generator=generator, refit=refit, n_jobs=n_jobs,
            ),
        )
    theta_hat = [np.asarray(t, dtype=np.float64) for t in estimator.log_potentials_]

    def chain(v, ev):  # one-variable answers, chained where P(evidence) cannot be read off the answer's own tree
        return _answerer(domain, cliques, estimator.inference_, [v], ev)

    denominators = None
    if evidence and interval == "ratio":
        # P(evidence) under the fit and each refit, for the "ratio" band (kept in the frame's attrs): one more
        # calibration per refit, so only where the band needs them
        answers, denominators = _answers_and_denominators(answer, [theta_hat, *refits], chain, domain, evidence)
        answers = answers[1:]
    else:
        answers = np.array([answer(theta).ravel() for theta in refits])
    n_samples = len(refits)
    states = {v: list(domain[v]) for v in variables}
    n_records = (
        _n_records(answer, theta_hat, chain, domain, evidence, estimator.n_records_)
        if sampling else np.inf
    )
    ends = None
    if interval == "inverted":
        ends = _inverted_ends(
            estimator, answer, variables, evidence, estimate.ravel(), answers, level, seed, sampling, refit, show_progress,
            n_jobs,
        )
    factor = None
    if interval == "calibrated":
        worlds, inner = calibration
        second = _cached(
            estimator, "log_potentials_", (n_samples, sampling, generator, refit, "calibration", worlds, inner), seed,
            lambda: [
                bootstrap_log_potentials(estimator, inner, random_state=world_seed, sampling=sampling,
                                         show_progress=False, generator=refits[b], refit=refit, n_jobs=n_jobs)
                for b, world_seed in progress(enumerate(_world_seeds(seed, worlds)), show_progress,
                                              desc="calibration worlds", total=worlds)
            ],
        )
        factor = _calibration(estimate, answers, [[answer(t).ravel() for t in w] for w in second], level)
    if interval == "response":
        second = _cached(
            estimator, "log_potentials_", (n_samples, sampling, generator, refit, "response"), seed,
            lambda: _response_refits(
                lambda theta, rng: _simulated_releases(estimator, 1, rng, sampling, theta, refit, n_jobs),
                refits, _common_seed(seed), n_jobs, show_progress,
            ),
        )
        factor = response_factor(answers, [answer(t).ravel() for t in second])
    return _bands(estimate, answers, states, level, interval, n_records, ends, denominators, factor)


def _n_records(answer, theta, make_answer, domain, evidence: dict, n: float) -> float:
    """``n`` times ``P(evidence)``, read off the answer's own junction tree (else chained answers)."""
    p = answer.evidence_probability(theta)
    if p is None:
        return _records_behind(make_answer, theta, domain, evidence, n)
    return max(float(n) * p, 1e-12)


_INVERSION_EVALS = 2  # tilted refit sets per inverted end (a secant step from the fit's own refits)
_INVERSION_XTOL = 0.002  # stop early once a secant step moves the end by less than this


def _inverted_ends(estimator, answer, variables, evidence, estimate, answers, level, seed, sampling, refit, show,
                   n_jobs: int = 1, max_evals: int = _INVERSION_EVALS, xtol: float = _INVERSION_XTOL):
    """The ``"inverted"`` rule: the normal band, with the far end of a band clipped at 0 (or 1) found by test inversion.

    Returns ``(lower, upper, report)``; ``report`` counts the tilted refits, names the states inverted and
    those left normal because no clique of the fit holds the query and evidence variables together, and
    keeps each end's secant roots (``steps``).
    """
    lo, hi = band_limits(estimate, answers, level, "normal")
    lo, hi = lo.copy(), hi.copy()
    b = len(answers)
    t = _band_t(b, (1.0 - level) / 2.0)  # the normal band's multiplier: with flat bias and spread, the same ends
    scope = set(variables) | set(evidence)
    host = next((i for i, c in enumerate(estimator.cliques_) if scope <= set(c)), None)
    report = {"upper_inverted": [], "lower_inverted": [], "left_normal": [], "tilted_refits": 0, "steps": {}}
    clipped = [(j, "upper") for j in np.flatnonzero(lo <= 0.0)] + [(j, "lower") for j in np.flatnonzero(hi >= 1.0)]
    for j, end in clipped:
        j = int(j)
        if host is None:
            report["left_normal"].append(j)
            continue
        test = _TiltTest(estimator, answer, variables, evidence, host, j, end, estimate[j], t, b, seed, sampling, refit,
                         n_jobs)
        # the fit's own refits are the tilt at eta = 0 under the same seed: that point costs nothing
        f0 = _acceptance(answers[:, j], t, test.sign, estimate[j])
        start = hi[j] if end == "upper" else lo[j]
        x, steps = _secant_root(test, float(estimate[j]), f0, float(start), max_evals, xtol, test.sign)
        report["tilted_refits"] += test.refits
        report["steps"][(j, end)] = steps
        if end == "upper":
            hi[j] = x
            report["upper_inverted"].append(j)
        else:
            lo[j] = x
            report["lower_inverted"].append(j)
    return lo, hi, report


class _TiltTest:
    """The acceptance function of one end: ``p0 -> mean + sign t sd - p_hat`` of the refits at the fit tilted to ``p0``.

    Upper end (``sign = -1``): ``p0`` is accepted (value <= 0) while ``p_hat`` is at or above the
    alpha/2 point of the estimator's law at ``p0``; lower end (``sign = +1``): accepted (value >= 0)
    while ``p_hat`` is at or below its 1 - alpha/2 point. Every call draws ``b`` refits with the same
    seed (common random numbers), so the function is smooth in ``p0``.
    """

    def __init__(self, estimator, answer, variables, evidence, host, j, end, p_hat, t, b, seed, sampling, refit,
                 n_jobs=1):
        self.estimator, self.answer, self.host, self.j, self.n_jobs = estimator, answer, host, j, n_jobs
        self.sign = -1.0 if end == "upper" else 1.0
        self.p_hat, self.t, self.b, self.seed, self.sampling, self.refit = float(p_hat), t, b, seed, sampling, refit
        self.theta = [np.asarray(th, dtype=np.float64) for th in estimator.log_potentials_]
        self.mask = _event_mask(estimator.domain_, estimator.cliques_[host], variables, j, evidence)
        self.refits = 0

    def __call__(self, p0: float) -> float:
        theta = _tilted(self.theta, self.host, self.mask, self.answer, self.j, p0)
        fits = bootstrap_log_potentials(
            self.estimator, self.b, random_state=self.seed, sampling=self.sampling, show_progress=False,
            generator=theta, refit=self.refit, n_jobs=self.n_jobs,
        )
        self.refits += self.b
        a = np.array([self.answer(f).ravel()[self.j] for f in fits])
        return _acceptance(a, self.t, self.sign, self.p_hat)


def _acceptance(a: np.ndarray, t: float, sign: float, p_hat: float) -> float:
    """``mean(a) + sign t sd(a) - p_hat``: zero where ``p_hat`` sits at the refits' (normal) alpha/2 point."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.nanmean(a) + sign * t * np.nanstd(a, ddof=1) - p_hat)


def _secant_root(f, x0: float, f0: float, x1: float, max_evals: int, xtol: float, sign: float):
    """Where the acceptance ``f`` changes sign, searched outwards from the fit ``x0`` (``f0`` given) via ``x1``.

    ``accept(x) = sign * f(x) >= 0`` (``sign = -1`` for an upper end, ``+1`` for a lower end): accepted
    at the fit, and ``accept`` falls as the candidate moves out. While every point tried is accepted, the
    next one is the secant extrapolation through the last two accepted points, at most twice the last
    step out (or that doubled step if ``accept`` is not falling: near 0 the estimator's law barely moves
    with the truth, the noise floor); once a rejected point brackets the end, regula falsi.
    ``max_evals`` evaluations of ``f``; the end returned is the next candidate (an interpolation once
    bracketed). Returns the end and the candidates, one per evaluation.
    """
    lim = (1e-6, 1.0 - 1e-6)
    out = 1.0 if sign < 0 else -1.0  # the outward direction
    acc = lambda v: sign * v  # noqa: E731
    inner, inner_prev, outer = (x0, acc(f0)), None, None
    x = float(np.clip(x1, *lim))
    if (x - x0) * out < 1e-4:
        x = float(np.clip(x0 + 0.01 * out, *lim))
    steps = []
    for _ in range(max_evals):
        ax = acc(f(x))
        if ax >= 0:
            inner_prev, inner = inner, (x, ax)
        else:
            outer = (x, ax)
        if outer is not None:  # bracketed: regula falsi between the accepted and the rejected point
            (xi, ai), (xo, ao) = inner, outer
            nxt = xi - ai * (xo - xi) / (ao - ai)
        else:
            (xp, ap), (xi, ai) = inner_prev, inner
            step = (xi - xp) * out
            if ai < ap:  # falling: extrapolate to its zero, at most two steps out
                nxt = xi + out * min(ai * step / (ap - ai), 2.0 * step)
            else:  # flat or rising (noise, or the noise floor): a doubled step
                nxt = xi + out * 2.0 * step
        nxt = float(np.clip(nxt, *lim))
        steps.append(nxt)
        if abs(nxt - x) < xtol:
            return nxt, steps
        x = nxt
    return x, steps


def _event_mask(domain, clique, variables, j: int, evidence: dict) -> tuple[np.ndarray, np.ndarray]:
    """Indicators over ``clique``'s cells of the event (variables = their ``j``-th joint state, evidence)
    and of the evidence alone."""
    states = np.unravel_index(j, [domain.size(v) for v in variables])
    given = {v: list(domain[v]).index(st) for v, st in evidence.items()}
    return _cells(domain, clique, {**given, **{v: int(s) for v, s in zip(variables, states)}}), _cells(
        domain, clique, given
    )


def _cells(domain, clique, wanted: dict) -> np.ndarray:
    mask = np.ones(domain.shape(clique), dtype=bool)
    for axis, v in enumerate(clique):
        if v in wanted:
            shape = [1] * len(clique)
            shape[axis] = domain.size(v)
            mask &= (np.arange(domain.size(v)) == wanted[v]).reshape(shape)
    return mask


def _tilted(theta, host: int, masks, answer, j: int, p0: float) -> list[np.ndarray]:
    """``theta`` tilted on clique ``host`` so that state ``j``'s answer is ``p0`` and ``P(evidence)`` stays as fitted.

    ``masks = (event, evidence)``: ``eta`` is added on the event's cells, which multiplies the
    mass of every configuration in the event by ``e^eta`` and no other, so a conditional ``r``
    becomes ``r e^eta / (r e^eta + 1 - r)``: ``eta = logit(p0) - logit(r)`` exactly with exact
    inference. ``-log(r e^eta + 1 - r)`` is added on the evidence's cells, so the evidence keeps
    its fitted probability (and the records behind the answer their number); the other states keep
    their proportions. Loopy answers are approximate, so there a root-finder corrects ``eta``.
    """
    event, given = masks
    r = float(answer(theta).ravel()[j])

    def at(eta):
        out = list(theta)
        out[host] = theta[host] + eta * event - np.logaddexp(np.log(r) + eta, np.log1p(-r)) * given
        return out

    eta = float(_logit(p0) - _logit(r))
    if abs(float(answer(at(eta)).ravel()[j]) - p0) > 1e-7:
        from scipy.optimize import brentq

        gap = lambda e: float(answer(at(e)).ravel()[j]) - p0  # noqa: E731
        lo_e, hi_e = eta - 1.0, eta + 1.0
        while gap(lo_e) > 0 and lo_e > eta - 60:
            lo_e -= 4.0
        while gap(hi_e) < 0 and hi_e < eta + 60:
            hi_e += 4.0
        eta = brentq(gap, lo_e, hi_e, xtol=1e-10)
    return at(eta)


def _records_behind(make_answer, theta, domain, evidence: dict, n: float) -> float:
    """``n`` times the fitted probability of ``evidence``: the records a conditional answer rests on.

    ``make_answer(variable, evidence)`` gives a function ``theta -> P(variable | evidence)``; a
    joint evidence probability is the chain ``P(e1) P(e2 | e1) ...`` of one-variable answers.
    """
    prob, given = 1.0, {}
    for v, state in evidence.items():
        p = make_answer(v, dict(given))(theta).ravel()[list(domain[v]).index(state)]
        prob *= float(p) if np.isfinite(p) else 0.0
        given[v] = state
    return max(float(n) * prob, 1e-12)


def _answers_and_denominators(answer, thetas, make_answer, domain, evidence: dict) -> tuple[np.ndarray, np.ndarray]:
    """The answers under each of ``thetas`` (rows) and ``P(evidence)`` under each: the answers' denominators.

    Read off the answer's own junction tree; with loopy inference, chained one-variable answers.
    """
    answers, denominators = [], []
    for theta in thetas:
        a, p = answer.with_evidence(theta)
        answers.append(np.asarray(a).ravel())
        denominators.append(_records_behind(make_answer, theta, domain, evidence, 1.0) if p is None else p)
    return np.array(answers), np.asarray(denominators, dtype=np.float64)


def _bands(
    estimate, answers, states: dict, level: float, interval: str, n_records: float, ends=None, denominators=None,
    calibration=None,
) -> pd.DataFrame:
    """The interval frame from the point answer and the refits' answers (rows), by the rule ``interval``.

    ``ends``: ``(lower, upper, report)`` of the ``"inverted"`` rule, which ``band_limits`` cannot compute
    (it needs refits from other models); ``report`` goes to ``attrs["inverted"]``. ``denominators``:
    ``P(evidence)`` under the fit and under each refit (``None`` for a marginal, and for every rule but
    ``"ratio"``, which alone pays for them), kept in ``attrs["evidence_probability"]`` and
    ``attrs["evidence_bootstrap"]``. ``calibration``: ``"calibrated"``'s ``(factor, worlds, refits)``, or
    ``"response"``'s ``(factor, slope)``.
    """
    variables = list(states)
    fit_p = boot_p = None
    if denominators is not None:
        denominators = np.asarray(denominators, dtype=np.float64)
        fit_p, boot_p = float(denominators[0]), denominators[1:]
    if ends is None:
        lo, hi = band_limits(estimate.ravel(), answers, level, interval, n_records=n_records,
                             evidence_probability=fit_p, evidence_bootstrap=boot_p,
                             calibration=None if calibration is None else calibration[0])
    else:
        lo, hi = ends[0], ends[1]
    if len(variables) == 1:
        index = pd.Index(states[variables[0]], name=variables[0])
    else:
        index = pd.MultiIndex.from_product([states[v] for v in variables], names=variables)
    frame = pd.DataFrame({"estimate": estimate.ravel(), "lower": lo, "upper": hi}, index=index)
    frame.attrs.update(
        level=level, n_samples=len(answers), interval=interval, method="parametric bootstrap", bootstrap=answers,
        n_records=n_records, evidence_probability=fit_p, evidence_bootstrap=boot_p,
    )
    if ends is not None:
        frame.attrs["inverted"] = ends[2]
    if calibration is not None and interval == "response":
        frame.attrs["response"] = dict(zip(("factor", "slope"), calibration))
    elif calibration is not None:
        frame.attrs["calibration"] = dict(zip(("factor", "worlds", "refits"), calibration))
    return frame


def band_limits(
    estimate, answers, level: float, interval: str = "normal", n_records=None, evidence_probability=None,
    evidence_bootstrap=None, calibration: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper limits of a bootstrap band per column of ``answers``, by one of nine rules.

    Parameters
    ----------
    estimate : numpy.ndarray
        The fitted answer per state (probabilities), shape ``(k,)``.
    answers : numpy.ndarray
        The refits' answers, shape ``(n_refits, k)``.
    level : float
        Wanted coverage per state.
    interval : {"normal", "calibrated", "response", "ratio", "score", "logit", "arcsine", "bc", "percentile", "basic"}
        ``"normal"``: bias-corrected normal band on the probability scale,
        ``estimate - bias ± t sd`` clipped to ``[0, 1]``, with ``bias`` and ``sd`` the
        mean shift and spread of the refits and ``t`` Student's quantile for
        ``n_refits - 1`` degrees of freedom times ``sqrt(1 + 1/n_refits)`` (the bias is
        itself a mean of the refits). ``"calibrated"``: the normal band with its half-width times
        ``max(calibration, 1)``, ``calibration`` being a second bootstrap level's factor
        ([`calibration_factor`][pgmpy_dp.uncertainty.calibration_factor]); ``"response"``: the same with
        [`response_factor`][pgmpy_dp.uncertainty.response_factor]'s factor. ``"ratio"``: Fieller's band for a conditional read as
        the ratio ``P(x, e) / P(e)`` (see Notes); needs ``evidence_probability`` and
        ``evidence_bootstrap`` for a conditional, and is the normal band for a marginal. ``"score"``: the same centre, with the spread
        evaluated at each candidate end instead of at the fit (a Wilson-type band; see
        Notes); needs ``n_records``. ``"logit"``: the same band on the log-odds scale,
        ``g(estimate) - bias ± z sd`` with ``g = logit``, ``bias`` and ``sd`` the
        mean shift and spread of ``g`` over the refits, mapped back by the inverse
        logit. ``"arcsine"``: the same with ``g(p) = arcsin(sqrt(p))``, mapped back by
        ``sin(g)**2`` (limits beyond ``[0, pi/2]`` end at 0 or 1). ``"bc"``: Efron's bias-corrected percentile band, the
        ``Φ(2 z0 ± z)`` quantiles of the refits with ``z0 = Φ⁻¹(share of refits
        below the estimate)``. ``"percentile"``: the ``(1 ± level) / 2`` quantiles.
        ``"basic"``: those quantiles reflected about the estimate.
    n_records : float or numpy.ndarray, optional
        ``"score"`` only: the number of records behind each answer, scalar or shape
        ``(k,)``: the record count ``N`` the fit used times the fitted probability of
        the evidence (``N`` for a marginal), ``numpy.inf`` when the refits redraw only
        the noise (``sampling=False``). [`query_interval`][pgmpy_dp.uncertainty.query_interval]
        passes it and keeps it in ``frame.attrs["n_records"]``.
    evidence_probability : float, optional
        ``"ratio"`` only: ``P(evidence)`` under the fit (``None`` or 1 for a marginal).
        ``query_interval`` keeps it in ``frame.attrs["evidence_probability"]``.
    evidence_bootstrap : numpy.ndarray, optional
        ``"ratio"`` only: ``P(evidence)`` under each refit, shape ``(n_refits,)``
        (``frame.attrs["evidence_bootstrap"]``).
    calibration : float, optional
        ``"calibrated"`` and ``"response"`` only (required there): the widening factor; below 1 the band stays
        the normal one.

    Returns
    -------
    tuple of numpy.ndarray
        ``(lower, upper)``, each of shape ``(k,)``, inside ``[0, 1]``.

    Notes
    -----
    The ``"score"`` band. The normal band assumes the estimator's spread ``s`` is the
    same at the truth ``p`` as at the fit. It is not when the fit is far from the truth:
    a proportion's sampling variance is ``p (1 - p) / n`` (the Wald-interval failure of a
    binomial proportion), so refits drawn from a fit that came out near 0 or 1 spread
    less than the estimator does at a truth nearer 1/2, and the clipped band is short on
    the truth's side (docs/intervals.md, "Diagnosis", finding 3). The answer is a ratio
    of counts: the records add binomial variance, the noise adds about constant count
    variance, so per state

        s(p)^2 = a p (1 - p) + c,    a = 1 / n,  n = ``n_records``,

    anchored at the fit, the model the refits were drawn from: ``s(p_hat) = s_hat``, so
    ``c = s_hat^2 - a h`` with ``h = p_hat (1 - p_hat)``. If ``a h > s_hat^2`` (the refits
    spread less than record sampling alone would: shrinkage or the boundary at 0 or 1
    truncates them), ``a`` is lowered to ``s_hat^2 / h`` and ``c = 0``: all of the measured
    variance scales binomially (Wilson's band with the effective size ``h / s_hat^2``).
    The band is every ``p`` the pivot ``|m - p| <= t s(p)`` accepts, with the normal band's
    bias-corrected centre ``m = p_hat - bias`` and its multiplier ``t``; squaring gives

        (1 + t^2 a) p^2 - (2 m + t^2 a) p + m^2 - t^2 c = 0,

    whose two roots are the ends, clipped to ``[0, 1]``. With ``a = 0`` (flat variance,
    noise only, ``n_records = inf``) they are ``m ± t s_hat``: the normal band. If ``m`` lies
    outside ``[0, 1]`` the quadratic can have no real root; those states get the normal
    band. For ``m`` in ``[0, 1]`` the band contains ``m``. The refits are the same as for
    every other rule: it costs nothing extra.

    The ``"ratio"`` band. A conditional answer is a ratio ``p = a / b`` of the fitted
    probabilities ``a = P(x, e)`` and ``b = P(e)``. When few records lie behind the evidence
    the denominator is itself uncertain by a good fraction of its size, and the normal band's
    spread, measured at the fit's ``b_hat``, is not the spread at the truth's ``b``: a fit whose
    ``b_hat`` came out above ``b`` has refits that spread less than the estimator does, and its
    band is too short (docs/intervals.md measures the normal band's coverage falling with the
    records behind the evidence). The privacy noise is added to counts, so it is the numerator and
    denominator, not their ratio, whose errors have about the same law at the fit as at the
    truth. Fieller's construction uses that: with ``(a*, b*)`` the refits' pairs, ``S`` their
    covariance, and the bias-corrected centres ``a~ = 2 a_hat - mean(a*)``, ``b~ = 2 b_hat - mean(b*)``
    (the normal band's correction, applied to each), the pivot ``(a~ - p b~) / sqrt(S_aa - 2 p S_ab
    + p^2 S_bb)`` is approximately normal at the true ``p`` whatever ``b`` is, and the band is every
    ``p`` it accepts at the normal band's multiplier ``t``:

        (b~^2 - t^2 S_bb) p^2 - 2 (a~ b~ - t^2 S_ab) p + a~^2 - t^2 S_aa <= 0.

    If ``b~^2 > t^2 S_bb`` (the evidence's probability is resolved) the set is the interval
    between the roots, which contains ``a~ / b~``, clipped to ``[0, 1]``; otherwise it is
    unbounded and the band is ``[0, 1]``. With a denominator known exactly (a marginal,
    ``S_bb = S_ab = 0``, ``b = 1``) it is the normal band, and when ``b``'s relative spread is small
    it is the normal band to first order (the delta method). It uses the fit's and refits'
    ``P(evidence)``, one more junction-tree calibration per refit (computed only for this rule).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> boot = np.clip(0.2 + 0.02 * rng.standard_normal((200, 1)), 0, 1)   # refits centred on the estimate
    >>> lo, hi = band_limits(np.array([0.2]), boot, 0.95, "logit")
    >>> bool(0.15 < lo[0] < 0.17 and 0.23 < hi[0] < 0.25)
    True
    >>> shrunk = boot + 0.02                        # refits biased upwards: the band moves down by as much
    >>> lo2, hi2 = band_limits(np.array([0.2]), shrunk, 0.95, "logit")
    >>> bool(hi2[0] < hi[0] - 0.015)
    True
    >>> lo3, hi3 = band_limits(np.array([0.2]), shrunk, 0.95)   # the default: the shift is undone exactly
    >>> bool(abs(lo3[0] + hi3[0] - 2 * 0.18) < 1e-3)
    True
    >>> low = np.array([0.05])                     # a fit near 0: its refits spread binomially, sd 0.012
    >>> refits = low + 0.012 * rng.standard_normal((200, 1))
    >>> n_lo, n_hi = band_limits(low, refits, 0.95)
    >>> s_lo, s_hi = band_limits(low, refits, 0.95, "score", n_records=330)
    >>> bool(s_hi[0] > n_hi[0] + 0.005)             # the spread at the upper end is larger: a longer upper arm
    True

    ``"ratio"`` for a conditional whose evidence is uncertain by a fifth of itself: the refits' ``P(e)``
    spread 0.02 around 0.1, and ``P(x | e)`` 0.05 around 0.4, independently. Fieller's band is wider than the
    normal one (the normal band's spread is measured at the fit's ``P(e)``); with ``P(e)`` known exactly
    it is the normal band.

    >>> b = 0.1 + 0.02 * rng.standard_normal(30)
    >>> p = np.clip(0.4 + 0.05 * rng.standard_normal((30, 1)), 0, 1)
    >>> r_lo, r_hi = band_limits(np.array([0.4]), p, 0.95, "ratio", evidence_probability=0.1, evidence_bootstrap=b)
    >>> n_lo, n_hi = band_limits(np.array([0.4]), p, 0.95)
    >>> bool(r_hi[0] - r_lo[0] > n_hi[0] - n_lo[0])
    True
    >>> e_lo, e_hi = band_limits(np.array([0.4]), p, 0.95, "ratio", evidence_probability=0.1,
    ...                          evidence_bootstrap=np.full(30, 0.1))
    >>> bool(np.allclose([e_lo[0], e_hi[0]], [n_lo[0], n_hi[0]]))
    True
    """
    if interval == "inverted":
        raise ValueError(
            "interval='inverted' needs refits drawn from tilted models, not only the fit's; "
            "use query_interval(estimator, ..., interval='inverted')"
        )
    if interval not in _INTERVALS:
        raise ValueError(f"interval must be one of {_INTERVALS}, got {interval!r}")
    widen = 1.0
    if interval in _WIDENED:
        if calibration is None or not np.isfinite(calibration) or calibration < 0:
            raise ValueError(
                f"interval={interval!r} needs calibration=, a finite factor >= 0 from calibration_factor() or "
                f"response_factor(), got {calibration!r}"
            )
        widen = max(float(calibration), 1.0)
    estimate = np.asarray(estimate, dtype=np.float64).ravel()
    answers = np.asarray(answers, dtype=np.float64).reshape(-1, estimate.size)
    alpha = (1.0 - level) / 2.0
    if interval == "score":
        return _score_band(estimate, answers, alpha, _check_n_records(n_records, estimate.size))
    if interval == "ratio" and evidence_probability is not None:
        return _ratio_band(estimate, answers, alpha, evidence_probability, evidence_bootstrap)
    if interval in ("normal", "calibrated", "response", "ratio", "logit", "arcsine"):
        # The refits' answers are the estimator's law under the fitted model. Regularisation
        # shrinks towards uniform, so that law is centred on a twice-shrunk answer: its mean
        # shift from the estimate estimates the estimator's own bias (to first order), which we
        # subtract once. On the log-odds scale the law is close to normal even near 0 or 1
        # (a count ratio), and the band stays inside [0, 1]; a normal band needs only the
        # refits' mean and sd, which settle with far fewer refits than 2.5% quantiles.
        # "normal": the same on the probability scale, where noise and prior add mass to a cell
        # (a bias about the same at the truth as at the fit); "logit" measures it where it grows like 1/p
        # "arcsine": the same on g(p) = arcsin(sqrt(p)), where a proportion's sampling spread does not
        # depend on p: a fit that came out low has refits that spread less than the estimator does at
        # a larger truth, and on the probability scale that band is too short on the side of the truth
        # "ratio" without a denominator (a marginal): the normal band, which it reduces to
        identity = lambda p: np.asarray(p, dtype=np.float64)  # noqa: E731
        # "calibrated": the normal band, wider by the factor a second bootstrap level measured
        scale = {"normal": identity, "calibrated": identity, "response": identity, "ratio": identity, "logit": _logit,
                 "arcsine": _arcsine}[interval]
        centre, var, z = _pivot(scale(estimate), scale(answers), alpha)
        sd = np.sqrt(var) * widen
        if interval in ("normal", "calibrated", "response", "ratio"):
            return np.clip(centre - z * sd, 0.0, 1.0), np.clip(centre + z * sd, 0.0, 1.0)
        if interval == "arcsine":
            return _arcsine_inverse(centre - z * sd), _arcsine_inverse(centre + z * sd)
        return special.expit(centre - z * sd), special.expit(centre + z * sd)
    if interval == "bc":
        # Efron (1981): if some monotone g makes g(estimate) - g(truth) ~ N(-z0, 1) (in units of its
        # sd), the quantiles Φ(2 z0 ± z) of the refits are an exact band; z0 is read off the share of
        # refits below the estimate (ties count half). Transformation-invariant, like "percentile".
        valid = ~np.isnan(answers)
        below = (np.sum(answers < estimate, axis=0) + 0.5 * np.sum(answers == estimate, axis=0)) / np.maximum(
            valid.sum(axis=0), 1
        )
        b = valid.sum(axis=0)
        share = np.clip(below, 0.5 / np.maximum(b, 1), 1.0 - 0.5 / np.maximum(b, 1))
        z0 = special.ndtri(share)
        z = float(special.ndtri(1.0 - alpha))
        p_lo, p_hi = special.ndtr(2.0 * z0 - z), special.ndtr(2.0 * z0 + z)
        lo = np.array([_quantile(answers[:, j], p_lo[j]) for j in range(estimate.size)])
        hi = np.array([_quantile(answers[:, j], p_hi[j]) for j in range(estimate.size)])
        return lo, hi
    # "weibull" puts the p-quantile at order statistic p (n + 1): the band between two order
    # statistics then holds `level` of the bootstrap law on average even for a few dozen refits,
    # where numpy's default (linear) rule covers about level * (n - 1) / (n + 1)
    lo, hi = np.nanquantile(answers, [alpha, 1.0 - alpha], axis=0, method="weibull")
    if interval == "basic":
        lo, hi = np.clip(2.0 * estimate - hi, 0.0, 1.0), np.clip(2.0 * estimate - lo, 0.0, 1.0)
    return lo, hi


def _pivot(g_hat: np.ndarray, g: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The bias-corrected centre ``g_hat - bias``, the refits' variance and the multiplier of the normal-type bands.

    ``bias`` is the refits' mean shift from ``g_hat``; the multiplier is ``_band_t``'s.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (zero-probability evidence)
        bias = np.nanmean(g, axis=0) - g_hat
        var = np.nanvar(g, axis=0, ddof=1)
    return g_hat - bias, var, _band_t(len(g), alpha)


def _band_t(b: int, alpha: float) -> float:
    """Half-width of a normal-type band in refit standard deviations: ``t * sqrt(1 + 1/b)`` for ``b`` refits.

    The centre ``p_hat - bias = 2 p_hat - mean(refits)`` carries two errors: the estimate's own
    (variance ``s^2``, which the refits' variance estimates) and the Monte Carlo error of the
    bias, the mean of ``b`` refits (variance ``s^2 / b``). So ``(truth - centre) / s_hat`` is
    Student's ``t`` with ``b - 1`` degrees of freedom times ``sqrt(1 + 1/b)``, as for a prediction
    interval: Student's ``t`` keeps the level for a few dozen refits (a normal quantile would lose
    about a point at 30), and ``sqrt(1 + 1/b)`` (1.017 at 30 refits, 1.025 at 20) the bias's
    share, which the band omitted until issue 14's twelfth round (docs/intervals.md).
    """
    return float(special.stdtrit(max(b - 1, 1), 1.0 - alpha)) * float(np.sqrt(1.0 + 1.0 / max(b, 1)))


def calibration_factor(estimate, world_answers, inner_answers, level: float) -> float:
    """How much wider the normal band must be to cover at ``level`` in the bootstrap worlds: a second bootstrap level.

    The normal band takes the estimator's bias and spread at the truth to be those at the fit. Where
    fits land far from the truth (few records), refits drawn from the fit do not see how far, and
    conditional answers under-cover (docs/intervals.md, "Diagnosis"). An iterated bootstrap asks how
    the band fares where the truth is known: each of the fit's first refits ``b`` plays the truth of a
    world, is itself refitted ``C`` times, and forms its own normal band around its answer ``a*_b``
    (centre ``2 a*_b - mean``, spread ``sd_b`` of its ``C`` refits). In that world the fit's answer
    ``p_hat`` is the truth, so ``|p_hat - centre_b| / sd_b`` is how many of ``sd_b`` the band would need
    to reach it. The ``level`` quantile of that ratio over the worlds and the query's states, divided
    by the normal band's own multiplier at ``C`` refits (``t sqrt(1 + 1/C)``), is the factor: 1 when the
    normal band is calibrated, above 1 when it is too short (Hall's iterated bootstrap, with one
    factor per query rather than per state, so that its quantile rests on worlds times states).
    States whose world refits do not spread (``sd_b = 0``) or are undefined are left out; with none
    left the factor is 1.

    Parameters
    ----------
    estimate : numpy.ndarray
        The fit's answer per state, shape ``(k,)``.
    world_answers : numpy.ndarray
        Each world's answer (its first-level refit's), shape ``(worlds, k)``.
    inner_answers : sequence of numpy.ndarray
        Per world, its refits' answers, shape ``(C, k)`` each.
    level : float
        The band's level.

    Returns
    -------
    float
        The factor (``band_limits(..., "calibrated", calibration=factor)`` widens by ``max(factor, 1)``).

    Examples
    --------
    Worlds whose refits spread as the fit's answer lies from them give a factor near 1; if the fit
    lies twice as far, near 2.

    >>> rng = np.random.default_rng(0)
    >>> worlds = 0.3 + 0.02 * rng.standard_normal((200, 1))
    >>> inner = [w + 0.02 * rng.standard_normal((200, 1)) for w in worlds]
    >>> round(calibration_factor(np.array([0.3]), worlds, inner, 0.95), 1)
    1.0
    >>> wide = 0.3 + 0.04 * rng.standard_normal((200, 1))
    >>> round(calibration_factor(np.array([0.3]), wide, [w + 0.02 * rng.standard_normal((200, 1)) for w in wide], 0.95), 1)
    2.0
    """
    level = check_level(level)
    estimate = np.asarray(estimate, dtype=np.float64).ravel()
    world_answers = np.asarray(world_answers, dtype=np.float64).reshape(-1, estimate.size)
    if len(inner_answers) != len(world_answers) or len(world_answers) == 0:
        raise ValueError(
            f"world_answers and inner_answers must list the same worlds (at least one), got {len(world_answers)} "
            f"and {len(inner_answers)}"
        )
    ratios = []
    for a_b, inner in zip(world_answers, inner_answers):
        inner = np.asarray(inner, dtype=np.float64).reshape(-1, estimate.size)
        if len(inner) < 2:
            raise ValueError(f"every world needs at least 2 refits, got {len(inner)}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # undefined (NaN) answers
            sd = np.nanstd(inner, axis=0, ddof=1)
            centre = 2.0 * a_b - np.nanmean(inner, axis=0)
        ok = np.isfinite(sd) & (sd > 0) & np.isfinite(centre) & np.isfinite(estimate)
        ratios.append(np.abs(estimate[ok] - centre[ok]) / sd[ok])
    ratios = np.concatenate(ratios)
    if ratios.size == 0:
        return 1.0
    c = len(np.asarray(inner_answers[0]).reshape(-1, estimate.size))
    return float(np.quantile(ratios, level)) / _band_t(c, (1.0 - level) / 2.0)


def _calibration(estimate, answers, inner_answers, level: float) -> tuple[float, int, int]:
    """``calibrated``'s factor from the first-level ``answers`` (the worlds are its first rows) and the worlds' refits."""
    worlds = len(inner_answers)
    factor = calibration_factor(estimate, np.asarray(answers)[:worlds], inner_answers, level)
    return factor, worlds, len(inner_answers[0])


def _check_calibration(calibration, n_samples: int) -> tuple[int, int]:
    """``(worlds, refits)`` of ``interval="calibrated"``: integers, at least 2 refits, at most ``n_samples`` worlds."""
    try:
        worlds, inner = calibration
    except (TypeError, ValueError):
        raise ValueError(f"calibration must be a pair (worlds, refits), got {calibration!r}") from None
    for name, v in (("worlds", worlds), ("refits", inner)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ValueError(f"calibration's {name} must be an integer, got {v!r}")
    if not 1 <= worlds <= n_samples:
        raise ValueError(
            f"calibration's worlds must be between 1 and n_samples ({n_samples}): the worlds are the fit's first "
            f"refits; got {worlds}"
        )
    if inner < 2:
        raise ValueError(f"calibration's refits must be at least 2 per world, got {inner}")
    return int(worlds), int(inner)


def response_factor(first_answers, second_answers) -> tuple[float, float]:
    """The normal band's widening for an estimator whose answer follows the truth with slope ``k < 1``.

    Near the truth ``p`` a regularised estimator's mean answer moves as ``c + k p`` (``k = 1``: unbiased to
    first order; shrinkage towards a fixed answer gives ``k < 1``), with spread ``s``. The refits, drawn from
    the fit ``p_hat``, centre on ``c + k p_hat``, so the normal band's centre ``2 p_hat - mean(refits)`` is
    ``(2 - k) p_hat - c`` plus the refits' mean error: its variance is ``((2 - k)^2 + 1 / B) s^2`` for ``B``
    refits, not the ``(1 + 1 / B) s^2`` the normal band assumes (and its bias ``(1 - k)`` times the
    estimator's, second order). The band with the right width is the normal band times

        sqrt((2 - k)^2 + 1/B) / sqrt(1 + 1/B).

    ``k`` is measured by a second level of refits under common random numbers: refit ``j``'s answer
    ``a_j`` and the answer ``a2_j`` of one refit drawn from refit ``j``'s model, every ``a2_j`` with the
    same seed, so that ``a2_j`` moves with its generator only. The slope of ``a2`` on ``a``, pooled over the
    query's states (least squares through the means), is ``k``, clipped to ``[0, 1]``: above 1 is noise
    (the factor would narrow the band), below 0 would mean an answer moving against its truth.

    Parameters
    ----------
    first_answers : numpy.ndarray
        The refits' answers, shape ``(B, n_states)``.
    second_answers : numpy.ndarray
        For each refit, the answer of one refit drawn from it (the same seed for all), same shape.

    Returns
    -------
    (float, float)
        ``(factor, k)``: the widening (at least 1) and the clipped slope. With no spread among the
        refits' answers, ``(1.0, 1.0)``.

    Examples
    --------
    An estimator that moves half as far as its truth (``k = 0.5``), 30 refits:

    >>> rng = np.random.default_rng(0)
    >>> first = 0.4 + 0.05 * rng.standard_normal((30, 2)) * [1, -1]
    >>> second = 0.2 + 0.5 * first + 0.001 * rng.standard_normal((30, 2))
    >>> factor, k = response_factor(first, second)
    >>> round(k, 1), round(factor, 1)
    (0.5, 1.5)
    >>> response_factor(first, first)  # an unbiased estimator: the normal band
    (1.0, 1.0)
    """
    first = np.asarray(first_answers, dtype=np.float64)
    second = np.asarray(second_answers, dtype=np.float64).reshape(first.shape)
    if first.ndim != 2 or len(first) < 2:
        raise ValueError(f"first_answers must hold at least 2 refits' answers (B, n_states), got shape {first.shape}")
    ok = np.all(np.isfinite(first), axis=0) & np.all(np.isfinite(second), axis=0)
    x = first[:, ok] - first[:, ok].mean(axis=0)
    y = second[:, ok] - second[:, ok].mean(axis=0)
    sxx = float(np.sum(x * x))
    if not sxx > 0:
        return 1.0, 1.0
    k = min(max(float(np.sum(x * y)) / sxx, 0.0), 1.0)
    b = len(first)
    return float(np.sqrt(((2.0 - k) ** 2 + 1.0 / b) / (1.0 + 1.0 / b))), k


def _common_seed(seed) -> int:
    """One integer seed for every second-level refit of ``"response"`` (common random numbers), from ``random_state``."""
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return int(np.random.default_rng([int(seed), 15]).integers(2**63))
    return int((check_random_state(seed) or np.random.default_rng()).integers(2**63))


def _world_seeds(seed, worlds: int) -> list:
    """One seed per calibration world, derived from the query's ``random_state`` (fresh when it is ``None``)."""
    if seed is None:
        return [None] * worlds
    if isinstance(seed, numbers.Integral):
        return [np.random.default_rng([int(seed), 14, b]) for b in range(worlds)]
    rng = check_random_state(seed)
    return [np.random.default_rng(int(rng.integers(2**63))) for _ in range(worlds)]


def _check_n_records(n_records, k: int) -> np.ndarray:
    """``n_records`` as a float array of shape ``(k,)``, every entry positive (``inf`` allowed)."""
    if n_records is None:
        raise ValueError(
            "interval='score' needs n_records=: the records behind each answer (N times the fitted probability "
            "of the evidence; numpy.inf for noise-only refits); query_interval passes it"
        )
    n = np.asarray(n_records, dtype=np.float64)
    n = np.broadcast_to(n, (k,)) if n.ndim == 0 else n.ravel()
    if n.size != k:
        raise ValueError(f"n_records must be a scalar or hold one count per state ({k}), got {n.size}")
    if np.any(np.isnan(n)) or np.any(n <= 0):
        raise ValueError(f"n_records must be positive (numpy.inf for noise-only refits), got {n_records!r}")
    return n


def _score_band(estimate: np.ndarray, answers: np.ndarray, alpha: float, n_records: np.ndarray):
    """The ``"score"`` rule of ``band_limits``: the pivot solved with the spread at the band's end (its Notes)."""
    m, var, t = _pivot(estimate, answers, alpha)  # the normal band's centre p_hat - bias, spread and t
    h = estimate * (1.0 - estimate)
    with np.errstate(divide="ignore", invalid="ignore"):
        # the binomial share can be no more than all of the measured variance at the fit
        a = np.minimum(1.0 / n_records, np.where(h > 0, var / h, np.inf))
    a = np.where(np.isfinite(a), a, 0.0)
    c = np.maximum(var - a * h, 0.0)
    t2 = t * t
    quad = 1.0 + t2 * a
    lin = 2.0 * m + t2 * a
    disc = lin * lin - 4.0 * quad * (m * m - t2 * c)
    root = np.sqrt(np.maximum(disc, 0.0))
    lo, hi = (lin - root) / (2.0 * quad), (lin + root) / (2.0 * quad)
    flat = np.sqrt(var)
    # no real root (a centre outside [0, 1] that the variance model cannot reach): the normal band
    lo, hi = np.where(disc >= 0, lo, m - t * flat), np.where(disc >= 0, hi, m + t * flat)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def _ratio_band(estimate: np.ndarray, answers: np.ndarray, alpha: float, b_hat, b_boot):
    """The ``"ratio"`` rule of ``band_limits``: Fieller's band for ``P(x, e) / P(e)`` (its Notes)."""
    b_boot = np.asarray(b_boot, dtype=np.float64).ravel()
    if b_boot.size != answers.shape[0]:
        raise ValueError(
            f"evidence_bootstrap must hold P(evidence) under each refit ({answers.shape[0]}), got {b_boot.size}"
        )
    b_hat = float(b_hat)
    if not (np.isfinite(b_hat) and 0.0 < b_hat <= 1.0 + 1e-9):
        raise ValueError(f"evidence_probability must be in (0, 1], got {b_hat!r}")
    a_boot = answers * b_boot[:, None]  # the refits' joint probabilities P*(x, e)
    t = _band_t(len(answers), alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (zero-probability evidence)
        ok = ~np.isnan(a_boot)
        a_mean = np.nanmean(a_boot, axis=0)
        b_mean = np.array([np.mean(b_boot[ok[:, j]]) if ok[:, j].any() else np.nan for j in range(answers.shape[1])])
        a_c = 2.0 * estimate * b_hat - a_mean
        b_c = 2.0 * b_hat - b_mean
        da, db = a_boot - a_mean, np.where(ok, b_boot[:, None] - b_mean, np.nan)
        dof = np.maximum(ok.sum(axis=0) - 1, 1)
        s_aa = np.nansum(da * da, axis=0) / dof
        s_ab = np.nansum(da * db, axis=0) / dof
        s_bb = np.nansum(db * db, axis=0) / dof
    t2 = t * t
    quad = b_c * b_c - t2 * s_bb
    half = a_c * b_c - t2 * s_ab
    disc = np.maximum(half * half - quad * (a_c * a_c - t2 * s_aa), 0.0)
    resolved = quad > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(resolved, (half - np.sqrt(disc)) / quad, 0.0)
        hi = np.where(resolved, (half + np.sqrt(disc)) / quad, 1.0)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def _logit(p) -> np.ndarray:
    # refits are positive models, so answers are inside (0, 1); the clip only guards rounding
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-12, 1.0 - 1e-12)
    return np.log(p) - np.log1p(-p)


def _arcsine(p) -> np.ndarray:
    """The variance-stabilising scale of a proportion, ``arcsin(sqrt(p))`` (0 at p = 0, pi/2 at p = 1)."""
    return np.arcsin(np.sqrt(np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)))


def _arcsine_inverse(g) -> np.ndarray:
    """``sin(g)**2`` with ``g`` clipped to ``[0, pi/2]`` (a limit beyond the scale's ends is that end)."""
    return np.sin(np.clip(np.asarray(g, dtype=np.float64), 0.0, np.pi / 2)) ** 2


def _quantile(x: np.ndarray, p: float) -> float:
    x = x[~np.isnan(x)]
    return float(np.quantile(x, p, method="weibull")) if x.size else np.nan


def _bayesian_interval(
    est, variables, evidence, level, n_samples, random_state, interval, sampling, refits, show, n_jobs=1,
    calibration=(15, 15),
):
    """query_interval for a fitted DiscretePrivateMLE: the estimator's consistency step re-run on simulated tables.

    Each refit draws ``N`` records (integer codes) from the fitted network with the
    junction tree's vectorised forward sampler (``N`` = the release's declared or
    noisy record count), counts the released tables, adds fresh noise of each
    table's own mechanism and scale and fits them as the estimator does (see
    [`_bayesian_refits`][pgmpy_dp.uncertainty._bayesian_refits]). Refits are
    answered on the engine's arrays; the point answer is [`pgmpy_dp.query`][pgmpy_dp.querying.query]'s.
    """
    from pgmpy.models import DiscreteBayesianNetwork

    from .querying import query

    if not hasattr(est, "parameters_") or getattr(est, "_model", None) is None:
        raise ValueError("estimator is not fitted; fit it first, e.g. model.fit(df, estimator=DiscretePrivateMLE(...))")
    if not sampling:
        raise ValueError("sampling=False is only supported for PrivateMarkovEstimator; use sampling=True")
    if refits is not None:
        raise ValueError("refits is only supported for PrivateMarkovEstimator (from bootstrap_log_potentials)")
    if interval not in _INTERVALS:
        raise ValueError(f"interval must be one of {_INTERVALS}, got {interval!r}")
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2 (bootstrap refits), got {n_samples!r}")
    if interval == "calibrated":
        calibration = _check_calibration(calibration, n_samples)
    states = dict(est.state_names_)
    variables = [variables] if isinstance(variables, str) else list(variables)
    evidence = dict(evidence or {})
    domain = Domain(states)
    _check_query(domain, variables, evidence)
    releases = _bn_releases(est)
    _check_record_level(releases)

    fitted = DiscreteBayesianNetwork(est._model.edges())
    fitted.add_nodes_from(est._model.nodes())
    fitted.add_cpds(*est.parameters_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pgmpy notices
        f = query(fitted, variables, evidence=evidence or None)
    estimate = np.transpose(f.values, [f.variables.index(v) for v in variables]).ravel()

    families, theta_bn = _bn_families(est)
    # a joint query over variables no family holds together: one more (flat) clique keeps them in one
    # junction-tree node, so the engine answers every query pgmpy.query does
    extra = [tuple(variables)] if not any(set(variables) <= set(c) for c in families) else []
    answer = _answerer(domain, families + extra, "junction-tree", variables, evidence)
    flat = [np.zeros(domain.shape(c)) for c in extra]
    # the refitted log-CPDs do not depend on the query: keep them for the next query of this fit
    refitted = _cached(
        est, "parameters_", (n_samples, sampling), random_state,
        lambda: _bayesian_refits(est, n_samples, random_state, show, n_jobs=n_jobs),
    )
    denominators = None
    if evidence and interval == "ratio":  # P(evidence) under the fit and each refit, for the "ratio" band
        answers, denominators = _answers_and_denominators(
            answer, [list(theta_bn) + flat] + [list(theta) + flat for theta in refitted], None, domain, evidence
        )
        answers = answers[1:]
    else:
        answers = np.array([answer(list(theta) + flat).ravel() for theta in refitted])
    n_records = _n_records(
        answer, list(theta_bn) + flat, None, domain, evidence, _refit_records(releases),
    )
    factor = None
    if interval == "calibrated":
        worlds, inner = calibration
        second = _cached(
            est, "parameters_", (n_samples, sampling, "calibration", worlds, inner), random_state,
            lambda: [
                _bayesian_refits(est, inner, world_seed, False, generator=refitted[b], n_jobs=n_jobs)
                for b, world_seed in progress(enumerate(_world_seeds(random_state, worlds)), show,
                                              desc="calibration worlds", total=worlds)
            ],
        )
        factor = _calibration(estimate, answers, [[answer(list(t) + flat).ravel() for t in w] for w in second], level)
    if interval == "response":
        second = _cached(
            est, "parameters_", (n_samples, sampling, "response"), random_state,
            lambda: _response_refits(
                lambda theta, rng: _bayesian_simulations(est, 1, rng, generator=theta), refitted,
                _common_seed(random_state), n_jobs, show,
            ),
        )
        factor = response_factor(answers, [answer(list(t) + flat).ravel() for t in second])
    return _bands(estimate, answers, {v: list(states[v]) for v in variables}, level, interval, n_records,
                  denominators=denominators, calibration=factor)


def _bn_releases(est) -> list:
    """The releases a fitted ``DiscretePrivateMLE`` used, as a list."""
    return est.release_ if isinstance(est.release_, list) else [est.release_]


def _refit_records(releases) -> int:
    """The records each BN refit draws: the declared count, else the pooled noisy totals."""
    return max(1, int(round(pooled_n_records(releases))))


def _bn_families(est) -> tuple[list[tuple[str, ...]], list[np.ndarray]]:
    """A fitted BN's families ``(node, *parents)`` and log-CPDs shaped over them: its log-potentials (``Z = 1``)."""
    cpds = {c.variable: c for c in est.parameters_}
    families, theta = [], []
    for node in est._model.nodes():
        cpd = cpds[node]
        families.append(tuple(cpd.variables))
        with np.errstate(divide="ignore"):
            theta.append(np.log(np.asarray(cpd.get_values(), dtype=np.float64)).reshape(cpd.cardinality))
    return families, theta


def _bayesian_refits(
    est, n_samples: int, random_state, show: bool, generator=None, n_jobs: int = 1
) -> list[list[np.ndarray]]:
    """Log-CPDs (per family of [`_bn_families`][pgmpy_dp.uncertainty._bn_families]) of ``n_samples`` refits of a DiscretePrivateMLE.

    The releases of [`_bayesian_simulations`][pgmpy_dp.uncertainty._bayesian_simulations], fitted in
    order, in this process or in ``n_jobs`` worker processes (the same refits, bit for bit, whatever
    ``n_jobs`` is).
    """
    fit, simulated = _bayesian_simulations(est, n_samples, random_state, generator)
    return _map_refits(fit, simulated, n_jobs, show)


def _bayesian_simulations(est, n_samples: int, random_state, generator=None) -> tuple:
    """``(fit, releases)``: ``n_samples`` simulated releases of a DiscretePrivateMLE and the function refitting one.

    What each refit estimates is the estimator's law under its own fit, as the full
    re-run on sampled records did before: the same released tables (those a fit from
    releases used, or the fit's own family tables), counted from ``N`` records of the
    fitted network, fresh noise of each table's own mechanism and scale, and the fit's
    consistency step with its own settings, started where the point fit started (the
    projection's warm start). Starting CGM-EM from the point fit instead saves little
    (the EM iterations are 95% of a refit) and changes the law: EM iterations keep part of
    their start (measured at 20 iterations): on the same simulated tables the bands came out 21% narrower
    on average over 8 queries of asia and child, 80% on asia's P(either | xray) (docs/intervals.md). What is saved:
    integer codes from [`JunctionTree.sample`][pgmpy_dp.engine.junction_tree.JunctionTree.sample]
    instead of pgmpy sampling into a DataFrame, counts by ``bincount``, no pgmpy objects.
    The noise scales are the point fit's: a data-dependent allocation is held at the
    allocation the fit made rather than re-run on each sample (the default allocation
    is data-independent, so nothing changes there). ``generator``: log-CPDs (shaped as
    ``_bn_families``'s) to draw the records from instead of the fit's.

    The simulated tables are drawn here, one refit after the other from one random
    stream; ``fit`` (95% of the time) is deterministic and picklable, so the fits can
    run in worker processes ([`_map_refits`][pgmpy_dp.uncertainty._map_refits]).
    """
    families, theta_bn = _bn_families(est)
    if generator is not None:
        theta_bn = list(generator)
    domain = Domain(dict(est.state_names_))
    nodes = set(domain.attrs)
    releases = _bn_releases(est)
    # fit_release ignores pooled tables and tables over other attributes; a fit from records has its families
    kept = [[t for t in r if set(t.attrs) <= nodes and t.members is None] for r in releases]
    # the estimator's own consistency step and settings, on a bare copy (the fit stays untouched)
    step = DiscretePrivateMLE(
        consistency=est.consistency, max_iter=est.max_iter, show_progress=False,
        prior_weight=getattr(est, "prior_weight", "global"), cpd_prior=getattr(est, "cpd_prior", "gaussian"),
        prior_strength=getattr(est, "prior_strength", 1.0),
    )
    n = _refit_records(releases)
    sampler = JunctionTree(domain, families)
    rng = check_random_state(random_state) or np.random.default_rng()
    simulated = []
    for _ in range(n_samples):
        codes = sampler.sample(theta_bn, n, random_state=rng)
        simulated.append([
            MarginalRelease(
                r.domain,
                [dataclasses.replace(t, values=contingency_table(codes, domain, t.attrs) + _noise(t, rng)) for t in ts],
                r.mechanism, "seeded", r.n_records,
            )
            for r, ts in zip(releases, kept) if ts
        ])
    return functools.partial(_bayesian_refit, step, domain, families), simulated


def _bayesian_refit(step, domain, families, boot) -> list[np.ndarray]:
    """One refit of ``_bayesian_refits``: ``step``'s consistency step on the simulated releases ``boot``."""
    from .estimators.conditionals import cpd_values

    with warnings.catch_warnings(), np.errstate(divide="ignore"):
        warnings.simplefilter("ignore")  # convergence chatter of simulated fits
        if step.consistency == "likelihood":
            tables = [t for r in boot for t in r]
            fitted = step._likelihood_tables(domain, families, tables, pooled_n_records(boot))
        else:
            fitted = step._consistent_tables(boot[0], domain, families)
        return [np.log(cpd_values(t)).reshape(t.shape) for t in fitted]


def _response_refits(simulate, refits: list, common: int, n_jobs: int, show: bool) -> list:
    """The response band's second level: one refit drawn from each of ``refits``, all from one seed.

    ``simulate(generator, rng)`` returns ``(fit, [release])`` for one simulated release drawn from
    ``generator``; every draw starts from ``numpy.random.default_rng(common)`` (common random numbers,
    so the second answers move with their generators only). The draws are made here and only the fits
    run in ``n_jobs`` workers, so the refits are the same for every ``n_jobs``.
    """
    fit, simulated = None, []
    for theta in refits:
        fit, (boot,) = simulate(theta, np.random.default_rng(common))
        simulated.append(boot)
    return _map_refits(fit, simulated, n_jobs, show, desc="response refits")


def _map_refits(fit, simulated: list, n_jobs: int, show: bool, desc: str = "bootstrap refits") -> list:
    """``fit`` of every simulated release in order, in this process or in ``n_jobs`` worker processes.

    The releases were drawn beforehand from one random stream, and ``fit`` is deterministic, so the
    result is the same for every ``n_jobs``.
    """
    if n_jobs == 1:
        return list(progress(map(fit, simulated), show, desc=desc, total=len(simulated)))
    with concurrent.futures.ProcessPoolExecutor(max_workers=n_jobs) as pool:
        return list(progress(pool.map(fit, simulated), show, desc=desc, total=len(simulated)))


def _check_n_jobs(n_jobs) -> int:
    """Worker processes for the refits' fits: a positive integer, or -1 for every CPU."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or not (n_jobs >= 1 or n_jobs == -1):
        raise ValueError(f"n_jobs must be a positive integer or -1 (every CPU), got {n_jobs!r}")
    return (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)


def bootstrap_log_potentials(
    estimator,
    n_samples: int = 100,
    random_state=None,
    sampling: bool = True,
    show_progress: bool = True,
    generator: str | list = "fit",
    refit: str = "warm",
    n_jobs: int = 1,
) -> list[list[np.ndarray]]:
    """Refits of a fitted ``PrivateMarkovEstimator`` on tables simulated from its own fit.

    Each refit draws the measured tables anew (``N`` records sampled from the
    fitted model and counted, or with ``sampling=False`` the fitted expected
    counts), adds fresh noise of each table's own mechanism and scale, and runs
    the estimator's two stages (naive MLE warm-started from the fit, then its
    CGM-EM iterations) on them. With loopy inference records cannot be sampled
    exactly, so each table is drawn from its own multinomial (right marginal
    variance, independent across tables). Post-processing only: no budget.

    Parameters
    ----------
    estimator : PrivateMarkovEstimator
        A fitted estimator.
    n_samples : int
        Number of refits (at least 2).
    random_state : int or numpy.random.Generator, optional
        Seed of the simulation.
    sampling : bool
        Draw the records (``True``) or keep the expected counts (noise only).
    show_progress : bool
        A progress bar over the refits.
    generator : "fit", "prior-free" or list of numpy.ndarray
        The model the records are drawn from. ``"fit"`` (default): the fit itself.
        ``"prior-free"``: the fit's CGM-EM re-run from the fit without its L2 prior
        (the estimator's iterations and tolerance), a less-shrunk model
        ([`prior_free_log_potentials`][pgmpy_dp.uncertainty.prior_free_log_potentials]).
        A list: log-potentials, one array per ``estimator.cliques_`` (for diagnosis:
        benchmarks/interval_spread.py draws from the TRUE model). Only the
        data-generating model changes: every refit still runs the estimator's
        settings, warm-started from the fit.
    refit : {"warm", "estimator"}
        ``"warm"`` (default): the estimator's two stages on the engine's arrays, the
        naive MLE warm-started from the fit and solved to ``tol * 1e-2``.
        ``"estimator"``: ``fit`` itself on a copy of the estimator, fed the simulated
        release (declaring a record count only if the real release did), so every
        setting the fit derives from the data (record count, regularisation, the naive
        warm start's cold start and tolerance) is derived the same way; slower (the
        fit's cold start and its pgmpy model). An option measured in docs/intervals.md.
    n_jobs : int
        Worker processes for the refits' fits (``-1``: one per CPU). The simulated tables
        are drawn in this process from one random stream, so the refits are the same, bit
        for bit, for every ``n_jobs``. Junction-tree fits only: with loopy inference the
        refits run one after the other on one engine, whose messages carry over (``n_jobs``
        must then be 1).

    Returns
    -------
    list of list of numpy.ndarray
        ``n_samples`` sets of log-potentials, one array per ``estimator.cliques_``.

    Examples
    --------
    >>> import pgmpy_dp
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> df = pd.DataFrame({"a": [0, 1] * 500, "b": [0, 0, 1, 1] * 250})
    >>> rel = df.dp.release([("a", "b")], epsilon=1.0, random_state=0, domain={"a": [0, 1], "b": [0, 1]})
    >>> est = pgmpy_dp.PrivateMarkovEstimator(method="naive-mle", show_progress=False)
    >>> _ = est.fit(DiscreteMarkovNetwork([("a", "b")]), rel)
    >>> fits = bootstrap_log_potentials(est, n_samples=3, random_state=0)
    >>> len(fits), fits[0][0].shape
    (3, (2, 2))
    """
    _check_estimator(estimator)
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer (bootstrap refits), got {n_samples!r}")
    fit, boots = _simulated_releases(estimator, n_samples, random_state, sampling, generator, refit, n_jobs)
    return _map_refits(fit, boots, _check_n_jobs(n_jobs), show_progress)


def _simulated_releases(estimator, n_samples: int, random_state, sampling: bool, generator, refit: str,
                        n_jobs: int) -> tuple:
    """``(fit, releases)``: the simulation half of ``bootstrap_log_potentials`` (same arguments).

    ``releases`` are drawn here from one random stream; ``fit`` refits one of them
    (deterministic and picklable, so ``_map_refits`` can run it in workers). ``n_jobs``
    is only checked against the engine: loopy inference needs 1.
    """
    rng = check_random_state(random_state) or np.random.default_rng()
    domain, cliques = estimator.domain_, list(estimator.cliques_)
    engine = make_inference(domain, cliques, estimator.inference_)
    theta_hat = [np.asarray(t, dtype=np.float64) for t in estimator.log_potentials_]
    if isinstance(generator, str):
        if generator not in _GENERATORS:
            raise ValueError(f"generator must be one of {_GENERATORS} or a list of log-potentials, got {generator!r}")
        theta_gen = theta_hat if generator == "fit" else prior_free_log_potentials(estimator)
    else:
        theta_gen = [np.asarray(t, dtype=np.float64) for t in generator]
    if [t.shape for t in theta_gen] != [t.shape for t in theta_hat]:
        raise ValueError(
            f"generator must hold one log-potential array per clique of the fit, shaped "
            f"{[t.shape for t in theta_hat]}, got {[t.shape for t in theta_gen]}"
        )
    n = float(estimator.n_records_)
    _check_record_level(estimator.releases_)
    tables = [t for r in estimator.releases_ for t in r.tables if any(set(t.attrs) <= set(c) for c in cliques)]
    marginals, _ = engine.marginals(theta_gen)
    # a pooled table is the sum of its members' tables (one record adds to each member)
    probs = [sum(_table_marginal(marginals, cliques, m) for m in _members(t)) for t in tables]
    n_draw = max(1, int(round(n)))
    if refit not in ("warm", "estimator"):
        raise ValueError(f"refit must be 'warm' or 'estimator', got {refit!r}")
    declared = next((r.n_records for r in estimator.releases_ if r.n_records is not None), None)
    n_jobs = _check_n_jobs(n_jobs)
    if n_jobs != 1 and not isinstance(engine, JunctionTree):
        raise ValueError(
            "n_jobs > 1 needs junction-tree inference: with inference='loopy' the refits run one after the "
            "other on one engine, whose messages carry over from call to call; leave n_jobs=1"
        )
    mechanism = estimator.releases_[0].mechanism
    boots = []
    for _ in range(n_samples):
        if not sampling:
            counts = [n * p for p in probs]
        elif isinstance(engine, JunctionTree):
            codes = engine.sample(theta_gen, n_draw, random_state=rng)
            counts = [sum(contingency_table(codes, domain, m) for m in _members(t)) for t in tables]
        else:
            counts = [
                sum(_multinomial(rng, n_draw, _table_marginal(marginals, cliques, m)) for m in _members(t))
                for t in tables
            ]
        noisy = [dataclasses.replace(t, values=c + _noise(t, rng)) for t, c in zip(tables, counts)]
        boots.append(MarginalRelease(domain, noisy, mechanism, "seeded", declared if refit == "estimator" else n))
    if refit == "estimator":
        fit = functools.partial(_refit_as_estimator, estimator)
    else:
        fit = functools.partial(_refit, estimator, engine, theta_hat=theta_hat, n=n)
    return fit, boots


def prior_free_log_potentials(estimator) -> list[np.ndarray]:
    """A fitted ``PrivateMarkovEstimator``'s CGM-EM re-run from its fit without the L2 prior.

    The estimator is regularised towards the uniform model, so data simulated from
    the fit come from a smoother model than the truth (rare states more common,
    dependence weaker). This model keeps the fit's start, measurements, record count,
    iterations and tolerance and drops only the prior: a less-shrunk generator for the
    refits (``generator="prior-free"``). A ``method="naive-mle"`` fit gets the
    unpenalised naive MLE from the fit instead.

    Examples
    --------
    >>> import pgmpy_dp
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> pairs = pd.DataFrame({"x": [0, 0, 1] * 400, "y": [0, 1, 1] * 400})
    >>> est = pgmpy_dp.PrivateMarkovEstimator(random_state=0, show_progress=False)
    >>> _ = est.fit(DiscreteMarkovNetwork([("x", "y")]), pairs, epsilon=1.0, domain={"x": [0, 1], "y": [0, 1]})
    >>> theta = prior_free_log_potentials(est)   # the same EM without the prior: close to the fit here
    >>> probs = lambda t: np.exp(t - np.logaddexp.reduce(t, axis=None))
    >>> theta[0].shape, bool(np.allclose(probs(theta[0]), probs(est.log_potentials_[0]), atol=0.01))
    ((2, 2), True)
    """
    _check_estimator(estimator)
    cliques, tied = list(estimator.cliques_), estimator.tied_
    engine = make_inference(estimator.domain_, cliques, estimator.inference_)
    theta_hat = [np.asarray(t, dtype=np.float64) for t in estimator.log_potentials_]
    n = float(estimator.n_records_)
    measurements, clique_tables = _measurements(estimator.releases_, cliques, tied)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if estimator.method == "naive-mle":
            return fit_log_potentials(
                engine, _naive_targets(cliques, clique_tables, n), 0.0, tied, init=theta_hat,
                max_iter=max(1000, estimator.max_iter_), tol=estimator.tol * 1e-2, warn=False,
            ).log_potentials
        return cgm_em(
            engine, measurements, n, 0.0, tied, init=theta_hat, max_iter=estimator.max_iter_, tol=estimator.tol,
            warn=False, accelerate=estimator.accelerate,
        ).log_potentials


# -- helpers -------------------------------------------------------------------------------


def _cached(estimator, fitted_attr: str, key: tuple, random_state, make):
    """``make()``, kept on ``estimator`` for the fit it belongs to and reused for the same key.

    The refits depend on the fitted model, ``n_samples``, ``sampling`` and the seed,
    never on the query. The fit is identified by the object its ``fitted_attr`` holds
    (a new fit makes a new one). A ``Generator`` is stateful, so it is never cached.
    """
    if random_state is not None and not isinstance(random_state, numbers.Integral):
        return make()
    key = (*key, None if random_state is None else int(random_state))
    fit = getattr(estimator, fitted_attr)
    store = estimator.__dict__.get("_bootstrap_refits")
    if store is None or store[0] is not fit:
        store = (fit, {})
        estimator.__dict__["_bootstrap_refits"] = store
    if key not in store[1]:
        store[1][key] = make()
    return store[1][key]



def _check_estimator(estimator) -> None:
    if not isinstance(estimator, PrivateMarkovEstimator):
        raise TypeError(
            f"estimator must be a fitted PrivateMarkovEstimator or DiscretePrivateMLE, got {type(estimator).__name__}"
        )
    if not hasattr(estimator, "log_potentials_"):
        raise ValueError("estimator is not fitted; call estimator.fit(model, data) first")


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


def _answerer(domain, cliques, inference: str, variables, evidence):
    """A function ``theta -> P(variables | evidence)`` (array in variable order) using the engine.

    Evidence is clamped by adding a unary log-potential (0 at the observed state,
    -inf elsewhere) per observed variable; unary cliques do not change the
    triangulation, so the query variables stay where they were.
    """
    clamp_cliques = [(v,) for v in evidence]
    clamps = []
    for v, state in evidence.items():
        arr = np.full(domain.size(v), -np.inf)
        arr[list(domain[v]).index(state)] = 0.0
        clamps.append(arr)
    engine = make_inference(domain, cliques + clamp_cliques, inference)
    wanted = set(variables)
    if isinstance(engine, JunctionTree):
        if not any(wanted <= set(node) for node in engine.nodes):
            raise ValueError(
                f"variables {variables} lie in no clique of the model's junction tree {engine.nodes}; "
                "query_interval answers joint queries inside one clique (ask one variable at a time)"
            )
    else:
        host = [i for i, c in enumerate(engine.cliques) if wanted <= set(c)]
        if not host:
            raise ValueError(
                f"variables {variables} lie in no model clique {cliques} (loopy inference); "
                "ask one variable at a time"
            )

    def normalised(p) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            total = p.sum()
            return p / total if total > 0 else np.full(p.shape, np.nan)

    def evidence_from(clamped_log_z: float, theta) -> float:
        """``P(evidence)`` from the clamped ``log Z``: over ``Z`` free (the clamp cliques get zeros)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            free = engine.calibrate(list(theta) + [np.zeros_like(c) for c in clamps]).log_z
            p = float(np.exp(clamped_log_z - free))
        return p if np.isfinite(p) else 0.0

    def answer(theta) -> np.ndarray:
        full = list(theta) + clamps
        with np.errstate(invalid="ignore", divide="ignore"):
            if isinstance(engine, JunctionTree):
                p = engine.marginal(engine.calibrate(full), variables)
            else:
                marg, _ = engine.marginals(full)
                c = engine.cliques[host[0]]
                p = np.exp(log_marginal(np.log(marg[host[0]]), c, variables))
        return normalised(p)

    def evidence_probability(theta) -> float | None:
        """``P(evidence)`` under ``theta``: ``Z`` clamped over ``Z`` free, on this answer's own junction tree.

        Two calibrations of the engine the answer already built (the clamp cliques get zeros for
        the free ``Z``), instead of one new junction tree per evidence variable. ``None`` with
        loopy inference, whose Bethe ``log Z`` is not exact (the caller then chains answers).
        """
        if not clamps:
            return 1.0
        if not isinstance(engine, JunctionTree):
            return None
        with np.errstate(invalid="ignore", divide="ignore"):
            clamped = engine.calibrate(list(theta) + clamps).log_z
        return evidence_from(clamped, theta)

    def with_evidence(theta) -> tuple[np.ndarray, float | None]:
        """``(answer(theta), evidence_probability(theta))`` with one calibration fewer on a junction tree.

        The clamped calibration that answers the query also gives the clamped ``Z``.
        """
        if not clamps or not isinstance(engine, JunctionTree):
            return answer(theta), evidence_probability(theta)
        with np.errstate(invalid="ignore", divide="ignore"):
            calibrated = engine.calibrate(list(theta) + clamps)
            p = engine.marginal(calibrated, variables)
        return normalised(p), evidence_from(calibrated.log_z, theta)

    answer.evidence_probability = evidence_probability
    answer.with_evidence = with_evidence
    return answer


def _members(table) -> tuple:
    """The attribute tuples a table counts: its members if pooled, else its own attributes."""
    return table.members or (table.attrs,)


def _multinomial(rng, n: int, p: np.ndarray) -> np.ndarray:
    """``n`` records' counts over the cells of the probability table ``p``."""
    q = np.clip(p.ravel(), 0, None)
    return rng.multinomial(n, q / q.sum()).reshape(p.shape)


def _check_record_level(releases) -> None:
    """Refits simulate records, not individuals: refuse individual-level releases."""
    units = [r.privacy_unit for r in releases if r.privacy_unit is not None]
    if units:
        raise NotImplementedError(
            f"query_interval simulates record-level tables, but the fit used an individual-level release "
            f"(privacy_unit={units[0]!r}), whose noise and contribution bounding the simulation would not "
            "reproduce; use the point answer (pgmpy_dp.query) or fit from a record-level release"
        )


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


def _refit_as_estimator(estimator, boot: MarginalRelease) -> list[np.ndarray]:
    """``fit`` of a copy of the estimator (same parameters, same cliques and tied groups) on a simulated release."""
    clone = PrivateMarkovEstimator(**{k: getattr(estimator, k) for k in _estimator_params(estimator)})
    clone.show_progress = False
    cliques = list(estimator.cliques_)
    tied = [[cliques[i] for i in g] for g in estimator.tied_] if estimator.tied_ else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence chatter of simulated fits
        clone.fit(estimator.model_, boot, cliques=cliques, tied=tied)
    return clone.log_potentials_


def _estimator_params(estimator) -> list[str]:
    import inspect

    return [p for p in inspect.signature(PrivateMarkovEstimator.__init__).parameters if p != "self"]


def _refit(estimator, engine, boot: MarginalRelease, *, theta_hat, n: float):
    """The estimator's own two stages on simulated tables, warm-started from the fitted parameters.

    The naive stage fits the targets and L2 weight the estimator's own first stage used (for
    CGM-EM its ``warm_start_`` targets and ``regularization_["warm-start"]``), EM its own weight.
    """
    cliques, tied, reg = estimator.cliques_, estimator.tied_, estimator.regularization_
    measurements, clique_tables = _measurements([boot], cliques, tied)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        targets = _start_targets(getattr(estimator, "warm_start_", None), cliques, clique_tables, n)
        naive = fit_log_potentials(
            engine, targets, reg.get("warm-start", reg["naive-mle"]) / n, tied, init=theta_hat,
            max_iter=max(1000, estimator.max_iter_), tol=estimator.tol * 1e-2, warn=False,
        )
        if estimator.method == "naive-mle":
            return naive.log_potentials
        result = cgm_em(
            engine, measurements, n, reg["cgm-em"] / n, tied,
            init=naive.log_potentials, max_iter=estimator.max_iter_, tol=estimator.tol, warn=False,
            accelerate=estimator.accelerate,
        )
    return result.log_potentials
