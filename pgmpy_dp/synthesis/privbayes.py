"""PrivBayes: a private Bayesian network chosen greedily, then fitted to noisy family tables.

Zhang, Cormode, Procopiuc, Srivastava and Xiao (2017), "PrivBayes" (ACM TODS 42(4)). The first attribute
is drawn uniformly at random; each later step picks, with the exponential mechanism, one pair (attribute
not yet placed, parent set among the placed ones). The family tables are released with discrete Laplace or
Gaussian noise and the CPDs fitted to them by likelihood
([`DiscretePrivateMLE.fit_release`][pgmpy_dp.estimators.bayesian.DiscretePrivateMLE.fit_release]).

Departures from the paper (docs/synthesis.md): the score is the paper's distance on counts
([`independence_score`][pgmpy_dp.synthesis.privbayes.independence_score]), whose sensitivity does not depend
on the private ``n``; the candidates are the maximal parent sets under the theta-usefulness cap (`DEFAULT_THETA`,
with a noisy or declared record count); the budget split is
[`privbayes_split`][pgmpy_dp.synthesis.privbayes.privbayes_split].
"""

from __future__ import annotations

import math
import numbers
import secrets
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._progress import progress
from ..estimators.allocation import error_optimal_allocation
from ..estimators.bayesian import DiscretePrivateMLE
from ..privacy.domain import DEFAULT_MAX_CELLS, Domain
from ..privacy.mechanisms import discrete_gaussian_noise, discrete_laplace_noise
from ..privacy.loss import PrivacyLoss, PureDP, privacy_loss
from ..privacy.parameters import check_positive
from ..privacy.random_state import check_random_state
from ..privacy.selection import exponential_mechanism, exponential_mechanism_rho
from ..tables.counter import Counter, as_counter
from ..tables.release import release_counts
from .method import Measurements, Method, Plan

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)  # pgmpy 1.1 deprecation notices on import
    from pgmpy.models import DiscreteBayesianNetwork

#: Share of the total budget spent on selecting the network (the paper's beta).
DEFAULT_STRUCTURE_FRACTION = 0.3

#: Share of the total spent on a noisy record count, when no public count is declared.
COUNT_FRACTION = 0.01

#: Least ratio of a family table's average count per cell to its noise scale (theta-usefulness).
#: The paper states the rule for replacement neighbours, whose noise on counts is twice ours at
#: the same budget: its theta = 4 is this 8 (the same cap on family cells).
DEFAULT_THETA = 8.0

#: Most (attribute, parent set) candidates scored in one selection step; beyond it the largest
#: parent sets are dropped (a rule on public sizes and earlier noisy choices only).
MAX_CANDIDATES = 20_000

#: Sensitivity of [`independence_score`][pgmpy_dp.synthesis.privbayes.independence_score] when one
#: record is added or removed. With ``E = N(x) N(pi) / n``, adding a record moves one count by 1
#: and moves ``E`` by at most ``sum |E' - E| <= (3n + 1) / (n + 1) < 3`` in total, so the score,
#: half the L1 distance, moves by less than ``(1 + 3) / 2``.
SCORE_SENSITIVITY = 2.0


def independence_score(joint: np.ndarray) -> float:
    """Half the L1 distance between counts ``N(x, pi)`` and their independence fit ``N(x) N(pi) / n``.

    ``n`` times the paper's ``R`` score; 0 when ``X`` and the parent set are independent in the
    data (and for an empty parent set). Its sensitivity is `SCORE_SENSITIVITY`.

    Parameters
    ----------
    joint : numpy.ndarray
        Counts with the attribute on axis 0 and the parent configurations on the other axes.

    Examples
    --------
    >>> independence_score(np.array([[10.0, 0.0], [0.0, 10.0]]))   # fully dependent
    10.0
    >>> independence_score(np.array([[5.0, 5.0], [5.0, 5.0]]))     # independent
    0.0
    """
    joint = np.asarray(joint, dtype=np.float64).reshape(joint.shape[0], -1)
    n = joint.sum()
    if n <= 0:
        return 0.0
    expected = np.outer(joint.sum(axis=1), joint.sum(axis=0)) / n
    return 0.5 * float(np.abs(joint - expected).sum())


class _TooMany(Exception):
    pass


def maximal_parent_sets(placed, sizes: Mapping[str, int], cap: float, max_parents: int,
                        limit: int | None = None) -> list[tuple[str, ...]]:
    """Parent sets among ``placed`` whose configurations number at most ``cap``, maximal under that cap.

    Maximal: ``max_parents`` members, or no other placed attribute fits within ``cap`` (the empty set
    when none fits). Sets keep the order of ``placed``.

    Parameters
    ----------
    placed : sequence of str
        The attributes already in the network.
    sizes : mapping of str to int
        Number of public states of each attribute.
    cap : float
        Largest product of the parents' sizes.
    max_parents : int
        Largest number of parents.
    limit : int, optional
        Raise ``OverflowError`` once more sets than this are found.

    Examples
    --------
    >>> maximal_parent_sets(["a", "b", "c"], {"a": 2, "b": 3, "c": 10}, cap=10, max_parents=3)
    [('a', 'b'), ('c',)]
    >>> maximal_parent_sets(["a", "b", "c"], {"a": 2, "b": 3, "c": 10}, cap=100, max_parents=1)
    [('a',), ('b',), ('c',)]
    """
    placed = list(placed)
    out: list[tuple[str, ...]] = []

    def visit(i: int, chosen: list[str], cells: float) -> None:
        if len(chosen) == max_parents or i == len(placed):
            if len(chosen) == max_parents or all(cells * sizes[a] > cap for a in placed if a not in chosen):
                out.append(tuple(chosen))
                if limit is not None and len(out) > limit:
                    raise _TooMany
            return
        a = placed[i]
        if cells * sizes[a] <= cap:
            visit(i + 1, [*chosen, a], cells * sizes[a])
        visit(i + 1, chosen, cells)

    try:
        visit(0, [], 1.0)
    except _TooMany:
        raise OverflowError(f"more than {limit} maximal parent sets") from None
    return out


@dataclass(frozen=True)
class PrivBayesSplit:
    """How PrivBayes spends its total budget, in the unit of the total (``epsilon`` or ``rho``).

    Attributes
    ----------
    unit : {"epsilon", "rho"}
    total : float
    count : float
        The noisy record count (0 when a public count is declared or there is one attribute).
    selections : tuple of float
        One per selection step (``d - 1``): its epsilon, or its rho (run at ``sqrt(8 rho_i)``).
    tables : float
        The family tables together.
    """

    unit: str
    total: float
    count: float
    selections: tuple[float, ...]
    tables: float

    def parts(self) -> list[float]:
        """Every part, whose exact (``math.fsum``) sum is the total."""
        return [self.count, *self.selections, self.tables]


def _exact_remainder(total: float, parts: list[float]) -> float:
    """The largest ``r`` with ``fsum(parts + [r]) <= total``, nudged up to equality when floats allow."""
    rest = total - math.fsum(parts)
    while math.fsum([*parts, rest]) > total:
        rest = math.nextafter(rest, -math.inf)
    while math.fsum([*parts, math.nextafter(rest, math.inf)]) <= total:
        rest = math.nextafter(rest, math.inf)
    return rest


def privbayes_split(total: float, n_attrs: int, *, unit: str = "epsilon",
                    structure_fraction: float = DEFAULT_STRUCTURE_FRACTION, count: bool = True) -> PrivBayesSplit:
    """The budget split of [`run_privbayes`][pgmpy_dp.synthesis.privbayes.run_privbayes].

    ``COUNT_FRACTION`` for the noisy record count (if ``count``, false when a public count is declared or
    ``degree=0``, and there is a selection step), ``structure_fraction`` over the ``n_attrs - 1`` selections
    in equal parts, the remainder for the tables: the parts sum to ``total`` exactly.

    Examples
    --------
    >>> s = privbayes_split(1.0, 5)
    >>> s.count, s.selections, round(s.tables, 6)
    (0.01, (0.075, 0.075, 0.075, 0.075), 0.69)
    >>> math.fsum(s.parts()) == 1.0
    True
    """
    if unit not in ("epsilon", "rho"):
        raise ValueError(f"unit must be 'epsilon' or 'rho', got {unit!r}")
    steps = max(int(n_attrs) - 1, 0)
    counted = total * COUNT_FRACTION if (count and steps) else 0.0
    each = total * structure_fraction / steps if steps else 0.0
    selections = (each,) * steps
    tables = _exact_remainder(total, [counted, *selections])
    return PrivBayesSplit(unit, total, counted, selections, tables)


def _selection_epsilon(split: PrivBayesSplit, i: int) -> float:
    """The epsilon of selection step ``i``; under zCDP the largest whose cost ``epsilon**2 / 8`` is within its rho."""
    value = split.selections[i]
    if split.unit == "epsilon":
        return value
    eps = math.sqrt(8.0 * value)
    while exponential_mechanism_rho(eps) > value:
        eps = math.nextafter(eps, 0.0)
    return eps


def _check_settings(degree, structure_fraction, theta, n_records) -> None:
    if degree is not None and (isinstance(degree, (bool, np.bool_)) or not isinstance(degree, numbers.Integral)):
        raise TypeError(f"degree must be None or a non-negative int (the most parents per node), got {degree!r}")
    if degree is not None and degree < 0:
        raise ValueError(f"degree must be None or a non-negative int (the most parents per node), got {degree!r}")
    fraction = check_positive(structure_fraction, "structure_fraction", "0.3")
    if not fraction + COUNT_FRACTION < 1.0:
        raise ValueError(
            f"structure_fraction must be in (0, {1 - COUNT_FRACTION}): the rest of the budget measures the "
            f"family tables; got {structure_fraction!r}, e.g. structure_fraction=0.3"
        )
    check_positive(theta, "theta", "8.0")
    if n_records is not None:
        check_positive(n_records, "n_records", "len(df) if the record count is public")


def _check_codes(codes, domain: Domain) -> Counter:
    """The counter of ``codes`` (a counter of the rows, or one valid code array per attribute of ``domain``)."""
    if not isinstance(codes, (Mapping, Counter)):
        raise TypeError(f"codes must map each attribute of domain to its integer codes, got {type(codes).__name__}")
    counter = as_counter(codes, domain)
    if not counter.n_rows:
        raise ValueError("the data has no rows; PrivBayes needs at least one record")
    return counter


def _check_domain(domain) -> None:
    if not isinstance(domain, Domain):
        raise TypeError(f"domain must be a pgmpy_dp.Domain, got {type(domain).__name__}")
    if len(domain.attrs) == 0:
        raise ValueError("domain has no attributes; declare the public states of at least one column")
    for a in domain.attrs:
        domain.check_table((a,))  # every node's table must be releasable, whatever parents it gets


def _check_inputs(codes, domain, loss, degree, structure_fraction, theta, n_records) -> tuple[Counter, str, float]:
    """The rows' counter, the budget's unit and its total, once every input is checked (nothing is spent)."""
    _check_domain(domain)
    _check_settings(degree, structure_fraction, theta, n_records)
    counter = _check_codes(codes, domain)
    if isinstance(loss, PureDP):
        return counter, "epsilon", loss.epsilon
    return counter, "rho", loss.rho


def _noisy_count(n_rows: int, budget: float, unit: str, rng) -> float:
    """The record count with discrete Laplace (scale 1/epsilon) or Gaussian (sigma 1/sqrt(2 rho)) noise, at least 1."""
    if unit == "epsilon":
        noise = discrete_laplace_noise(1, 1.0 / budget, random_state=rng)
    else:
        noise = discrete_gaussian_noise(1, 1.0 / math.sqrt(2.0 * budget), random_state=rng)
    return max(float(n_rows + noise[0]), 1.0)


def _cell_cap(n_hat: float, split: PrivBayesSplit, n_attrs: int, theta: float) -> float:
    """The theta-usefulness cap on a family's cells: average count ``n / cells`` at least ``theta`` noise scales.

    The noise is that of ``n_attrs`` tables sharing the tables' budget evenly (Laplace scale
    ``d / epsilon``, Gaussian sigma ``sqrt(d / (2 rho))``).
    """
    if split.unit == "epsilon":
        scale = n_attrs / split.tables
    else:
        scale = math.sqrt(n_attrs / (2.0 * split.tables))
    # never a family the release would refuse once the selection has spent its share
    return min(n_hat / (theta * scale), float(DEFAULT_MAX_CELLS))


def _candidates(remaining, placed, sizes, cap, degree) -> list[tuple[str, tuple[str, ...]]]:
    """(attribute, maximal parent set) pairs of one step; the degree drops until they number at most MAX_CANDIDATES."""
    k = len(placed) if degree is None else min(degree, len(placed))
    while True:
        out: list[tuple[str, tuple[str, ...]]] = []
        try:
            for x in remaining:
                left = MAX_CANDIDATES - len(out)
                sets = maximal_parent_sets(placed, sizes, cap / sizes[x], k, limit=left)
                out.extend((x, s) for s in sets)
        except OverflowError:
            k -= 1  # k = 0 gives one candidate per attribute, so this ends
            continue
        return out


def _select(codes, domain, split, cap, degree, first, show_progress, rng,
            recorder: Measurements | None = None) -> list[tuple[str, tuple[str, ...]]]:
    """The network's families in the order chosen; each goes to ``recorder`` (if given) as soon as it is drawn."""
    sizes = {a: domain.size(a) for a in domain.attrs}
    placed = [first]
    remaining = [a for a in domain.attrs if a != first]
    selected: list[tuple[str, tuple[str, ...]]] = [(first, ())]
    scores: dict[tuple[str, tuple[str, ...]], float] = {}  # a pair's score never changes: score it once
    for step in progress(range(len(remaining)), show_progress, "PrivBayes selection"):
        pairs = _candidates(remaining, placed, sizes, cap, degree)
        todo = [p for p in dict.fromkeys(pairs) if p not in scores]
        counted = [p for p in todo if p[1]]  # one pass over the rows for the step's new families
        scores.update((p, 0.0) for p in todo if not p[1])
        scores.update(zip(counted, map(independence_score, codes.tables([(x, *ps) for x, ps in counted]))))
        pick = exponential_mechanism(
            [scores[p] for p in pairs], _selection_epsilon(split, step), sensitivity=SCORE_SENSITIVITY, rng=rng
        )
        x, parents = pairs[pick]
        selected.append((x, parents))
        if recorder is not None:
            recorder.select((x, parents))
        placed.append(x)
        remaining.remove(x)
    return selected


def _table_budgets(domain: Domain, families, split: PrivBayesSplit) -> list[float]:
    cells = [domain.cells(f) for f in families]
    noise = "laplace" if split.unit == "epsilon" else "gaussian"
    budgets = [float(b) for b in error_optimal_allocation(cells, split.tables, noise=noise)]
    # the last table takes what the other parts leave, so that the whole run adds up exactly
    budgets[-1] = _exact_remainder(split.total, [split.count, *split.selections, *budgets[:-1]])
    return budgets


def run_privbayes(
    codes: Mapping[str, np.ndarray] | Counter,
    domain: Domain,
    *,
    epsilon: float | None = None,
    rho: float | None = None,
    rng=None,
    show_progress: bool = False,
    degree: int | None = None,
    structure_fraction: float = DEFAULT_STRUCTURE_FRACTION,
    theta: float = DEFAULT_THETA,
    n_records: float | None = None,
    recorder: Measurements | None = None,
):
    """PrivBayes on encoded data: a greedy private network, noisy family tables, our CPD fit.

    Spends exactly ``epsilon`` (pure DP, discrete Laplace tables) or ``rho`` (zCDP, discrete Gaussian
    tables), split by [`privbayes_split`][pgmpy_dp.synthesis.privbayes.privbayes_split]; the caller
    charges the total once.

    Parameters
    ----------
    codes : mapping of str to numpy.ndarray, or Counter
        Integer codes of every attribute of ``domain`` (see [`Domain.encode`][pgmpy_dp.privacy.domain.Domain.encode]),
        or a [`Counter`][pgmpy_dp.tables.counter.Counter] of the rows.
    domain : Domain
        The public domain; every attribute becomes a node.
    epsilon, rho : float
        Exactly one: the total pure-DP or zCDP budget (or a loss value as ``epsilon``: ``PureDP``
        spends epsilon, ``ZCDP`` and ``ApproxDP`` the rho they imply).
    rng, show_progress
        As for [`run_aim`][pgmpy_dp.synthesis.aim.run_aim] (the bar runs over the selection steps).
    degree : int, optional
        Most parents per node; ``None`` leaves the number to the theta-usefulness cap.
    structure_fraction : float
        Share of the budget for the selection steps.
    theta : float
        The usefulness ratio: a family may have at most ``n / (theta * noise scale)`` cells.
    n_records : float, optional
        A public record count; without it a noisy count is made (``COUNT_FRACTION`` of the budget).
    recorder : Measurements, optional
        Handed each noisy output as soon as it exists (the record count, each family, the tables'
        release); the first commits the caller's charge.

    Returns
    -------
    model : pgmpy.models.DiscreteBayesianNetwork
        The network, with CPDs over the public states.
    releases : list of MarginalRelease
        The noisy family tables (one release).
    selected : list of (str, tuple of str)
        Each node with its parents, in the order chosen; the first has none.

    Examples
    --------
    >>> import pgmpy_dp
    >>> df = pgmpy_dp.datasets.sample_network("asia", 5000, seed=0)
    >>> domain = pgmpy_dp.Domain.from_dataframe(df)
    >>> model, releases, selected = run_privbayes(domain.encode(df), domain, epsilon=1.0, rng=np.random.default_rng(0))
    >>> model.check_model(), len(selected), releases[0].epsilon < 1.0
    (True, 8, True)
    """
    loss = privacy_loss(epsilon, rho, who="run_privbayes", example="epsilon=1.0 (pure DP) or rho=0.5 (zCDP)")
    codes, unit, total = _check_inputs(codes, domain, loss, degree, structure_fraction, theta, n_records)
    rng = check_random_state(rng, "rng")
    recorder = Measurements() if recorder is None else recorder
    attrs = list(domain.attrs)
    split = privbayes_split(total, len(attrs), unit=unit, structure_fraction=float(structure_fraction),
                            count=n_records is None and degree != 0)
    first = attrs[int(rng.integers(len(attrs))) if rng is not None else secrets.randbelow(len(attrs))]
    selected = _select_network(codes, domain, split, codes.n_rows, n_records, degree, float(theta), first,
                               show_progress, rng, recorder)
    families = [(x, *parents) for x, parents in selected]
    budgets = _table_budgets(domain, families, split)
    release = recorder.release(release_counts(
        codes.tables(families), domain, families, budget=None, random_state=rng, label="PrivBayes family tables",
        n_records=n_records, **{unit: budgets},
    ))
    model = DiscreteBayesianNetwork()
    model.add_nodes_from(attrs)
    model.add_edges_from((p, x) for x, parents in selected for p in parents)
    estimator = DiscretePrivateMLE(show_progress=show_progress).fit_release(model, [release])
    model.add_cpds(*estimator.parameters_)
    return model, [release], selected


def _select_network(codes, domain, split, n_rows, n_records, degree, theta, first, show_progress, rng, recorder):
    """The families, the first node's (drawn without the data) first; noisy count and selections recorded."""
    recorder.selected.append((first, ()))  # data-free: kept, but no noise yet
    if len(domain.attrs) == 1:
        return [(first, ())]
    if split.count:
        n_hat = _noisy_count(n_rows, split.count, split.unit, rng)
        recorder.noise()  # the first noisy output: the charge stays from here on
        cap = _cell_cap(n_hat, split, len(domain.attrs), theta)
    elif n_records is not None:
        cap = _cell_cap(float(n_records), split, len(domain.attrs), theta)
    else:
        cap = 0.0  # degree 0: the empty parent set is the only candidate
    return _select(codes, domain, split, cap, degree, first, show_progress, rng, recorder)


class PrivBayes(Method):
    """PrivBayes behind the synthesizer's protocol: pure DP (``epsilon`` alone) or zCDP.

    Examples
    --------
    >>> from pgmpy_dp.privacy.loss import PureDP
    >>> PRIVBAYES.check(Domain({"a": [0, 1], "b": [0, 1]}), PureDP(1.0)).loss
    PureDP(epsilon=1.0)
    """

    name = "privbayes"

    def check(self, domain: Domain, loss: PrivacyLoss) -> Plan:
        _check_domain(domain)
        return Plan(domain, loss)

    def run(self, codes, plan: Plan, recorder: Measurements, rng, show_progress: bool):
        return run_privbayes(codes, plan.domain, epsilon=plan.loss, rng=rng, show_progress=show_progress,
                             recorder=recorder)


#: The PrivBayes method object of the synthesizer's registry.
PRIVBAYES = PrivBayes()
