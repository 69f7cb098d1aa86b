"""Noisy marginal releases: the measurement step.

[`release_marginals`][pgmpy_dp.tables.release.release_marginals] counts, charges and adds noise;
[`release_from_codes`][pgmpy_dp.tables.release.release_from_codes] and
[`release_counts`][pgmpy_dp.tables.release.release_counts] start from encoded data or exact counts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._progress import progress
from ..privacy.budget import PrivacyBudget
from ..privacy.loss import PureDP, ZCDP
from ..privacy.domain import DEFAULT_MAX_CELLS, Domain, DomainError, read_domain
from ..privacy.mechanisms import (
    GAUSSIAN_MECHANISM,
    MECHANISM,
    discrete_gaussian_noise,
    discrete_laplace_noise,
    sampler_for,
)
from ..privacy.random_state import check_random_state
from .artifact import MarginalRelease, NoisyTable
from .contribution import (
    ContributionBound,
    granularity_check,
    check_contribution,
    check_skip_state,
    contribution_bound,
    contribution_weights,
    encode_units,
    sample_per_unit,
    unit_rng,
)
from .contribution import check_units as _check_unit_codes
from .counting import contingency_table
from .plan import noise_scale, plan_release, Planned, is_gaussian, is_release_loss, release_loss, requested_columns, requested_tables
from .pooled import pooled_counts, table_key

# -- the mechanism ---------------------------------------------------------------------------


def release_counts(
    exact,
    domain: Domain,
    tables,
    epsilon=None,
    *,
    rho=None,
    loss=None,
    budget: PrivacyBudget | None = None,
    random_state=None,
    max_cells: int = DEFAULT_MAX_CELLS,
    label: str | None = None,
    n_records: float | None = None,
    contribution: ContributionBound | None = None,
) -> MarginalRelease:
    """Add noise to already-counted exact tables: validate, charge, then draw.

    The measurement step of every release, for callers that count elsewhere. ``epsilon`` draws
    discrete Laplace noise (pure DP), ``rho`` discrete Gaussian noise (zCDP, see
    [`plan_tables`][pgmpy_dp.tables.plan.plan_tables]). Validation first, then one charge to ``budget``,
    then noise: an exception before the noise leaves the budget untouched. The guarantee assumes each
    table is a true contingency table of the private records (or bounded as ``contribution`` states):
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
        Shorthands of ``loss``: a total budget, or one per table (see [`plan_tables`][pgmpy_dp.tables.plan.plan_tables]).
    loss : PrivacyLoss or sequence of PrivacyLoss, keyword only
        The loss as a value (a total or one per table): ``PureDP`` for discrete Laplace noise,
        ``ZCDP`` or ``ApproxDP`` for discrete Gaussian noise. Exactly one of the three.
    budget : PrivacyBudget, optional
        Accountant to charge (a Gaussian release needs a zCDP budget).
    random_state : int or numpy.random.Generator, optional
        Seed for reproducible *experiments only*.
    max_cells : int
        Refuse tables with more cells than this.
    label : str, optional
        Ledger label.
    n_records : float, optional
        Declared public record count.
    contribution : ContributionBound, optional
        The individual-level bound the counts were made under: it sets each table's sensitivity and
        lattice and is recorded as the release's ``privacy_unit``.

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
    loss = release_loss(epsilon, rho, loss)
    planned = plan_release(domain, tables, loss, max_cells, contribution=contribution)
    gaussian = is_gaussian(loss)
    check_budget(budget, [p.budget for p in planned], gaussian)
    counts = _check_exact(exact, domain, planned)
    g = 1.0 if contribution is None else contribution.granularity
    if g != 1.0:  # the noise is integer in units of g: the counts must be too
        counts = [granularity_check(c, g, p.key) for c, p in zip(counts, planned)]
    n_records = check_n_records(n_records)
    mechanism = GAUSSIAN_MECHANISM if gaussian else MECHANISM
    rng = check_random_state(random_state)
    sampler = sampler_for(sum(x.size for x in counts), rng, mechanism)
    label = label or "release " + ", ".join(_label(t, p) for t, p in zip(tables, planned))
    per_table = [p.budget for p in planned]

    def draw() -> list[NoisyTable]:
        # One sampler call per scale: OpenDP has a per-call cost of about 1 ms.
        groups: dict[float, list[int]] = {}
        for i, p in enumerate(planned):
            groups.setdefault(noise_scale(p.budget, gaussian, p.sensitivity), []).append(i)
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
        with budget.charge(_charged(budget, per_table, gaussian), label=label):
            noisy = draw()
    used = _attrs_in_order(domain, [a for p in planned for a in p.counted])
    unit = None if contribution is None else contribution.record
    return MarginalRelease(domain.project(used), noisy, mechanism, sampler, n_records, privacy_unit=unit)


def _label(request, planned: Planned) -> str:
    """A table's name in the ledger: ``(a, b)``, or ``pooled name[(a, b) + ...]``."""
    if planned.members is None:
        return "(" + ", ".join(planned.attrs) + ")"
    name = getattr(request, "name", None) or "pooled"
    return f"{name}[" + " + ".join("(" + ", ".join(m) + ")" for m in planned.members) + "]"


def check_budget(budget, per_table: Sequence[float], gaussian: bool) -> None:
    """A budget that can account the release (a Gaussian one needs zCDP), checked before anything is counted."""
    if budget is None:
        return
    if not isinstance(budget, PrivacyBudget):
        raise TypeError(f"budget must be a pgmpy_dp.PrivacyBudget or None, got {type(budget).__name__}")
    if gaussian:  # a pure-epsilon budget cannot account rho; every budget accounts epsilon
        budget.require(ZCDP(math.fsum(per_table)), who="a discrete Gaussian release")


def _charged(budget: PrivacyBudget, per_table: list[float], gaussian: bool):
    """What a release charges, as a loss value: its total rho, or its total epsilon.

    In a zCDP budget a Laplace release costs ``sum(epsilon_i**2) / 2`` (each table is
    ``epsilon_i``-DP, hence ``epsilon_i**2 / 2``-zCDP), ``|C|`` times less than its total as one
    ``epsilon**2 / 2``; the float sum is rounded up so the charge never understates it.
    """
    if gaussian:
        return ZCDP(math.fsum(per_table))
    if budget.accounting == "zcdp" and len(per_table) > 1:
        rho = math.fsum(e * e / 2.0 for e in per_table)
        return ZCDP(math.nextafter(rho, math.inf))
    return PureDP(math.fsum(per_table))


def _check_exact(exact, domain: Domain, planned: Sequence[Planned]) -> list[np.ndarray]:
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
    loss=None,
    budget: PrivacyBudget | None = None,
    random_state=None,
    max_cells: int = DEFAULT_MAX_CELLS,
    label: str | None = None,
    weights: np.ndarray | None = None,
    n_records: float | None = None,
    show_progress: bool = False,
    *,
    unit=None,
    units: np.ndarray | None = None,
    **shorthands,
) -> MarginalRelease:
    """Release noisy tables from already-encoded data: count, then [`release_counts`][pgmpy_dp.tables.release.release_counts].

    Validation and counting, then one charge, then noise, as in ``release_counts``.

    Parameters
    ----------
    codes : mapping of str to numpy.ndarray
        One integer code per row for every attribute (``Domain.encode``).
    domain : Domain
        The public domain.
    tables : list of tuple of str or Pooled
        The tables to release.
    loss : PrivacyLoss or sequence of PrivacyLoss
        A total or one per table: ``PureDP`` (discrete Laplace), ``ZCDP`` or ``ApproxDP``
        (discrete Gaussian). A number (or a sequence of numbers) here is shorthand for ``epsilon=``.
    budget, random_state, max_cells, label, n_records
        As for [`release_counts`][pgmpy_dp.tables.release.release_counts].
    weights : numpy.ndarray, optional
        0/1 per row: restricts counting to a subsample (the caller accounts for subsampling).
    show_progress : bool
        A bar over the tables being counted if that takes more than a couple of seconds.
    unit : UserLevel, column label or ContributionBound, keyword only
        Individual-level privacy, as in [`release_marginals`][pgmpy_dp.tables.release.release_marginals];
        the label is recorded, the column is not read. Needs ``units``.
    units : numpy.ndarray, keyword only
        One integer code of the individual per row (e.g. ``pd.factorize`` of a user column);
        without ``unit``, an unnamed individual under ``"normalize"``.
    **shorthands
        The public keyword forms: ``epsilon=`` or ``rho=`` for ``loss``, and ``privacy_unit=``,
        ``contribution=``, ``max_records_per_user=``, ``skip_state=`` for ``unit``.

    Examples
    --------
    >>> from pgmpy_dp.privacy.units import UserLevel
    >>> dom = Domain({"a": ["null", "x"], "b": ["null", "x"]})
    >>> codes = {"a": np.array([0, 1, 1, 0]), "b": np.array([0, 0, 1, 1])}
    >>> rel = release_from_codes(codes, dom, [("a", "b")], PureDP(1e6), units=np.array([0, 0, 0, 1]),
    ...                          unit=UserLevel("user", skip_state="null"), random_state=0)
    >>> rel[("a", "b")].values.round(3).tolist()   # user 0: two counted rows of 1/2; user 1: one of 1
    [[0.0, 1.0], [0.5, 0.5]]
    >>> rel[("a", "b")].sensitivity, rel.privacy_unit["contribution"]
    (1.0, 'normalize')
    """
    loss, bound = _values_of(loss, unit, units, shorthands)
    planned = plan_release(domain, tables, loss, max_cells, contribution=bound)
    check_budget(budget, [p.budget for p in planned], is_gaussian(loss))  # before counting, which can take a while
    counted_attrs = [a for p in planned for a in p.counted]
    n_rows = check_codes(codes, domain, _attrs_in_order(domain, counted_attrs), weights)
    if n_rows == 0:
        raise ValueError("the data has no rows; a release needs at least one record")
    n_records = check_n_records(n_records)
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
        exact, domain, tables, loss=loss, budget=budget, random_state=rng,
        max_cells=max_cells, label=label, n_records=n_records, contribution=bound,
    )


_UNIT_SHORTHANDS = ("privacy_unit", "contribution", "max_records_per_user", "skip_state")


def _values_of(loss, unit, units, shorthands: dict):
    """``release_from_codes``' loss and privacy unit as values, from the values or their keyword shorthands."""
    unknown = sorted(set(shorthands) - {"epsilon", "rho", *_UNIT_SHORTHANDS})
    if unknown:
        raise TypeError(f"release_from_codes() got an unexpected keyword argument {unknown[0]!r}")
    epsilon, rho = shorthands.get("epsilon"), shorthands.get("rho")
    if loss is not None and not is_release_loss(loss):  # a number (or one per table): the positional epsilon
        if epsilon is not None:
            raise TypeError("release_from_codes() got multiple values for argument 'epsilon'")
        loss, epsilon = None, loss
    loss = release_loss(epsilon, rho, loss)
    given = {k: shorthands[k] for k in _UNIT_SHORTHANDS if k in shorthands}
    if not given:
        return loss, contribution_bound(unit, units is not None)
    if unit is not None:
        raise ValueError(f"give unit= or its shorthand keywords {sorted(given)}, not both")
    column = given.pop("privacy_unit", None)
    if units is None:
        if column is not None:
            raise ValueError(
                "privacy_unit names the individual-level unit, whose per-row codes go in units=; "
                "give both (or neither, for record-level privacy)"
            )
        return loss, check_contribution(None, **given)
    bound = check_contribution("individual" if column is None else column, **given)
    if column is None:  # codes of unnamed individuals
        bound = ContributionBound(None, bound.contribution, bound.max_records_per_user, bound.skip_state)
    return loss, bound


def check_codes(codes: Mapping[str, np.ndarray], domain: Domain, attrs, weights) -> int:
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


def check_n_records(n_records):
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
    loss=None,
) -> MarginalRelease:
    """Release differentially private contingency tables of ``df``.

    With a total ``epsilon`` over ``|C|`` tables every cell gets discrete Laplace noise of scale
    ``|C| / epsilon`` (Bernstein et al. 2017, eq. 3); with ``rho`` (zCDP), discrete Gaussian noise of
    sigma ``sqrt(|C| / (2 rho))``. A sequence gives one budget per table and spends their sum. A
    [`Pooled`][pgmpy_dp.tables.pooled.Pooled] request has sensitivity ``len(members)``; a total is split
    so that every cell gets the same noise ([`plan_tables`][pgmpy_dp.tables.plan.plan_tables]). With
    ``privacy_unit`` the protected unit is an individual, whose rows are bounded per table as the
    ``pgmpy_dp.UserLevel`` says (docs/privacy.md).

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
        A record count that is already public, stored; otherwise it is estimated from the noisy tables.
    show_progress : bool
        Progress bars over encoding and counting, when they take more than a couple of seconds.
    rho : float or sequence of float, keyword only
        Total zCDP budget, or one per table (discrete Gaussian noise), instead of ``epsilon``; a
        ``budget`` must then be a zCDP one.
    privacy_unit : UserLevel or column label, keyword only
        Individual-level privacy: a ``pgmpy_dp.UserLevel``, or the column alone (``UserLevel(column)``).
        The column only groups rows; it must not appear in a table or in ``domain``.
    loss : PrivacyLoss or sequence of PrivacyLoss, keyword only
        The loss as a value instead of ``epsilon`` or ``rho``: ``PureDP`` (discrete Laplace
        noise), ``ZCDP`` or ``ApproxDP`` (discrete Gaussian noise at the rho it allows), a total
        or one per table.

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
    bound = contribution_bound(privacy_unit, privacy_unit is not None)
    privacy_unit = None if bound is None else bound.column
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
    domain = read_domain(domain)  # a schema file's path
    if bound is not None:
        _check_unit_column(df, privacy_unit, columns, domain)
    dom = Domain.from_dataframe(df, columns, domain)
    dom.check_json()  # a release is published as JSON: fail before anything is charged
    units = None if bound is None else encode_units(df[privacy_unit], privacy_unit)
    codes = dom.encode(df, columns, show_progress=show_progress)
    return release_from_codes(
        codes, dom, requested, release_loss(epsilon, rho, loss), budget, random_state, max_cells,
        n_records=n_records, show_progress=show_progress, unit=bound, units=units,
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
