"""Layer 6: accuracy metrics for private models (KL, L1, query error, MAP agreement)."""

from .markov import kl_divergence

__all__: list[str] = ["kl_divergence"]
