"""Contribution bounding for individual-level privacy: each individual owns many rows.

Under ``privacy_unit=UserLevel(...)`` neighbours differ by all rows of one individual, bounded per table
as [`UserLevel`][pgmpy_dp.privacy.units.UserLevel] says: ``"normalize"`` (Bernstein et al. 2017, section 4.2)
gives each of an individual's ``K_u`` counted rows (member instances of a pooled table) weight ``1 / K_u``,
per-table sensitivity 1; ``"clip"`` keeps at most ``max_records`` rows, sensitivity ``max_records`` (times
``len(members)`` for a pooled table). Rows whose values on a table's attributes all equal ``skip_state``
are not counted there.

Integer noise on a fractional count is *not* private, so ``"normalize"`` weights live on the public grid
``1 / NORMALIZE_UNITS``: each individual splits exactly ``U = NORMALIZE_UNITS`` integer units over its
``K_u`` rows, ``floor(U / K_u)`` each plus one more for ``U mod K_u`` of them, a cyclic run from a uniformly
random row (so each row's expected weight is exactly ``1 / K_u``). The counts in units have sensitivity
``U``; the release adds integer noise of scale ``U`` times the count-scale and divides by ``U``
(the table's ``granularity`` is ``1 / U``).

Randomness (row sampling, rounding) comes from the release's seeded generator in experiments, else from
``secrets``; each individual's choice depends only on its own rows' random keys.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..privacy.domain import Domain, DomainError
from ..privacy.units import unit_keywords

CONTRIBUTIONS = ("normalize", "clip")

#: Integer units each individual splits over its rows of a table under ``"normalize"``
#: (a power of two, so ``units / NORMALIZE_UNITS`` is exact in floating point).
NORMALIZE_UNITS = 2**10


@dataclass(frozen=True)
class ContributionBound:
    """What one individual may contribute to a release (individual-level privacy).

    Attributes
    ----------
    column : str or None
        The column naming the individual (never released).
    contribution : {"normalize", "clip"}
        How each individual's rows are bounded (see the module docstring).
    max_records_per_user : int or None
        Rows kept per individual (sampled uniformly) before counting.
    skip_state : object or None
        A public state; a row whose values on a table's attributes all equal it is not counted there.

    Examples
    --------
    >>> b = ContributionBound("user", "clip", 3, None)
    >>> b.sensitivity(1), b.sensitivity(4), b.granularity
    (3.0, 12.0, 1.0)
    >>> ContributionBound("user", "normalize", None, "null").sensitivity(4)
    1.0
    """

    column: str | None
    contribution: str
    max_records_per_user: int | None
    skip_state: object | None

    def sensitivity(self, n_members: int) -> float:
        """L1 (and worst-case L2) sensitivity of a table with ``n_members`` member tables."""
        if self.contribution == "normalize":
            return 1.0
        return float(self.max_records_per_user * n_members)

    @property
    def granularity(self) -> float:
        """Spacing of the released values' lattice: ``1 / NORMALIZE_UNITS`` when normalising, else 1."""
        return 1.0 / NORMALIZE_UNITS if self.contribution == "normalize" else 1.0

    @property
    def record(self) -> dict:
        """The release's ``privacy_unit`` record (JSON-compatible)."""
        column = self.column
        if not (column is None or isinstance(column, (str, int))) or isinstance(column, bool):
            column = str(column)  # e.g. a MultiIndex label: JSON and the schema take a name
        return {
            "unit": "individual",
            "column": column,
            "contribution": self.contribution,
            "max_records_per_user": self.max_records_per_user,
            "skip_state": self.skip_state,
        }

    @classmethod
    def from_record(cls, record: Mapping) -> ContributionBound:
        """Inverse of [`record`][pgmpy_dp.tables.contribution.ContributionBound.record] (validated by the schema)."""
        return cls(record["column"], record["contribution"], record["max_records_per_user"], record["skip_state"])


def check_contribution(
    privacy_unit, contribution="normalize", max_records_per_user=None, skip_state=None
) -> ContributionBound | None:
    """Validate the individual-level keywords of a release; ``None`` for record-level privacy.

    ``privacy_unit`` is the column name (or any label, for callers that pass unit codes themselves).
    Raises a TypeError or ValueError naming the keyword before anything is counted or spent.

    Examples
    --------
    >>> check_contribution("user", "clip", 2).max_records_per_user
    2
    >>> check_contribution(None) is None
    True
    >>> check_contribution("user", "clip")
    Traceback (most recent call last):
    ...
    ValueError: contribution='clip' needs max_records (the rows kept per individual, e.g. UserLevel('user', max_records=10, contribution='clip')): it is the sensitivity of every table
    """
    if contribution not in CONTRIBUTIONS:
        raise ValueError(f"contribution must be one of {list(CONTRIBUTIONS)}, got {contribution!r}")
    if max_records_per_user is not None:
        k = max_records_per_user
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise TypeError(
                f"max_records must be a positive int (rows kept per individual) or None, got {k!r}"
            )
        if k < 1:
            raise ValueError(f"max_records must be at least 1, got {k!r}")
        max_records_per_user = int(k)
    if privacy_unit is None:
        given = [
            name
            for name, value, default in (
                ("contribution", contribution, "normalize"),
                ("max_records_per_user", max_records_per_user, None),
                ("skip_state", skip_state, None),
            )
            if value != default
        ]
        if given:
            raise ValueError(
                f"{given[0]} applies to individual-level privacy only; give privacy_unit= (the column naming "
                "the individual) or leave it out"
            )
        return None
    if contribution == "clip" and max_records_per_user is None:
        raise ValueError(
            "contribution='clip' needs max_records (the rows kept per individual, e.g. "
            f"UserLevel({privacy_unit!r}, max_records=10, contribution='clip')): it is the sensitivity of every table"
        )
    if skip_state is not None:
        try:
            hash(skip_state)
        except TypeError:
            raise TypeError(f"skip_state must be a single public state (hashable), got {skip_state!r}") from None
    return ContributionBound(privacy_unit, contribution, max_records_per_user, skip_state)


def contribution_bound(unit, units_given: bool = True) -> ContributionBound | None:
    """The bound a privacy unit value stands for: ``None`` (record level), a column label, a ``UserLevel``.

    ``units_given``: whether the caller holds the individuals' codes (``units=``); codes without a unit
    stand for unnamed individuals under ``"normalize"``. A ``ContributionBound`` is returned unchanged.

    Examples
    --------
    >>> from pgmpy_dp.privacy.units import UserLevel
    >>> contribution_bound(UserLevel("user", max_records=2, contribution="clip")).sensitivity(1)
    2.0
    >>> contribution_bound(None, units_given=False) is None
    True
    >>> contribution_bound(None).column is None   # codes of unnamed individuals
    True
    """
    if not units_given:
        if unit is not None:
            raise ValueError(
                "unit= names the individual-level unit, whose per-row codes go in units=; give both "
                "(or neither, for record-level privacy)"
            )
        return None
    if unit is None:
        return ContributionBound(None, "normalize", None, None)
    if isinstance(unit, ContributionBound):
        return unit
    return check_contribution(**unit_keywords(unit))


def encode_units(values, column: str = "privacy_unit") -> np.ndarray:
    """Integer codes ``0 .. n_units - 1`` of the individuals, one per row (``pd.factorize``).

    Raises a ValueError naming ``column`` if any value is missing (such a row cannot be bounded).

    Examples
    --------
    >>> encode_units(pd.Series(["u2", "u1", "u2"]), "user")
    array([0, 1, 0])
    >>> encode_units(pd.Series(["u2", None]), "user")
    Traceback (most recent call last):
    ...
    ValueError: privacy-unit column 'user' has missing values (NaN/None); every row must name its individual: drop or fill those rows
    """
    codes, _ = pd.factorize(values if isinstance(values, (pd.Series, pd.Index)) else np.asarray(values))
    codes = np.asarray(codes, dtype=np.int64)
    if (codes < 0).any():
        # no count: how many rows lack an individual is a private statistic
        raise ValueError(
            f"privacy-unit column {column!r} has missing values (NaN/None); every row must name "
            "its individual: drop or fill those rows"
        )
    return codes


def check_units(units, n_rows: int) -> np.ndarray:
    u = np.asarray(units)
    if u.ndim != 1 or not np.issubdtype(u.dtype, np.integer):
        raise TypeError(
            f"privacy-unit codes must be a 1-D integer array (e.g. from pd.factorize), got dtype {u.dtype} "
            f"and shape {u.shape}"
        )
    if len(u) != n_rows:
        raise ValueError("privacy-unit codes and the data have different numbers of rows; give one code per row")
    if len(u) and u.min() < 0:
        raise ValueError("privacy-unit codes must be non-negative (a negative code marks a missing individual)")
    return u.astype(np.int64, copy=False)


def _rank_in_group(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random rank of each element within its group (0 .. group size - 1), vectorised."""
    keys = rng.random(len(groups))
    order = np.lexsort((keys, groups))
    sorted_groups = groups[order]
    starts = np.searchsorted(sorted_groups, sorted_groups, side="left")
    rank = np.empty(len(groups), dtype=np.int64)
    rank[order] = np.arange(len(groups), dtype=np.int64) - starts
    return rank


def sample_per_unit(units: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Boolean mask keeping at most ``k`` rows of each individual, chosen uniformly at random.

    Examples
    --------
    >>> units = np.array([0, 0, 0, 1, 1, 2])
    >>> mask = sample_per_unit(units, 2, np.random.default_rng(0))
    >>> np.bincount(units[mask]).tolist()
    [2, 2, 1]
    """
    return _rank_in_group(np.asarray(units), rng) < k


def unit_rng(rng: np.random.Generator | None) -> np.random.Generator:
    """The generator for sampling and rounding: the release's seeded one, else a fresh secure seed.

    Examples
    --------
    >>> seeded = np.random.default_rng(0)
    >>> unit_rng(seeded) is seeded, isinstance(unit_rng(None), np.random.Generator)
    (True, True)
    """
    return rng if rng is not None else np.random.default_rng(secrets.randbits(128))


def _skip_codes(domain: Domain, attrs: Sequence[str], skip_state) -> list[int] | None:
    """Codes of ``skip_state`` in each attribute, or None if some attribute lacks it (nothing skipped)."""
    out = []
    for a in attrs:
        states = domain[a]
        if skip_state not in states:
            return None
        out.append(states.index(skip_state))
    return out


def check_skip_state(domain: Domain, tables: Sequence[Sequence[Sequence[str]]], skip_state) -> None:
    """Refuse a ``skip_state`` that no requested table's attributes all declare (a typo would skip nothing).

    Examples
    --------
    >>> dom = Domain({"a": ["null", "x"], "b": ["null", "y"]})
    >>> check_skip_state(dom, [[("a", "b")]], "null")  # declared by both attributes: accepted
    >>> check_skip_state(dom, [[("a", "b")]], "Null")
    Traceback (most recent call last):
    ...
    pgmpy_dp.privacy.errors.DomainError: skip_state 'Null' is not a declared state of all attributes of any requested table, so it would skip nothing; give a state declared in the domain (e.g. the null location)
    """
    if skip_state is None:
        return
    if not any(_skip_codes(domain, m, skip_state) is not None for members in tables for m in members):
        raise DomainError(
            f"skip_state {skip_state!r} is not a declared state of all attributes of any requested table, so "
            "it would skip nothing; give a state declared in the domain (e.g. the null location)"
        )


def contribution_weights(
    codes: Mapping[str, np.ndarray],
    domain: Domain,
    members: Sequence[Sequence[str]],
    units: np.ndarray,
    bound: ContributionBound,
    rng: np.random.Generator,
    kept: np.ndarray | None = None,
    order: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Per-row weights of each member table under ``bound`` (one array per member).

    ``kept`` is the row mask of ``max_records_per_user`` sampling (None: all rows). A row counts in a
    member unless it was not kept or all its values on the member's attributes equal
    ``bound.skip_state``; weights are 1 (``"clip"``) or the unit grid of the module docstring
    (``"normalize"``, shared over all members). ``order`` (``np.argsort(units, kind="stable")``) may be
    passed to reuse one sort over several tables.

    Examples
    --------
    >>> dom = Domain({"a": ["null", "x"], "b": ["null", "x"]})
    >>> codes = {"a": np.array([0, 1, 1, 0]), "b": np.array([0, 0, 1, 1])}
    >>> units = np.array([0, 0, 0, 1])
    >>> b = ContributionBound("user", "normalize", None, "null")
    >>> [w.tolist() for w in contribution_weights(codes, dom, [("a", "b")], units, b, np.random.default_rng(0))]
    [[0.0, 0.5, 0.5, 1.0]]
    """
    n = len(units)
    valid = []
    for m in members:
        v = np.ones(n, dtype=bool) if kept is None else kept.copy()
        skip = None if bound.skip_state is None else _skip_codes(domain, m, bound.skip_state)
        if skip is not None:
            all_skip = np.ones(n, dtype=bool)
            for a, c in zip(m, skip):
                all_skip &= np.asarray(codes[a]) == c
            v &= ~all_skip
        valid.append(v)
    if bound.contribution == "clip" or n == 0:
        return [v.astype(np.float64) for v in valid]
    # normalise: the individual's instances over all members share NORMALIZE_UNITS integer units
    n_units = int(units.max()) + 1
    if order is None and not np.all(units[1:] >= units[:-1]):  # rows grouped by individual need no sort
        order = np.argsort(units, kind="stable")
    sorted_units = units if order is None else units[order]
    first = np.searchsorted(sorted_units, np.arange(n_units))  # each individual's first sorted row
    k = np.zeros(n_units, dtype=np.int64)  # instances so far, then K_u
    positions = []
    for v in valid:
        vs = (v if order is None else v[order]).astype(np.int64)
        before = np.concatenate(([0], np.cumsum(vs)))  # valid rows before each sorted position
        within = before[:-1] - before[first][sorted_units]  # ... of the same individual
        pos = k[sorted_units] + within  # instances of earlier members come first
        if order is not None:
            pos = np.empty(n, dtype=np.int64)
            pos[order] = k[sorted_units] + within
        positions.append(pos)
        k += np.bincount(units[v], minlength=n_units)
    offset = rng.integers(0, np.maximum(k, 1))  # one uniform shift per individual
    out = []
    for v, pos in zip(valid, positions):
        u = units[v]
        ku = k[u]
        rank = (pos[v] + offset[u]) % ku
        share = NORMALIZE_UNITS // ku + (rank < NORMALIZE_UNITS % ku)
        w = np.zeros(n, dtype=np.float64)
        w[v] = share / NORMALIZE_UNITS  # exact: a power-of-two denominator
        out.append(w)
    return out


def per_unit_mass(weights: Sequence[np.ndarray], units: np.ndarray) -> np.ndarray:
    """Total weight of each individual in one table (for tests and audits): at most 1 when normalised.

    Examples
    --------
    >>> per_unit_mass([np.array([0.5, 0.5, 1.0])], np.array([0, 0, 1])).tolist()
    [1.0, 1.0]
    """
    return sum(np.bincount(units, weights=w) for w in weights)


def granularity_check(values: np.ndarray, granularity: float, where: str) -> np.ndarray:
    """``values / granularity`` as integers, or a ValueError: the noise is integer in these units."""
    scaled = values / granularity
    if scaled.size and not np.all(scaled == np.round(scaled)):
        raise ValueError(
            f"exact counts of table {where} are not multiples of the granularity {granularity:g}; integer "
            "noise on such counts would not be private (normalised counts must come from contribution_weights)"
        )
    return scaled

