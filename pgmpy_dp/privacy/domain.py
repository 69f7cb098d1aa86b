"""The public domain: ordered states per attribute, and encoding data to integer codes.

Everything that shapes a release's output (which states exist, in what order) is declared by the data
custodian, never read from the private table; [`Domain`][pgmpy_dp.privacy.domain.Domain] owns that declaration,
including bin edges (``bins=``) and a missing state (``missing=``).
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._progress import progress

#: Largest number of cells a single table may have (80 MB of float64) unless ``max_cells`` raises it.
DEFAULT_MAX_CELLS = 10_000_000


class DomainError(ValueError):
    """Data or a request does not fit the declared public domain."""


class CellLimitError(DomainError):
    """A table over the requested attributes would have too many cells."""


class DataDerivedDomainWarning(UserWarning):
    """A column's states come from a categorical dtype that may have been read from the private data.

    Raised when a column's states come from an unordered categorical dtype with sorted categories (what
    ``astype("category")`` makes from the observed values) that nothing declares public. Only the dtype,
    the declared domain and ``df.attrs`` are read, never the values. Silenced by passing the states in
    ``domain=``, or by listing the column in ``df.attrs["pgmpy_dp_public_columns"]`` (as
    [`pgmpy_dp.datasets.sample_network`][pgmpy_dp.datasets.sample_network] does). See docs/privacy.md.
    """


#: ``df.attrs`` key listing columns whose categorical dtypes are declared public.
PUBLIC_COLUMNS_ATTR = "pgmpy_dp_public_columns"

#: Environment variable that, set to ``1``, lets out-of-domain errors quote the offending values.
SHOW_VALUES_ENV = "PGMPY_DP_SHOW_VALUES"


def _format_edge(edge: float) -> str:
    """An edge as text: integral values without a decimal point (``17``, not ``17.0``)."""
    if math.isinf(edge):
        return "inf" if edge > 0 else "-inf"
    return str(int(edge)) if float(edge).is_integer() else repr(float(edge))


def bin_labels(edges: Sequence[float]) -> tuple[str, ...]:
    """String labels of the bins between consecutive public ``edges``: ``"[lo, hi)"``.

    Examples
    --------
    >>> bin_labels([17, 25, 35, 91])
    ('[17, 25)', '[25, 35)', '[35, 91)')
    >>> bin_labels([0, 0.5, float("inf")])
    ('[0, 0.5)', '[0.5, inf)')
    """
    text = [_format_edge(e) for e in edges]
    return tuple(f"[{lo}, {hi})" for lo, hi in zip(text[:-1], text[1:]))


def _check_edges(attr, edges) -> tuple[float, ...]:
    if isinstance(edges, (str, bytes)) or not isinstance(edges, Iterable):
        raise DomainError(f"bins[{attr!r}] must be a list of public bin edges, got {edges!r}")
    try:
        parsed = tuple(float(e) for e in edges)
    except (TypeError, ValueError):
        raise DomainError(f"bins[{attr!r}] must hold numbers (bin edges), got {list(edges)!r}") from None
    if len(parsed) < 2:
        raise DomainError(f"bins[{attr!r}] needs at least two edges (one bin), got {list(parsed)}")
    if any(math.isnan(e) for e in parsed) or any(b <= a for a, b in zip(parsed, parsed[1:])):
        raise DomainError(f"bins[{attr!r}] must be strictly increasing numbers, got {list(parsed)}")
    return parsed


def _check_mapping(value, name: str):
    """Reject lists and other non-mappings for a ``{column: ...}`` argument, naming the fix."""
    if value is None or isinstance(value, (Mapping, Domain)):
        return value
    if name == "domain":
        name = "domain (state_names for DiscretePrivateMLE)"
    raise TypeError(
        f"{name} must be a mapping from column name to its public states, e.g. "
        f"{{'age': [...], 'sex': ['F', 'M']}}, or a pgmpy_dp.Domain; got {type(value).__name__}"
    )


def _check_state(value, what: str):
    if isinstance(value, float) and math.isnan(value):
        raise DomainError(f"{what} is NaN; NaN is not a public state (use missing= to name one)")
    try:
        hash(value)
    except TypeError:
        raise DomainError(f"{what} must be a hashable scalar such as a str or int, got {value!r}") from None


def _parse_states(attr: str, values) -> tuple:
    """The declared states of ``attr`` as a tuple of distinct hashable scalars, or a DomainError naming the bad one."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise DomainError(
            f"states of attribute {attr!r} must be a list of values, got {values!r}"
        )
    values = tuple(_as_python(v) for v in values)
    if len(values) == 0:
        raise DomainError(f"attribute {attr!r} has an empty domain; declare at least one state")
    if any(isinstance(v, float) and math.isnan(v) for v in values):
        raise DomainError(
            f"attribute {attr!r} lists NaN as a state; NaN is not a public state "
            "(name one with missing=, e.g. Domain(..., missing='Missing'))"
        )
    for v in values:
        try:
            hash(v)
        except TypeError:
            raise DomainError(
                f"attribute {attr!r} lists the state {v!r}, a {type(v).__name__}; a state must be a hashable "
                f"scalar such as a str or int: list each state on its own (e.g. {{{attr!r}: [1, 2, 3]}}), "
                "or make a compound state a tuple or a str"
            ) from None
    if len(set(values)) != len(values):
        dup = pd.Series(values)[pd.Series(values).duplicated()].tolist()
        raise DomainError(f"attribute {attr!r} lists a state twice: {dup}")
    return values


def _redeclared(other: Domain, bins) -> tuple[dict, dict]:
    """``other``'s plain states (without their missing state) and its bins merged with ``bins``, to declare again."""
    missing = other._missing
    states = {a: [v for v in s if not (a in missing and v == missing[a])]
              for a, s in other._states.items() if a not in other._bins}
    return states, {**other._bins, **(bins or {})}


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
    for col in columns:
        if not isinstance(dtypes[col], pd.CategoricalDtype):
            raise DomainError(
                f"column {col!r} has no public domain; declare it with "
                f"df[{col!r}].astype(pd.CategoricalDtype([...])), domain={{{col!r}: [...]}} "
                f"or, for a numeric column, public bin edges: domain=pgmpy_dp.Domain(bins={{{col!r}: [...]}})"
            )
        states[col] = list(dtypes[col].categories)
        if col not in vouched:
            from_dtype.add(col)
    return states, from_dtype


def _parse_bins(bins, parsed: dict) -> dict[str, tuple[float, ...]]:
    """Checked edges of each binned attribute; their labels become its states in ``parsed``."""
    out = {}
    for attr, edges in (bins or {}).items():
        _check_name(attr, "bins")
        if attr in parsed:
            raise DomainError(
                f"attribute {attr!r} is declared both with states and with bins; declare it once"
            )
        out[attr] = _check_edges(attr, edges)
        parsed[attr] = bin_labels(out[attr])
    return out


def _as_python(value):
    """Return a JSON- and hash-friendly Python scalar for numpy scalars."""
    return value.item() if isinstance(value, np.generic) else value


class Domain:
    """Ordered public states for a set of attributes, and how raw values map to them.

    Parameters
    ----------
    states : mapping of str to sequence, optional
        For each attribute, its possible states in a fixed order (a state's code is its position).
        Another ``Domain`` is copied with its bins and missing states.
    bins : mapping of str to sequence of float, optional
        Public bin edges for numeric attributes, e.g. ``{"age": [17, 25, 35, 50, 65, 91]}``.
        The states become the labels ``"[17, 25)"``, ... ([`bin_labels`][pgmpy_dp.privacy.domain.bin_labels]);
        the edges are kept in [`bins`][pgmpy_dp.privacy.domain.Domain.bins]. Values are **clamped** to the
        outer bins (use ``-inf``/``inf`` for open-ended ones). The edges must be public (never computed
        from the data, as ``pd.cut(x, 5)`` or quantiles would).
    missing : str or mapping of str to state, optional
        A declared state for missing values (NaN, None, ``pd.NA``): one for every attribute (also those
        [`from_dataframe`][pgmpy_dp.privacy.domain.Domain.from_dataframe] takes from dtypes), or a mapping per
        attribute. Appended to the states unless they list it already. Without it, missing values are an error.

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
    """

    def __init__(
        self,
        states: Mapping[str, Sequence] | Domain | None = None,
        *,
        bins: Mapping[str, Sequence[float]] | None = None,
        missing=None,
    ) -> None:
        states = _check_mapping(states, "states")
        bins = _check_mapping(bins, "bins")
        base_missing: dict[str, object] = {}
        self._missing_all = None
        if isinstance(states, Domain):
            self._copy(states)
            if bins is None and missing is None:
                return
            base_missing = self._missing
            states, bins = _redeclared(states, bins)
        parsed: dict[str, tuple] = {}
        for attr, values in (states or {}).items():
            _check_name(attr, "states")
            parsed[attr] = _parse_states(attr, values)
        self._bins = _parse_bins(bins, parsed)
        self._missing = {}
        per_attr = self._missing_per_attr(missing, parsed)
        for attr, label in {**{a: m for a, m in base_missing.items() if a in parsed}, **per_attr}.items():
            self._add_missing(parsed, attr, label)
        self._states = parsed
        self._from_dtype: set[str] = set()

    def _copy(self, other: Domain) -> None:
        # the states already carry the labels and missing states of ``other``
        self._missing_all = other._missing_all
        self._states, self._bins, self._missing = dict(other._states), dict(other._bins), dict(other._missing)
        self._from_dtype = set()

    def _add_missing(self, parsed: dict, attr: str, label) -> None:
        label = _as_python(label)
        _check_state(label, f"the missing state of {attr!r}")
        self._missing[attr] = label
        if label not in parsed[attr]:
            parsed[attr] = (*parsed[attr], label)

    def _missing_per_attr(self, missing, parsed: dict) -> dict:
        """``missing=`` as ``{attr: state}``; a single state is also kept for columns added later."""
        if isinstance(missing, Mapping):
            unknown = [a for a in missing if a not in parsed]
            if unknown:
                raise DomainError(f"missing= names attribute(s) {unknown} that are not in the domain {list(parsed)}")
            return dict(missing)
        if missing is not None:
            self._missing_all = missing
            return dict.fromkeys(parsed, missing)
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
        domain = _check_mapping(domain, "domain")
        _check_columns_exist(df, [])
        columns = list(df.columns) if columns is None else list(columns)
        _check_columns_exist(df, columns)
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
        """Attribute names, in declaration order."""
        return tuple(self._states)

    @property
    def bins(self) -> dict[str, tuple[float, ...]]:
        """Public bin edges of the binned attributes (``{attr: edges}``)."""
        return dict(self._bins)

    @property
    def missing(self) -> dict[str, object]:
        """The declared missing state of each attribute that has one (``{attr: state}``)."""
        return dict(self._missing)

    def __getitem__(self, attr: str) -> tuple:
        try:
            return self._states[attr]
        except (KeyError, TypeError):
            raise DomainError(
                f"attribute {attr!r} is not in the domain {list(self._states)}"
            ) from None

    def __contains__(self, attr: object) -> bool:
        try:
            return attr in self._states
        except TypeError:  # unhashable
            return False

    def __len__(self) -> int:
        return len(self._states)

    def __iter__(self):
        return iter(self._states)

    def keys(self):
        """Attribute names (a ``Domain`` reads like a ``{attr: states}`` mapping)."""
        return self._states.keys()

    def items(self):
        """``(attr, states)`` pairs, as for a mapping."""
        return self._states.items()

    def values(self):
        """The states of each attribute, as for a mapping."""
        return self._states.values()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Domain) and self._states == other._states

    def __hash__(self) -> int:
        return hash(tuple(self._states.items()))

    def __repr__(self) -> str:
        return "Domain(" + ", ".join(f"{a}: {len(s)}" for a, s in self._states.items()) + ")"

    def size(self, attr: str) -> int:
        """Number of states of ``attr``."""
        return len(self[attr])

    def shape(self, attrs: Iterable[str]) -> tuple[int, ...]:
        """Shape of a dense table over ``attrs`` (in the given order)."""
        return tuple(len(self[a]) for a in attrs)

    def cells(self, attrs: Iterable[str]) -> int:
        """Number of cells of a dense table over ``attrs`` (exact Python integer)."""
        return math.prod(self.shape(attrs))

    def _with(self, states: dict[str, tuple], bins: dict, missing: dict) -> Domain:
        out = Domain.__new__(Domain)
        out._states, out._bins, out._missing = states, bins, missing
        out._missing_all, out._from_dtype = self._missing_all, set()
        return out

    def project(self, attrs: Iterable[str]) -> Domain:
        """The sub-domain over ``attrs``, in the given order (bins and missing states kept)."""
        attrs = list(attrs)
        states = {a: self[a] for a in attrs}
        out = self._with(
            states,
            {a: e for a, e in self._bins.items() if a in states},
            {a: m for a, m in self._missing.items() if a in states},
        )
        out._from_dtype = self._from_dtype & set(attrs)
        return out

    def merge(self, other: Domain) -> Domain:
        """Union of two domains; shared attributes must declare identical states."""
        for a in set(self.attrs) & set(other.attrs):
            if self[a] != other[a]:
                raise DomainError(
                    f"attribute {a!r} has different states in the two domains: "
                    f"{list(self[a])} vs {list(other[a])}"
                )
        out = self._with(
            {**self._states, **other._states},
            {**self._bins, **other._bins},
            {**self._missing, **other._missing},
        )
        out._from_dtype = (self._from_dtype | other._from_dtype)
        return out

    def to_dict(self) -> dict[str, list]:
        """Plain ``{attr: [states]}`` mapping (JSON-serialisable for JSON-native states)."""
        return {a: list(s) for a, s in self._states.items()}

    def check_json(self, attrs: Iterable[str] | None = None) -> None:
        """Raise a [`DomainError`][pgmpy_dp.privacy.domain.DomainError] naming the first state that JSON cannot hold losslessly.

        Called before a release charges the budget. States must be ``str``, ``int``, finite ``float``,
        ``bool`` or tuples of them (not ``pd.cut``'s intervals: declare ``bins=`` instead).

        Examples
        --------
        >>> Domain({"a": ["x", 2, 2.5, True]}).check_json()
        >>> Domain({"age": [pd.Interval(0, 10)]}).check_json()
        Traceback (most recent call last):
        ...
        pgmpy_dp.privacy.domain.DomainError: state Interval(0, 10, closed='right') of attribute 'age' ...
        """
        for a in self.attrs if attrs is None else attrs:
            for v in self[a]:
                if not _json_state(v):
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

        Raises a [`DomainError`][pgmpy_dp.privacy.domain.DomainError] naming the problem for unknown or repeated
        attributes and a [`CellLimitError`][pgmpy_dp.privacy.domain.CellLimitError] when the dense table would
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
        [`DomainError`][pgmpy_dp.privacy.domain.DomainError] naming the column, never the values
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
        _check_columns_exist(df, attrs)
        # before encoding, so that whether it warns never depends on whether encoding succeeds
        self._warn_data_derived(df, attrs)
        return {a: self._encode_column(df[a], a) for a in progress(attrs, show_progress, "encoding columns")}

    def _warn_data_derived(self, df: pd.DataFrame, attrs: Iterable[str]) -> None:
        """Warn about columns whose states come from a dtype that ``astype("category")`` could have made.

        The rule is [`DataDerivedDomainWarning`][pgmpy_dp.privacy.domain.DataDerivedDomainWarning]'s; the values are
        never read.
        """
        suspects = [a for a in sorted(self._from_dtype & set(attrs)) if _sorted_unordered(df.dtypes[a])]
        if suspects:
            warnings.warn(
                f"column(s) {suspects} take their states from an unordered categorical dtype with sorted "
                "categories, which is what astype('category') makes from the private data; a private release "
                "must use a public domain. Declare the public states with domain={column: [...]}, or, if the "
                "dtype's categories already are the public states, list the columns in "
                f"df.attrs[{PUBLIC_COLUMNS_ATTR!r}]; either silences this warning",
                DataDerivedDomainWarning,
                stacklevel=_caller_stacklevel(),
            )

    def _encode_column(self, col: pd.Series, attr: str) -> np.ndarray:
        states = self[attr]
        if attr in self._bins:
            return self._encode_binned(col, attr)
        dtype = col.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            cat_codes = col.array.codes  # the ndarray itself, without building a Series
            if tuple(_as_python(c) for c in dtype.categories) == states:
                codes = cat_codes
            else:
                # recode the (few) categories once, then gather: no per-row hashing
                mapping = np.append(pd.Index(states, dtype=object).get_indexer(dtype.categories), -1)
                codes = mapping[cat_codes]
        else:
            try:
                codes = pd.Index(states, dtype=object).get_indexer(col)
            except TypeError as exc:  # e.g. lists or dicts stored in an object column
                raise TypeError(
                    f"column {attr!r} holds values that are not scalar states ({exc}); "
                    "each cell must be one hashable state such as a str or int"
                ) from None
        bad = codes < 0
        if bad.any():
            na = col.isna().to_numpy()
            if na.any():
                codes = self._fill_missing(codes, na, attr)
                bad = codes < 0
            if bad.any():
                raise DomainError(_outside_message(attr, states, col.to_numpy()[bad]))
        return codes.astype(np.intp, copy=False)

    def _fill_missing(self, codes: np.ndarray, na: np.ndarray, attr: str) -> np.ndarray:
        if attr not in self._missing:
            # no count here: the number of missing values is a private statistic
            raise DomainError(
                f"column {attr!r} has missing values (NaN or None); declare a missing state, e.g. "
                f"domain=pgmpy_dp.Domain({{...}}, missing='Missing'), or drop or impute them "
                "before a private release"
            )
        codes = np.array(codes, dtype=np.intp)
        codes[na] = self[attr].index(self._missing[attr])
        return codes

    def _encode_binned(self, col: pd.Series, attr: str) -> np.ndarray:
        edges = np.asarray(self._bins[attr])
        try:
            x = np.asarray(col.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"column {attr!r} is binned by bins={{{attr!r}: [...]}} but holds non-numeric values; "
                "bin only numeric columns"
            ) from None
        # clamp: below the first edge -> first bin, at or above the last -> last bin (documented)
        codes = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2).astype(np.intp)
        na = np.isnan(x)
        if na.any():
            codes = self._fill_missing(codes, na, attr)
        return codes


def _sorted_unordered(dtype) -> bool:
    """Whether ``dtype`` is an unordered categorical with at least two sorted categories (dtype only)."""
    if not isinstance(dtype, pd.CategoricalDtype) or dtype.ordered or len(dtype.categories) < 2:
        return False
    cats = list(dtype.categories)
    try:
        return cats == sorted(cats)
    except TypeError:  # mixed types: astype('category') would have sorted them, so not its work
        return False


def _outside_message(attr: str, states: Sequence, offending: np.ndarray) -> str:
    """The error for values outside the declared states: the values (and how many) are private, so withheld."""
    shown = list(states)[:20]
    text = (
        f"column {attr!r} has values outside its declared domain {shown}"
        f"{' ...' if len(states) > 20 else ''}; add them to the declared states, map them to a declared "
        "state (e.g. with missing= or bins=), or remove those rows. "
    )
    if os.environ.get(SHOW_VALUES_ENV) == "1":
        values = [_as_python(v) for v in pd.unique(offending)[:5]]
        return text + f"Offending values (shown because {SHOW_VALUES_ENV}=1): {values}"
    return text + (
        f"The values are private and withheld; to see them while debugging, set {SHOW_VALUES_ENV}=1"
    )


def _caller_stacklevel() -> int:
    """``stacklevel`` that points a warning at the user's line, past pgmpy_dp's and pgmpy's frames."""
    import sys

    import importlib.util

    inside = [str(Path(__file__).resolve().parents[1])]
    spec = importlib.util.find_spec("pgmpy")  # locates pgmpy's estimator frames without importing it
    inside += list(spec.submodule_search_locations or []) if spec else []
    frame, level = sys._getframe(2), 2  # level 1 is the function that calls warnings.warn
    while frame is not None and any(frame.f_code.co_filename.startswith(d) for d in inside):
        frame, level = frame.f_back, level + 1
    return level


def _check_name(attr, where: str) -> None:
    if not isinstance(attr, str):
        raise TypeError(
            f"{where} names attribute {attr!r} of type {type(attr).__name__}; attribute names must be "
            "str (pgmpy node names): rename the columns, e.g. df.columns = df.columns.map(str)"
        )


def _check_columns_exist(df: pd.DataFrame, columns: Iterable[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(df).__name__}")
    if isinstance(df.columns, pd.MultiIndex):
        raise TypeError(
            "the DataFrame has MultiIndex columns; flatten them to str names first, "
            "e.g. df.columns = ['_'.join(map(str, c)) for c in df.columns]"
        )
    columns = list(columns)
    bad = [c for c in columns if not isinstance(c, str)]
    if bad:
        raise TypeError(
            f"column name(s) {bad[:5]} are not str; pgmpy node names must be str: "
            "rename them, e.g. df.columns = df.columns.map(str)"
        )
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DomainError(
            f"column(s) {missing} are not in the DataFrame (columns: {list(df.columns)})"
        )
    if df.columns.duplicated().any():
        dup = df.columns[df.columns.duplicated()].unique().tolist()
        raise DomainError(f"the DataFrame has duplicated column names {dup}; rename them first")


def _json_state(v) -> bool:
    """Whether JSON holds the state losslessly (a tuple is written as a list and read back as a tuple)."""
    if type(v) is tuple:
        return all(_json_state(x) for x in v)
    if type(v) is str:
        return json.loads(json.dumps(v)) == v
    return type(v) in (int, bool) or (type(v) is float and math.isfinite(v))
