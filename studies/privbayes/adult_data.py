"""Adult loading and the 3-way L1 score shared by the PrivBayes comparison scripts (numpy/pandas only)."""

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path("/work/shared/data")


def load_adult():
    df = pd.read_csv(DATA / "adult.csv")
    sizes = json.loads((DATA / "adult-domain.json").read_text())
    return df[list(sizes)], sizes


def table(codes: dict, sizes: dict, attrs) -> np.ndarray:
    shape = [sizes[a] for a in attrs]
    index = np.ravel_multi_index([np.asarray(codes[a], dtype=np.int64) for a in attrs], shape)
    counts = np.bincount(index, minlength=int(np.prod(shape))).astype(float).reshape(shape)
    return counts / counts.sum()


def l1_kway(marginal, codes: dict, sizes: dict, k: int = 3) -> float:
    """Mean over all k-way attribute sets of the L1 distance between normalised tables.

    ``marginal(attrs)`` returns the model's table over ``attrs`` (axes in that order).
    """
    errs = [np.abs(marginal(c) - table(codes, sizes, c)).sum() for c in combinations(list(sizes), k)]
    return float(np.mean(errs))
