"""Private Markov-network parameters from noisy clique marginals: naive MLE and CGM-EM (Bernstein et al. 2017).

The fit itself is [`fit_markov`][pgmpy_dp.estimators.markov_fit.fit_markov]; this module converts
between pgmpy models and the engine's arrays and checks that releases and models fit together.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from skbase.base import BaseObject

from ..engine import ConvergenceWarning, JunctionTree, make_inference
from .._progress import ProgressCallback
from ..privacy.budget import PrivacyBudget
from ..privacy.domain import Domain, DomainError
from ..privacy.random_state import check_random_state
from ..privacy.loss import LOSS_TYPES
from ..tables.artifact import MarginalRelease
from ..tables.contribution import contribution_bound
from ..tables.plan import release_loss
from ..tables.release import release_marginals
from .evidence import pooled_n_records, refuse_skip_state, released_domain
from .fitted import remember_fit
from .markov_fit import EM_BUDGET, Evidence, fit_markov, fit_settings, start_potentials
from .measurements import clique_measurements, measured_subcliques

_METHODS = ("cgm-em", "naive-mle")
_LOG_POTENTIAL_FLOOR = np.log(1e-30)


class PrivateMarkovEstimator(BaseObject):
    """Fit the potentials of a pgmpy ``DiscreteMarkovNetwork`` from differentially private marginals.

    ``fit`` takes the model and either published releases (post-processing, nothing
    spent) or a DataFrame, whose clique tables it releases first. The evidence behind
    the defaults is in docs/markov.md.

    Parameters
    ----------
    method : {"cgm-em", "naive-mle"}
        ``"naive-mle"``: fit maximum-likelihood potentials to each noisy table projected onto
        the simplex. ``"cgm-em"``: EM for collective graphical models with the true tables
        latent ([`pgmpy_dp.engine.cgm`][pgmpy_dp.engine.cgm]), started from a naive fit to the
        reconciled tables ([`reconcile_tables`][pgmpy_dp.engine.reconcile.reconcile_tables]).
    max_iter : int or None
        Largest number of EM iterations (the naive MLE runs up to ``max(1000, max_iter)``).
        ``None``: a fixed budget of `EM_BUDGET` iterations that does not warn; an explicit
        ``max_iter`` warns (``ConvergenceWarning``) if EM stops there before ``tol``.
    tol : float
        Relative change of the EM objective at which EM stops; the naive MLE stops at
        gradient max-norm ``tol * 1e-2`` per record.
    regularization : float or "auto"
        ``lambda`` of the penalty ``lambda/2 ||theta||^2`` against the log-likelihood of all ``N``
        records. ``"auto"``: [`auto_regularization`][pgmpy_dp.estimators.priors.auto_regularization]
        for the naive MLE and [`floored_regularization`][pgmpy_dp.estimators.priors.floored_regularization]
        per clique for CGM-EM. A number is used by every stage and clique.
    inference : {"auto", "junction-tree", "loopy"}
        Exact junction tree or damped loopy BP; ``"auto"`` is exact unless the largest tree
        clique exceeds a million cells.
    random_state : int or numpy.random.Generator, optional
        Seed for the noise when ``fit`` releases the tables itself (experiments only).
    show_progress : bool
        Show a progress bar over EM iterations and over the tables counted.

    Attributes
    ----------
    model_ : DiscreteMarkovNetwork
        The fitted model.
    releases_ : list of MarginalRelease
        The measurements used; one made by ``fit`` is stored as soon as it exists.
    loss_ : PureDP, ZCDP or None
        The privacy loss the fit spent (``None`` for a fit from releases).
    cliques_ : list of tuple of str
        Cliques fitted, one factor of ``model_`` each: the model's cliques, then the
        [`measured_subcliques`][pgmpy_dp.estimators.measurements.measured_subcliques].
    log_potentials_ : list of numpy.ndarray
        Fitted log-potentials, one per clique, axes in clique order.
    tied_ : list of list of int or None
        Groups of clique indices (into ``cliques_``) that share one potential.
    n_records_ : float
        Record count used (declared, or estimated from the noisy tables).
    domain_ : Domain
        The public states of the model's variables.
    warm_start_ : {"reconciled", "noisy"} or None
        The targets of CGM-EM's warm start (``"noisy"`` for tied potentials); None for ``"naive-mle"``.
    regularization_ : dict
        The L2 weights used per stage: ``"naive-mle"``, and for ``"cgm-em"`` also ``"warm-start"``
        and ``"cgm-em"`` (a float, or one weight per entry of ``cliques_``).
    n_iter_, converged_, tolerance_ : int, bool, float
        Iterations of ``method``'s own loop, whether ``tol`` was reached, and the last change.
    max_iter_ : int
        The iteration cap used: ``max_iter``, or `EM_BUDGET` for ``max_iter=None``.
    mle_n_iter_ : int
        L-BFGS iterations of the naive fit (0 when ``init`` replaced it).
    log_likelihood_ : list of float
        The EM objective after each iteration; empty for ``"naive-mle"``.
    inference_ : str
        ``"junction-tree"`` or ``"loopy"``.
    fit_settings_ : FitSettings
        Everything the fit ran under ([`FitSettings`][pgmpy_dp.estimators.markov_fit.FitSettings]),
        which the refits of ``pgmpy_dp.query_interval`` repeat.

    Examples
    --------
    >>> import pgmpy_dp
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> rng = np.random.default_rng(0)
    >>> smoke = rng.random(5000) < 0.3
    >>> lung = np.where(smoke, rng.random(5000) < 0.4, rng.random(5000) < 0.05)
    >>> xray = np.where(lung, rng.random(5000) < 0.9, rng.random(5000) < 0.1)
    >>> df = pd.DataFrame({"smoke": smoke, "lung": lung, "xray": xray})
    >>> mn = DiscreteMarkovNetwork([("smoke", "lung"), ("lung", "xray")])
    >>> est = PrivateMarkovEstimator(random_state=0, show_progress=False)
    >>> est = est.fit(mn, df, epsilon=1.0, domain={c: [False, True] for c in df.columns})
    >>> q = pgmpy_dp.query(est, ["lung"], evidence={"xray": True})
    >>> bool(q.values[1] > 0.5), est.inference_
    (True, 'junction-tree')
    """

    def __init__(
        self,
        method: str = "cgm-em",
        max_iter: int | None = None,
        tol: float = 1e-6,
        regularization: float | str = "auto",
        inference: str = "auto",
        random_state=None,
        show_progress: bool = True,
    ) -> None:
        self.method = method
        self.max_iter = max_iter
        self.tol = tol
        self.regularization = regularization
        self.inference = inference
        self.random_state = random_state
        self.show_progress = show_progress
        super().__init__()

    # -- validation --------------------------------------------------------------------------
    def _check_params(self) -> None:
        if self.method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {self.method!r}")
        if self.max_iter is not None and not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1):
            raise ValueError(f"max_iter must be a positive integer or None (a fixed budget of {EM_BUDGET}), got {self.max_iter!r}")
        if not (isinstance(self.tol, (int, float)) and math.isfinite(self.tol) and self.tol > 0):
            raise ValueError(f"tol must be a positive number, got {self.tol!r}")
        if self.regularization != "auto":
            r = self.regularization
            if isinstance(r, bool) or not isinstance(r, (int, float, np.floating)) or not math.isfinite(r) or r < 0:
                raise ValueError(f"regularization must be 'auto' or a non-negative number, got {r!r}")
        if self.inference not in ("auto", "junction-tree", "loopy"):
            raise ValueError(f"inference must be 'auto', 'junction-tree' or 'loopy', got {self.inference!r}")

    def _fit_core(self, engine, evidence: Evidence, start) -> None:
        """The shared fit (`fit_markov`) under ``fit_settings_``, its outcome stored as learned attributes."""
        settings = self.fit_settings_
        cgm = settings.method == "cgm-em"
        self.warm_start_, self.max_iter_ = settings.warm_start, settings.max_iter
        self.regularization_ = {"naive-mle": settings.naive_regularization}
        if cgm:
            self.regularization_.update({"warm-start": settings.naive_regularization,
                                         "cgm-em": settings.cgm_regularization})
        bar = ProgressCallback(self.show_progress and cgm, settings.max_iter, "CGM-EM")
        try:
            result = fit_markov(engine, evidence, settings, init=start, callback=bar.callback)
        finally:
            bar.close()
        self.log_potentials_, self.log_likelihood_ = result.log_potentials, result.log_likelihood
        self.n_iter_, self.converged_, self.tolerance_ = result.n_iter, result.converged, result.tolerance
        self.mle_n_iter_ = result.mle_n_iter
        if cgm and not result.converged and self.max_iter is not None:  # the default budget does not warn
            warnings.warn(
                f"CGM-EM did not converge: relative change of the EM objective {result.tolerance:.2e} "
                f"after max_iter={self.max_iter} iterations is above tol={self.tol:g}; "
                "raise max_iter or tol (the returned model is the last iterate)",
                ConvergenceWarning,
                stacklevel=3,
            )

    # -- public API --------------------------------------------------------------------------
    def _release(self, model, data, model_cliques, tied, epsilon, rho, budget, domain, privacy_unit, init) -> list:
        """Release the clique tables of ``data``, everything that can fail checked first; keeps them at once."""
        unit_kwargs = _unit_kwargs(data, privacy_unit)
        loss = release_loss(epsilon, rho, who="a PrivateMarkovEstimator fit from a DataFrame (it releases the clique tables)")
        data_domain = Domain.from_dataframe(data, list(model.nodes()), domain)
        _check_model_states(model, data_domain)
        _check_tied_states(data_domain, model_cliques, _tied_indices(model_cliques, tied))
        requests = _release_requests(model_cliques, _tied_indices(model_cliques, tied))
        _check_per_table_budget(epsilon if rho is None else rho, requests, model_cliques)
        start_potentials(init, model_cliques, data_domain)
        release = release_marginals(
            data, requests, loss=loss,
            domain=domain, budget=budget, random_state=self.random_state,
            show_progress=self.show_progress, **unit_kwargs,
        )
        self.loss_ = loss if isinstance(loss, LOSS_TYPES) else release.loss  # one per table: their sum
        # paid for: reachable even if the fit fails from here on (an interrupt, a warning raised as error)
        self.releases_ = [release]
        return self.releases_

    def fit(
        self,
        model,
        data,
        epsilon=None,
        budget: PrivacyBudget | None = None,
        domain=None,
        cliques: Sequence[Sequence[str]] | None = None,
        tied: Sequence[Sequence[Sequence[str]]] | None = None,
        *,
        rho=None,
        privacy_unit=None,
        init=None,
    ) -> PrivateMarkovEstimator:
        """Fit the potentials of ``model``; the fitted ``DiscreteMarkovNetwork`` is ``model_``.

        Parameters
        ----------
        model : pgmpy.models.DiscreteMarkovNetwork
            The structure; its cliques are its factors' scopes, else its edges plus its isolated nodes.
        data : MarginalRelease, list of MarginalRelease, or pandas.DataFrame
            Noisy measurements, or private data to release the clique tables of (then a loss is required).
        epsilon : float, sequence of float or PrivacyLoss, optional
            Budget of the release made from a DataFrame (total, or one per clique); a loss value
            may stand for ``epsilon`` or ``rho`` (docs/privacy.md, "Where the loss goes").
        budget : PrivacyBudget, optional
            Accountant charged for that release.
        domain : mapping or Domain, optional
            Public states of non-categorical columns (DataFrame input).
        rho : float or sequence of float, optional, keyword only
            Instead of ``epsilon``: the zCDP budget of a discrete Gaussian release (total, or one
            per clique); both methods then use the Gaussian noise model.
        cliques : list of tuple of str, optional
            Override the cliques (each must be a complete subgraph of ``model``).
        tied : list of list of tuple of str, optional
            Groups of cliques sharing one potential, matched axis by axis, e.g.
            ``[[("x1", "x2"), ("x2", "x3"), ("x3", "x4")]]`` for a time-homogeneous chain.
            When ``fit`` releases the tables itself, each tied group is measured as ONE
            pooled table (``pgmpy_dp.Pooled``) and ``epsilon`` is a total or one per released
            table, pooled tables first in ``tied`` order, then the untied cliques in model order.
            A pooled table in a given release must pool exactly the cliques of one tied group.
        privacy_unit : UserLevel or column label, optional, keyword only
            Individual-level privacy for the release made from a DataFrame
            (``pgmpy_dp.UserLevel``; its column is not a model node). A ``skip_state`` is
            refused (docs/mobility.md).
        init : mapping of tuple of str to numpy.ndarray, optional, keyword only
            Starting log-potentials per clique, such as ``dict(zip(est.cliques_, est.log_potentials_))``
            (CGM-EM then skips its warm start; missing cliques start at zero). Not with ``tied``.

        Returns
        -------
        self

        Examples
        --------
        A six-step time-homogeneous chain, released as one pooled transition table plus ``x1``'s:

        >>> import pgmpy_dp
        >>> from pgmpy.models import DiscreteMarkovNetwork
        >>> rng = np.random.default_rng(0)
        >>> steps = [f"x{t}" for t in range(1, 7)]
        >>> x = [rng.random(4000) < 0.3]
        >>> for _ in steps[1:]:  # sticky: keep the previous state with probability 0.8
        ...     x.append(np.where(rng.random(4000) < 0.8, x[-1], ~x[-1]))
        >>> df = pd.DataFrame(dict(zip(steps, x)))
        >>> edges = list(zip(steps, steps[1:]))
        >>> mn = DiscreteMarkovNetwork(edges)
        >>> est = PrivateMarkovEstimator(random_state=0, show_progress=False)
        >>> est = est.fit(mn, df, epsilon=1.0, domain={v: [False, True] for v in steps},
        ...               cliques=[("x1",)] + edges, tied=[edges])
        >>> [t.attrs for t in est.releases_[0].tables]
        [('x1', 'x2'), ('x1',)]
        >>> psi = np.exp(est.log_potentials_[1])
        >>> bool(np.all(psi / psi.sum(axis=1, keepdims=True) > [[0.7, 0.1], [0.1, 0.7]]))
        True
        """
        _check_model_type(model)
        _check_param_types(self)
        self._check_params()
        check_random_state(self.random_state)
        _check_clique_args(cliques, tied)
        model_cliques = _model_cliques(model, cliques)
        _check_init(init, tied)
        if isinstance(data, pd.DataFrame):  # the loss goes with the data it is spent on (docs/privacy.md)
            releases = self._release(model, data, model_cliques, tied, epsilon, rho, budget, domain, privacy_unit, init)
        else:
            _unit_kwargs(data, privacy_unit)
            releases = _given_releases(data, epsilon, rho, budget)
            self.loss_ = None  # post-processing: nothing spent
        full_domain = released_domain(releases, model.nodes())
        nodes = list(model.nodes())
        model_domain = full_domain.project(nodes)
        _check_model_states(model, model_domain)
        tied_idx = _tied_indices(model_cliques, tied)
        _check_tied_states(model_domain, model_cliques, tied_idx)

        # appended, so the indices of tied groups still point at the model's cliques
        model_cliques = model_cliques + measured_subcliques(releases, model_cliques)
        evidence = Evidence(model_cliques, *clique_measurements(releases, model_cliques, tied_idx),
                            pooled_n_records(releases), tied_idx)
        engine = make_inference(model_domain, model_cliques, self.inference)
        self.inference_ = "junction-tree" if isinstance(engine, JunctionTree) else "loopy"
        if self.inference == "auto" and self.inference_ == "loopy":  # decided from the graph and declared states
            warnings.warn("this model's junction tree has a clique above engine.DEFAULT_MAX_JT_CELLS cells: fitting "
                          "with loopy belief propagation (approximate; inference_ = 'loopy')", UserWarning, stacklevel=2)
        self.fit_settings_ = fit_settings(self.method, evidence, self.regularization, self.max_iter, self.tol)
        self._fit_core(engine, evidence, start_potentials(init, model_cliques, model_domain))
        self.releases_ = releases
        self.cliques_ = model_cliques
        self.tied_ = tied_idx
        self.n_records_ = evidence.n_records
        self.domain_ = model_domain
        self.model_ = fitted_network(model, model_domain, model_cliques, self.log_potentials_, engine)
        remember_fit(self.model_, self, self.model_.get_factors())
        return self


# -- helpers -------------------------------------------------------------------------------


def _check_param_types(est: PrivateMarkovEstimator) -> None:
    """The types ``_check_params``' comparisons rely on: a bool is an int, an array has no truth value."""
    for name in ("method", "inference"):
        value = getattr(est, name)
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, got {value!r} ({type(value).__name__})")
    for name, kind in (("max_iter", "a positive int or None"), ("tol", "a positive number"), ("regularization", "a number")):
        value = getattr(est, name)
        if (name == "regularization" and isinstance(value, str)) or (name == "max_iter" and value is None):
            continue  # "auto" (or refused by _check_params); the default budget
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be {kind}, got {value!r} ({type(value).__name__})")
        if name != "max_iter" and abs(value) > float(np.finfo(np.float64).max):
            raise ValueError(f"{name} must be a finite number, got an int of {len(str(abs(value)))} digits")


def _check_init(init, tied) -> None:
    if init is None:
        return
    if not isinstance(init, Mapping):
        raise TypeError(
            f"init must be a mapping from clique to log-potential array, such as "
            f"dict(zip(est.cliques_, est.log_potentials_)), got {type(init).__name__}"
        )
    if tied is not None:
        raise ValueError("init cannot be combined with tied (a shared potential has one start); drop one of them")


def _check_clique_args(cliques, tied) -> None:
    def is_clique(c) -> bool:
        return isinstance(c, str) or (isinstance(c, (list, tuple)) and len(c) > 0)

    if cliques is not None and not (isinstance(cliques, (list, tuple)) and all(is_clique(c) for c in cliques)):
        raise TypeError(
            f"cliques must be a list of tuples of node names such as [('a', 'b'), ('c',)], got {cliques!r}"
        )
    if tied is not None and not (
        isinstance(tied, (list, tuple))
        and all(isinstance(g, (list, tuple)) and g and all(is_clique(c) for c in g) for g in tied)
    ):
        raise TypeError(
            f"tied must be a list of groups of cliques such as [[('x1', 'x2'), ('x2', 'x3')]], got {tied!r}"
        )


def _check_model_type(model) -> None:
    from pgmpy.models import DiscreteMarkovNetwork

    if not isinstance(model, DiscreteMarkovNetwork):
        hint = (
            "; a Bayesian network's moral graph is model.to_markov_model(), or fit its CPDs with "
            "DiscretePrivateMLE"
            if hasattr(model, "get_parents")
            else ""
        )
        raise TypeError(
            f"model must be a pgmpy DiscreteMarkovNetwork, got {type(model).__name__}; build one with "
            f"DiscreteMarkovNetwork([...edges...]){hint}"
        )


def _model_cliques(model, cliques) -> list[tuple[str, ...]]:
    if cliques is not None:
        out = [(c,) if isinstance(c, str) else tuple(c) for c in cliques]
        for c in out:
            for u, v in itertools.combinations(c, 2):
                if not model.has_edge(u, v):
                    raise ValueError(f"clique {c} is not complete in the model: no edge {u!r} - {v!r}")
            unknown = [a for a in c if a not in model.nodes()]
            if unknown:
                raise ValueError(f"clique {c} names {unknown}, which are not nodes of the model")
    elif model.get_factors():
        out = [tuple(f.scope()) for f in model.get_factors()]
    else:
        out = [tuple(e) for e in model.edges()]
        out += [(v,) for v in model.nodes() if model.degree(v) == 0]
    uncovered = [v for v in model.nodes() if not any(v in c for c in out)]
    if uncovered:
        raise ValueError(f"node(s) {uncovered} are in no clique; add a singleton clique such as ({uncovered[0]!r},)")
    if not out:
        raise ValueError("the model has no nodes; build it with DiscreteMarkovNetwork([...edges...])")
    seen = set()
    for c in out:
        key = frozenset(c)
        if key in seen:
            raise ValueError(f"clique {c} is listed twice; each clique gets one potential")
        seen.add(key)
    return out


def _check_model_states(model, domain: Domain) -> None:
    for f in model.get_factors():
        for v in f.scope():
            states = tuple(f.state_names[v])
            if states != domain[v]:
                raise DomainError(
                    f"variable {v!r} has states {list(states)} in the model's factors but "
                    f"{list(domain[v])} in the release; re-release with the model's states or drop the factors"
                )


def _tied_indices(cliques, tied) -> list[list[int]] | None:
    if tied is None:
        return None
    index = {frozenset(c): i for i, c in enumerate(cliques)}
    out = []
    for group in tied:
        idx = []
        for c in group:
            c = (c,) if isinstance(c, str) else tuple(c)
            if frozenset(c) not in index:
                raise ValueError(f"tied clique {c} is not one of the model's cliques {cliques}")
            i = index[frozenset(c)]
            if cliques[i] != c:
                raise ValueError(
                    f"tied clique {c} is listed as {cliques[i]} in the model; tied cliques are matched axis by "
                    "axis, so give them in the model's attribute order"
                )
            idx.append(i)
        out.append(idx)
    return out


def _release_requests(cliques, tied_idx) -> list:
    """The tables ``fit`` releases: one pooled table per tied group, then each untied clique."""
    if not tied_idx or all(len(g) < 2 for g in tied_idx):
        return list(cliques)
    from ..tables.pooled import Pooled

    pooled = [g for g in tied_idx if len(g) > 1]
    in_pool = {i for g in pooled for i in g}
    return [Pooled([cliques[i] for i in g]) for g in pooled] + [c for i, c in enumerate(cliques) if i not in in_pool]


def _check_per_table_budget(budget, requests, cliques) -> None:
    """A per-table budget list must follow the released tables, which tying pools: say so before anything is spent."""
    if len(requests) == len(cliques) or isinstance(budget, (str, bytes)) or not isinstance(budget, Sequence):
        return  # a total, or one per clique as without pooling: the release checks the rest
    if len(budget) != len(requests):
        names = [list(r.members) if hasattr(r, "members") else r for r in requests]
        raise ValueError(
            f"got {len(budget)} per-table budgets, but with tied= the release has {len(requests)} tables (one pooled "
            f"table per tied group, then the untied cliques): {names}; give a total or one per table in that order"
        )


def _check_tied_states(domain: Domain, cliques, tied_idx) -> None:
    """Tied cliques share one potential, so their states must agree position by position."""
    for g in tied_idx or []:
        first = cliques[g[0]]
        for i in g[1:]:
            for a, b in zip(first, cliques[i]):
                if tuple(domain[a]) != tuple(domain[b]):
                    raise DomainError(
                        f"tied cliques {first} and {cliques[i]} differ in states: {a!r} has {list(domain[a])} but "
                        f"{b!r} has {list(domain[b])}; tied potentials are matched position by position, so declare "
                        "the same states for both (domain=...) or untie them"
                    )


def fitted_network(model, domain: Domain, cliques, theta, engine):
    """The ``DiscreteMarkovNetwork`` of ``model``'s nodes and edges with one factor per clique from the
    log-potentials ``theta`` (``engine`` normalizes them); a saved model's estimator is rebuilt with it too."""
    from pgmpy.factors.discrete import DiscreteFactor
    from pgmpy.models import DiscreteMarkovNetwork

    fitted = DiscreteMarkovNetwork()
    fitted.add_nodes_from(model.nodes())
    fitted.add_edges_from(model.edges())
    # The floor keeps products of a few factors above underflow (pgmpy's BP would divide 0 by 0); -log Z is
    # spread over the factors so the total mass is 1, as pgmpy's BeliefPropagation tests calibration to an
    # absolute 1e-8, which a tiny total mass passes before any message (wrong answers).
    shifted = [np.maximum(t - np.max(t), _LOG_POTENTIAL_FLOOR) for t in theta]
    _, log_z = engine.marginals(shifted)
    factors = []
    for c, t in zip(cliques, shifted):
        values = np.exp(t - log_z / len(cliques))
        factors.append(
            DiscreteFactor(list(c), list(t.shape), values.ravel(), state_names={a: list(domain[a]) for a in c})
        )
    fitted.add_factors(*factors)
    fitted.check_model()
    return fitted


def _unit_kwargs(data, privacy_unit) -> dict:
    """The privacy unit of the release made from a DataFrame, checked before anything is spent."""
    if privacy_unit is not None and not isinstance(data, pd.DataFrame):
        raise ValueError(
            "privacy_unit only applies when fitting from a DataFrame (it shapes the release it makes); a "
            "release records its own privacy unit"
        )
    bound = contribution_bound(privacy_unit, privacy_unit is not None)
    refuse_skip_state(None if bound is None else bound.skip_state)
    return dict(privacy_unit=privacy_unit)


def _given_releases(data, epsilon, rho, budget) -> list:
    """The published releases a fit reads (post-processing: no loss or budget may come with them)."""
    releases = [data] if isinstance(data, MarginalRelease) else data
    if (
        not isinstance(releases, (list, tuple))
        or not releases
        or not all(isinstance(r, MarginalRelease) for r in releases)
    ):
        raise TypeError(
            "data must be a MarginalRelease, a non-empty list of MarginalRelease or a pandas DataFrame, "
            f"got {type(data).__name__}"
        )
    if epsilon is not None or rho is not None or budget is not None:
        raise ValueError(
            "epsilon, rho and budget only apply when fitting from a DataFrame; a release has already "
            "spent its budget"
        )
    return list(releases)
