"""Private structure learning: Ising and pairwise models (and their graphs) learned under rho-zCDP.

Private Frank-Wolfe for l1-constrained logistic regression, one per node, and the noisy two-way
tables route. Built on the layers below; never imported by them, nor by `pgmpy_dp.synthesis`.
"""

from .frank_wolfe import frank_wolfe_logistic, frank_wolfe_noise_scale, frank_wolfe_rho
from .pairwise import NotFittedError, PrivateIsingEstimator, PrivatePairwiseEstimator, min_rows_for_structure

__all__ = [
    "NotFittedError", "PrivateIsingEstimator", "PrivatePairwiseEstimator", "frank_wolfe_logistic",
    "frank_wolfe_noise_scale", "frank_wolfe_rho", "min_rows_for_structure",
]
