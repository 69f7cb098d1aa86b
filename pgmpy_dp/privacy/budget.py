"""Privacy accounting: a pure-epsilon budget under sequential composition.

A :class:`PrivacyBudget` is charged *before* any noise is drawn and refunded
if the guarded work fails, so a failed release spends nothing and concurrent
releases from several threads can never overspend.
"""

from __future__ import annotations

import math
import numbers
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

__all__ = ["PrivacyBudget", "BudgetExceededError", "LedgerEntry", "check_epsilon"]

# Budgets are sums of floats; allow rounding error of this relative size so that
# e.g. ten charges of 0.1 fit in a budget of 1.0.
_REL_TOL = 1e-9


class BudgetExceededError(RuntimeError):
    """A charge would spend more than the remaining privacy budget."""


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float, or raise a clear error if it is not positive and finite.

    Examples
    --------
    >>> check_epsilon(1)
    1.0
    """
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a positive finite number, got {epsilon!r} ({type(epsilon).__name__})")
    epsilon = float(epsilon)
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"{name} must be positive and finite, got {epsilon!r}; e.g. {name}=1.0")
    return epsilon


@dataclass(frozen=True)
class LedgerEntry:
    """One committed charge: how much, for what, and when (UTC)."""

    epsilon: float
    label: str
    time: datetime = field(default_factory=lambda: datetime.now(timezone.utc))


class PrivacyBudget:
    """A total epsilon, spent by sequential composition, with an auditable ledger.

    Parameters
    ----------
    epsilon : float
        The total privacy budget.

    Examples
    --------
    >>> budget = PrivacyBudget(1.0)
    >>> with budget.charge(0.4, "age x sex"):
    ...     pass  # draw noise here; an exception refunds the charge
    >>> budget.spent, budget.remaining
    (0.4, 0.6)
    >>> [(e.epsilon, e.label) for e in budget.ledger]
    [(0.4, 'age x sex')]
    """

    def __init__(self, epsilon: float) -> None:
        self.total = check_epsilon(epsilon)
        self._lock = threading.Lock()
        self._ledger: list[LedgerEntry] = []
        self._reserved = 0.0

    @property
    def ledger(self) -> tuple[LedgerEntry, ...]:
        """Committed charges, oldest first."""
        with self._lock:
            return tuple(self._ledger)

    @property
    def spent(self) -> float:
        """Total epsilon of committed charges (recomputed from the ledger)."""
        with self._lock:
            return math.fsum(e.epsilon for e in self._ledger)

    @property
    def remaining(self) -> float:
        """Epsilon still available (committed and in-flight charges subtracted)."""
        with self._lock:
            return max(0.0, self.total - math.fsum(e.epsilon for e in self._ledger) - self._reserved)

    @contextmanager
    def charge(self, epsilon: float, label: str = ""):
        """Reserve ``epsilon`` for the enclosed block; commit on success, refund on error.

        Raises :class:`BudgetExceededError` on entry, before the block runs, if
        the charge does not fit.
        """
        epsilon = check_epsilon(epsilon)
        with self._lock:
            committed = math.fsum(e.epsilon for e in self._ledger)
            available = self.total - committed - self._reserved
            if epsilon > available + _REL_TOL * self.total:
                raise BudgetExceededError(
                    f"charge of epsilon={epsilon:g} for {label or 'a release'} exceeds the remaining "
                    f"budget {max(available, 0.0):g} of {self.total:g}; lower epsilon or use a new budget"
                )
            self._reserved += epsilon
        try:
            yield self
        except BaseException:
            with self._lock:
                self._reserved -= epsilon
            raise
        with self._lock:
            self._reserved -= epsilon
            self._ledger.append(LedgerEntry(epsilon, label))

    def __repr__(self) -> str:
        return f"PrivacyBudget(total={self.total:g}, spent={self.spent:g})"
