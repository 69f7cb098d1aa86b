"""Layer 1: the public domain, the privacy loss as a value, noise mechanisms and privacy accounting.

Nothing here imports pgmpy or any estimation code.
"""

from .budget import BudgetExceededError, PrivacyBudget
from .domain import (
    DEFAULT_MAX_CELLS, CellLimitError, DataDerivedDomainWarning, Domain, DomainError, SchemaError, UndeclaredColumnsError,
    read_domain,
)
from .loss import ZCDP, ApproxDP, PrivacyLoss, PureDP, privacy_loss
from .mechanisms import discrete_gaussian_variance, discrete_laplace_noise, discrete_laplace_variance, sampler_for
from .parameters import check_delta, check_epsilon, check_rho, epsilon_delta_to_rho, rho_to_epsilon_delta
from .units import UserLevel

__all__ = [
    "ApproxDP", "BudgetExceededError", "CellLimitError", "DEFAULT_MAX_CELLS", "DataDerivedDomainWarning", "Domain",
    "DomainError", "PrivacyBudget", "PrivacyLoss", "PureDP", "UserLevel", "ZCDP", "check_delta", "check_epsilon",
    "check_rho", "discrete_gaussian_variance", "discrete_laplace_noise", "discrete_laplace_variance",
    "epsilon_delta_to_rho", "privacy_loss", "read_domain", "rho_to_epsilon_delta", "sampler_for",
    "SchemaError", "UndeclaredColumnsError",
]
