"""The privacy loss as a value: pure DP, zCDP or approximate DP, with one conversion and one error.

Every fit and release states what it spends as one of [`PureDP`][pgmpy_dp.privacy.loss.PureDP],
[`ZCDP`][pgmpy_dp.privacy.loss.ZCDP] or [`ApproxDP`][pgmpy_dp.privacy.loss.ApproxDP] (OpenDP's
privacy measures play the same part). The keyword shorthands of the public calls (``epsilon=``,
``rho=``, ``delta=``) become a value once, in [`privacy_loss`][pgmpy_dp.privacy.loss.privacy_loss];
below that edge only values travel. A zCDP mechanism spends ``loss.rho``: an ``ApproxDP`` budget
converts to the largest rho whose tight conversion (Canonne, Kamath and Steinke 2020) stays within
it, a ``PureDP`` budget to ``epsilon**2 / 2`` (Bun and Steinke 2016).
"""

from __future__ import annotations

from dataclasses import dataclass

from .parameters import check_delta, check_epsilon, check_rho, epsilon_delta_to_rho

__all__ = ["ApproxDP", "MissingLossError", "PrivacyLoss", "PureDP", "ZCDP", "privacy_loss"]


@dataclass(frozen=True)
class PureDP:
    """Pure ``epsilon``-differential privacy.

    Examples
    --------
    >>> PureDP(1.0).rho
    0.5
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    @property
    def rho(self) -> float:
        """The zCDP parameter this loss implies: ``epsilon**2 / 2``."""
        return self.epsilon**2 / 2.0

    def charge_kwargs(self) -> dict[str, float]:
        """The keywords of [`PrivacyBudget.charge`][pgmpy_dp.privacy.budget.PrivacyBudget.charge]."""
        return {"epsilon": self.epsilon}

    def __str__(self) -> str:
        return f"epsilon={self.epsilon:g}"


@dataclass(frozen=True)
class ZCDP:
    """``rho``-zero-concentrated differential privacy.

    Examples
    --------
    >>> ZCDP(0.5).rho
    0.5
    """

    rho: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_rho(self.rho))

    def charge_kwargs(self) -> dict[str, float]:
        """The keywords of [`PrivacyBudget.charge`][pgmpy_dp.privacy.budget.PrivacyBudget.charge]."""
        return {"rho": self.rho}

    def __str__(self) -> str:
        return f"rho={self.rho:g}"


@dataclass(frozen=True)
class ApproxDP:
    """``(epsilon, delta)``-differential privacy; a zCDP mechanism spends the ``rho`` it allows.

    Examples
    --------
    >>> round(ApproxDP(1.0, 1e-6).rho, 5)
    0.02436
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))

    @property
    def rho(self) -> float:
        """The largest rho whose tight conversion gives at most ``(epsilon, delta)``."""
        return epsilon_delta_to_rho(self.epsilon, self.delta)

    def charge_kwargs(self) -> dict[str, float]:
        """The keywords of [`PrivacyBudget.charge`][pgmpy_dp.privacy.budget.PrivacyBudget.charge] (in rho)."""
        return {"rho": self.rho}

    def __str__(self) -> str:
        return f"(epsilon={self.epsilon:g}, delta={self.delta:g})"


PrivacyLoss = PureDP | ZCDP | ApproxDP

#: The three kinds of loss value, for ``isinstance`` checks.
LOSS_TYPES = (PureDP, ZCDP, ApproxDP)


class MissingLossError(TypeError, ValueError):
    """Neither ``epsilon`` nor ``rho`` was given.

    A missing argument (a ``TypeError``) and a bad combination of arguments (a ``ValueError``)
    alike, so callers catching either keep working.
    """


def check_keywords(
    epsilon=None, rho=None, delta=None, *, who: str = "the fit", example: str = "epsilon=1.0", with_delta: bool = True
) -> None:
    """The one check of the loss keywords: exactly one of ``epsilon`` or ``rho``; ``delta`` only with ``epsilon``.

    Raises the one error message (a [`MissingLossError`][pgmpy_dp.privacy.loss.MissingLossError] when neither
    is given, a ``ValueError`` otherwise); the loss classes check the values. ``with_delta=False`` leaves
    ``delta=`` out of the message. Used by [`privacy_loss`][pgmpy_dp.privacy.loss.privacy_loss] and by
    callers whose keywords also take one budget per table.

    Examples
    --------
    >>> check_keywords(rho=0.5, delta=1e-9, who="the release", example="rho=0.5")
    Traceback (most recent call last):
    ...
    ValueError: the release takes exactly one of epsilon= (with an optional delta=) or rho=, got rho=0.5 with delta=1e-09 (delta only goes with epsilon); e.g. rho=0.5
    """
    if epsilon is None and rho is None:
        got, error = "neither", MissingLossError
    elif epsilon is not None and rho is not None:
        got, error = f"both epsilon={epsilon!r} and rho={rho!r}", ValueError
    elif rho is not None and delta is not None:
        got, error = f"rho={rho!r} with delta={delta!r} (delta only goes with epsilon)", ValueError
    else:
        return
    keywords = "epsilon= (with an optional delta=) or rho=" if with_delta else "epsilon= or rho="
    raise error(f"{who} takes exactly one of {keywords}, got {got}; e.g. {example}")


def privacy_loss(
    epsilon=None, rho=None, delta=None, *, who: str = "the fit", example: str = "epsilon=1.0", with_delta: bool = True
) -> PrivacyLoss:
    """The loss named by the public keywords: exactly one of ``epsilon`` or ``rho``; ``delta`` only with ``epsilon``.

    ``epsilon`` may already be a loss value, which is returned unchanged. ``who`` and ``example``
    name the call in the one error message, e.g. ``who="PrivateSynthesizer"``,
    ``example="epsilon=1.0, delta=1e-9"``; ``with_delta=False`` for a call without ``delta``. Giving neither raises a
    [`MissingLossError`][pgmpy_dp.privacy.loss.MissingLossError] (a ``TypeError`` and a ``ValueError``).

    Examples
    --------
    >>> privacy_loss(epsilon=1.0)
    PureDP(epsilon=1.0)
    >>> privacy_loss(rho=0.5)
    ZCDP(rho=0.5)
    >>> privacy_loss(epsilon=1.0, delta=1e-9)
    ApproxDP(epsilon=1.0, delta=1e-09)
    >>> privacy_loss(ZCDP(0.5)) == ZCDP(0.5)
    True
    >>> privacy_loss(epsilon=1.0, rho=0.5)
    Traceback (most recent call last):
    ...
    ValueError: the fit takes exactly one of epsilon= (with an optional delta=) or rho=, got both epsilon=1.0 and rho=0.5; e.g. epsilon=1.0
    """
    if isinstance(epsilon, LOSS_TYPES) and rho is None and delta is None:
        return epsilon
    check_keywords(epsilon, rho, delta, who=who, example=example, with_delta=with_delta)
    if rho is not None:
        return ZCDP(rho)
    if delta is None:
        return PureDP(epsilon)
    return ApproxDP(epsilon, delta)
