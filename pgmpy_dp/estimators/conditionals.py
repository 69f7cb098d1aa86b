"""From (noisy, consistent) count tables to CPD columns."""

from __future__ import annotations

import numpy as np


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
