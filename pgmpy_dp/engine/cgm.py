"""EM for collective graphical models (CGM-EM) on noisy marginal tables.

The true clique tables ``n`` are latent; the release observes ``y = n + noise`` with noise of a
known scale per table (Bernstein et al. 2017, section 3.2). EM alternates

* E-step, non-linear belief propagation (their Algorithm 1, `_NLBP`): the approximate posterior
  mode of ``n`` (their Problem 6), exact on a junction tree, a Bethe approximation with loopy BP.
* M-step (their Algorithm 2): the (L2-regularised) MLE of ``theta`` given ``n`` (`CgmEM.m_step_solution`).

Every measurement is evidence, weighted by its scale (Williams and McSherry 2010). The Laplace term is
smoothed to pseudo-Huber ``-(sqrt(r^2 + delta^2) - delta) / scale`` with ``r = y - n`` and
``delta = smoothing * scale``, so EM has a genuine fixed point; SQUAREM (`_Squarem`) accelerates it.

The objective recorded after every iteration is
``F(theta, n) = log p(y | n) - N KL(n / N || mu(theta)) - (lambda N / 2) ||theta||^2``
(``lambda`` per record) at the E-step's counts ``n``: EM with warm-started partial E- and
M-steps never decreases it, and neither does an accepted SQUAREM jump.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from .junction_tree import JunctionTree
from .mle import ConvergenceWarning, WarmMLE, clique_weights, tie_groups


NOISE_MODELS = ("laplace", "gaussian")


@dataclass(frozen=True, eq=False)
class Measurement:
    """One noisy table: counts ``values`` over ``attrs`` with noise of ``scale`` per cell.

    ``scale`` is the Laplace scale ``b`` (``noise="laplace"``) or the standard deviation ``sigma``.

    ``members`` makes it a pooled table: ``values`` then measure the SUM of the tables over
    each member (equal-length attribute tuples matched position by position, ``attrs`` first).

    Examples
    --------
    >>> m = Measurement(("x1", "x2"), np.zeros((2, 2)), 1.0, members=[("x1", "x2"), ("x2", "x3")])
    >>> m.members
    (('x1', 'x2'), ('x2', 'x3'))

    ``mask`` marks the cells the table observes (default: all); a masked cell adds nothing to
    the likelihood, its gradient or its curvature.

    >>> y = Measurement(("a",), np.array([5.0, 0.0]), 1.0, mask=np.array([True, False]))
    >>> ll, g, k = y.log_likelihood(np.array([5.0, 3.0]))  # cell 1's 3 records vs its released 0: unseen
    >>> abs(ll), g.tolist(), k.tolist()
    (0.0, [0.0, 0.0], [1.0, 0.0])
    """

    attrs: tuple[str, ...]
    values: np.ndarray
    scale: float
    noise: str = "laplace"
    members: tuple[tuple[str, ...], ...] | None = None
    mask: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "attrs", tuple(self.attrs))
        if self.members is not None:
            object.__setattr__(self, "members", _pooled_members(self.attrs, self.members))
        object.__setattr__(self, "values", np.asarray(self.values, dtype=np.float64))
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"measurement over {self.attrs} needs a positive finite noise scale, got {self.scale!r}")
        if self.noise not in NOISE_MODELS:
            raise ValueError(f"measurement over {self.attrs}: noise must be one of {NOISE_MODELS}, got {self.noise!r}")
        if self.mask is not None:
            object.__setattr__(self, "mask", _observed_cells(self.attrs, self.values.shape, self.mask))

    def log_likelihood(self, n: np.ndarray, smoothing: float = 1.0) -> tuple[float, np.ndarray, np.ndarray]:
        """Log-likelihood of the observed cells given counts ``n``, its gradient and curvature in ``n``."""
        # a masked cell is scored at a zero residual (no likelihood, no gradient) and zero curvature
        y = self.values if self.mask is None else np.where(self.mask, self.values, n)
        if self.noise == "gaussian":
            ll, g, k = gaussian_log_likelihood(y, n, self.scale)
        else:
            ll, g, k = laplace_log_likelihood(y, n, self.scale, smoothing)
        if self.mask is not None:
            k = np.where(self.mask, k, 0.0)
        return ll, g, k


def _pooled_members(attrs: tuple[str, ...], members) -> tuple[tuple[str, ...], ...]:
    """The members of a pooled table as tuples, checked: equal-length scopes, the first being ``attrs``."""
    out = tuple(tuple(a) for a in members)
    if not out or out[0] != attrs or any(len(a) != len(attrs) for a in out):
        raise ValueError(
            f"pooled measurement over {attrs}: members must be a non-empty list of attribute "
            f"tuples of length {len(attrs)}, the first equal to attrs, got {members!r}"
        )
    return out


def _observed_cells(attrs: tuple[str, ...], shape: tuple[int, ...], mask) -> np.ndarray | None:
    """A table's mask checked against its shape; None when it observes every cell."""
    mask = np.asarray(mask)
    if mask.dtype != np.bool_ or mask.shape != shape or not mask.any():
        raise ValueError(
            f"measurement over {attrs}: mask must be a boolean array of the table's shape "
            f"{shape} with at least one observed (True) cell, got dtype {mask.dtype}, shape {mask.shape}"
        )
    return None if mask.all() else mask


def laplace_log_likelihood(
    y: np.ndarray, n: np.ndarray, scale: float, smoothing: float = 1.0
) -> tuple[float, np.ndarray, np.ndarray]:
    """Smoothed Laplace log-likelihood of noisy counts ``y`` given counts ``n``, its gradient and curvature in ``n``.

    The pseudo-Huber form of the module docstring (constants dropped); the curvature (minus the
    second derivative, per cell) sizes the E-step's steps, taken at one noise scale for ``smoothing=0``.

    Examples
    --------
    >>> ll, g, k = laplace_log_likelihood(np.array([10.0, 0.0]), np.array([0.0, 0.0]), scale=1.0, smoothing=0)
    >>> ll, g.tolist()
    (-10.0, [1.0, 0.0])
    """
    r = np.asarray(y, dtype=np.float64) - n
    delta = (smoothing or 1.0) * scale
    s = np.sqrt(r * r + delta * delta)
    curvature = delta * delta / (scale * s**3)
    if smoothing == 0:
        return -float(np.abs(r).sum()) / scale, np.sign(r) / scale, curvature
    return -float(np.sum(s - delta)) / scale, r / (s * scale), curvature


def gaussian_log_likelihood(y: np.ndarray, n: np.ndarray, sigma: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Gaussian log-likelihood of noisy counts ``y`` given counts ``n`` (std ``sigma``), its gradient and curvature.

    ``sum -(y - n)^2 / (2 sigma^2)`` (constants dropped); the curvature is ``1 / sigma^2`` per cell.

    Examples
    --------
    >>> ll, g, k = gaussian_log_likelihood(np.array([2.0, 0.0]), np.zeros(2), sigma=1.0)
    >>> ll, g.tolist(), k.tolist()
    (-2.0, [2.0, 0.0], [1.0, 1.0])
    """
    r = np.asarray(y, dtype=np.float64) - n
    inv = 1.0 / (sigma * sigma)
    return -0.5 * inv * float(np.sum(r * r)), r * inv, np.full(r.shape, inv)


#: M-step L-BFGS iterations when the noise dominates every table, and otherwise (see m_step_length).
SHORT_M_STEP, LONG_M_STEP = 5, 20
#: Largest typical cell count (records over cells, any table) for short M-steps: measured, not derived.
SHORT_M_STEP_MAX_COUNT = 3000.0


def m_step_length(measurements: Sequence[Measurement], n_records: float, smoothing: float = 1.0) -> int:
    """L-BFGS iterations per M-step: short when the noise, not the records, decides every table's counts.

    ``SHORT_M_STEP`` while every table's typical cell (``N`` over its observed cells) has
    stiffness ``n k`` below 1 (``k``: the log-likelihood's curvature at a zero residual) and at
    most ``SHORT_M_STEP_MAX_COUNT`` records, else ``LONG_M_STEP``.

    Examples
    --------
    >>> y = Measurement(("a", "b"), np.zeros((10, 10)), scale=240.0)  # chain3, epsilon = 0.1
    >>> m_step_length([y], n_records=1e4), m_step_length([y], n_records=1e5), m_step_length([y], n_records=1e6)
    (5, 5, 20)
    """
    for m in measurements:
        curvature = float(np.max(m.log_likelihood(m.values, smoothing)[2]))  # at a zero residual
        typical = n_records / (m.values.size if m.mask is None else int(m.mask.sum()))
        if typical * curvature >= 1.0 or typical > SHORT_M_STEP_MAX_COUNT:
            return LONG_M_STEP
    return SHORT_M_STEP


@dataclass
class CGMResult:
    """Outcome of [`cgm_em`][pgmpy_dp.engine.cgm.cgm_em]."""

    log_potentials: list[np.ndarray]
    counts: list[np.ndarray]
    n_iter: int
    converged: bool
    tolerance: float
    log_likelihood: list[float] = field(default_factory=list)  # the EM objective F per iteration
    # per accelerated step: SQUAREM's step length (1 = two EM steps, 0 = one)
    steps: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class _EMStep:
    theta: list  # M(E(theta)): the next parameters
    state: tuple  # the E-step's (phi, mu(phi), log Z(phi)), to warm-start the next E-step
    value: float  # F(theta, n*) after the E-step: the approximate log marginal likelihood minus penalty


class _FlatTables:
    """Every table's predicted counts and likelihood terms at once, as sparse products over flat arrays.

    ``A`` is the 0/1 map from the clique marginals (flat, clique after clique) to the table cells
    (flat, C order, table after table; a pooled table sums its members), so the predicted counts are
    ``N A mu`` and ``A^T`` carries table-shaped quantities back onto the cliques. The same arithmetic
    as a loop of ``Measurement.log_likelihood`` over the tables (tested), without per-table calls.
    """

    def __init__(self, measurements, hosts, cliques, domain, smoothing: float, n_records: float):
        self.shapes, self.n = [domain.shape(c) for c in cliques], float(n_records)
        self.clique_bounds = np.cumsum([0] + [math.prod(sh) for sh in self.shapes])
        self.table_bounds = np.cumsum([0] + [m.values.size for m in measurements])
        self.table_shapes = [m.values.shape for m in measurements]
        self._incidence(measurements, hosts, cliques)
        self.y = np.concatenate([m.values.ravel() for m in measurements])
        # counts are integers: a noisy count below one record means "about none", half a record
        self.log_y = np.log(np.maximum(self.y, 0.5))
        self.observed = None
        if any(m.mask is not None for m in measurements):
            self.observed = np.concatenate([
                np.ones(m.values.size, dtype=bool) if m.mask is None else m.mask.ravel() for m in measurements
            ])
        self._noise(measurements, smoothing)

    def _incidence(self, measurements, hosts, cliques) -> None:
        """``A`` and ``A^T``, each table cell's share of its pooled table, and the tables seeing each clique cell."""
        bounds, sizes = self.table_bounds, np.diff(self.clique_bounds)
        rows, cols, share, n_meas = [], [], [], np.zeros(len(cliques))
        for i, (m, parts) in enumerate(zip(measurements, hosts)):
            share.append(np.full(m.values.size, 1.0 / len(parts)))
            for attrs, h in parts:
                c = cliques[h]
                coords = np.indices(self.shapes[h]).reshape(len(c), -1)  # each clique cell's coordinate per axis
                rows.append(bounds[i] + np.ravel_multi_index(tuple(coords[c.index(a)] for a in attrs), m.values.shape))
                cols.append(self.clique_bounds[h] + np.arange(sizes[h]))
                n_meas[h] += 1
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        # duplicates (two members of one pooled table projecting a clique cell onto one table cell) add up
        self.A = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(bounds[-1], self.clique_bounds[-1]))
        self.At = self.A.T.tocsr()
        self.share = np.concatenate(share)
        self.n_meas = np.repeat(np.maximum(n_meas, 1.0), sizes)  # cliques without a table: their zeros stay

    def _noise(self, measurements, smoothing: float) -> None:
        """Per noise model, the cells it scores (a slice when every table has it) and its per-cell constants."""
        sizes = [m.values.size for m in measurements]
        scale = np.repeat([m.scale for m in measurements], sizes)
        laplace = np.repeat([m.noise == "laplace" for m in measurements], sizes)
        self.laplace, self.gaussian = _cells(laplace), _cells(~laplace)
        self.smoothing = smoothing
        if self.laplace is not None:
            b = scale[self.laplace]
            self.inv_b = 1.0 / b
            self.delta = (smoothing or 1.0) * b
            self.delta2 = self.delta * self.delta
            self.curv_num = self.delta2 * self.inv_b  # curvature = delta^2 / (b s^3)
        if self.gaussian is not None:
            sigma = scale[self.gaussian]
            self.inv_var = 1.0 / (sigma * sigma)

    def flat(self, mu: list[np.ndarray]) -> np.ndarray:
        return np.concatenate([np.ravel(x) for x in mu])

    def predicted(self, mu: list[np.ndarray]) -> np.ndarray:
        """The tables' predicted counts ``N A mu``, flat (every table's cells, one table after the other)."""
        return self.n * (self.A @ self.flat(mu))

    def counts(self, mu: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The tables' predicted counts (flat) and their residuals from the data (0 where unobserved)."""
        n = self.predicted(mu)
        r = self.y - n
        if self.observed is not None:
            r = np.where(self.observed, r, 0.0)
        return n, r

    def value(self, mu: list[np.ndarray]) -> float:
        """The log-likelihood of every table at the counts ``N mu``."""
        return self._log_likelihood(self.counts(mu)[1])[0]

    def _log_likelihood(self, r: np.ndarray) -> tuple[float, np.ndarray | None, np.ndarray | None]:
        """The log-likelihood at residuals ``r``; the Laplace cells' residuals and ``sqrt(r^2 + delta^2)``."""
        total, rl, sq = 0.0, None, None
        if self.laplace is not None:
            rl = r[self.laplace]
            sq = np.sqrt(rl * rl + self.delta2)
            total -= float(np.dot(np.abs(rl) if self.smoothing == 0 else sq - self.delta, self.inv_b))
        if self.gaussian is not None:
            rg = r[self.gaussian]
            total -= 0.5 * float(np.dot(rg * rg, self.inv_var))
        return total, rl, sq

    def directions(self, mu: list[np.ndarray]):
        """The log-likelihood and, per clique, its gradient in the counts, the stiffness (count times curvature,
        pooled members sharing it) and the mean log-ratio of data to counts (the E-step's three directions)."""
        n, r = self.counts(mu)
        total, rl, sq = self._log_likelihood(r)
        g, k = np.empty_like(r), np.empty_like(r)
        if self.laplace is not None:
            g[self.laplace] = np.sign(rl) * self.inv_b if self.smoothing == 0 else rl * self.inv_b / sq
            k[self.laplace] = self.curv_num / (sq * sq * sq)
        if self.gaussian is not None:
            g[self.gaussian] = r[self.gaussian] * self.inv_var
            k[self.gaussian] = self.inv_var
        ratio = self.log_y - np.log(np.maximum(n, 1e-300))
        if self.observed is not None:
            k = np.where(self.observed, k, 0.0)
            ratio = np.where(self.observed, ratio, 0.0)  # no data to move an unobserved cell toward
        grad = self.At @ g
        stiff = self.At @ (self.share * k * np.maximum(n, 0.0))
        toward = (self.At @ ratio) / self.n_meas
        return total, self.split(grad), self.split(stiff), self.split(toward)

    def tables(self, mu: list[np.ndarray]) -> list[np.ndarray]:
        """The tables' predicted counts, one array per measurement (a pooled table: its members' sum)."""
        n = self.predicted(mu)
        b = self.table_bounds
        return [n[b[i]:b[i + 1]].reshape(sh) for i, sh in enumerate(self.table_shapes)]

    def split(self, x: np.ndarray) -> list[np.ndarray]:
        b = self.clique_bounds
        return [x[b[i]:b[i + 1]].reshape(sh) for i, sh in enumerate(self.shapes)]


def _cells(selected: np.ndarray):
    """Indices of the selected cells: a slice (no copies) when all are, None when none is."""
    if selected.all():
        return slice(None)
    return np.flatnonzero(selected) if selected.any() else None


def _host_cliques(cliques, measurements) -> list[list[tuple[tuple[str, ...], int]]]:
    """Per measurement, each member's attributes and the smallest clique holding them (one member if not pooled)."""
    hosts = []
    for m in measurements:
        parts = []
        for attrs in m.members or (m.attrs,):
            cands = [i for i, c in enumerate(cliques) if set(attrs) <= set(c)]
            if not cands:
                raise ValueError(
                    f"measurement over {attrs} is not contained in any model clique {cliques}; "
                    "drop it or add a clique that contains it"
                )
            parts.append((attrs, min(cands, key=lambda i: len(cliques[i]))))
        hosts.append(parts)
    return hosts


@dataclass(frozen=True)
class CgmOptions:
    """The tuning knobs of CGM-EM; the model, the data and the prior are [`CgmEM`][pgmpy_dp.engine.cgm.CgmEM]'s.

    Attributes
    ----------
    max_iter : int
        Largest number of EM iterations, counted as EM maps (E-step plus M-step).
    tol : float
        Stop when the relative change of the EM objective ``F`` (module docstring) falls below it.
    damping : float
        ``alpha`` in ``(0, 1]``: the largest NLBP step length tried (the line search only shortens it).
    nlbp_iter : int
        Largest number of NLBP sweeps per E-step.
    e_tol : float
        The E-step stops when no natural parameter moves by more than this.
    smoothing : float
        Pseudo-Huber width in noise scales (see the module docstring).
    accelerate : bool
        ``True``: SQUAREM extrapolation of the EM map (`_Squarem`; same fixed points); ``False``: plain EM.
    m_step_iter, m_tol : int or None, float
        L-BFGS iterations and gradient tolerance per M-step (one [`WarmMLE`][pgmpy_dp.engine.mle.WarmMLE]
        for all); ``None`` picks the length from the noise ([`m_step_length`][pgmpy_dp.engine.cgm.m_step_length]).
    count_tol : float
        Also stop when no inferred count moved by more than ``count_tol`` noise scales in the last
        iteration; ``0`` turns this rule off.
    warn : bool
        Emit a [`ConvergenceWarning`][pgmpy_dp.engine.mle.ConvergenceWarning] with the achieved tolerance when ``max_iter`` is reached.

    Examples
    --------
    >>> CgmOptions(max_iter=50).accelerate
    True
    >>> CgmOptions(damping=1.5)
    Traceback (most recent call last):
    ...
    ValueError: damping must be in (0, 1], got 1.5
    """

    max_iter: int = 200
    tol: float = 1e-6
    damping: float = 1.0
    nlbp_iter: int = 10
    e_tol: float = 1e-4
    smoothing: float = 1.0
    accelerate: bool = True
    m_step_iter: int | None = None
    m_tol: float = 1e-8
    count_tol: float = 1e-3
    warn: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.accelerate, (bool, np.bool_)):
            raise TypeError(f"accelerate must be True (SQUAREM) or False (plain EM), got {self.accelerate!r}")
        if not 0 < self.damping <= 1:
            raise ValueError(f"damping must be in (0, 1], got {self.damping!r}")


def _dot(a, b) -> float:
    return sum(float(np.vdot(x, y)) for x, y in zip(a, b))


class _NLBP:
    """The E-step: non-linear belief propagation (Algorithm 1) with a line search per direction.

    Instead of the paper's fixed damping, each sweep tries three directions for phi: the plain NLBP
    one, the same divided by 1 + stiffness (a cell's Newton step), and the log-ratio of data to counts
    (IPF). Each gets a backtracking line search on Problem (6); the last successful one goes first.
    """

    def __init__(self, inference, tables: _FlatTables, n_records: float, options: CgmOptions) -> None:
        self.inference, self.tables, self.n, self.options = inference, tables, n_records, options
        self.step_memory = dict.fromkeys(("newton", "plain", "data"), options.damping)
        self.order = ["newton", "plain", "data"]  # most recently successful direction first

    def objective(self, theta, phi, mu_phi, lz_phi) -> float:
        """theta.n + H(n) + log p(y | n) at n = N mu(phi), using H(n) = N (A(phi) - phi.mu)."""
        return self.n * (_dot(theta, mu_phi) - _dot(phi, mu_phi) + lz_phi) + self.tables.value(mu_phi)

    def run(self, theta, start) -> tuple:
        """The improved (phi, mu(phi), log Z(phi)) for the model theta, from the best of the ``start`` triples."""
        scored = [(self.objective(theta, *s_), s_) for s_ in start]
        obj, (phi, mu_phi, lz_phi) = max(scored, key=lambda x: x[0])
        for _ in range(self.options.nlbp_iter):
            best = self._sweep(theta, obj, phi, mu_phi)
            if best is None:  # no improving step: the E-step has converged
                break
            obj, phi, mu_phi, lz_phi, moved = best
            if moved < self.options.e_tol:
                break
        return phi, mu_phi, lz_phi

    def _sweep(self, theta, obj, phi, mu_phi):
        """The first direction (last successful first) whose line search improves, or None."""
        _, g, st, toward = self.tables.directions(mu_phi)
        plain = [th + gr - ph for th, gr, ph in zip(theta, g, phi)]
        for key in list(self.order):
            if key == "newton":  # made only when tried (the first improving direction ends the sweep)
                direction = [d / (1.0 + k) for d, k in zip(plain, st)]
            else:
                direction = plain if key == "plain" else toward
            best = self._line_search(key, theta, obj, phi, direction)
            if best is not None:
                self.order.remove(key)
                self.order.insert(0, key)
                return best
        return None

    def _line_search(self, key: str, theta, obj: float, phi, direction):
        """Backtracking from twice the direction's last accepted step: (objective, phi, mu, log Z, move) or None."""
        eta = min(self.options.damping, 2.0 * self.step_memory[key])
        while eta >= 1e-6:
            cand = [ph + eta * d for ph, d in zip(phi, direction)]
            mu_c, lz_c = self.inference.marginals(cand)
            obj_c = self.objective(theta, cand, mu_c, lz_c)
            if obj_c > obj:
                self.step_memory[key] = eta
                return obj_c, cand, mu_c, lz_c, eta * max(float(np.max(np.abs(d))) for d in direction)
            eta *= 0.25
        return None


class _Squarem:
    """SQUAREM (Varadhan and Roland 2008, scheme S3) over an EM map.

    Jump to ``theta + 2 a r + a^2 v`` (``r``, ``v``: the first and second differences of two EM
    steps; ``a = |r| / |v|`` capped at ``step_max``, which grows 4x when the cap is accepted); keep
    the jump if the objective did not fall, else halve ``a`` towards 1, the double EM step.
    """

    def __init__(self, combine: Callable) -> None:
        self.combine, self.step_max = combine, 1.0

    def length(self, r, v) -> float:
        rr, vv = _dot(r, r), _dot(v, v)
        return min(self.step_max, max(1.0, math.sqrt(rr / vv))) if vv > 0 else 1.0

    def step(self, em_map, theta, here: _EMStep, one: _EMStep, budget: int):
        """From ``here = M(theta)`` and ``one = M(here.theta)``: the point, its EM step, ``a`` and the EM maps used.

        When ``budget`` EM maps are spent before a jump is accepted, the plain step ``one`` is kept (``a = 0``).
        """
        theta1, theta2 = here.theta, one.theta
        r = self.combine([1.0, -1.0], [theta1, theta])
        v = self.combine([1.0, -2.0, 1.0], [theta2, theta1, theta])
        alpha, used = self.length(r, v), 0
        while True:
            cand = theta2 if alpha == 1.0 else self.combine([1.0, 2.0 * alpha, alpha * alpha], [theta, r, v])
            nxt = em_map(cand, one.state)
            used += 1
            if alpha == 1.0 or (math.isfinite(nxt.value) and nxt.value >= here.value):
                break
            if used >= budget:  # out of iterations: keep the plain EM step
                cand, nxt, alpha = theta1, one, 0.0
                break
            alpha = max(1.0, (alpha + 1.0) / 2.0)
        if alpha == self.step_max:
            self.step_max *= 4.0
        return cand, nxt, alpha, used


class _Stopping:
    """The stopping rule: the objective's relative change below ``tol``, or no count moved ``count_tol`` scales."""

    def __init__(self, options: CgmOptions, scales: list[float], counts: list[np.ndarray], value: float) -> None:
        self.tol, self.count_tol, self.scales = options.tol, options.count_tol, scales
        self.counts, self.trace, self.change, self.converged = counts, [value], np.inf, False

    def update(self, value: float, counts: list[np.ndarray]) -> bool:
        """Record one iteration's objective and table counts; True when the fit has converged."""
        self.change = abs(value - self.trace[-1]) / max(1.0, abs(self.trace[-1]))
        self.trace.append(value)
        moved = max(float(np.max(np.abs(a - b))) / s for a, b, s in zip(counts, self.counts, self.scales))
        self.counts = counts
        self.converged = self.change < self.tol or moved < self.count_tol
        return self.converged


def _checked_records(measurements: Sequence[Measurement], n_records: float, domain) -> float:
    """``N`` as a float, after checking it and that every measured table has its scope's shape."""
    N = float(n_records)
    if not (math.isfinite(N) and N > 0):
        raise ValueError(f"n_records must be positive and finite, got {n_records!r}")
    if len(measurements) == 0:
        raise ValueError("CGM-EM needs at least one measurement")
    for m in measurements:
        for attrs in m.members or (m.attrs,):
            if m.values.shape != domain.shape(attrs):
                raise ValueError(f"measurement over {attrs} has shape {m.values.shape}, expected {domain.shape(attrs)}")
    return N


class CgmEM:
    """EM with non-linear belief propagation fitting log-potentials to noisy marginal tables.

    `fit` iterates the EM map `em_map` under SQUAREM until `_Stopping` holds;
    [`cgm_em`][pgmpy_dp.engine.cgm.cgm_em] is the one-call form.

    Parameters
    ----------
    inference : JunctionTree or LoopyBP
        Engine for the model's cliques (exact or approximate E-step).
    measurements : sequence of Measurement
        Noisy tables; each must lie inside some model clique.
    n_records : float
        Number of records ``N`` the inferred counts sum to.
    regularization : float or sequence of float
        ``lambda`` of the per-record L2 penalty in the M-step, or one per clique (tied cliques share theirs).
    tied : list of list of int, optional
        Groups of clique indices sharing one potential.
    options : CgmOptions, optional
        The tuning knobs (default: ``CgmOptions()``).
    m_step : object, optional
        A closed-form M-step (then ``regularization`` must be 0): ``m_step.step(mu)`` maps the E-step's
        marginals to the maximiser of ``N <theta, mu> - N log Z(theta) + m_step.log_prior(theta)``
        (e.g. [`DirichletCPDStep`][pgmpy_dp.estimators.likelihood.DirichletCPDStep]).
    callback : callable, optional
        Called as ``callback(iteration, log_likelihood, change)`` after every iteration.

    Examples
    --------
    >>> from pgmpy_dp.privacy.domain import Domain
    >>> from pgmpy_dp.engine import JunctionTree
    >>> jt = JunctionTree(Domain({"a": [0, 1], "b": [0, 1]}), [("a", "b")])
    >>> y = Measurement(("a", "b"), np.array([[600.0, 100.0], [100.0, 200.0]]), scale=1.0)
    >>> em = CgmEM(jt, [y], n_records=1000, options=CgmOptions(max_iter=500))
    >>> fit = em.fit()
    >>> fit.converged, np.round(fit.counts[0]).tolist(), em.fit().log_likelihood == fit.log_likelihood
    (True, [[600.0, 100.0], [100.0, 200.0]], True)
    """

    def __init__(self, inference, measurements: Sequence[Measurement], n_records: float, regularization: float = 0.0,
                 tied: Sequence[Sequence[int]] | None = None, options: CgmOptions | None = None, m_step=None,
                 callback: Callable[[int, float, float], None] | None = None) -> None:
        self.options = CgmOptions() if options is None else options
        self.inference, self.measurements, self.tied = inference, measurements, tied
        self.n = _checked_records(measurements, n_records, inference.domain)
        hosts = _host_cliques(inference.cliques, measurements)
        self.groups = tie_groups(inference.cliques, tied, inference.domain)
        self.lam = clique_weights(regularization, self.groups)  # a float, or one weight per clique
        if m_step is not None and (any(np.atleast_1d(self.lam)) or tied is not None):
            raise ValueError("a closed-form m_step carries its own prior: pass regularization=0 and no tied cliques")
        # per parameter group: the weight of its first clique (a tuple keeps the float code path untouched)
        self.group_lam = None if isinstance(self.lam, float) else [self.lam[g[0]] for g in self.groups]
        self.m_step_iter = self.options.m_step_iter
        if self.m_step_iter is None:
            self.m_step_iter = m_step_length(measurements, self.n, self.options.smoothing)
        # the tables' likelihood and the E-step's directions over flat arrays (sparse products; no per-table loop)
        self.tables = _FlatTables(measurements, hosts, inference.cliques, inference.domain, self.options.smoothing, self.n)
        self.m_step, self.callback = m_step, callback
        # only for the junction tree: a skipped loopy BP call would change where the next one starts
        self._stateless = isinstance(inference, JunctionTree)

    def _begin(self) -> None:
        """Fresh state for one fit: E-step step lengths, the M-step's L-BFGS and penalty correction."""
        self.e_step = _NLBP(self.inference, self.tables, self.n, self.options)
        self._solver = WarmMLE(self.inference, self.lam, self.tied) if self.m_step is None else None
        self._offset = None  # last M-step solution minus its starting point phi
        # the latest M-step solution (the very list em_map returned) and its marginals: saves a calibration
        self._known: tuple = (None, None)

    def penalty(self, theta, n: float = 1.0) -> float:
        """``(lambda n / 2) ||theta||^2`` over the parameter groups (per-clique weights: each its own)."""
        if self.group_lam is not None:
            return 0.5 * n * sum(w * float(np.sum(theta[g[0]] ** 2)) for w, g in zip(self.group_lam, self.groups))
        return 0.5 * self.lam * n * sum(float(np.sum(theta[g[0]] ** 2)) for g in self.groups)

    def tie(self, theta: list[np.ndarray]) -> list[np.ndarray]:
        """Each tied group's cliques set to one shared array, their mean."""
        out: list[np.ndarray] = [None] * len(theta)  # type: ignore[list-item]
        for g in self.groups:
            block = np.mean([theta[i] for i in g], axis=0) if len(g) > 1 else theta[g[0]]
            for i in g:
                out[i] = block
        return out

    def combine(self, coefs, thetas) -> list[np.ndarray]:
        """The tied linear combination ``sum_k coefs[k] thetas[k]``, clique by clique."""
        return self.tie([sum(c * th[i] for c, th in zip(coefs, thetas)) for i in range(len(self.inference.cliques))])

    def em_map(self, theta, state) -> _EMStep:
        """One EM iteration from theta, the E-step warm-started at ``state`` (phi, mu, log Z) if given."""
        if theta is self._known[0]:  # the last M-step's solution, calibrated by the M-step's solver
            mu, log_z = self._known[1]
        else:
            mu, log_z = self.inference.marginals(theta)
        starts = [(theta, mu, log_z)] + ([state] if state is not None else [])
        phi, mu_phi, lz_phi = state = self.e_step.run(theta, starts)
        entropy = self.n * (lz_phi - _dot(phi, mu_phi))
        fit = self.n * (_dot(theta, mu_phi) - log_z) + entropy + self.tables.value(mu_phi)
        if self.m_step is not None:  # the exact M-step in closed form, under its own prior
            value = fit + self.m_step.log_prior(theta)
            return _EMStep(self.m_step.step(mu_phi), state, value)
        value = fit - self.penalty(theta, self.n)
        if not any(np.atleast_1d(self.lam)) and self.tied is None:
            return _EMStep(phi, state, value)  # phi is exactly the MLE of the counts N mu(phi): KL = 0
        return _EMStep(self.m_step_solution(theta, log_z, phi, mu_phi), state, value)

    def m_step_solution(self, theta, log_z: float, phi, mu_phi) -> list[np.ndarray]:
        """The penalised MLE of the E-step's counts by a partial L-BFGS (never worse than theta).

        The M-step is badly conditioned, and the penalty's correction (phi to M-step solution)
        changes little between EM iterations: start from phi plus the last correction.
        """
        start = phi if self._offset is None else [p + o for p, o in zip(phi, self._offset)]
        # one L-BFGS for all M-steps: its curvature pairs do not depend on the targets (WarmMLE)
        targets = list(mu_phi)
        fit = self._solver.solve(targets, start, max_iter=self.m_step_iter, tol=self.options.m_tol)
        # the M-step objective at the current theta: a partial M-step must not be worse (GEM)
        current = -_dot(theta, targets) + log_z + self.penalty(theta)
        theta_m = fit.log_potentials if fit.objective <= current else theta
        if self._stateless and theta_m is fit.log_potentials and self._solver.final_marginals is not None:
            self._known = (theta_m, self._solver.final_marginals)
        self._offset = [a - b for a, b in zip(theta_m, phi)]
        return theta_m

    def fit(self, init: Sequence[np.ndarray] | None = None, stacklevel: int = 1) -> CGMResult:
        """Run EM from ``init`` (default: all zero, the uniform model); ``stacklevel`` places the warning."""
        o = self.options
        self._begin()
        theta = self._start(init)
        here = self.em_map(theta, None)
        stop = _Stopping(o, [m.scale for m in self.measurements], self.tables.tables(here.state[1]), here.value)
        squarem, t, steps = _Squarem(self.combine), 1, []
        while t < o.max_iter:
            one = self.em_map(here.theta, here.state)
            t += 1
            if not o.accelerate or t >= o.max_iter:
                theta, here, alpha = here.theta, one, 0.0
            else:  # per accelerated step: SQUAREM's step length (1 = two EM steps, 0 = one)
                theta, here, alpha, used = squarem.step(self.em_map, theta, here, one, o.max_iter - t)
                t += used
            steps.append(alpha)
            done = stop.update(here.value, self.tables.tables(here.state[1]))
            if self.callback is not None:
                self.callback(t, here.value, stop.change)
            if done:
                break
        return self._result(here, t, stop, steps, stacklevel + 1)

    def _start(self, init) -> list[np.ndarray]:
        if init is None:
            return [np.zeros(self.inference.domain.shape(c)) for c in self.inference.cliques]
        return self.tie([np.array(t, dtype=np.float64) for t in init])

    def _result(self, here: _EMStep, t: int, stop: _Stopping, steps: list[float], stacklevel: int) -> CGMResult:
        """The fit's outcome; the warning when it stopped unconverged points ``stacklevel`` frames up."""
        mu = self._known[1][0] if here.theta is self._known[0] else self.inference.marginals(here.theta)[0]
        if self.options.warn and not stop.converged:
            warnings.warn(
                f"CGM-EM stopped after {t} iterations with relative change {stop.change:.2e} of the log marginal "
                f"likelihood > tol={self.options.tol:g}; raise max_iter or tol",
                ConvergenceWarning,
                stacklevel=stacklevel + 1,
            )
        return CGMResult(here.theta, self.tables.tables(mu), t, stop.converged, float(stop.change), stop.trace, steps)

def cgm_em(
    inference, measurements: Sequence[Measurement], n_records: float, regularization: float = 0.0,
    tied: Sequence[Sequence[int]] | None = None, init: Sequence[np.ndarray] | None = None, max_iter: int = 200,
    tol: float = 1e-6, damping: float = 1.0, nlbp_iter: int = 10, e_tol: float = 1e-4, smoothing: float = 1.0,
    accelerate: bool = True, m_step_iter: int | None = None, m_tol: float = 1e-8, count_tol: float = 1e-3,
    callback: Callable[[int, float, float], None] | None = None, warn: bool = True, m_step=None,
) -> CGMResult:
    """Fit log-potentials to noisy marginal tables by EM with non-linear belief propagation.

    ``CgmEM(...).fit(init)`` in one call: the parameters are those of [`CgmEM`][pgmpy_dp.engine.cgm.CgmEM]
    and the fields of [`CgmOptions`][pgmpy_dp.engine.cgm.CgmOptions]; ``init`` is the starting
    log-potentials (default: all zero).

    Returns
    -------
    CGMResult

    Examples
    --------
    >>> from pgmpy_dp.privacy.domain import Domain
    >>> from pgmpy_dp.engine import JunctionTree
    >>> jt = JunctionTree(Domain({"a": [0, 1], "b": [0, 1]}), [("a", "b")])
    >>> y = Measurement(("a", "b"), np.array([[600.0, 100.0], [100.0, 200.0]]), scale=1.0)
    >>> fit = cgm_em(jt, [y], n_records=1000, max_iter=500)
    >>> fit.converged, np.round(fit.counts[0]).tolist()
    (True, [[600.0, 100.0], [100.0, 200.0]])
    """
    options = CgmOptions(max_iter, tol, damping, nlbp_iter, e_tol, smoothing, accelerate, m_step_iter, m_tol, count_tol, warn)
    return CgmEM(inference, measurements, n_records, regularization, tied, options, m_step, callback).fit(init, stacklevel=2)
