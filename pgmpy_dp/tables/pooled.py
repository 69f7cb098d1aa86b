"""Pooled table requests: one released table holding the sum of several same-shaped tables.

A time-homogeneous chain ties the potential of every edge ``(h_t, h_t+1)``, whose sufficient statistic is
the sum of the edge tables: it is measured once, as a pooled table (Bernstein et al. 2017, section 4.2).
A record is in every member, so the L1 (and worst-case L2) sensitivity is ``len(members)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ..privacy.domain import DEFAULT_MAX_CELLS, Domain, DomainError
from .counting import contingency_table


class Pooled:
    """Request one table whose exact counts are the sum of the member tables.

    Parameters
    ----------
    members : sequence of tuple of str
        Attribute tuples of equal length, e.g. ``[("h0", "h1"), ("h1", "h2")]``, whose attributes
        declare identical states position by position.
    name : str, optional
        A label for the ledger and messages; the release indexes the table by its ``members``.

    Attributes
    ----------
    members : tuple of tuple of str
        The member tables, in the given order.
    attrs : tuple of str
        The first member: it names the released table's axes and states.

    Examples
    --------
    >>> p = Pooled([("h0", "h1"), ("h1", "h2")], name="transition")
    >>> p.attrs, len(p)
    (('h0', 'h1'), 2)
    >>> p
    Pooled([('h0', 'h1'), ('h1', 'h2')], name='transition')
    """

    __slots__ = ("members", "name")

    def __init__(self, members: Iterable[Sequence[str]], name: str | None = None) -> None:
        if isinstance(members, (str, bytes)) or not isinstance(members, Iterable):
            raise TypeError(
                f"Pooled members must be a list of attribute tuples such as [('h0', 'h1'), ('h1', 'h2')], "
                f"got {members!r}"
            )
        out = []
        for m in members:
            if isinstance(m, str):
                m = (m,)
            if not isinstance(m, Sequence) or not all(isinstance(a, str) for a in m):
                raise TypeError(f"each Pooled member must be a tuple of column names, got {m!r}")
            out.append(tuple(m))
        if not out:
            raise ValueError("Pooled needs at least one member table")
        lengths = {len(m) for m in out}
        if len(lengths) != 1:
            raise DomainError(f"Pooled members must all have the same number of attributes, got {out}")
        if 0 in lengths:
            raise DomainError("a Pooled member must name at least one attribute")
        if len(set(out)) != len(out):
            dup = next(m for m in out if out.count(m) > 1)
            raise DomainError(f"Pooled member {dup} is listed twice; list each member table once")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Pooled name must be a str or None, got {name!r}")
        self.members: tuple[tuple[str, ...], ...] = tuple(out)
        self.name = name

    @property
    def attrs(self) -> tuple[str, ...]:
        """The first member, whose attributes name the pooled table's axes."""
        return self.members[0]

    def __len__(self) -> int:
        return len(self.members)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pooled):
            return NotImplemented
        return self.members == other.members

    def __hash__(self) -> int:
        return hash(("Pooled", self.members))

    def __repr__(self) -> str:
        name = "" if self.name is None else f", name={self.name!r}"
        return f"Pooled({list(self.members)!r}{name})"

    def check(self, domain: Domain, max_cells: int = DEFAULT_MAX_CELLS) -> tuple[tuple[str, ...], ...]:
        """Validate the members against ``domain``; return them.

        Each member must be a valid table of the domain, and at every axis all members' attributes must
        declare the same states in the same order (else their counts could not be added cell by cell).

        Examples
        --------
        >>> dom = Domain({"h0": ["a", "b"], "h1": ["a", "b"], "h2": ["a", "c"]})
        >>> Pooled([("h0",), ("h1",)]).check(dom)
        (('h0',), ('h1',))
        >>> Pooled([("h0",), ("h2",)]).check(dom)
        Traceback (most recent call last):
        ...
        pgmpy_dp.privacy.errors.DomainError: Pooled members must declare identical states axis by axis: axis 0 of ('h0',) is 'h0' with states ['a', 'b'], but of ('h2',) it is 'h2' with states ['a', 'c']; declare the same public states for both
        """
        members = tuple(domain.check_table(m, max_cells) for m in self.members)
        first = members[0]
        for m in members[1:]:
            for axis, (a, b) in enumerate(zip(first, m)):
                if domain[a] != domain[b]:
                    raise DomainError(
                        f"Pooled members must declare identical states axis by axis: axis {axis} of {first} "
                        f"is {a!r} with states {list(domain[a])}, but of {m} it is {b!r} with states "
                        f"{list(domain[b])}; declare the same public states for both"
                    )
        return members


def table_key(request) -> tuple:
    """The key a release indexes a table by: its attribute tuple, or a pooled table's members.

    Examples
    --------
    >>> table_key("a"), table_key(["a", "b"]), table_key(Pooled([("a",), ("b",)]))
    (('a',), ('a', 'b'), (('a',), ('b',)))
    >>> table_key([["a"], ["b"]])
    (('a',), ('b',))
    """
    if isinstance(request, Pooled):
        return request.members
    if isinstance(request, str):
        return (request,)
    key = tuple(request)
    if key and all(isinstance(m, (tuple, list)) for m in key):
        return tuple(tuple(m) for m in key)
    return key


def pooled_counts(
    codes: Mapping[str, np.ndarray],
    domain: Domain,
    members: Sequence[Sequence[str]],
    weights: Sequence[np.ndarray | None] | np.ndarray | None = None,
) -> np.ndarray:
    """Exact counts of a pooled table: the sum of the members' contingency tables.

    Parameters
    ----------
    codes, domain
        As for [`contingency_table`][pgmpy_dp.tables.counting.contingency_table].
    members : sequence of tuple of str
        Member attribute tuples (validated with [`Pooled.check`][pgmpy_dp.tables.pooled.Pooled.check]).
    weights : array, or one array (or None) per member, optional
        Per-row weights: one array shared by every member, or one per member.

    Examples
    --------
    >>> d = Domain({"h0": ["a", "b"], "h1": ["a", "b"], "h2": ["a", "b"]})
    >>> codes = {"h0": np.array([0, 1]), "h1": np.array([1, 1]), "h2": np.array([1, 0])}
    >>> pooled_counts(codes, d, [("h0", "h1"), ("h1", "h2")])
    array([[0., 1.],
           [1., 2.]])
    """
    if weights is None or isinstance(weights, np.ndarray):
        weights = [weights] * len(members)
    total = None
    for m, w in zip(members, weights):
        counts = contingency_table(codes, domain, m, w)
        total = counts if total is None else total + counts
    return total
