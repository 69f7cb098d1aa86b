"""Layer 4: dense log-space inference and maximum-likelihood fitting for Markov networks.

numpy / scipy / networkx only, no pgmpy objects. A model is a [`Domain`][pgmpy_dp.privacy.domain.Domain]
plus a list of cliques (attribute tuples); parameters are one log-potential array per clique.
"""

from .cgm import NOISE_MODELS, CGMResult, Measurement, cgm_em, gaussian_log_likelihood, laplace_log_likelihood
from .factor import align, log_marginal, logsumexp, marginal
from .inference import DEFAULT_MAX_JT_CELLS, make_inference
from .junction_tree import Calibration, JunctionTree, as_cliques, is_decomposable, triangulate
from .loopy import LoopyBP
from .mle import ConvergenceWarning, MLEResult, WarmMLE, fit_log_potentials, project_simplex, tie_groups
from .reconcile import max_disagreement, reconcile_tables

__all__ = [
    "CGMResult", "Calibration", "ConvergenceWarning", "DEFAULT_MAX_JT_CELLS", "JunctionTree", "LoopyBP",
    "MLEResult", "Measurement", "NOISE_MODELS", "WarmMLE", "align", "as_cliques", "cgm_em", "fit_log_potentials",
    "gaussian_log_likelihood", "is_decomposable", "laplace_log_likelihood", "log_marginal", "marginal", "logsumexp",
    "make_inference", "max_disagreement", "project_simplex", "reconcile_tables", "tie_groups", "triangulate",
]
