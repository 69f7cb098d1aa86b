"""The public domain: ordered states per attribute, declared, combined, written as a schema and used to encode.

Everything that shapes a release's output (which states exist, in what order) is declared by the data
custodian, never read from the private table; [`Domain`][pgmpy_dp.privacy.domain.Domain] owns that declaration,
including bin edges (``bins=``) and a missing state (``missing=``). The checks of single states and edges are in
[`states`][pgmpy_dp.privacy.states], the encoding of data frame columns in [`encoding`][pgmpy_dp.privacy.encoding],
its errors in [`errors`][pgmpy_dp.privacy.errors].
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._progress import progress
from .declarations import equal_width_edges, parse_declarations, unresolved_message
from .encoding import (
    PUBLIC_COLUMNS_ATTR, SHOW_VALUES_ENV, DataDerivedDomainWarning, check_columns_exist, encode_column, warn_data_derived,
)
from .errors import CellLimitError, DomainError, SchemaError, UndeclaredColumnsError
from .schema_file import placeholder, read_schema, schema_text, schema_text_of
from .states import as_python, bin_labels, check_name, check_state, json_state, parse_bins, parse_states

# what other modules (and users) import from here, some of it defined in errors, encoding and states
__all__ = [
    "DEFAULT_MAX_CELLS", "PUBLIC_COLUMNS_ATTR", "SHOW_VALUES_ENV", "CellLimitError", "DataDerivedDomainWarning",
    "Domain", "DomainError", "SchemaError", "UndeclaredColumnsError", "bin_labels", "read_domain",
]

#: Largest number of cells a single table may have (80 MB of float64) unless ``max_cells`` raises it.
DEFAULT_MAX_CELLS = 10_000_000


def _check_mapping(value, name: str):
    """Reject lists and other non-mappings for a ``{column: ...}`` argument, naming the fix."""
    if value is None or isinstance(value, (Mapping, Domain)):
        return value
    if name == "domain":
        name = "domain (state_names for DiscretePrivateMLE)"
    schema = ", a pgmpy_dp.Domain or the path of a schema file (Domain.to_json)" if name.startswith("domain") else " or a pgmpy_dp.Domain"
    raise TypeError(
        f"{name} must be a mapping from column name to its public states, e.g. "
        f"{{'age': [...], 'sex': ['F', 'M']}}{schema}; got {type(value).__name__}"
    )


def read_domain(domain):
    """``domain=`` as given, or the [`Domain`][pgmpy_dp.privacy.domain.Domain] of a schema file when it is a path.

    A ``str`` starting with ``{`` is read as the schema's JSON text.

    Examples
    --------
    >>> read_domain({"a": [0, 1]})
    {'a': [0, 1]}
    >>> read_domain(Domain({"a": [0, 1]}).to_json())
    Domain(a: 2)
    """
    if not isinstance(domain, (str, os.PathLike)):
        return domain
    try:
        return Domain.from_json(domain)
    except SchemaError as exc:
        raise SchemaError(exc.problems, domain, parameter="domain=") from None


def _redeclared(other: Domain, bins) -> tuple[dict, dict]:
    """``other``'s plain states (without their missing state) and its bins merged with ``bins``, to declare again."""
    missing = other._missing
    states = {a: [v for v in s if not (a in missing and v == missing[a])]
              for a, s in other._states.items() if a not in other._bins}
    return states, {**other._bins, **(bins or {})}


def _extend(old: tuple, new):
    """Names declared before (``old``) and now (``new``); a ``new`` that is not a list is left for the check to name."""
    if new is None:
        return old
    if isinstance(new, (str, bytes, Mapping)) or not isinstance(new, Iterable):
        return new
    return [*old, *new]


def _declared(df: pd.DataFrame, domain) -> Domain:
    """``domain=`` as a Domain; a plain mapping may name columns of ``df`` only (a misspelt name is an error)."""
    if isinstance(domain, Domain):
        return domain
    if isinstance(domain, Mapping):
        unknown = [c for c in domain if c not in df.columns]
        if unknown:
            raise DomainError(
                f"domain= (state_names= for DiscretePrivateMLE) names column(s) {unknown} that are not in the DataFrame (columns: "
                f"{list(df.columns)[:20]}); fix the name or drop the entry"
            )
    return Domain(domain or {})


def _dtype_states(df: pd.DataFrame, columns) -> tuple[dict, set]:
    """The categories of ``columns`` (all undeclared, so each needs a categorical dtype), and those not vouched public."""
    states, from_dtype = {}, set()
    # columns whose categorical dtype the frame's producer declared public (see DataDerivedDomainWarning)
    vouched = set(df.attrs.get(PUBLIC_COLUMNS_ATTR, ()))
    dtypes = df.dtypes  # one lookup: df[col] costs tens of microseconds per call
    undeclared = [col for col in columns if not isinstance(dtypes[col], pd.CategoricalDtype)]
    if undeclared:
        raise _undeclared_error(undeclared, dtypes)
    for col in columns:
        states[col] = list(dtypes[col].categories)
        if col not in vouched:
            from_dtype.add(col)
    return states, from_dtype


def _undeclared_error(columns: Sequence[str], dtypes) -> UndeclaredColumnsError:
    """One error for every column without a public domain, with their template (names and dtypes only)."""
    template = schema_text({c: placeholder(dtypes[c]) for c in columns})
    named = ", ".join(f"{c!r} ({dtypes[c]})" for c in columns[:50]) + (" ..." if len(columns) > 50 else "")
    head = (f"column {columns[0]!r} has no public domain" if len(columns) == 1
            else f"{len(columns)} columns have no public domain: {named}")
    first = columns[0]
    return UndeclaredColumnsError(
        f"{head}; declare {'it' if len(columns) == 1 else 'them'} in domain=, in code (domain={{{first!r}: [...]}}, "
        f"a categorical dtype df[{first!r}].astype(pd.CategoricalDtype([...])), or for a numeric column "
        f"pgmpy_dp.Domain(bins={{{first!r}: [...]}}) or Domain(bounds={{{first!r}: (low, high)}})) or once in a "
        "schema file: fill in the nulls of this template with public facts (it holds names and dtypes only; never "
        "take the values from the data) and pass the file's path as domain= "
        "(pgmpy_dp.Domain.template(df, path='schema.json') writes the whole frame's template):\n" + template,
        columns, template,
    )


class Domain:
    """Ordered public states for a set of attributes, and how raw values map to them.

    A whole schema can be written and read as JSON ([`to_json`][pgmpy_dp.privacy.domain.Domain.to_json],
    [`from_json`][pgmpy_dp.privacy.domain.Domain.from_json]) and passed as ``domain=`` by its path.

    Parameters
    ----------
    states : mapping of str to sequence, optional
        For each attribute, its possible states in a fixed order (a state's code is its position).
        Another ``Domain`` is copied with its bins and missing states.
    bins : mapping of str to sequence of float, optional
        Public bin edges for numeric attributes, e.g. ``{"age": [17, 25, 35, 50, 65, 91]}``.
        The states become the labels ``"[17, 25)"``, ... ([`bin_labels`][pgmpy_dp.privacy.states.bin_labels]);
        the edges are kept in [`bins`][pgmpy_dp.privacy.domain.Domain.bins]. Values are **clamped** to the
        outer bins (use ``-inf``/``inf`` for open-ended ones). The edges must be public (never computed
        from the data, as ``pd.cut(x, 5)`` or quantiles would).
    missing : str or mapping of str to state, optional
        A declared state for missing values (NaN, None, ``pd.NA``): one for every attribute (also those
        [`from_dataframe`][pgmpy_dp.privacy.domain.Domain.from_dataframe] takes from dtypes), or a mapping per
        attribute. Appended to the states unless they list it already. Without it, missing values are an error.
    bounds : mapping of str to (float, float), optional
        Public bounds ``(low, high)`` of numeric columns, e.g. ``{"age": (17, 90)}``. With ``bins=`` they
        bound the values [`decode`][pgmpy_dp.privacy.decode.decode] draws (the outer ``inf`` edges too).
        Without bins the column has no states yet: take equal-width public bins with
        [`with_public_bins`][pgmpy_dp.privacy.domain.Domain.with_public_bins] or let a charged mechanism
        choose them; until then it cannot be encoded.
    integer : list of str, optional
        Numeric columns whose values are integers (decoded values are integers too).
    discover : list of str, optional
        Categorical columns whose states are not public: they cannot be encoded until their states are
        declared ([`resolve`][pgmpy_dp.privacy.domain.Domain.resolve]) or found by a charged mechanism.
    n_bins : int or mapping of str to int, optional
        How many bins a column with ``bounds=`` and no ``bins=`` gets when they are chosen (one count for
        every such column, or one per column).

    Examples
    --------
    >>> d = Domain({"smoke": ["no", "yes"], "lung": ["no", "yes"], "xray": ["neg", "pos"]})
    >>> d.shape(["smoke", "xray"])
    (2, 2)
    >>> d.cells(["smoke", "lung", "xray"])
    8
    >>> d["xray"]
    ('neg', 'pos')

    Numeric columns with public bins, and a missing state:

    >>> d = Domain({"sex": ["F", "M"]}, bins={"age": [17, 30, 60, 91]}, missing="Missing")
    >>> d["age"]
    ('[17, 30)', '[30, 60)', '[60, 91)', 'Missing')
    >>> df = pd.DataFrame({"sex": ["F", None, "M"], "age": [16, 45.5, None]})
    >>> d.encode(df)["age"].tolist(), d.encode(df)["sex"].tolist()
    ([0, 1, 3], [0, 2, 1])

    A numeric column with public bounds only, binned in public equal-width bins:

    >>> d = Domain({"sex": ["F", "M"]}, bounds={"age": (17, 90)}, integer=["age"], n_bins=4)
    >>> d.unresolved
    ('age',)
    >>> d.with_public_bins()["age"]
    ('[17, 36)', '[36, 54)', '[54, 72)', '[72, 91)')
    """

    def __init__(
        self,
        states: Mapping[str, Sequence] | Domain | None = None,
        *,
        bins: Mapping[str, Sequence[float]] | None = None,
        missing=None,
        bounds: Mapping[str, Sequence[float]] | None = None,
        integer: Iterable[str] | None = None,
        discover: Iterable[str] | None = None,
        n_bins: int | Mapping[str, int] | None = None,
    ) -> None:
        states = _check_mapping(states, "states")
        bins = _check_mapping(bins, "bins")
        bounds = _check_mapping(bounds, "bounds")
        base_missing: dict[str, object] = {}
        self._missing_all = None
        order: list[str] = []
        if isinstance(states, Domain):
            self._copy(states)
            if all(v is None for v in (bins, missing, bounds, integer, discover, n_bins)):
                return
            base_missing, order = self._missing, list(self._order)
            old = states
            states, bins = _redeclared(old, bins)
            bounds = {**old._bounds, **(bounds or {})}
            integer = _extend(old._integer, integer)
            discover = _extend(tuple(a for a in old._discover if a not in bins), discover)
            n_bins = n_bins if n_bins is not None else {a: n for a, n in old._n_bins.items() if a not in bins} or None
        parsed: dict[str, tuple] = {}
        for attr, values in (states or {}).items():
            check_name(attr, "states")
            parsed[attr] = parse_states(attr, values)
        self._bins = parse_bins(bins, parsed)
        for attr in bounds or {}:
            check_name(attr, "bounds")
        self._bounds, self._integer, self._discover, self._n_bins, problems = parse_declarations(
            bounds, integer, discover, n_bins, {a: v for a, v in parsed.items() if a not in self._bins}, self._bins)
        if problems:
            raise DomainError("; ".join(problems))
        self._order = tuple(dict.fromkeys([*order, *parsed, *self._bounds, *self._discover]))
        self._integer = tuple(a for a in self._order if a in self._integer)  # in declaration order
        self._discover = tuple(a for a in self._order if a in self._discover)
        self._missing = {}
        per_attr = self._missing_per_attr(missing, self._order)
        for attr, label in {**{a: m for a, m in base_missing.items() if a in self._order}, **per_attr}.items():
            self._add_missing(parsed, attr, label)
        self._states = parsed
        self._from_dtype: set[str] = set()

    def _copy(self, other: Domain) -> None:
        # the states already carry the labels and missing states of ``other``
        self._missing_all = other._missing_all
        self._states, self._bins, self._missing = dict(other._states), dict(other._bins), dict(other._missing)
        self._order, self._bounds, self._integer = other._order, dict(other._bounds), other._integer
        self._discover, self._n_bins = other._discover, dict(other._n_bins)
        self._from_dtype = set()

    def _add_missing(self, parsed: dict, attr: str, label) -> None:
        label = as_python(label)
        check_state(label, f"the missing state of {attr!r}")
        self._missing[attr] = label
        if attr in parsed and label not in parsed[attr]:  # an unresolved column gets it when resolved
            parsed[attr] = (*parsed[attr], label)

    def _missing_per_attr(self, missing, attrs: Sequence[str]) -> dict:
        """``missing=`` as ``{attr: state}``; a single state is also kept for columns added later."""
        if isinstance(missing, Mapping):
            unknown = [a for a in missing if a not in attrs]
            if unknown:
                raise DomainError(f"missing= names attribute(s) {unknown} that are not in the domain {list(attrs)}")
            return dict(missing)
        if missing is not None:
            self._missing_all = missing
            return dict.fromkeys(attrs, missing)
        return {}

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_dataframe(
        cls,
        df: pd.DataFrame,
        columns: Iterable[str] | None = None,
        domain: Mapping[str, Sequence] | Domain | None = None,
    ) -> Domain:
        """Collect the public domain of ``columns`` from categorical dtypes and ``domain``.

        An explicit ``domain`` entry (a mapping, or a [`Domain`][pgmpy_dp.privacy.domain.Domain] with bins and
        missing states) wins over a categorical dtype; a column with neither is an error. A ``Domain``'s
        single ``missing`` state extends the dtype columns too. A plain mapping must name columns of ``df``
        only; a ``Domain`` may describe a larger schema.

        Examples
        --------
        >>> df = pd.DataFrame({"a": pd.Categorical(["x", "y"], categories=["x", "y", "z"]),
        ...                    "b": [1, 2]})
        >>> Domain.from_dataframe(df, domain={"b": [1, 2, 3]})
        Domain(a: 3, b: 3)
        >>> Domain.from_dataframe(df, domain=Domain(bins={"b": [0, 2, 4]}, missing="?"))["a"]
        ('x', 'y', 'z', '?')
        """
        domain = _check_mapping(read_domain(domain), "domain")
        check_columns_exist(df, [])
        columns = list(df.columns) if columns is None else list(columns)
        check_columns_exist(df, columns)
        declared = _declared(df, domain)
        states, from_dtype = _dtype_states(df, [c for c in columns if c not in declared])
        missing = declared._missing_all
        found = Domain(states, missing=missing) if states else Domain()
        keep = [c for c in columns if c in declared]
        result = declared.project(keep).merge(found) if keep else found
        result._from_dtype = from_dtype
        return result.project([c for c in columns])

    # -- queries ----------------------------------------------------------------------
    @property
    def attrs(self) -> tuple[str, ...]:
        """Attribute names, in declaration order (the unresolved ones too)."""
        return self._order

    @property
    def bins(self) -> dict[str, tuple[float, ...]]:
        """Public bin edges of the binned attributes (``{attr: edges}``)."""
        return dict(self._bins)

    @property
    def missing(self) -> dict[str, object]:
        """The declared missing state of each attribute that has one (``{attr: state}``)."""
        return dict(self._missing)

    @property
    def bounds(self) -> dict[str, tuple[float, float]]:
        """Public bounds ``(low, high)`` of the numeric columns that declare them (``{attr: bounds}``)."""
        return dict(self._bounds)

    @property
    def integer(self) -> tuple[str, ...]:
        """The numeric columns whose values are integers."""
        return self._integer

    @property
    def discover(self) -> tuple[str, ...]:
        """The categorical columns whose states are still to be discovered (unresolved)."""
        return self._discover

    @property
    def n_bins(self) -> dict[str, int]:
        """The declared bin count of each column with bounds and no bins yet (``{attr: n}``)."""
        return dict(self._n_bins)

    @property
    def unresolved(self) -> tuple[str, ...]:
        """Columns without states yet (bounds and no bins, or discover), in declaration order."""
        return tuple(a for a in self._order if a not in self._states)

    def check_resolved(self, attrs: Iterable[str] | None = None) -> None:
        """Raise a [`DomainError`][pgmpy_dp.privacy.errors.DomainError] naming every unresolved column of ``attrs``, and how to resolve it.

        Examples
        --------
        >>> Domain(bounds={"age": (17, 90)}).check_resolved()
        Traceback (most recent call last):
        ...
        pgmpy_dp.privacy.errors.DomainError: column(s) ['age'] have no states yet, ...
        """
        attrs = self._order if attrs is None else tuple(attrs)
        pending = [a for a in attrs if a in self and a not in self._states]
        if pending:
            raise DomainError(unresolved_message(pending, self._bounds, self._discover))

    def __getitem__(self, attr: str) -> tuple:
        try:
            return self._states[attr]
        except (KeyError, TypeError):
            if self.__contains__(attr):  # name every unresolved column at once, not one per try
                self.check_resolved()
            raise DomainError(
                f"attribute {attr!r} is not in the domain {list(self._order)}"
            ) from None

    def __contains__(self, attr: object) -> bool:
        try:
            return attr in self._states or attr in self._order
        except TypeError:  # unhashable
            return False

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self):
        return iter(self._order)

    def keys(self):
        """Attribute names (a ``Domain`` reads like a ``{attr: states}`` mapping)."""
        return dict.fromkeys(self._order).keys()

    def items(self):
        """``(attr, states)`` pairs, as for a mapping (an unresolved column raises)."""
        return [(a, self[a]) for a in self._order]

    def values(self):
        """The states of each attribute, as for a mapping (an unresolved column raises)."""
        return [self[a] for a in self._order]

    def _pending(self) -> tuple:
        return tuple((a, self._bounds.get(a), a in self._discover) for a in self.unresolved)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Domain) and self._states == other._states and self._pending() == other._pending()

    def __hash__(self) -> int:
        return hash(tuple(self._states.items()))

    def __repr__(self) -> str:
        sizes = (f"{a}: {len(self._states[a])}" if a in self._states else f"{a}: unresolved" for a in self._order)
        return "Domain(" + ", ".join(sizes) + ")"

    def size(self, attr: str) -> int:
        """Number of states of ``attr``."""
        return len(self[attr])

    def shape(self, attrs: Iterable[str]) -> tuple[int, ...]:
        """Shape of a dense table over ``attrs`` (in the given order)."""
        return tuple(len(self[a]) for a in attrs)

    def cells(self, attrs: Iterable[str]) -> int:
        """Number of cells of a dense table over ``attrs`` (exact Python integer)."""
        return math.prod(self.shape(attrs))

    def _with(self, order, sources: Sequence[Domain]) -> Domain:
        """A domain over ``order`` whose declarations come from ``sources`` (the later ones win)."""
        out = Domain.__new__(Domain)
        keep = set(order)

        def pick(name):
            return {a: v for d in sources for a, v in getattr(d, name).items() if a in keep}

        out._order = tuple(order)
        states = pick("_states")
        out._states = {a: states[a] for a in order if a in states}
        out._bins, out._missing, out._bounds, out._n_bins = pick("_bins"), pick("_missing"), pick("_bounds"), pick("_n_bins")
        out._integer = tuple(a for a in order if any(a in d._integer for d in sources))
        out._discover = tuple(a for a in order if a not in out._states and any(a in d._discover for d in sources))
        out._missing_all, out._from_dtype = self._missing_all, set()
        return out

    def project(self, attrs: Iterable[str]) -> Domain:
        """The sub-domain over ``attrs``, in the given order (bins and missing states kept)."""
        attrs = list(attrs)
        unknown = [a for a in attrs if a not in self]
        if unknown:
            raise DomainError(f"attribute {unknown[0]!r} is not in the domain {list(self._order)}")
        out = self._with(attrs, [self])
        out._from_dtype = self._from_dtype & set(attrs)
        return out

    def merge(self, other: Domain) -> Domain:
        """Union of two domains; shared attributes must declare identical states."""
        for a in [a for a in self.attrs if a in other]:
            if self.project([a]) != other.project([a]):
                raise DomainError(
                    f"attribute {a!r} has different states in the two domains: "
                    f"{list(self._states.get(a, ['(unresolved)']))} vs {list(other._states.get(a, ['(unresolved)']))}"
                )
        out = self._with(dict.fromkeys([*self._order, *other._order]), [self, other])
        out._from_dtype = (self._from_dtype | other._from_dtype)
        return out

    def to_dict(self) -> dict[str, list]:
        """Plain ``{attr: [states]}`` mapping (JSON-serialisable for JSON-native states)."""
        return {a: list(self[a]) for a in self._order}

    # -- unresolved columns -------------------------------------------------------------
    def resolve(self, states: Mapping[str, Sequence] | None = None, bins: Mapping[str, Sequence[float]] | None = None) -> Domain:
        """This domain with the states of ``discover`` columns and the edges of bounds-only columns declared.

        The order, bounds, integer columns and missing states are kept. A charged mechanism that found
        states or edges privately resolves the domain with them; so can the custodian, with public ones.

        Examples
        --------
        >>> d = Domain(bounds={"age": (17, 90)}, discover=["job"], missing="?")
        >>> r = d.resolve(states={"job": ["clerk", "nurse"]}, bins={"age": [17, 40, 91]})
        >>> r["job"], r["age"], r.unresolved
        (('clerk', 'nurse', '?'), ('[17, 40)', '[40, 91)', '?'), ())
        """
        states, bins = dict(_check_mapping(states, "states") or {}), dict(_check_mapping(bins, "bins") or {})
        wrong = [a for a in states if a not in self._discover] + [a for a in bins if a in self._states or a not in self]
        if wrong:
            raise DomainError(
                f"resolve names {wrong}, which are not unresolved columns of this domain (unresolved: "
                f"{list(self.unresolved)}); states= is for discover columns, bins= for columns with bounds only"
            )
        plain, old_bins = _redeclared(self, None)
        out = Domain(
            {**plain, **states}, bins={**old_bins, **bins}, missing=self._missing, bounds=self._bounds,
            integer=self._integer, discover=[a for a in self._discover if a not in states],
            n_bins={a: n for a, n in self._n_bins.items() if a not in bins} or None,
        ).project(self._order)
        out._missing_all, out._from_dtype = self._missing_all, set(self._from_dtype)
        return out

    def with_public_bins(self, n_bins: int | Mapping[str, int] | None = None) -> Domain:
        """Equal-width public bins for the columns with bounds and no bins (free: nothing is read from data).

        ``n_bins`` is one count for every such column or ``{column: count}`` (only those columns are
        binned); by default each column's declared ``n_bins``. Integer columns get integer edges
        ([`equal_width_edges`][pgmpy_dp.privacy.declarations.equal_width_edges]).

        Examples
        --------
        >>> d = Domain(bounds={"hours": (0, 100)}, n_bins=4)
        >>> d.with_public_bins().bins
        {'hours': (0.0, 25.0, 50.0, 75.0, 100.0)}
        """
        pending = [a for a in self._bounds if a not in self._states]
        if isinstance(n_bins, Mapping):
            counts = dict(n_bins)
        else:
            counts = {a: self._n_bins.get(a) if n_bins is None else n_bins for a in pending}
        unknown = [a for a in counts if a not in pending]
        if unknown:
            raise DomainError(f"with_public_bins names {unknown}, which are not columns with bounds and no bins ({pending})")
        bad = {a: n for a, n in counts.items()
               if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1}
        if bad:
            raise DomainError(
                f"with_public_bins needs a positive integer number of bins for {list(bad)}, got {list(bad.values())}; "
                "pass n_bins=, e.g. with_public_bins(10), or declare n_bins= in the domain"
            )
        return self.resolve(bins={a: equal_width_edges(self._bounds[a], int(n), a in self._integer)
                                  for a, n in counts.items()})

    # -- schema file --------------------------------------------------------------------
    def to_json(self, path: str | os.PathLike | None = None) -> str | None:
        """Write the schema as JSON (``"format": "pgmpy-dp/schema"``); returns the text when ``path`` is None.

        The format is described in [`pgmpy_dp.privacy.schema_file`][pgmpy_dp.privacy.schema_file];
        [`from_json`][pgmpy_dp.privacy.domain.Domain.from_json] reads it back.

        Examples
        --------
        >>> d = Domain({"sex": ["F", "M"]}, bounds={"age": (17, 90)}, integer=["age"], n_bins=8)
        >>> print(d.to_json(), end="")
        {"format": "pgmpy-dp/schema", "format_version": 1, "missing": null, "columns": {
          "sex": {"type": "categorical", "states": ["F", "M"]},
          "age": {"type": "numeric", "bounds": [17, 90], "integer": true, "n_bins": 8}
        }}
        >>> Domain.from_json(d.to_json()) == d
        True
        """
        self.check_json([a for a in self._order if a in self._states and a not in self._bins])
        flags = [a for a, m in self._missing.items() if isinstance(m, bool)]
        if flags:
            raise DomainError(f"the missing state of {flags} is a bool, which a schema file cannot hold (true there "
                              "means the schema's missing label); name it with a str, e.g. missing='Missing'")
        text = schema_text_of(self)
        if path is None:
            return text
        Path(path).write_text(text, encoding="utf-8")
        return None

    @classmethod
    def from_json(cls, source: str | bytes | os.PathLike) -> Domain:
        """Read a schema written by [`to_json`][pgmpy_dp.privacy.domain.Domain.to_json] (a path, or JSON text).

        Every problem is named by its field path, all at once, in a
        [`SchemaError`][pgmpy_dp.privacy.errors.SchemaError].

        Examples
        --------
        >>> Domain.from_json('{"format": "pgmpy-dp/schema", "format_version": 1, "missing": null, '
        ...                  '"columns": {"age": {"type": "numeric", "bounds": [17]}, "sex": {"type": "categorical"}}}')
        Traceback (most recent call last):
        ...
        pgmpy_dp.privacy.errors.SchemaError: the schema is not valid: columns.age.bounds: must be two finite numbers [low, high], got [17]; columns.sex.states: is missing; ...
        """
        kw, problems = read_schema(source)
        if problems:
            raise SchemaError(problems, source)
        try:
            out = cls(kw["states"], bins=kw["bins"], missing=kw["missing"], bounds=kw["bounds"],
                      integer=kw["integer"], discover=kw["discover"], n_bins=kw["n_bins"] or None)
        except (DomainError, TypeError) as exc:
            raise SchemaError([f"columns: {exc}"], source) from None
        out = out.project(kw["order"])
        out._missing_all = kw["missing_all"]
        return out

    @classmethod
    def template(cls, df: pd.DataFrame, domain=None, path: str | os.PathLike | None = None) -> str | None:
        """A schema of ``df``'s columns to fill in: declared ones as in ``domain``, the others from their dtype.

        Only names and dtypes are read, never values (nor categories, which may come from the data):
        a numeric column gets ``"bounds": [null, null]`` (and ``"integer": true`` for an integer dtype), any
        other ``"states": null``. Replace every ``null`` with public facts (or set ``"discover": true``), then
        pass the file as ``domain=``. Returns the text when ``path`` is None, else writes it.

        Examples
        --------
        >>> df = pd.DataFrame({"age": [39, 50], "job": ["clerk", "nurse"]})
        >>> print(Domain.template(df), end="")
        {"format": "pgmpy-dp/schema", "format_version": 1, "missing": null, "columns": {
          "age": {"type": "numeric", "bounds": [null, null], "integer": true},
          "job": {"type": "categorical", "states": null}
        }}
        """
        check_columns_exist(df, [])
        declared = read_domain(domain)
        declared = declared if isinstance(declared, Domain) else Domain(_check_mapping(declared, "domain") or {})
        known = [c for c in df.columns if c in declared]
        filled = json.loads(declared.project(known).to_json()) if known else {"columns": {}, "missing": None}
        columns = {c: filled["columns"].get(c) or placeholder(df.dtypes[c]) for c in df.columns}
        text = schema_text(columns, filled["missing"])
        if path is None:
            return text
        Path(path).write_text(text, encoding="utf-8")
        return None

    def check_json(self, attrs: Iterable[str] | None = None) -> None:
        """Raise a [`DomainError`][pgmpy_dp.privacy.errors.DomainError] naming the first state that JSON cannot hold losslessly.

        Called before a release charges the budget. States must be ``str``, ``int``, finite ``float``,
        ``bool`` or tuples of them (not ``pd.cut``'s intervals: declare ``bins=`` instead).

        Examples
        --------
        >>> Domain({"a": ["x", 2, 2.5, True]}).check_json()
        >>> Domain({"age": [pd.Interval(0, 10)]}).check_json()
        Traceback (most recent call last):
        ...
        pgmpy_dp.privacy.errors.DomainError: state Interval(0, 10, closed='right') of attribute 'age' ...
        """
        attrs = self.attrs if attrs is None else tuple(attrs)
        self.check_resolved(attrs)  # before any charge: a column without states cannot be released
        for a in attrs:
            for v in self[a]:
                if not json_state(v):
                    hint = (
                        "declare public bin edges with Domain(bins={...}) instead of pd.cut categories"
                        if isinstance(v, pd.Interval)
                        else "use str, int, finite float or bool states (e.g. convert them with str)"
                    )
                    raise DomainError(
                        f"state {v!r} of attribute {a!r} cannot be written to a JSON release; {hint}"
                    )

    def check_table(self, attrs: Sequence[str], max_cells: int = DEFAULT_MAX_CELLS) -> tuple[str, ...]:
        """Validate one requested table and return it as a tuple of attribute names.

        Raises a [`DomainError`][pgmpy_dp.privacy.errors.DomainError] naming the problem for unknown or repeated
        attributes and a [`CellLimitError`][pgmpy_dp.privacy.errors.CellLimitError] when the dense table would
        exceed ``max_cells``.
        """
        attrs = (attrs,) if isinstance(attrs, str) else tuple(attrs)
        if len(attrs) == 0:
            raise DomainError("a table must name at least one attribute")
        missing = [a for a in attrs if a not in self]
        if missing:
            raise DomainError(
                f"table {attrs} names {missing}, which are not columns with a public domain "
                f"(known: {list(self._states)})"
            )
        repeated = sorted({a for a in attrs if attrs.count(a) > 1})
        if repeated:
            raise DomainError(f"table {attrs} repeats column(s) {repeated}; name each column once")
        n = self.cells(attrs)
        if n > max_cells:
            raise CellLimitError(
                f"table {attrs} would have {n:,} cells ({' x '.join(map(str, self.shape(attrs)))}), "
                f"more than the limit of {max_cells:,}; release smaller tables or pass max_cells="
            )
        return attrs

    # -- encoding ---------------------------------------------------------------------
    def encode(
        self, df: pd.DataFrame, attrs: Iterable[str] | None = None, show_progress: bool = False
    ) -> dict[str, np.ndarray]:
        """Encode columns of ``df`` to integer codes (position of the state in the domain).

        Binned attributes are cut at their public edges (clamped to the outer bins); missing values
        take the declared missing state. Otherwise NaN and values outside the declared states raise a
        [`DomainError`][pgmpy_dp.privacy.errors.DomainError] naming the column, never the values
        (``PGMPY_DP_SHOW_VALUES=1`` shows them while debugging). ``show_progress`` draws a bar over the
        columns when encoding takes more than a couple of seconds.

        Returns
        -------
        dict of str to numpy.ndarray
            ``{attr: codes}`` with codes of dtype ``intp``, all in ``[0, size(attr))``.

        Examples
        --------
        >>> d = Domain({"a": ["x", "y", "z"]})
        >>> d.encode(pd.DataFrame({"a": ["z", "x"]}))["a"]
        array([2, 0])
        """
        attrs = self.attrs if attrs is None else tuple(attrs)
        check_columns_exist(df, attrs)
        self.check_resolved(attrs)
        # before encoding, so that whether it warns never depends on whether encoding succeeds
        warn_data_derived(df, sorted(self._from_dtype & set(attrs)))
        return {a: encode_column(df[a], a, self[a], self._bins, self._missing)
                for a in progress(attrs, show_progress, "encoding columns")}
