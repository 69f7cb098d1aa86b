"""pgmpy-dp: differentially private marginals, Bayesian and Markov networks for pandas and pgmpy.

Importing the package registers the ``df.dp`` DataFrame accessor, and the
``ddf.dp`` accessor on Dask DataFrames when Dask is installed.
"""

import importlib.util
import warnings

with warnings.catch_warnings():
    # pgmpy 1.1's inference package warns about its own deprecated import, whatever the caller uses:
    # importing it here, once and quietly, keeps that notice out of every script
    warnings.filterwarnings("ignore", r"`pgmpy\.estimators\.", FutureWarning)
    import pgmpy.inference  # noqa: F401

from . import accessor  # noqa: F401  (registers df.dp)
from .privacy import (
    BudgetExceededError,
    CellLimitError,
    DataDerivedDomainWarning,
    Domain,
    DomainError,
    PrivacyBudget,
    UserLevel,
)
from .tables import MarginalRelease, Pooled, release_marginals
from .estimators import DiscretePrivateMLE, PrivateMarkovEstimator
from .structure import PrivateIsingEstimator, PrivatePairwiseEstimator
from . import datasets  # noqa: F401
from .uncertainty import UnsupportedAnswerWarning, query_interval
from .querying import query
from .sampling import sample
from .synthesis import PrivateSynthesizer

# Dask is optional: look before importing, so that without it nothing Dask-related is loaded
if importlib.util.find_spec("dask") is not None:
    try:
        from . import dask_accessor  # noqa: F401  (registers ddf.dp)
    except ImportError:  # dask without its DataFrame extra: `import pgmpy_dp.dask_accessor` says what is missing
        pass

# the package root shows its public names and its own modules, not the tools this file used
del importlib, pgmpy, warnings

__version__ = "0.1.0"

__all__ = [
    "BudgetExceededError",
    "CellLimitError",
    "DataDerivedDomainWarning",
    "DiscretePrivateMLE",
    "Domain",
    "DomainError",
    "MarginalRelease",
    "Pooled",
    "PrivacyBudget",
    "PrivateIsingEstimator",
    "PrivateMarkovEstimator",
    "PrivatePairwiseEstimator",
    "PrivateSynthesizer",
    "UnsupportedAnswerWarning",
    "UserLevel",
    "query",
    "query_interval",
    "release_marginals",
    "sample",
]
