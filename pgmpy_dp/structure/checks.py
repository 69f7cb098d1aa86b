"""Argument checks shared by the structure learners: everything a fit validates before it charges."""

from __future__ import annotations

import itertools
import math
import numbers

import pandas as pd

from ..privacy import (
    DEFAULT_MAX_CELLS, ZCDP, ApproxDP, CellLimitError, Domain, DomainError, PrivacyBudget, PrivacyLoss, PureDP,
    privacy_loss,
)
from . import routing

#: Most Frank-Wolfe iterations a fit accepts. Its optimisation error falls like ``1 / n_iter`` while the
#: noise of each selection grows like ``sqrt(n_iter)``, so far fewer are ever useful; the bound stops a
#: mistyped value from charging the budget and then running for days.
MAX_N_ITER = 100_000


class LearnerChecks:
    """Validation of the hyper-parameters, the budget, ``rho`` and the domain (no data is read)."""

    def _check_params(self) -> None:
        for name in ("width", "eta"):
            _check_positive(name, getattr(self, name), "None (derived privately)")
        if not isinstance(self.route, str) or self.route not in routing.ROUTES:
            raise ValueError(f"route must be one of {routing.ROUTES}, got {self.route!r}")
        _check_positive("radius", self.radius, "None (from width)")
        t = self.threshold
        if t is not None and (not _is_real(t) or not math.isfinite(t) or t < 0):
            raise ValueError(f"threshold must be None (eta / 2, or the fit's noise level) or a non-negative number, got {t!r}")
        _check_n_iter(self.n_iter)

    @staticmethod
    def _check_n_records(n_records) -> None:
        if n_records is not None and (not _is_real(n_records) or not math.isfinite(n_records) or n_records <= 0):
            raise ValueError(f"n_records must be None or a positive public record count, got {n_records!r}")

    @staticmethod
    def _check_rows(data: pd.DataFrame) -> None:
        # An empty frame is a malformed call, refused before charging as the synthesizer and the
        # releases refuse it; any frame with rows runs, whatever its (private) size.
        if len(data) == 0:
            raise ValueError("data has no rows; a structure learner needs at least one record. Nothing was charged")

    def _check_tables(self, dom: Domain, route: str) -> None:
        """Refuse, before charging, a two-way table too large to release (declared states only).

        The tables route, and Frank-Wolfe's width pilot (``width=None``), release every two-way table.
        """
        if route == "frank-wolfe" and self.width is not None:
            return
        for a, b in itertools.combinations(dom.attrs, 2):
            if dom.size(a) * dom.size(b) > DEFAULT_MAX_CELLS:
                raise CellLimitError(
                    f"the two-way table ({a!r}, {b!r}) would have {dom.size(a) * dom.size(b):,} cells, more than "
                    f"DEFAULT_MAX_CELLS={DEFAULT_MAX_CELLS:,}; declare fewer states (merge rare ones or coarser "
                    "bins). Nothing was charged"
                )

    def _check_budget(self, budget, loss: PrivacyLoss | None = None) -> None:
        """A zCDP budget (or none), checked before anything is charged; ``loss`` defaults to the resolved one."""
        if budget is None:
            return
        if not isinstance(budget, PrivacyBudget):
            raise TypeError(
                f"budget must be a pgmpy_dp.PrivacyBudget or None, got {type(budget).__name__}; to spend a "
                "fixed amount pass rho= (or epsilon= and delta=), e.g. fit(df, rho=0.5, "
                "budget=PrivacyBudget(rho=1.0))"
            )
        loss = loss if loss is not None else getattr(self, "_loss", None)
        budget.require(ZCDP(1.0) if loss is None else loss, who=type(self).__name__)

    def _resolve_loss(self, rho, epsilon, delta) -> ZCDP | ApproxDP:
        """The fit's loss from its keywords: ``rho=``, or ``epsilon=`` with ``delta=`` (the learners are zCDP)."""
        loss = privacy_loss(
            epsilon, rho, delta, who=f"{type(self).__name__}.fit",
            example="fit(df, rho=0.5), or fit(df, epsilon=1.0, delta=1e-6)",
        )
        if isinstance(loss, PureDP):
            raise ValueError(
                "epsilon= needs delta= (the estimator is zCDP, reported as (epsilon, delta)-DP); "
                "e.g. fit(df, epsilon=1.0, delta=1e-6), or pass rho="
            )
        self._loss = loss  # what loss_ reports once the fit has set rho_
        return loss

    def _resolve_rho(self, rho, epsilon, delta, budget=None) -> float:
        """The rho of ``_resolve_loss``: what the fit charges."""
        return self._resolve_loss(rho, epsilon, delta).rho

    @property
    def loss_(self) -> ZCDP | ApproxDP:
        """The privacy loss the fit spent, as a value: ``ZCDP(rho_)``, or the ``ApproxDP`` given for it.

        The loss goes to ``fit`` (``fit(df, rho=0.5)``), next to the data it is spent on; see
        docs/privacy.md, "Where the loss goes".
        """
        rho = self.__dict__.get("rho_")
        if rho is None:
            raise AttributeError(f"{type(self).__name__} is not fitted yet: loss_ exists after fit")
        loss = self.__dict__.get("_loss")
        return loss if loss is not None and loss.rho == rho else ZCDP(rho)

    def _domain(self, data: pd.DataFrame, domain) -> Domain:
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
        dom = Domain.from_dataframe(data, domain=domain)
        if len(dom) < 2:
            raise ValueError(f"need at least two columns to learn a graph, got {list(dom.attrs)}")
        for attr in dom.attrs:
            k = dom.size(attr)
            if k < 2:
                raise DomainError(
                    f"column {attr!r} declares a single state {list(dom[attr])}: it carries no information; "
                    "drop the column or declare its other states"
                )
            self._check_states(attr, k, dom[attr])
        return dom

    def _check_states(self, attr: str, k: int, states) -> None:
        pass


def _is_real(v) -> bool:
    return not isinstance(v, bool) and isinstance(v, numbers.Real)


def _check_positive(name: str, v, default: str) -> None:
    if v is not None and (not _is_real(v) or not math.isfinite(v) or v <= 0):
        raise ValueError(f"{name} must be {default} or a positive finite number, got {v!r}")


def _check_n_iter(n_iter) -> None:
    if n_iter is None:
        return
    if isinstance(n_iter, bool) or not isinstance(n_iter, numbers.Integral):
        raise TypeError(
            f"n_iter must be a positive integer, got {n_iter!r} ({type(n_iter).__name__}); "
            "or None to set it from the theory"
        )
    if not 1 <= n_iter <= MAX_N_ITER:
        raise ValueError(
            f"n_iter must be between 1 and {MAX_N_ITER:,}, got {n_iter!r}; e.g. n_iter=50 "
            "(more iterations add noise to every selection and are rarely useful)"
        )
