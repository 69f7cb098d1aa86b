"""Black-box statistical privacy audits: an empirical lower bound on the epsilon a mechanism achieves.

A mechanism ``M`` is ε-differentially private if for every pair of
neighbouring inputs ``D``, ``D'`` and every event ``E`` on its output,
``P[M(D') ∈ E] <= exp(ε) P[M(D) ∈ E]`` and the same with ``D`` and ``D'``
swapped. [`audit_epsilon`][pgmpy_dp.testing.audit.audit_epsilon] runs a mechanism many times on two neighbouring
inputs, estimates the probabilities of a family of threshold events with
Clopper-Pearson intervals, and returns the largest ``log(p_high / p_low)``
that the intervals still support. With probability at least ``1 - alpha``
(Bonferroni over every event, both directions and both frames) this number
is at most the epsilon the mechanism truly achieves, so a result above the
claimed epsilon is evidence, at that confidence, that the claim is false.

The audit knows nothing about the mechanism: it only sees a matrix of
released numbers, one row per run. Events are chosen on a *separate*
selection batch (so the bound stays valid):

1. output coordinates whose mean differs between the two inputs by more
   than ``z_select`` standard errors are the *affected* candidates (at most
   ``max_affected``, most significant first), with the sign of the difference;
2. each run is summarised by ``y_j = sign_j * (x_j - mid_j)`` (``mid_j``
   halfway between the two means, snapped to a half-integer when the outputs
   are integers so that all ``y_j`` share one lattice; real-valued outputs are
   also divided by their standard deviation);
3. events are ``{min_j y_j >= t}`` and ``{sum_j y_j >= t}`` (more likely on
   ``D'``) and ``{max_j y_j <= t}`` and ``{sum_j y_j <= t}`` (more likely on
   ``D``), with ``j`` over the top ``k`` candidates for each ``k``, for
   thresholds ``t`` at tail quantiles of the selection batch on either input;
   the ``n_events`` events with the best bound on the selection batch are then
   measured on fresh runs.

For a count released with discrete Laplace noise, ``{min_j y_j >= 1/2}`` is
the event "every affected cell is above its count on ``D``", whose probability
ratio is exactly ``exp(ε)``; so the audit is tight for the release mechanism
up to sampling error.

Adding a mechanism: write ``one_run(data, rng) -> 1-D array`` (everything the
mechanism publishes, flattened, with a shape that does not depend on the data),
wrap it with [`run_in_loop`][pgmpy_dp.testing.audit.run_in_loop], and call [`audit_epsilon`][pgmpy_dp.testing.audit.audit_epsilon].

Examples
--------
>>> import numpy as np
>>> def one_run(count, rng):  # a count with discrete Laplace noise of scale 1 (epsilon = 1)
...     return np.array([count + rng.geometric(1 - np.exp(-1.0)) - rng.geometric(1 - np.exp(-1.0))])
>>> target = AuditTarget("laplace count", 1.0, run_in_loop(one_run))
>>> result = audit_epsilon(target, 10, 11, n_runs=4000, seed=0)
>>> bool(result.epsilon_lower <= 1.0), result.passed
(True, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import beta

__all__ = [
    "AuditResult",
    "AuditTarget",
    "audit_epsilon",
    "clopper_pearson",
    "run_in_loop",
]

#: Upper-tail probabilities (on the input where the event is rarer) at which thresholds are placed.
TAIL_LEVELS = (0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01)


@dataclass(frozen=True)
class AuditTarget:
    """A mechanism to audit.

    Attributes
    ----------
    name : str
        Shown in results and test ids.
    epsilon : float
        The epsilon the mechanism claims to spend per run.
    run : callable
        ``run(data, n_runs, seed) -> numpy.ndarray`` of shape ``(n_runs, n_outputs)``:
        ``n_runs`` independent executions of the mechanism on ``data``, each
        row everything one execution publishes. ``seed`` (an int) must make
        the rows reproducible when the mechanism is seeded; unseeded
        mechanisms may ignore it.
    """

    name: str
    epsilon: float
    run: Callable[[object, int, int], np.ndarray]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of [`audit_epsilon`][pgmpy_dp.testing.audit.audit_epsilon].

    ``epsilon_lower`` is a lower confidence bound (at ``1 - alpha``) on the
    epsilon the mechanism achieves; ``passed`` is ``epsilon_lower <= claimed``.
    """

    name: str
    claimed: float
    epsilon_lower: float
    alpha: float
    n_runs: int
    n_events: int
    best_event: str
    affected: tuple[int, ...]
    counts: tuple[int, int] = field(default=(0, 0))

    @property
    def passed(self) -> bool:
        return bool(self.epsilon_lower <= self.claimed)

    def __str__(self) -> str:
        return (
            f"{self.name}: epsilon lower bound {self.epsilon_lower:.3f} vs claimed {self.claimed:g} "
            f"({1 - self.alpha:.4g} confidence, {self.n_runs} runs per input, {self.n_events} events; "
            f"best event {self.best_event} with counts {self.counts}; affected outputs {list(self.affected)})"
        )


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds for a binomial proportion.

    Returns ``(lower, upper)`` such that each holds with probability at least
    ``1 - alpha`` on its own (each is a one-sided ``1 - alpha`` bound).

    Examples
    --------
    >>> lo, hi = clopper_pearson(0, 100, 0.05)
    >>> lo, round(hi, 4)
    (0.0, 0.0295)
    """
    lower = 0.0 if k == 0 else float(beta.ppf(alpha, k, n - k + 1))
    upper = 1.0 if k == n else float(beta.ppf(1 - alpha, k + 1, n - k))
    return lower, upper


def run_in_loop(one_run: Callable[[object, np.random.Generator], np.ndarray]):
    """Turn ``one_run(data, rng) -> 1-D array`` into a batch ``run(data, n_runs, seed)``.

    Each run gets its own generator spawned from ``seed``, so runs are
    independent and reproducible. A mechanism that draws OS randomness may
    ignore ``rng``.
    """

    def run(data, n_runs: int, seed: int) -> np.ndarray:
        children = np.random.SeedSequence(seed).spawn(n_runs)
        rows = [np.asarray(one_run(data, np.random.default_rng(s)), dtype=np.float64).ravel() for s in children]
        return np.stack(rows)

    return run


def _select(x0: np.ndarray, x1: np.ndarray, z_select: float, max_affected: int):
    """Affected coordinates (most significant first), their signs, centres and scales."""
    m0, m1 = x0.mean(axis=0), x1.mean(axis=0)
    v0, v1 = x0.var(axis=0, ddof=1), x1.var(axis=0, ddof=1)
    diff = m1 - m0
    se = np.sqrt(v0 / len(x0) + v1 / len(x1))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, np.abs(diff) / np.where(se > 0, se, 1), np.where(diff != 0, np.inf, 0.0))
    order = np.argsort(-z, kind="stable")
    idx = np.array([int(j) for j in order[:max_affected] if z[j] > z_select] or [int(order[0])])
    sign = np.where(diff[idx] >= 0, 1.0, -1.0)
    mid = (m0[idx] + m1[idx]) / 2
    integer = bool(np.all(x0[:, idx] == np.round(x0[:, idx])) and np.all(x1[:, idx] == np.round(x1[:, idx])))
    if integer:
        mid = np.floor(mid) + 0.5  # one half-integer lattice for every coordinate
        scale = np.ones_like(mid)
    else:
        scale = np.sqrt((v0[idx] + v1[idx]) / 2)
        scale = np.where(scale > 0, scale, 1.0)
    return idx, sign, mid, scale


def _summaries(x: np.ndarray, idx, sign, mid, scale) -> dict[tuple[int, str], np.ndarray]:
    """Per run, ``min``/``max``/``sum`` of ``y`` over the ``k`` most significant coordinates, each ``k``."""
    y = sign * (x[:, idx] - mid) / scale
    out = {}
    for k in range(1, len(idx) + 1):
        out[k, "min"] = y[:, :k].min(axis=1)
        out[k, "max"] = y[:, :k].max(axis=1)
        out[k, "sum"] = y[:, :k].sum(axis=1)
    return out


def _thresholds(values: np.ndarray, upper: bool) -> list[float]:
    levels = [1 - q for q in TAIL_LEVELS] if upper else list(TAIL_LEVELS)
    return sorted({float(t) for t in np.quantile(values, levels, method="nearest")})


def _candidate_events(f0: dict, f1: dict) -> list[tuple[tuple[int, str], float, bool]]:
    """Threshold events ``(statistic, t, up)``: ``up`` means ``{stat >= t}``, more likely on the neighbour."""
    events = []
    for key in f0:
        stat = key[1]
        if stat in ("min", "sum"):
            ts = _thresholds(f0[key], upper=True) + _thresholds(f1[key], upper=True)
            events += [(key, t, True) for t in sorted(set(ts))]
        if stat in ("max", "sum"):
            ts = _thresholds(f1[key], upper=False) + _thresholds(f0[key], upper=False)
            events += [(key, t, False) for t in sorted(set(ts))]
    return events


def _event_bound(event, g0: dict, g1: dict, n: int, a: float, delta: float = 0.0) -> tuple[float, tuple[int, int]]:
    stat, t, up = event
    if up:
        k_hi, k_lo = int(np.sum(g1[stat] >= t)), int(np.sum(g0[stat] >= t))
    else:
        k_hi, k_lo = int(np.sum(g0[stat] <= t)), int(np.sum(g1[stat] <= t))
    p_hi_lower = clopper_pearson(k_hi, n, a)[0]
    p_lo_upper = clopper_pearson(k_lo, n, a)[1]
    # (epsilon, delta)-DP: p_hi <= exp(epsilon) p_lo + delta, so epsilon >= log((p_hi - delta) / p_lo)
    bound = math.log((p_hi_lower - delta) / p_lo_upper) if p_hi_lower > delta else -math.inf
    return bound, (k_hi, k_lo)


def _describe(event) -> str:
    (k, stat), t, up = event
    y = f"{stat} of y over the top {k}"
    return f"{{{y} >= {t:g}}} (neighbour/data)" if up else f"{{{y} <= {t:g}}} (data/neighbour)"


def audit_epsilon(
    target: AuditTarget,
    data,
    neighbour,
    n_runs: int,
    seed: int = 0,
    alpha: float = 0.05,
    n_select: int | None = None,
    z_select: float = 2.5,
    max_affected: int = 8,
    n_events: int = 6,
    delta: float = 0.0,
) -> AuditResult:
    """Empirical lower bound on the epsilon ``target`` achieves on ``data`` vs ``neighbour``.

    Parameters
    ----------
    target : AuditTarget
        The mechanism and its claimed epsilon.
    data, neighbour : object
        Two neighbouring inputs (e.g. DataFrames differing by one record),
        passed unchanged to ``target.run``.
    n_runs : int
        Runs per input for measuring event probabilities.
    seed : int
        Derives independent seeds for the four batches (selection and
        measurement, on each input).
    alpha : float
        The returned bound is valid with probability at least ``1 - alpha``:
        every measured event's two one-sided Clopper-Pearson bounds use
        ``alpha / (2 n_events)`` (Bonferroni over events and both probabilities).
    n_select : int, optional
        Runs per input for choosing events (default ``max(n_runs // 4, 500)``).
    z_select, max_affected :
        A coordinate is a candidate if its means differ by more than ``z_select``
        standard errors; at most ``max_affected`` (the most significant) are kept,
        or the most significant one if none qualifies. Events are built on the
        top ``k`` candidates for every ``k``, so a spurious candidate costs nothing
        but the events that include it.
    n_events : int
        How many candidate events (those with the best bound on the selection
        batch) are measured.
    delta : float
        For an (epsilon, delta) claim (e.g. a zCDP mechanism converted at this
        delta): each event bounds ``log((p_high - delta) / p_low)``. 0 audits pure DP.

    Returns
    -------
    AuditResult
    """
    n_select = n_select or max(n_runs // 4, 500)
    s_sel0, s_sel1, s_meas0, s_meas1 = (
        int(s) for s in np.random.SeedSequence(seed).generate_state(4, dtype=np.uint32)
    )
    sel0 = np.asarray(target.run(data, n_select, s_sel0), dtype=np.float64)
    sel1 = np.asarray(target.run(neighbour, n_select, s_sel1), dtype=np.float64)
    if sel0.ndim != 2 or sel0.shape[1:] != sel1.shape[1:]:
        raise ValueError(
            f"{target.name}: run must return (n_runs, n_outputs) with the same n_outputs on both "
            f"inputs, got {sel0.shape} and {sel1.shape}; the output shape must not depend on the data"
        )
    idx, sign, mid, scale = _select(sel0, sel1, z_select, max_affected)
    f0, f1 = _summaries(sel0, idx, sign, mid, scale), _summaries(sel1, idx, sign, mid, scale)
    candidates = _candidate_events(f0, f1)
    # measure only the events that look strongest on the selection batch: they alone pay
    # for the Bonferroni correction, and choosing them on other runs keeps the bound valid
    a = alpha / (2 * n_events)
    sel_scores = [_event_bound(ev, f0, f1, n_select, a, delta)[0] for ev in candidates]
    order = np.argsort(-np.array(sel_scores), kind="stable")
    events = [candidates[i] for i in order[:n_events]]

    meas0 = np.asarray(target.run(data, n_runs, s_meas0), dtype=np.float64)
    meas1 = np.asarray(target.run(neighbour, n_runs, s_meas1), dtype=np.float64)
    g0 = _summaries(meas0, idx, sign, mid, scale)
    g1 = _summaries(meas1, idx, sign, mid, scale)
    best = (-math.inf, "none", (0, 0), 1)
    for ev in events:
        bound, counts = _event_bound(ev, g0, g1, n_runs, a, delta)
        if bound > best[0]:
            best = (bound, _describe(ev), counts, ev[0][0])
    return AuditResult(
        name=target.name,
        claimed=float(target.epsilon),
        epsilon_lower=best[0],
        alpha=alpha,
        n_runs=n_runs,
        n_events=len(events),
        best_event=best[1],
        affected=tuple(sorted(int(i) for i in idx[: best[3]])),
        counts=best[2],
    )
