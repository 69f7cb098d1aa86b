"""Synthetic pairwise Markov networks with known graphs, and exact or Gibbs samples from them.

For tests and benchmarks of structure learning: [`random_pairwise_model`][pgmpy_dp.testing.pairwise_models.random_pairwise_model]
draws a sparse graph with edge weights of magnitude ``eta``;
[`sample_pairwise_model`][pgmpy_dp.testing.pairwise_models.sample_pairwise_model] samples it exactly (enumeration) when the state
space is small, else by Gibbs sampling vectorised over independent chains.
A model is ``(W, theta)``: ``W`` of shape ``(p, p, k, k)`` with
``W[j, i] = W[i, j].T`` and zero diagonal blocks, ``theta`` of shape ``(p, k)``;
``p(x) ∝ exp(sum_{i<j} W[i, j, x_i, x_j] + sum_i theta[i, x_i])``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..privacy.domain import PUBLIC_COLUMNS_ATTR

__all__ = ["random_pairwise_model", "sample_pairwise_model", "model_edges"]

#: state spaces up to this many configurations are sampled exactly
EXACT_LIMIT = 2**20


def random_pairwise_model(p: int, k: int = 2, max_degree: int = 3, eta: float = 0.4, seed=None):
    """A random sparse pairwise model: each node has at most ``max_degree`` neighbours.

    For ``k = 2`` this is an Ising model: ``W[i, j] = A_ij s s^T`` with ``s = (-1, 1)``
    and ``A_ij = +-eta``, so its width is at most ``max_degree * eta``. For ``k > 2``
    each edge gets a random doubly centred matrix rescaled to ``max |W_ij| = eta``.
    ``theta`` is zero (the width is the interaction part only).

    Examples
    --------
    >>> W, theta = random_pairwise_model(6, seed=0)
    >>> W.shape, bool(np.allclose(W, W.transpose(1, 0, 3, 2)))
    ((6, 6, 2, 2), True)
    """
    rng = np.random.default_rng(seed)
    W = np.zeros((p, p, k, k))
    degree = np.zeros(p, dtype=int)
    pairs = [(i, j) for i in range(p) for j in range(i + 1, p)]
    rng.shuffle(pairs)
    target = max(1, (p * max_degree) // 3)  # about two thirds of the degree budget: sparse, not saturated
    s = np.array([-1.0, 1.0])
    n_edges = 0
    for i, j in pairs:
        if n_edges >= target:
            break
        if degree[i] >= max_degree or degree[j] >= max_degree:
            continue
        if k == 2:
            block = rng.choice([-1.0, 1.0]) * eta * np.outer(s, s)
        else:
            block = rng.normal(size=(k, k))
            block -= block.mean(axis=0, keepdims=True)
            block -= block.mean(axis=1, keepdims=True)
            block *= eta / np.abs(block).max()
        W[i, j] = block
        W[j, i] = block.T
        degree[i] += 1
        degree[j] += 1
        n_edges += 1
    return W, np.zeros((p, k))


def model_edges(W: np.ndarray, names=None) -> list[tuple]:
    """Edges ``(i, j)``, ``i < j``, with a non-zero block (as names if given).

    Examples
    --------
    >>> W, _ = random_pairwise_model(5, max_degree=1, seed=0)
    >>> len(model_edges(W)) >= 1
    True
    """
    p = W.shape[0]
    out = [(i, j) for i in range(p) for j in range(i + 1, p) if np.abs(W[i, j]).max() > 0]
    return out if names is None else [(names[i], names[j]) for i, j in out]


def _energy(X: np.ndarray, W: np.ndarray, theta: np.ndarray) -> np.ndarray:
    e = theta[np.arange(X.shape[1]), X].sum(axis=1)
    for i, j in model_edges(W):
        e += W[i, j][X[:, i], X[:, j]]
    return e


def sample_pairwise_model(W, theta, n: int, seed=None, method: str = "auto", burn_in: int = 200,
                          thin: int = 5, chains: int = 2000) -> pd.DataFrame:
    """``n`` samples as a categorical DataFrame with columns ``x0 .. x{p-1}`` and states ``0..k-1``.

    ``method="exact"`` enumerates the ``k**p`` states (the default when there are
    at most ``EXACT_LIMIT``); ``"gibbs"`` runs ``chains`` chains in parallel
    (``burn_in`` sweeps, then one sample every ``thin`` sweeps), each sweep
    updating one node at a time for all chains at once.

    Examples
    --------
    >>> W, theta = random_pairwise_model(4, seed=0)
    >>> df = sample_pairwise_model(W, theta, 100, seed=0)
    >>> df.shape, list(df["x0"].cat.categories)
    ((100, 4), [0, 1])
    """
    rng = np.random.default_rng(seed)
    p, k = theta.shape
    if method == "auto":
        method = "exact" if k**p <= EXACT_LIMIT else "gibbs"
    if method == "exact":
        states = np.indices((k,) * p, dtype=np.uint8).reshape(p, -1).T  # uint8: 2**20 x 20 is 20 MB
        e = _energy(states, W, theta)
        prob = np.exp(e - e.max())
        prob /= prob.sum()
        X = states[rng.choice(len(states), size=n, p=prob)].astype(np.intp)
    elif method == "gibbs":
        chains = min(chains, n)
        per_chain = -(-n // chains)
        x = rng.integers(0, k, size=(chains, p))
        neighbours = [np.flatnonzero(np.abs(W[i]).reshape(p, -1).max(axis=1) > 0) for i in range(p)]
        out = []
        for sweep in range(burn_in + per_chain * thin):
            for i in range(p):
                logits = np.tile(theta[i], (chains, 1))
                for j in neighbours[i]:
                    logits += W[i, j][:, x[:, j]].T
                x[:, i] = np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)
            if sweep >= burn_in and (sweep - burn_in) % thin == thin - 1:
                out.append(x.copy())
        X = np.concatenate(out)[:n]
        X = X[rng.permutation(len(X))]
    else:
        raise ValueError(f"method must be 'auto', 'exact' or 'gibbs', got {method!r}")
    dtype = pd.CategoricalDtype(list(range(k)))
    df = pd.DataFrame({f"x{i}": pd.Categorical.from_codes(X[:, i], dtype=dtype) for i in range(p)})
    df.attrs[PUBLIC_COLUMNS_ATTR] = list(df.columns)  # the states come from the model, not the sample
    return df
