"""Private Ising and pairwise Markov networks and their graphs: two routes under one estimator.

``route="tables"`` releases every two-way table with Gaussian noise and fits the pairwise model to
them ([`pgmpy_dp.structure.tables_route`][pgmpy_dp.structure.tables_route]); ``route="frank-wolfe"``
runs one private l1 logistic regression per node (below). ``route="auto"`` picks one from public
inputs ([`choose_route`][pgmpy_dp.structure.routing.choose_route]); ``route_`` says which.

Frank-Wolfe route: one private l1 logistic regression per node (Ising, Klivans and Meka 2017) or per
pair of a node's states (pairwise, Wu, Sanghavi and Dimakis 2019), each solved by private Frank-Wolfe
([`pgmpy_dp.structure.frank_wolfe`][pgmpy_dp.structure.frank_wolfe]). Each row costs ``rho`` in total:
an Ising regression gets ``rho / p``, a pair regression of node ``i`` gets ``rho / (p (k_i - 1))``, as a
row lies in ``k_i - 1`` of them. ``n_iter=None``, ``width=None`` and the edge threshold are set as in
docs/structure.md (``COUNT_SHARE``, ``WIDTH_SHARE``, ``WIDTH_MARGIN``); a fit
beyond ``MAX_STEPS_PER_ROW`` even at the fewest iterations is refused before charging.

``model_`` is a pgmpy ``DiscreteMarkovNetwork`` with edge factors ``exp(W_ij)`` on the kept edges and node
factors ``exp(theta_i)``; ``graph_`` is the same graph without factors, ready for
[`PrivateMarkovEstimator`][pgmpy_dp.estimators.markov.PrivateMarkovEstimator].
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import sparse
from skbase.base import BaseObject

from ..privacy import (
    Domain,
    DomainError,
    PrivacyBudget,
    check_delta,
    rho_to_epsilon_delta,
)
from .._memory import check_memory
from ..privacy.random_state import check_random_state
from . import routing
from .checks import LearnerChecks
from .frank_wolfe import (
    MAX_STEPS_PER_ROW,
    MIN_ITERATIONS,
    frank_wolfe_batch,
    frank_wolfe_iterations,
    frank_wolfe_noise_scale,
)
from .tables_route import fit_tables_route, refit_on_edges, release_counted, release_pair_tables
from .tables_route import memory_needed as tables_memory_needed

# problems are batched so that the (rows x problems) work arrays stay around this many floats
_BATCH_CELLS = 4_000_000

class NotFittedError(ValueError, AttributeError):
    """A fitted attribute was asked for before ``fit`` (a ``ValueError`` and an ``AttributeError``, as in scikit-learn)."""


def min_rows_for_structure(p: int, rho: float, k: int = 2) -> int:
    """Rows below which no rho-zCDP learner can recover a p-node, k-state graph.

    The lower bound ``n = Omega(sqrt(k**2 p / rho))`` (Zhang et al. 2020; for an
    Ising model ``k = 2`` is replaced by 1: ``sqrt(p / rho)``), with the constant
    of the Omega taken as 1. It is necessary, not sufficient. The estimators do
    not check it (the row count is private): compare it with the number of
    records you can declare publicly before spending a budget.

    Examples
    --------
    >>> min_rows_for_structure(10, rho=0.001)
    100
    >>> min_rows_for_structure(10, rho=0.001, k=3)
    300
    """
    kk = 1 if k <= 2 else k
    return int(math.ceil(math.sqrt(kk * kk * p / rho) - 1e-9))


class _PrivateMRFEstimator(LearnerChecks, BaseObject):
    """Shared fitting logic: validation, budget, batching, symmetrising, the pgmpy model."""

    _kind = "pairwise"

    def __init__(
        self,
        width: float | None = None,
        eta: float | None = None,
        threshold: float | None = None,
        n_iter: int | None = None,
        radius: float | None = None,
        route: str = "auto",
        random_state=None,
    ) -> None:
        self.width = width
        self.radius = radius
        self.eta = eta
        self.threshold = threshold
        self.n_iter = n_iter
        self.route = route
        self.random_state = random_state
        super().__init__()

    # -- validation --------------------------------------------------------------------------
    def _check_memory(self, dom: Domain, route: str) -> None:
        """Refuse, before anything is charged, a fit whose row-independent work arrays do not fit in memory.

        Only the declared domain enters the estimate; the arrays that grow with the rows are batched.
        """
        sizes = [dom.size(a) for a in dom.attrs]
        need = tables_memory_needed(sizes)
        if route == "frank-wolfe":
            # a pilot of the tables route estimates the width when none is given
            need = self._memory_needed(sizes) + (need if self.width is None else 0)
        check_memory(
            need,
            f"{type(self).__name__} would need",
            f"that is for {len(dom)} columns with up to {max(sizes)} declared states: declare fewer states "
            "(merge rare ones), fit fewer columns, or use a machine with more memory. Nothing was charged",
        )

    @staticmethod
    def _memory_needed(sizes) -> int:
        """Bytes of the work arrays that do not grow with the rows, for columns of ``sizes`` states."""
        d = sum(sizes) + 1
        # one Frank-Wolfe batch: weights, gradient, scores, masks (see frank_wolfe_batch)
        batch = 48 * _BATCH_CELLS
        # per node: pair masks and weights (d x pairs), the pair-by-pair blocks (k x k x d)
        node = max(k * (k - 1) // 2 * d * 9 + k * k * d * 8 for k in sizes)
        # edge weights kept in several forms (raw, symmetrised, pgmpy factors)
        edges = 32 * sum(a * b for a, b in itertools.combinations(sizes, 2))
        return batch + node + edges

    def _check_work(self, dom: Domain, route: str) -> None:
        """Refuse, before charging, a Frank-Wolfe fit whose regressions would pass over each row too often.

        ``problems x iterations`` is public (the declared states, ``n_iter`` or ``MIN_ITERATIONS``); above
        ``MAX_STEPS_PER_ROW`` a fit would run for hours after charging.
        """
        if route != "frank-wolfe":
            return
        problems = self._n_problems([dom.size(a) for a in dom.attrs])
        iterations = MIN_ITERATIONS if self.n_iter is None else int(self.n_iter)
        if problems * iterations > MAX_STEPS_PER_ROW:
            raise ValueError(
                f"{type(self).__name__}'s Frank-Wolfe route would run {problems:,} regressions (one per pair "
                f"of states of each column; up to {max(dom.size(a) for a in dom.attrs)} declared states) of "
                f"{iterations} iterations each, {problems * iterations:,} passes over every row, more than "
                f"MAX_STEPS_PER_ROW={MAX_STEPS_PER_ROW:,}: it would run for hours. Use route='tables', or "
                "declare fewer states (merge rare ones). Nothing was charged"
            )

    @staticmethod
    def _n_problems(sizes) -> int:
        """Frank-Wolfe regressions of a fit on columns of ``sizes`` states: one per pair of states of each column."""
        return sum(k * (k - 1) // 2 for k in sizes)

    def fit(
        self,
        data: pd.DataFrame,
        rho: float | None = None,
        *,
        epsilon: float | None = None,
        delta: float | None = None,
        budget: PrivacyBudget | None = None,
        domain: Mapping[str, Sequence] | Domain | None = None,
        n_records: float | None = None,
    ):
        """Learn the weights, the graph and a pgmpy model from ``data`` under ``rho``-zCDP.

        Parameters
        ----------
        data : pandas.DataFrame
            One column per variable; categorical dtypes or ``domain`` give the public states.
        rho : float
            Total zCDP budget (split as the module docstring states).
        epsilon, delta : float, optional
            Alternative to ``rho``: the largest rho that is ``(epsilon, delta)``-DP.
        budget : PrivacyBudget, optional
            A zCDP accountant charged ``rho`` before any noise is drawn.
        domain : mapping or Domain, optional
            Public states of non-categorical columns.
        n_records : float, optional
            A public record count (declared, not read from ``data``). Frank-Wolfe's iteration rule
            uses it; without it a noisy count is spent from ``rho`` (see ``n_records_``).

        Returns
        -------
        self

        Raises
        ------
        TypeError, ValueError
            Before anything is charged: bad arguments, an empty ``data``, an undeclared or single-state
            domain, a value outside it, a two-way table above ``DEFAULT_MAX_CELLS``, work arrays beyond
            the memory this process may allocate, or a Frank-Wolfe fit above ``MAX_STEPS_PER_ROW`` (from
            the declared states alone).
        """
        self._check_params()
        rng = check_random_state(self.random_state)
        rho = self._resolve_rho(rho, epsilon, delta, budget)
        self._check_budget(budget)
        self._check_n_records(n_records)
        dom = self._domain(data, domain)
        self._check_rows(data)
        fw_settings = self.n_iter is not None or self.radius is not None
        route = routing.choose_route(self.route, len(dom), max(dom.size(a) for a in dom.attrs), rho, fw_settings)
        self._check_tables(dom, route)
        self._check_memory(dom, route)
        self._check_work(dom, route)
        codes = dom.encode(data)
        self.releases_ = []
        self.domain_, self.route_ = dom, route
        label = f"{type(self).__name__} ({len(dom)} nodes, {route} route)"
        if budget is not None:
            # charged before any noise: a budget that is too small or pure-DP raises here, spending nothing;
            # the charge is committed just before the first noise is drawn, so a failure before it refunds
            with budget.charge(rho=rho, label=label) as ch:
                self._fit_route(route, codes, dom, rho, rng, ch.commit, n_records)
        else:
            self._fit_route(route, codes, dom, rho, rng, _no_charge, n_records)
        self.rho_ = rho
        return self

    def _fit_route(self, route, codes, dom, rho, rng, commit, n_records) -> None:
        """Run ``route``; ``commit()`` is called before each step that draws noise."""
        if route == "tables":
            release = release_pair_tables(codes, dom, rho, random_state=rng, n_records=n_records, on_noise=commit)
            self.releases_.append(release)
            self._finish_tables(fit_tables_route(release, dom, threshold=self._user_threshold(), random_state=rng), dom)
            return
        rho_left, n_hat, width = self._frank_wolfe_settings(codes, dom, rho, rng, commit, n_records)
        self.width_ = float(width)
        self.domain_sizes_ = [dom.size(a) for a in dom.attrs]
        self.n_records_ = None if n_hat is None else max(float(n_hat), 1.0)
        self.n_iter_ = int(self.n_iter) if self.n_iter is not None else self._default_iterations(dom, rho_left)
        self._l1 = []
        W, theta = self._solve(codes, dom, rho_left, rng, commit)
        self.l1_fraction_ = np.asarray(self._l1)
        del self._l1
        self._finish(W, theta, dom)
        routing.warn_if_on_boundary(self.l1_fraction_, type(self).__name__)

    def _frank_wolfe_settings(self, codes, dom, rho, rng, commit, n_records):
        """The regressions' ``rho``, the record count and the width: given, or bought with a share of ``rho``."""
        if self.width is None:
            share = routing.WIDTH_SHARE * rho
            release = release_pair_tables(codes, dom, share, random_state=rng, n_records=n_records, on_noise=commit)
            self.releases_.append(release)
            pilot = fit_tables_route(release, dom, random_state=rng)
            # a pilot that finds nothing still needs a ball with room; the boundary warning flags it
            width = max(routing.width_from_fit(pilot.weights, pilot.node_weights, pilot.edges, dom.attrs), 1e-3)
            return rho - share, release.n_records_estimate, width * routing.WIDTH_MARGIN
        if self.n_iter is None and n_records is None:
            share = routing.COUNT_SHARE * rho
            release = release_counted(codes, dom, [(dom.attrs[0],)], share, random_state=rng, on_noise=commit)
            self.releases_.append(release)
            return rho - share, release.n_records_estimate, self.width
        return rho, n_records, self.width

    def _default_iterations(self, dom, rho) -> int:
        """The theory's iterations, at most ``MAX_STEPS_PER_ROW`` passes over each row by all regressions."""
        problems = self._n_problems(self.domain_sizes_)
        return min(self._iterations(dom, rho), max(MIN_ITERATIONS, MAX_STEPS_PER_ROW // problems))

    def _user_threshold(self) -> float | None:
        if self.threshold is not None:
            return float(self.threshold)
        return None if self.eta is None else self.eta / 2.0

    def _finish_tables(self, fit, dom: Domain) -> None:
        self.threshold_ = fit.threshold
        self.weights_ = fit.weights
        self.node_weights_ = fit.node_weights
        self.edge_strength_ = fit.strength
        self.edge_score_ = fit.score
        self.edges_ = list(fit.edges)
        self.tables_fit_ = fit.method
        self.noise_scale_ = fit.noise_scale
        self.graph_ = _markov_network(dom.attrs, self.edges_)
        self.model_ = fit.refit.model_
        self._set_coef(dom)

    def _set_coef(self, dom: Domain) -> None:
        pass

    def _check_fitted(self, what: str) -> None:
        if not hasattr(self, "model_"):
            raise NotFittedError(
                f"this {type(self).__name__} is not fitted yet; call fit(data, rho=...) before {what}"
            )

    def epsilon_delta(self, delta: float) -> tuple[float, float]:
        """The ``(epsilon, delta)``-DP guarantee of ``rho_`` (tight conversion, [`rho_to_epsilon_delta`][pgmpy_dp.privacy.parameters.rho_to_epsilon_delta])."""
        self._check_fitted("epsilon_delta()")
        return rho_to_epsilon_delta(self.rho_, check_delta(delta)), float(delta)

    def _radius(self) -> float:
        """``radius``, or the smallest l1 ball holding every regression's true weights under ``width_``."""
        return self._radius_factor * float(self.width_) if self.radius is None else float(self.radius)

    def _run(self, X, labels, m, allowed, radius, rho_problem, rng, commit):
        """Frank-Wolfe on ``m`` problems in batches; ``commit()`` before each batch draws its noise.

        ``labels(sl)`` builds the (rows, batch) label columns of the problems in slice ``sl``, so the
        arrays that grow with the rows stay near ``_BATCH_CELLS`` floats.
        """
        scale = frank_wolfe_noise_scale(rho_problem, radius, self.n_iter_)
        n, d = X.shape
        # batches bound both the (rows x batch) and the (features x batch) work arrays
        step = max(1, min(_BATCH_CELLS // max(n, 1), _BATCH_CELLS // d))
        out = np.empty((X.shape[1], m))
        for start in range(0, m, step):
            sl = slice(start, start + step)
            Y = labels(sl)
            commit()  # the next call draws noise
            out[:, sl] = frank_wolfe_batch(X, Y, radius, self.n_iter_, scale, allowed[:, sl], rng)
        self._l1.extend(np.abs(out).sum(axis=0) / radius)
        return out, scale

    def _finish(self, W: dict, theta: dict, dom: Domain) -> None:
        attrs = dom.attrs
        self.weights_ = W
        strength = {e: float(np.abs(w).max()) for e, w in W.items()}
        self.edge_strength_ = strength
        user = self._user_threshold()
        if user is None:
            sizes = {a: dom.size(a) for a in attrs}
            self.edge_score_, self.threshold_ = routing.asymmetry_scores(self.raw_weights_, W, sizes)
        else:
            self.edge_score_, self.threshold_ = strength, user
        self.edges_ = [e for e in itertools.combinations(attrs, 2) if self.edge_score_[e] > self.threshold_]
        self.node_weights_ = theta
        self.graph_ = _markov_network(attrs, self.edges_)
        self.model_ = self.to_markov_network()

    def to_markov_network(self, edges=None):
        """A pgmpy ``DiscreteMarkovNetwork`` on ``edges`` (default ``edges_``).

        Frank-Wolfe route: ``exp(weights)`` edge factors and ``exp(node weights)`` node factors.
        Tables route: the maximum-likelihood potentials of that graph refitted to ``releases_``
        (post-processing, nothing spent).
        """
        from pgmpy.factors.discrete import DiscreteFactor

        if not hasattr(self, "weights_"):
            self._check_fitted("to_markov_network()")
        dom = self.domain_
        edges = self.edges_ if edges is None else _check_edges(edges, dom.attrs)
        if getattr(self, "route_", None) == "tables":
            return refit_on_edges(self.releases_[0], dom, edges).model_
        mn = _markov_network(dom.attrs, edges)
        names = {a: list(dom[a]) for a in dom.attrs}
        factors = []
        for a, b in edges:
            key = (a, b) if (a, b) in self.weights_ else (b, a)
            w = self.weights_[key]
            factors.append(
                DiscreteFactor(list(key), list(w.shape), np.exp(w - w.max()),
                               state_names={key[0]: names[key[0]], key[1]: names[key[1]]})
            )
        for a in dom.attrs:
            t = self.node_weights_[a]
            factors.append(DiscreteFactor([a], [len(t)], np.exp(t - t.max()), state_names={a: names[a]}))
        mn.add_factors(*factors)
        return mn


def _check_edges(edges, attrs) -> list[tuple[str, str]]:
    """``edges`` as a list of pairs of distinct fitted columns, or a ValueError naming the bad edge."""
    if isinstance(edges, (str, bytes)) or not isinstance(edges, Iterable):
        raise TypeError(f"edges must be a list of (column, column) pairs, got {type(edges).__name__}")
    out = []
    for e in edges:
        pair = tuple(e) if isinstance(e, (tuple, list)) else None
        if pair is None or len(pair) != 2:
            raise ValueError(f"edge {e!r} is not a (column, column) pair")
        unknown = [a for a in pair if not isinstance(a, str) or a not in attrs]
        if unknown:
            raise ValueError(
                f"edge {pair!r} names {unknown}, not fitted column(s); the fitted columns are {list(attrs)[:20]}"
            )
        if pair[0] == pair[1]:
            raise ValueError(f"edge {pair!r} joins a column to itself; an edge joins two different columns")
        out.append(pair)
    return out


def _no_charge() -> None:
    """The ``commit`` of a fit without a budget: nothing to mark."""


def _markov_network(nodes, edges):
    from pgmpy.models import DiscreteMarkovNetwork

    mn = DiscreteMarkovNetwork()
    mn.add_nodes_from(nodes)
    mn.add_edges_from(edges)
    return mn


class PrivateIsingEstimator(_PrivateMRFEstimator):
    """Private Ising model and graph, from the two-way tables or one l1 logistic regression per node.

    Every column must declare exactly two states, coded ``-1`` and ``+1``. Tables route: the complete
    pairwise model fitted to the noisy two-way tables gives ``A``, the selected graph is refitted.
    Frank-Wolfe route: node ``i`` regresses ``x_i`` on ``(x_-i, 1)`` in the l1 ball of radius ``2 width``.
    See docs/structure.md.

    Parameters
    ----------
    width : float, optional
        Upper bound ``lambda`` on the model width ``max_i sum_j |A_ij| + |theta_i|``
        (Frank-Wolfe). ``None``: estimated privately from a share of ``rho``.
    eta : float, optional
        Smallest edge weight ``|A_ij|`` worth finding; sets the threshold ``eta / 2``.
        ``None``: edges are weights above the fit's own noise level.
    threshold : float, optional
        Keep edge ``(i, j)`` when the symmetrised ``|A_ij|`` exceeds it (overrides ``eta``).
    n_iter : int, optional
        Frank-Wolfe iterations per regression; ``None`` sets them from the theory.
    radius : float, optional
        l1 radius of each regression (default ``2 width``, which contains ``2 (A_i., theta_i)``).
    route : {"auto", "tables", "frank-wolfe"}
        ``"auto"``: the tables route up to ``TABLES_MAX_PAIR_CELLS`` two-way cells (100 binary columns),
        Frank-Wolfe beyond or when ``n_iter`` or ``radius`` is set (public inputs only).
    random_state : int, optional
        Seeded numpy noise for reproducible experiments (default: OpenDP's exact samplers).

    Attributes
    ----------
    route_ : str
        ``"tables"`` or ``"frank-wolfe"``.
    releases_ : list of MarginalRelease
        The noisy tables the fit released (tables route; Frank-Wolfe's width pilot or record count).
    coef_ : numpy.ndarray (p, p)
        Symmetrised interaction matrix ``A`` (zero diagonal).
    intercept_ : numpy.ndarray (p,)
        Mean field ``theta``.
    weights_ : dict
        ``{(a, b): 2x2 array}``, the edge log-potentials ``A_ab x_a x_b``.
    edges_ : list of tuple
        Pairs whose ``edge_score_`` exceeds ``threshold_``.
    edge_strength_, edge_score_, threshold_ : dict, dict, float
        ``max |W_ab|`` per pair; the statistic the rule compares (the strength, or a noise-standardised
        score for the default rule); and its cut-off.
    graph_, model_ : DiscreteMarkovNetwork
        The learned graph (no factors) and the fitted model.
    rho_ : float
        zCDP spent in all.
    tables_fit_ : str
        Tables route, the selection fit: ``"exact-mle"``, ``"icov+refit"`` (inverse-covariance screen,
        then a test on its exact refit) or ``"icov"`` (too dense to refit: the screen decides).
    width_, n_records_, n_iter_, noise_scale_, l1_fraction_ :
        Frank-Wolfe route: the width used, the record count used (declared or noisy; None if
        unused), iterations, Gumbel scale of each selection, and ``|w|_1 / radius`` per regression.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from pgmpy.inference import VariableElimination
    >>> rng = np.random.default_rng(0)
    >>> a = rng.choice([-1, 1], 20000)
    >>> b = np.where(rng.random(20000) < 0.9, a, -a)   # b follows a: an edge
    >>> c = rng.choice([-1, 1], 20000)                  # c is independent
    >>> df = pd.DataFrame({"a": a, "b": b, "c": c}).astype(pd.CategoricalDtype([-1, 1]))
    >>> est = PrivateIsingEstimator(random_state=0).fit(df, rho=1.0)
    >>> est.route_, est.edges_
    ('tables', [('a', 'b')])
    >>> q = VariableElimination(est.model_).query(["b"], evidence={"a": 1}, show_progress=False)
    >>> bool(q.values[1] / q.values.sum() > 0.8)
    True
    """

    _kind = "ising"
    _radius_factor = 2.0

    def _iterations(self, dom, rho) -> int:
        p = len(dom)
        return frank_wolfe_iterations(self.n_records_, rho / p, self._radius(), p + 1)

    def _set_coef(self, dom: Domain) -> None:
        attrs = dom.attrs
        p = len(attrs)
        self.coef_ = np.zeros((p, p))
        for (i, a), (j, b) in itertools.combinations(enumerate(attrs), 2):
            self.coef_[i, j] = self.coef_[j, i] = self.weights_[a, b][1, 1]
        self.intercept_ = np.array([self.node_weights_[a][1] for a in attrs])

    def _check_states(self, attr, k, states):
        if k != 2:
            raise DomainError(
                f"column {attr!r} declares {k} states {list(states)[:10]}; an Ising model needs exactly two "
                "per column: declare two states, or use PrivatePairwiseEstimator for more"
            )

    def _solve(self, codes, dom, rho, rng, commit):
        attrs = dom.attrs
        p = len(attrs)
        n = len(codes[attrs[0]])
        Z = np.empty((n, p + 1))
        for j, a in enumerate(attrs):
            Z[:, j] = 2.0 * codes[a] - 1.0
        Z[:, p] = 1.0  # intercept
        allowed = np.ones((p + 1, p), dtype=bool)
        allowed[np.arange(p), np.arange(p)] = False  # node i is not its own feature
        radius = self._radius()
        W, self.noise_scale_ = self._run(Z, lambda sl: Z[:, :p][:, sl], p, allowed, radius, rho / p, rng, commit)
        # column i holds node i's regression: 2 A_i. (own row masked, so zero) and 2 theta_i
        A_raw = W[:p, :].T / 2.0
        self.raw_coef_ = A_raw
        sign = np.array([-1.0, 1.0])
        self.raw_weights_ = {
            (attrs[i], attrs[j]): A_raw[i, j] * np.outer(sign, sign) for i in range(p) for j in range(p) if i != j
        }
        self.coef_ = (A_raw + A_raw.T) / 2.0
        self.intercept_ = W[p, :] / 2.0
        weights = {
            (attrs[i], attrs[j]): self.coef_[i, j] * np.outer(sign, sign)
            for i, j in itertools.combinations(range(p), 2)
        }
        theta = {a: self.intercept_[i] * sign for i, a in enumerate(attrs)}
        return weights, theta


class PrivatePairwiseEstimator(_PrivateMRFEstimator):
    """Private pairwise Markov network on k-state variables (u-vs-v logistic reduction).

    Tables route as for [`PrivateIsingEstimator`][pgmpy_dp.structure.pairwise.PrivateIsingEstimator]
    (``k_a x k_b`` tables). Frank-Wolfe route: for node ``i`` and every pair of its states ``u < v``, the
    rows with ``x_i in {u, v}`` are regressed on the one-hot encoding of the other variables plus an
    intercept; the pair weights are averaged into doubly centred, symmetrised ``W_ij(u, b)``.

    Parameters
    ----------
    width, eta, threshold, n_iter, route, random_state
        As for [`PrivateIsingEstimator`][pgmpy_dp.structure.pairwise.PrivateIsingEstimator]; ``eta`` bounds the smallest
        ``max_{a,b} |W_ij(a, b)|`` of an edge (in the doubly centred parametrisation).
    radius : float, optional
        l1 radius of each regression (default ``2 k width``, which holds every regression's true weights).

    Attributes
    ----------
    weights_ : dict
        ``{(a, b): array (k_a, k_b)}``, symmetrised doubly centred log-potentials.
    node_weights_ : dict
        ``{a: array (k_a,)}``, centred node log-potentials.
    route_, releases_, edges_, edge_strength_, edge_score_, threshold_, graph_, model_, rho_, n_iter_ :
        As for [`PrivateIsingEstimator`][pgmpy_dp.structure.pairwise.PrivateIsingEstimator].

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> a = rng.integers(0, 3, 30000)
    >>> b = np.where(rng.random(30000) < 0.8, a, rng.integers(0, 3, 30000))   # b copies a
    >>> c = rng.integers(0, 3, 30000)
    >>> df = pd.DataFrame({"a": a, "b": b, "c": c}).astype(pd.CategoricalDtype([0, 1, 2]))
    >>> est = PrivatePairwiseEstimator(random_state=0).fit(df, rho=2.0)
    >>> est.route_, est.edges_
    ('tables', [('a', 'b')])
    >>> fw = PrivatePairwiseEstimator(route="frank-wolfe", random_state=0).fit(df, rho=2.0)
    >>> fw.edges_, fw.n_iter_ > 10
    ([('a', 'b')], True)
    """

    @property
    def _radius_factor(self) -> float:
        # a u-vs-v regression's one-hot weights W(u, b) - W(v, b) have l1 norm up to 2 k width
        return 2.0 * max(self.domain_sizes_)

    def _iterations(self, dom, rho) -> int:
        k = max(self.domain_sizes_)
        d = sum(self.domain_sizes_) + 1
        # a u-vs-v regression sees the rows holding u or v: about 2 / k of them
        return frank_wolfe_iterations(self.n_records_ * 2.0 / k, rho / (len(dom) * (k - 1)), self._radius(), d)

    def _solve(self, codes, dom, rho, rng, commit):
        attrs = dom.attrs
        p = len(attrs)
        n = len(codes[attrs[0]])
        sizes = [dom.size(a) for a in attrs]
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        d = int(offsets[-1]) + 1  # one-hot blocks and an intercept
        rows = np.repeat(np.arange(n), p + 1)
        cols = np.column_stack([codes[a] + offsets[j] for j, a in enumerate(attrs)] + [np.full(n, d - 1)]).ravel()
        X = sparse.csr_matrix((np.ones(n * (p + 1)), (rows, cols)), shape=(n, d))
        radius = self._radius()
        raw = {}  # (i, j) -> array (k_i, k_j): node i's estimate of W_ij
        theta = {}
        scales = []
        for i, a in enumerate(attrs):
            k = sizes[i]
            pairs = np.array(list(itertools.combinations(range(k), 2)), dtype=np.intp).reshape(-1, 2)
            z = codes[a]

            def labels(sl, z=z, pairs=pairs):
                u, v = pairs[sl, 0], pairs[sl, 1]
                return (z[:, None] == u).astype(float) - (z[:, None] == v)

            allowed = np.ones((d, len(pairs)), dtype=bool)
            allowed[offsets[i]:offsets[i + 1], :] = False
            Wp, scale = self._run(X, labels, len(pairs), allowed, radius, rho / (p * (k - 1)), rng, commit)
            scales.append(scale)
            # D[u, v] = block weights for "u vs v"; centring each block over its states removes
            # the per-block constant, which belongs to the node term
            D = np.zeros((k, k, d))
            for c, (u, v) in enumerate(pairs):
                D[u, v] = Wp[:, c]
                D[v, u] = -Wp[:, c]
            node = D[:, :, d - 1].copy()
            for j in range(p):
                if j == i:
                    continue
                block = D[:, :, offsets[j]:offsets[j + 1]]
                node += block.mean(axis=2)
                centred = block - block.mean(axis=2, keepdims=True)
                raw[i, j] = centred.mean(axis=1)  # (1/k) sum_v [W(u,.) - W(v,.)] = W(u,.) doubly centred
            theta[a] = node.mean(axis=1)
        self.noise_scale_ = scales
        weights = {}
        for i, j in itertools.combinations(range(p), 2):
            weights[attrs[i], attrs[j]] = (raw[i, j] + raw[j, i].T) / 2.0
        self.raw_weights_ = {(attrs[i], attrs[j]): w for (i, j), w in raw.items()}
        return weights, theta
