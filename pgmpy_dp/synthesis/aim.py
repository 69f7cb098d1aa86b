"""AIM (McKenna, Mullins, Sheldon and Miklau 2022): adaptive, workload-aware selection of marginals.

AIM measures every 1-way marginal, then repeats: choose by the exponential mechanism the candidate
(a workload set or a subset, weighted by its overlap with the workload) the current model answers
worst, measure it with Gaussian noise, refit. The budget is annealed (half the noise when a
measurement barely moves the model), the model grows with the budget spent up to ``max_model_size``,
and the last round spends what is left. See docs/synthesis.md.
"""

from __future__ import annotations

import itertools
import math
import numbers
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._progress import BudgetBar
from ..privacy.domain import DEFAULT_MAX_CELLS, CellLimitError, Domain, DomainError
from ..privacy.loss import PrivacyLoss
from ..privacy.selection import exponential_mechanism, exponential_mechanism_rho
from ..tables.counter import as_counter
from .marginals import BYTES_PER_CELL, MarkovFit, check_noise_scale, fit_final_model, measure, model_megabytes
from .method import Measurements, Method, Plan

#: The default workload: every 3-way marginal with at most this many cells.
DEFAULT_WORKLOAD_CELLS = 10_000
#: Rounds planned per attribute; annealing and the last round usually end the run sooner.
ROUNDS_PER_ATTRIBUTE = 16
#: Share of each round's budget spent on selection (the rest on measurement).
SELECTION_SHARE = 0.1
#: EM maps per refit between rounds: each starts from the previous fit, which already fits every
#: earlier measurement, so a few maps absorb the new one (the published model gets a full fit).
ROUND_EM_MAPS = 10
#: Once the model passes this many megabytes, its round refits are shortened: a round's fit only ranks
#: the next candidates (the published model still gets the full fit).
SHORT_REFIT_MB = 1.0
#: EM maps of the published model's fit, from the last round's fit with the L2 weight before the floor
#: (docs/synthesis.md), whose flatter directions need more maps than the default budget.
FINAL_EM_MAPS = 60
#: L-BFGS iterations per M-step of a shortened refit.
ROUND_M_STEPS = 5
#: Belief-propagation sweeps per E-step of a shortened refit (a partial E-step keeps EM monotone).
ROUND_E_STEPS = 3

#: The wall clock of ``max_seconds`` (a seam for tests).
_clock = time.monotonic


@dataclass(frozen=True)
class AimPlan:
    """The checked workload: ``workload`` as ``(attrs, weight)`` pairs and ``candidates`` with their weights."""

    workload: tuple[tuple[tuple[str, ...], float], ...]
    candidates: dict[tuple[str, ...], float]


def _opening_sigma(domain: Domain, rho: float) -> float:
    rounds = ROUNDS_PER_ATTRIBUTE * len(domain.attrs)
    return math.sqrt(rounds / (2.0 * (1.0 - SELECTION_SHARE) * rho))


def _default_workload(domain: Domain) -> list[tuple[tuple[str, ...], float]]:
    """Every 3-way marginal of at most ``DEFAULT_WORKLOAD_CELLS`` cells (2-way, 1-way when there is none)."""
    attrs = domain.attrs
    for k in range(min(3, len(attrs)), 0, -1):
        sets = [c for c in itertools.combinations(attrs, k) if domain.cells(c) <= DEFAULT_WORKLOAD_CELLS]
        if sets:
            return [(c, 1.0) for c in sets]
    return [((a,), 1.0) for a in attrs]


def _parse_entry(domain: Domain, item) -> tuple[tuple[str, ...], float]:
    """One workload entry, ``attrs`` or ``(attrs, weight)``, checked against the public domain."""
    item, weight = _split_weight(item)
    attrs = (item,) if isinstance(item, str) else item
    if not isinstance(attrs, (tuple, list)) or not attrs or not all(isinstance(a, str) for a in attrs):
        raise TypeError(f"workload entry {item!r} must be a tuple of column names such as ('age', 'income')")
    _check_entry_columns(domain, tuple(attrs))
    return tuple(attrs), float(weight)


def _split_weight(item):
    """``(attrs, weight)`` of an entry, the weight 1 when it has none."""
    if (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], (tuple, list))
            and isinstance(item[1], numbers.Real)):
        item, weight = item
        if isinstance(weight, bool) or not (math.isfinite(weight) and weight > 0):
            raise ValueError(f"workload weight of {tuple(item)} must be a positive finite number, got {weight!r}")
        return item, weight
    return item, 1.0


def _check_entry_columns(domain: Domain, attrs: tuple[str, ...]) -> None:
    unknown = [a for a in attrs if a not in domain]
    if unknown:
        raise DomainError(
            f"workload names column(s) {unknown} that are not in the data (columns: {list(domain.attrs)}); "
            "fix the names or drop the entry"
        )
    if len(set(attrs)) != len(attrs):
        raise ValueError(f"workload entry {attrs} repeats a column; name each column once")
    cells = domain.cells(attrs)
    if cells > DEFAULT_MAX_CELLS:  # AIM may select any entry: refuse it before anything is spent
        raise CellLimitError(
            f"workload entry {attrs} has {cells:,} cells ({' x '.join(map(str, domain.shape(attrs)))}), "
            f"more than the {DEFAULT_MAX_CELLS:,} of one release, so AIM could select it only to fail after "
            "spending; drop it, split it into smaller sets or declare coarser domains for its columns"
        )


def _parse_workload(domain: Domain, workload) -> list[tuple[tuple[str, ...], float]]:
    if workload is None:
        return _default_workload(domain)
    if isinstance(workload, (str, bytes)) or not isinstance(workload, Sequence) or not workload:
        raise TypeError(
            f"workload must be a non-empty list of column tuples, optionally with weights, such as "
            f"[('age', 'income'), (('sex', 'income'), 2.0)], got {workload!r}"
        )
    return [_parse_entry(domain, item) for item in workload]


def check_aim(domain: Domain, *, rho: float, workload=None, max_model_size: float = 80.0) -> AimPlan:
    """Check AIM's inputs from public facts only and return its plan (nothing is spent).

    Refuses a workload naming unknown columns or holding a set larger than one release allows, a
    budget whose opening noise no sampler supports, and a ``max_model_size`` the 1-way model exceeds.

    Examples
    --------
    >>> d = Domain({"a": [0, 1], "b": [0, 1, 2]})
    >>> plan = check_aim(d, rho=1.0, workload=[("a", "b")])
    >>> plan.candidates
    {('a', 'b'): 2.0, ('a',): 1.0, ('b',): 1.0}
    >>> check_aim(d, rho=1.0, workload=[("a", "c")])
    Traceback (most recent call last):
    ...
    pgmpy_dp.privacy.errors.DomainError: workload names column(s) ['c'] that are not in the data (columns: ['a', 'b']); fix the names or drop the entry
    """
    parsed = _parse_workload(domain, workload)
    check_noise_scale(_opening_sigma(domain, rho), "AIM's opening measurements")
    oneway = model_megabytes(domain, [(a,) for a in domain.attrs])
    if oneway > max_model_size:
        raise ValueError(
            f"max_model_size={max_model_size:g} MB is below the {oneway:.3g} MB the 1-way marginals alone take; "
            "raise max_model_size or declare coarser domains"
        )
    return AimPlan(tuple(parsed), _candidates(parsed))


def _candidates(parsed) -> dict[tuple[str, ...], float]:
    """Every workload set and subset, once each, weighted by its overlap with the workload.

    The overlap weight sum_w w * |c & attrs| equals the sum over the candidate's attributes of the
    workload weight containing each, so it costs one pass over the workload, not one per candidate.
    """
    candidates: dict[tuple[str, ...], float] = {}
    seen: set[frozenset] = set()
    per_attr: dict[str, float] = {}
    for attrs, w in parsed:
        for a in set(attrs):
            per_attr[a] = per_attr.get(a, 0.0) + w
        for k in range(len(attrs), 0, -1):
            for sub in itertools.combinations(attrs, k):
                key = frozenset(sub)
                if key not in seen:
                    seen.add(key)
                    candidates[sub] = 0.0
    for c in candidates:
        candidates[c] = sum(per_attr.get(a, 0.0) for a in c)
    return candidates


def run_aim(
    codes,
    domain: Domain,
    *,
    rho: float,
    workload: AimPlan | None = None,
    max_model_size: float = 80.0,
    rng=None,
    show_progress: bool = False,
    recorder: Measurements | None = None,
    max_seconds: float | None = None,
):
    """Run AIM on encoded data; return ``(model, releases, selected)``.

    Parameters
    ----------
    codes, domain
        One integer code array per attribute (``Domain.encode``), or a
        [`Counter`][pgmpy_dp.tables.counter.Counter] of the rows, and the public domain.
    rho : float
        The zCDP budget, spent exactly.
    workload : AimPlan or list, optional
        A plan from [`check_aim`][pgmpy_dp.synthesis.aim.check_aim], or a workload it accepts
        (default: every 3-way marginal of at most 10,000 cells).
    max_model_size : float
        Largest model, in megabytes of junction-tree cells; the cap grows with the budget spent.
    rng : numpy.random.Generator, optional
        A seeded generator for experiments; ``None`` uses OpenDP's exact samplers.
    show_progress : bool
        Progress bar of the budget spent, in percent of ``rho``, with the time left.
    recorder : Measurements, optional
        Handed each release and selection as soon as it is drawn; the first commits the caller's charge.
    max_seconds : float, optional
        Wall-clock seconds for the rounds: once the time used plus the last round's time reaches it,
        the next round is the last and spends everything left, so ``rho`` is still spent exactly
        (the published model's fit comes after). See docs/decisions.md on its privacy.

    Returns
    -------
    model : pgmpy.models.DiscreteMarkovNetwork
        The network fitted to every measurement.
    releases : list of MarginalRelease
        The 1-way release, then one release per round.
    selected : list of tuple of str
        The marginal measured in each round, in order.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 3000)
    >>> codes = {"a": a, "b": a ^ (rng.random(3000) < 0.1), "c": rng.integers(0, 2, 3000)}
    >>> d = Domain({v: [0, 1] for v in "abc"})
    >>> model, releases, selected = run_aim(codes, d, rho=1.0, workload=[("a", "b"), ("b", "c")], rng=rng)
    >>> ("a", "b") in selected
    True
    """
    plan = workload if isinstance(workload, AimPlan) else check_aim(
        domain, rho=rho, workload=workload, max_model_size=max_model_size
    )
    check_max_seconds(max_seconds)
    start = _clock()
    recorder = Measurements() if recorder is None else recorder
    codes = as_counter(codes, domain)
    releases = recorder.releases
    attrs = list(domain.attrs)
    rounds = ROUNDS_PER_ATTRIBUTE * len(attrs)
    sigma = _opening_sigma(domain, rho)
    epsilon = math.sqrt(8.0 * SELECTION_SHARE * rho / rounds)
    oneway_rho = len(attrs) * 0.5 / sigma**2
    recorder.release(measure(codes, domain, [(a,) for a in attrs], oneway_rho, rng, "AIM: 1-way marginals"))
    used = oneway_rho
    fit = MarkovFit(domain, max_iter=ROUND_EM_MAPS).fit(releases)
    exact: dict[tuple[str, ...], np.ndarray] = {}
    sizes: dict[tuple[str, ...], float] = {}
    bar = BudgetBar(show_progress, rho, "AIM: budget spent")
    bar.spent(used, round=0)
    round_seconds = 0.0
    for k in itertools.count(1):
        began = _clock()
        out_of_time = max_seconds is not None and began - start + round_seconds >= max_seconds
        last, sigma, epsilon, measure_rho = _round_budget(rho, used, sigma, epsilon, out_of_time)
        used += exponential_mechanism_rho(epsilon) + measure_rho
        pool = _pool(domain, plan, fit, max_model_size * min(1.0, used / rho), sizes)
        chosen = recorder.select(_choose(codes, domain, plan, fit, pool, exact, sigma, epsilon, rng))
        before = fit.n_records * fit.marginal(chosen)
        recorder.release(measure(codes, domain, [chosen], measure_rho, rng, f"AIM: round {k}"))
        if model_megabytes(domain, fit.cliques + [chosen]) > SHORT_REFIT_MB:
            fit.m_step_iter, fit.e_step_iter = ROUND_M_STEPS, ROUND_E_STEPS
        fit = fit.fit(releases)
        after = fit.n_records * fit.marginal(chosen)
        bar.spent(used, round=k)
        round_seconds = _clock() - began
        if last:
            break
        if np.abs(after - before).sum() <= math.sqrt(2.0 / math.pi) * sigma * before.size:
            sigma /= 2.0
            epsilon *= 2.0
    bar.close()
    estimator = fit_final_model(
        releases, domain, show_progress, start=fit, regularization=fit.scaled_regularization, max_iter=FINAL_EM_MAPS
    )
    return estimator.model_, list(releases), list(recorder.selected)


def check_max_seconds(max_seconds) -> None:
    """Refuse a ``max_seconds`` that is not ``None`` or a positive finite number of seconds.

    Examples
    --------
    >>> check_max_seconds(None), check_max_seconds(30)
    (None, None)
    >>> check_max_seconds(-1)
    Traceback (most recent call last):
    ...
    ValueError: max_seconds must be None or a positive number of seconds, got -1; e.g. max_seconds=300
    """
    if max_seconds is None:
        return
    if isinstance(max_seconds, bool) or not isinstance(max_seconds, numbers.Real) or not (
        math.isfinite(max_seconds) and max_seconds > 0
    ):
        raise ValueError(
            f"max_seconds must be None or a positive number of seconds, got {max_seconds!r}; e.g. max_seconds=300"
        )


def _round_budget(
    rho: float, used: float, sigma: float, epsilon: float, stop: bool = False
) -> tuple[bool, float, float, float]:
    """A round's ``(last, sigma, epsilon, measure_rho)``; the last round (too little left for two, or
    ``stop``) spends exactly what is left."""
    if stop or rho - used < 2.0 * (0.5 / sigma**2 + exponential_mechanism_rho(epsilon)):
        remaining = rho - used
        epsilon = math.sqrt(8.0 * SELECTION_SHARE * remaining)
        measure_rho = remaining - exponential_mechanism_rho(epsilon)
        return True, math.sqrt(0.5 / measure_rho), epsilon, measure_rho
    return False, sigma, epsilon, 0.5 / sigma**2


def _choose(codes, domain: Domain, plan: AimPlan, fit: MarkovFit, pool, exact, sigma: float, epsilon: float, rng):
    """A round's selection among ``pool``; ``exact`` caches the true tables across rounds."""
    todo = [c for c in pool if c not in exact]
    exact.update(zip(todo, codes.tables(todo)))  # one pass over the rows for the round's new candidates
    estimates = {c: fit.n_records * fit.marginal(c) for c in pool}
    return worst_approximated({c: exact[c] for c in pool}, estimates, plan.candidates, sigma, epsilon, rng)


def _pool(domain: Domain, plan: AimPlan, fit: MarkovFit, limit: float, sizes: dict | None = None) -> list[tuple[str, ...]]:
    """The candidates a round may select: inside a clique of the model, or keeping it within ``limit`` MB.

    Triangulating the model with each candidate costs a graph elimination per candidate and round, so
    two cheap tests come first: an upper bound (`_merged_megabytes`) admits most candidates at once, and
    ``sizes`` keeps the size last triangulated for each candidate, which rejects it while it is still
    above the limit (the model only grows, so its triangulated size does too, up to the elimination
    heuristic). Only the rest are triangulated.
    """
    sizes = {} if sizes is None else sizes
    merged = _MergeBound(domain, fit.jt)
    pool = []
    for c in plan.candidates:
        if merged.inside(c) or merged.megabytes(c) <= limit:
            pool.append(c)
        elif sizes.get(c, 0.0) <= limit:
            sizes[c] = model_megabytes(domain, fit.cliques + [c])
            if sizes[c] <= limit:
                pool.append(c)
    return pool


class _MergeBound:
    """An upper bound on the model size with one more clique, from the current junction tree alone.

    Merging the cliques of the subtree that joins a candidate's attributes into one clique with the
    candidate keeps a junction tree (the running intersection holds), so the cells of that tree bound
    those of the best triangulation. Edges with an empty separator are cut first: attributes in
    unconnected parts join through the new clique, not through unrelated cliques.
    """

    def __init__(self, domain: Domain, jt) -> None:
        self.domain = domain
        self.nodes = [frozenset(n) for n in jt.nodes]
        self.cells = [math.prod(s) for s in jt.shapes]
        self.total = sum(self.cells)
        self.up = {v: p if p is not None and self.nodes[v] & self.nodes[p] else None for v, p in jt.parent.items()}
        self.depth: dict[int, int] = {}
        self.root: dict[int, int] = {}
        for v in jt.order:  # breadth-first: a parent before its children
            p = self.up[v]
            self.depth[v] = 0 if p is None else self.depth[p] + 1
            self.root[v] = v if p is None else self.root[p]
        self.host: dict[str, int] = {}
        for i, n in enumerate(self.nodes):
            for a in n:
                if a not in self.host or self.cells[i] < self.cells[self.host[a]]:
                    self.host[a] = i

    def inside(self, c) -> bool:
        key = frozenset(c)
        return any(key <= n for n in self.nodes)

    def megabytes(self, c) -> float:
        """The model's megabytes with ``c`` merged in with the subtree joining its attributes (an upper bound)."""
        parts: dict[int, set[int]] = {}
        for a in c:
            v = self.host[a]
            parts.setdefault(self.root[v], set()).add(v)
        joined: set[int] = set()
        for frontier in parts.values():
            joined |= frontier
            while len(frontier) > 1:  # climb from the deepest node until the part's nodes meet
                v = max(frontier, key=self.depth.__getitem__)
                frontier.discard(v)
                frontier.add(self.up[v])
                joined.add(self.up[v])
        attrs = set(c).union(*(self.nodes[v] for v in joined))
        cells = self.total - sum(self.cells[v] for v in joined) + math.prod(self.domain.size(a) for a in attrs)
        return cells * BYTES_PER_CELL / 2**20


def worst_approximated(exact, estimates, weights, sigma: float, epsilon: float, rng=None) -> tuple[str, ...]:
    """AIM's selection: the exponential mechanism over ``exact``'s candidates with score
    ``w_r (||exact_r - estimate_r||_1 - sqrt(2 / pi) sigma cells_r)`` and sensitivity ``max w_r``.

    The subtracted term is the L1 error a measurement at noise ``sigma`` would itself carry.

    Examples
    --------
    >>> exact = {("a",): np.array([90.0, 10.0]), ("b",): np.array([50.0, 50.0])}
    >>> estimate = {("a",): np.array([50.0, 50.0]), ("b",): np.array([50.0, 50.0])}
    >>> worst_approximated(exact, estimate, {("a",): 1.0, ("b",): 1.0}, 1.0, 10.0, np.random.default_rng(0))
    ('a',)
    """
    pool = list(exact)
    scores = [
        weights[c] * (np.abs(exact[c] - estimates[c]).sum() - math.sqrt(2.0 / math.pi) * sigma * exact[c].size)
        for c in pool
    ]
    return pool[exponential_mechanism(scores, epsilon, max(weights[c] for c in pool), rng)]


class Aim(Method):
    """AIM behind the synthesizer's protocol: a zCDP method reading ``workload`` and ``max_model_size``.

    Examples
    --------
    >>> from pgmpy_dp.privacy.loss import ZCDP
    >>> plan = AIM.check(Domain({"a": [0, 1], "b": [0, 1]}), ZCDP(1.0), workload=[("a", "b")])
    >>> plan.loss, plan.options["workload"].candidates
    (ZCDP(rho=1.0), {('a', 'b'): 2.0, ('a',): 1.0, ('b',): 1.0})
    """

    name = "aim"
    settings = ("workload", "max_model_size", "max_seconds")

    def check(self, domain: Domain, loss: PrivacyLoss, workload=None, max_model_size: float = 80.0,
              max_seconds: float | None = None) -> Plan:
        check_max_seconds(max_seconds)
        plan = check_aim(domain, rho=self.zcdp_rho(loss), workload=workload, max_model_size=float(max_model_size))
        return Plan(domain, loss, {"workload": plan, "max_model_size": float(max_model_size),
                                   "max_seconds": max_seconds})

    def run(self, codes, plan: Plan, recorder: Measurements, rng, show_progress: bool):
        return run_aim(codes, plan.domain, rho=plan.loss.rho, rng=rng, show_progress=show_progress,
                       recorder=recorder, **plan.options)


#: The AIM method object of the synthesizer's registry.
AIM = Aim()
