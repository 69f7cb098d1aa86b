"""The public domain: ordered states per attribute, and encoding data to integer codes.

A differentially private release may only depend on the data through noisy
statistics, so everything that shapes the output (which states exist, in what
order) must be declared by the data custodian and never read from the private
table. :class:`Domain` owns that declaration.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["Domain", "DomainError", "CellLimitError", "DEFAULT_MAX_CELLS"]

#: Largest number of cells a single table may have before we refuse to build it.
#: 10 million float64 cells is 80 MB, which is already more than any marginal a
#: graphical model should need; pass ``max_cells`` to raise it deliberately.
DEFAULT_MAX_CELLS = 10_000_000


class DomainError(ValueError):
    """Data or a request does not fit the declared public domain."""


class CellLimitError(DomainError):
    """A table over the requested attributes would have too many cells."""


def _as_python(value):
    """Return a JSON- and hash-friendly Python scalar for numpy scalars."""
    return value.item() if isinstance(value, np.generic) else value


class Domain:
    """Ordered public states for a set of attributes.

    Parameters
    ----------
    states : mapping of str to sequence
        For each attribute, its possible states in a fixed order. The order
        defines the integer code of each state (its position).

    Examples
    --------
    >>> d = Domain({"smoke": ["no", "yes"], "lung": ["no", "yes"], "xray": ["neg", "pos"]})
    >>> d.shape(["smoke", "xray"])
    (2, 2)
    >>> d.cells(["smoke", "lung", "xray"])
    8
    >>> d["xray"]
    ('neg', 'pos')
    """

    def __init__(self, states: Mapping[str, Sequence]) -> None:
        parsed: dict[str, tuple] = {}
        for attr, values in states.items():
            if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                raise DomainError(
                    f"states of attribute {attr!r} must be a list of values, got {values!r}"
                )
            values = tuple(_as_python(v) for v in values)
            if len(values) == 0:
                raise DomainError(f"attribute {attr!r} has an empty domain; declare at least one state")
            if len(set(values)) != len(values):
                dup = pd.Series(values)[pd.Series(values).duplicated()].tolist()
                raise DomainError(f"attribute {attr!r} lists a state twice: {dup}")
            if any(isinstance(v, float) and math.isnan(v) for v in values):
                raise DomainError(f"attribute {attr!r} lists NaN as a state; NaN is not a public state")
            parsed[str(attr)] = values
        self._states = parsed

    # -- construction -----------------------------------------------------------------
    @classmethod
    def from_dataframe(
        cls,
        df: pd.DataFrame,
        columns: Iterable[str] | None = None,
        domain: Mapping[str, Sequence] | Domain | None = None,
    ) -> Domain:
        """Collect the public domain of ``columns`` from categorical dtypes and ``domain``.

        An explicit ``domain`` entry wins over a categorical dtype. A column
        with neither is an error: its states would otherwise be read from the
        private data.

        Examples
        --------
        >>> df = pd.DataFrame({"a": pd.Categorical(["x", "y"], categories=["x", "y", "z"]),
        ...                    "b": [1, 2]})
        >>> Domain.from_dataframe(df, domain={"b": [1, 2, 3]})
        Domain(a: 3, b: 3)
        """
        explicit = dict(domain.items()) if domain is not None else {}
        _check_columns_exist(df, [])
        columns = list(df.columns) if columns is None else list(columns)
        _check_columns_exist(df, columns)
        states = {}
        dtypes = df.dtypes  # one lookup: df[col] costs tens of microseconds per call
        for col in columns:
            if col in explicit:
                states[col] = explicit[col]
            elif isinstance(dtypes[col], pd.CategoricalDtype):
                states[col] = list(dtypes[col].categories)
            else:
                raise DomainError(
                    f"column {col!r} has no public domain; declare it with "
                    f"df[{col!r}].astype(pd.CategoricalDtype([...])) or domain={{{col!r}: [...]}}"
                )
        return cls(states)

    # -- queries ----------------------------------------------------------------------
    @property
    def attrs(self) -> tuple[str, ...]:
        """Attribute names, in declaration order."""
        return tuple(self._states)

    def __getitem__(self, attr: str) -> tuple:
        try:
            return self._states[attr]
        except KeyError:
            raise DomainError(
                f"attribute {attr!r} is not in the domain {list(self._states)}"
            ) from None

    def __contains__(self, attr: object) -> bool:
        return attr in self._states

    def __len__(self) -> int:
        return len(self._states)

    def __iter__(self):
        return iter(self._states)

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

    def project(self, attrs: Iterable[str]) -> Domain:
        """The sub-domain over ``attrs``, in the given order."""
        return Domain({a: self[a] for a in attrs})

    def merge(self, other: Domain) -> Domain:
        """Union of two domains; shared attributes must declare identical states."""
        for a in set(self.attrs) & set(other.attrs):
            if self[a] != other[a]:
                raise DomainError(
                    f"attribute {a!r} has different states in the two domains: "
                    f"{list(self[a])} vs {list(other[a])}"
                )
        return Domain({**self._states, **other._states})

    def to_dict(self) -> dict[str, list]:
        """Plain ``{attr: [states]}`` mapping (JSON-serialisable for JSON-native states)."""
        return {a: list(s) for a, s in self._states.items()}

    def check_table(self, attrs: Sequence[str], max_cells: int = DEFAULT_MAX_CELLS) -> tuple[str, ...]:
        """Validate one requested table and return it as a tuple of attribute names.

        Raises a :class:`DomainError` naming the problem for unknown or repeated
        attributes and a :class:`CellLimitError` when the dense table would
        exceed ``max_cells``.
        """
        attrs = (attrs,) if isinstance(attrs, str) else tuple(attrs)
        if len(attrs) == 0:
            raise DomainError("a table must name at least one attribute")
        missing = [a for a in attrs if a not in self._states]
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
    def encode(self, df: pd.DataFrame, attrs: Iterable[str] | None = None) -> dict[str, np.ndarray]:
        """Encode columns of ``df`` to integer codes (position of the state in the domain).

        One vectorised pass per column. NaN and values outside the declared
        states raise a :class:`DomainError` naming the column and the value.

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
        return {a: self._encode_column(df[a], a) for a in attrs}

    def _encode_column(self, col: pd.Series, attr: str) -> np.ndarray:
        states = self[attr]
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
                raise DomainError(
                    f"column {attr!r} has {int(na.sum())} missing value(s) (NaN); "
                    "drop or impute them before a private release"
                )
            values = pd.unique(col.to_numpy()[bad])
            raise DomainError(
                f"column {attr!r} has value(s) {[_as_python(v) for v in values[:5]]} outside its declared domain "
                f"{list(states)[:20]}; add them to the declared states or remove those rows"
            )
        return codes.astype(np.intp, copy=False)


def _check_columns_exist(df: pd.DataFrame, columns: Iterable[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DomainError(
            f"column(s) {missing} are not in the DataFrame (columns: {list(df.columns)})"
        )
    if df.columns.duplicated().any():
        dup = df.columns[df.columns.duplicated()].unique().tolist()
        raise DomainError(f"the DataFrame has duplicated column names {dup}; rename them first")
