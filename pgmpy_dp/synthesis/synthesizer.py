"""From a private table to a private model and synthetic data in one call: [`PrivateSynthesizer`][pgmpy_dp.synthesis.synthesizer.PrivateSynthesizer].

It checks its parameters and schema, lets its method (`METHODS`) check a plan from public facts, charges
the budget once and runs the method ([`pgmpy_dp.synthesis.method`][pgmpy_dp.synthesis.method]).
"""

from __future__ import annotations

import math
import numbers

import pandas as pd
from skbase.base import BaseObject

from ..privacy.budget import PrivacyBudget
from ..privacy.domain import Domain
from ..privacy.loss import PureDP, privacy_loss
from ..privacy.random_state import check_random_state
from ..sampling import sample as sample_model
from .aim import AIM
from .frames import frame_counter, frame_domain
from .method import Measurements, Method
from .mst import MST
from .privbayes import PRIVBAYES

#: The selection methods, by name (each a [`Method`][pgmpy_dp.synthesis.method.Method]).
METHODS: dict[str, Method] = {m.name: m for m in (AIM, MST, PRIVBAYES)}
_FITTED = ("model_", "releases_", "selected_", "loss_", "rho_", "epsilon_", "domain_", "n_rounds_")


class PrivateSynthesizer(BaseObject):
    """Learn a private graphical model of a whole table, without a known graph, and sample from it.

    ``fit`` spends the whole budget once: it measures noisy marginals chosen from noisy answers only and
    fits a pgmpy model to them. The model answers queries (``pgmpy_dp.query``; ``pgmpy_dp.query_interval``
    too, except for an MST model whose rare states were merged) and ``sample`` draws synthetic records;
    both spend nothing. Accuracy: docs/synthesis.md and docs/benchmarks.md.

    The privacy loss is a hyper-parameter (``epsilon=`` with ``delta=``, or ``rho=``, given here,
    not to ``fit``): one configured fit of one table spends it all (the rule of docs/privacy.md,
    "Where the loss goes"). ``loss_`` is what it spent.

    Parameters
    ----------
    epsilon : float, optional
        The (epsilon, delta)-DP budget's epsilon; ``"aim"`` and ``"mst"`` (zCDP methods, converted by
        the tight conversion) need ``delta`` too, ``"privbayes"`` also takes a pure-DP epsilon alone.
    rho : float, optional, keyword only
        A zCDP budget instead of ``epsilon``.
    delta : float, optional, keyword only
        The delta that goes with ``epsilon``.
    method : {"aim", "mst", "privbayes"}
        ``"aim"`` (McKenna, Mullins, Sheldon and Miklau 2022): adaptive selection of the workload
        marginals the current model answers worst. ``"mst"`` (McKenna, Miklau and Sheldon 2021):
        1-way marginals, a private maximum spanning tree and its 2-way marginals. ``"privbayes"``
        (Zhang et al. 2017): a greedy Bayesian network of bounded in-degree.
    workload : list of tuple of str, or list of (tuple of str, float), optional
        ``"aim"`` only: the marginals that matter, optionally weighted. Default: every 3-way
        marginal of at most 10,000 cells.
    max_model_size : float
        ``"aim"`` only: the largest model, in megabytes of junction-tree cells (float64).
    budget : PrivacyBudget, optional
        Accountant charged once with the whole amount before any noise is drawn.
    random_state : int or numpy.random.Generator, optional
        Seed for reproducible *experiments only*; ``None`` uses OpenDP's exact samplers.
    show_progress : bool
        Show progress bars.

    Attributes
    ----------
    model_ : DiscreteMarkovNetwork or DiscreteBayesianNetwork
        The fitted model (a Bayesian network for ``"privbayes"``).
    releases_ : list of MarginalRelease
        The noisy measurements, publishable as JSON. Kept even when the fit fails after its
        first noise: with the charge, the releases the budget paid for stay.
    selected_ : list of tuple of str
        The marginals chosen, in order (``"privbayes"``: the ``(node, parents)`` families, the
        first drawn without the data); kept like ``releases_`` when the fit fails.
    loss_ : PureDP, ZCDP or ApproxDP
        The privacy loss spent (``pgmpy_dp.privacy.loss``).
    rho_ : float or None
        The zCDP budget spent (None for a pure-epsilon ``"privbayes"`` fit).
    epsilon_ : float or None
        The pure-DP budget spent (``"privbayes"`` with ``epsilon`` alone), else None.
    domain_ : Domain
        The public domain of the columns.
    n_rounds_ : int
        Number of marginals selected (AIM's rounds, MST's tree edges, PrivBayes's families).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 3000)
    >>> df = pd.DataFrame({"a": a, "b": a ^ (rng.random(3000) < 0.1), "c": rng.integers(0, 3, 3000)})
    >>> domain = {"a": [0, 1], "b": [0, 1], "c": [0, 1, 2]}
    >>> synth = PrivateSynthesizer(rho=1.0, method="mst", random_state=0, show_progress=False)
    >>> synth = synth.fit(df, domain=domain)
    >>> synth.selected_[0], len(synth.sample(5, random_state=0))
    (('a', 'b'), 5)
    """

    def __init__(
        self,
        epsilon=None,
        *,
        rho=None,
        delta=None,
        method: str = "aim",
        workload=None,
        max_model_size: float = 80.0,
        budget: PrivacyBudget | None = None,
        random_state=None,
        show_progress: bool = True,
    ) -> None:
        self.epsilon = epsilon
        self.rho = rho
        self.delta = delta
        self.method = method
        self.workload = workload
        self.max_model_size = max_model_size
        self.budget = budget
        self.random_state = random_state
        self.show_progress = show_progress
        super().__init__()

    def _method(self) -> Method:
        if not isinstance(self.method, str) or self.method not in METHODS:
            raise ValueError(f"method must be one of {tuple(METHODS)}, got {self.method!r}")
        return METHODS[self.method]

    def _settings(self, method: Method) -> dict:
        """The method's own settings; a setting another method reads is refused unless left at None."""
        if "workload" not in method.settings and self.workload is not None:
            raise ValueError(f"workload only applies to method='aim', not {self.method!r}; leave workload=None")
        size = self.max_model_size
        if isinstance(size, bool) or not isinstance(size, numbers.Real) or not (math.isfinite(size) and size > 0):
            raise ValueError(f"max_model_size must be a positive number of megabytes, got {size!r}; e.g. 80")
        return {name: getattr(self, name) for name in method.settings}

    def _check_params(self) -> None:
        if self.budget is not None and not isinstance(self.budget, PrivacyBudget):
            raise TypeError(f"budget must be a pgmpy_dp.PrivacyBudget or None, got {type(self.budget).__name__}")
        if not isinstance(self.show_progress, bool):
            raise TypeError(f"show_progress must be True or False, got {self.show_progress!r}")

    def _check_data(self, df, domain) -> Domain:
        dom = frame_domain(df, domain)  # pandas or Dask; another type is refused with its fix
        dom.check_json()  # every release is published as JSON
        return dom

    def fit(self, df: pd.DataFrame, domain=None) -> PrivateSynthesizer:
        """Check, charge once, measure, select and fit; returns self.

        Everything public is checked before the charge; a failure after the first noise leaves
        ``releases_`` and ``selected_`` with what was paid for.

        Parameters
        ----------
        df : pandas.DataFrame or dask.dataframe.DataFrame
            The private table, one record per row; every column is modelled. A Dask DataFrame is
            counted in its partitions: only noisy marginals and public facts reach the driver, and
            the fit equals the pandas fit of the same rows with the same ``random_state``.
        domain : mapping or Domain, optional
            The public states of columns that are not categorical (see ``pgmpy_dp.Domain``).

        Returns
        -------
        self
        """
        for name in _FITTED:  # a refit that fails must not leave the previous fit's model behind
            self.__dict__.pop(name, None)
        method = self._method()
        self._check_params()
        settings = self._settings(method)
        loss = privacy_loss(self.epsilon, self.rho, self.delta, who="PrivateSynthesizer",
                            example="PrivateSynthesizer(epsilon=1.0, delta=1e-9) or PrivateSynthesizer(rho=0.015)")
        rng = check_random_state(self.random_state)
        dom = self._check_data(df, domain)
        plan = method.check(dom, loss, **settings)
        if self.budget is not None:
            self.budget.require(plan.loss)
        codes = frame_counter(df, dom, self.show_progress)  # a Dask frame is counted on its cluster
        recorder = Measurements()
        try:
            if self.budget is None:
                self.model_, _, _ = method.run(codes, plan, recorder, rng, self.show_progress)
            else:
                with self.budget.charge(plan.loss, label=f"PrivateSynthesizer(method={self.method!r})") as charge:
                    recorder.on_noise = charge.commit
                    self.model_, _, _ = method.run(codes, plan, recorder, rng, self.show_progress)
        finally:  # what the budget paid for stays, whether the run ended or failed
            self.releases_, self.selected_ = list(recorder.releases), list(recorder.selected)
        self.loss_ = plan.loss
        self.rho_ = None if isinstance(plan.loss, PureDP) else plan.loss.rho
        self.epsilon_ = plan.loss.epsilon if isinstance(plan.loss, PureDP) else None
        self.domain_ = dom
        self.n_rounds_ = len(self.selected_)
        return self

    def sample(self, n: int, random_state=None) -> pd.DataFrame:
        """Draw ``n`` synthetic records from ``model_`` (post-processing: spends nothing).

        Returns
        -------
        pandas.DataFrame
            One categorical column per attribute, with the public states.
        """
        if not hasattr(self, "model_"):
            raise ValueError("this PrivateSynthesizer is not fitted yet; call fit(df, domain=...) first")
        return sample_model(self.model_, n, random_state=random_state)
