"""What the estimators read off a list of releases: one merged public domain, one record count.

Both estimators treat every release as evidence about the same records: shared attributes must agree
on their states, the record count is declared or pooled, and ``skip_state`` tables are refused.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

from ..privacy.domain import Domain, DomainError
from ..tables.artifact import MarginalRelease, pooled_record_count


def merge_domains(releases: Sequence[MarginalRelease]) -> Domain:
    """The union of the releases' public domains; a [`DomainError`][pgmpy_dp.privacy.errors.DomainError] if they disagree on an attribute.

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
    pgmpy_dp.privacy.errors.DomainError: model node(s) ['b'] are in no release (released attributes: ['a']); release tables over them or remove them from the model
    """
    for r in releases:
        refuse_skip_state((r.privacy_unit or {}).get("skip_state"))
    domain = merge_domains(releases)
    missing = [v for v in nodes if v not in domain]
    if missing:
        raise DomainError(
            f"model node(s) {missing} are in no release (released attributes: {list(domain.attrs)}); "
            "release tables over them or remove them from the model"
        )
    return domain


def refuse_skip_state(skip_state) -> None:
    """Refuse to fit tables released with ``skip_state`` (a ValueError saying why and what to do).

    Such a table does not measure the model's ``N p(x)`` (docs/mobility.md, "About skip_state").

    Examples
    --------
    >>> refuse_skip_state(None)
    >>> refuse_skip_state("null")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: tables released with skip_state='null' cannot be fitted: ...
    """
    if skip_state is not None:
        raise ValueError(
            f"tables released with skip_state={skip_state!r} cannot be fitted: they do not count the rows that "
            "are all-skip on a table's attributes, so the all-skip cell is not a measurement and (under "
            "contribution='normalize') the other cells measure each individual's distribution given 'not "
            "all-skip', reweighted per table, not the model's p(x) over all rows. Release with skip_state=None "
            "(each individual still adds at most 1 to each table under contribution='normalize')"
        )


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
