"""The saved synthesizer: a public JSON artifact of a fitted [`PrivateSynthesizer`][pgmpy_dp.synthesis.synthesizer.PrivateSynthesizer], and its validation on load.

Everything in it is public by construction: the schema (states, bins, missing states), the settings, the
privacy loss spent, the noisy selections, the releases (the noisy measurements, in the release format of
[`pgmpy_dp.tables.schema`][pgmpy_dp.tables.schema]) and the fitted model's parameters, which are
post-processing of those releases. No record, exact count or private value is ever written. The model is
stored rather than refitted, so a loaded synthesizer samples exactly as the saved one did (a refit would
repeat the fit's iterations on another machine's floating point).

Format version 2 (``"format": "pgmpy-dp/synthesizer"``, ``"format_version": 2``)::

    {"format", "format_version", "notice",
     "params": {<every setting but budget>, "random_state": null},
     "domain": <the resolved schema, as Domain.to_json writes it>,
     "dtypes": {attr: {"kind": "category", "categories", "ordered"} | {"kind": "string", "storage"}},
     "loss": {"type": "PureDP" | "ZCDP" | "ApproxDP", "epsilon"?, "delta"?, "rho"?}, "rho", "epsilon",
     "schema_release": null | <SchemaRelease.to_dict(): released keys and bin edges>,
     "selected": [...], "releases": [<marginal release>, ...],
     "model": {"type": "markov", "nodes": [...], "edges": [[u, v], ...],
               "factors": [{"variables": [...], "values": [...] (flat, C order)}, ...]}
            | {"type": "bayesian", "nodes", "edges",
               "cpds": [{"variable", "evidence": [...], "values": [...] (states x parent configurations)}, ...]},
     "fit": null (a Bayesian network; a Markov model saved without its fit)
            | {"cliques": [[...], ...], "log_potentials": [[...] (flat, C order), ...], "settings": <FitSettings>}}

``"fit"`` (new in version 2, [`pgmpy_dp.synthesis.restore`][pgmpy_dp.synthesis.restore]) is the Markov fit's
log-potentials and settings, so that a loaded model stands for its estimator again and
``pgmpy_dp.query_interval`` gives the intervals it gave before saving. Version 1 files still load (their
Markov models without intervals).

Tuple states and selections are written as lists. Every field
is checked on load, and the first problem is reported with its path in a
[`SynthesizerFormatError`][pgmpy_dp.synthesis.artifact.SynthesizerFormatError].
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ..privacy.domain import Domain, DomainError
from ..privacy.loss import ApproxDP, PureDP, ZCDP
from ..tables.artifact import MarginalRelease
from ..tables.schema import RTOL, ReleaseFormatError
from .restore import fit_record, restore_fit

__all__ = ["FORMAT", "FORMAT_VERSION", "SynthesizerFormatError", "load_synthesizer", "save_synthesizer"]

FORMAT = "pgmpy-dp/synthesizer"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1 has no "fit": its Markov models load without an estimator (no intervals)
NOTICE = (
    "A saved pgmpy-dp synthesizer: public by construction (schema, settings, noisy selections and releases, "
    "and the model fitted to them); it holds no record and no exact count."
)
_UNSAVED = ("budget", "random_state")  # a live accountant, and the seed the noise was drawn with
_LOSSES = {"PureDP": (PureDP, ("epsilon",)), "ZCDP": (ZCDP, ("rho",)), "ApproxDP": (ApproxDP, ("epsilon", "delta"))}


class SynthesizerFormatError(ValueError):
    """A saved synthesizer breaks its format; ``field`` is the path of the offending field."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        super().__init__(f"invalid synthesizer artifact: field {field!r} {problem}")


# -- writing ------------------------------------------------------------------------------------


def synthesizer_to_dict(synth) -> dict:
    """The artifact of a fitted synthesizer, as a JSON-compatible dict."""
    if not hasattr(synth, "model_"):
        raise ValueError("this PrivateSynthesizer is not fitted yet; call fit(df, domain=...) before save(path)")
    params = {name: _jsonable(getattr(synth, name)) for name in synth.get_param_names() if name not in _UNSAVED}
    # never the seed: with it and the releases anyone could redraw the noise and subtract it
    params["random_state"] = None
    loss = synth.loss_
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "notice": NOTICE,
        "params": params,
        "domain": json.loads(synth.domain_.to_json()),
        "dtypes": {a: _dtype_to_dict(d) for a, d in getattr(synth, "dtypes_", {}).items()},
        "loss": {"type": type(loss).__name__, **{k: getattr(loss, k) for k in _LOSSES[type(loss).__name__][1]}},
        "rho": synth.rho_,
        "epsilon": synth.epsilon_,
        "schema_release": None if getattr(synth, "schema_release_", None) is None else synth.schema_release_.to_dict(),
        "selected": _jsonable(synth.selected_),
        "releases": [r.to_dict() for r in synth.releases_],
        "model": _model_to_dict(synth.model_),
        "fit": fit_record(synth.model_),
    }


def save_synthesizer(synth, path) -> None:
    """Write ``synth``'s artifact to ``path`` as JSON (through a temporary file, so a crash leaves no half file)."""
    text = json.dumps(synthesizer_to_dict(synth), allow_nan=False)
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _jsonable(value):
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _dtype_to_dict(dtype) -> dict:
    import pandas as pd

    if isinstance(dtype, pd.CategoricalDtype):
        return {"kind": "category", "categories": _jsonable(list(dtype.categories)), "ordered": bool(dtype.ordered)}
    # pandas' two string dtypes differ in their missing value: NaN (the default str dtype) or pd.NA
    nan = isinstance(dtype.na_value, float)
    return {"kind": "string", "storage": dtype.storage, "na_value": "nan" if nan else "NA"}


def _model_to_dict(model) -> dict:
    from pgmpy.models import DiscreteBayesianNetwork

    out = {"nodes": list(model.nodes()), "edges": [list(e) for e in model.edges()]}
    if isinstance(model, DiscreteBayesianNetwork):
        cpds = [model.get_cpds(v) for v in model.nodes()]
        out["type"] = "bayesian"
        out["cpds"] = [
            {"variable": c.variable, "evidence": list(c.variables[1:]),
             "values": np.asarray(c.get_values(), dtype=float).tolist()}
            for c in cpds
        ]
    else:
        out["type"] = "markov"
        out["factors"] = [
            {"variables": list(f.variables), "values": np.asarray(f.values, dtype=float).ravel().tolist()}
            for f in model.get_factors()
        ]
    return out


# -- reading ------------------------------------------------------------------------------------


def load_synthesizer(cls, path):
    """A fitted ``cls`` (``PrivateSynthesizer``) from the artifact at ``path``, every field checked first."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"no synthesizer file {str(path)!r}; load reads a file written by save(path)") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise SynthesizerFormatError("(root)", f"is not valid JSON ({exc}); was the file truncated?") from None
    return synthesizer_from_dict(cls, data)


def synthesizer_from_dict(cls, data):
    """Inverse of [`synthesizer_to_dict`][pgmpy_dp.synthesis.artifact.synthesizer_to_dict]; raises
    [`SynthesizerFormatError`][pgmpy_dp.synthesis.artifact.SynthesizerFormatError] naming the first bad field."""
    if not isinstance(data, Mapping):
        raise SynthesizerFormatError("(root)", f"must be a JSON object, got {type(data).__name__}")
    if _require(data, "format", "") != FORMAT:
        raise SynthesizerFormatError("format", f"must be {FORMAT!r}, got {data['format']!r}: this is not a saved synthesizer")
    version = _require(data, "format_version", "")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise SynthesizerFormatError("format_version", f"is {version!r}; this pgmpy-dp reads versions "
                                     f"{list(READABLE_VERSIONS)}: upgrade pgmpy-dp")
    synth = cls(**_params(_require(data, "params", ""), cls.get_param_names()))
    try:
        method = synth._method()
        synth._check_params()
        settings = synth._settings(method)
    except (TypeError, ValueError) as exc:
        raise SynthesizerFormatError("params", f"holds settings the synthesizer refuses: {exc}") from None
    domain = _domain(_require(data, "domain", ""))
    loss = _loss(_require(data, "loss", ""))
    schema_release = _require(data, "schema_release", "")
    if schema_release is not None and not isinstance(schema_release, Mapping):
        raise SynthesizerFormatError("schema_release", "must be null or the schema's release record (an object)")
    releases = _releases(_require(data, "releases", ""), domain, loss, schema_release)
    dtypes = _dtypes(_require(data, "dtypes", ""), domain)
    spent = {k: _require(data, k, "") for k in ("rho", "epsilon")}
    for k, v in spent.items():
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or not math.isfinite(v)):
            raise SynthesizerFormatError(k, f"must be null or a positive number, got {v!r}")
    selected = _require(data, "selected", "")
    if not isinstance(selected, list):
        raise SynthesizerFormatError("selected", f"must be a list of the noisy selections, got {type(selected).__name__}")
    model = _model(_require(data, "model", ""), domain, "privbayes" if method.name == "privbayes" else "aim")
    synth.model_, synth.releases_, synth.selected_ = model, releases, [_tuples(s) for s in selected]
    synth.loss_ = loss
    synth.rho_, synth.epsilon_ = spent["rho"], spent["epsilon"]
    synth.domain_, synth.dtypes_ = domain, dtypes
    # the record as published (``SchemaRelease.to_dict()``); None when the schema was declared in full
    synth.schema_release_ = schema_release
    synth.n_rounds_ = len(synth.selected_)
    synth.method_ = method.chosen(domain, releases, **settings)
    fit = _require(data, "fit", "") if version >= 2 else None
    if fit is not None and hasattr(model, "get_cpds"):
        raise SynthesizerFormatError("fit", "must be null for a Bayesian network (its CPDs are its fit)")
    if fit is not None and not isinstance(fit, Mapping):
        raise SynthesizerFormatError("fit", f"must be an object (the Markov fit's record), got {type(fit).__name__}")
    restore_fit(synth, fit, SynthesizerFormatError)
    return synth


def _require(data: Mapping, key: str, where: str):
    if not isinstance(data, Mapping):
        raise SynthesizerFormatError(where or "(root)", f"must be a JSON object, got {type(data).__name__}")
    if key not in data:
        raise SynthesizerFormatError(f"{where}.{key}" if where else key, "is missing; was the file truncated or edited?")
    return data[key]


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _params(params, names) -> dict:
    out = {name: _require(params, name, "params") for name in names if name != "budget"}
    unknown = sorted(set(params) - set(names))
    if unknown:
        raise SynthesizerFormatError(f"params.{unknown[0]}", f"is not a setting of PrivateSynthesizer (settings: {list(names)})")
    if out["random_state"] is not None:
        raise SynthesizerFormatError("params.random_state", "must be null: a saved synthesizer never carries the seed "
                                     "its noise was drawn with (the noise could be redrawn and subtracted)")
    if out.get("workload") is not None:
        if not isinstance(out["workload"], list):
            raise SynthesizerFormatError("params.workload", f"must be null or a list, got {out['workload']!r}")
        out["workload"] = [_tuples(w) for w in out["workload"]]
    return out


def _domain(value) -> Domain:
    try:
        dom = Domain.from_json(json.dumps(value))
    except (DomainError, TypeError, ValueError) as exc:
        raise SynthesizerFormatError("domain", f"is not a valid schema: {exc}") from None
    unresolved = [a for a in dom.attrs if a in dom.discover or (a in dom.bounds and a not in dom.bins)]
    if unresolved:
        raise SynthesizerFormatError("domain", f"leaves {unresolved} unresolved; a fitted synthesizer's schema is resolved")
    return dom


def _dtypes(value, domain: Domain) -> dict:
    import pandas as pd

    if not isinstance(value, Mapping):
        raise SynthesizerFormatError("dtypes", "must be an object of column -> dtype")
    out = {}
    for a, d in value.items():
        where = f"dtypes.{a}"
        if a not in domain:
            raise SynthesizerFormatError(where, "names a column the schema does not have")
        kind = _require(d, "kind", where)
        try:
            if kind == "category":
                out[a] = pd.CategoricalDtype([_tuples(c) for c in _require(d, "categories", where)],
                                             ordered=bool(_require(d, "ordered", where)))
            elif kind == "string":
                na = {"nan": float("nan"), "NA": pd.NA}.get(_require(d, "na_value", where), None)
                if na is None:
                    raise SynthesizerFormatError(f"{where}.na_value", f"must be 'nan' or 'NA', got {d['na_value']!r}")
                out[a] = pd.StringDtype(_require(d, "storage", where), na_value=na)
            else:
                raise SynthesizerFormatError(f"{where}.kind", f"must be 'category' or 'string', got {kind!r}")
        except (TypeError, ValueError) as exc:
            if isinstance(exc, SynthesizerFormatError):
                raise
            raise SynthesizerFormatError(where, f"is not a valid dtype: {exc}") from None
    return out


def _loss(value):
    kind = _require(value, "type", "loss")
    if kind not in _LOSSES:
        raise SynthesizerFormatError("loss.type", f"must be one of {list(_LOSSES)}, got {kind!r}")
    loss_class, fields = _LOSSES[kind]
    args = [_require(value, f, "loss") for f in fields]
    try:
        return loss_class(*args)
    except (TypeError, ValueError) as exc:
        raise SynthesizerFormatError("loss", f"is not a valid privacy loss: {exc}") from None


def _releases(value, domain: Domain, loss, schema_release=None) -> list:
    if not isinstance(value, list) or not value:
        raise SynthesizerFormatError("releases", "must be a non-empty list of marginal releases")
    out = []
    for i, r in enumerate(value):
        try:
            release = MarginalRelease.from_dict(r)
        except ReleaseFormatError as exc:
            raise SynthesizerFormatError(f"releases[{i}].{exc.field}", str(exc).split(f"field {exc.field!r} ", 1)[-1]) from None
        for a in release.domain.attrs:
            if a not in domain:
                raise SynthesizerFormatError(f"releases[{i}].domain", f"names {a!r}, which is not an attribute of the schema")
            own = set(domain[a])
            # the schema's states, or groups of them (MST's merged rare states)
            if not all(v in own or (isinstance(v, tuple) and set(v) <= own) for v in release.domain[a]):
                raise SynthesizerFormatError(f"releases[{i}].domain", f"gives {a!r} states that are not the schema's "
                                             f"{list(domain[a])[:10]}")
        out.append(release)
    spent = math.fsum(t.rho if t.rho is not None else t.epsilon**2 / 2 for r in out for t in r.tables)
    schema_loss = (schema_release or {}).get("loss") or {}
    if isinstance(schema_loss.get("rho"), (int, float)):
        spent += schema_loss["rho"]
    elif isinstance(schema_loss.get("epsilon"), (int, float)):
        spent += schema_loss["epsilon"] ** 2 / 2
    if spent > loss.rho * (1 + RTOL):
        raise SynthesizerFormatError("releases", f"cost rho={spent!r} in all, more than the loss spent (rho={loss.rho!r})")
    return out


def _model(value, domain: Domain, kind: str):
    from pgmpy.factors.discrete import DiscreteFactor, TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork

    expected = "bayesian" if kind == "privbayes" else "markov"
    if _require(value, "type", "model") != expected:
        raise SynthesizerFormatError("model.type", f"must be {expected!r} for this method, got {value['type']!r}")
    nodes, edges = _require(value, "nodes", "model"), _require(value, "edges", "model")
    if nodes != list(domain.attrs):
        raise SynthesizerFormatError("model.nodes", f"must list the schema's attributes {list(domain.attrs)}, got {nodes!r}")
    if not isinstance(edges, list) or any(not (isinstance(e, list) and len(e) == 2 and all(v in domain for v in e)) for e in edges):
        raise SynthesizerFormatError("model.edges", "must be a list of [node, node] pairs of schema attributes")
    model = DiscreteBayesianNetwork() if expected == "bayesian" else DiscreteMarkovNetwork()
    model.add_nodes_from(nodes)
    model.add_edges_from(tuple(e) for e in edges)
    key = "cpds" if expected == "bayesian" else "factors"
    parts = _require(value, key, "model")
    if not isinstance(parts, list):
        raise SynthesizerFormatError(f"model.{key}", "must be a list")
    built = []
    for i, p in enumerate(parts):
        where = f"model.{key}[{i}]"
        scope = [_require(p, "variable", where), *_require(p, "evidence", where)] if expected == "bayesian" \
            else _require(p, "variables", where)
        if not isinstance(scope, list) or not scope or any(v not in domain for v in scope) or len(set(scope)) != len(scope):
            raise SynthesizerFormatError(where, f"names variables {scope!r}; they must be distinct schema attributes")
        shape = domain.shape(scope)
        values = np.asarray(_require(p, "values", where), dtype=object)
        try:
            values = values.astype(float)
        except (TypeError, ValueError):
            raise SynthesizerFormatError(f"{where}.values", "must hold numbers only") from None
        want = (shape[0], math.prod(shape[1:])) if expected == "bayesian" else (math.prod(shape),)
        if values.shape != want or not np.all(np.isfinite(values)) or np.any(values < 0):
            raise SynthesizerFormatError(
                f"{where}.values", f"must be {list(want)} finite non-negative numbers (the schema's shape of {scope})"
            )
        names = {v: list(domain[v]) for v in scope}
        if expected == "bayesian":
            built.append(TabularCPD(scope[0], shape[0], values, evidence=scope[1:] or None,
                                    evidence_card=list(shape[1:]) or None, state_names=names))
        else:
            built.append(DiscreteFactor(scope, list(shape), values, state_names=names))
    try:
        if expected == "bayesian":
            model.add_cpds(*built)
        else:
            model.add_factors(*built)
        model.check_model()
    except ValueError as exc:
        raise SynthesizerFormatError(f"model.{key}", f"do not make a valid model: {exc}") from None
    return model
