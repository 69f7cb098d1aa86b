"""From (noisy, consistent) count tables to probabilities: normalised joints and CPD columns.

Shared by the budget allocation (stage-I parameter estimates), the consistency
heuristic and the Bayesian-network estimator, so that every place turns counts
into probabilities the same way: negative cells clipped to zero, and an empty
table or parent configuration made uniform rather than NaN.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cpd_values", "normalise_table"]


def cpd_values(table: np.ndarray) -> np.ndarray:
    """Conditional distribution of axis 0 given the other axes, as a ``(k, prod(parents))`` array.

    Negative cells count as zero; parent configurations with no mass get the
    uniform distribution, not NaN.

    Examples
    --------
    >>> cpd_values(np.array([[3.0, 0.0], [1.0, -2.0]]))
    array([[0.75, 0.5 ],
           [0.25, 0.5 ]])
    """
    k = table.shape[0]
    flat = np.clip(table.reshape(k, -1), 0, None)
    totals = flat.sum(axis=0)
    return np.divide(flat, totals, out=np.full_like(flat, 1.0 / k), where=totals > 0)


def normalise_table(table: np.ndarray) -> np.ndarray:
    """A non-negative table scaled to sum to one; uniform when it has no mass.

    Examples
    --------
    >>> normalise_table(np.array([[1.0, 3.0], [0.0, 0.0]]))
    array([[0.25, 0.75],
           [0.  , 0.  ]])
    >>> normalise_table(np.zeros(2))
    array([0.5, 0.5])
    """
    total = table.sum()
    return table / total if total > 0 else np.full_like(table, 1.0 / table.size)
