"""Privacy accounting: a pure-epsilon budget under sequential composition.

A :class:`PrivacyBudget` is charged *before* any noise is drawn and refunded
if the guarded work fails before its noisy output exists, so a failed release
spends nothing and concurrent releases from several threads can never
overspend. Once noise has been drawn the guarded block marks the charge
committed (:meth:`Charge.commit`): a later failure (a solver error in
post-processing, say) is itself a function of the noisy output, so the charge
then stays spent.
"""

from __future__ import annotations

import math
import numbers
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np

__all__ = ["PrivacyBudget", "BudgetExceededError", "Charge", "LedgerEntry", "check_epsilon"]

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


class Charge:
    """Handle of an in-flight charge (what :meth:`PrivacyBudget.charge` yields).

    Call :meth:`commit` as soon as noisy output exists: from then on an error
    in the guarded block no longer refunds the charge.
    """

    def __init__(self, epsilon: float, label: str) -> None:
        self.epsilon = epsilon
        self.label = label
        self.committed = False

    def commit(self) -> None:
        """Mark the charge spent even if the rest of the guarded block fails."""
        self.committed = True


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

    Once noise is drawn the charge is committed, and a later failure keeps it:

    >>> try:
    ...     with budget.charge(0.1, "post-processed") as charge:
    ...         charge.commit()  # noisy output exists from here on
    ...         raise ArithmeticError("solver failed")
    ... except ArithmeticError:
    ...     pass
    >>> [e.label for e in budget.ledger]
    ['age x sex', 'post-processed (failed after noise was drawn)']
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

        Yields a :class:`Charge`; once the block calls its ``commit()`` (noise
        has been drawn) an error no longer refunds: the ledger records the
        charge with the label suffixed ``(failed after noise was drawn)``.
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
        handle = Charge(epsilon, label)
        try:
            yield handle
        except BaseException:
            with self._lock:
                self._reserved -= epsilon
                if handle.committed:
                    self._ledger.append(LedgerEntry(epsilon, f"{label} (failed after noise was drawn)"))
            raise
        with self._lock:
            self._reserved -= epsilon
            self._ledger.append(LedgerEntry(epsilon, label))

    def __repr__(self) -> str:
        return f"PrivacyBudget(total={self.total:g}, spent={self.spent:g})"
