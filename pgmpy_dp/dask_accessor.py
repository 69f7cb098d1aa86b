"""Layer 3: the ``ddf.dp`` accessor on Dask DataFrames, a thin facade over [`pgmpy_dp.tables.dask_release`][pgmpy_dp.tables.dask_release].

``import pgmpy_dp`` imports this module, and so registers the accessor, when
Dask's DataFrame support is installed (``pip install pgmpy-dp[dask]``);
without Dask, ``import pgmpy_dp`` never imports it and nothing changes.
Importing this module directly raises the ImportError that says what is missing.
"""

from __future__ import annotations

import dask.dataframe as dd

from .privacy.domain import Domain
from .tables.dask_release import dask_domain, release_marginals_dask
from .tables.artifact import MarginalRelease

__all__ = ["DaskDPAccessor"]


@dd.extensions.register_dataframe_accessor("dp")
class DaskDPAccessor:
    """Differentially private statistics of a Dask DataFrame: ``ddf.dp.release(...)``.

    The same interface as the pandas ``df.dp`` accessor; the counting runs in
    the partitions on the active Dask scheduler, the noise once on the driver.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd, pgmpy_dp
    >>> public = {"a": pd.CategoricalDtype(["x", "y"]), "b": pd.CategoricalDtype(["u", "v"])}
    >>> pdf = pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"]}).astype(public)  # declared states
    >>> dd.from_pandas(pdf, npartitions=1).dp.domain()
    Domain(a: 2, b: 2)
    """

    def __init__(self, ddf: dd.DataFrame) -> None:
        self._ddf = ddf

    def domain(self, domain=None, columns=None) -> Domain:
        """The public domain of the frame's columns (known categorical dtypes plus ``domain`` overrides)."""
        return dask_domain(self._ddf, columns, domain)

    def release(
        self, tables, epsilon=None, domain=None, budget=None, random_state=None, *, rho=None, **kwargs
    ) -> MarginalRelease:
        """Release noisy contingency tables; see [`pgmpy_dp.tables.dask_release.release_marginals_dask`][pgmpy_dp.tables.dask_release.release_marginals_dask]
        for the other keyword arguments (``max_cells``, ``n_records``, ``show_progress``,
        ``split_every``). Give ``epsilon`` (pure DP) or ``rho`` (zCDP), or ``loss=``, as for ``df.dp.release``.

        Examples
        --------
        >>> import dask, pandas as pd, dask.dataframe as dd, pgmpy_dp
        >>> pdf = pd.DataFrame({"a": ["x", "y", "y"]})
        >>> budget = pgmpy_dp.PrivacyBudget(2.0)
        >>> with dask.config.set(scheduler="sync"):
        ...     rel = dd.from_pandas(pdf, npartitions=2).dp.release(
        ...         ["a"], epsilon=0.5, domain={"a": ["x", "y"]}, budget=budget)
        >>> budget.remaining
        1.5
        """
        return release_marginals_dask(
            self._ddf, tables, epsilon, domain=domain, budget=budget, random_state=random_state, rho=rho,
            **kwargs,
        )
