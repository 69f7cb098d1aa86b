"""Noisy marginal releases: the measurement step and its self-describing artifact.

:func:`release_marginals` counts the requested tables exactly, charges the
budget, and adds discrete Laplace noise; :class:`MarginalRelease` is what
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
from ..privacy.budget import PrivacyBudget, check_epsilon
from ..privacy.domain import DEFAULT_MAX_CELLS, Domain, DomainError
from ..privacy.mechanisms import (
    MAX_SCALE,
    MECHANISM,
    discrete_laplace_noise,
    discrete_laplace_variance,
    sampler_for,
)
from .counting import contingency_table

__all__ = [
    "NoisyTable",
    "MarginalRelease",
    "plan_tables",
    "pooled_record_count",
    "release_from_codes",
    "release_marginals",
]

_FORMAT = "pgmpy-dp/marginal-release"
_FORMAT_VERSION = 1


@dataclass(frozen=True, eq=False)
class NoisyTable:
    """One released table.

    Attributes
    ----------
    attrs : tuple of str
        Attributes, in axis order.
    values : numpy.ndarray
        Noisy counts, shape ``domain.shape(attrs)``; may be negative.
    epsilon : float
        Budget spent on this table.
    scale : float
        Discrete Laplace scale of each cell's noise (``sensitivity / epsilon``).
    sensitivity : float
        L1 sensitivity of this table alone (one record changes one cell by 1).
    """

    attrs: tuple[str, ...]
    values: np.ndarray
    epsilon: float
    scale: float
    sensitivity: float = 1.0

    @property
    def variance(self) -> float:
        """Noise variance of each cell."""
        return discrete_laplace_variance(self.scale)


class MarginalRelease:
    """Differentially private contingency tables with their provenance.

    Built by :func:`release_marginals` (or ``df.dp.release``); everything in it
    is safe to publish. Releases are immutable values.

    Attributes
    ----------
    domain : Domain
        Public states of every released attribute.
    tables : tuple of NoisyTable
        The noisy tables, in request order.
    epsilon : float
        Total budget of the release (sum of the per-table epsilons).
    mechanism : str
        ``"discrete_laplace"``.
    sampler : str
        Which sampling path drew the noise (``"opendp"``, ``"geometric"``, ``"seeded"``,
        or ``"mixed"`` when tables used different paths).
    n_records : float or None
        Declared public record count, if the custodian declared one; see
        :attr:`n_records_estimate` for the noisy estimate otherwise.

    Examples
    --------
    >>> import pgmpy_dp
    >>> df = pd.DataFrame({"a": ["x", "y", "y"], "b": ["u", "u", "v"]}).astype("category")
    >>> rel = df.dp.release([("a", "b"), "a"], epsilon=1.0, random_state=0)
    >>> rel.epsilon, rel.sensitivity, [t.scale for t in rel.tables]
    (1.0, 2.0, [2.0, 2.0])
    >>> rel.series(("a", "b")).index.names
    FrozenList(['a', 'b'])
    >>> MarginalRelease.from_json(rel.to_json()) == rel
    True
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
    def epsilon(self) -> float:
        """Total epsilon spent by this release (sequential composition over its tables)."""
        return math.fsum(t.epsilon for t in self.tables)

    @property
    def sensitivity(self) -> float:
        """L1 sensitivity of all tables concatenated: one record adds 1 to every table."""
        return math.fsum(t.sensitivity for t in self.tables)

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
        return (
            f"MarginalRelease({len(self.tables)} tables, epsilon={self.epsilon:g}, "
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
                and np.array_equal(a.values, b.values)
                for a, b in zip(self.tables, other.tables)
            )
        )

    __hash__ = None  # mutable numpy payload

    # -- views ---------------------------------------------------------------------------
    def _marginal(self, attrs) -> tuple[tuple[str, ...], np.ndarray]:
        """Noisy counts over ``attrs``, in that order, from the released tables (post-processing).

        A released table over exactly these attributes (in any order) is used
        as is, transposed if needed. Otherwise every released table that
        contains all of ``attrs`` is summed down to them, and these marginals
        are combined with inverse-variance weights (a summed cell's noise
        variance is the table's cell variance times the number of cells summed).
        """
        key = (attrs,) if isinstance(attrs, str) else tuple(attrs)
        if key in self._index:
            return key, self._index[key].values
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
                return key, summed
            total, weight = total + w * summed, weight + w
        return key, total / weight

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

        ``attrs`` may be reordered or a subset of released tables, as for :meth:`series`.
        """
        return self.series(attrs).reset_index()

    def factor(self, attrs, clip: bool = False):
        """Noisy counts over ``attrs`` as a pgmpy ``DiscreteFactor`` (``clip`` sets negatives to 0).

        ``attrs`` may be reordered or a subset of released tables, as for :meth:`series`.
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

    # -- serialisation -------------------------------------------------------------------
    def to_dict(self) -> dict:
        """A JSON-compatible dict holding everything in the release."""
        return {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "mechanism": self.mechanism,
            "sampler": self.sampler,
            "epsilon": self.epsilon,
            "sensitivity": self.sensitivity,
            "n_records": self.n_records,
            "domain": [[a, list(self.domain[a])] for a in self.domain.attrs],
            "tables": [
                {
                    "attrs": list(t.attrs),
                    "epsilon": t.epsilon,
                    "scale": t.scale,
                    "sensitivity": t.sensitivity,
                    "shape": list(t.values.shape),
                    "values": t.values.ravel().tolist(),
                }
                for t in self.tables
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> MarginalRelease:
        """Inverse of :meth:`to_dict`."""
        if data.get("format") != _FORMAT:
            raise ValueError(f"not a pgmpy-dp marginal release (format={data.get('format')!r})")
        if data.get("version") != _FORMAT_VERSION:
            raise ValueError(f"unsupported release format version {data.get('version')!r}")
        domain = Domain({a: states for a, states in data["domain"]})
        tables = [
            NoisyTable(
                attrs=tuple(t["attrs"]),
                values=np.asarray(t["values"], dtype=np.float64).reshape(t["shape"]),
                epsilon=float(t["epsilon"]),
                scale=float(t["scale"]),
                sensitivity=float(t["sensitivity"]),
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
        if path is None:
            return text
        Path(path).write_text(text)
        return None

    @classmethod
    def from_json(cls, source: str | Path) -> MarginalRelease:
        """Read a release from JSON text or from a path written by :meth:`to_json`."""
        text = str(source)
        if not text.lstrip().startswith("{"):
            text = Path(source).read_text()
        return cls.from_dict(json.loads(text))


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


def plan_tables(domain: Domain, tables, epsilon, max_cells: int = DEFAULT_MAX_CELLS):
    """Validate requested tables and per-table budgets before anything is spent.

    ``epsilon`` is either a total (split evenly: each of ``|C|`` tables gets
    ``epsilon/|C|``, i.e. Laplace scale ``|C|/epsilon``) or a sequence of
    per-table epsilons (each table gets scale ``1/epsilon_i``).

    Returns
    -------
    (list of attribute tuples, list of per-table epsilons)
    """
    if isinstance(tables, (str, tuple)) or not isinstance(tables, Sequence):
        raise TypeError(
            f"tables must be a list of attribute tuples such as [('a', 'b'), ('c',)], got {tables!r}"
        )
    if len(tables) == 0:
        raise ValueError("no tables requested; pass at least one attribute tuple")
    attrs = [domain.check_table(t, max_cells) for t in tables]
    seen = set()
    for a in attrs:
        if a in seen:
            raise DomainError(f"table {a} is requested twice; request it once or use two releases")
        seen.add(a)
    if isinstance(epsilon, (Sequence, np.ndarray)) and not isinstance(epsilon, (str, bytes)):
        if len(epsilon) != len(attrs):
            raise ValueError(
                f"got {len(epsilon)} per-table epsilons for {len(attrs)} tables; give one per table"
            )
        eps = [check_epsilon(e, f"epsilon for table {a}") for e, a in zip(epsilon, attrs)]
    else:
        total = check_epsilon(epsilon)
        eps = [total / len(attrs)] * len(attrs)
    for e, a in zip(eps, attrs):
        if 1.0 / e > MAX_SCALE:
            raise ValueError(
                f"epsilon {e:g} for table {a} is too small: its noise scale {1.0 / e:g} exceeds the "
                f"largest supported {MAX_SCALE:g}, and such a table would be pure noise; raise epsilon"
            )
    return attrs, eps


def release_from_codes(
    codes: Mapping[str, np.ndarray],
    domain: Domain,
    tables,
    epsilon,
    budget: PrivacyBudget | None = None,
    random_state=None,
    max_cells: int = DEFAULT_MAX_CELLS,
    label: str | None = None,
    weights: np.ndarray | None = None,
    n_records: float | None = None,
    show_progress: bool = False,
) -> MarginalRelease:
    """Release noisy tables from already-encoded data (the core of :func:`release_marginals`).

    Validation and counting happen first; then the whole release is charged to
    ``budget`` at once (if given); then noise is drawn. Any exception before the
    noise leaves the budget untouched.

    ``weights`` (0/1 per row) restricts counting to a subsample; with it, the
    caller is responsible for the privacy accounting of subsampling.
    ``show_progress`` draws a bar over the tables being counted if that takes
    more than a couple of seconds (it is off here: callers decide).
    """
    attrs, eps = plan_tables(domain, tables, epsilon, max_cells)
    if budget is not None and not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a pgmpy_dp.PrivacyBudget or None, got {type(budget).__name__}")
    n_rows = _check_codes(codes, domain, _attrs_in_order(domain, attrs), weights)
    if n_rows == 0:
        raise ValueError("the data has no rows; a release needs at least one record")
    n_records = _check_n_records(n_records)
    # one bincount per table: thousands of tables of a million rows take tens of seconds
    counted = progress(attrs, show_progress, "counting tables")
    exact = [contingency_table(codes, domain, a, weights) for a in counted]
    rng = np.random.default_rng(random_state) if random_state is not None else None
    samplers = [sampler_for(sum(x.size for x in exact), rng)] * len(exact)
    label = label or "release " + ", ".join("(" + ", ".join(a) + ")" for a in attrs)

    def draw() -> list[NoisyTable]:
        # One sampler call per (scale, sampler) group: OpenDP has a per-call cost of about 1 ms.
        groups: dict[tuple[float, str], list[int]] = {}
        for i, (e, s) in enumerate(zip(eps, samplers)):
            groups.setdefault((1.0 / e, s), []).append(i)
        noisy: list[NoisyTable | None] = [None] * len(attrs)
        for (scale, s), members in groups.items():
            sizes = [exact[i].size for i in members]
            noise = discrete_laplace_noise(sum(sizes), scale, random_state=rng, sampler=s)
            for i, chunk in zip(members, np.split(noise, np.cumsum(sizes)[:-1])):
                noisy[i] = NoisyTable(attrs[i], exact[i] + chunk.reshape(exact[i].shape), eps[i], scale)
        return noisy

    if budget is not None:
        with budget.charge(math.fsum(eps), label):
            noisy = draw()
    else:
        noisy = draw()
    sampler = samplers[0] if len(set(samplers)) == 1 else "mixed"
    return MarginalRelease(domain.project(_attrs_in_order(domain, attrs)), noisy, MECHANISM, sampler, n_records)


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
    if not (math.isfinite(n_records) and n_records >= 0):
        raise ValueError(f"n_records must be a finite non-negative count, got {n_records!r}")
    return n_records


def _attrs_in_order(domain: Domain, tables) -> list[str]:
    used = {a for t in tables for a in t}
    return [a for a in domain.attrs if a in used]


def release_marginals(
    df: pd.DataFrame,
    tables,
    epsilon,
    domain: Mapping[str, Sequence] | Domain | None = None,
    budget: PrivacyBudget | None = None,
    random_state=None,
    max_cells: int = DEFAULT_MAX_CELLS,
    n_records: int | None = None,
    show_progress: bool = True,
) -> MarginalRelease:
    """Release differentially private contingency tables of ``df``.

    Each record adds 1 to one cell of every requested table, so with a total
    ``epsilon`` over ``|C|`` tables every cell gets discrete Laplace noise of
    scale ``|C| / epsilon`` (Bernstein et al. 2017, eq. 3). A sequence of
    per-table epsilons gives table ``i`` scale ``1 / epsilon_i`` and spends their sum.

    Parameters
    ----------
    df : pandas.DataFrame
        The private data, one record per row.
    tables : list of str or tuple of str
        Attribute tuples to release, e.g. ``[("smoke", "lung"), ("xray",)]``.
    epsilon : float or sequence of float
        Total budget, or one budget per table.
    domain : mapping or Domain, optional
        Public states for columns that are not categorical (and overrides for those that are).
        A :class:`~pgmpy_dp.Domain` also carries public bin edges for numeric
        columns and a declared missing-value state: ``Domain({...}, bins={"age": [17, 25, 35, 91]},
        missing="Missing")``. Every state must be JSON-writable (checked before any budget is spent).
    budget : PrivacyBudget, optional
        Accountant to charge; raises :class:`BudgetExceededError` before any noise if short.
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

    Returns
    -------
    MarginalRelease

    Examples
    --------
    >>> df = pd.DataFrame({"smoke": ["yes", "no", "no"], "lung": ["no", "no", "yes"]}).astype("category")
    >>> rel = release_marginals(df, [("smoke", "lung")], epsilon=1.0)
    >>> rel[("smoke", "lung")].values.shape
    (2, 2)
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0:
        raise ValueError("the DataFrame is empty; a release needs at least one record")
    requested = tables
    if isinstance(tables, Sequence) and not isinstance(tables, (str, tuple)):
        bad = [t for t in tables if not isinstance(t, (str, Sequence))]
        if bad:
            raise TypeError(
                f"each table must be a column name or a tuple of column names, got {bad[0]!r}; "
                "e.g. tables=[('a', 'b'), 'c']"
            )
        requested = [(t,) if isinstance(t, str) else tuple(t) for t in tables]
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
        show_progress=show_progress,
    )
