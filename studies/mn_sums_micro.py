"""Micro-benchmark of the sums a calibration does on the ER junction trees of issue 13's grid (tenth round).

For every (tree-clique shape, summed axes) pair that ``JunctionTree._fast_marginals`` reduces on the
three ER models of ``mn_accuracy.py --seed 2`` (population 0, N = 1e4, 1e5, 1e6), times the sum of
a random array of that shape (best of 3 x 2,000 calls, microseconds) in four ways:

* ``reduce``: ``np.add.reduce(x, axis=axes)``, the engine's sum before the round;
* ``ones-mid-reduce``: each contiguous run of axes as a product with ``ones`` when it is leading or
  trailing, ``np.add.reduce`` over the middle axis of an ``(A, B, C)`` view otherwise;
* ``ones-mid-gemm``: the same, with a middle run as a product with a tiled identity;
* ``ones`` (`_sum_plan`, the tenth round's candidate, then ``junction_tree._sum_plan`` behind the
  flag ``_BLAS_SUMS``; not adopted, so it lives here now): every run one product with ``ones``,
  batched over the leading axes (``np.matmul(ones(B), x.reshape(A, B, C))``).

Prints one row per pair and the total weighted by how often one calibration of each tree does it, and
writes ``results/<out>.csv``. Run with BLAS on one thread, as the grid does:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/mn_sums_micro.py --out mn_sums_micro_em13m
"""

from __future__ import annotations

import argparse
import collections
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from mn_accuracy import make_graph
from pgmpy_dp.engine import JunctionTree
from pgmpy_dp.privacy.domain import Domain

RESULTS = Path(__file__).parent / "results"


def _sum_plan(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple:
    """How to sum a C-ordered array of ``shape`` over ``axes`` by matrix products with vectors of ones.

    Each contiguous run of ``axes`` (last run first) is one product: the array viewed as
    ``(A, B, C)`` with the run as ``B`` is multiplied by ``ones(B)`` from the left (batched over
    ``A``), or from the right when ``C`` is 1. Steps ``(left, view shape, ones, result shape)``.

    >>> x = np.arange(24.0).reshape(2, 3, 4)
    >>> bool(np.array_equal(_sum_out(x, _sum_plan(x.shape, (0, 2))), x.sum(axis=(0, 2))))
    True
    """
    steps, cur = [], list(shape)
    for i, j in reversed(_runs(axes)):
        a, b, c = math.prod(cur[:i]), math.prod(cur[i:j]), math.prod(cur[j:])
        cur = cur[:i] + cur[j:]
        view = (a, b) if c == 1 else (a, b, c) if a > 1 else (b, c)
        steps.append((c > 1, view, np.ones(b), tuple(cur)))
    return tuple(steps)


def _sum_out(x: np.ndarray, plan: tuple) -> np.ndarray:
    """``x`` (C-ordered) summed as `_sum_plan` planned: a new array."""
    for left, view, ones, shape in plan:
        x = (np.matmul(ones, x.reshape(view)) if left else np.dot(x.reshape(view), ones)).reshape(shape)
    return x


def _runs(axes):
    out: list[list[int]] = []
    for a in sorted(axes):
        if out and out[-1][1] == a:
            out[-1][1] = a + 1
        else:
            out.append([a, a + 1])
    return out


def _alternative(shape, axes, mid):
    """Sum over ``axes`` with leading/trailing runs as products with ones and a middle run by ``mid``."""
    steps, cur = [], list(shape)
    for i, j in reversed(_runs(axes)):
        a, b, c = math.prod(cur[:i]), math.prod(cur[i:j]), math.prod(cur[j:])
        cur = cur[:i] + cur[j:]
        if c == 1:
            steps.append(("right", (a, b), np.ones(b), tuple(cur)))
        elif a == 1:
            steps.append(("left", (b, c), np.ones(b), tuple(cur)))
        elif mid == "reduce":
            steps.append(("mid", (a, b, c), None, tuple(cur)))
        else:
            steps.append(("right", (a, b * c), np.tile(np.eye(c), (b, 1)), tuple(cur)))

    def f(x):
        for kind, view, w, new in steps:
            if kind == "right":
                x = np.dot(x.reshape(view), w)
            elif kind == "left":
                x = np.matmul(w, x.reshape(view))
            else:
                x = np.add.reduce(x.reshape(view), axis=1)
            x = x.reshape(new)
        return x

    return f


def _time(f, x, n=2000):
    best = math.inf
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            f(x)
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="mn_sums_micro")
    args = parser.parse_args(argv)
    counts: collections.Counter = collections.Counter()
    domain = Domain({f"x{i}": list(range(10)) for i in range(10)})
    for n in (10_000, 100_000, 1_000_000):
        rng = np.random.default_rng([2, 1, n, 0])  # mn_accuracy.py --seed 2, model "er", population 0
        jt = JunctionTree(domain, make_graph("er", 10, rng, 0.3))
        for v in range(len(jt.nodes)):
            if jt._up[v] is not None and jt._up[v][0]:
                counts[(jt.shapes[v], jt._up[v][0])] += 1
            for _, axes, _ in jt._down[v]:
                if axes:
                    counts[(jt.shapes[v], axes)] += 1
            shapes = [jt.shapes[v]]
            for src, axes, target, _ in jt._outputs[v]:
                if axes:
                    counts[(shapes[src], axes)] += 1
                if target >= 0:
                    shapes.append(tuple(s for i, s in enumerate(shapes[src]) if i not in axes))
    rng = np.random.default_rng(0)
    rows = []
    for (shape, axes), count in sorted(counts.items(), key=lambda t: (-math.prod(t[0][0]), t[0][1])):
        x = rng.random(shape)
        ref = np.add.reduce(x, axis=axes)
        ways = {"reduce": lambda x: np.add.reduce(x, axis=axes),
                "ones-mid-reduce": _alternative(shape, axes, "reduce"),
                "ones-mid-gemm": _alternative(shape, axes, "gemm"),
                "ones": (lambda plan: lambda x: _sum_out(x, plan))(_sum_plan(shape, axes))}
        row = {"shape": "x".join(map(str, shape)), "axes": ",".join(map(str, axes)), "per_calibrations": count}
        for name, f in ways.items():
            np.testing.assert_allclose(f(x), ref, rtol=1e-13)
            row[f"us_{name}"] = _time(f, x)
        rows.append(row)
    df = pd.DataFrame(rows)
    total = {c: float((df[c] * df["per_calibrations"]).sum()) for c in df.columns if c.startswith("us_")}
    df = pd.concat([df, pd.DataFrame([{"shape": "total (weighted)", "axes": "", "per_calibrations": int(df["per_calibrations"].sum()), **total}])])
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / f"{args.out}.csv", index=False)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.2f}"))


if __name__ == "__main__":
    main()
