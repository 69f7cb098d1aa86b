"""Exact marginal counts of one private table, wherever its rows are: what the synthesizer's methods count through.

A [`Counter`][pgmpy_dp.tables.counter.Counter] answers three questions: the exact contingency tables of a list
of attribute sets ([`tables`][pgmpy_dp.tables.counter.Counter.tables]), the number of rows, and the same rows with
some states merged ([`merged`][pgmpy_dp.tables.counter.Counter.merged], MST's compression). A method asks it and
never sees the rows, so one method runs on a pandas table and on a Dask DataFrame alike. The in-memory
counter, [`CodesCounter`][pgmpy_dp.tables.counter.CodesCounter], holds encoded codes and makes one
``np.bincount`` per table; its Dask twin, ``DaskCounter`` in ``pgmpy_dp.tables.dask_release``, counts in the
partitions and brings back only the tables. Both return exact integer counts as float64, so the noise drawn on
them, and every choice made from them, is the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..privacy.domain import Domain
from .counting import contingency_table
from .release import check_codes


class Counter:
    """The exact counts of one private table over a public domain (see the module docstring).

    Attributes
    ----------
    domain : Domain
        The public domain the counts are over (merged states after [`merged`][pgmpy_dp.tables.counter.Counter.merged]).
    """

    domain: Domain

    @property
    def n_rows(self) -> int:
        """The number of rows (private: only a mechanism may use it)."""
        raise NotImplementedError

    def tables(self, tables: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """The exact tables of ``tables``, each of shape ``domain.shape(attrs)`` (float64)."""
        raise NotImplementedError

    def table(self, attrs: Sequence[str]) -> np.ndarray:
        """The exact table of one attribute set."""
        return self.tables([tuple(attrs)])[0]

    def merged(self, maps: Mapping[str, np.ndarray], domain: Domain) -> Counter:
        """The same rows over ``domain``, every attribute's code ``c`` becoming ``maps[attr][c]``."""
        raise NotImplementedError


class CodesCounter(Counter):
    """Counts of encoded rows in memory: one ``np.bincount`` per table.

    Parameters
    ----------
    codes : mapping of str to numpy.ndarray
        One integer code per row for every attribute of ``domain`` (``Domain.encode``); checked here.
    domain : Domain
        The public domain the codes refer to.

    Examples
    --------
    >>> d = Domain({"a": [0, 1], "b": ["x", "y", "z"]})
    >>> counter = CodesCounter({"a": np.array([0, 1, 1]), "b": np.array([2, 0, 0])}, d)
    >>> counter.n_rows, counter.table(("a", "b")).tolist()
    (3, [[0.0, 0.0, 1.0], [2.0, 0.0, 0.0]])
    >>> merged = counter.merged({"a": np.array([0, 0]), "b": np.array([0, 1, 1])}, Domain({"a": [0], "b": ["x", "y|z"]}))
    >>> merged.table(("b",)).tolist()
    [2.0, 1.0]
    """

    def __init__(self, codes: Mapping[str, np.ndarray], domain: Domain) -> None:
        self.domain = domain
        self._n_rows = check_codes(codes, domain, list(domain.attrs), None)  # the one check of encoded rows
        self.codes = {a: np.asarray(codes[a]) for a in domain.attrs}

    @property
    def n_rows(self) -> int:
        return self._n_rows

    def tables(self, tables: Sequence[Sequence[str]]) -> list[np.ndarray]:
        return [contingency_table(self.codes, self.domain, t) for t in tables]

    def merged(self, maps: Mapping[str, np.ndarray], domain: Domain) -> CodesCounter:
        return CodesCounter({a: np.asarray(maps[a])[self.codes[a]] for a in domain.attrs}, domain)


def as_counter(codes, domain: Domain) -> Counter:
    """``codes`` itself if it is a [`Counter`][pgmpy_dp.tables.counter.Counter] over ``domain``, else a
    [`CodesCounter`][pgmpy_dp.tables.counter.CodesCounter] of the encoded rows.

    Examples
    --------
    >>> d = Domain({"a": [0, 1]})
    >>> c = as_counter({"a": np.array([1, 1])}, d)
    >>> as_counter(c, d) is c, c.table(("a",)).tolist()
    (True, [0.0, 2.0])
    """
    if isinstance(codes, Counter):
        if codes.domain != domain:
            raise ValueError(f"the counter counts over {codes.domain}, not over the method's domain {domain}")
        return codes
    return CodesCounter(codes, domain)
