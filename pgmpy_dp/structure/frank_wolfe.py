"""Private Frank-Wolfe for l1-ball constrained logistic regression, and its zCDP accounting.

Minimises the logistic loss over the l1 ball ``||w||_1 <= radius`` (Zhang, Kamath, Kulkarni and Wu
2020); each iteration moves towards the vertex ``+-radius e_j`` picked by the exponential mechanism
(report-noisy-max with Gumbel noise), so each iteration publishes one index.

Privacy unit: one row added or removed. With ``|x_rj| <= 1``, labels ``+-1`` and scores on the *summed*
gradient (the row count needs no protection), one row moves every vertex score by at most ``radius``;
a selection at Gumbel scale ``b`` is ``2 radius / b``-DP, i.e. ``(2 radius / b)**2 / 8``-zCDP (Cesar and
Rogers 2021), and ``T`` iterations compose to ``rho = T radius**2 / (2 b**2)``. By default each selection
is OpenDP's exact ``make_noisy_max``; ``random_state`` uses a seeded numpy Gumbel race, for experiments
only. See docs/structure.md.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import sparse
from scipy.special import expit

from .._blas import single_threaded_blas
from ..privacy import check_rho
from ..privacy.selection import exponential_mechanism_rho, opendp_noisy_max
from ..privacy.random_state import check_random_state


def frank_wolfe_rho(noise_scale: float, radius: float, n_iter: int) -> float:
    """Total zCDP cost of ``n_iter`` noisy vertex selections with Gumbel scale ``noise_scale`` (module docstring).

    Examples
    --------
    >>> frank_wolfe_rho(noise_scale=2.0, radius=1.0, n_iter=10)
    1.25
    """
    epsilon = 2.0 * float(radius) / float(noise_scale)
    return int(n_iter) * exponential_mechanism_rho(epsilon)


def frank_wolfe_noise_scale(rho: float, radius: float, n_iter: int) -> float:
    """Gumbel scale at which ``n_iter`` selections cost exactly ``rho`` (inverse of [`frank_wolfe_rho`][pgmpy_dp.structure.frank_wolfe.frank_wolfe_rho]).

    Examples
    --------
    >>> b = frank_wolfe_noise_scale(rho=1.25, radius=1.0, n_iter=10)
    >>> b, frank_wolfe_rho(b, 1.0, 10)
    (2.0, 1.25)
    """
    return float(radius) * math.sqrt(int(n_iter) / (2.0 * float(rho)))


def _select_vertices(G, allowed, radius, noise_scale, rng):
    """Per column of the summed gradient ``G`` (d, m): the chosen coordinate and sign.

    Vertex ``+radius e_j`` scores ``radius G_j`` and ``-radius e_j`` scores
    ``-radius G_j``; the smallest (noisy) score wins. ``allowed`` (d, m) bool
    masks out vertices that are not part of a problem (fixed in advance, data-free).
    """
    d, m = G.shape
    scores = np.concatenate([G, -G], axis=0)  # in units of radius: sensitivity 1
    ok = np.concatenate([allowed, allowed], axis=0)
    if noise_scale is None:  # non-private baseline: the exact Frank-Wolfe step
        idx = np.argmin(np.where(ok, scores, np.inf), axis=0)
    elif rng is not None:
        gumbel = rng.gumbel(size=scores.shape)
        noisy = -scores / (noise_scale / radius) + gumbel
        idx = np.argmax(np.where(ok, noisy, -np.inf), axis=0)
    else:
        # scores are in units of radius (L-infinity sensitivity 1); the smallest wins, so race their negatives
        select = opendp_noisy_max(noise_scale / radius)
        idx = np.empty(m, dtype=np.intp)
        for c in range(m):  # one exact sampler call per problem; m is small (nodes x pairs)
            cand = np.flatnonzero(ok[:, c])
            idx[c] = cand[select((-scores[cand, c]).tolist())]
    sign = np.where(idx < d, 1.0, -1.0)
    return idx % d, sign


def frank_wolfe_batch(X, Y, radius, n_iter, noise_scale=None, allowed=None, rng=None):
    """Run Frank-Wolfe on ``m`` logistic problems sharing one design ``X`` (n, d).

    ``Y`` (n, m) holds labels ``+-1``, or 0 where a row is not part of problem ``c``. Returns the weights
    (d, m); each iteration is one product ``X.T @ R`` and one column gather for all problems.
    """
    n, d = X.shape
    m = Y.shape[1]
    allowed = np.ones((d, m), dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
    W = np.zeros((d, m))
    margins = np.zeros((n, m))
    cols = np.arange(m)
    is_sparse = sparse.issparse(X)
    Xc = X.tocsc() if is_sparse else X
    # one BLAS thread: the products are thin (d and m are tens), and a thread pool on a busy
    # machine waits for descheduled threads at every one of the n_iter steps
    with single_threaded_blas():
        _iterate(X, Xc, Y, W, margins, cols, is_sparse, allowed, radius, n_iter, noise_scale, rng)
    return W


def _iterate(X, Xc, Y, W, margins, cols, is_sparse, allowed, radius, n_iter, noise_scale, rng):
    for t in range(n_iter):
        R = -Y * expit(-Y * margins)  # d loss / d margin, zero outside each problem
        G = np.asarray(X.T @ R)
        j, sign = _select_vertices(G, allowed, radius, noise_scale, rng)
        mu = 2.0 / (t + 2.0)
        W *= 1.0 - mu
        W[j, cols] += mu * sign * radius
        step = Xc[:, j]
        step = step.toarray() if is_sparse else step
        margins *= 1.0 - mu
        margins += (mu * radius) * step * sign


def _check_design(X, y):
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be 2-D (n, d) and y of shape (n,), got {X.shape} and {y.shape}")
    if not np.all(np.isfinite(X)) or np.abs(X).max(initial=0.0) > 1.0:
        raise ValueError("features must be finite with |x| <= 1 (the gradient sensitivity relies on it); rescale X")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("labels y must be -1 or +1")
    return X, y


def frank_wolfe_logistic(
    X,
    y,
    radius: float,
    n_iter: int = 100,
    *,
    rho: float | None = None,
    random_state=None,
) -> np.ndarray:
    """l1-constrained logistic regression by (private) Frank-Wolfe.

    Parameters
    ----------
    X : array of shape (n, d)
        Features with ``|x| <= 1`` (include a column of ones for an intercept).
    y : array of shape (n,)
        Labels in ``{-1, +1}``.
    radius : float
        l1 radius of the feasible set ``||w||_1 <= radius``.
    n_iter : int
        Iterations ``T`` (each one publishes a selected vertex).
    rho : float, optional
        Total zCDP budget of the ``T`` selections; ``None`` runs the exact, non-private Frank-Wolfe
        (a baseline for experiments, not a private release).
    random_state : int or numpy.random.Generator, optional
        Seeded numpy Gumbel noise, for experiments only; by default OpenDP's exact noisy max.

    Returns
    -------
    numpy.ndarray of shape (d,)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.c_[rng.choice([-1.0, 1.0], size=(2000, 3)), np.ones(2000)]
    >>> y = np.where(rng.random(2000) < 1 / (1 + np.exp(-1.5 * X[:, 0])), 1.0, -1.0)
    >>> w = frank_wolfe_logistic(X, y, radius=2.0, n_iter=200)
    >>> int(np.argmax(np.abs(w))), bool(np.abs(w).sum() <= 2.0 + 1e-12)
    (0, True)
    """
    X, y = _check_design(X, y)
    radius = float(radius)
    if not (math.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be positive and finite, got {radius!r}")
    if not (isinstance(n_iter, numbers.Integral) and n_iter >= 1):
        raise ValueError(f"n_iter must be a positive integer, got {n_iter!r}")
    rng = check_random_state(random_state)
    noise_scale = None
    if rho is not None:
        noise_scale = frank_wolfe_noise_scale(check_rho(rho), radius, n_iter)
    return frank_wolfe_batch(X, y[:, None], radius, n_iter, noise_scale, rng=rng)[:, 0]


#: Constant of the iteration rule, fitted to the measured error minimum (see docs/structure.md).
ITERATION_CONSTANT = 0.35

#: Fewest and most iterations the rule returns.
MIN_ITERATIONS, MAX_ITERATIONS = 10, 2_000

#: Most Frank-Wolfe steps a structure fit takes over each row (its regressions times their
#: iterations; each step reads every row): default iterations are clipped to it, and a fit beyond it
#: even at ``MIN_ITERATIONS`` (or its given ``n_iter``) is refused before charging.
MAX_STEPS_PER_ROW = 1_000_000


def frank_wolfe_iterations(n_records: float, rho: float, radius: float, n_features: int) -> int:
    """Iterations ``T`` that balance Frank-Wolfe's optimisation error against its selection noise.

    ``T = ITERATION_CONSTANT (radius n sqrt(rho) / log(2 d))**(2/3)``, the growth of Zhang et al. (2020),
    clipped to ``[MIN_ITERATIONS, MAX_ITERATIONS]`` (derivation in docs/structure.md). ``rho`` is one
    regression's share, ``n_records`` declared or noisy, ``n_features`` the regression's ``d``.

    Examples
    --------
    >>> frank_wolfe_iterations(10_000, rho=0.1, radius=3.0, n_features=11)
    74
    >>> frank_wolfe_iterations(80_000, rho=0.1, radius=3.0, n_features=11)   # 8x the rows: 4x T
    296
    """
    n = max(float(n_records), 1.0)
    core = float(radius) * n * math.sqrt(float(rho)) / math.log(2.0 * max(int(n_features), 1))
    t = ITERATION_CONSTANT * core ** (2.0 / 3.0)
    return int(min(MAX_ITERATIONS, max(MIN_ITERATIONS, math.ceil(t))))
