"""What the estimators read off a list of releases: one merged public domain, one record count.

Both estimators treat every release as evidence about the same records, so both
need the same two rules: the releases must agree on the states of every
attribute they share, and the record count is the declared one if any release
declares it, else the inverse-variance pooled noisy totals.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

from ..privacy.domain import Domain, DomainError
from ..tables.release import MarginalRelease, pooled_record_count

__all__ = ["merge_domains", "pooled_n_records", "released_domain"]


def merge_domains(releases: Sequence[MarginalRelease]) -> Domain:
    """The union of the releases' public domains; a [`DomainError`][pgmpy_dp.privacy.domain.DomainError] if they disagree on an attribute.

    Examples
    --------
    >>> import pandas as pd, pgmpy_dp
    >>> df = pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"]})
    >>> public = {"a": ["x", "y"], "b": ["u", "v"]}
    >>> rels = [df.dp.release([c], epsilon=1.0, domain=public, random_state=0) for c in "ab"]
    >>> merge_domains(rels)
    Domain(a: 2, b: 2)
    """
    domain = releases[0].domain
    for r in releases[1:]:
        try:
            domain = domain.merge(r.domain)
        except DomainError as exc:
            raise DomainError(f"the releases disagree on a domain: {exc}") from None
    return domain


def released_domain(releases: Sequence[MarginalRelease], nodes: Iterable[str]) -> Domain:
    """[`merge_domains`][pgmpy_dp.estimators.evidence.merge_domains], after checking that every model node was released in some table.

    Examples
    --------
    >>> import pandas as pd, pgmpy_dp
    >>> df = pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"]})
    >>> rel = df.dp.release(["a"], epsilon=1.0, domain={"a": ["x", "y"]}, random_state=0)
    >>> released_domain([rel], ["a"])
    Domain(a: 2)
    >>> released_domain([rel], ["a", "b"])
    Traceback (most recent call last):
    ...
    pgmpy_dp.privacy.domain.DomainError: model node(s) ['b'] are in no release (released attributes: ['a']); release tables over them or remove them from the model
    """
    domain = merge_domains(releases)
    missing = [v for v in nodes if v not in domain]
    if missing:
        raise DomainError(
            f"model node(s) {missing} are in no release (released attributes: {list(domain.attrs)}); "
            "release tables over them or remove them from the model"
        )
    return domain


def pooled_n_records(releases: Sequence[MarginalRelease]) -> float:
    """The declared record count if a release declares one, else the pooled noisy totals (at least one).

    Examples
    --------
    >>> import pandas as pd, pgmpy_dp
    >>> df = pd.DataFrame({"a": ["x", "y", "y"]})
    >>> rel = df.dp.release(["a"], epsilon=1.0, domain={"a": ["x", "y"]}, n_records=3, random_state=0)
    >>> pooled_n_records([rel])
    3.0
    """
    declared = [r.n_records for r in releases if r.n_records is not None]
    if declared:
        return float(declared[0])
    n = pooled_record_count([t for r in releases for t in r.tables], [r.normalized for r in releases for _ in r.tables])
    if not n >= 1:
        # the release is already paid for: fit something rather than fail, and say why it is poor
        warnings.warn(
            f"the noisy tables estimate a record count of {n:g} (noise swamps the counts); using 1 record. "
            "Declare n_records in the release if the count is public, or spend more epsilon",
            RuntimeWarning,
            stacklevel=3,
        )
        n = 1.0
    return n
