"""Approximate inference: damped loopy belief propagation with the Bethe log-partition function.

The cluster graph has one cluster per model clique and one per attribute, joined by single-attribute
sepsets (running intersection holds for any model). Messages are kept between calls.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from ..privacy.domain import Domain
from .factor import align, logsumexp
from .junction_tree import as_cliques


class LoopyBP:
    """Damped sum-product on the clique-attribute cluster graph.

    Parameters
    ----------
    domain : Domain
        States of every attribute of the model.
    cliques : sequence of tuple of str
        Scopes of the model's log-potentials.
    damping : float
        Weight of the previous message in each update (0 = undamped).
    max_iter : int
        Largest number of parallel sweeps per call.
    tol : float
        Stop when no log-message changes by more than this.

    Examples
    --------
    >>> d = Domain({"a": [0, 1], "b": [0, 1], "c": [0, 1]})
    >>> bp = LoopyBP(d, [("a", "b"), ("b", "c")])     # a tree: BP is exact
    >>> marg, log_z = bp.marginals([np.log([[4.0, 1.0], [1.0, 4.0]]), np.zeros((2, 2))])
    >>> marg[0].round(2), round(float(np.exp(log_z)), 6)
    (array([[0.4, 0.1],
           [0.1, 0.4]]), 20.0)
    """

    def __init__(
        self,
        domain: Domain,
        cliques: Sequence[Sequence[str]],
        damping: float = 0.5,
        max_iter: int = 500,
        tol: float = 1e-8,
    ) -> None:
        if not 0 <= damping < 1:
            raise ValueError(f"damping must be in [0, 1), got {damping!r}")
        self.domain = domain
        self.cliques = as_cliques(domain, cliques)
        self.damping = float(damping)
        self.max_iter = int(max_iter)
        self.tol = float(tol)
        self.attrs = list(domain.attrs)
        self.degree = {a: sum(a in c for c in self.cliques) for a in self.attrs}
        self._messages: list[list[np.ndarray]] | None = None  # clique -> attribute, log, normalised
        self.n_iter_ = 0
        self.converged_ = True
        self.residual_ = 0.0

    def reset(self) -> None:
        """Forget the messages kept from the previous call."""
        self._messages = None

    def _fresh(self) -> list[list[np.ndarray]]:
        return [[np.full(self.domain.size(a), -np.log(self.domain.size(a))) for a in c] for c in self.cliques]

    def run(self, log_potentials: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Iterate to a fixed point; return the clique-to-attribute messages and the clique beliefs (log)."""
        if len(log_potentials) != len(self.cliques):
            raise ValueError(f"expected {len(self.cliques)} log-potential arrays, got {len(log_potentials)}")
        msgs = self._messages if self._messages is not None else self._fresh()
        residual = np.inf
        it = 0
        for it in range(1, self.max_iter + 1):
            msgs, residual = self._sweep(log_potentials, msgs)
            if residual < self.tol:
                break
        self._messages = msgs
        self.n_iter_ = it
        self.residual_ = residual
        self.converged_ = residual < self.tol
        if not self.converged_:
            warnings.warn(
                f"loopy belief propagation stopped after {it} sweeps with message change {residual:.2e} "
                f"> tol={self.tol:g}; raise max_iter or damping",
                RuntimeWarning,
                stacklevel=3,
            )
        self._total = total = self._totals(msgs)
        beliefs = []
        for c, theta, ms in zip(self.cliques, log_potentials, msgs):
            b = theta
            for a, m in zip(c, ms):
                b = b + align(total[a] - m, (a,), c)
            beliefs.append(b - logsumexp(b))
        return msgs, beliefs

    def _totals(self, msgs: list[list[np.ndarray]]) -> dict:
        """Per attribute, the sum of every clique's message into it (in clique order)."""
        total = {a: 0.0 for a in self.attrs}
        for c, ms in zip(self.cliques, msgs):
            for a, m in zip(c, ms):
                total[a] = total[a] + m
        return total

    def _sweep(self, log_potentials: Sequence[np.ndarray], msgs: list) -> tuple[list, float]:
        """One parallel update of every clique-to-attribute message, and the largest change."""
        total = self._totals(msgs)
        updates = [self._update(c, theta, ms, total) for c, theta, ms in zip(self.cliques, log_potentials, msgs)]
        return [out for out, _ in updates], max([0.0] + [r for _, r in updates])

    def _update(self, c: tuple[str, ...], theta: np.ndarray, ms: list[np.ndarray], total: dict) -> tuple[list, float]:
        """Clique ``c``'s new (damped) messages to its attributes and their largest change."""
        # attribute-to-clique messages exclude the clique's own contribution
        into = [total[a] - m for a, m in zip(c, ms)]
        b = theta
        for i, m in enumerate(into):
            b = b + align(m, (c[i],), c)
        out, residual = [], 0.0
        for i, (m_in, m_old) in enumerate(zip(into, ms)):
            axes = tuple(j for j in range(len(c)) if j != i)
            m_new = (logsumexp(b, axis=axes) if axes else b) - m_in
            m_new = m_new - logsumexp(m_new)
            if self.damping:
                m_new = np.logaddexp(np.log(self.damping) + m_old, np.log1p(-self.damping) + m_new)
            residual = max(residual, float(np.max(np.abs(m_new - m_old))))
            out.append(m_new)
        return out, residual

    def marginals(self, log_potentials: Sequence[np.ndarray]) -> tuple[list[np.ndarray], float]:
        """Approximate clique marginals (axes in clique order) and the Bethe approximation of ``log Z``.

        ``log Z_Bethe = sum_C (E_bC[theta_C] + H(b_C)) - sum_v (deg(v) - 1) H(b_v)``;
        exact on trees.
        """
        _, beliefs = self.run(log_potentials)
        marg = [np.exp(b) for b in beliefs]
        log_z = 0.0
        for theta, b, p in zip(log_potentials, beliefs, marg):
            log_z += float(np.sum(p * (theta - np.where(p > 0, b, 0.0))))
        for a in self.attrs:
            d = self.degree[a]
            if d == 1:
                continue
            lb = self._total[a] - logsumexp(self._total[a]) if d else np.full(self.domain.size(a), -np.log(self.domain.size(a)))
            pb = np.exp(lb)
            h = -float(np.sum(pb * np.where(pb > 0, lb, 0.0)))
            log_z -= (d - 1) * h
        return marg, log_z
