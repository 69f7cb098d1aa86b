"""Noisy marginal releases: the measurement step and its self-describing artifact.

[`release_marginals`][pgmpy_dp.tables.release.release_marginals] counts the requested tables exactly, charges the
budget, and adds discrete Laplace noise; [`MarginalRelease`][pgmpy_dp.tables.release.MarginalRelease] is what
comes out: noisy tables plus every fact needed to use them correctly later
(epsilon and noise scale per table, sensitivity, mechanism, public domain).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .._progress import progress
from ..privacy.budget import (
    PrivacyBudget,
    check_delta,
    check_epsilon,
    check_rho,
    rho_to_epsilon_delta,
)
from ..privacy.domain import DEFAULT_MAX_CELLS, Domain, DomainError
from ..privacy.mechanisms import (
    GAUSSIAN_MECHANISM,
    MAX_SCALE,
    MECHANISM,
    discrete_gaussian_noise,
    discrete_gaussian_variance,
    discrete_laplace_noise,
    discrete_laplace_variance,
    sampler_for,
)
from ..privacy.random_state import check_random_state
from ..privacy.units import unit_keywords
from .contribution import (
    ContributionBound,
    _granularity_check,
    check_contribution,
    check_skip_state,
    contribution_weights,
    encode_units,
    sample_per_unit,
    unit_rng,
)
from .contribution import _check_units as _check_unit_codes
from .counting import contingency_table
from .pooled import Pooled, pooled_counts, table_key
from .schema import FORMAT as _FORMAT
from .schema import FORMAT_VERSION as _FORMAT_VERSION
from .schema import read_json_source, validate_release_dict

__all__ = [
    "NoisyTable",
    "Pooled",
    "MarginalRelease",
    "plan_tables",
    "pooled_record_count",
    "release_counts",
    "release_from_codes",
    "release_marginals",
    "requested_tables",
]

@dataclass(frozen=True, eq=False)
class NoisyTable:
    """One released table.

    Attributes
    ----------
    attrs : tuple of str
        Attributes, in axis order.
    values : numpy.ndarray
        Noisy counts, shape ``domain.shape(attrs)``; may be negative.
    epsilon : float or None
        Pure-DP budget spent on this table (discrete Laplace); ``None`` for a
        discrete Gaussian table, which has no pure-DP guarantee (see ``rho``).
    scale : float
        Noise scale of each cell: the discrete Laplace scale ``sensitivity / epsilon``,
        or the discrete Gaussian sigma ``sensitivity / sqrt(2 rho)``.
    sensitivity : float
        Sensitivity of this table alone, for one privacy unit: one record
        changes one cell by 1 (L1 and L2 sensitivity 1); a pooled table of
        ``m`` members has ``m`` (a record is in every member); an individual
        under ``contribution="normalize"`` adds mass at most 1 (sensitivity 1),
        under ``"clip"`` at most ``max_records_per_user`` per member.
    mechanism : str
        ``"discrete_laplace"`` (the default) or ``"discrete_gaussian"``.
    rho : float or None
        zCDP cost of a discrete Gaussian table (``sensitivity**2 / (2 scale**2)``),
        ``None`` for a discrete Laplace table.
    members : tuple of tuple of str, or None
        A pooled table's member attribute tuples (its values are the sum of the
        members' counts plus noise; ``attrs == members[0]`` names its axes);
        ``None`` for an ordinary table.
    granularity : float
        Spacing of the lattice the values and noise live on: 1 for counts;
        ``1 / NORMALIZE_UNITS`` for individual-normalised (fractional) counts,
        whose noise is integer noise of scale ``scale / granularity`` times
        ``granularity`` (see [`pgmpy_dp.tables.contribution`][pgmpy_dp.tables.contribution]).

    Examples
    --------
    >>> t = NoisyTable(("a",), np.array([3.0, 5.0]), None, 2.0, mechanism="discrete_gaussian", rho=0.125)
    >>> round(t.variance, 9)   # the summed discrete Gaussian variance: sigma^2 up to rounding
    4.0
    """

    attrs: tuple[str, ...]
    values: np.ndarray
    epsilon: float | None
    scale: float
    sensitivity: float = 1.0
    mechanism: str = MECHANISM
    rho: float | None = None
    members: tuple[tuple[str, ...], ...] | None = None
    granularity: float = 1.0

    @property
    def key(self) -> tuple:
        """What a release indexes this table by: ``attrs``, or ``members`` for a pooled table."""
        return self.attrs if self.members is None else self.members

    @property
    def variance(self) -> float:
        """Noise variance of each cell (for either mechanism, on the table's lattice)."""
        g = self.granularity
        variance = discrete_gaussian_variance if self.mechanism == GAUSSIAN_MECHANISM else discrete_laplace_variance
        if g == 1.0:
            return variance(self.scale)
        return variance(self.scale / g) * g * g


class MarginalRelease:
    """Differentially private contingency tables with their provenance.

    Built by [`release_marginals`][pgmpy_dp.tables.release.release_marginals] (or ``df.dp.release``); everything in it
    is safe to publish. Releases are immutable values.

    Attributes
    ----------
    domain : Domain
        Public states of every released attribute.
    tables : tuple of NoisyTable
        The noisy tables, in request order.
    epsilon : float or None
        Total pure-DP budget of the release (sum of the per-table epsilons);
        ``None`` for a discrete Gaussian release, whose guarantee is [`rho`][pgmpy_dp.tables.release.MarginalRelease.rho]
        (or [`epsilon_delta`][pgmpy_dp.tables.release.MarginalRelease.epsilon_delta]).
    rho : float or None
        Total zCDP cost of a discrete Gaussian release (sum of the per-table
        rhos); ``None`` for a discrete Laplace release.
    mechanism : str
        ``"discrete_laplace"`` (``epsilon=``) or ``"discrete_gaussian"`` (``rho=``).
    sampler : str
        Which sampling path drew the noise (``"opendp"``, ``"geometric"`` (Laplace) or
        ``"rejection"`` (Gaussian) for large tables, ``"seeded"``, or ``"mixed"`` when tables
        used different paths).
    n_records : float or None
        Declared public record count, if the custodian declared one; see
        [`n_records_estimate`][pgmpy_dp.tables.release.MarginalRelease.n_records_estimate] for the noisy estimate otherwise.
    privacy_unit : dict or None
        What one neighbouring change is: ``None`` for one record (the
        default), else the individual-level record
        ``{"unit": "individual", "column", "contribution",
        "max_records_per_user", "skip_state"}`` (see
        [`pgmpy_dp.tables.contribution`][pgmpy_dp.tables.contribution]).

    Examples
    --------
    >>> import pgmpy_dp
    >>> df = pd.DataFrame({"a": ["x", "y", "y"], "b": ["u", "u", "v"]})
    >>> public = {"a": ["x", "y"], "b": ["u", "v"]}  # declared states, never read from the data
    >>> rel = df.dp.release([("a", "b"), "a"], epsilon=1.0, domain=public, random_state=0)
    >>> rel.epsilon, rel.sensitivity, [t.scale for t in rel.tables]
    (1.0, 2.0, [2.0, 2.0])
    >>> rel.series(("a", "b")).index.names
    FrozenList(['a', 'b'])
    >>> MarginalRelease.from_json(rel.to_json()) == rel
    True

    A Gaussian release (zCDP) of the same two tables: sigma = sqrt(|C| / (2 rho))

    >>> g = df.dp.release([("a", "b"), "a"], rho=0.25, domain=public, random_state=0)
    >>> g.mechanism, g.epsilon, g.rho, [t.scale for t in g.tables]
    ('discrete_gaussian', None, 0.25, [2.0, 2.0])
    >>> round(g.epsilon_delta(1e-6)[0], 3)
    3.542
    """

    def __init__(
        self,
        domain: Domain,
        tables: Sequence[NoisyTable],
        mechanism: str = MECHANISM,
        sampler: str = "opendp",
        n_records: float | None = None,
        privacy_unit: Mapping | None = None,
    ) -> None:
        self.domain = domain
        self.tables = tuple(tables)
        self.mechanism = mechanism
        self.sampler = sampler
        self.n_records = n_records
        self.privacy_unit = None if privacy_unit is None else dict(privacy_unit)
        for t in self.tables:
            if t.members is not None and tuple(t.members[0]) != tuple(t.attrs):
                raise DomainError(f"a pooled table's attrs must be its first member: {t.attrs} vs {t.members[0]}")
        self._index = {t.key: t for t in self.tables}
        if len(self._index) != len(self.tables):
            raise DomainError("a release cannot hold the same attribute tuple twice; use two releases")

    # -- facts ---------------------------------------------------------------------------
    @property
    def epsilon(self) -> float | None:
        """Total pure-DP epsilon of this release (sequential composition over its tables).

        ``None`` when any table is discrete Gaussian: such a release has no
        pure-DP guarantee; see [`rho`][pgmpy_dp.tables.release.MarginalRelease.rho] and [`epsilon_delta`][pgmpy_dp.tables.release.MarginalRelease.epsilon_delta].
        """
        if any(t.epsilon is None for t in self.tables):
            return None
        return math.fsum(t.epsilon for t in self.tables)

    @property
    def rho(self) -> float | None:
        """Total zCDP cost of a discrete Gaussian release (``None`` for a pure-DP Laplace release)."""
        if any(t.rho is None for t in self.tables):
            return None
        return math.fsum(t.rho for t in self.tables)

    def epsilon_delta(self, delta: float) -> tuple[float, float]:
        """The (epsilon, delta)-DP guarantee of this release.

        A Gaussian release converts its [`rho`][pgmpy_dp.tables.release.MarginalRelease.rho] with the tight conversion of
        Canonne, Kamath and Steinke (2020) (see
        [`pgmpy_dp.privacy.rho_to_epsilon_delta`][pgmpy_dp.privacy.budget.rho_to_epsilon_delta]); a Laplace release is
        ``epsilon``-DP, so ``(epsilon, delta)`` holds for every delta.
        """
        delta = check_delta(delta)
        if self.rho is not None:
            return rho_to_epsilon_delta(self.rho, delta), delta
        if self.epsilon is None:
            raise ValueError("this release mixes mechanisms; convert each table's guarantee separately")
        return self.epsilon, delta

    @property
    def sensitivity(self) -> float:
        """L1 sensitivity of all tables concatenated: the sum of the tables' sensitivities.

        One record adds 1 to every ordinary table and ``len(members)`` to a pooled
        one; under individual-level privacy it is what one individual can add.
        """
        return math.fsum(t.sensitivity for t in self.tables)

    @property
    def l2_sensitivity(self) -> float:
        """L2 sensitivity of all tables concatenated (what calibrates Gaussian noise): ``sqrt(sum s_i^2)``,
        ``sqrt(|C|)`` for ordinary record-level tables."""
        return math.sqrt(math.fsum(t.sensitivity**2 for t in self.tables))

    @property
    def attrs(self) -> list[tuple[str, ...]]:
        """Keys of the released tables: attribute tuples, and members tuples for pooled tables."""
        return [t.key for t in self.tables]

    @property
    def n_records_estimate(self) -> float:
        """Record count: the declared one, or the inverse-variance weighted mean of table totals.

        A pooled table's total counts each record once per member, so it is
        divided by ``len(members)``. Under ``privacy_unit`` with
        ``contribution="normalize"`` every individual adds mass 1 to each table
        (pooled or not) in which it has a counted row, so the estimate is the
        number of *individuals* (those with a counted row), not of records;
        under ``"clip"`` it is the number of rows kept after sampling.
        The noisy estimate is post-processing of the release and costs no budget.
        """
        if self.n_records is not None:
            return float(self.n_records)
        return pooled_record_count(self.tables, normalized=self.normalized)

    @property
    def normalized(self) -> bool:
        """Whether the tables hold individual-normalised counts (``contribution="normalize"``)."""
        return self.privacy_unit is not None and self.privacy_unit.get("contribution") == "normalize"

    def __getitem__(self, attrs) -> NoisyTable:
        key = table_key(attrs)
        try:
            return self._index[key]
        except KeyError:
            raise KeyError(f"no table over {key} in this release; released: {self.attrs}") from None

    def __contains__(self, attrs) -> bool:
        try:
            return table_key(attrs) in self._index
        except TypeError:  # not iterable: never a key
            return False

    def __iter__(self):
        return iter(self.tables)

    def __len__(self) -> int:
        return len(self.tables)

    def __repr__(self) -> str:
        if self.rho is not None:
            cost = f"rho={self.rho:g}"
        elif self.epsilon is not None:
            cost = f"epsilon={self.epsilon:g}"
        else:
            cost = "mixed epsilon and rho"
        unit = "" if self.privacy_unit is None else f", privacy_unit={self.privacy_unit!r}"
        return (
            f"MarginalRelease({len(self.tables)} tables, {cost}, "
            f"mechanism={self.mechanism!r}, domain={self.domain!r}{unit})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MarginalRelease):
            return NotImplemented
        return (
            self.domain == other.domain
            and self.mechanism == other.mechanism
            and self.sampler == other.sampler
            and self.n_records == other.n_records
            and self.privacy_unit == other.privacy_unit
            and len(self.tables) == len(other.tables)
            and all(
                a.attrs == b.attrs
                and a.epsilon == b.epsilon
                and a.scale == b.scale
                and a.sensitivity == b.sensitivity
                and a.mechanism == b.mechanism
                and a.rho == b.rho
                and a.members == b.members
                and a.granularity == b.granularity
                and np.array_equal(a.values, b.values)
                for a, b in zip(self.tables, other.tables)
            )
        )

    __hash__ = None  # mutable numpy payload

    # -- views ---------------------------------------------------------------------------
    def _marginal(self, attrs) -> tuple[tuple[str, ...], np.ndarray]:
        """Noisy counts over ``attrs``, in that order (see [`_marginal_with_noise`][pgmpy_dp.tables.release.MarginalRelease._marginal_with_noise])."""
        key, values, _, _ = self._marginal_with_noise(attrs)
        return key, values

    def _marginal_with_noise(self, attrs) -> tuple[tuple[str, ...], np.ndarray, float, NoisyTable | None]:
        """Noisy counts over ``attrs``, in that order, from the released tables (post-processing).

        A released table over exactly these attributes (in any order) is used
        as is, transposed if needed. Otherwise every released table that
        contains all of ``attrs`` is summed down to them, and these marginals
        are combined with inverse-variance weights (a summed cell's noise
        variance is the table's cell variance times the number of cells summed).
        Pooled tables never stand in for an ordinary table (their cells hold
        every member's counts); a pooled key (a tuple of member tuples) is
        answered by pooled tables whose members restrict, position by position,
        to the requested ones (the sum of the members' marginals).
        Returns the axis labels (a pooled key's first member), the values, each
        cell's noise variance and, when the cells are one table's own cells
        (possibly transposed), that table (else ``None``).
        """
        key = table_key(attrs)
        if key in self._index:
            t = self._index[key]
            return t.attrs, t.values, t.variance, t
        if key and all(isinstance(m, tuple) for m in key):
            return self._pooled_marginal(key)
        wanted = set(key)
        if len(wanted) != len(key):
            raise KeyError(f"{key} names an attribute twice; name each once")
        ordinary = [t for t in self.tables if t.members is None]
        exact = [t for t in ordinary if set(t.attrs) == wanted]
        covering = exact or [t for t in ordinary if wanted <= set(t.attrs)]
        if not covering:
            raise KeyError(
                f"no released table contains all of {key}; released: {self.attrs}"
                + (" (pooled tables are indexed by their members tuple)" if len(ordinary) < len(self.tables) else "")
            ) from None
        return _combine(covering, key)

    def _pooled_marginal(self, key: tuple) -> tuple[tuple[str, ...], np.ndarray, float, NoisyTable | None]:
        """Marginal of pooled tables to the same sub-axes of every member (see `_marginal_with_noise`)."""
        labels = key[0]
        if len(set(labels)) != len(labels) or len({len(m) for m in key}) != 1:
            raise KeyError(f"{key} is not a valid pooled key: members of equal length, each naming an attribute once")
        covering = []
        for t in self.tables:
            if t.members is None or len(t.members) != len(key) or not set(labels) <= set(t.attrs):
                continue
            pos = [t.attrs.index(a) for a in labels]
            if all(tuple(m[i] for i in pos) == k for m, k in zip(t.members, key)):
                covering.append(t)
        if not covering:
            raise KeyError(
                f"no released pooled table has members that restrict to {key}; a pooled table can be "
                f"marginalised only to the same axes of every member; released: {self.attrs}"
            )
        return _combine(covering, labels)

    def series(self, attrs) -> pd.Series:
        """Noisy counts over ``attrs`` as a Series indexed by the public states (a MultiIndex for 2+).

        ``attrs`` may be a released table, the same attributes in another order,
        or a subset of one or more released tables: reordering and summing out
        attributes is post-processing and spends nothing. When several tables
        contain ``attrs``, their marginals are combined with inverse-variance
        weights (the most precise unbiased combination).

        Examples
        --------
        >>> df = pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"]})
        >>> rel = df.dp.release([("a", "b")], epsilon=1e6, domain={"a": ["x", "y"], "b": ["u", "v"]})
        >>> rel.series("a").tolist(), rel.series(("b", "a")).index.names
        ([1.0, 1.0], FrozenList(['b', 'a']))
        """
        key, values = self._marginal(attrs)
        if len(key) == 1:
            index = pd.Index(self.domain[key[0]], name=key[0])
        else:
            index = pd.MultiIndex.from_product([self.domain[a] for a in key], names=list(key))
        return pd.Series(values.ravel(), index=index, name="noisy_count")

    def frame(self, attrs) -> pd.DataFrame:
        """Noisy counts over ``attrs`` in long form: one row per cell, columns ``attrs + ['noisy_count']``.

        ``attrs`` may be reordered or a subset of released tables, as for [`series`][pgmpy_dp.tables.release.MarginalRelease.series].
        """
        return self.series(attrs).reset_index()

    def factor(self, attrs, clip: bool = False):
        """Noisy counts over ``attrs`` as a pgmpy ``DiscreteFactor`` (``clip`` sets negatives to 0).

        ``attrs`` may be reordered or a subset of released tables, as for [`series`][pgmpy_dp.tables.release.MarginalRelease.series].
        """
        from pgmpy.factors.discrete import DiscreteFactor

        key, values = self._marginal(attrs)
        values = np.clip(values, 0, None) if clip else values
        return DiscreteFactor(
            list(key),
            list(values.shape),
            values.ravel(),
            state_names={a: list(self.domain[a]) for a in key},
        )

    def interval(self, attrs, level: float = 0.95, clip: bool = False) -> pd.DataFrame:
        """Confidence intervals for the true counts over ``attrs``, one per cell (post-processing).

        Exact for a released table (in any attribute order): each interval
        covers its true count with probability at least ``level`` under the
        table's own noise distribution. For a subset summed from released
        tables the noise is a sum of noises and the interval uses a normal
        approximation with its exact variance. See
        [`pgmpy_dp.tables.intervals.release_interval`][pgmpy_dp.tables.intervals.release_interval] for the details.

        Examples
        --------
        >>> df = pd.DataFrame({"a": ["x", "y", "y"]})
        >>> rel = df.dp.release(["a"], epsilon=1.0, random_state=0, domain={"a": ["x", "y"]})
        >>> list(rel.interval("a").columns)
        ['estimate', 'lower', 'upper']
        """
        from .intervals import release_interval

        return release_interval(self, attrs, level=level, clip=clip)

    # -- serialisation -------------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-compatible dict holding everything in the release."""
        return {
            "format": _FORMAT,
            "format_version": _FORMAT_VERSION,
            "mechanism": self.mechanism,
            "sampler": self.sampler,
            "epsilon": self.epsilon,
            "rho": self.rho,
            "sensitivity": self.sensitivity,
            "n_records": self.n_records,
            "privacy_unit": None if self.privacy_unit is None else dict(self.privacy_unit),
            "domain": [[a, list(self.domain[a])] for a in self.domain.attrs],
            "tables": [
                {
                    "attrs": list(t.attrs),
                    "epsilon": t.epsilon,
                    "scale": t.scale,
                    "sensitivity": t.sensitivity,
                    "mechanism": t.mechanism,
                    "rho": t.rho,
                    "members": None if t.members is None else [list(m) for m in t.members],
                    "granularity": t.granularity,
                    "shape": list(t.values.shape),
                    "values": t.values.ravel().tolist(),
                }
                for t in self.tables
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> MarginalRelease:
        """Inverse of [`to_dict`][pgmpy_dp.tables.release.MarginalRelease.to_dict]; every field is validated first ([`pgmpy_dp.tables.schema`][pgmpy_dp.tables.schema]).

        Raises [`ReleaseFormatError`][pgmpy_dp.tables.schema.ReleaseFormatError] (a ``ValueError``)
        naming the first field that is missing, of the wrong type, or inconsistent.
        """
        data = validate_release_dict(data)
        domain = Domain({a: states for a, states in data["domain"]})
        tables = [
            NoisyTable(
                attrs=tuple(t["attrs"]),
                values=np.asarray(t["values"], dtype=np.float64).reshape(t["shape"]),
                epsilon=None if t["epsilon"] is None else float(t["epsilon"]),
                scale=float(t["scale"]),
                sensitivity=float(t["sensitivity"]),
                # version 1 artifacts (before Gaussian releases) hold only discrete Laplace tables
                mechanism=t["mechanism"],
                # a Laplace table's zCDP cost is implied by its epsilon (checked by the schema)
                rho=float(t["rho"]) if t["mechanism"] == GAUSSIAN_MECHANISM else None,
                # versions 1 and 2 hold no pooled or normalised tables (the schema fills the defaults)
                members=t["members"],
                granularity=t["granularity"],
            )
            for t in data["tables"]
        ]
        return cls(
            domain, tables, data["mechanism"], data["sampler"], data["n_records"], privacy_unit=data["privacy_unit"]
        )

    def to_json(self, path: str | Path | None = None) -> str | None:
        """Serialise to JSON text, or write it to ``path`` when given. Lossless for JSON-native states."""
        try:
            text = json.dumps(self.to_dict(), allow_nan=False)
        except TypeError as exc:
            raise TypeError(
                f"cannot write the release as JSON: {exc}. Domain states must be str, int, float or bool"
            ) from None
        except ValueError as exc:  # an infinite float state
            raise ValueError(f"cannot write the release as JSON: {exc}; domain states must be finite") from None
        if path is None:
            return text
        Path(path).write_text(text)
        return None

    @classmethod
    def from_json(cls, source: str | bytes | Path) -> MarginalRelease:
        """Read a release from JSON text or from a file written by [`to_json`][pgmpy_dp.tables.release.MarginalRelease.to_json].

        ``source`` is JSON text if it is ``bytes``, or a ``str`` that starts with
        ``{`` or ``[`` or parses as JSON (``"null"``, ``"3"``); any other ``str`` and
        every ``os.PathLike`` is a file path (pass a ``Path`` for a file named like
        JSON). A missing file raises ``FileNotFoundError`` naming it; anything that is
        not a valid artifact raises [`ReleaseFormatError`][pgmpy_dp.tables.schema.ReleaseFormatError].
        """
        return cls.from_dict(read_json_source(source))


def _combine(covering: Sequence[NoisyTable], key: tuple[str, ...]):
    """Inverse-variance combination of the covering tables' marginals over ``key`` (axis labels)."""
    wanted = set(key)
    total, weight = 0.0, 0.0
    for t in covering:
        other = tuple(i for i, a in enumerate(t.attrs) if a not in wanted)
        summed = t.values.sum(axis=other) if other else t.values
        kept = [a for a in t.attrs if a in wanted]
        summed = np.transpose(summed, [kept.index(a) for a in key])
        var = t.variance * (t.values.size // max(summed.size, 1))
        w = 1.0 / var if var > 0 else math.inf
        if math.isinf(w):  # a noiseless table (huge epsilon) is used alone
            return key, summed, 0.0, t
        total, weight = total + w * summed, weight + w
    alone = covering[0] if len(covering) == 1 and len(covering[0].attrs) == len(key) else None
    return key, total / weight, 1.0 / weight, alone


def pooled_record_count(tables: Sequence[NoisyTable], normalized: bool | Sequence[bool] = False) -> float:
    """Inverse-variance weighted mean of the tables' noisy totals (post-processing, no budget).

    A table's total has variance ``variance * cells``; tables so precise that
    their noise vanishes in double precision are used alone. A pooled table
    counts each record once per member, so its total is divided by
    ``len(members)``, unless ``normalized`` (individual-normalised tables, in
    which each individual has total mass 1 in every table, pooled or not; one
    flag for all tables, or one per table).

    Examples
    --------
    >>> a = NoisyTable(("x",), np.array([4.0, 6.0]), epsilon=1.0, scale=1.0)
    >>> b = NoisyTable(("y",), np.array([12.0]), epsilon=1.0, scale=1.0)
    >>> round(pooled_record_count([a, b]), 3)
    11.333
    """
    flags = [normalized] * len(tables) if isinstance(normalized, bool) else list(normalized)
    per = np.array([1.0 if f or t.members is None else float(len(t.members)) for t, f in zip(tables, flags)])
    totals = np.array([t.values.sum() for t in tables]) / per
    var = np.array([t.variance * t.values.size for t in tables]) / per**2
    exact = var <= 0  # a huge epsilon leaves a table noiseless (its weight would be 1/0)
    if exact.any():
        return float(np.mean(totals[exact]))
    w = 1.0 / var
    return float(np.sum(w * totals) / np.sum(w))


# -- the mechanism ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Planned:
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
    contribution: ContributionBound | None = None,
):
    """Validate requested tables and per-table budgets before anything is spent.

    Give exactly one of ``epsilon`` (discrete Laplace) or ``rho`` (discrete
    Gaussian). Either is a total, split so that every cell of every table gets
    the same noise scale: table ``i`` of sensitivity ``s_i`` gets
    ``epsilon * s_i / S`` (``S = sum s_i``, the L1 sensitivity of the whole
    release), i.e. Laplace scale ``S / epsilon`` everywhere (Bernstein et al.
    2017, eq. 3), or ``rho * s_i^2 / sum s_j^2``, i.e. Gaussian sigma
    ``sqrt(sum s_j^2) / sqrt(2 rho)``, the L2 sensitivity over ``sqrt(2 rho)``.
    With ordinary record-level tables (``s_i = 1``) that is an even split:
    ``epsilon/|C|`` each, scale ``|C|/epsilon``, or sigma ``sqrt(|C| / (2 rho))``.
    A sequence gives one budget per table instead (table ``i`` gets scale
    ``s_i/epsilon_i``, or sigma ``s_i / sqrt(2 rho_i)``).

    A [`Pooled`][pgmpy_dp.tables.pooled.Pooled] request has sensitivity
    ``len(members)`` per record; under ``contribution`` (individual-level
    privacy) the sensitivities are ``contribution.sensitivity(len(members))``.

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
    planned = _plan(domain, tables, epsilon, max_cells, rho=rho, contribution=contribution)
    return [p.key for p in planned], [p.budget for p in planned]


def _plan(domain, tables, epsilon, max_cells, *, rho=None, contribution=None) -> list[_Planned]:
    """[`plan_tables`][pgmpy_dp.tables.release.plan_tables], returning every fact of each table."""
    if epsilon is None and rho is None:
        raise TypeError(
            "epsilon must be a positive finite number, got None; give epsilon (discrete Laplace noise, "
            "pure DP), e.g. epsilon=1.0, or rho (discrete Gaussian noise, zCDP), e.g. rho=0.5"
        )
    if epsilon is not None and rho is not None:
        raise ValueError(
            f"give exactly one of epsilon (discrete Laplace noise, pure DP) or rho (discrete Gaussian "
            f"noise, zCDP), got both epsilon={epsilon!r} and rho={rho!r}"
        )
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
    gaussian = rho is not None
    name, check, budget = ("epsilon", check_epsilon, epsilon) if rho is None else ("rho", check_rho, rho)
    split = isinstance(budget, (Sequence, np.ndarray)) and not isinstance(budget, (str, bytes))
    if split:
        if len(budget) != len(keys):
            raise ValueError(f"got {len(budget)} per-table {name}s for {len(keys)} tables; give one per table")
        per_table = [check(e, f"{name} for table {a}") for e, a in zip(budget, keys)]
    else:
        total = check(budget, name)
        # every cell gets the same noise scale: shares proportional to s_i (L1) or s_i^2 (L2)
        power = [s * s for s in sens] if gaussian else sens
        whole = math.fsum(power)
        per_table = [total * p / whole for p in power]
    for e, a, s in zip(per_table, keys, sens):
        scale = _noise_scale(e, gaussian, s)
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
    return [_Planned(k, a, m, s, b) for (k, a, m, _), s, b in zip(specs, sens, per_table)]


def _noise_scale(budget: float, gaussian: bool, sensitivity: float = 1.0) -> float:
    """Noise scale of one table: ``s/epsilon`` (Laplace) or ``s/sqrt(2 rho)`` (Gaussian), ``s`` its sensitivity."""
    try:
        return sensitivity * math.sqrt(1.0 / (2.0 * budget)) if gaussian else sensitivity / budget
    except ZeroDivisionError:  # a subnormal budget: 2 * rho or 1 / epsilon overflows
        return math.inf


def release_counts(
    exact,
    domain: Domain,
    tables,
    epsilon=None,
    *,
    rho=None,
    budget: PrivacyBudget | None = None,
    random_state=None,
    max_cells: int = DEFAULT_MAX_CELLS,
    label: str | None = None,
    n_records: float | None = None,
    contribution: ContributionBound | None = None,
) -> MarginalRelease:
    """Add noise to already-counted exact tables: validate, charge, then draw.

    The measurement step of every release, for callers that count elsewhere
    (on a cluster, say). With ``epsilon``, each table gets discrete Laplace
    noise (pure DP); with ``rho``, discrete Gaussian noise (zCDP), calibrated
    to the L2 sensitivity (see [`plan_tables`][pgmpy_dp.tables.release.plan_tables]). All validation happens
    first; then the whole release is charged to ``budget`` at once (if
    given); then noise is drawn. Any exception before the noise leaves the
    budget untouched.

    The privacy guarantee assumes each table is a true contingency table of
    the private records (one record adds at most 1 to one cell of each
    table, ``len(members)`` to a pooled one; or, under ``contribution``, the
    individual-level bound it states); this function cannot check that, so
    counting correctly is the caller's job.

    Parameters
    ----------
    exact : mapping of attribute tuple to numpy.ndarray, or sequence of numpy.ndarray
        Exact counts, keyed by the attribute tuples of ``tables`` or aligned
        with them; each of shape ``domain.shape(attrs)``.
    domain : Domain
        The public domain.
    tables : list of tuple of str or Pooled
        Attribute tuples (or [`Pooled`][pgmpy_dp.tables.pooled.Pooled] requests) to release;
        a pooled table's exact counts are keyed by its members tuple.
    epsilon, rho : float or sequence of float
        Exactly one: a total budget, or one per table (see [`plan_tables`][pgmpy_dp.tables.release.plan_tables]).
    budget : PrivacyBudget, optional
        Accountant to charge (a rho release needs a zCDP budget).
    random_state : int or numpy.random.Generator, optional
        Seed for reproducible *experiments only*.
    max_cells : int
        Refuse tables with more cells than this.
    label : str, optional
        Ledger label.
    n_records : float, optional
        Declared public record count.
    contribution : ContributionBound, optional
        The individual-level bound the counts were made under (from
        [`contribution_weights`][pgmpy_dp.tables.contribution.contribution_weights]):
        it sets each table's sensitivity and lattice and is recorded as the
        release's ``privacy_unit``.

    Returns
    -------
    MarginalRelease

    Examples
    --------
    >>> dom = Domain({"a": ["x", "y"], "b": ["u", "v", "w"]})
    >>> exact = {("a",): np.array([4.0, 6.0]), ("a", "b"): np.array([[1.0, 2.0, 1.0], [3.0, 0.0, 3.0]])}
    >>> rel = release_counts(exact, dom, [("a",), ("a", "b")], rho=1.0, random_state=0)
    >>> rel.mechanism, rel.rho, rel[("a", "b")].values.shape
    ('discrete_gaussian', 1.0, (2, 3))
    """
    planned = _plan(domain, tables, epsilon, max_cells, rho=rho, contribution=contribution)
    gaussian = rho is not None
    _check_budget(budget, gaussian)
    counts = _check_exact(exact, domain, planned)
    g = 1.0 if contribution is None else contribution.granularity
    if g != 1.0:  # the noise is integer in units of g: the counts must be too
        counts = [_granularity_check(c, g, p.key) for c, p in zip(counts, planned)]
    n_records = _check_n_records(n_records)
    mechanism = GAUSSIAN_MECHANISM if gaussian else MECHANISM
    rng = check_random_state(random_state)
    sampler = sampler_for(sum(x.size for x in counts), rng, mechanism)
    label = label or "release " + ", ".join(_label(t, p) for t, p in zip(tables, planned))
    per_table = [p.budget for p in planned]

    def draw() -> list[NoisyTable]:
        # One sampler call per scale: OpenDP has a per-call cost of about 1 ms.
        groups: dict[float, list[int]] = {}
        for i, p in enumerate(planned):
            groups.setdefault(_noise_scale(p.budget, gaussian, p.sensitivity), []).append(i)
        noisy: list[NoisyTable | None] = [None] * len(planned)
        for scale, members in groups.items():
            sizes = [counts[i].size for i in members]
            # integer noise on the lattice of spacing g: scale / g in lattice units
            if gaussian:
                noise = discrete_gaussian_noise(sum(sizes), scale / g, random_state=rng, sampler=sampler)
            else:
                noise = discrete_laplace_noise(sum(sizes), scale / g, random_state=rng, sampler=sampler)
            for i, chunk in zip(members, np.split(noise, np.cumsum(sizes)[:-1])):
                p = planned[i]
                values = counts[i] + chunk.reshape(counts[i].shape)
                if g != 1.0:
                    values = values * g  # exact: g is a power of two
                noisy[i] = NoisyTable(
                    p.attrs, values, None if gaussian else p.budget, scale, sensitivity=p.sensitivity,
                    mechanism=mechanism, rho=p.budget if gaussian else None, members=p.members, granularity=g,
                )
        return noisy

    if budget is None:
        noisy = draw()
    else:
        with budget.charge(**_charge_for(budget, per_table, gaussian), label=label):
            noisy = draw()
    used = _attrs_in_order(domain, [a for p in planned for a in p.counted])
    unit = None if contribution is None else contribution.record
    return MarginalRelease(domain.project(used), noisy, mechanism, sampler, n_records, privacy_unit=unit)


def _label(request, planned: _Planned) -> str:
    """A table's name in the ledger: ``(a, b)``, or ``pooled name[(a, b) + ...]``."""
    if planned.members is None:
        return "(" + ", ".join(planned.attrs) + ")"
    name = getattr(request, "name", None) or "pooled"
    return f"{name}[" + " + ".join("(" + ", ".join(m) + ")" for m in planned.members) + "]"


def _check_budget(budget, gaussian: bool) -> None:
    if budget is not None and not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a pgmpy_dp.PrivacyBudget or None, got {type(budget).__name__}")
    if gaussian and budget is not None and budget.accounting != "zcdp":
        raise ValueError(
            "a rho= (Gaussian, zCDP) release cannot be charged to a pure-epsilon budget; create the "
            "budget as PrivacyBudget(rho=...) or PrivacyBudget.from_epsilon_delta(epsilon, delta), "
            "or release with epsilon="
        )


def _charge_for(budget: PrivacyBudget, per_table: list[float], gaussian: bool) -> dict:
    """What a release charges: its total rho, or its total epsilon.

    In a zCDP budget a Laplace release is charged per table: table ``i`` is
    ``epsilon_i``-DP, hence ``epsilon_i**2 / 2``-zCDP, and zCDP adds up, so the
    release costs ``sum(epsilon_i**2) / 2``, ``|C|`` times less than charging its
    total epsilon as one ``epsilon**2 / 2``. The float sum is rounded up so the
    charge never understates it.
    """
    if gaussian:
        return {"rho": math.fsum(per_table)}
    if budget.accounting == "zcdp" and len(per_table) > 1:
        rho = math.fsum(e * e / 2.0 for e in per_table)
        return {"rho": math.nextafter(rho, math.inf)}
    return {"epsilon": math.fsum(per_table)}


def _check_exact(exact, domain: Domain, planned: Sequence[_Planned]) -> list[np.ndarray]:
    """Exact counts aligned with the planned tables, each of the domain's shape, finite and non-negative."""
    if isinstance(exact, Mapping):
        keyed = {table_key(k): v for k, v in exact.items()}
        missing = [p.key for p in planned if p.key not in keyed]
        if missing:
            raise ValueError(f"exact has no counts for table(s) {missing}; give one array per requested table")
        arrays = [keyed[p.key] for p in planned]
    elif isinstance(exact, (Sequence, np.ndarray)) and not isinstance(exact, (str, bytes)):
        if len(exact) != len(planned):
            raise ValueError(f"exact has {len(exact)} arrays for {len(planned)} tables; give one per table")
        arrays = list(exact)
    else:
        raise TypeError(
            f"exact must map attribute tuples to count arrays, or be a list aligned with tables, "
            f"got {type(exact).__name__}"
        )
    out = []
    for p, x in zip(planned, arrays):
        a = p.key
        x = np.asarray(x)
        if x.dtype == object or not (np.issubdtype(x.dtype, np.integer) or np.issubdtype(x.dtype, np.floating)):
            raise TypeError(f"exact counts of table {a} must be a numeric array, got dtype {x.dtype}")
        if x.shape != domain.shape(p.attrs):
            raise ValueError(
                f"exact counts of table {a} have shape {x.shape}, but the domain gives {domain.shape(p.attrs)}"
            )
        x = x.astype(np.float64)
        if x.size and not (np.all(np.isfinite(x)) and x.min() >= 0):
            raise ValueError(f"exact counts of table {a} must be finite and non-negative")
        out.append(x)
    return out


def release_from_codes(
    codes: Mapping[str, np.ndarray],
    domain: Domain,
    tables,
    epsilon=None,
    budget: PrivacyBudget | None = None,
    random_state=None,
    max_cells: int = DEFAULT_MAX_CELLS,
    label: str | None = None,
    weights: np.ndarray | None = None,
    n_records: float | None = None,
    show_progress: bool = False,
    *,
    rho=None,
    units: np.ndarray | None = None,
    privacy_unit: str | None = None,
    contribution: str = "normalize",
    max_records_per_user: int | None = None,
    skip_state=None,
) -> MarginalRelease:
    """Release noisy tables from already-encoded data: count, then [`release_counts`][pgmpy_dp.tables.release.release_counts].

    Validation and counting happen first; then the whole release is charged to
    ``budget`` at once (if given); then noise is drawn. Any exception before the
    noise leaves the budget untouched. Give ``epsilon`` (discrete Laplace) or
    ``rho`` (discrete Gaussian).

    ``weights`` (0/1 per row) restricts counting to a subsample; with it, the
    caller is responsible for the privacy accounting of subsampling.
    ``show_progress`` draws a bar over the tables being counted if that takes
    more than a couple of seconds (it is off here: callers decide).

    ``units`` (one integer code per row, e.g. from ``pd.factorize`` of a user
    column) switches to individual-level privacy: ``contribution``,
    ``max_records_per_user`` and ``skip_state`` bound each individual's rows
    as in [`release_marginals`][pgmpy_dp.tables.release.release_marginals], and
    ``privacy_unit`` is the name recorded for the unit (the column's name).

    Examples
    --------
    >>> dom = Domain({"a": ["null", "x"], "b": ["null", "x"]})
    >>> codes = {"a": np.array([0, 1, 1, 0]), "b": np.array([0, 0, 1, 1])}
    >>> rel = release_from_codes(codes, dom, [("a", "b")], epsilon=1e6, units=np.array([0, 0, 0, 1]),
    ...                          privacy_unit="user", skip_state="null", random_state=0)
    >>> rel[("a", "b")].values.round(3).tolist()   # user 0: two counted rows of 1/2; user 1: one of 1
    [[0.0, 1.0], [0.5, 0.5]]
    >>> rel[("a", "b")].sensitivity, rel.privacy_unit["contribution"]
    (1.0, 'normalize')
    """
    if units is None:
        if privacy_unit is not None:
            raise ValueError(
                "privacy_unit names the individual-level unit, whose per-row codes go in units=; "
                "give both (or neither, for record-level privacy)"
            )
        bound = check_contribution(None, contribution, max_records_per_user, skip_state)
    else:
        bound = check_contribution(
            "individual" if privacy_unit is None else privacy_unit, contribution, max_records_per_user, skip_state
        )
        if privacy_unit is None:
            bound = ContributionBound(None, bound.contribution, bound.max_records_per_user, bound.skip_state)
    planned = _plan(domain, tables, epsilon, max_cells, rho=rho, contribution=bound)
    _check_budget(budget, rho is not None)  # before counting, which can take a while
    counted_attrs = [a for p in planned for a in p.counted]
    n_rows = _check_codes(codes, domain, _attrs_in_order(domain, counted_attrs), weights)
    if n_rows == 0:
        raise ValueError("the data has no rows; a release needs at least one record")
    n_records = _check_n_records(n_records)
    # one bincount per table: thousands of tables of a million rows take tens of seconds
    counted = progress(planned, show_progress, "counting tables")
    if bound is None:
        exact = [
            contingency_table(codes, domain, p.attrs, weights) if p.members is None
            else pooled_counts(codes, domain, p.members, weights)
            for p in counted
        ]
        rng = random_state
    else:
        units = _check_unit_codes(units, n_rows)
        if bound.skip_state is not None:
            _check_json_state(bound.skip_state)  # it is published in the release's privacy_unit record
            check_skip_state(domain, [p.counted for p in planned], bound.skip_state)
        # the release's own generator (seeded experiments) or a fresh secure one, drawn from in this
        # order: row sampling, rounding of normalised weights, then the noise
        rng = check_random_state(random_state)
        gen = unit_rng(rng)
        if weights is not None and not np.all(np.isin(np.asarray(weights, dtype=np.float64), (0.0, 1.0))):
            raise ValueError("with units=, weights must be a 0/1 subsample mask (rows with weight 0 are dropped)")
        kept = None if weights is None else np.asarray(weights, dtype=np.float64) > 0
        if bound.max_records_per_user is not None:
            sampled = sample_per_unit(units, bound.max_records_per_user, gen)
            kept = sampled if kept is None else kept & sampled
        # group the rows by individual once (counts do not depend on row order): every table's
        # weights are then linear-time scans
        order = np.argsort(units, kind="stable")
        codes = {a: np.asarray(codes[a])[order] for a in _attrs_in_order(domain, counted_attrs)}
        units = units[order]
        kept = None if kept is None else kept[order]
        exact = [
            pooled_counts(codes, domain, p.counted, contribution_weights(codes, domain, p.counted, units, bound, gen, kept))
            for p in counted
        ]
        if weights is None and not any(x.any() for x in exact):  # a caller's subsample may be empty
            raise ValueError(
                "no row is counted in any table: every row is skipped (all its values equal "
                f"skip_state={bound.skip_state!r}) or not kept; nothing to release"
            )
    return release_counts(
        exact, domain, tables, epsilon, rho=rho, budget=budget, random_state=rng,
        max_cells=max_cells, label=label, n_records=n_records, contribution=bound,
    )


def _check_codes(codes: Mapping[str, np.ndarray], domain: Domain, attrs, weights) -> int:
    """Reject codes that would be miscounted silently; return the number of rows.

    An out-of-range code would land in another cell (or another table's row),
    and a per-row weight above 1 would break the sensitivity the release records.
    """
    missing = [a for a in attrs if a not in codes]
    if missing:
        raise DomainError(f"no codes given for attribute(s) {missing}; encode them with Domain.encode")
    n_rows = None
    for a in attrs:
        c = np.asarray(codes[a])
        if c.ndim != 1 or not np.issubdtype(c.dtype, np.integer):
            raise TypeError(
                f"codes of {a!r} must be a 1-D integer array, got dtype {c.dtype} with {c.ndim} dimension(s)"
            )
        if n_rows is None:
            n_rows = len(c)
        elif len(c) != n_rows:
            raise ValueError(
                f"codes of {a!r} have another number of rows than those of the other attributes; "
                "give one code per record for every attribute"
            )
        # one pass: viewed as unsigned, a negative code is huge, so max() catches both ends
        if len(c) and c.view(np.dtype(f"u{c.dtype.itemsize}")).max() >= domain.size(a):
            raise DomainError(
                f"codes of {a!r} must be in [0, {domain.size(a)}) (positions in its declared states); "
                "some are outside (values withheld: they come from the private data)"
            )
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (n_rows,):
            raise ValueError("weights must be a 1-D array with one entry per row of the codes")
        if len(w) and not (np.all(w >= 0) and np.all(w <= 1)):  # also rejects NaN
            raise ValueError(
                "weights must be in [0, 1] (a subsample mask); a larger weight would let one record "
                "change a count by more than the recorded sensitivity"
            )
    return n_rows


def _check_n_records(n_records):
    if n_records is None:
        return None
    number = isinstance(n_records, (int, float, np.integer, np.floating))
    if isinstance(n_records, (bool, np.bool_)) or not number:
        raise TypeError(f"n_records must be a number (a public record count) or None, got {n_records!r}")
    if not (abs(n_records) <= float(np.finfo(np.float64).max) and n_records >= 0):  # isfinite overflows on huge ints
        raise ValueError(f"n_records must be a finite non-negative count, got {n_records!r}")
    return n_records


def _attrs_in_order(domain: Domain, tables) -> list[str]:
    used = {a for t in tables for a in t}
    return [a for a in domain.attrs if a in used]


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


def release_marginals(
    df: pd.DataFrame,
    tables,
    epsilon=None,
    domain: Mapping[str, Sequence] | Domain | None = None,
    budget: PrivacyBudget | None = None,
    random_state=None,
    max_cells: int = DEFAULT_MAX_CELLS,
    n_records: int | None = None,
    show_progress: bool = True,
    *,
    rho=None,
    privacy_unit=None,
) -> MarginalRelease:
    """Release differentially private contingency tables of ``df``.

    Each record adds 1 to one cell of every requested table, so with a total
    ``epsilon`` over ``|C|`` tables every cell gets discrete Laplace noise of
    scale ``|C| / epsilon`` (Bernstein et al. 2017, eq. 3). A sequence of
    per-table epsilons gives table ``i`` scale ``1 / epsilon_i`` and spends their sum.
    A [`Pooled`][pgmpy_dp.tables.pooled.Pooled] request (the sum of several
    same-shaped tables, e.g. the transitions of a time-homogeneous chain)
    has sensitivity ``len(members)``; a total budget is then split so that
    every cell gets the same scale, ``sum of sensitivities / epsilon``.

    With ``privacy_unit`` the protected unit is an individual, who may own
    many rows: neighbouring datasets differ by all rows of one individual,
    and each individual's rows are bounded per table as the
    ``pgmpy_dp.UserLevel`` says (see
    [`pgmpy_dp.tables.contribution`][pgmpy_dp.tables.contribution] and docs/privacy.md).

    With ``rho`` instead (zero-concentrated DP), every cell gets discrete
    Gaussian noise calibrated to the L2 sensitivity ``sqrt(|C|)`` of the
    ``|C|`` tables: sigma ``sqrt(|C| / (2 rho))``, which grows like the square
    root of the number of tables rather than linearly. Per-table ``rho_i``
    give sigma ``sqrt(1 / (2 rho_i))`` and spend their sum.

    Parameters
    ----------
    df : pandas.DataFrame
        The private data, one record per row.
    tables : list of str or tuple of str
        Attribute tuples to release, e.g. ``[("smoke", "lung"), ("xray",)]``.
    epsilon : float or sequence of float
        Total pure-DP budget, or one per table (discrete Laplace noise).
    domain : mapping or Domain, optional
        Public states for columns that are not categorical (and overrides for those that are).
        A [`Domain`][pgmpy_dp.privacy.domain.Domain] also carries public bin edges for numeric
        columns and a declared missing-value state: ``Domain({...}, bins={"age": [17, 25, 35, 91]},
        missing="Missing")``. Every state must be JSON-writable (checked before any budget is spent).
    budget : PrivacyBudget, optional
        Accountant to charge; raises [`BudgetExceededError`][pgmpy_dp.privacy.budget.BudgetExceededError] before any noise if short.
    random_state : int or numpy.random.Generator, optional
        Seed for reproducible *experiments only*; real releases leave it ``None``.
    max_cells : int
        Refuse tables with more cells than this.
    n_records : int, optional
        Declare the record count public and store it. Leave ``None`` unless the
        count is already public: otherwise it is estimated from the noisy tables.
    show_progress : bool
        Show progress bars over the columns being encoded and the tables being counted; they appear only when
        counting takes more than a couple of seconds (thousands of tables, or
        millions of rows).
    rho : float or sequence of float, keyword only
        Total zCDP budget, or one per table (discrete Gaussian noise), instead
        of ``epsilon``. A ``budget`` must then be a zCDP one (``PrivacyBudget(rho=...)``).
    privacy_unit : UserLevel or column label, keyword only
        Individual-level privacy: a ``pgmpy_dp.UserLevel`` (the column
        naming the individual and how its rows are bounded), or the column alone, shorthand for
        ``UserLevel(column)``. The column is read only to group rows, never released, and must
        not appear in a table or in ``domain``.

    Returns
    -------
    MarginalRelease

    Examples
    --------
    >>> df = pd.DataFrame({"smoke": ["yes", "no", "no"], "lung": ["no", "no", "yes"]})
    >>> public = {"smoke": ["no", "yes"], "lung": ["no", "yes"]}
    >>> rel = release_marginals(df, [("smoke", "lung")], epsilon=1.0, domain=public)
    >>> rel[("smoke", "lung")].values.shape
    (2, 2)

    Individual-level privacy: user ``u1`` owns two rows, which share weight 1

    >>> df["user"] = ["u1", "u1", "u2"]
    >>> rel = release_marginals(df, ["smoke"], epsilon=1e6, domain=public, privacy_unit="user", random_state=0)
    >>> rel["smoke"].values.round(3).tolist(), rel.privacy_unit["column"]
    ([1.5, 0.5], 'user')
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(df).__name__}")
    unit = unit_keywords(privacy_unit)
    bound = check_contribution(**unit)
    privacy_unit = unit["privacy_unit"]
    if len(df) == 0:
        raise ValueError("the DataFrame is empty; a release needs at least one record")
    requested = requested_tables(tables)
    columns = requested_columns(requested)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DomainError(
            f"tables name column(s) {missing} that are not in the DataFrame "
            f"(columns: {list(df.columns)})"
        )
    if bound is not None:
        _check_unit_column(df, privacy_unit, columns, domain)
    dom = Domain.from_dataframe(df, columns, domain)
    dom.check_json()  # a release is published as JSON: fail before anything is charged
    units = None if bound is None else encode_units(df[privacy_unit], privacy_unit)
    codes = dom.encode(df, columns, show_progress=show_progress)
    return release_from_codes(
        codes, dom, requested, epsilon, budget, random_state, max_cells, n_records=n_records,
        show_progress=show_progress, rho=rho, units=units, **unit,
    )


def _check_unit_column(df: pd.DataFrame, privacy_unit, columns: Sequence[str], domain) -> None:
    """The privacy-unit column exists and is never released (not in a table, not in the domain)."""
    try:
        present = privacy_unit in df.columns
    except TypeError:  # unhashable
        present = False
    if not present:
        raise DomainError(
            f"privacy_unit {privacy_unit!r} is not a column of the DataFrame (columns: {list(df.columns)}); "
            "name the column that identifies the individual"
        )
    if privacy_unit in columns:
        raise DomainError(
            f"privacy_unit column {privacy_unit!r} is named in a requested table; the individual's identifier "
            "is never released: remove it from the tables"
        )
    if domain is not None and privacy_unit in (domain.attrs if isinstance(domain, Domain) else domain):
        raise DomainError(
            f"privacy_unit column {privacy_unit!r} is declared in domain; the individual's identifier is never "
            "released, so it has no public states: remove it from domain"
        )


def _check_json_state(state) -> None:
    try:
        json.dumps(state, allow_nan=False)
    except (TypeError, ValueError):
        raise TypeError(
            f"skip_state {state!r} cannot be written to the release's JSON record; use a str, int or bool state"
        ) from None
