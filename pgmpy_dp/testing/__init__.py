"""Layer 7: tooling for the package's tests and benchmarks, not part of the public API.

[`audit`][pgmpy_dp.testing.audit] runs black-box statistical privacy audits (an empirical lower
bound on the epsilon a mechanism achieves); [`pairwise_models`][pgmpy_dp.testing.pairwise_models]
draws synthetic pairwise Markov networks with known graphs and samples them, for the structure
learners' tests and benchmarks. Nothing in the library imports this package.
"""

from .audit import AuditResult, AuditTarget, audit_epsilon, clopper_pearson, run_in_loop
from .pairwise_models import model_edges, random_pairwise_model, sample_pairwise_model

__all__ = [
    "AuditResult",
    "AuditTarget",
    "audit_epsilon",
    "clopper_pearson",
    "model_edges",
    "random_pairwise_model",
    "run_in_loop",
    "sample_pairwise_model",
]
