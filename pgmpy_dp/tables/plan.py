"""Release planning: the tables a request names, their sensitivities and per-table budgets.

Everything here is validated before any budget is spent or any data is counted:
[`plan_tables`][pgmpy_dp.tables.plan.plan_tables] checks the requested tables against the public domain and
splits the budget so that every cell gets the same noise scale, and
[`requested_tables`][pgmpy_dp.tables.plan.requested_tables] normalises what a user passes as ``tables``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..privacy.domain import DEFAULT_MAX_CELLS, Domain, DomainError
from ..privacy.loss import LOSS_TYPES, PureDP, ZCDP, check_keywords, privacy_loss
from ..privacy.parameters import check_epsilon, check_rho
from ..privacy.mechanisms import MAX_SCALE
from .contribution import ContributionBound
from .pooled import Pooled


@dataclass(frozen=True)
class Planned:
    """One validated table of a release plan."""

    key: tuple  # attrs, or members for a pooled table
    attrs: tuple[str, ...]
    members: tuple[tuple[str, ...], ...] | None
    sensitivity: float
    budget: float  # this table's epsilon or rho

    @property
    def counted(self) -> tuple[tuple[str, ...], ...]:
        """The attribute tuples whose counts make up this table."""
        return (self.attrs,) if self.members is None else self.members


def plan_tables(
    domain: Domain,
    tables,
    epsilon=None,
    max_cells: int = DEFAULT_MAX_CELLS,
    *,
    rho=None,
    loss=None,
    contribution: ContributionBound | None = None,
):
    """Validate requested tables and per-table budgets before anything is spent.

    Exactly one of ``epsilon`` (discrete Laplace), ``rho`` (discrete Gaussian) or ``loss``. A total is
    split so that every cell gets the same noise: table ``i`` of sensitivity ``s_i`` gets
    ``epsilon * s_i / sum s_j`` or ``rho * s_i^2 / sum s_j^2`` (Bernstein et al. 2017, eq. 3), an even
    split for record-level tables; a sequence gives one budget per table. A
    [`Pooled`][pgmpy_dp.tables.pooled.Pooled] request has sensitivity ``len(members)`` per record, or
    ``contribution.sensitivity(len(members))`` under individual-level privacy.

    Returns
    -------
    (list of table keys, list of per-table epsilons or rhos)
        A key is the attribute tuple, or a pooled table's members tuple.

    Examples
    --------
    >>> dom = Domain({"a": ["x", "y"], "b": ["u", "v"]})
    >>> plan_tables(dom, [("a",), ("b",)], rho=1.0)
    ([('a',), ('b',)], [0.5, 0.5])
    >>> chain = Domain({"h0": ["x", "y"], "h1": ["x", "y"], "h2": ["x", "y"]})
    >>> plan_tables(chain, [Pooled([("h0", "h1"), ("h1", "h2")]), ("h0",)], epsilon=3.0)
    ([(('h0', 'h1'), ('h1', 'h2')), ('h0',)], [2.0, 1.0])
    """
    planned = plan_release(domain, tables, release_loss(epsilon, rho, loss), max_cells, contribution=contribution)
    return [p.key for p in planned], [p.budget for p in planned]


def _is_sequence(x) -> bool:
    return isinstance(x, (Sequence, np.ndarray)) and not isinstance(x, (str, bytes))


def release_loss(epsilon=None, rho=None, loss=None, *, who: str = "the release"):
    """The loss of a release from its public keywords: one value (a total) or a tuple of them (one per table).

    ``loss`` is a [`PureDP`][pgmpy_dp.privacy.loss.PureDP] (discrete Laplace noise),
    [`ZCDP`][pgmpy_dp.privacy.loss.ZCDP] or [`ApproxDP`][pgmpy_dp.privacy.loss.ApproxDP]
    (discrete Gaussian noise at the rho it allows), or a sequence of them, one per table;
    ``epsilon=`` and ``rho=`` are its shorthands (a number, or one per table). Exactly one of the
    three; ``who`` names the call in the error message.

    Examples
    --------
    >>> release_loss(epsilon=1.0)
    PureDP(epsilon=1.0)
    >>> release_loss(loss=[ZCDP(0.25), ZCDP(0.5)])
    (ZCDP(rho=0.25), ZCDP(rho=0.5))
    >>> release_loss(loss=ZCDP(0.5)) == release_loss(rho=0.5)
    True
    """
    example = "epsilon=1.0 (discrete Laplace noise, pure DP) or rho=0.5 (discrete Gaussian noise, zCDP)"
    if isinstance(loss, _Shorthand) and epsilon is None and rho is None:  # already resolved
        return loss
    if loss is None and rho is None and is_release_loss(epsilon):  # a value in the place of epsilon=
        loss, epsilon = epsilon, None
    if loss is not None:
        if epsilon is not None or rho is not None:
            raise ValueError(f"give the release's loss= or its shorthand epsilon=/rho=, not both; got loss={loss!r}")
        return _loss_value(loss)
    if not (_is_sequence(epsilon) or _is_sequence(rho)):
        return privacy_loss(epsilon=epsilon, rho=rho, who=who, example=example, with_delta=False)
    check_keywords(epsilon, rho, who=who, example=example, with_delta=False)
    return _Shorthand("epsilon", epsilon) if rho is None else _Shorthand("rho", rho)


def _loss_value(loss):
    """``loss=`` as given: one loss value, or a non-empty sequence of them (one per table)."""
    if isinstance(loss, LOSS_TYPES):
        return loss
    if _is_sequence(loss) and len(loss) and all(isinstance(x, LOSS_TYPES) for x in loss):
        return tuple(loss)
    raise TypeError(
        f"loss= must be a PureDP, ZCDP or ApproxDP value, or a non-empty sequence of them (one per table), "
        f"got {loss!r}; or give the shorthand epsilon= or rho="
    )


@dataclass(frozen=True)
class _Shorthand:
    """Per-table budgets given as numbers (``epsilon=[...]``): the planner checks each by its table's name."""

    name: str
    values: object

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self):
        return iter(self.values)

    def checked(self, keys) -> tuple:
        kind, check = (PureDP, check_epsilon) if self.name == "epsilon" else (ZCDP, check_rho)
        return tuple(kind(check(e, f"{self.name} for table {a}")) for e, a in zip(self.values, keys))


def is_release_loss(x) -> bool:
    """Whether ``x`` is already a release's loss value (one, one per table, or resolved shorthands)."""
    if isinstance(x, (_Shorthand, *LOSS_TYPES)):
        return True
    return _is_sequence(x) and len(x) > 0 and all(isinstance(v, LOSS_TYPES) for v in x)


def is_gaussian(loss) -> bool:
    """Whether a ``release_loss`` calls for discrete Gaussian noise (zCDP)."""
    if isinstance(loss, _Shorthand):
        return loss.name == "rho"
    # an (epsilon, delta) loss is a Gaussian release at the rho it allows
    return not isinstance(loss[0] if isinstance(loss, tuple) else loss, PureDP)


def plan_release(domain, tables, loss, max_cells, *, contribution=None) -> list[Planned]:
    """[`plan_tables`][pgmpy_dp.tables.plan.plan_tables] of a ``release_loss``, returning every fact of each table."""
    if isinstance(tables, (str, tuple, Pooled)) or not isinstance(tables, Sequence):
        raise TypeError(
            f"tables must be a list of attribute tuples such as [('a', 'b'), ('c',)], got {tables!r}"
        )
    if len(tables) == 0:
        raise ValueError("no tables requested; pass at least one attribute tuple")
    if isinstance(max_cells, (bool, np.bool_)) or not isinstance(max_cells, (int, np.integer)):
        raise TypeError(f"max_cells must be a positive int, got {max_cells!r} ({type(max_cells).__name__})")
    if max_cells < 1:
        raise ValueError(f"max_cells must be a positive int, got {max_cells!r}")
    specs = []  # (key, attrs, members, sensitivity)
    for t in tables:
        if isinstance(t, Pooled):
            members = t.check(domain, max_cells)
            specs.append((members, members[0], members, len(members)))
        else:
            a = domain.check_table(t, max_cells)
            specs.append((a, a, None, 1))
    sens = [float(n) if contribution is None else contribution.sensitivity(n) for *_, n in specs]
    granularity = 1.0 if contribution is None else contribution.granularity
    seen = set()
    for key, *_ in specs:
        if key in seen:
            raise DomainError(f"table {key} is requested twice; request it once or use two releases")
        seen.add(key)
    keys = [k for k, *_ in specs]
    split = isinstance(loss, (tuple, _Shorthand))
    gaussian = is_gaussian(loss)
    name = "rho" if gaussian else "epsilon"
    if split:
        if len(loss) != len(keys):
            raise ValueError(f"got {len(loss)} per-table {name}s for {len(keys)} tables; give one per table")
        values = loss.checked(keys) if isinstance(loss, _Shorthand) else loss
        if any(isinstance(v, PureDP) == gaussian for v in values):
            raise ValueError(
                f"a per-table loss mixes pure-DP and zCDP values {list(values)}; one release uses one "
                "mechanism: give all PureDP (discrete Laplace) or all ZCDP/ApproxDP (discrete Gaussian)"
            )
        per_table = [v.rho if gaussian else v.epsilon for v in values]
    else:
        total = loss.rho if gaussian else loss.epsilon
        # every cell gets the same noise scale: shares proportional to s_i (L1) or s_i^2 (L2)
        power = [s * s for s in sens] if gaussian else sens
        whole = math.fsum(power)
        per_table = [total * p / whole for p in power]
    for e, a, s in zip(per_table, keys, sens):
        scale = noise_scale(e, gaussian, s)
        if not scale / granularity <= MAX_SCALE:  # also catches an overflow to inf
            where = "" if split else f" (the total {total:g} split over {len(keys)} tables)"
            raise ValueError(
                f"{name} {e:g}{where} for table {a} is too small: its noise scale {scale:g} exceeds the "
                f"largest supported {MAX_SCALE * granularity:g}, and such a table would be pure noise; raise {name}"
            )
    try:
        math.fsum(per_table)  # what the budget is charged and the release records
    except OverflowError:
        raise ValueError(
            f"the per-table {name}s {[float(e) for e in per_table]} sum to more than the largest float; "
            f"give each table a smaller {name}"
        ) from None
    return [Planned(k, a, m, s, b) for (k, a, m, _), s, b in zip(specs, sens, per_table)]


def noise_scale(budget: float, gaussian: bool, sensitivity: float = 1.0) -> float:
    """Noise scale of one table: ``s/epsilon`` (Laplace) or ``s/sqrt(2 rho)`` (Gaussian), ``s`` its sensitivity."""
    try:
        return sensitivity * math.sqrt(1.0 / (2.0 * budget)) if gaussian else sensitivity / budget
    except ZeroDivisionError:  # a subnormal budget: 2 * rho or 1 / epsilon overflows
        return math.inf


def requested_tables(tables) -> list[tuple[str, ...] | Pooled] | object:
    """Normalise a table request: a column name becomes a 1-tuple, a Pooled stays; anything else is left to the planner.

    Examples
    --------
    >>> requested_tables([("a", "b"), "c", Pooled([("a",), ("c",)])])
    [('a', 'b'), ('c',), Pooled([('a',), ('c',)])]
    """
    if not isinstance(tables, Sequence) or isinstance(tables, (str, tuple)):
        return tables  # the release's own validation explains what a request looks like
    bad = [t for t in tables if not isinstance(t, (str, Sequence, Pooled))]
    if bad:
        raise TypeError(
            f"each table must be a column name or a tuple of column names, got {bad[0]!r}; "
            "e.g. tables=[('a', 'b'), 'c'], or a pgmpy_dp.Pooled([...]) of member tuples"
        )
    return [t if isinstance(t, Pooled) else (t,) if isinstance(t, str) else tuple(t) for t in tables]


def requested_columns(requested) -> list[str]:
    """The columns a normalised request reads, in first-use order (pooled members included).

    Examples
    --------
    >>> requested_columns([("a", "b"), Pooled([("c",), ("a",)])])
    ['a', 'b', 'c']
    """
    if not isinstance(requested, list):
        return []
    return list(dict.fromkeys(a for t in requested for m in (t.members if isinstance(t, Pooled) else (t,)) for a in m))
