"""Differentially private CPDs for a Bayesian network with a known DAG.

[`DiscretePrivateMLE`][pgmpy_dp.estimators.bayesian.DiscretePrivateMLE] is one of pgmpy's parameter
estimators: ``DiscreteBayesianNetwork(edges).fit(df, estimator=DiscretePrivateMLE(epsilon=1.0))``.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)  # pgmpy 1.1 deprecation notices on import
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.parameter_estimator.base import BaseParameterEstimator, DiscreteParameterEstimator

from .._blas import single_threaded_blas
from .._progress import ProgressCallback
from ..engine import ConvergenceWarning
from ..privacy.budget import PrivacyBudget
from ..privacy.domain import Domain, DomainError, read_domain
from ..privacy.loss import PureDP, ZCDP, privacy_loss
from ..privacy.parameters import check_positive
from ..privacy.random_state import check_random_state
from ..tables.artifact import MarginalRelease
from ..tables.contribution import contribution_bound, encode_units
from ..tables.release import release_from_codes
from .fitted import remember_fit
from .allocation import (
    allocation_weights,
    amplified_epsilon,
    error_optimal_allocation,
    node_heights,
    optimal_allocation,
    out_degrees,
    parameter_error,
    parameter_sensitivity,
)
from .conditionals import cpd_values
from . import likelihood
from .consistency import project_consistent
from .evidence import pooled_n_records, refuse_skip_state, released_domain
from .likelihood import (
    BN_DIRICHLET_SPREAD,
    BN_WEIGHT_CAP,
    DEFAULT_MAX_ITER,
    WideNetworkWarning,
    noise_excess,
    dirichlet_pseudo_count,
    exact_tree_cells,
    fit_family_tables,
    is_network_model,
    measurement_for,
    model_cliques,
    noise_regularization,
)
from .local import LOCAL_MAX_ITER, MAX_LOCAL_CELLS, fit_families_locally

_ALLOCATIONS = ("optimal", "data-dependent", "uniform")
_CONSISTENCY = ("likelihood", "projection")


class DiscretePrivateMLE(DiscreteParameterEstimator):
    """Differentially private CPDs of a Bayesian network from noisy family tables.

    One noisy table per family (a node and its parents) is released, then the CPDs are read off
    the model that makes all noisy tables most likely (docs/bayesian.md). The privacy loss is a
    hyper-parameter because pgmpy calls ``fit`` itself (docs/privacy.md, "Where the loss goes").

    Parameters
    ----------
    epsilon : float or PrivacyLoss, optional
        Total privacy budget; required to fit from a DataFrame. A loss value may stand for either keyword.
    allocation : {"optimal", "data-dependent", "uniform"}
        Split of the budget over the family tables:
        [`error_optimal_allocation`][pgmpy_dp.estimators.allocation.error_optimal_allocation];
        Roy Chowdhury et al. (2020), Algorithm 2; or ``epsilon / n`` per table.
    stage1_fraction, sample_rate : float
        The data-dependent allocation's stage-I share of ``epsilon`` and subsampling rate.
    consistency : {"likelihood", "projection"}
        CGM-EM over the network under a Dirichlet prior
        ([`fit_family_tables`][pgmpy_dp.estimators.likelihood.fit_family_tables]), or the
        weighted least-squares projection
        ([`project_consistent`][pgmpy_dp.estimators.consistency.project_consistent]). On a network
        whose junction tree is too large, ``"likelihood"`` fits family by family
        ([`fit_families_locally`][pgmpy_dp.estimators.local.fit_families_locally]) and warns
        (``WideNetworkWarning``).
    domain : dict or Domain, optional
        Public states of the columns that are not categorical.
    random_state : int or numpy.random.Generator, optional
        Seed for subsampling and noise, for reproducible experiments only.
    budget : PrivacyBudget, optional
        Charged once before any noise is drawn; refunded if the fit fails before that.
    max_iter : int, optional
        CGM-EM iterations: ``None`` runs a fixed budget silently; a number warns if CGM-EM has not converged.
    show_progress : bool
        Progress bars over counting and CGM-EM.
    rho : float, optional, keyword only
        Instead of ``epsilon``: a zCDP budget (discrete Gaussian noise); not with the data-dependent allocation.
    privacy_unit : UserLevel or column label, optional, keyword only
        Individual-level privacy (``pgmpy_dp.UserLevel``; a column label means ``UserLevel(column)``).
        A ``skip_state`` is refused.
    prior_strength : float, keyword only
        Multiplies the weight of the ``"likelihood"`` fit's prior (below 1: closer to the noisy tables).

    Attributes
    ----------
    parameters_ : list of TabularCPD
        The private CPDs, in the model's node order.
    loss_ : PureDP, ZCDP or None
        The privacy loss the fit spent, as a value (``None`` for a fit from releases).
    model_ : DiscreteBayesianNetwork
        The network fitted; it stands for this estimator in ``pgmpy_dp.query`` and ``query_interval``.
    state_names_ : dict
        The public domain used, ``{variable: [states]}``.
    release_ : MarginalRelease or list of MarginalRelease
        The noisy family tables (or the releases a fit from releases was given).
    allocation_, node_stats_ : pandas.Series or None, pandas.DataFrame
        Stage-II budget per node, and what the allocation used per node.
    stage1_epsilon_, stage1_release_ : float, MarginalRelease or None
        The data-dependent allocation's stage-I spend and noisy tables (0 and None otherwise).
    n_iter_, converged_ : int or None, bool or None
        EM iterations of the ``"likelihood"`` fit and whether it met its tolerance.
    consistency_ : str
        What the fit used: ``"likelihood"``, ``"local-likelihood"`` (family by family) or ``"projection"``.

    Examples
    --------
    >>> import pgmpy_dp
    >>> from pgmpy.models import DiscreteBayesianNetwork
    >>> df = pgmpy_dp.datasets.sample_network("asia", 5000, seed=0)
    >>> model = DiscreteBayesianNetwork(pgmpy_dp.datasets.load_network("asia").edges())
    >>> model = model.fit(df, estimator=DiscretePrivateMLE(epsilon=1.0, random_state=0))
    >>> model.check_model()
    True
    >>> pgmpy_dp.query(model, ["lung"], evidence={"smoke": "yes"}).values.shape
    (2,)
    """

    _tags = {"supports_latent_variables": False, "supports_weighted_data": False}

    def __init__(
        self,
        epsilon: float | None = None,
        allocation: str = "optimal",
        stage1_fraction: float = 0.1,
        sample_rate: float = 0.1,
        consistency: str = "likelihood",
        domain: dict | Domain | None = None,
        random_state=None,
        budget: PrivacyBudget | None = None,
        max_iter: int | None = None,
        show_progress: bool = False,
        *,
        rho: float | None = None,
        privacy_unit=None,
        prior_strength: float = 1.0,
    ) -> None:
        self.epsilon = epsilon
        self.allocation = allocation
        self.stage1_fraction = stage1_fraction
        self.sample_rate = sample_rate
        self.consistency = consistency
        self.domain = domain
        self.random_state = random_state
        self.budget = budget
        self.max_iter = max_iter
        self.show_progress = show_progress
        self.rho = rho
        self.privacy_unit = privacy_unit
        self.prior_strength = prior_strength
        # pgmpy's base stores a state_names argument; the public states here are ``domain``
        BaseParameterEstimator.__init__(self)

    # -- validation --------------------------------------------------------------------
    def _check_params(self):
        """The fit's loss as a value, after every check that needs no data."""
        loss = privacy_loss(
            self.epsilon, self.rho, who="a DiscretePrivateMLE fit from a DataFrame",
            example="DiscretePrivateMLE(epsilon=1.0), or rho=0.5 for Gaussian noise (a fit from a MarginalRelease needs none)",
            with_delta=False,
        )
        if not isinstance(loss, PureDP) and self.allocation == "data-dependent":
            raise ValueError(
                "rho= (Gaussian noise, zCDP) needs allocation='optimal' or 'uniform': the data-dependent "
                "allocation's stage I relies on pure-DP subsampling amplification; or give epsilon= instead"
            )
        self._check_method_params()
        bound = contribution_bound(self.privacy_unit, self.privacy_unit is not None)
        refuse_skip_state(None if bound is None else bound.skip_state)  # skipped tables do not measure the CPDs' p(x)
        if self.budget is not None and not isinstance(self.budget, PrivacyBudget):
            raise TypeError(f"budget must be a pgmpy_dp.PrivacyBudget, got {type(self.budget).__name__}")
        if self.budget is not None:
            self.budget.require(loss, who="DiscretePrivateMLE")
        return loss

    def _check_method_params(self) -> None:
        # type first: an array or Series would make `in` and `<` ambiguous or elementwise
        if not isinstance(self.allocation, str) or self.allocation not in _ALLOCATIONS:
            raise ValueError(f"allocation must be one of {_ALLOCATIONS}, got {self.allocation!r}")
        if not isinstance(self.consistency, str) or self.consistency not in _CONSISTENCY:
            raise ValueError(f"consistency must be one of {_CONSISTENCY}, got {self.consistency!r}")
        if self.domain is not None and not isinstance(self.domain, (Mapping, Domain, str, os.PathLike)):
            raise TypeError(
                f"domain must be a dict {{column: [states]}}, a pgmpy_dp.Domain or the path of a schema file, "
                f"got {type(self.domain).__name__}"
            )
        check_positive(self.prior_strength, "prior_strength", "1 (the prior the noise calls for)")
        for name, value, closed in (("stage1_fraction", self.stage1_fraction, False), ("sample_rate", self.sample_rate, True)):
            number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
            if not number or not (0 < value and (value <= 1 if closed else value < 1)):
                upper = "1]" if closed else "1)"
                raise ValueError(f"{name} must be a number in (0, {upper}, got {value!r}; the paper uses 0.1")
        if self.max_iter is not None and (
            isinstance(self.max_iter, bool) or not isinstance(self.max_iter, (int, np.integer)) or self.max_iter < 1
        ):
            raise ValueError(f"max_iter must be a positive integer or None (the default {DEFAULT_MAX_ITER}), got {self.max_iter!r}")

    def _declared(self) -> dict:
        """``domain`` as ``{column: [states]}`` (empty when none was given)."""
        domain = read_domain(self.domain)
        if isinstance(domain, Domain):
            return domain.to_dict()
        return dict(domain or {})

    # -- fitting -----------------------------------------------------------------------
    def fit(self, model, data, sample_weight=None) -> DiscretePrivateMLE:
        """Estimate private CPDs of ``model`` from ``data``; see the class docstring.

        Parameters
        ----------
        model : pgmpy.base.DAG or pgmpy.models.DiscreteBayesianNetwork
            The public structure. Every node must be a column of ``data``.
        data : pandas.DataFrame, MarginalRelease or list of MarginalRelease
            The private records, one per row, with a public domain per column;
            or published releases (see [`fit_release`][pgmpy_dp.estimators.bayesian.DiscretePrivateMLE.fit_release]).
        sample_weight : None
            Not supported: the privacy unit is one row.

        Returns
        -------
        self
        """
        if isinstance(data, MarginalRelease) or (
            isinstance(data, (list, tuple)) and data and all(isinstance(r, MarginalRelease) for r in data)
        ):
            if sample_weight is not None:
                raise ValueError("sample_weight does not apply to a fit from releases; leave it None")
            return self.fit_release(model, data)
        loss = self._check_params()
        if sample_weight is not None:
            raise ValueError(
                "sample_weight is not supported by DiscretePrivateMLE: the privacy unit is one row "
                "and weights would change the sensitivity; repeat or drop rows instead"
            )
        if not isinstance(data, pd.DataFrame):
            raise TypeError(
                f"data must be a MarginalRelease, a list of them or a pandas DataFrame, got {type(data).__name__}"
            )
        model = self._check_model(model, data)
        if len(data) == 0:
            raise ValueError("the DataFrame is empty; a private fit needs at least one record")
        units = self._units(model, data)
        nodes = list(model.nodes())
        parents = {n: sorted(model.get_parents(n)) for n in nodes}
        families = [(n, *parents[n]) for n in nodes]
        domain = Domain.from_dataframe(data, nodes, self.domain)
        for fam in families:
            domain.check_table(fam)
        self.consistency_ = self._route(domain, families)  # public facts only, before anything is charged
        codes = domain.encode(data, nodes)
        rng = check_random_state(self.random_state)

        label = f"DiscretePrivateMLE({self.allocation}) of {len(nodes)} CPDs"
        if self.budget is not None:
            with self.budget.charge(loss, label=label) as charge:
                self._fit_codes(codes, domain, families, parents, loss, rng, noise_drawn=charge.commit, units=units)
        else:
            self._fit_codes(codes, domain, families, parents, loss, rng, units=units)
        self.loss_ = loss
        self._model = self.model_ = model  # pgmpy's base class sorts the CPDs by self._model
        self.state_names_ = {n: list(domain[n]) for n in nodes}
        self.parameters_ = self._sort_parameters(self._cpds(domain, families))
        remember_fit(model, self, self.parameters_)
        return self

    def fit_release(self, model, releases) -> DiscretePrivateMLE:
        """CPDs of ``model`` from published releases: post-processing only, nothing is spent.

        Every table over nodes of ``model`` is evidence, each with its own noise scale.
        ``model.fit(release, estimator=est)`` calls this; ``epsilon``, ``allocation`` and ``budget``
        play no part.

        Parameters
        ----------
        model : pgmpy.base.DAG or pgmpy.models.DiscreteBayesianNetwork
            The public structure; every node must be an attribute of some release.
        releases : MarginalRelease or sequence of MarginalRelease
            The published tables.

        Returns
        -------
        self

        Examples
        --------
        >>> import pgmpy_dp
        >>> from pgmpy.models import DiscreteBayesianNetwork
        >>> df = pgmpy_dp.datasets.sample_network("asia", 2000, seed=0)
        >>> model = DiscreteBayesianNetwork([("smoke", "lung"), ("smoke", "bronc")])
        >>> r1 = df.dp.release([("lung", "smoke"), ("bronc", "smoke")], epsilon=0.5, random_state=1)
        >>> r2 = df.dp.release(["smoke", ("lung", "smoke")], epsilon=1.0, random_state=2)
        >>> est = DiscretePrivateMLE().fit_release(model, [r1, r2])
        >>> len(est.parameters_), est.budget is None
        (3, True)
        """
        from pgmpy.base import DAG

        self._check_method_params()
        if self.privacy_unit is not None:
            raise ValueError(
                "privacy_unit applies to a fit from a DataFrame (it shapes the release the fit makes); a release "
                "records its own privacy unit: leave privacy_unit None"
            )
        if self.consistency != "likelihood":
            raise ValueError(
                f"a fit from releases uses consistency='likelihood' (got {self.consistency!r}): the "
                "released tables need not be one per family"
            )
        releases = [releases] if isinstance(releases, MarginalRelease) else list(releases)
        bad = [type(r).__name__ for r in releases if not isinstance(r, MarginalRelease)]
        if not releases or bad:
            raise TypeError(f"releases must be a MarginalRelease or a non-empty list of them, got {bad or releases}")
        if not isinstance(model, DAG):
            raise TypeError(f"model must be a pgmpy DAG or DiscreteBayesianNetwork, got {type(model).__name__}")
        if len(model.nodes()) == 0:
            raise ValueError("the model has no nodes; add edges or nodes before fitting")
        released = released_domain(releases, model.nodes())  # one rule for both estimators
        nodes = list(model.nodes())
        declared = self._declared()
        for n in nodes:
            if n in declared and list(declared[n]) != list(released[n]):
                raise DomainError(
                    f"node {n!r}: the declared states {list(declared[n])} differ from the release's "
                    f"{list(released[n])}; the release's domain is the one its counts use"
                )
        domain = released.project(nodes)
        node_set = set(nodes)
        pooled = [t.key for r in releases for t in r if t.members is not None]
        if pooled:
            # a Bayesian network has no tied parameters: a pooled table is evidence about no single family
            warnings.warn(
                f"DiscretePrivateMLE ignores the pooled table(s) {pooled}: a Bayesian network's CPDs are not "
                "tied; release the member tables separately to use them (or fit a PrivateMarkovEstimator with tied=)",
                UserWarning,
                stacklevel=2,
            )
        tables = [t for r in releases for t in r if t.members is None and set(t.attrs) <= node_set]
        uncovered = [n for n in nodes if not any(n in t.attrs for t in tables)]
        if uncovered:
            raise DomainError(f"model node(s) {uncovered} appear in no released table; release tables over them")
        parents = {n: sorted(model.get_parents(n)) for n in nodes}
        families = [(n, *parents[n]) for n in nodes]
        for fam in families:
            domain.check_table(fam)
        self.consistency_ = self._route(domain, model_cliques(families, [t.attrs for t in tables]))
        n_records = pooled_n_records(releases)  # the declared count, else the pooled noisy totals (>= 1)
        self._tables = self._likelihood_tables(domain, families, tables, n_records)
        self.stage1_epsilon_, self.stage1_release_, self.allocation_ = 0.0, None, None
        self.loss_ = None  # post-processing: nothing spent
        self.release_ = releases[0] if len(releases) == 1 else releases
        self.node_stats_ = pd.DataFrame(index=pd.Index(nodes, name="node"))
        self._model = self.model_ = model  # pgmpy's base class sorts the CPDs by self._model
        self.state_names_ = {n: list(domain[n]) for n in nodes}
        self.parameters_ = self._sort_parameters(self._cpds(domain, families))
        remember_fit(model, self, self.parameters_)
        return self

    def _route(self, domain: Domain, cliques) -> str:
        """``consistency_``: the projection, the exact likelihood fit, or the per-family one when its junction tree is too large."""
        if self.consistency == "projection":
            return "projection"
        largest, total = exact_tree_cells(domain, cliques)
        if largest <= likelihood.MAX_CLIQUE_CELLS and total <= likelihood.MAX_EXACT_CELLS:
            return "likelihood"
        if largest > likelihood.MAX_CLIQUE_CELLS:
            reason = (f"a junction-tree clique of {largest:,} cells (limit likelihood.MAX_CLIQUE_CELLS = "
                      f"{likelihood.MAX_CLIQUE_CELLS:,})")
        else:
            reason = (f"a junction tree of {total:,} cells in all, calibrated hundreds of times (limit "
                      f"likelihood.MAX_EXACT_CELLS = {likelihood.MAX_EXACT_CELLS:,})")
        cpd_cells = sum(domain.cells(c) for c in cliques)
        if cpd_cells > MAX_LOCAL_CELLS:
            raise ValueError(
                f"the model's tables hold {cpd_cells:,} cells in all, above the {MAX_LOCAL_CELLS:,} the per-family fit "
                f"keeps in memory, and its exact fit needs {reason}; declare fewer states (coarser bins) or fewer "
                "parents per node"
            )
        warnings.warn(
            f"the exact likelihood fit of this network needs {reason}; fitting each CPD to its own noisy family "
            "table under the same prior instead (consistency_ = 'local-likelihood'); see docs/bayesian.md",
            WideNetworkWarning,
            stacklevel=3,
        )
        return "local-likelihood"

    def _likelihood_tables(self, domain, families, tables, n_records):
        max_iter = DEFAULT_MAX_ITER if self.max_iter is None else int(self.max_iter)
        strength = float(self.prior_strength)
        weight = strength * noise_regularization(tables, n_records, cap=BN_WEIGHT_CAP) / n_records
        if getattr(self, "consistency_", "likelihood") == "local-likelihood":
            local_iter = LOCAL_MAX_ITER if self.max_iter is None else int(self.max_iter)
            return self._local_tables(domain, families, tables, n_records, weight, local_iter)
        naive = noise_excess(tables, n_records) / n_records
        prior, runs = dict(prior="gaussian"), 1
        # the Dirichlet prior's closed-form M-step needs the model to be the network itself; else the Gaussian prior
        if is_network_model(families, [t.attrs for t in tables]):
            # where the noise swamps the tables (the cap binds), CGM-EM runs from two starts and keeps the better
            runs = 2 if noise_regularization(tables, n_records) > BN_WEIGHT_CAP else 1
            prior = dict(prior="dirichlet", dirichlet_spread=BN_DIRICHLET_SPREAD, warm_start=("mle", "best")[runs - 1])
        bar = ProgressCallback(self.show_progress, runs * max_iter, "CGM-EM (BN families)")
        try:
            fit = fit_family_tables(
                domain, families, [measurement_for(t) for t in tables], n_records,
                regularization=weight, naive_regularization=naive, max_iter=max_iter, callback=bar.callback, **prior,
            )
        finally:
            bar.close()
        self.n_iter_, self.converged_ = fit.n_iter, fit.converged
        # the default fixed budget does not warn; a max_iter the user chose is a request to converge
        if not fit.converged and self.max_iter is not None:
            warnings.warn(
                f"CGM-EM of the likelihood fit stopped at max_iter={max_iter} iterations with the EM "
                f"objective still changing by {fit.tolerance:.1e} (relative) per iteration, above its "
                "tolerance 1e-6; the CPDs are the last iterate; raise max_iter for a closer fit",
                ConvergenceWarning,
                stacklevel=2,
            )
        return fit.tables

    def _local_tables(self, domain, families, tables, n_records, weight, max_iter):
        """The per-family likelihood fit, with the pseudo-count the exact fit's Dirichlet prior would use."""
        pseudo_count = dirichlet_pseudo_count(weight * n_records / BN_DIRICHLET_SPREAD**2)
        bar = ProgressCallback(self.show_progress, max_iter, "EM (BN families, one by one)")
        try:
            fit = fit_families_locally(domain, families, [measurement_for(t) for t in tables], n_records,
                                       pseudo_count, max_iter=max_iter, callback=bar.callback)
        finally:
            bar.close()
        self.n_iter_, self.converged_ = fit.n_iter, fit.converged
        return fit.tables

    def _check_model(self, model, data):
        from pgmpy.base import DAG

        if not isinstance(model, DAG):
            raise TypeError(f"model must be a pgmpy DAG or DiscreteBayesianNetwork, got {type(model).__name__}")
        missing = sorted(set(model.nodes()) - set(model.latents) - set(data.columns))
        if missing:
            raise DomainError(
                f"model node(s) {missing} are not columns of the data (columns: {list(data.columns)}); "
                "add the columns or remove the nodes from the model"
            )
        model, _ = self._validate_inputs(model, data)  # pgmpy's checks: type, latents
        if len(model.nodes()) == 0:
            raise ValueError("the model has no nodes; add edges or nodes before fitting")
        return model

    def _units(self, model, data: pd.DataFrame) -> np.ndarray | None:
        """Integer codes of the individuals (``privacy_unit``), or None for record-level privacy."""
        if self.privacy_unit is None:
            return None
        column = contribution_bound(self.privacy_unit).column
        if column in list(model.nodes()):
            raise DomainError(
                f"privacy_unit column {column!r} is a model node; the individual's identifier is never "
                "released: remove it from the model"
            )
        if column not in data.columns:
            raise DomainError(
                f"privacy_unit {column!r} is not a column of the data (columns: {list(data.columns)}); "
                "name the column that identifies the individual"
            )
        if column in self._declared():
            raise DomainError(
                f"privacy_unit column {column!r} is declared in domain; it has no public states: remove it"
            )
        return encode_units(data[column], column)

    def _fit_codes(self, codes, domain, families, parents, loss, rng, noise_drawn=lambda: None, units=None) -> None:
        """Both stages and the consistency step; ``noise_drawn()`` runs once the first noisy table exists.

        From then on every failure (a stage-II scale refused because of the stage-I allocation,
        a solver error) is a function of noisy output, so the charge must stay spent.
        """
        nodes = [f[0] for f in families]
        measured = families
        n = len(measured)
        gaussian = not isinstance(loss, PureDP)
        kind = ZCDP if gaussian else PureDP
        total = loss.rho if gaussian else loss.epsilon  # the budget the allocation splits
        if self.allocation in ("uniform", "optimal"):
            self.stage1_epsilon_ = 0.0
            self.stage1_release_ = None
            cells = np.array([domain.cells(f) for f in measured], dtype=np.float64)
            stage2 = [total / n] * n if self.allocation == "uniform" else list(error_optimal_allocation(cells, loss))
            stats = pd.DataFrame({"cells": [domain.cells(f) for f in families]}, index=pd.Index(nodes, name="node"))
        else:
            beta = float(self.sample_rate)
            self.stage1_epsilon_ = total * float(self.stage1_fraction)
            sampler = rng if rng is not None else np.random.default_rng()
            if units is None:
                keep = sampler.random(len(next(iter(codes.values())))) < beta
            else:  # individual-level: Poisson-subsample individuals, so amplification holds for them
                keep = (sampler.random(int(units.max()) + 1) < beta)[units]
            eps_sub = amplified_epsilon(self.stage1_epsilon_, beta)
            if keep.any():  # count the subsample alone: a tenth of the rows, a tenth of the work
                sub, weights = {a: c[keep] for a, c in codes.items()}, None
                sub_units = None if units is None else units[keep]
            else:  # an empty subsample is a valid (all-zero) input; count it with zero weights
                sub, weights, sub_units = codes, keep.astype(np.float64), units
            self.stage1_release_ = release_from_codes(
                sub, domain, families, PureDP(eps_sub), random_state=rng, label="stage I", weights=weights,
                show_progress=self.show_progress, **self._unit_args(sub_units),
            )
            noise_drawn()
            # floor the 1/C^2 terms at the stage-I noise level, or one empty parent configuration takes the budget
            error = np.array([parameter_error(t.values, scale_to=1.0 / beta, min_count=math.sqrt(t.variance) / beta)
                              for t in self.stage1_release_])
            node_weights = allocation_weights(parents, domain)
            w = np.array([node_weights[v] for v in nodes])
            stage2 = optimal_allocation(w * error, total - self.stage1_epsilon_)
            stats = pd.DataFrame(
                {
                    "height": pd.Series(node_heights(parents)),
                    "out_degree": pd.Series(out_degrees(parents)),
                    "parameter_sensitivity": pd.Series(parameter_sensitivity(parents, domain)),
                    "weight": pd.Series(node_weights),
                    "error": pd.Series(error, index=nodes),
                }
            ).loc[nodes].rename_axis("node")
        self.release_ = release_from_codes(
            codes, domain, measured, [kind(e) for e in stage2], random_state=rng, show_progress=self.show_progress,
            **self._unit_args(units),
        )
        noise_drawn()
        unit = "rho" if gaussian else "epsilon"
        spent = {t.attrs[0]: getattr(t, unit) for t in self.release_}  # a family not released spent nothing
        self.allocation_ = pd.Series([spent.get(v, 0.0) for v in nodes], index=pd.Index(nodes, name="node"), name=unit)
        stats[unit] = self.allocation_
        self.node_stats_ = stats
        self._tables = self.family_tables([self.release_], domain, families)

    def _unit_args(self, units) -> dict:
        """release_from_codes' privacy unit, as a value, and the individuals' codes (none for record-level privacy)."""
        if units is None:
            return {}
        return dict(unit=contribution_bound(self.privacy_unit), units=units)

    def family_tables(self, releases: list[MarginalRelease], domain: Domain, families) -> list[np.ndarray]:
        """The consistency step alone: family marginals (counts, axes in family order) from noisy releases.

        ``"likelihood"`` fits every table of every release; ``"projection"`` projects the tables
        of the first release. Post-processing: it spends nothing.

        Examples
        --------
        >>> import pandas as pd
        >>> import pgmpy_dp
        >>> df = pd.DataFrame({"a": [0, 1, 1, 0] * 25, "b": [0, 1, 0, 0] * 25})
        >>> public = {"a": [0, 1], "b": [0, 1]}
        >>> rel = df.dp.release([("a",), ("b", "a")], epsilon=1.0, domain=public, random_state=0)
        >>> est = DiscretePrivateMLE(consistency="projection")
        >>> a, ba = est.family_tables([rel], pgmpy_dp.Domain(public), [("a",), ("b", "a")])
        >>> bool(abs(ba.sum(axis=0) - a).max() < 1e-6)   # the family tables agree on "a"
        True
        """
        self.n_iter_ = self.converged_ = None
        if self.consistency == "likelihood":
            tables = [t for r in releases for t in r]
            return self._likelihood_tables(domain, families, tables, pooled_n_records(releases))
        release = releases[0]
        with single_threaded_blas():  # the active-set polish is LSQR: many tiny BLAS calls
            return project_consistent([t.attrs for t in release], [t.values for t in release], [t.variance for t in release])

    def _cpds(self, domain: Domain, families) -> list[TabularCPD]:
        cpds = []
        for fam, table in zip(families, self._tables):
            node, *pa = fam
            cpds.append(TabularCPD(node, domain.size(node), cpd_values(table), evidence=pa or None,
                                   evidence_card=[domain.size(p) for p in pa] or None,
                                   state_names={v: list(domain[v]) for v in fam}))
        return cpds
