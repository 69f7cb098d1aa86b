"""Layer 1: the public domain, noise mechanisms and privacy accounting.

Nothing here imports pgmpy or any estimation code.
"""

from .budget import BudgetExceededError, Charge, PrivacyBudget
from .domain import DEFAULT_MAX_CELLS, CellLimitError, DataDerivedDomainWarning, Domain, DomainError
from .ledger import LedgerEntry
from .mechanisms import (
    GAUSSIAN_MECHANISM,
    MECHANISM,
    discrete_gaussian_noise,
    discrete_gaussian_variance,
    discrete_laplace_noise,
    discrete_laplace_variance,
    sampler_for,
)
from .loss import ApproxDP, PrivacyLoss, PureDP, ZCDP, privacy_loss
from .parameters import (
    check_delta,
    check_epsilon,
    check_positive,
    check_rho,
    epsilon_delta_to_rho,
    rho_to_epsilon_delta,
)
from .selection import exponential_mechanism, exponential_mechanism_rho
from .units import UserLevel

__all__ = [
    "ApproxDP",
    "PrivacyLoss",
    "PureDP",
    "ZCDP",
    "privacy_loss",
    "BudgetExceededError",
    "CellLimitError",
    "Charge",
    "DEFAULT_MAX_CELLS",
    "DataDerivedDomainWarning",
    "Domain",
    "DomainError",
    "GAUSSIAN_MECHANISM",
    "LedgerEntry",
    "MECHANISM",
    "PrivacyBudget",
    "check_delta",
    "check_epsilon",
    "check_positive",
    "check_rho",
    "discrete_gaussian_noise",
    "discrete_gaussian_variance",
    "epsilon_delta_to_rho",
    "exponential_mechanism",
    "exponential_mechanism_rho",
    "rho_to_epsilon_delta",
    "discrete_laplace_noise",
    "discrete_laplace_variance",
    "sampler_for",
    "UserLevel",
]
