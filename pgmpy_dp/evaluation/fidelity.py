"""The fidelity report: how far a synthetic table is from the real one, for the data custodian's eyes.

[`fidelity_report`][pgmpy_dp.evaluation.fidelity.fidelity_report] reads the **real** table, so the report is
not a private release and must not be published: it helps decide whether the synthetic table is good
enough to publish. It follows synthpop's ``compare`` (distributions side by side), ``utility.gen``
(propensity-score pMSE) and ``glm.synds`` (one model fitted on both tables), plus the 1-, 2- and 3-way
marginal distances with the worst marginals named. Every number is in DataFrames;
[`FidelityReport.to_html`][pgmpy_dp.evaluation.fidelity.FidelityReport.to_html] writes one self-contained
HTML page (plots inline, drawn when matplotlib, the ``plot`` extra, is installed).

Both logistic regressions are fitted here with numpy and scipy (Newton's method on the exact log-likelihood,
with a ridge of 1e-6 per record so that separable data still has a finite fit), so the report gives the
same numbers with or without scikit-learn installed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse

from ..privacy.domain import Domain, DomainError

__all__ = ["FidelityReport", "fidelity_report", "propensity_mse", "tvd"]

#: The first line of every HTML report.
NOT_A_RELEASE = (
    "pgmpy-dp fidelity report: it reads the REAL table, so it is NOT a private release; "
    "it is for the data custodian only, do not publish it."
)
#: Marginals above this many cells are left out of the k-way distances (their TVD is dominated by sampling error).
MAX_CELLS = 100_000
_RIDGE = 1e-6


def tvd(p: np.ndarray, q: np.ndarray) -> float:
    """Total variation distance between two normalised tables: half their L1 distance.

    Examples
    --------
    >>> round(tvd(np.array([0.5, 0.5]), np.array([0.8, 0.2])), 12)
    0.3
    """
    return float(0.5 * np.abs(np.asarray(p, dtype=float) - np.asarray(q, dtype=float)).sum())


def encode_table(frame: pd.DataFrame, domain: Domain, name: str = "table", other=None) -> dict[str, np.ndarray]:
    """Codes of ``frame``'s columns in ``domain``: raw values (numbers are binned), or states, or their text.

    A synthetic table holds states (``"[17, 30)"`` for a binned column); a CSV read back holds their text
    (``"1"`` for the state 1). All three are accepted, so the real and synthetic tables may come in any of them.
    ``other`` maps a column whose keys were discovered privately to the state its unreleased values took.
    """
    other = dict(other or {})
    missing = [a for a in domain.attrs if a not in frame.columns]
    if missing:
        raise DomainError(f"the {name} table has no column(s) {missing}; the schema declares {list(domain.attrs)}")
    out = {}
    for a in domain.attrs:
        col = frame[a]
        numeric = pd.api.types.is_numeric_dtype(col.dtype) and not isinstance(col.dtype, pd.CategoricalDtype)
        if a in domain.bins and numeric:
            out[a] = domain.encode(frame[[a]], [a])[a]
            continue
        states = pd.Index(list(domain[a]), dtype=object)
        values = col.astype(object).to_numpy()
        codes = states.get_indexer(values)
        bad = codes < 0
        if bad.any():  # text of the states, as a CSV gives them back
            codes[bad] = pd.Index([str(s) for s in domain[a]]).get_indexer(pd.Series(values[bad]).astype(str))
            na = pd.isna(values) & (codes < 0)
            if na.any() and a in domain.missing:
                codes[na] = domain[a].index(domain.missing[a])
            bad = codes < 0
        if bad.any() and a in other and other[a] in domain[a]:
            codes[bad & ~pd.isna(values)] = domain[a].index(other[a])
            bad = codes < 0
        if bad.any():
            raise DomainError(
                f"column {a!r} of the {name} table holds values outside its declared states "
                f"{list(domain[a])[:10]}; check the schema, or the missing= state for empty cells"
            )
        out[a] = codes.astype(np.intp)
    return out


def _marginal(codes: dict, domain: Domain, attrs: tuple, n: int) -> np.ndarray:
    shape = domain.shape(attrs)
    index = np.ravel_multi_index([codes[a] for a in attrs], shape) if len(attrs) > 1 else codes[attrs[0]]
    return np.bincount(index, minlength=math.prod(shape)) / n


def _design(codes: dict, domain: Domain, attrs, n: int) -> tuple[sparse.csr_matrix, list[str]]:
    """One-hot columns of ``attrs`` without each attribute's first state (the reference), and an intercept."""
    blocks, names, offset = [], ["(intercept)"], 1
    rows = np.arange(n)
    for a in attrs:
        k = domain.size(a) - 1
        if k == 0:
            continue
        keep = codes[a] > 0
        blocks.append((rows[keep], offset + codes[a][keep] - 1))
        names += [f"{a}={s}" for s in domain[a][1:]]
        offset += k
    r = np.concatenate([rows] + [b[0] for b in blocks])
    c = np.concatenate([np.zeros(n, dtype=np.intp)] + [b[1] for b in blocks])
    return sparse.csr_matrix((np.ones(r.size), (r, c)), shape=(n, offset)), names


def _logistic(x: sparse.csr_matrix, y: np.ndarray, max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Ridge-stabilised maximum-likelihood logistic regression by Newton's method (step halving): the
    coefficients and their standard errors (from the penalised Hessian at the optimum)."""
    n, k = x.shape
    ridge = _RIDGE * n * np.r_[0.0, np.ones(k - 1)]  # the intercept is not penalised

    def loss(beta):
        z = x @ beta
        return float(np.sum(np.logaddexp(0.0, z)) - y @ z + 0.5 * ridge @ beta**2)

    beta = np.zeros(k)
    mean = np.clip(y.mean(), 1e-9, 1 - 1e-9)
    beta[0] = math.log(mean / (1 - mean))
    current = loss(beta)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        grad = x.T @ (p - y) + ridge * beta
        hessian = (x.T @ sparse.diags(p * (1 - p)) @ x).toarray() + np.diag(ridge)
        try:
            step = np.linalg.solve(hessian, grad)
        except np.linalg.LinAlgError:  # a state no record of either table has: singular without it
            step = np.linalg.lstsq(hessian, grad, rcond=None)[0]
        t = 1.0
        while t > 1e-10 and loss(beta - t * step) > current:
            t /= 2
        beta, previous, current = beta - t * step, current, loss(beta - t * step)
        if previous - current <= 1e-10 * (1.0 + abs(current)):
            break
    p = 1.0 / (1.0 + np.exp(-(x @ beta)))
    hessian = (x.T @ sparse.diags(p * (1 - p)) @ x).toarray() + np.diag(ridge)
    se = np.sqrt(np.clip(np.diag(np.linalg.pinv(hessian)), 0.0, None))
    return beta, se


def propensity_mse(real_codes: dict, synthetic_codes: dict, domain: Domain) -> dict:
    """synthpop's ``utility.gen`` with ``method="logit"``, main effects: the propensity-score mean squared error.

    A logistic regression on the one-hot columns tells synthetic records (label 1) from real ones (0);
    ``pmse`` is the mean of ``(p_i - c)^2`` over all records, ``c`` the synthetic share. Its expectation when
    both tables come from one distribution is ``(k - 1) (1 - c)^2 c / N`` for ``k`` parameters (Snoke et al.
    2018); ``s_pmse``, the ratio, is near 1 for a synthetic table as good as a fresh sample of the real one.
    """
    attrs = list(domain.attrs)
    n_r, n_s = len(real_codes[attrs[0]]), len(synthetic_codes[attrs[0]])
    both = {a: np.concatenate([real_codes[a], synthetic_codes[a]]) for a in attrs}
    x, _ = _design(both, domain, attrs, n_r + n_s)
    y = np.concatenate([np.zeros(n_r), np.ones(n_s)])
    beta, _ = _logistic(x, y)
    p = 1.0 / (1.0 + np.exp(-(x @ beta)))
    c = n_s / (n_r + n_s)
    pmse = float(np.mean((p - c) ** 2))
    expected = (x.shape[1] - 1) * (1 - c) ** 2 * c / (n_r + n_s)
    return {"pmse": pmse, "expected_null_pmse": expected, "s_pmse": pmse / expected if expected > 0 else math.nan,
            "parameters": x.shape[1], "n_real": n_r, "n_synthetic": n_s}


@dataclass
class FidelityReport:
    """The numbers of a fidelity report (see [`fidelity_report`][pgmpy_dp.evaluation.fidelity.fidelity_report]).

    Attributes
    ----------
    distributions : pandas.DataFrame
        Per column and state: ``real`` and ``synthetic`` proportions and their ``difference``.
    marginals : pandas.DataFrame
        One row per marginal: ``k`` (1, 2 or 3), ``attrs`` (a tuple) and ``tvd``, worst first within each ``k``.
    summary : pandas.DataFrame
        Per ``k``: the number of marginals and their mean and largest TVD, and the worst one.
    utility : dict
        The propensity-score utility ([`propensity_mse`][pgmpy_dp.evaluation.fidelity.propensity_mse]).
    coefficients : pandas.DataFrame or None
        The logistic regression of ``target`` on both tables, one row per term: ``real``, ``real_se``,
        ``synthetic`` and ``z`` = (synthetic - real) / real_se. None without a target.
    target : str or None
        The modelled column; ``positive`` is the state it predicts.
    """

    distributions: pd.DataFrame
    marginals: pd.DataFrame
    summary: pd.DataFrame
    utility: dict
    coefficients: pd.DataFrame | None
    target: str | None
    positive: object = None
    domain: Domain | None = field(default=None, repr=False)

    def worst(self, k: int, n: int = 5) -> pd.DataFrame:
        """The ``n`` ``k``-way marginals the synthetic table gets most wrong."""
        return self.marginals[self.marginals["k"] == k].head(n).reset_index(drop=True)

    def to_html(self, path) -> None:
        """Write the report as ONE self-contained HTML file (plots inline as PNG); its first line says it is no release."""
        from .fidelity_html import render

        Path(path).write_text(render(self, NOT_A_RELEASE), encoding="utf-8")


def fidelity_report(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    domain,
    target: str | None = None,
    positive=None,
    ways: tuple[int, ...] = (1, 2, 3),
    max_cells: int = MAX_CELLS,
    other=None,
) -> FidelityReport:
    """Compare a synthetic table with the real one: distributions, k-way TVDs, pMSE and a model on both.

    The report reads the real table: it is for the custodian, never a private release (nothing is charged).

    Parameters
    ----------
    real, synthetic : pandas.DataFrame
        The tables, with a column per attribute of ``domain``: raw values, states or their text.
    domain : Domain or mapping
        The public schema the synthetic table was made under.
    target : str, optional
        A column to model by logistic regression on the others' one-hot columns, on both tables.
    positive : state, optional
        The state of ``target`` the regression predicts (default: its last declared state).
    ways : tuple of int
        The marginal orders to measure.
    max_cells : int
        Marginals with more cells are left out of the distances.
    other : mapping, optional
        Per column whose keys were discovered privately, the state its unreleased values took (the
        synthesizer's ``schema_release_``): the real table's other values are counted there.

    Returns
    -------
    FidelityReport

    Examples
    --------
    >>> real = pd.DataFrame({"a": [0, 0, 1, 1] * 50, "b": [0, 1, 1, 1] * 50})
    >>> fake = pd.DataFrame({"a": [0, 1] * 100, "b": [1, 1] * 100})
    >>> rep = fidelity_report(real, fake, domain={"a": [0, 1], "b": [0, 1]}, target="b")
    >>> rep.worst(1)[["attrs", "tvd"]].values.tolist()
    [[('b',), 0.25], [('a',), 0.0]]
    """
    dom = domain if isinstance(domain, Domain) else Domain(domain)
    if len(real) == 0 or len(synthetic) == 0:
        raise ValueError("both tables need at least one record")
    if target is not None and target not in dom:
        raise ValueError(f"target {target!r} is not a column of the schema {list(dom.attrs)}")
    if any(k not in (1, 2, 3) for k in ways):
        raise ValueError(f"ways must hold 1, 2 or 3, got {ways!r}")
    rc, sc = encode_table(real, dom, "real", other), encode_table(synthetic, dom, "synthetic", other)
    n_r, n_s = len(real), len(synthetic)
    rows = []
    for a in dom.attrs:
        p, q = _marginal(rc, dom, (a,), n_r), _marginal(sc, dom, (a,), n_s)
        rows += [(a, s, pi, qi, qi - pi) for s, pi, qi in zip(dom[a], p, q)]
    distributions = pd.DataFrame(rows, columns=["column", "state", "real", "synthetic", "difference"])
    marg = []
    for k in sorted(set(ways)):
        for attrs in combinations(dom.attrs, k):
            if dom.cells(attrs) <= max_cells:
                marg.append((k, attrs, tvd(_marginal(rc, dom, attrs, n_r), _marginal(sc, dom, attrs, n_s))))
    marginals = pd.DataFrame(marg, columns=["k", "attrs", "tvd"])
    marginals = marginals.sort_values(["k", "tvd"], ascending=[True, False], kind="stable").reset_index(drop=True)
    summary = marginals.groupby("k").agg(marginals=("tvd", "size"), mean_tvd=("tvd", "mean"), max_tvd=("tvd", "max"),
                                         worst=("attrs", "first")).reset_index()
    utility = propensity_mse(rc, sc, dom)
    coefficients = None
    if target is not None:
        positive = dom[target][-1] if positive is None else positive
        if positive not in dom[target]:
            raise ValueError(f"positive={positive!r} is not a state of {target!r}: {list(dom[target])}")
        coefficients = _model_on_both(rc, sc, dom, target, dom[target].index(positive))
    return FidelityReport(distributions, marginals, summary, utility, coefficients, target, positive, dom)


def _model_on_both(rc: dict, sc: dict, dom: Domain, target: str, positive: int) -> pd.DataFrame:
    features = [a for a in dom.attrs if a != target]
    fits = {}
    for name, codes in (("real", rc), ("synthetic", sc)):
        n = len(codes[target])
        x, terms = _design(codes, dom, features, n)
        fits[name] = _logistic(x, (codes[target] == positive).astype(float))
    out = pd.DataFrame({"term": terms, "real": fits["real"][0], "real_se": fits["real"][1],
                        "synthetic": fits["synthetic"][0]})
    out["z"] = (out["synthetic"] - out["real"]) / out["real_se"]
    return out

