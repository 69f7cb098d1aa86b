"""Layer 6: accuracy metrics for private models (KL, L1, query error, MAP agreement)."""

__all__: list[str] = []
