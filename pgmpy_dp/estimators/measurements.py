"""Noisy clique tables as evidence for a Markov network: engine measurements and warm-start targets.

Every table inside a model clique becomes one [`Measurement`][pgmpy_dp.engine.cgm.Measurement]; the tables
over exactly a clique give the naive fit's targets ([`reconcile_tables`][pgmpy_dp.engine.reconcile.reconcile_tables]).
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import NamedTuple

import numpy as np

from ..engine import Measurement, project_simplex, reconcile_tables
from ..privacy.domain import DomainError
from ..privacy.mechanisms import GAUSSIAN_MECHANISM


def _member_factor(release, table) -> float:
    """How many member tables a pooled table adds up: ``len(members)``, or 1 when it averages them.

    Under per-individual normalisation an individual adds mass at most 1 to the whole pooled table.
    """
    return 1.0 if release.normalized else float(len(table.members))


def _per_member_table(release, table):
    """For a pooled table, an ordinary table estimating ONE member's table (noise scaled alike)."""
    f = _member_factor(release, table)
    return dataclasses.replace(table, values=table.values / f, scale=table.scale / f, members=None)


def measured_subcliques(releases, cliques) -> list[tuple[str, ...]]:
    """Attribute sets measured on their own inside a model clique without being one: each gets a potential.

    The L2 prior would otherwise shrink such a margin once per cell of the rest of the clique
    (docs/markov.md). Pooled tables and tables in no clique add nothing; an added set keeps the
    attribute order of the first clique holding it.

    Examples
    --------
    >>> import pandas as pd
    >>> import pgmpy_dp
    >>> df = pd.DataFrame({"a": [0, 1, 1, 0] * 25, "b": [0, 1, 0, 0] * 25, "c": [1, 0] * 50})
    >>> d = {v: [0, 1] for v in "abc"}
    >>> rel = df.dp.release([("b", "a"), ("b", "c"), ("b",), ("a",)], epsilon=1.0, domain=d, random_state=0)
    >>> measured_subcliques([rel], [("a", "b"), ("b", "c")])
    [('b',), ('a',)]
    """
    sets = [frozenset(c) for c in cliques]
    seen = set(sets)
    out = []
    for r in releases:
        for t in r.tables:
            s = frozenset(t.attrs)
            if getattr(t, "members", None) or s in seen:
                continue
            host = next((c for c, fs in zip(cliques, sets) if s < fs), None)
            if host is not None:
                seen.add(s)
                out.append(tuple(a for a in host if a in s))
    return out


class _CliqueEstimate(NamedTuple):
    """A noisy estimate of one clique's table (axes in clique order) and its per-cell noise variance."""

    values: np.ndarray
    variance: float


def clique_measurements(releases, cliques, tied_idx=None):
    """Engine measurements (tables inside some clique) and, per clique, the noisy estimates of exactly its table.

    A pooled table must pool the cliques of one tied group: it becomes one pooled measurement
    (in sum units) and an estimate of each member clique's table.

    Examples
    --------
    >>> import pandas as pd
    >>> import pgmpy_dp
    >>> df = pd.DataFrame({"a": [0, 1, 1, 0] * 25, "b": [0, 1, 0, 0] * 25})
    >>> rel = df.dp.release([("a", "b"), ("a",)], epsilon=1.0, domain={"a": [0, 1], "b": [0, 1]}, random_state=0)
    >>> measurements, per_clique = clique_measurements([rel], [("a", "b")])
    >>> len(measurements), [t.values.shape for t in per_clique[0]]   # ("a",) is evidence, not a target
    (2, [(2, 2)])
    """
    measurements = []
    per_clique: list[list] = [[] for _ in cliques]
    sets = [frozenset(c) for c in cliques]
    groups = {frozenset(cliques[i] for i in g): g for g in tied_idx or []}
    ignored = []
    for r in releases:
        for t in r.tables:
            # a discrete Gaussian table (rho= release) has a Gaussian likelihood, sigma = its scale
            noise = "gaussian" if t.mechanism == GAUSSIAN_MECHANISM else "laplace"
            members = getattr(t, "members", None)
            if members:
                g = groups.get(frozenset(tuple(m) for m in members))
                if g is None or len(g) != len(members):
                    raise DomainError(
                        f"pooled table over {list(members)} does not match any tied group of the model "
                        f"({[[cliques[i] for i in g] for g in tied_idx or []]}); pass tied=[[...the same cliques, "
                        "in the model's attribute order...]] or release the cliques separately"
                    )
                # in sum units: f times the values, f times the noise scale (the same likelihood)
                sums = len(members) / _member_factor(r, t)
                measurements.append(Measurement(t.attrs, t.values * sums, t.scale * sums, noise=noise, members=members))
                one = _per_member_table(r, t)
                for i in g:
                    per_clique[i].append(_CliqueEstimate(one.values, one.variance))
                continue
            s = frozenset(t.attrs)
            if not any(s <= c for c in sets):
                ignored.append(t.attrs)
                continue
            measurements.append(Measurement(t.attrs, t.values, t.scale, noise=noise))
            for i, c in enumerate(sets):
                if s == c:
                    values = np.transpose(t.values, [t.attrs.index(a) for a in cliques[i]])
                    per_clique[i].append(_CliqueEstimate(values, t.variance))
    if ignored:
        warnings.warn(
            f"table(s) {ignored} lie in no model clique and are not used; add such cliques to the model to use them",
            UserWarning,
            stacklevel=3,
        )
    uncovered = [c for c, ts in zip(cliques, per_clique) if not ts]
    if uncovered:
        released = [getattr(t, "members", None) or t.attrs for r in releases for t in r.tables]
        raise DomainError(
            f"clique(s) {uncovered} are not covered by the release(s) (released tables: {released}); "
            "release a table over each clique, e.g. df.dp.release(cliques, epsilon=...)"
        )
    return measurements, per_clique


def warm_start_targets(warm_start: str | None, cliques, clique_tables, n_records: float) -> list[np.ndarray]:
    """Targets of the naive fit: reconciled for ``warm_start="reconciled"`` (a CGM-EM warm start),
    else each clique's table on its own (``_naive_targets``).

    Examples
    --------
    >>> import pandas as pd
    >>> import pgmpy_dp
    >>> df = pd.DataFrame({"a": [0, 1, 1, 0] * 25, "b": [0, 1, 0, 0] * 25})
    >>> rel = df.dp.release([("a", "b")], epsilon=1.0, domain={"a": [0, 1], "b": [0, 1]}, random_state=0)
    >>> _, per_clique = clique_measurements([rel], [("a", "b")])
    >>> p = warm_start_targets("reconciled", [("a", "b")], per_clique, 100.0)[0]
    >>> p.shape, bool(abs(p.sum() - 1) < 1e-9 and (p >= 0).all())   # a distribution per clique
    ((2, 2), True)
    """
    if warm_start == "reconciled":
        return _reconciled_targets(cliques, clique_tables, n_records)
    return _naive_targets(cliques, clique_tables, n_records)


def _naive_targets(cliques, clique_tables, n_records: float) -> list[np.ndarray]:
    """Naive-MLE targets: inverse-variance mean of each clique's table estimates, per record, projected to the simplex."""
    return [project_simplex(_pooled_estimate(tables)[0] / n_records) for tables in clique_tables]


def _pooled_estimate(tables) -> tuple[np.ndarray, float]:
    """Inverse-variance mean of one clique's table estimates and its per-cell variance (exact tables win)."""
    var = np.array([t.variance for t in tables])
    w = (var <= 0).astype(float) if np.any(var <= 0) else 1.0 / var
    values = sum(wi * t.values for wi, t in zip(w, tables)) / w.sum()
    return values, 0.0 if np.any(var <= 0) else 1.0 / float(w.sum())


def _reconciled_targets(cliques, clique_tables, n_records: float) -> list[np.ndarray]:
    """Warm-start targets that agree on every shared sub-marginal: each clique's inverse-variance
    mean table (as ``_naive_targets``), reconciled across cliques by ``engine.reconcile_tables``."""
    means, variances = zip(*(_pooled_estimate(tables) for tables in clique_tables))
    consistent = reconcile_tables(cliques, means, variances)
    # a table the reconciliation left without mass (all noise, no records) falls back to its own projection
    return [t / t.sum() if t.sum() > 0 else project_simplex(m / n_records) for t, m in zip(consistent, means)]
