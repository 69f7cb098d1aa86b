"""The schema file: a public domain as JSON (``"format": "pgmpy-dp/schema"``), its checks and its template.

The format, version 1::

    {"format": "pgmpy-dp/schema", "format_version": 1, "missing": "Missing",
     "columns": {
      "sex": {"type": "categorical", "states": ["Female", "Male"]},
      "occupation": {"type": "categorical", "discover": true, "missing": true},
      "age": {"type": "numeric", "bins": [17, 30, 45, 60, 91]},
      "hours": {"type": "numeric", "bounds": [1, 99], "integer": true, "n_bins": 8}}}

``"missing"`` at the top is the label of the missing state (or ``null``); a column has that state when its
``"missing"`` is ``true`` (or names its own label). Infinite bin edges are written ``"-inf"`` and ``"inf"``.
[`read_schema`][pgmpy_dp.privacy.schema_file.read_schema] checks a file and names every problem by its
field path (``columns.age.bounds``); [`Domain.from_json`][pgmpy_dp.privacy.domain.Domain.from_json] and
[`Domain.to_json`][pgmpy_dp.privacy.domain.Domain.to_json] are the public entry points. Nothing here reads
the values of a data frame: the template holds column names and what their dtypes say, nothing else.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

FORMAT = "pgmpy-dp/schema"
FORMAT_VERSION = 1

_FIELDS = {
    "categorical": ("type", "states", "discover", "missing"),
    "numeric": ("type", "bins", "bounds", "integer", "n_bins", "missing"),
}
_ROOT = ("format", "format_version", "missing", "columns")


# -- writing -----------------------------------------------------------------------------------------
def edge_to_json(edge: float):
    """A bin edge as JSON: ``17`` for 17.0, ``"inf"``/``"-inf"`` for infinite edges."""
    if math.isinf(edge):
        return "inf" if edge > 0 else "-inf"
    return int(edge) if float(edge).is_integer() else float(edge)


def state_to_json(state):
    return [state_to_json(v) for v in state] if isinstance(state, tuple) else state


def schema_text(columns: Mapping[str, dict], missing=None) -> str:
    """The schema's JSON text: one column a line, in order."""
    head = json.dumps({"format": FORMAT, "format_version": FORMAT_VERSION, "missing": missing})[:-1]
    lines = [f"  {json.dumps(name)}: {json.dumps(spec)}" for name, spec in columns.items()]
    return head + ', "columns": {' + ("\n" + ",\n".join(lines) + "\n" if lines else "") + "}}\n"


def _column(domain, attr: str, label) -> dict:
    """One column's entry in the file (``domain`` is a ``Domain``, read through its public API)."""
    if attr in domain.bins or attr in domain.bounds:
        spec = {"type": "numeric"}
        if attr in domain.bins:
            spec["bins"] = [edge_to_json(e) for e in domain.bins[attr]]
        if attr in domain.bounds:
            spec["bounds"] = [edge_to_json(e) for e in domain.bounds[attr]]
        if attr in domain.integer:
            spec["integer"] = True
        if attr in domain.n_bins:
            spec["n_bins"] = domain.n_bins[attr]
    elif attr in domain.discover:
        spec = {"type": "categorical", "discover": True}
    else:
        own = domain.missing.get(attr)
        states = [v for v in domain[attr] if attr not in domain.missing or v != own]
        spec = {"type": "categorical", "states": [state_to_json(v) for v in states]}
    if attr in domain.missing:
        spec["missing"] = True if domain.missing[attr] == label else domain.missing[attr]
    return spec


def schema_text_of(domain) -> str:
    """The schema file of a ``Domain`` (its states checked for JSON by the caller).

    The top ``"missing"`` is the label every column with a missing state shares (else ``null``, and each
    column names its own).
    """
    labels = {repr(m): m for m in domain.missing.values()}
    label = next(iter(labels.values())) if len(labels) == 1 else None
    return schema_text({a: _column(domain, a, label) for a in domain.attrs}, label)


def placeholder(dtype) -> dict:
    """What a column's dtype alone says about its schema entry; ``null`` marks what the custodian must fill in.

    Examples
    --------
    >>> placeholder(pd.api.types.pandas_dtype("int64"))
    {'type': 'numeric', 'bounds': [None, None], 'integer': True}
    >>> placeholder(pd.api.types.pandas_dtype("object"))
    {'type': 'categorical', 'states': None}
    """
    if pd.api.types.is_bool_dtype(dtype):
        return {"type": "categorical", "states": [False, True]}
    if pd.api.types.is_numeric_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype):
        spec = {"type": "numeric", "bounds": [None, None]}
        if pd.api.types.is_integer_dtype(dtype):
            spec["integer"] = True
        return spec
    return {"type": "categorical", "states": None}


# -- reading -----------------------------------------------------------------------------------------
def _load(source, problems: list[str]):
    """The parsed JSON of ``source``: JSON text (str starting with ``{``, or bytes) or a path."""
    if isinstance(source, (bytes, bytearray)):
        text, what = source, "JSON text"
    elif isinstance(source, os.PathLike) or (isinstance(source, str) and not source.lstrip().startswith("{")):
        what = f"file {os.fspath(source)!r}"
        try:
            text = Path(source).read_text(encoding="utf-8")
        except FileNotFoundError:
            problems.append(f"(file): no schema file {os.fspath(source)!r}; pass the path of a file written by "
                            "Domain.to_json or Domain.template, or JSON text starting with '{'")
            return None
        except (OSError, ValueError) as exc:
            problems.append(f"(file): cannot read the schema file {os.fspath(source)!r}: {exc}")
            return None
    elif isinstance(source, str):
        text, what = source, "JSON text"
    else:
        problems.append(f"(source): must be JSON text or the path of a schema file, got {type(source).__name__}")
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        problems.append(f"(root): is not valid JSON ({what}: {exc})")
        return None


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _edge(v):
    if isinstance(v, str) and v in ("inf", "-inf", "Infinity", "-Infinity"):
        return -math.inf if v.startswith("-") else math.inf
    return float(v) if _number(v) and not math.isnan(v) else None


def _state(v):
    """A JSON state as a Python state (lists become tuples), or None when JSON cannot hold it as one."""
    if isinstance(v, list):
        inner = [_state(x) for x in v]
        return None if any(x is None for x in inner) else tuple(inner)
    if isinstance(v, (str, bool, int)) or (isinstance(v, float) and math.isfinite(v)):
        return v
    return None


def _categorical(name: str, spec: dict, out: dict, problems: list[str]) -> None:
    where = f"columns.{name}"
    discover = spec.get("discover", False)
    if not isinstance(discover, bool):
        problems.append(f"{where}.discover: must be true or false, got {discover!r}")
    states = spec.get("states")
    if discover is True:
        if "states" in spec:
            problems.append(f"{where}: declares both states and discover; keep one (discover asks for private discovery)")
        out["discover"].append(name)
        return
    if not isinstance(states, list) or not states:
        fill = "is missing" if "states" not in spec else ("is null" if states is None else f"is {states!r}")
        problems.append(f"{where}.states: {fill}; list the public states, or set \"discover\": true")
        return
    parsed = [_state(v) for v in states]
    bad = [v for v, p in zip(states, parsed) if p is None]
    if bad:
        problems.append(f"{where}.states: holds {bad[:3]}, which are not states (str, int, finite float, bool or lists of them)")
    elif len(set(parsed)) != len(parsed):
        problems.append(f"{where}.states: lists a state twice")
    else:
        out["states"][name] = parsed


def _numeric(name: str, spec: dict, out: dict, problems: list[str]) -> None:
    where = f"columns.{name}"
    if "bins" not in spec and "bounds" not in spec:
        problems.append(f"{where}: a numeric column needs \"bins\" (public edges) or \"bounds\" ([low, high])")
    if "bins" in spec:
        edges = spec["bins"]
        parsed = [_edge(e) for e in edges] if isinstance(edges, list) else None
        if parsed is None or len(parsed) < 2 or None in parsed:
            problems.append(f"{where}.bins: must be a list of at least two numbers (\"-inf\"/\"inf\" allowed), got {edges!r}")
        elif any(b <= a for a, b in zip(parsed, parsed[1:])):
            problems.append(f"{where}.bins: must be strictly increasing, got {edges!r}")
        else:
            out["bins"][name] = parsed
    if "bounds" in spec:
        pair = spec["bounds"]
        if not (isinstance(pair, list) and len(pair) == 2 and all(_number(v) and math.isfinite(v) for v in pair)):
            fill = "; fill in the public bounds (never from the data)" if isinstance(pair, list) and None in pair else ""
            problems.append(f"{where}.bounds: must be two finite numbers [low, high], got {pair!r}{fill}")
        elif not pair[0] < pair[1]:
            problems.append(f"{where}.bounds: must have low < high, got {pair!r}")
        else:
            out["bounds"][name] = (float(pair[0]), float(pair[1]))
    integer = spec.get("integer", False)
    if not isinstance(integer, bool):
        problems.append(f"{where}.integer: must be true or false, got {integer!r}")
    elif integer:
        out["integer"].append(name)
    if "n_bins" in spec:
        n = spec["n_bins"]
        if "bins" in spec:
            problems.append(f"{where}.n_bins: the bins already fix the number of bins; drop n_bins")
        elif isinstance(n, bool) or not isinstance(n, int) or n < 1:
            problems.append(f"{where}.n_bins: must be a positive integer, got {n!r}")
        else:
            out["n_bins"][name] = n


def _read_column(name: str, spec, label, out: dict, problems: list[str]) -> None:
    where = f"columns.{name}"
    if not isinstance(spec, dict):
        problems.append(f"{where}: must be an object with a \"type\", got {spec!r}")
        return
    kind = spec.get("type")
    if kind not in _FIELDS:
        problems.append(f"{where}.type: must be \"categorical\" or \"numeric\", got {kind!r}")
        return
    extra = [k for k in spec if k not in _FIELDS[kind]]
    if extra:
        problems.append(f"{where}: {extra} are not fields of a {kind} column (fields: {list(_FIELDS[kind])})")
    (_categorical if kind == "categorical" else _numeric)(name, spec, out, problems)
    missing = spec.get("missing", False)
    if missing is True:
        if label is None:
            problems.append(f"{where}.missing: is true but the schema's \"missing\" label is null; name it at the top")
        else:
            out["missing"][name] = label
    elif missing is not False and missing is not None:
        state = _state(missing)
        if state is None or isinstance(state, tuple):
            problems.append(f"{where}.missing: must be true, false or a state label, got {missing!r}")
        else:
            out["missing"][name] = state


def read_schema(source) -> tuple[dict, list[str]]:
    """The declarations of a schema file or text, and every problem found, each named by its field path.

    Returns ``(declarations, problems)``: ``declarations`` holds the ``Domain`` arguments (``states``,
    ``bins``, ``bounds``, ``integer``, ``discover``, ``n_bins``, ``missing``), the column ``order`` and
    ``missing_all`` (the top label when every column may be missing).

    Examples
    --------
    >>> text = '{"format": "pgmpy-dp/schema", "format_version": 1, "missing": null, "columns": {"age": {"type": "numeric", "bounds": [90, 17]}}}'
    >>> read_schema(text)[1]
    ['columns.age.bounds: must have low < high, got [90, 17]']
    """
    problems: list[str] = []
    out = {"states": {}, "bins": {}, "bounds": {}, "integer": [], "discover": [], "n_bins": {}, "missing": {},
           "order": [], "missing_all": None}
    data = _load(source, problems)
    if problems:
        return out, problems
    if not isinstance(data, dict):
        return out, [f"(root): must be a JSON object (a pgmpy-dp schema), got {type(data).__name__}"]
    if data.get("format") != FORMAT:
        problems.append(f"format: must be {FORMAT!r}, got {data.get('format')!r}; is this a schema written by Domain.to_json?")
    version = data.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int):
        problems.append(f"format_version: must be an int, got {version!r}")
    elif version > FORMAT_VERSION:
        problems.append(f"format_version: {version} is newer than this pgmpy-dp reads ({FORMAT_VERSION}); upgrade pgmpy-dp")
    elif version < 1:
        problems.append(f"format_version: must be {FORMAT_VERSION}, got {version}")
    extra = [k for k in data if k not in _ROOT]
    if extra:
        problems.append(f"(root): {extra} are not schema fields (fields: {list(_ROOT)})")
    label = data.get("missing")
    if label is not None and (_state(label) is None or isinstance(label, (list, bool))):
        problems.append(f"missing: must be a state label (str or number) or null, got {label!r}")
        label = None
    columns = data.get("columns")
    if not isinstance(columns, dict):
        problems.append(f"columns: must be an object {{name: column}}, got {columns!r}")
        return out, problems
    for name, spec in columns.items():
        _read_column(name, spec, label, out, problems)
    out["order"] = list(columns)
    if label is not None and columns and all(out["missing"].get(c) == label for c in columns):
        out["missing_all"] = label
    return out, problems

