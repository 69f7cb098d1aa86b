"""pgmpy-dp: differentially private marginals, Bayesian and Markov networks for pandas and pgmpy.

Importing the package registers the ``df.dp`` DataFrame accessor.
"""

from . import accessor  # noqa: F401  (registers df.dp)
from .privacy import (
    BudgetExceededError,
    CellLimitError,
    Domain,
    DomainError,
    PrivacyBudget,
)
from .tables import MarginalRelease, release_marginals
from .estimators import DiscretePrivateMLE, PrivateMarkovEstimator
from . import datasets  # noqa: F401

__version__ = "0.1.0"

__all__ = [
    "BudgetExceededError",
    "CellLimitError",
    "DiscretePrivateMLE",
    "Domain",
    "DomainError",
    "MarginalRelease",
    "PrivacyBudget",
    "PrivateMarkovEstimator",
    "release_marginals",
]
