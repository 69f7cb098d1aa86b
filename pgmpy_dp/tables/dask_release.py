"""Releases from Dask DataFrames: count in the partitions, add noise once on the driver.

Every partition is encoded and counted with [`contingency_table`][pgmpy_dp.tables.counting.contingency_table],
and the count vectors are summed in a tree; only the exact tables come back to the driver, where
[`release_counts`][pgmpy_dp.tables.release.release_counts] validates, charges once and draws the noise once.
Bad data raises inside a partition task, before anything is charged. The synthesizer counts through a
[`DaskCounter`][pgmpy_dp.tables.dask_release.DaskCounter], the Dask twin of the in-memory
[`CodesCounter`][pgmpy_dp.tables.counter.CodesCounter]. See docs/dask.md.

This module imports Dask; it is loaded only when Dask is installed (see
`pgmpy_dp.dask_accessor`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.dataframe.utils import has_known_categories

from ..privacy.domain import DEFAULT_MAX_CELLS, Domain, DomainError, read_domain
from .artifact import MarginalRelease
from .counter import Counter
from .counting import contingency_table
from .plan import is_gaussian, plan_tables, release_loss, requested_tables
from .pooled import Pooled
from .release import check_budget, check_n_records, release_counts

#: How many partial count vectors one reduction task adds up.
SPLIT_EVERY = 8

#: Cells of counted tables a DaskCounter keeps for methods that ask again (32 MB of float64); older ones go first.
CACHE_CELLS = 2**22


def dask_domain(
    ddf: dd.DataFrame,
    columns: Sequence[str] | None = None,
    domain: Mapping[str, Sequence] | Domain | None = None,
) -> Domain:
    """The public domain of a Dask DataFrame's columns, read from its metadata only.

    Categorical columns with *known* categories declare their states; ``domain`` entries win. Unknown
    categories are an error (they would be read from the data). Nothing is computed on the partitions.

    Examples
    --------
    >>> import dask.dataframe as dd
    >>> pdf = pd.DataFrame({"a": ["x", "y"], "b": [1, 2]}).astype({"a": pd.CategoricalDtype(["x", "y", "z"])})
    >>> dask_domain(dd.from_pandas(pdf, npartitions=1), domain={"b": [1, 2, 3]})
    Domain(a: 3, b: 3)
    """
    if not isinstance(ddf, dd.DataFrame):
        raise TypeError(f"expected a dask DataFrame, got {type(ddf).__name__}")
    meta = ddf._meta  # the empty pandas frame that carries the dtypes: no data is read
    domain = read_domain(domain)  # a schema file's path
    explicit = set(domain) if isinstance(domain, (Mapping, Domain)) else set()
    cols = list(meta.columns) if columns is None else list(columns)
    dtypes = meta.dtypes
    for col in cols:
        if col in meta.columns and col not in explicit and isinstance(dtypes[col], pd.CategoricalDtype):
            if not has_known_categories(meta[col]):
                raise DomainError(
                    f"column {col!r} is categorical but Dask does not know its categories, so it has "
                    f"no public domain; declare the states with domain={{{col!r}: [...]}}, "
                    f"ddf.astype({{{col!r}: pd.CategoricalDtype([...])}}) or "
                    f"ddf[{col!r}].cat.set_categories([...]) (do not use ddf.categorize(): it reads "
                    "the states from the private data)"
                )
    return Domain.from_dataframe(meta, cols, domain)


def _count_partition(part: pd.DataFrame, domain: Domain, tables, columns, merge=None, encoded: bool = False
                     ) -> tuple[int, np.ndarray]:
    """Exact counts of one partition: the row count and all tables' cells concatenated.

    ``encoded``: the partition already holds codes (see [`DaskCounter`][pgmpy_dp.tables.dask_release.DaskCounter]);
    ``merge``: ``(maps, counted domain)``, codes recoded state by state before counting.
    """
    if encoded:
        codes = {a: part[a].to_numpy() for a in columns}
    else:
        codes = domain.encode(part, columns)  # raises DomainError on NaN / out-of-domain values
    counted = domain
    if merge is not None:
        maps, counted = merge
        codes = {a: maps[a][codes[a]] for a in columns}
    flat = np.empty(sum(counted.cells(t) for t in tables), dtype=np.float64)
    start = 0
    for attrs in tables:
        counts = contingency_table(codes, counted, attrs)
        flat[start : start + counts.size] = counts.ravel()
        start += counts.size
    return len(part), flat


def _add_partials(*partials: tuple[int, np.ndarray]) -> tuple[int, np.ndarray]:
    rows = sum(p[0] for p in partials)
    total = partials[0][1].copy()
    for _, counts in partials[1:]:
        total += counts
    return rows, total


def dask_contingency_tables(
    ddf: dd.DataFrame,
    domain: Domain,
    tables: Sequence[Sequence[str]],
    split_every: int = SPLIT_EVERY,
    max_cells: int = DEFAULT_MAX_CELLS,
    *,
    merge: tuple[Mapping[str, np.ndarray], Domain] | None = None,
    encoded: bool = False,
) -> tuple[list[np.ndarray], int]:
    """Exact contingency tables of a Dask DataFrame, counted per partition and tree-reduced.

    Runs on the active Dask scheduler; the driver receives one vector of the tables' cells, never rows.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The private data.
    domain : Domain
        Public states of every attribute the tables use (e.g. from [`dask_domain`][pgmpy_dp.tables.dask_release.dask_domain]).
    tables : sequence of sequences of str
        Attribute tuples to count.
    split_every : int
        Fan-in of the reduction tree.
    max_cells : int
        Refuse tables with more cells than this (checked before any task runs).
    merge : (mapping of str to numpy.ndarray, Domain), optional, keyword only
        Count over the second domain, every code ``c`` of an attribute becoming ``maps[attr][c]`` first.
    encoded : bool, keyword only
        The frame's columns already hold codes in ``domain`` (they are not encoded again).

    Returns
    -------
    (list of numpy.ndarray, int)
        The exact tables (float64, shape ``domain.shape(attrs)``) and the number of rows.

    Examples
    --------
    >>> import dask, dask.dataframe as dd
    >>> pdf = pd.DataFrame({"a": ["x", "y", "y"], "b": ["u", "u", "v"]})
    >>> d = Domain({"a": ["x", "y"], "b": ["u", "v"]})  # the declared public states
    >>> with dask.config.set(scheduler="sync"):
    ...     exact, n = dask_contingency_tables(dd.from_pandas(pdf, npartitions=2), d, [("a", "b")])
    >>> exact[0], n
    (array([[1., 0.],
           [1., 1.]]), 3)
    """
    if split_every < 2:
        raise ValueError(f"split_every must be at least 2, got {split_every}")
    counted = domain if merge is None else merge[1]
    attrs = [counted.check_table(t, max_cells) for t in tables]
    used = {a for t in attrs for a in t}
    columns = [a for a in domain.attrs if a in used]
    missing = [c for c in columns if c not in ddf.columns]
    if missing:
        raise DomainError(f"column(s) {missing} are not in the DataFrame (columns: {list(ddf.columns)})")
    parts = ddf[columns].to_delayed()
    count = dask.delayed(_count_partition, pure=True)
    add = dask.delayed(_add_partials, pure=True)
    partials = [count(p, domain, attrs, columns, merge, encoded) for p in parts]
    while len(partials) > 1:
        partials = [add(*partials[i : i + split_every]) for i in range(0, len(partials), split_every)]
    (n_rows, flat), = dask.compute(partials[0])
    exact, start = [], 0
    for a in attrs:
        size = counted.cells(a)
        exact.append(flat[start : start + size].reshape(counted.shape(a)))
        start += size
    return exact, int(n_rows)


def _encode_partition(part: pd.DataFrame, domain: Domain, dtypes: dict) -> pd.DataFrame:
    """One partition's codes, each column in the smallest unsigned dtype that holds its states."""
    codes = domain.encode(part)  # raises DomainError on NaN / out-of-domain values
    return pd.DataFrame({a: codes[a].astype(dtypes[a]) for a in domain.attrs}, index=part.index)


class DaskCounter(Counter):
    """Counts of a Dask DataFrame, made in its partitions: only the tables come back to the driver.

    The Dask twin of [`CodesCounter`][pgmpy_dp.tables.counter.CodesCounter]: the same rows give the same tables.
    Each call of [`tables`][pgmpy_dp.tables.dask_release.DaskCounter.tables] is one pass over the partitions
    for the tables not counted before (the newest counts, up to ``CACHE_CELLS`` cells, are kept: a method
    asking again for them costs nothing). On a
    ``distributed`` cluster the partitions are encoded once and their codes kept on the workers
    (``persist``, one byte per value for up to 256 states); on a local scheduler every pass encodes its
    partitions again, so that nothing of the rows stays in the driver's memory. Bad data (a value outside
    its declared states, a NaN without a missing state) raises from the first pass.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The private data; every attribute of ``domain`` is a column.
    domain : Domain
        The public domain (e.g. from [`dask_domain`][pgmpy_dp.tables.dask_release.dask_domain]).
    split_every : int
        Fan-in of the reduction tree.
    persist : bool, optional
        Keep the encoded partitions on the workers; default: when a ``distributed`` client is active.

    Examples
    --------
    >>> import dask, dask.dataframe as dd
    >>> pdf = pd.DataFrame({"a": ["x", "y", "y"], "b": ["u", "u", "v"]})
    >>> d = Domain({"a": ["x", "y"], "b": ["u", "v"]})
    >>> with dask.config.set(scheduler="sync"):
    ...     counter = DaskCounter(dd.from_pandas(pdf, npartitions=2), d)
    ...     n, ab = counter.n_rows, counter.table(("a", "b"))
    >>> n, ab.tolist()
    (3, [[1.0, 0.0], [1.0, 1.0]])
    """

    def __init__(self, ddf: dd.DataFrame, domain: Domain, *, split_every: int = SPLIT_EVERY,
                 persist: bool | None = None) -> None:
        if not isinstance(ddf, dd.DataFrame):
            raise TypeError(f"expected a dask DataFrame, got {type(ddf).__name__}")
        attrs = list(domain.attrs)
        missing = [a for a in attrs if a not in ddf.columns]
        if missing:
            raise DomainError(f"column(s) {missing} are not in the DataFrame (columns: {list(ddf.columns)})")
        self.domain = domain
        self._encoding = domain  # the domain the rows are encoded in (self.domain differs once merged)
        self._merge = None
        self._split_every = split_every
        self._cache: dict[tuple[str, ...], np.ndarray] = {}
        self._n_rows: int | None = None
        if persist is None:
            persist = not _local_scheduler()
        frame = ddf[attrs]
        if persist:
            dtypes = {a: np.min_scalar_type(max(domain.size(a) - 1, 0)) for a in attrs}
            meta = pd.DataFrame({a: np.empty(0, dtype=dtypes[a]) for a in attrs})
            frame = frame.map_partitions(_encode_partition, domain, dtypes, meta=meta).persist()
        self._frame, self._encoded = frame, bool(persist)

    @property
    def n_rows(self) -> int:
        if self._n_rows is None:  # one pass, that also checks every column and keeps the 1-way tables
            self.tables([(a,) for a in self.domain.attrs])
        return self._n_rows

    def tables(self, tables: Sequence[Sequence[str]]) -> list[np.ndarray]:
        wanted = [tuple(t) for t in tables]
        todo = [t for t in dict.fromkeys(wanted) if t not in self._cache]
        fresh: dict[tuple[str, ...], np.ndarray] = {}
        if todo:
            exact, n_rows = dask_contingency_tables(
                self._frame, self._encoding, todo, self._split_every, max_cells=np.iinfo(np.int64).max,
                merge=self._merge, encoded=self._encoded,
            )
            fresh = dict(zip(todo, exact))
            self._n_rows = n_rows
        out = [(fresh[t] if t in fresh else self._cache[t]).copy() for t in wanted]
        for t, x in fresh.items():  # keep the newest tables within CACHE_CELLS: the driver's memory stays bounded
            self._cache[t] = x
        while self._cache and sum(x.size for x in self._cache.values()) > CACHE_CELLS:
            del self._cache[next(iter(self._cache))]
        return out

    def merged(self, maps: Mapping[str, np.ndarray], domain: Domain) -> DaskCounter:
        other = object.__new__(DaskCounter)
        other.__dict__.update(self.__dict__)
        if self._merge is not None:  # recode the encoded codes through both maps at once
            maps = {a: np.asarray(maps[a])[self._merge[0][a]] for a in domain.attrs}
        other.domain, other._merge, other._cache = domain, ({a: np.asarray(maps[a]) for a in domain.attrs}, domain), {}
        return other


def release_marginals_dask(
    ddf: dd.DataFrame,
    tables,
    epsilon=None,
    domain: Mapping[str, Sequence] | Domain | None = None,
    budget=None,
    random_state=None,
    max_cells: int = DEFAULT_MAX_CELLS,
    n_records: int | None = None,
    show_progress: bool = True,
    *,
    rho: float | None = None,
    split_every: int = SPLIT_EVERY,
    privacy_unit=None,
    loss=None,
) -> MarginalRelease:
    """Release differentially private contingency tables of a Dask DataFrame.

    The Dask twin of [`pgmpy_dp.tables.release_marginals`][pgmpy_dp.tables.release.release_marginals]: the same
    data and ``random_state`` give an equal release. The request is checked from metadata alone, then
    the partitions are counted, then the budget is charged and the noise drawn: a failure before the
    noise spends nothing.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The private data, one record per row.
    tables, epsilon, domain, budget, random_state, max_cells, n_records, rho, loss
        As for [`pgmpy_dp.tables.release_marginals`][pgmpy_dp.tables.release.release_marginals]. ``domain`` is also
        how to declare the states of a categorical column whose categories
        Dask does not know.
    show_progress : bool
        A progress bar while counting on a local scheduler (a ``distributed`` cluster has its dashboard).
    split_every : int
        Fan-in of the reduction tree that sums the per-partition counts.

    Returns
    -------
    MarginalRelease

    Examples
    --------
    >>> import dask, dask.dataframe as dd
    >>> pdf = pd.DataFrame({"smoke": ["yes", "no", "no"], "lung": ["no", "no", "yes"]})
    >>> public = {"smoke": ["no", "yes"], "lung": ["no", "yes"]}
    >>> ddf = dd.from_pandas(pdf, npartitions=2)
    >>> with dask.config.set(scheduler="sync"):
    ...     rel = release_marginals_dask(ddf, [("smoke", "lung")], epsilon=1.0, domain=public)
    >>> rel[("smoke", "lung")].values.shape
    (2, 2)
    """
    if privacy_unit is not None:
        # per-individual weights need all rows of an individual together (a shuffle by user):
        # not implemented for Dask yet
        raise NotImplementedError(
            "individual-level privacy (privacy_unit=) is not "
            "supported on Dask DataFrames yet; compute the frame to pandas (ddf.compute()) and use df.dp.release"
        )
    requested = requested_tables(tables)
    if isinstance(requested, list) and any(isinstance(t, Pooled) for t in requested):
        raise NotImplementedError(
            "Pooled tables are not supported on Dask DataFrames yet; release the member tables, or compute the "
            "frame to pandas and use df.dp.release"
        )
    if not isinstance(ddf, dd.DataFrame):
        raise TypeError(f"expected a dask DataFrame, got {type(ddf).__name__}")
    columns = list(dict.fromkeys(a for t in requested for a in t)) if isinstance(requested, list) else []
    missing = [c for c in columns if c not in ddf.columns]
    if missing:
        raise DomainError(
            f"tables name column(s) {missing} that are not in the DataFrame (columns: {list(ddf.columns)})"
        )
    dom = dask_domain(ddf, columns, domain)
    # a bad epsilon, budget or table should not cost a pass over the data
    loss = release_loss(epsilon, rho, loss)
    attrs, per_table = plan_tables(dom, requested, max_cells=max_cells, loss=loss)
    check_budget(budget, per_table, is_gaussian(loss))
    n_records = check_n_records(n_records)
    if show_progress and _local_scheduler():
        from dask.diagnostics import ProgressBar

        with ProgressBar(minimum=2.0):
            exact, n_rows = dask_contingency_tables(ddf, dom, attrs, split_every, max_cells)
    else:
        exact, n_rows = dask_contingency_tables(ddf, dom, attrs, split_every, max_cells)
    if n_rows == 0:
        raise ValueError("the DataFrame has no rows; a release needs at least one record")
    return release_counts(
        exact, dom, attrs, loss=loss, budget=budget, random_state=random_state,
        max_cells=max_cells, n_records=n_records,
    )


def _local_scheduler() -> bool:
    """Whether ``dask.compute`` will run on a local scheduler (no distributed Client is active)."""
    try:
        from distributed import default_client

        default_client()
    except (ImportError, ValueError):
        return True
    return False
