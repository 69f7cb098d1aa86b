"""Layer 2: exact contingency tables and noisy marginal releases."""

from .counting import contingency_table, contingency_tables
from .release import (
    MarginalRelease,
    NoisyTable,
    plan_tables,
    release_counts,
    release_from_codes,
    release_marginals,
)

__all__ = [
    "MarginalRelease",
    "NoisyTable",
    "contingency_table",
    "contingency_tables",
    "plan_tables",
    "release_counts",
    "release_from_codes",
    "release_marginals",
]
