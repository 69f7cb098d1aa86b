"""Accuracy of a private Bayesian network against a reference network on the same DAG.

The metrics of Roy Chowdhury et al. (2020), section 5.1, against the non-private MLE network: L1 and
KL errors of CPDs and of inference answers (pgmpy's ``VariableElimination``), and the MAP match rate.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._progress import progress

#: Probability mass mixed in (uniformly) before a KL divergence, so that a zero
#: in the reference where the estimate is positive gives a large finite number.
KL_SMOOTHING = 1e-6


def l1(p: np.ndarray, q: np.ndarray) -> float:
    """``sum |p - q|``.

    Examples
    --------
    >>> l1(np.array([0.5, 0.5]), np.array([1.0, 0.0]))
    1.0
    """
    return float(np.abs(np.asarray(p) - np.asarray(q)).sum())


def kl(estimate: np.ndarray, reference: np.ndarray, axis=None) -> float:
    """``sum estimate * log(estimate / reference)`` (the paper's direction), with `KL_SMOOTHING`.

    Both arrays are distributions along ``axis`` (all axes by default).

    Examples
    --------
    >>> round(kl(np.array([0.5, 0.5]), np.array([0.5, 0.5])), 12)
    0.0
    """
    p, q = (np.asarray(a, dtype=np.float64) for a in (estimate, reference))
    k = p.size if axis is None else p.shape[axis]
    p = (1 - KL_SMOOTHING) * p + KL_SMOOTHING / k
    q = (1 - KL_SMOOTHING) * q + KL_SMOOTHING / k
    return float(np.sum(p * np.log(p / q)))


def _cpd_array(model, node) -> tuple[np.ndarray, list]:
    cpd = model.get_cpds(node)
    # order the parents the same way for both models before comparing
    evidence = list(cpd.variables[1:])
    values = cpd.get_values().reshape([cpd.variable_card, *cpd.cardinality[1:]])
    order = sorted(range(len(evidence)), key=lambda i: evidence[i])
    values = np.transpose(values, [0, *(1 + i for i in order)])
    return values.reshape(cpd.variable_card, -1), sorted(evidence)


def cpd_errors(estimate, reference) -> pd.DataFrame:
    """Per node: L1 and KL between the two networks' CPDs (summed over parent configurations).

    The KL of a CPD sums, over parent configurations, the KL of its columns.

    Examples
    --------
    >>> from pgmpy_dp.datasets import load_network
    >>> net = load_network("asia")
    >>> cpd_errors(net, net)[["l1", "kl"]].abs().sum().round(12).tolist()
    [0.0, 0.0]
    """
    rows = []
    for node in reference.nodes():
        p, ev_p = _cpd_array(estimate, node)
        q, ev_q = _cpd_array(reference, node)
        if ev_p != ev_q or p.shape != q.shape:
            raise ValueError(f"node {node!r} has parents {ev_p} in one network and {ev_q} in the other")
        rows.append({"node": node, "l1": l1(p, q), "kl": kl(p, q, axis=0), "params": p.size})
    return pd.DataFrame(rows).set_index("node")


def _families_under_truth(truth, estimate):
    """Per node of ``truth``: its CPD, ``estimate``'s CPD (axes node, sorted parents) and ``P_truth(parents)``."""
    from ..engine import JunctionTree
    from ..privacy.domain import Domain

    nodes = list(truth.nodes())
    domain = Domain({n: list(truth.get_cpds(n).state_names[n]) for n in nodes})
    true_cpds, est_cpds, families = [], [], []
    for node in nodes:
        t, ev_t = _cpd_array(truth, node)
        e, ev_e = _cpd_array(estimate, node)
        if ev_t != ev_e or t.shape != e.shape:
            raise ValueError(f"node {node!r} has parents {ev_t} in one network and {ev_e} in the other")
        shape = (t.shape[0], *(domain.size(p) for p in ev_t))
        true_cpds.append(t.reshape(shape))
        est_cpds.append(e.reshape(shape))
        families.append((node, *ev_t))
    with np.errstate(divide="ignore"):
        mu, _ = JunctionTree(domain, families).marginals([np.log(t) for t in true_cpds])
    return [(t, e, m.sum(axis=0)) for t, e, m in zip(true_cpds, est_cpds, mu)]


def joint_kl(truth, estimate) -> float:
    """``KL(P_truth || P_estimate)`` of the two networks' joint distributions, exactly, without enumerating them.

    For networks on the same DAG, the chain rule: ``sum_i sum_u P_truth(u) KL(P_truth(. | u) ||
    P_estimate(. | u))`` over nodes and parent configurations, the parent marginals from a junction tree.
    Each CPD column is first mixed with `KL_SMOOTHING` of the uniform distribution.

    Examples
    --------
    >>> from pgmpy_dp.datasets import load_network
    >>> net = load_network("asia")
    >>> joint_kl(net, net)
    0.0
    """
    total = 0.0
    for t, e, p_u in _families_under_truth(truth, estimate):
        k = t.shape[0]
        t, e = ((1 - KL_SMOOTHING) * x + KL_SMOOTHING / k for x in (t, e))
        total += float(np.sum(p_u * np.sum(t * (np.log(t) - np.log(e)), axis=0)))
    return max(total, 0.0)


def weighted_cpd_l1(truth, estimate) -> float:
    """Mean over nodes of ``sum_u P_truth(u) sum_x |P_truth(x | u) - P_estimate(x | u)|``.

    The CPD L1 error with each parent configuration weighted by how often it occurs (unlike
    [`cpd_errors`][pgmpy_dp.evaluation.bayesian.cpd_errors]).

    Examples
    --------
    >>> from pgmpy_dp.datasets import load_network
    >>> net = load_network("asia")
    >>> weighted_cpd_l1(net, net)
    0.0
    """
    parts = _families_under_truth(truth, estimate)
    return float(np.mean([np.sum(p_u * np.abs(t - e).sum(axis=0)) for t, e, p_u in parts]))


@dataclass(frozen=True)
class Query:
    """``P(variables | evidence)``: a marginal query when ``evidence`` is empty."""

    variables: tuple[str, ...]
    evidence: dict


def random_queries(model, data: pd.DataFrame, n: int, conditional: bool, rng, max_vars: int = 2,
                   max_evidence: int = 2) -> list[Query]:
    """Random inference queries over ``model``'s nodes.

    1 to ``max_vars`` query variables; conditional queries observe 1 to ``max_evidence`` others at
    their values in a random record of ``data`` (evidence of positive probability).

    Examples
    --------
    >>> from pgmpy_dp.datasets import load_network, sample_network
    >>> net = load_network("asia")
    >>> qs = random_queries(net, sample_network(net, 50, seed=0), 3, True, np.random.default_rng(0))
    >>> len(qs), all(1 <= len(q.evidence) <= 2 and not set(q.evidence) & set(q.variables) for q in qs)
    (3, True)
    """
    nodes = list(model.nodes())
    queries = []
    for _ in range(n):
        k = int(rng.integers(1, max_vars + 1))
        chosen = list(rng.choice(nodes, size=k + (max_evidence if conditional else 0), replace=False))
        variables = tuple(chosen[:k])
        evidence = {}
        if conditional:
            m = int(rng.integers(1, max_evidence + 1))
            row = data.iloc[int(rng.integers(len(data)))]
            evidence = {v: row[v] for v in chosen[k : k + m]}
        queries.append(Query(variables, evidence))
    return queries


def answer_queries(model, queries: list[Query], show_progress: bool = True) -> list[np.ndarray]:
    """Each query's answer in ``model`` (pgmpy ``VariableElimination``), axes in the query's variable order.

    ``show_progress`` draws a bar over the queries when they take more than a couple of seconds.

    Examples
    --------
    >>> from pgmpy_dp.datasets import load_network
    >>> answer = answer_queries(load_network("asia"), [Query(("smoke", "lung"), {})])[0]
    >>> answer.shape, round(float(answer.sum()), 12)
    ((2, 2), 1.0)
    """
    from pgmpy.inference import VariableElimination

    engine = VariableElimination(model)
    answers = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for q in progress(queries, show_progress, "queries"):
            factor = engine.query(list(q.variables), evidence=q.evidence or None, show_progress=False)
            values = np.transpose(factor.values, [factor.variables.index(v) for v in q.variables])
            answers.append(values / values.sum())
    return answers


def map_answers(model, queries: list[Query], show_progress: bool = True) -> list[dict]:
    """Each query's most probable assignment of its variables in ``model`` (pgmpy ``VariableElimination``).

    ``show_progress`` draws a bar over the queries when they take more than a couple of seconds.

    Examples
    --------
    >>> from pgmpy_dp.datasets import load_network
    >>> map_answers(load_network("asia"), [Query(("lung",), {"tub": "yes"})])
    [{'lung': 'no'}]
    """
    from pgmpy.inference import VariableElimination

    engine = VariableElimination(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            engine.map_query(list(q.variables), evidence=q.evidence or None, show_progress=False)
            for q in progress(queries, show_progress, "MAP queries")
        ]


def query_errors(estimate, reference, queries: list[Query], show_progress: bool = True) -> pd.DataFrame:
    """L1 and KL of each query's answer in ``estimate`` against ``reference``.

    ``reference`` is a network or its precomputed [`answer_queries`][pgmpy_dp.evaluation.bayesian.answer_queries];
    ``show_progress`` is passed to [`answer_queries`][pgmpy_dp.evaluation.bayesian.answer_queries].

    Examples
    --------
    >>> from pgmpy_dp.datasets import load_network, sample_network
    >>> net = load_network("asia")
    >>> qs = random_queries(net, sample_network(net, 100, seed=0), 3, True, np.random.default_rng(0))
    >>> float(query_errors(net, net, qs)["l1"].max())
    0.0
    """
    ref = reference if isinstance(reference, list) else answer_queries(reference, queries, show_progress)
    est = answer_queries(estimate, queries, show_progress)
    return pd.DataFrame(
        [{"query": q, "l1": l1(p, r), "kl": kl(p, r)} for q, p, r in zip(queries, est, ref)]
    )

