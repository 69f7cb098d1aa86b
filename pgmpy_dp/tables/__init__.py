"""Layer 2: exact contingency tables and noisy marginal releases."""

from .artifact import MarginalRelease, NoisyTable
from .counting import contingency_table, contingency_tables
from .pooled import Pooled
from .release import release_counts, release_from_codes, release_marginals

__all__ = [
    "MarginalRelease", "NoisyTable", "Pooled", "contingency_table", "contingency_tables", "release_counts",
    "release_from_codes", "release_marginals",
]
