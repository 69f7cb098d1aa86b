"""Layer 3: dense log-space inference and maximum-likelihood fitting for Markov networks.

numpy / scipy / networkx only, no pgmpy objects. A model is a [`Domain`][pgmpy_dp.privacy.domain.Domain]
plus a list of cliques (attribute tuples); parameters are one log-potential array per clique.
"""

from .cgm import Measurement, cgm_em, gaussian_log_likelihood, laplace_log_likelihood
from .factor import align, log_marginal, logsumexp, marginal
from .inference import DEFAULT_MAX_JT_CELLS, make_inference
from .junction_tree import JunctionTree, is_decomposable, triangulate
from .loopy import LoopyBP
from .mle import ConvergenceWarning, WarmMLE, fit_log_potentials, project_simplex
from .reconcile import max_disagreement, reconcile_tables

__all__ = [
    "ConvergenceWarning", "DEFAULT_MAX_JT_CELLS", "JunctionTree", "LoopyBP", "Measurement", "WarmMLE", "align",
    "cgm_em", "fit_log_potentials", "gaussian_log_likelihood", "is_decomposable", "laplace_log_likelihood",
    "log_marginal", "logsumexp", "make_inference", "marginal", "max_disagreement", "project_simplex",
    "reconcile_tables", "triangulate",
]
