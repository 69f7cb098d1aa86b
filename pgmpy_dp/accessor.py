"""Layer 3: the ``df.dp`` pandas accessor, a thin facade over `pgmpy_dp.tables`."""

from __future__ import annotations

import pandas as pd

from .privacy.domain import Domain
from .tables.artifact import MarginalRelease
from .tables.release import release_marginals

__all__ = ["DPAccessor"]


@pd.api.extensions.register_dataframe_accessor("dp")
class DPAccessor:
    """Differentially private statistics of a DataFrame: ``df.dp.release(...)``.

    Examples
    --------
    >>> import pandas as pd, pgmpy_dp
    >>> public = {"a": pd.CategoricalDtype(["x", "y"]), "b": pd.CategoricalDtype(["u", "v"])}
    >>> df = pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"]}).astype(public)  # declared states
    >>> df.dp.domain()
    Domain(a: 2, b: 2)
    """

    def __init__(self, df: pd.DataFrame) -> None:
        self._df = df

    def domain(self, domain=None, columns=None) -> Domain:
        """The public domain of the frame's columns (categorical dtypes plus ``domain`` overrides)."""
        return Domain.from_dataframe(self._df, columns, domain)

    def release(
        self,
        tables,
        epsilon=None,
        domain=None,
        budget=None,
        random_state=None,
        *,
        rho=None,
        privacy_unit=None,
        **kwargs,
    ) -> MarginalRelease:
        """Release noisy contingency tables; see [`pgmpy_dp.tables.release_marginals`][pgmpy_dp.tables.release.release_marginals]
        for the other keyword arguments (``max_cells``, ``n_records``, ``show_progress``).

        Give ``epsilon`` (discrete Laplace noise, pure DP) or ``rho`` (discrete
        Gaussian noise calibrated to the L2 sensitivity, zCDP), or the loss as a value,
        ``loss=pgmpy_dp.privacy.ZCDP(0.5)`` (see docs/privacy.md). ``tables`` may
        hold [`pgmpy_dp.Pooled`][pgmpy_dp.tables.pooled.Pooled] requests.
        ``privacy_unit="user_id"`` protects individuals (all rows of one user)
        instead of records; a ``pgmpy_dp.UserLevel``
        also says how each user's rows are bounded. The user column is never released.

        Examples
        --------
        >>> import pandas as pd, pgmpy_dp
        >>> df = pd.DataFrame({"a": ["x", "y", "y"]})
        >>> public = {"a": ["x", "y"]}  # declared states, never read from the data
        >>> budget = pgmpy_dp.PrivacyBudget(2.0)
        >>> rel = df.dp.release(["a"], epsilon=0.5, domain=public, budget=budget)
        >>> budget.remaining
        1.5
        >>> zb = pgmpy_dp.PrivacyBudget(rho=1.0)
        >>> df.dp.release(["a"], rho=0.5, domain=public, budget=zb).mechanism, zb.remaining
        ('discrete_gaussian', 0.5)

        Individual-level privacy: each user adds mass at most 1 to every table

        >>> df["user"] = ["ann", "bob", "bob"]
        >>> rel = df.dp.release(["a"], epsilon=1.0, domain=public, privacy_unit="user")
        >>> rel["a"].sensitivity, rel.privacy_unit["column"]
        (1.0, 'user')
        """
        return release_marginals(
            self._df, tables, epsilon, domain=domain, budget=budget, random_state=random_state, rho=rho,
            privacy_unit=privacy_unit, **kwargs,
        )
