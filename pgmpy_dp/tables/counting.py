"""Exact contingency tables from integer codes: one ``np.bincount`` per table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..privacy.domain import Domain


def contingency_table(
    codes: Mapping[str, np.ndarray], domain: Domain, attrs: Sequence[str], weights: np.ndarray | None = None
) -> np.ndarray:
    """Exact counts over ``attrs`` as a dense array of shape ``domain.shape(attrs)``.

    Every state of the declared domain gets a cell, zero or not. The cell index
    is the mixed-radix number of the row's codes (C order), so one
    ``np.bincount`` does all the counting.

    Parameters
    ----------
    codes : mapping of str to numpy.ndarray
        Integer codes per attribute, as returned by [`Domain.encode`][pgmpy_dp.privacy.domain.Domain.encode].
    domain : Domain
        The public domain the codes refer to.
    attrs : sequence of str
        Attributes of the table, in axis order.
    weights : numpy.ndarray, optional
        Per-row weights (e.g. a 0/1 subsample mask).

    Examples
    --------
    >>> d = Domain({"a": [0, 1], "b": ["x", "y", "z"]})
    >>> codes = {"a": np.array([0, 1, 1]), "b": np.array([2, 0, 0])}
    >>> contingency_table(codes, d, ["a", "b"])
    array([[0., 0., 1.],
           [2., 0., 0.]])
    """
    shape = domain.shape(attrs)
    size = int(np.prod(shape, dtype=np.int64))
    first, *rest = attrs
    index = np.array(codes[first], dtype=np.int64)  # a fresh buffer, updated in place below
    for attr, card in zip(rest, shape[1:]):
        # Horner's rule on the mixed radix, in place: no temporaries per attribute
        np.multiply(index, card, out=index)
        np.add(index, codes[attr], out=index)
    counts = np.bincount(index, weights=weights, minlength=size)
    return counts.astype(np.float64, copy=False).reshape(shape)


def contingency_tables(
    codes: Mapping[str, np.ndarray], domain: Domain, tables: Sequence[Sequence[str]]
) -> list[np.ndarray]:
    """Exact counts for each attribute tuple in ``tables`` (see [`contingency_table`][pgmpy_dp.tables.counting.contingency_table])."""
    return [contingency_table(codes, domain, attrs) for attrs in tables]
