"""From a private table to a private model and synthetic data in one call: [`PrivateSynthesizer`][pgmpy_dp.synthesis.synthesizer.PrivateSynthesizer].

It checks its parameters and schema, lets its method (`METHODS`) check a plan from public facts, charges
the budget once and runs the method ([`pgmpy_dp.synthesis.method`][pgmpy_dp.synthesis.method]).
"""

from __future__ import annotations

import math
import numbers

import pandas as pd
from skbase.base import BaseObject

from ..privacy.budget import BudgetExceededError, PrivacyBudget
from ..privacy.decode import public_dtypes
from ..privacy.domain import Domain, read_domain
from ..privacy.loss import PureDP, privacy_loss
from ..privacy.random_state import check_random_state
from ..sampling import sample as sample_model
from ..tables.resolve import SchemaRelease, amount, plan_schema, run_schema
from .aim import AIM
from .artifact import load_synthesizer, save_synthesizer
from .auto import AUTO
from .frames import frame_counter, frame_domain, is_dask_frame
from .method import Measurements, Method
from .mst import MST
from .privbayes import PRIVBAYES
from .thin import warn_if_thin

#: The selection methods, by name (each a [`Method`][pgmpy_dp.synthesis.method.Method]).
METHODS: dict[str, Method] = {m.name: m for m in (AIM, MST, PRIVBAYES, AUTO)}
_FITTED = ("model_", "releases_", "selected_", "loss_", "rho_", "epsilon_", "domain_", "n_rounds_", "schema_release_",
           "dtypes_", "method_")


class PrivateSynthesizer(BaseObject):
    """Learn a private graphical model of a whole table, without a known graph, and sample from it.

    ``fit`` spends the whole budget once: it measures noisy marginals chosen from noisy answers only and
    fits a pgmpy model to them. The model answers queries (``pgmpy_dp.query``; ``pgmpy_dp.query_interval``
    on the synthesizer or its model, which says whether a release measured the answer's variables
    together) and ``sample`` draws synthetic records; both spend nothing. Accuracy: docs/synthesis.md and docs/benchmarks.md.

    The privacy loss is a hyper-parameter (``epsilon=`` with ``delta=``, or ``rho=``, given here,
    not to ``fit``): one configured fit of one table spends it all (the rule of docs/privacy.md,
    "Where the loss goes"). ``loss_`` is what it spent.

    A fit warns (``ThinDataWarning``, once per fit) when the noisy outputs show that the noise swamps the
    table: in at least half of the columns a typical cell of the noisy 1-way marginal holds fewer
    records than one noise standard deviation (``pgmpy_dp.synthesis.thin``).

    Parameters
    ----------
    epsilon : float, optional
        The (epsilon, delta)-DP budget's epsilon; ``"aim"`` and ``"mst"`` (zCDP methods, converted by
        the tight conversion) need ``delta`` too, ``"privbayes"`` also takes a pure-DP epsilon alone.
    rho : float, optional, keyword only
        A zCDP budget instead of ``epsilon``.
    delta : float, optional, keyword only
        The delta that goes with ``epsilon``.
    method : {"aim", "mst", "privbayes", "auto"}
        ``"aim"`` (McKenna, Mullins, Sheldon and Miklau 2022): adaptive selection of the workload
        marginals the current model answers worst. ``"mst"`` (McKenna, Miklau and Sheldon 2021):
        1-way marginals, a private maximum spanning tree and its 2-way marginals. ``"privbayes"``
        (Zhang et al. 2017): a greedy Bayesian network of bounded in-degree. ``"auto"`` (the default):
        MST on tables of more than 20 declared columns; on the others, with a ``workload`` AIM, else
        2 % of rho buys a noisy record count (the first of ``releases_``) and MST runs below 20,000
        noisy records, AIM above (``pgmpy_dp.synthesis.auto``; the choice is ``method_``).
    workload : list of tuple of str, or list of (tuple of str, float), optional
        ``"aim"`` only (and ``"auto"`` when it runs AIM): the marginals that matter, optionally weighted. Default: every 3-way
        marginal of at most 10,000 cells.
    max_model_size : float
        ``"aim"`` only: the largest model, in megabytes of junction-tree cells (float64).
    max_seconds : float, optional
        ``"aim"`` only: wall-clock seconds for the rounds. When they run out, the next round is the
        last and spends the rest of the budget, so the whole budget is still spent (then the
        published model is fitted). ``"mst"`` and ``"privbayes"`` take a number of steps set by
        the columns and no cap (leave it None). The number of rounds then depends on
        the machine's speed: docs/decisions.md ("Private synthesis") for why that keeps the guarantee.
    budget : PrivacyBudget, optional
        Accountant charged once with the whole amount before any noise is drawn (twice when the schema
        is resolved from the data: first the schema's share, then the rest).
    schema_share : float
        The share of the loss spent on the schema's open parts, when the domain asks for private key
        discovery (``discover``) or private bins (``bounds``); unused otherwise, and then nothing is read
        from the data to make the domain. How the loss splits: ``pgmpy_dp.tables.resolve``.
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
    schema_release_ : SchemaRelease or None
        The released keys and bin edges with what they cost (``.to_dict()`` is publishable); None when the
        domain was fully declared. Kept, like ``releases_``, when the fit fails after the schema's noise.
    dtypes_ : dict
        The categorical and string dtypes of the fitted frame (``pgmpy_dp.privacy.decode.public_dtypes``:
        dtypes only, never values), restored by ``sample``.
    method_ : str
        The method that ran: ``method`` itself, or the choice of ``"auto"``.
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
        method: str = "auto",
        workload=None,
        max_model_size: float = 80.0,
        max_seconds: float | None = None,
        budget: PrivacyBudget | None = None,
        random_state=None,
        show_progress: bool = True,
        schema_share: float = 0.1,
    ) -> None:
        self.epsilon = epsilon
        self.rho = rho
        self.delta = delta
        self.method = method
        self.workload = workload
        self.max_model_size = max_model_size
        self.max_seconds = max_seconds
        self.budget = budget
        self.random_state = random_state
        self.show_progress = show_progress
        self.schema_share = schema_share
        super().__init__()

    def _method(self) -> Method:
        if not isinstance(self.method, str) or self.method not in METHODS:
            raise ValueError(f"method must be one of {tuple(METHODS)}, got {self.method!r}")
        return METHODS[self.method]

    def _settings(self, method: Method) -> dict:
        """The method's own settings; a setting another method reads is refused unless left at None."""
        for name in ("workload", "max_seconds"):
            if name not in method.settings and getattr(self, name) is not None:
                raise ValueError(f"{name} only applies to method='aim', not {self.method!r}; leave {name}=None")
        size = self.max_model_size
        if isinstance(size, bool) or not isinstance(size, numbers.Real) or not (math.isfinite(size) and size > 0):
            raise ValueError(f"max_model_size must be a positive number of megabytes, got {size!r}; e.g. 80")
        return {name: getattr(self, name) for name in method.settings}

    def _check_params(self) -> None:
        if self.budget is not None and not isinstance(self.budget, PrivacyBudget):
            raise TypeError(f"budget must be a pgmpy_dp.PrivacyBudget or None, got {type(self.budget).__name__}")
        if not isinstance(self.show_progress, bool):
            raise TypeError(f"show_progress must be True or False, got {self.show_progress!r}")

    def _check_data(self, df, domain, columns=None) -> Domain:
        dom = frame_domain(df, domain, columns)  # pandas or Dask; another type is refused with its fix
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
        domain : mapping, Domain or path, optional
            The public states of columns that are not categorical (see ``pgmpy_dp.Domain``), or the path
            of a schema file (``Domain.to_json``). Columns still unresolved (bounds only, discover) are
            resolved privately with ``schema_share`` of the loss (pandas frames only).

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
        self._check_data(df, {}, columns=[])  # the frame itself, before its names and dtypes are read
        raw, domain = df, read_domain(domain)  # a schema file's path; the frame as given, for its dtypes
        schema = plan_schema(df, domain, loss, self.schema_share)  # public facts only; None: nothing to resolve
        if schema is not None and is_dask_frame(df):
            raise ValueError(
                f"the schema leaves {sorted(schema.columns)} to be resolved privately, which needs a pandas "
                "DataFrame; declare their states or bin edges for a Dask fit (nothing was charged)"
            )
        if schema is None:
            dom = self._check_data(df, domain)
        else:
            loss = schema.method_loss
            dom = self._check_data(df, schema.declared, [c for c in df.columns if c not in schema.columns])
        plan = method.check(dom if schema is None else dom.merge(schema.placeholder()), loss, **settings)
        if self.budget is not None:
            self.budget.require(plan.loss)
        if schema is not None:  # the schema's noise: from here on a failure keeps its charge and record
            df, dom = self._resolve(df, dom, schema, plan, rng)
            plan = method.check(dom, loss, **settings)
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
        warn_if_thin(self.releases_)  # reads the noisy outputs only
        self.loss_ = plan.loss
        self.rho_ = None if isinstance(plan.loss, PureDP) else plan.loss.rho
        self.epsilon_ = plan.loss.epsilon if isinstance(plan.loss, PureDP) else None
        if schema is not None:  # the whole spend: the schema's part and the method's
            self.loss_ = privacy_loss(self.epsilon, self.rho, self.delta)
            self.rho_ = None if self.rho_ is None else schema.loss.rho + self.rho_
            self.epsilon_ = None if self.epsilon_ is None else schema.loss.epsilon + self.epsilon_
        else:
            self.schema_release_ = None
        self.domain_, self.dtypes_ = dom, public_dtypes(raw, dom)  # dtypes of the frame as given
        self.n_rounds_ = len(self.selected_)
        self.method_ = method.chosen(dom, self.releases_, **settings)
        return self

    def measure(self, df, marginals, *, epsilon=None, rho=None, delta=None, budget=None, random_state=None):
        """Release ``marginals`` at a further loss and refit from all releases; returns self.

        For an answer ``query_interval`` found unsupported (its ``attrs["needs"]``); charged, ledgered
        and kept on failure like every release. See
        [`measure_marginals`][pgmpy_dp.synthesis.followup.measure_marginals].
        """
        from .followup import measure_marginals

        return measure_marginals(self, df, marginals, epsilon=epsilon, rho=rho, delta=delta, budget=budget,
                                 random_state=random_state)

    def _resolve(self, df, dom, schema, plan, rng):
        """Charge and release the schema's open parts; the recoded frame and the whole domain."""
        if self.budget is not None:
            self.budget.require(schema.loss)
            need = amount(schema.loss, self.budget.accounting) + amount(plan.loss, self.budget.accounting)
            left = self.budget.available(schema.delta or None)  # the discovery's delta shrinks what is left
            if need > left:  # both charges are refused before either is made
                raise BudgetExceededError(
                    f"PrivateSynthesizer needs {need:g} ({self.budget.unit}) for its schema and its fit, but "
                    f"{left:g} remains; lower the loss or use a new budget"
                )
        record = SchemaRelease.empty(schema)
        try:
            df, found, _ = run_schema(
                df, schema, self.budget, rng, record=record, label=f"PrivateSynthesizer(method={self.method!r}) "
                f"schema: keys of {list(schema.discover)}, bins of {list(schema.bounds)}, delta={schema.delta:g}")
        finally:  # what was released stays with its charge, whether the schema's step ended or failed
            if record.keys or record.edges:
                self.schema_release_ = record
        dom = dom.merge(found).project(df.columns)
        dom.check_json()
        return df, dom

    def sample(self, n: int, random_state=None, decode: bool = True) -> pd.DataFrame:
        """Draw ``n`` synthetic records from ``model_`` (post-processing: spends nothing).

        With ``decode`` (the default) the records are raw values (``pgmpy_dp.privacy.decode.decode``):
        binned columns as numbers drawn within their bins (integers for integer columns, within the
        declared bounds), the missing state as NaN, categorical columns in their fitted dtype.
        ``decode=False`` keeps the states (bin labels) as categorical columns.

        Returns
        -------
        pandas.DataFrame
            One column per attribute.
        """
        if not hasattr(self, "model_"):
            raise ValueError("this PrivateSynthesizer is not fitted yet; call fit(df, domain=...) first")
        if not isinstance(decode, bool):
            raise TypeError(f"decode must be True or False, got {decode!r}")
        return sample_model(self.model_, n, random_state=random_state,
                            domain=self.domain_ if decode else None, dtypes=self.dtypes_)

    def save(self, path) -> None:
        """Write the fitted synthesizer to ``path`` as one public JSON artifact (spends nothing).

        It holds the schema, the settings, the loss spent, the noisy selections and releases and the model
        fitted to them: no record and no exact count (format: ``pgmpy_dp.synthesis.artifact``). The budget
        and the ``random_state`` seed are not saved (with the seed, the noise could be redrawn and
        subtracted from the releases). ``PrivateSynthesizer.load(path)`` restores it; ``sample(n, random_state=s)`` then
        draws the same records as before saving.

        Examples
        --------
        >>> import os, tempfile
        >>> df = pd.DataFrame({"a": [0, 1] * 500, "b": [0, 0, 1, 1] * 250})
        >>> synth = PrivateSynthesizer(rho=1.0, method="mst", random_state=0, show_progress=False)
        >>> synth = synth.fit(df, domain={"a": [0, 1], "b": [0, 1]})
        >>> path = os.path.join(tempfile.mkdtemp(), "synth.json")
        >>> synth.save(path)
        >>> PrivateSynthesizer.load(path).sample(5, random_state=1).equals(synth.sample(5, random_state=1))
        True
        """
        save_synthesizer(self, path)

    @classmethod
    def load(cls, path) -> PrivateSynthesizer:
        """A fitted synthesizer from a file written by ``save``; every field is checked first.

        Raises ``FileNotFoundError`` for a missing file and
        ``pgmpy_dp.synthesis.artifact.SynthesizerFormatError`` (a ``ValueError``) naming the first field
        of a truncated, edited or foreign file. The loaded synthesizer has no budget and no seed.
        """
        return load_synthesizer(cls, path)
