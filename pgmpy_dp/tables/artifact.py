"""The released artifact: noisy tables with every fact needed to use them, and their JSON form.

A [`MarginalRelease`][pgmpy_dp.tables.artifact.MarginalRelease] holds one release's
[`NoisyTable`][pgmpy_dp.tables.artifact.NoisyTable] s with their provenance, answers marginals by
post-processing, and reads and writes the JSON format of [`pgmpy_dp.tables.schema`][pgmpy_dp.tables.schema].
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..privacy.parameters import check_delta, rho_to_epsilon_delta
from ..privacy.domain import Domain, DomainError
from ..privacy.mechanisms import (
    GAUSSIAN_MECHANISM,
    MECHANISM,
    discrete_gaussian_variance,
    discrete_laplace_variance,
)
from .pooled import table_key
from .schema import FORMAT as _FORMAT
from .schema import FORMAT_VERSION as _FORMAT_VERSION
from .schema import read_json_source, validate_release_dict


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
        Pure-DP budget spent on this table (discrete Laplace); ``None`` for a discrete Gaussian table.
    scale : float
        Noise scale of each cell: the discrete Laplace scale ``sensitivity / epsilon``,
        or the discrete Gaussian sigma ``sensitivity / sqrt(2 rho)``.
    sensitivity : float
        Sensitivity of this table alone, for one privacy unit: 1 for a record, ``m`` for a pooled table
        of ``m`` members, or the individual-level bound ([`pgmpy_dp.tables.contribution`][pgmpy_dp.tables.contribution]).
    mechanism : str
        ``"discrete_laplace"`` (the default) or ``"discrete_gaussian"``.
    rho : float or None
        zCDP cost of a discrete Gaussian table (``sensitivity**2 / (2 scale**2)``),
        ``None`` for a discrete Laplace table.
    members : tuple of tuple of str, or None
        A pooled table's member attribute tuples (``attrs == members[0]`` names its axes); ``None`` for
        an ordinary table.
    granularity : float
        Spacing of the lattice the values and noise live on: 1 for counts, ``1 / NORMALIZE_UNITS`` for
        individual-normalised counts.

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
        ``None`` for a discrete Gaussian release, whose guarantee is [`rho`][pgmpy_dp.tables.artifact.MarginalRelease.rho]
        (or [`epsilon_delta`][pgmpy_dp.tables.artifact.MarginalRelease.epsilon_delta]).
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
        [`n_records_estimate`][pgmpy_dp.tables.artifact.MarginalRelease.n_records_estimate] for the noisy estimate otherwise.
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
        pure-DP guarantee; see [`rho`][pgmpy_dp.tables.artifact.MarginalRelease.rho] and [`epsilon_delta`][pgmpy_dp.tables.artifact.MarginalRelease.epsilon_delta].
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

    @property
    def loss(self):
        """The privacy loss this release spent, as a value: ``PureDP(epsilon)`` or ``ZCDP(rho)``.

        Examples
        --------
        >>> import pandas as pd
        >>> rel = pd.DataFrame({"a": ["x", "y"]}).dp.release(["a"], rho=0.5, domain={"a": ["x", "y"]})
        >>> rel.loss
        ZCDP(rho=0.5)
        """
        from ..privacy.loss import PureDP, ZCDP

        if self.epsilon is not None:
            return PureDP(self.epsilon)
        return ZCDP(self.rho)

    def epsilon_delta(self, delta: float) -> tuple[float, float]:
        """The (epsilon, delta)-DP guarantee of this release.

        A Gaussian release converts its [`rho`][pgmpy_dp.tables.artifact.MarginalRelease.rho] by
        [`rho_to_epsilon_delta`][pgmpy_dp.privacy.parameters.rho_to_epsilon_delta]; a Laplace release is
        ``epsilon``-DP for every delta.
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

        (1 per ordinary table and ``len(members)`` per pooled one for a record.)
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

        A pooled table's total is divided by ``len(members)``. Under ``contribution="normalize"`` the
        estimate is the number of *individuals* with a counted row; under ``"clip"``, of the rows kept.
        Post-processing: no budget.
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
        """Noisy counts over ``attrs``, in that order (see [`_marginal_with_noise`][pgmpy_dp.tables.artifact.MarginalRelease._marginal_with_noise])."""
        key, values, _, _ = self._marginal_with_noise(attrs)
        return key, values

    def _marginal_with_noise(self, attrs) -> tuple[tuple[str, ...], np.ndarray, float, NoisyTable | None]:
        """Noisy counts over ``attrs``, in that order, from the released tables (post-processing).

        A released table over exactly these attributes is used as is (transposed if needed); otherwise
        every released table containing ``attrs`` is summed down and the marginals combined with
        inverse-variance weights. Pooled tables answer only pooled keys whose members they restrict to.
        Returns the axis labels, the values, each cell's noise variance and, when the cells are one
        table's own cells, that table (else ``None``).
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

        ``attrs`` may be a released table in any order, or a subset of released tables (several are
        combined with inverse-variance weights); post-processing, nothing is spent.

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

        ``attrs`` may be reordered or a subset of released tables, as for [`series`][pgmpy_dp.tables.artifact.MarginalRelease.series].
        """
        return self.series(attrs).reset_index()

    def factor(self, attrs, clip: bool = False):
        """Noisy counts over ``attrs`` as a pgmpy ``DiscreteFactor`` (``clip`` sets negatives to 0).

        ``attrs`` may be reordered or a subset of released tables, as for [`series`][pgmpy_dp.tables.artifact.MarginalRelease.series].
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

        Exact for a released table, normal (with the exact variance) for a subset summed from released
        tables: see [`release_interval`][pgmpy_dp.tables.intervals.release_interval].

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
        """Inverse of [`to_dict`][pgmpy_dp.tables.artifact.MarginalRelease.to_dict]; every field is validated first ([`pgmpy_dp.tables.schema`][pgmpy_dp.tables.schema]).

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
        """Read a release from JSON text or from a file written by [`to_json`][pgmpy_dp.tables.artifact.MarginalRelease.to_json].

        ``bytes`` and a ``str`` that starts with ``{`` or ``[`` or parses as JSON are JSON text; any other
        ``str`` and every ``os.PathLike`` is a file path. A missing file raises ``FileNotFoundError``; an
        invalid artifact raises [`ReleaseFormatError`][pgmpy_dp.tables.schema.ReleaseFormatError].
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

    Noiseless tables are used alone. A pooled table's total is divided by ``len(members)``, unless
    ``normalized`` (individual-normalised tables, mass 1 per individual; one flag or one per table).

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
