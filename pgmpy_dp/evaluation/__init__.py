"""Layer 7: accuracy metrics for private models (KL, L1, query error, MAP agreement) and the fidelity report
of a synthetic table against the real one."""

from .fidelity import FidelityReport, fidelity_report
from .markov import kl_divergence

__all__: list[str] = ["FidelityReport", "fidelity_report", "kl_divergence"]
