"""Private selection of what to measure: the structure of a model learned from the data.

Private Frank-Wolfe for l1-constrained logistic regression and the per-node regressions that
learn Ising and pairwise models (and their graphs) under rho-zCDP. Built on the layers below
(privacy, tables, engine, estimators); never imported by them.
"""

from .frank_wolfe import (
    exponential_mechanism_rho,
    frank_wolfe_iterations,
    frank_wolfe_logistic,
    frank_wolfe_noise_scale,
    frank_wolfe_rho,
)
from .pairwise import NotFittedError, PrivateIsingEstimator, PrivatePairwiseEstimator, min_rows_for_structure
from .routing import BoundaryWarning

__all__ = [
    "BoundaryWarning",
    "NotFittedError",
    "PrivateIsingEstimator",
    "PrivatePairwiseEstimator",
    "exponential_mechanism_rho",
    "frank_wolfe_iterations",
    "frank_wolfe_logistic",
    "frank_wolfe_noise_scale",
    "frank_wolfe_rho",
    "min_rows_for_structure",
]
