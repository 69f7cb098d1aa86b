"""Exact accuracy metrics for Markov networks, computed with the engine's junction tree.

``KL(p || q) = E_p[log p - log q] = sum_C E_p[theta^p_C] - log Z_p - sum_C E_p[theta^q_C] + log Z_q``:
one calibration of ``p`` on the union of both models' cliques gives every
expectation, one calibration of ``q`` its log-partition function. No joint
table is ever built.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..engine import JunctionTree
from ..privacy.domain import Domain, DomainError


def kl_divergence_potentials(
    domain: Domain,
    cliques_p: Sequence[Sequence[str]],
    theta_p: Sequence[np.ndarray],
    cliques_q: Sequence[Sequence[str]],
    theta_q: Sequence[np.ndarray],
) -> float:
    """Exact ``KL(p || q)`` between two log-linear models given as cliques and log-potentials.

    Entries of ``-inf`` (zero potentials) are allowed: they give ``inf`` when
    ``q`` rules out a state ``p`` can take, and contribute nothing where ``p`` does.

    Examples
    --------
    >>> d = Domain({"a": [0, 1], "b": [0, 1]})
    >>> p = [np.log([[0.4, 0.1], [0.1, 0.4]])]
    >>> round(kl_divergence_potentials(d, [("a", "b")], p, [("a",)], [np.zeros(2)]), 4)
    0.1927
    """
    cliques_p = [tuple(c) for c in cliques_p]
    cliques_q = [tuple(c) for c in cliques_q]
    union = list(dict.fromkeys(cliques_p + cliques_q))
    jt = JunctionTree(domain, union)
    index = {c: i for i, c in enumerate(union)}

    def full(cliques, theta):
        out = [np.zeros(domain.shape(c)) for c in union]
        for c, t in zip(cliques, theta):
            out[index[c]] = out[index[c]] + np.asarray(t, dtype=np.float64)
        return out

    tp, tq = full(cliques_p, theta_p), full(cliques_q, theta_q)
    mu_p, log_zp = jt.marginals(tp)
    _, log_zq = jt.marginals(tq)
    total = 0.0
    with np.errstate(invalid="ignore"):
        for m, a, b in zip(mu_p, tp, tq):
            # where p has mass its potential is finite; 0 * anything counts as 0 elsewhere
            total += float(np.sum(np.where(m > 0, m * (a - b), 0.0)))
    return total - log_zp + log_zq


def log_potentials_of(model):
    """Cliques, log-potentials and domain of a pgmpy ``DiscreteMarkovNetwork`` (factor scopes as cliques)."""
    factors = model.get_factors()
    if not factors:
        raise ValueError("the model has no factors; fit it first")
    states: dict[str, list] = {}
    for f in factors:
        for v in f.scope():
            s = list(f.state_names[v])
            if v in states and states[v] != s:
                raise DomainError(f"variable {v!r} has states {states[v]} and {s} in different factors")
            states[v] = s
    dom = Domain({v: states[v] for v in model.nodes() if v in states})
    with np.errstate(divide="ignore"):
        theta = [np.log(np.asarray(f.values, dtype=np.float64)) for f in factors]
    return [tuple(f.scope()) for f in factors], theta, dom


def kl_divergence(true_model, learned_model) -> float:
    """Exact ``KL(true || learned)`` between two pgmpy ``DiscreteMarkovNetwork`` s over the same variables.

    Examples
    --------
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> from pgmpy.factors.discrete import DiscreteFactor
    >>> p = DiscreteMarkovNetwork([("a", "b")])
    >>> p.add_factors(DiscreteFactor(["a", "b"], [2, 2], [4, 1, 1, 4]))
    >>> q = DiscreteMarkovNetwork([("a", "b")])
    >>> q.add_factors(DiscreteFactor(["a", "b"], [2, 2], [1, 1, 1, 1]))
    >>> round(kl_divergence(p, q), 4), kl_divergence(p, p)
    (0.1927, 0.0)
    """
    cp, tp, dp = log_potentials_of(true_model)
    cq, tq, dq = log_potentials_of(learned_model)
    if set(dp.attrs) != set(dq.attrs):
        raise DomainError(
            f"the models have different variables: {sorted(dp.attrs)} vs {sorted(dq.attrs)}"
        )
    domain = dp.merge(dq)
    return kl_divergence_potentials(domain, cp, tp, cq, tq)
