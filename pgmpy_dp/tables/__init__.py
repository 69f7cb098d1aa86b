"""Layer 2: exact contingency tables and noisy marginal releases."""

from .artifact import MarginalRelease, NoisyTable
from .contribution import ContributionBound
from .counting import contingency_table, contingency_tables
from .plan import plan_tables
from .pooled import Pooled
from .release import release_counts, release_from_codes, release_marginals

__all__ = [
    "ContributionBound",
    "MarginalRelease",
    "NoisyTable",
    "Pooled",
    "contingency_table",
    "contingency_tables",
    "plan_tables",
    "release_counts",
    "release_from_codes",
    "release_marginals",
]
