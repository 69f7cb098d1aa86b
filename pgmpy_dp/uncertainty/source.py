"""What a ``query_interval`` argument stands for: the fitted estimator behind it, and the states it answers in.

A fitted estimator stands for itself; a model it fitted for it (`estimator_of`); a fitted
``PrivateSynthesizer`` for its ``model_``. An MST model whose rare states were merged is the expansion of a
fit over the merged states: its intervals are that fit's, mapped to the declared states (evidence on a state
of a merged group conditions on the group; a state of a group answers its fixed share of the group's answer,
docs/intervals.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..estimators.fitted import estimator_of
from ..privacy.domain import Domain
from ..synthesis.compression import Compression, expanded_from
from ..synthesis.synthesizer import PrivateSynthesizer


@dataclass(frozen=True)
class Source:
    """The fitted estimator an argument stands for and, for a merged MST model, its compression.

    Attributes
    ----------
    estimator : object
        What ``fit_view`` reads: a fitted estimator or a model one fitted (over the merged states, for a
        merged MST model).
    compression : Compression or None
        The merge of rare states between the user's (declared) states and the fit's.
    """

    estimator: object
    compression: Compression | None = None

    def domain(self, fitted: Domain) -> Domain:
        """The states a user queries in: the declared ones (``fitted``, the fit's, unless states merged)."""
        return fitted if self.compression is None else self.compression.domain

    def evidence(self, evidence: dict) -> dict:
        """Evidence on declared states as evidence on the fit's states (a merged state's group)."""
        if self.compression is None:
            return evidence
        c = self.compression
        return {v: c.merged_domain[v][c.codes_map[v][list(c.domain[v]).index(s)]] for v, s in evidence.items()}

    def answers(self, variables: list, values) -> np.ndarray:
        """Answers over the fit's joint states (last axis) as answers over the declared joint states."""
        values = np.asarray(values, dtype=np.float64)
        if self.compression is None:
            return values
        c = self.compression
        grids = np.meshgrid(*[c.codes_map[v] for v in variables], indexing="ij")
        cells = np.ravel_multi_index([g.ravel() for g in grids], c.merged_domain.shape(variables))
        shares = np.ones(cells.size)
        for v, g in zip(variables, np.meshgrid(*[c.shares[v] for v in variables], indexing="ij")):
            shares = shares * g.ravel()
        return values[..., cells] * shares


def source_of(obj) -> Source:
    """The `Source` of a ``query_interval`` argument.

    Raises
    ------
    ValueError
        For an unfitted synthesizer, or one whose fit failed after its first noise (no model).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from pgmpy_dp.synthesis.synthesizer import PrivateSynthesizer
    >>> source_of(PrivateSynthesizer(rho=1.0))
    Traceback (most recent call last):
    ...
    ValueError: this PrivateSynthesizer is not fitted yet; call fit(df, domain=...) first, then ask query_interval
    """
    if isinstance(obj, PrivateSynthesizer):
        if not hasattr(obj, "model_"):
            if getattr(obj, "releases_", None):
                raise ValueError(
                    "this PrivateSynthesizer's fit failed after its first noise: releases_ holds what the budget "
                    "paid for, but there is no model to query; fit again (with a new budget)"
                )
            raise ValueError("this PrivateSynthesizer is not fitted yet; call fit(df, domain=...) first, "
                             "then ask query_interval")
        obj = obj.model_
        expanded = expanded_from(obj)
        try:
            estimator_of(obj if expanded is None else expanded[0])
        except ValueError as exc:
            raise ValueError(
                f"this PrivateSynthesizer's model_ stands for no fitted estimator ({exc}); a synthesizer loaded "
                "from a format 1 file has none (that format did not store the fit): ask pgmpy_dp.query for the "
                "point answer, or fit it again and save it for intervals"
            ) from None
    if hasattr(obj, "check_model"):
        expanded = expanded_from(obj)
        if expanded is not None:
            return Source(*expanded)
    return Source(obj)
