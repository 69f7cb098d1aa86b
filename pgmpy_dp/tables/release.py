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
from .counting import contingency_table
from .schema import FORMAT as _FORMAT
from .schema import FORMAT_VERSION as _FORMAT_VERSION
from .schema import read_json_source, validate_release_dict

__all__ = [
    "NoisyTable",
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
        Sensitivity of this table alone: one record changes one cell by 1, so
        its L1 and L2 sensitivities are both 1.
    mechanism : str
        ``"discrete_laplace"`` (the default) or ``"discrete_gaussian"``.
    rho : float or None
        zCDP cost of a discrete Gaussian table (``sensitivity**2 / (2 scale**2)``),
        ``None`` for a discrete Laplace table.

    Examples
    --------
    >>> t = NoisyTable(("a",), np.array([3.0, 5.0]), None, 2.0, mechanism="discrete_gaussian", rho=0.125)
    >>> t.variance
    4.0
    """

    attrs: tuple[str, ...]
    values: np.ndarray
    epsilon: float | None
    scale: float
    sensitivity: float = 1.0
    mechanism: str = MECHANISM
    rho: float | None = None

    @property
    def variance(self) -> float:
        """Noise variance of each cell (for either mechanism)."""
        if self.mechanism == GAUSSIAN_MECHANISM:
            return discrete_gaussian_variance(self.scale)
        return discrete_laplace_variance(self.scale)


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
    ) -> None:
        self.domain = domain
        self.tables = tuple(tables)
        self.mechanism = mechanism
        self.sampler = sampler
        self.n_records = n_records
        self._index = {t.attrs: t for t in self.tables}
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
        """L1 sensitivity of all tables concatenated: one record adds 1 to every table."""
        return math.fsum(t.sensitivity for t in self.tables)

    @property
    def l2_sensitivity(self) -> float:
        """L2 sensitivity of all tables concatenated (what calibrates Gaussian noise): ``sqrt(|C|)``."""
        return math.sqrt(math.fsum(t.sensitivity**2 for t in self.tables))

    @property
    def attrs(self) -> list[tuple[str, ...]]:
        """Attribute tuples of the released tables."""
        return [t.attrs for t in self.tables]

    @property
    def n_records_estimate(self) -> float:
        """Record count: the declared one, or the inverse-variance weighted mean of table totals.

        The noisy estimate is post-processing of the release and costs no budget.
        """
        if self.n_records is not None:
            return float(self.n_records)
        return pooled_record_count(self.tables)

    def __getitem__(self, attrs) -> NoisyTable:
        key = (attrs,) if isinstance(attrs, str) else tuple(attrs)
        try:
            return self._index[key]
        except KeyError:
            raise KeyError(f"no table over {key} in this release; released: {self.attrs}") from None

    def __contains__(self, attrs) -> bool:
        key = (attrs,) if isinstance(attrs, str) else tuple(attrs)
        return key in self._index

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
        return (
            f"MarginalRelease({len(self.tables)} tables, {cost}, "
            f"mechanism={self.mechanism!r}, domain={self.domain!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MarginalRelease):
            return NotImplemented
        return (
            self.domain == other.domain
            and self.mechanism == other.mechanism
            and self.sampler == other.sampler
            and self.n_records == other.n_records
            and len(self.tables) == len(other.tables)
            and all(
                a.attrs == b.attrs
                and a.epsilon == b.epsilon
                and a.scale == b.scale
                and a.sensitivity == b.sensitivity
                and a.mechanism == b.mechanism
                and a.rho == b.rho
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
        Also returns each cell's noise variance and, when the cells are one
        table's own cells (possibly transposed), that table (else ``None``).
        """
        key = (attrs,) if isinstance(attrs, str) else tuple(attrs)
        if key in self._index:
            t = self._index[key]
            return key, t.values, t.variance, t
        wanted = set(key)
        if len(wanted) != len(key):
            raise KeyError(f"{key} names an attribute twice; name each once")
        exact = [t for t in self.tables if set(t.attrs) == wanted]
        covering = exact or [t for t in self.tables if wanted <= set(t.attrs)]
        if not covering:
            raise KeyError(
                f"no released table contains all of {key}; released: {self.attrs}"
            ) from None
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
            "domain": [[a, list(self.domain[a])] for a in self.domain.attrs],
            "tables": [
                {
                    "attrs": list(t.attrs),
                    "epsilon": t.epsilon,
                    "scale": t.scale,
                    "sensitivity": t.sensitivity,
                    "mechanism": t.mechanism,
                    "rho": t.rho,
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
            )
            for t in data["tables"]
        ]
        return cls(domain, tables, data["mechanism"], data["sampler"], data["n_records"])

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


def pooled_record_count(tables: Sequence[NoisyTable]) -> float:
    """Inverse-variance weighted mean of the tables' noisy totals (post-processing, no budget).

    A table's total has variance ``variance * cells``; tables so precise that
    their noise vanishes in double precision are used alone.

    Examples
    --------
    >>> a = NoisyTable(("x",), np.array([4.0, 6.0]), epsilon=1.0, scale=1.0)
    >>> b = NoisyTable(("y",), np.array([12.0]), epsilon=1.0, scale=1.0)
    >>> round(pooled_record_count([a, b]), 3)
    11.333
    """
    totals = np.array([t.values.sum() for t in tables])
    var = np.array([t.variance * t.values.size for t in tables])
    exact = var <= 0  # a huge epsilon leaves a table noiseless (its weight would be 1/0)
    if exact.any():
        return float(np.mean(totals[exact]))
    w = 1.0 / var
    return float(np.sum(w * totals) / np.sum(w))


# -- the mechanism ---------------------------------------------------------------------------


def plan_tables(domain: Domain, tables, epsilon=None, max_cells: int = DEFAULT_MAX_CELLS, *, rho=None):
    """Validate requested tables and per-table budgets before anything is spent.

    Give exactly one of ``epsilon`` (discrete Laplace) or ``rho`` (discrete
    Gaussian). Either is a total, split evenly over the ``|C|`` tables (each
    gets ``epsilon/|C|``, i.e. Laplace scale ``|C|/epsilon``; or ``rho/|C|``,
    i.e. Gaussian sigma ``sqrt(|C| / (2 rho))``, the L2 sensitivity ``sqrt(|C|)``
    of all tables over ``sqrt(2 rho)``), or a sequence with one budget per
    table (table ``i`` gets scale ``1/epsilon_i``, or sigma ``sqrt(1 / (2 rho_i))``).

    Returns
    -------
    (list of attribute tuples, list of per-table epsilons or rhos)

    Examples
    --------
    >>> dom = Domain({"a": ["x", "y"], "b": ["u", "v"]})
    >>> plan_tables(dom, [("a",), ("b",)], rho=1.0)
    ([('a',), ('b',)], [0.5, 0.5])
    """
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
    if isinstance(tables, (str, tuple)) or not isinstance(tables, Sequence):
        raise TypeError(
            f"tables must be a list of attribute tuples such as [('a', 'b'), ('c',)], got {tables!r}"
        )
    if len(tables) == 0:
        raise ValueError("no tables requested; pass at least one attribute tuple")
    if isinstance(max_cells, (bool, np.bool_)) or not isinstance(max_cells, (int, np.integer)):
        raise TypeError(f"max_cells must be a positive int, got {max_cells!r} ({type(max_cells).__name__})")
    if max_cells < 1:
        raise ValueError(f"max_cells must be a positive int, got {max_cells!r}")
    attrs = [domain.check_table(t, max_cells) for t in tables]
    seen = set()
    for a in attrs:
        if a in seen:
            raise DomainError(f"table {a} is requested twice; request it once or use two releases")
        seen.add(a)
    name, check, budget = ("epsilon", check_epsilon, epsilon) if rho is None else ("rho", check_rho, rho)
    if isinstance(budget, (Sequence, np.ndarray)) and not isinstance(budget, (str, bytes)):
        if len(budget) != len(attrs):
            raise ValueError(f"got {len(budget)} per-table {name}s for {len(attrs)} tables; give one per table")
        per_table = [check(e, f"{name} for table {a}") for e, a in zip(budget, attrs)]
    else:
        total = check(budget, name)
        per_table = [total / len(attrs)] * len(attrs)
    split = isinstance(budget, (Sequence, np.ndarray)) and not isinstance(budget, (str, bytes))
    for e, a in zip(per_table, attrs):
        scale = _noise_scale(e, rho is not None)
        if not scale <= MAX_SCALE:  # also catches an overflow to inf
            where = "" if split else f" (the total {total:g} split over {len(attrs)} tables)"
            raise ValueError(
                f"{name} {e:g}{where} for table {a} is too small: its noise scale {scale:g} exceeds the "
                f"largest supported {MAX_SCALE:g}, and such a table would be pure noise; raise {name}"
            )
    try:
        math.fsum(per_table)  # what the budget is charged and the release records
    except OverflowError:
        raise ValueError(
            f"the per-table {name}s {[float(e) for e in per_table]} sum to more than the largest float; "
            f"give each table a smaller {name}"
        ) from None
    return attrs, per_table


def _noise_scale(budget: float, gaussian: bool) -> float:
    """Noise scale of one table of sensitivity 1: ``1/epsilon`` (Laplace) or ``sqrt(1/(2 rho))`` (Gaussian)."""
    try:
        return math.sqrt(1.0 / (2.0 * budget)) if gaussian else 1.0 / budget
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
    table); this function cannot check that, so counting correctly is the
    caller's job.

    Parameters
    ----------
    exact : mapping of attribute tuple to numpy.ndarray, or sequence of numpy.ndarray
        Exact counts, keyed by the attribute tuples of ``tables`` or aligned
        with them; each of shape ``domain.shape(attrs)``.
    domain : Domain
        The public domain.
    tables : list of tuple of str
        Attribute tuples to release.
    epsilon, rho : float or sequence of float
        Exactly one: a total budget, or one per table.
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
    attrs, per_table = plan_tables(domain, tables, epsilon, max_cells, rho=rho)
    gaussian = rho is not None
    _check_budget(budget, gaussian)
    counts = _check_exact(exact, domain, attrs)
    n_records = _check_n_records(n_records)
    mechanism = GAUSSIAN_MECHANISM if gaussian else MECHANISM
    rng = check_random_state(random_state)
    sampler = sampler_for(sum(x.size for x in counts), rng, mechanism)
    label = label or "release " + ", ".join("(" + ", ".join(a) + ")" for a in attrs)

    def draw() -> list[NoisyTable]:
        # One sampler call per scale: OpenDP has a per-call cost of about 1 ms.
        groups: dict[float, list[int]] = {}
        for i, b in enumerate(per_table):
            groups.setdefault(_noise_scale(b, gaussian), []).append(i)
        noisy: list[NoisyTable | None] = [None] * len(attrs)
        for scale, members in groups.items():
            sizes = [counts[i].size for i in members]
            if gaussian:
                noise = discrete_gaussian_noise(sum(sizes), scale, random_state=rng, sampler=sampler)
            else:
                noise = discrete_laplace_noise(sum(sizes), scale, random_state=rng, sampler=sampler)
            for i, chunk in zip(members, np.split(noise, np.cumsum(sizes)[:-1])):
                values = counts[i] + chunk.reshape(counts[i].shape)
                if gaussian:
                    noisy[i] = NoisyTable(attrs[i], values, None, scale, mechanism=mechanism, rho=per_table[i])
                else:
                    noisy[i] = NoisyTable(attrs[i], values, per_table[i], scale)
        return noisy

    if budget is None:
        noisy = draw()
    else:
        with budget.charge(**_charge_for(budget, per_table, gaussian), label=label):
            noisy = draw()
    return MarginalRelease(domain.project(_attrs_in_order(domain, attrs)), noisy, mechanism, sampler, n_records)


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


def _check_exact(exact, domain: Domain, attrs) -> list[np.ndarray]:
    """Exact counts aligned with ``attrs``, each of the domain's shape, finite and non-negative."""
    if isinstance(exact, Mapping):
        keyed = {((k,) if isinstance(k, str) else tuple(k)): v for k, v in exact.items()}
        missing = [a for a in attrs if a not in keyed]
        if missing:
            raise ValueError(f"exact has no counts for table(s) {missing}; give one array per requested table")
        arrays = [keyed[a] for a in attrs]
    elif isinstance(exact, (Sequence, np.ndarray)) and not isinstance(exact, (str, bytes)):
        if len(exact) != len(attrs):
            raise ValueError(f"exact has {len(exact)} arrays for {len(attrs)} tables; give one per table")
        arrays = list(exact)
    else:
        raise TypeError(
            f"exact must map attribute tuples to count arrays, or be a list aligned with tables, "
            f"got {type(exact).__name__}"
        )
    out = []
    for a, x in zip(attrs, arrays):
        x = np.asarray(x)
        if x.dtype == object or not (np.issubdtype(x.dtype, np.integer) or np.issubdtype(x.dtype, np.floating)):
            raise TypeError(f"exact counts of table {a} must be a numeric array, got dtype {x.dtype}")
        if x.shape != domain.shape(a):
            raise ValueError(
                f"exact counts of table {a} have shape {x.shape}, but the domain gives {domain.shape(a)}"
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
    """
    attrs, _ = plan_tables(domain, tables, epsilon, max_cells, rho=rho)
    _check_budget(budget, rho is not None)  # before counting, which can take a while
    n_rows = _check_codes(codes, domain, _attrs_in_order(domain, attrs), weights)
    if n_rows == 0:
        raise ValueError("the data has no rows; a release needs at least one record")
    n_records = _check_n_records(n_records)
    # one bincount per table: thousands of tables of a million rows take tens of seconds
    counted = progress(attrs, show_progress, "counting tables")
    exact = [contingency_table(codes, domain, a, weights) for a in counted]
    return release_counts(
        exact, domain, attrs, epsilon, rho=rho, budget=budget, random_state=random_state,
        max_cells=max_cells, label=label, n_records=n_records,
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
                f"codes of {a!r} must be a 1-D integer array, got dtype {c.dtype} and shape {c.shape}"
            )
        if n_rows is None:
            n_rows = len(c)
        elif len(c) != n_rows:
            raise ValueError(
                f"codes of {a!r} have {len(c)} rows, other attributes have {n_rows}; one code per record"
            )
        # one pass: viewed as unsigned, a negative code is huge, so max() catches both ends
        if len(c) and c.view(np.dtype(f"u{c.dtype.itemsize}")).max() >= domain.size(a):
            raise DomainError(
                f"codes of {a!r} must be in [0, {domain.size(a)}), got values in [{c.min()}, {c.max()}]"
            )
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (n_rows,):
            raise ValueError(f"weights must have one entry per row ({n_rows}), got shape {w.shape}")
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


def requested_tables(tables) -> list[tuple[str, ...]] | object:
    """Normalise a table request: a column name becomes a 1-tuple; anything else is left to the planner.

    Examples
    --------
    >>> requested_tables([("a", "b"), "c"])
    [('a', 'b'), ('c',)]
    """
    if not isinstance(tables, Sequence) or isinstance(tables, (str, tuple)):
        return tables  # the release's own validation explains what a request looks like
    bad = [t for t in tables if not isinstance(t, (str, Sequence))]
    if bad:
        raise TypeError(
            f"each table must be a column name or a tuple of column names, got {bad[0]!r}; "
            "e.g. tables=[('a', 'b'), 'c']"
        )
    return [(t,) if isinstance(t, str) else tuple(t) for t in tables]


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
) -> MarginalRelease:
    """Release differentially private contingency tables of ``df``.

    Each record adds 1 to one cell of every requested table, so with a total
    ``epsilon`` over ``|C|`` tables every cell gets discrete Laplace noise of
    scale ``|C| / epsilon`` (Bernstein et al. 2017, eq. 3). A sequence of
    per-table epsilons gives table ``i`` scale ``1 / epsilon_i`` and spends their sum.

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
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0:
        raise ValueError("the DataFrame is empty; a release needs at least one record")
    requested = requested_tables(tables)
    if isinstance(requested, list):
        columns = list(dict.fromkeys(a for t in requested for a in t))
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise DomainError(
                f"tables name column(s) {missing} that are not in the DataFrame "
                f"(columns: {list(df.columns)})"
            )
    else:
        columns = []
    dom = Domain.from_dataframe(df, columns, domain)
    dom.check_json()  # a release is published as JSON: fail before anything is charged
    codes = dom.encode(df, columns, show_progress=show_progress)
    return release_from_codes(
        codes, dom, requested, epsilon, budget, random_state, max_cells, n_records=n_records,
        show_progress=show_progress, rho=rho,
    )
