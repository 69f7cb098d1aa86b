"""Resolving the open parts of a schema: private keys for ``discover`` columns, private bins for ``bounds`` columns.

A schema may leave two things to the data: the categories of a column named in ``discover`` and the bin edges
of a numeric column given only public ``bounds`` (with ``integer`` for integer columns). Both are released by
charged mechanisms ([`pgmpy_dp.privacy.discovery`][pgmpy_dp.privacy.discovery]) under a declared ``share`` of
the fit's loss, in two steps: [`plan_schema`][pgmpy_dp.tables.resolve.plan_schema] checks everything public and
splits the loss (nothing is read from the data); [`resolve_domain`][pgmpy_dp.tables.resolve.resolve_domain] runs
the mechanisms and returns the resolved [`Domain`][pgmpy_dp.privacy.domain.Domain] with a public
[`SchemaRelease`][pgmpy_dp.tables.resolve.SchemaRelease]; [`recode`][pgmpy_dp.tables.resolve.recode] sends the
unreleased keys to the ``"Other"`` state.

How the loss splits (docs/privacy.md, "Keys and bins from the data"):

- ``epsilon`` with ``delta`` and key discovery: discovery takes ``delta_k = share * delta``; the rest of the fit is
  zCDP at ``rho = epsilon_delta_to_rho(epsilon, delta - delta_k)``, of which the schema takes ``share * rho``.
  Everything is then ``delta_k``-approximately ``rho``-zCDP, hence ``(epsilon, delta)``-DP.
- bins only: the schema takes ``share`` of the loss in its own kind (rho, or a pure epsilon), the fit the rest.
- key discovery needs ``delta``: it is refused with ``rho=`` alone or a pure ``epsilon``.

The schema's part is split evenly over the columns; a ``discover`` column gets ``delta_k / len(discover)``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from ..privacy.discovery import KeyRelease, check_bounds, discover_keys, private_bin_edges
from ..privacy.domain import Domain, DomainError
from ..privacy.loss import ZCDP, ApproxDP, PrivacyLoss, PureDP
from ..privacy.parameters import epsilon_delta_to_rho

__all__ = ["OTHER", "DEFAULT_BINS", "SchemaPlan", "SchemaRelease", "check_contract", "plan_schema", "recode", "resolve_domain",
           "run_schema"]

#: The state that unreleased (rare) keys of a ``discover`` column are mapped to.
OTHER = "Other"

#: Bins asked of each ``bounds`` column.
DEFAULT_BINS = 10

# the fit's part is shrunk by this factor, so that the schema's part and the fit's never sum above the whole
_SHRINK = 1.0 - 1e-12


@dataclass(frozen=True)
class SchemaPlan:
    """What [`resolve_domain`][pgmpy_dp.tables.resolve.resolve_domain] will release, and the loss split; public facts only.

    Attributes
    ----------
    discover : tuple of str
        Columns whose keys are released.
    bounds : dict of str to (float, float)
        Columns whose bin edges are released, with their public bounds.
    integer : frozenset of str
        The ``bounds`` columns holding integers.
    n_bins : int or dict of str to int
        Bins asked of each ``bounds`` column (one count, or one per column).
    loss : ZCDP or PureDP
        What the schema's mechanisms spend together (besides ``delta``).
    delta : float
        The discovery's delta (0 without discovery).
    method_loss : ZCDP or PureDP
        What is left for the rest of the fit.
    declared : Domain or mapping
        The declared domain of the other columns.
    """

    discover: tuple[str, ...]
    bounds: dict
    integer: frozenset
    n_bins: int
    loss: PrivacyLoss
    delta: float
    method_loss: PrivacyLoss
    declared: object
    missing: dict = field(default_factory=dict)

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns the schema resolves."""
        return (*self.discover, *self.bounds)

    def placeholder(self) -> Domain:
        """Two states for each of the plan's columns: the smallest domain they may resolve to, for checks before the charge."""
        return Domain({c: [0, 1] for c in self.columns})

    def column_loss(self) -> PrivacyLoss:
        """Each column's even part of [`loss`][pgmpy_dp.tables.resolve.SchemaPlan.loss]."""
        m = len(self.columns)
        if isinstance(self.loss, PureDP):
            return PureDP(self.loss.epsilon / m * _SHRINK)
        return ZCDP(self.loss.rho / m * _SHRINK)


@dataclass(frozen=True)
class SchemaRelease:
    """The public record of a resolved schema: released keys, chosen edges and what they cost.

    Attributes
    ----------
    keys : dict of str to KeyRelease
        Per ``discover`` column, the released keys and the mechanism's threshold facts.
    edges : dict of str to tuple of float
        Per ``bounds`` column, the chosen bin edges.
    loss : ZCDP or PureDP
        What the schema spent (besides ``delta``).
    delta : float
        The discovery's delta: the schema release is ``delta``-approximately ``loss.rho``-zCDP.
    other : str
        The state of unreleased keys.
    """

    keys: dict[str, KeyRelease]
    edges: dict
    loss: PrivacyLoss
    delta: float
    other: str = OTHER

    @classmethod
    def empty(cls, plan: SchemaPlan) -> SchemaRelease:
        """A record of ``plan`` with nothing released yet (filled in place by [`resolve_domain`][pgmpy_dp.tables.resolve.resolve_domain])."""
        return cls({}, {}, plan.loss, plan.delta)

    def to_dict(self) -> dict:
        """A JSON-ready record, publishable with the releases."""
        loss = {"epsilon": self.loss.epsilon} if isinstance(self.loss, PureDP) else {"rho": self.loss.rho}
        return {
            "keys": {c: rel.to_dict() for c, rel in self.keys.items()},
            "edges": {c: list(e) for c, e in self.edges.items()},
            "loss": {**loss, "delta": self.delta},
            "other": self.other,
        }


def _requests(domain) -> tuple[tuple[str, ...], dict, frozenset]:
    # a column with bounds and declared bins is resolved already (its bounds bound the decoded values)
    binned = dict(getattr(domain, "bins", None) or {}) if isinstance(domain, Domain) else {}
    bounds = {c: b for c, b in dict(getattr(domain, "bounds", None) or {}).items() if c not in binned}
    integer = frozenset(c for c in getattr(domain, "integer", None) or () if c not in binned)
    discover = tuple(getattr(domain, "discover", None) or ())
    return discover, bounds, integer


def _check_share(share) -> float:
    if isinstance(share, bool) or not isinstance(share, numbers.Real) or not (0 < float(share) < 1):
        raise ValueError(f"schema_share must be a number in (0, 1), got {share!r}; e.g. schema_share=0.1")
    return float(share)


def _split(loss: PrivacyLoss, share: float, discovering: bool) -> tuple[PrivacyLoss, float, PrivacyLoss]:
    """``(schema loss, discovery delta, the rest of the fit's loss)``."""
    if discovering and not isinstance(loss, ApproxDP):
        raise ValueError(
            f"private key discovery is approximate DP (a threshold with its delta), but the loss is {loss}; "
            "give epsilon= with delta= (e.g. epsilon=1.0, delta=1e-9), or declare the column's states"
        )
    if isinstance(loss, PureDP):
        return PureDP(share * loss.epsilon), 0.0, PureDP((1.0 - share) * loss.epsilon * _SHRINK)
    delta_k = share * loss.delta if discovering else 0.0
    rho = epsilon_delta_to_rho(loss.epsilon, loss.delta - delta_k) if discovering else loss.rho
    return ZCDP(share * rho), delta_k, ZCDP((1.0 - share) * rho * _SHRINK)


def _declared_part(domain, requested: set):
    """The declared domain of the other columns."""
    if isinstance(domain, Domain):
        return domain.project([a for a in domain.attrs if a not in requested])
    return {k: v for k, v in (domain or {}).items() if k not in requested}


def _missing_of(domain, requested) -> dict:
    per_attr = dict(getattr(domain, "missing", None) or {}) if isinstance(domain, Domain) else {}
    every = getattr(domain, "_missing_all", None)
    return {c: per_attr.get(c, every) for c in requested if per_attr.get(c, every) is not None}


def plan_schema(df: pd.DataFrame, domain, loss: PrivacyLoss, share, n_bins: int | None = None) -> SchemaPlan | None:
    """Check the schema's open parts from public facts and split the loss; ``None`` when nothing is open.

    ``n_bins`` (bins asked of each ``bounds`` column) defaults to the domain's ``n_bins`` attribute if it has
    one, else ``DEFAULT_BINS``.

    Raises one error naming every bad column (unknown, asked twice, declared too, a bad bound or dtype).
    Reads the column names and dtypes of ``df``, never its values.

    Examples
    --------
    >>> from pgmpy_dp.privacy.loss import ApproxDP
    >>> class Declared(Domain):  # a schema that leaves the keys of "job" open
    ...     discover = {"job"}
    >>> df = pd.DataFrame({"job": ["a", "b"], "x": [0, 1]})
    >>> plan = plan_schema(df, Declared({"x": [0, 1]}), ApproxDP(1.0, 1e-9), share=0.1)
    >>> plan.discover, float(f"{plan.delta:.6g}"), round(plan.loss.rho, 6)
    (('job',), 1e-10, 0.001488)
    """
    discover, bounds, integer = _requests(domain)
    if not discover and not bounds:
        return None
    share = _check_share(share)
    problems = []
    columns = set(df.columns)
    for col in (*discover, *bounds):
        if col not in columns:
            problems.append(f"{col!r} is not a column of the DataFrame")
    for col in set(discover) & set(bounds):
        problems.append(f"{col!r} is asked both for key discovery and for bins; ask once")
    for col in sorted(integer - set(bounds), key=str):
        problems.append(f"{col!r} is declared integer but has no bounds; give bounds={{{col!r}: (lo, hi)}}")
    declared_bins = dict(getattr(domain, "bins", None) or {}) if isinstance(domain, Domain) else {}
    for col in (*discover, *bounds):
        if col in declared_bins or (isinstance(domain, Mapping) and col in domain):
            problems.append(f"{col!r} has declared states or bins and is asked to be resolved from the data; declare it once")
    for col, b in bounds.items():
        try:
            check_bounds(b, col in integer)
        except ValueError as exc:
            problems.append(f"bounds[{col!r}]: {exc}")
        if col in columns and not (pd.api.types.is_numeric_dtype(df.dtypes[col]) and not pd.api.types.is_bool_dtype(df.dtypes[col])):
            problems.append(f"{col!r} has bounds but dtype {df.dtypes[col]}; bins need a numeric column")
    for col in discover:
        if col in columns and not _discoverable(df.dtypes[col]):
            problems.append(f"{col!r} has dtype {df.dtypes[col]}; key discovery takes string, integer, boolean or category columns")
    if problems:
        raise DomainError("the schema cannot be resolved: " + "; ".join(problems))
    if n_bins is None:
        n_bins = getattr(domain, "n_bins", None) or DEFAULT_BINS
    if isinstance(n_bins, Mapping):  # a Domain's n_bins, per column
        n_bins = {c: n_bins.get(c, DEFAULT_BINS) for c in bounds}
    for n in n_bins.values() if isinstance(n_bins, Mapping) else [n_bins]:
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
            raise ValueError(f"n_bins must be an integer of at least 2, got {n!r}")
    schema_loss, delta, method_loss = _split(loss, share, bool(discover))
    requested = set(discover) | set(bounds)
    n_bins = {c: int(n) for c, n in n_bins.items()} if isinstance(n_bins, Mapping) else int(n_bins)
    return SchemaPlan(tuple(discover), {c: bounds[c] for c in bounds}, integer, n_bins, schema_loss, delta,
                      method_loss, _declared_part(domain, requested), _missing_of(domain, requested))


def _discoverable(dtype) -> bool:
    api = pd.api.types
    return (api.is_object_dtype(dtype) or api.is_string_dtype(dtype) or api.is_integer_dtype(dtype)
            or api.is_bool_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype))


def resolve_domain(df: pd.DataFrame, plan: SchemaPlan, random_state=None, on_noise=None,
                   record: SchemaRelease | None = None) -> tuple[Domain, SchemaRelease]:
    """Run the charged mechanisms of ``plan``: the resolved domain of its columns and the public record.

    The caller charges ``plan.loss`` (with ``delta=plan.delta``) before; ``on_noise`` is called once the first
    noise is drawn (e.g. a [`Charge.commit`][pgmpy_dp.privacy.budget.Charge.commit]). The returned domain
    covers the plan's columns only; merge it with the declared rest. A given ``record``
    ([`SchemaRelease.empty`][pgmpy_dp.tables.resolve.SchemaRelease.empty]) is filled column by column, so it
    keeps what was released if a later column fails.

    Examples
    --------
    >>> from pgmpy_dp.privacy.loss import ApproxDP
    >>> class Declared(Domain):
    ...     discover, bounds, integer = {"job"}, {"age": (17, 90)}, {"age"}
    >>> df = pd.DataFrame({"job": ["nurse"] * 4000 + ["pilot"], "age": [30] * 2000 + [60] * 2001})
    >>> plan = plan_schema(df, Declared(), ApproxDP(1.0, 1e-9), share=0.5, n_bins=2)
    >>> dom, record = resolve_domain(df, plan, random_state=0)
    >>> dom["job"], record.edges["age"][0], record.edges["age"][-1]
    (('nurse', 'Other'), 17.0, 91.0)
    """
    per_column = plan.column_loss()
    delta_each = plan.delta / len(plan.discover) * (1.0 - 1e-12) if plan.discover else 0.0
    record = SchemaRelease.empty(plan) if record is None else record
    states, bins, keys = {}, record.edges, record.keys
    notified = False
    for col in plan.columns:
        if not notified and on_noise is not None:
            on_noise()  # from here on the noise exists
            notified = True
        if col in plan.discover:
            rel = discover_keys(df[col].to_numpy(dtype=object), per_column.rho, delta_each, random_state)
            keys[col] = rel
            states[col] = [*rel.keys, OTHER] if OTHER not in rel.keys else list(rel.keys)
        else:
            n_bins = plan.n_bins[col] if isinstance(plan.n_bins, Mapping) else plan.n_bins
            bins[col] = private_bin_edges(df[col].to_numpy(dtype="float64", na_value=math.nan), plan.bounds[col],
                                          n_bins, per_column, col in plan.integer, random_state)
    # the bounds and integer columns stay declared: decoding draws values within them
    return Domain(states, bins=dict(bins), missing=plan.missing or None, bounds={c: plan.bounds[c] for c in bins},
                  integer=[c for c in bins if c in plan.integer]), record


def recode(df: pd.DataFrame, record: SchemaRelease) -> pd.DataFrame:
    """``df`` with every unreleased key of a discovered column replaced by ``record.other`` (missing values kept).

    Examples
    --------
    >>> rec = SchemaRelease({"job": KeyRelease(("nurse",), 0.1, 1e-9, 2.2, 15, 19)}, {}, ZCDP(0.1), 1e-9)
    >>> recode(pd.DataFrame({"job": ["nurse", "pilot", None]}), rec)["job"].tolist()
    ['nurse', 'Other', nan]
    """
    changed = {}
    for col, rel in record.keys.items():
        s = df[col].astype(object)
        rare = s.notna() & ~s.isin(list(rel.keys))
        s[rare] = record.other  # a copy: astype(object) never returns the frame's own column
        changed[col] = s
    return df.assign(**changed) if changed else df


def amount(loss: PrivacyLoss, accounting: str) -> float:
    """What ``loss`` costs in a budget of the given accounting (``"pure-dp"``: epsilon, ``"zcdp"``: rho)."""
    return loss.epsilon if accounting == "pure-dp" and isinstance(loss, PureDP) else loss.rho


def check_contract(df: pd.DataFrame, plan: SchemaPlan) -> None:
    """Refuse, before the charge, missing values in a plan's column that declares no missing state.

    The input contract of docs/privacy.md: such a refusal reveals one bit each time it is tried, and names no count.
    """
    for col in plan.columns:
        if col not in plan.missing and df[col].isna().any():
            raise DomainError(
                f"column {col!r} has missing values (NaN or None); declare a missing state, e.g. "
                f"domain=pgmpy_dp.Domain({{...}}, missing='Missing'), or drop or impute them "
                "before a private release"
            )


def run_schema(df: pd.DataFrame, plan: SchemaPlan, budget=None, random_state=None, label: str = "schema",
               record: SchemaRelease | None = None):
    """Check the input contract, charge ``plan.loss`` (with its delta) to ``budget``, resolve the domain and recode ``df``.

    Returns ``(recoded df, resolved domain of the plan's columns, SchemaRelease)``. Once the first noise is
    drawn the charge is committed: a later failure keeps it, and a given ``record`` keeps what was released.

    Examples
    --------
    >>> from pgmpy_dp.privacy.budget import PrivacyBudget
    >>> from pgmpy_dp.privacy.loss import ApproxDP
    >>> class Declared(Domain):
    ...     discover = {"job"}
    >>> df = pd.DataFrame({"job": ["nurse"] * 4000 + ["pilot"]})
    >>> plan = plan_schema(df, Declared(), ApproxDP(1.0, 1e-9), share=0.5)
    >>> budget = PrivacyBudget.from_epsilon_delta(1.0, 1e-9)
    >>> out, dom, record = run_schema(df, plan, budget, random_state=0)
    >>> out["job"].iloc[-1], budget.ledger[0].delta == plan.delta
    ('Other', True)
    """
    check_contract(df, plan)
    if budget is None:
        found, record = resolve_domain(df, plan, random_state, record=record)
    else:
        kwargs = plan.loss.charge_kwargs() | ({"delta": plan.delta} if plan.delta else {})
        with budget.charge(label=label, **kwargs) as charge:
            found, record = resolve_domain(df, plan, random_state, on_noise=charge.commit, record=record)
    return recode(df, record), found, record
