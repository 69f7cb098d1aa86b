"""The per-family likelihood fit: CPDs of networks too wide for an exact junction tree.

[`fit_families_locally`][pgmpy_dp.estimators.local.fit_families_locally] fits each family on its own
(docs/bayesian.md): its true counts ``n(x, u)`` are latent, observed by its noisy table and, as
Gaussian measurements of its marginals, by every other table that overlaps it; the model is
``q(x, u) = p(u) theta(x | u)`` under the exact fit's Dirichlet(``a``) prior. The best ``q`` for
given counts is in closed form (``p(u) = n(u) / N``, ``theta = (n + a) / (n(u) + K a)``), leaving
an objective of the counts alone, maximised by Newton steps in ``log n`` with a
reweighted-least-squares curvature. All families run at once over one flat array of cells.
The fit spends no budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ..engine import Measurement
from ..privacy.domain import Domain
from .likelihood import FamilyFit

#: Newton sweeps of the per-family fit by default (docs/bayesian.md), and the largest log-count change per sweep.
LOCAL_MAX_ITER, NEWTON_STEP = 20, 2.0


def _summed(m: Measurement, attrs) -> Measurement:
    """``m`` summed down to ``attrs`` (axes in that order), as a Gaussian measurement of the summed variance.

    A sum of many Laplace draws is nearly Gaussian; its variance is (cells summed) times the per-cell one.
    """
    extra = tuple(i for i, a in enumerate(m.attrs) if a not in attrs)
    summed = m.values.sum(axis=extra)
    kept = tuple(a for a in m.attrs if a in attrs)
    var = m.scale**2 * (2.0 if m.noise == "laplace" else 1.0) * (m.values.size // summed.size)
    return _transposed(Measurement(kept, summed, math.sqrt(var), noise="gaussian"), attrs)


def _evidence(families, measurements):
    """Per family, its cell-level measurements and the Gaussian measurements of its marginals.

    Cell level: the tables over exactly the family's attributes, then every table over more, summed
    down. Marginals: every other table over part of the family, summed down and pooled by inverse
    variance into one measurement per marginal.
    """
    by_attr: dict[str, list[int]] = {}
    for i, m in enumerate(measurements):
        if m.members is None:
            for a in m.attrs:
                by_attr.setdefault(a, []).append(i)
    cells, marginals = [], []
    for fam in families:
        near = [measurements[i] for i in sorted(set().union(*(by_attr.get(a, ()) for a in fam)))]
        exact = [_transposed(m, fam) for m in near if set(m.attrs) == set(fam)]
        wider = [_summed(m, fam) for m in near if set(fam) < set(m.attrs) and m.mask is None]
        if not exact and not wider:
            raise ValueError(
                f"family {tuple(fam)} lies inside no released table: the per-family fit needs a table over the node "
                "and its parents; release one, or fit a model whose families the releases cover"
            )
        cells.append(exact + wider)
        pooled: dict[tuple, list] = {}
        for m in near:
            part = tuple(a for a in fam if a in m.attrs)
            if len(part) < len(fam) and m.mask is None:
                pooled.setdefault(part, []).append(_summed(m, part))
        combined = []
        for part, ms in pooled.items():
            precision = sum(1.0 / m.scale**2 for m in ms)
            values = sum(m.values / m.scale**2 for m in ms) / precision
            combined.append(Measurement(part, values, 1.0 / math.sqrt(precision), noise="gaussian"))
        marginals.append(combined)
    return cells, marginals


def _precision(r, scale, laplace):
    """Per residual, the reweighted-least-squares precision of its noise term (see ``_FlatFamilies.gradient``)."""
    gauss = 1.0 / scale**2
    if not laplace.any():
        return gauss
    lap = 1.0 / (scale * np.sqrt(r * r + scale * scale))
    return lap if laplace.all() else np.where(laplace, lap, gauss)


def _transposed(m: Measurement, fam) -> Measurement:
    perm = [m.attrs.index(a) for a in fam]
    mask = None if m.mask is None else np.transpose(m.mask, perm)
    return Measurement(tuple(fam), np.transpose(m.values, perm), m.scale, noise=m.noise, mask=mask)


#: Most CPD cells, summed over the families, the per-family fit takes (about 30 float64 arrays of that length).
MAX_LOCAL_CELLS = 20_000_000

#: Families of at least this many cells sum their marginals by reshaping; smaller ones all together by ``bincount``.
RESHAPE_CELLS = 4096


class _FlatFamilies:
    """The cells of every family side by side (each family's table flattened with the node's axis first).

    ``col`` numbers every (family, parent configuration) column, ``fam`` every family; ``k`` is the
    node's state count of each cell. Each family's first table over exactly its attributes is its
    primary measurement, stored cell by cell; any further cell-level measurement maps each noisy
    value to its cell (``obs_cell``), so several tables over one family simply add their gradients.
    """

    def __init__(self, domain: Domain, families, per_family, per_marginal):
        sizes, cols, ks = [], [], []
        for fam in families:
            k = domain.size(fam[0])
            size = domain.cells(fam)
            sizes.append(size)
            cols.append(size // k)
            ks.append(k)
        self.sizes = sizes
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        col_offsets = np.concatenate([[0], np.cumsum(cols)]).astype(np.intp)
        self.n_cells, self.n_cols = int(self.offsets[-1]), int(col_offsets[-1])
        # within a (k, columns) table in row-major order, cell i lies in column i % columns
        self.col = np.concatenate(
            [c0 + np.arange(s, dtype=np.intp) % c for c0, s, c in zip(col_offsets[:-1], sizes, cols)]
        )
        self.fam = np.repeat(np.arange(len(families), dtype=np.intp), sizes)
        self.k = np.repeat(np.asarray(ks, dtype=np.float64), sizes)
        # primary measurements: y, scale and noise per cell (scale inf: no primary, no likelihood)
        self.y, self.scale = np.zeros(self.n_cells), np.full(self.n_cells, np.inf)
        self.laplace = np.zeros(self.n_cells, bool)
        obs_cell, obs_y, obs_scale, laplace = [], [], [], []
        for off, size, ms in zip(self.offsets[:-1], sizes, per_family):
            rest = ms
            if ms[0].mask is None:
                first, rest = ms[0], ms[1:]
                self.y[off:off + size] = first.values.ravel()
                self.scale[off:off + size] = first.scale
                self.laplace[off:off + size] = first.noise == "laplace"
            for m in rest:
                cells = off + np.arange(m.values.size, dtype=np.intp)
                keep = np.ones(m.values.size, bool) if m.mask is None else m.mask.ravel()
                obs_cell.append(cells[keep])
                obs_y.append(m.values.ravel()[keep])
                obs_scale.append(np.full(int(keep.sum()), m.scale))
                laplace.append(np.full(int(keep.sum()), m.noise == "laplace"))
        join = (lambda xs, dtype=np.float64: np.concatenate(xs) if xs else np.zeros(0, dtype))  # noqa: E731
        self.obs_cell, self.obs_y, self.obs_scale = join(obs_cell, np.intp), join(obs_y), join(obs_scale)
        self.obs_laplace = join(laplace, bool)
        # Gaussian measurements of marginals: summed by reshaping in large families, by bincount in small ones
        self.reshaped = []
        cells_at, groups, ys, precision, summed = [], [], [], [], []
        n_groups = 0
        for off, size, fam, ms, own in zip(self.offsets[:-1], sizes, families, per_marginal, per_family):
            shape = domain.shape(fam)
            # a marginal's precision is capped where (cells summed) times it reaches the family's per-cell one
            cell_precision = max(1.0 / (m.scale**2 * (2.0 if m.noise == "laplace" else 1.0)) for m in own)
            for m in ms:
                axes = [fam.index(a) for a in m.attrs]
                summed_cells = size // m.values.size
                m_precision = min(1.0 / m.scale**2, cell_precision / summed_cells)
                if size >= RESHAPE_CELLS:
                    kept = [domain.size(a) if a in m.attrs else 1 for a in fam]
                    other = tuple(i for i in range(len(fam)) if i not in axes)
                    self.reshaped.append((off, size, shape, other, m.values.reshape(kept), m_precision, summed_cells))
                    continue
                group = np.ravel_multi_index(tuple(np.indices(shape)[axes]), m.values.shape).ravel()
                cells_at.append(off + np.arange(size, dtype=np.intp))
                groups.append(n_groups + group)
                ys.append(m.values.ravel())
                precision.append(np.full(m.values.size, m_precision))
                summed.append(np.full(m.values.size, summed_cells, dtype=np.float64))
                n_groups += m.values.size
        self.n_groups = n_groups
        self.m_cell, self.m_group = join(cells_at, np.intp), join(groups, np.intp)
        self.m_y, self.m_precision, self.m_summed = join(ys), join(precision), join(summed)

    def per_col(self, x):
        return np.bincount(self.col, weights=x, minlength=self.n_cols)

    def per_fam(self, x):
        return np.add.reduceat(x, self.offsets[:-1])

    def gradient(self, n):
        """Gradient of the log-likelihood of every measurement in the counts ``n``, and a curvature that bounds it.

        The curvature is ``1 / (b s)`` for the smoothed Laplace term (a majoriser: its own vanishes in the
        tails), ``1 / sigma^2`` for Gaussian noise, and ``2 p T / (n_i + T / m)`` for a marginal's term
        over ``m`` cells summing to ``T`` (docs/decisions.md).
        """
        r = self.y - n
        inv = _precision(r, self.scale, self.laplace)
        g = r * inv
        if self.obs_cell.size:
            r = self.obs_y - n[self.obs_cell]
            w = _precision(r, self.obs_scale, self.obs_laplace)
            g = g + np.bincount(self.obs_cell, weights=r * w, minlength=self.n_cells)
            inv = inv + np.bincount(self.obs_cell, weights=w, minlength=self.n_cells)
        if self.m_cell.size:
            totals = np.bincount(self.m_group, weights=n[self.m_cell], minlength=self.n_groups)
            term = ((self.m_y - totals) * self.m_precision)[self.m_group]
            g = g + np.bincount(self.m_cell, weights=term, minlength=self.n_cells)
            mean = (totals / self.m_summed)[self.m_group]
            bound = (2.0 * self.m_precision * totals)[self.m_group] / (n[self.m_cell] + mean)
            inv = inv + np.bincount(self.m_cell, weights=bound, minlength=self.n_cells)
        for off, size, shape, other, y, precision, summed in self.reshaped:
            view = n[off:off + size].reshape(shape)
            sums = view.sum(axis=other, keepdims=True)
            g[off:off + size].reshape(shape)[...] += (y - sums) * precision
            inv[off:off + size].reshape(shape)[...] += 2.0 * precision * sums / (view + sums / summed)
        return g, inv

    def tables(self, x, domain: Domain, families):
        return [x[a:b].reshape(domain.shape(f)) for a, b, f in zip(self.offsets[:-1], self.offsets[1:], families)]


def fit_families_locally(
    domain: Domain,
    families: Sequence[Sequence[str]],
    measurements: Sequence[Measurement],
    n_records: float,
    pseudo_count: float,
    max_iter: int = LOCAL_MAX_ITER,
    count_tol: float = 1e-3,
    callback: Callable[[int, float, float], None] | None = None,
) -> FamilyFit:
    """Family count tables, each fitted to the noisy tables over it under a Dirichlet prior on its CPD columns.

    Parameters
    ----------
    domain : Domain
        Public states of every attribute.
    families : sequence of tuple of str
        Each node followed by its parents (the tables to return).
    measurements : sequence of Measurement
        Noisy tables; each family reads those that overlap it (see `_evidence`).
    n_records : float
        Record count every fitted family table sums to.
    pseudo_count : float
        Dirichlet pseudo-records ``a`` per CPD cell
        ([`dirichlet_pseudo_count`][pgmpy_dp.estimators.likelihood.dirichlet_pseudo_count]).
    max_iter : int
        Newton sweeps at most.
    count_tol : float
        The sweeps stop once no fitted count moved by more than ``count_tol`` noise scales of its table.
    callback : callable, optional
        ``callback(iteration, objective, change)`` after every sweep (``objective`` is NaN).

    Returns
    -------
    FamilyFit
        ``cliques`` are the families themselves; ``log_likelihood`` is empty.

    Examples
    --------
    Noiseless tables are recovered:

    >>> d = Domain({"a": [0, 1], "b": [0, 1]})
    >>> ab = np.array([[600.0, 100.0], [100.0, 200.0]])
    >>> ms = [Measurement(("a",), ab.sum(axis=1), 1e-3), Measurement(("b", "a"), ab.T, 1e-3)]
    >>> fit = fit_families_locally(d, [("a",), ("b", "a")], ms, n_records=1000, pseudo_count=0.0)
    >>> np.round(fit.tables[1]).tolist()
    [[600.0, 100.0], [100.0, 200.0]]
    """
    families = [tuple(f) for f in families]
    n_records = float(n_records)
    if not (math.isfinite(n_records) and n_records > 0):
        raise ValueError(f"n_records must be positive and finite, got {n_records!r}")
    if not (math.isfinite(pseudo_count) and pseudo_count >= 0):
        raise ValueError(f"pseudo_count must be a non-negative number, got {pseudo_count!r}")
    per_family, per_marginal = _evidence(families, measurements)
    flat = _FlatFamilies(domain, families, per_family, per_marginal)
    cell_scale = np.repeat([min(m.scale for m in ms) for ms in per_family], flat.sizes)
    a, N = float(pseudo_count), n_records

    def normalise(n):
        return n * (N / flat.per_fam(n))[flat.fam]

    # start: the noisy tables with their negative cells lifted to a fraction of a noise scale
    primary = np.isfinite(flat.scale)
    y0 = np.where(primary, flat.y, 0.0) + np.bincount(flat.obs_cell, weights=flat.obs_y, minlength=flat.n_cells)
    seen = primary + np.bincount(flat.obs_cell, minlength=flat.n_cells)
    n = normalise(np.maximum(y0 / np.maximum(seen, 1), 0.0) + 0.5 * np.minimum(cell_scale, 1.0) + 1e-300)
    z = np.log(n)
    n_iter, converged = 0, False
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        for n_iter in range(1, max_iter + 1):
            # gradient of G(n) in n: the likelihood's, plus the prior's log((n + a) / n) - log((n_u + K a) / n_u)
            col = flat.per_col(n)[flat.col]
            g, k = flat.gradient(n)
            phi = g + np.log1p(a / n) - np.log1p(flat.k * a / col)
            curv = k * n + a / (n + a) + 1e-12  # minus its derivative in log n, the cell's own terms
            # the multiplier that keeps each family's total at N to first order
            lam = (flat.per_fam(n * phi / curv) / flat.per_fam(n / curv))[flat.fam]
            z = z + np.clip((phi - lam) / curv, -NEWTON_STEP, NEWTON_STEP)
            z = z - np.log(flat.per_fam(np.exp(z)) / N)[flat.fam]
            new = np.exp(z)
            change = float(np.max(np.abs(new - n) / cell_scale))
            n = new
            if callback is not None:
                callback(n_iter, math.nan, change)
            if change < count_tol:
                converged = True
                break
        col = flat.per_col(n)[flat.col]
        q = col * (n + a) / (col + flat.k * a)  # N p(u) theta(x | u)
    return FamilyFit(flat.tables(q, domain, families), list(families), n_iter, converged, [], math.nan, 0.0)
