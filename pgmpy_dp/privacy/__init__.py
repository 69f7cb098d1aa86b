"""Layer 1: the public domain, noise mechanisms and privacy accounting.

Nothing here imports pgmpy or any estimation code.
"""

from .budget import BudgetExceededError, LedgerEntry, PrivacyBudget, check_epsilon
from .domain import DEFAULT_MAX_CELLS, CellLimitError, DataDerivedDomainWarning, Domain, DomainError
from .mechanisms import (
    MECHANISM,
    discrete_laplace_noise,
    discrete_laplace_variance,
    sampler_for,
)

__all__ = [
    "BudgetExceededError",
    "CellLimitError",
    "DEFAULT_MAX_CELLS",
    "DataDerivedDomainWarning",
    "Domain",
    "DomainError",
    "LedgerEntry",
    "MECHANISM",
    "PrivacyBudget",
    "check_epsilon",
    "discrete_laplace_noise",
    "discrete_laplace_variance",
    "sampler_for",
]
