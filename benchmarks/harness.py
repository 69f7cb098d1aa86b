"""What every benchmark shares: the command line, result files, timing, example data and metrics.

The scripts in this folder import this module only (never each other): run them from the repository root
as ``python benchmarks/<name>.py``, which puts this folder on ``sys.path``.

Every script accepts ``--quick`` (a small grid that runs the real code path in under a minute on one
core; its results go to ``results/<out>_quick.*``, which git ignores), ``--seed`` and ``--out`` (the
stem of the result files in ``benchmarks/results/``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import contextlib
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

RESULTS = Path(__file__).parent / "results"


def parser(doc: str, out: str, seed: int = 0) -> argparse.ArgumentParser:
    """An argument parser with the options every benchmark has: ``--quick``, ``--seed`` and ``--out``."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="a small grid through the same code path, under a minute on one core "
                         "(results go to results/<out>_quick.*)")
    ap.add_argument("--seed", type=int, default=seed, help="seed of the data and the noise")
    ap.add_argument("--out", default=out, help="stem of the result files in benchmarks/results/")
    return ap


def parse(ap: argparse.ArgumentParser, argv=None, **quick) -> argparse.Namespace:
    """Parse ``argv``; with ``--quick`` the options named in ``quick`` take those values (unless given on the
    command line) and the default ``--out`` gets the suffix ``_quick``, so a quick run never overwrites the
    tracked results."""
    args = ap.parse_args(argv)
    if args.quick:
        for name, value in quick.items():
            if getattr(args, name) == ap.get_default(name):  # an option left at its default
                setattr(args, name, value)
        if args.out == ap.get_default("out"):
            args.out = f"{args.out}_quick"
    return args


def result_path(name: str, suffix: str = ".csv") -> Path:
    """``benchmarks/results/<name><suffix>``, the folder made if missing."""
    RESULTS.mkdir(exist_ok=True)
    return RESULTS / f"{name}{suffix}"


def write_csv(frame: pd.DataFrame, name: str, **kwargs) -> Path:
    """Write ``frame`` to ``results/<name>.csv`` (no index unless asked) and say where."""
    path = result_path(name)
    frame.to_csv(path, index=kwargs.pop("index", False), **kwargs)
    print(f"wrote {path}")
    return path


def append_rows(rows: list[dict], path: Path) -> None:
    """Append ``rows`` to the CSV at ``path`` (header only when the file is new): a run stopped early keeps
    every row it finished. Values go under their own column names, whatever the rows' key order; a row
    with a column the file lacks rewrites the file with the union of the columns."""
    if not rows:
        return
    new = pd.DataFrame(rows)
    if path.exists():
        header = list(pd.read_csv(path, nrows=0).columns)
        if set(new.columns) - set(header):  # a new column: rewrite the file with the union of columns
            pd.concat([pd.read_csv(path), new], ignore_index=True).to_csv(path, index=False)
            return
        new = new.reindex(columns=header)  # missing columns stay empty, every value under its own name
    new.to_csv(path, mode="a", header=not path.exists(), index=False)


def save_figure(fig, name: str, dpi: int = 100) -> Path | None:
    """Save a matplotlib figure as ``results/<name>.png`` with a 64-colour palette (a plot's few colours
    survive; the file is a quarter of the RGBA one)."""
    import io

    import matplotlib.pyplot as plt

    path = result_path(name, ".png")
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=dpi, format="png")
    plt.close(fig)
    try:
        from PIL import Image
    except ImportError:  # matplotlib depends on Pillow; keep the plain PNG if it is absent anyway
        path.write_bytes(buffer.getvalue())
    else:
        buffer.seek(0)
        Image.open(buffer).convert("RGB").quantize(colors=64).save(path, optimize=True)
    print(f"wrote {path}")
    return path


def pyplot():
    """matplotlib's pyplot on the Agg backend, or None (and a note) when the ``plot`` extra is missing."""
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no plot (pip install -e '.[bench]')")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def best_time(fn, repeat: int) -> float:
    """The fastest of ``repeat`` wall times of ``fn()``, in seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def timed(fn):
    """``(fn(), wall seconds)``."""
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


@contextlib.contextmanager
def quiet():
    """Silence warnings (pgmpy's notices, convergence chatter of short fits) inside the block."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def network_sample(name: str, rows: int, seed: int = 0, block: int = 100_000):
    """``(network, DataFrame)``: ``rows`` records of an example network with categorical columns.

    More than ``block`` rows repeat a ``block``-row forward sample (counting and fitting cost do not depend
    on the distribution, and forward sampling 1e6 rows takes minutes)."""
    from pgmpy_dp.datasets import load_network, sample_network

    net = load_network(name)
    base = sample_network(net, min(rows, block), seed=seed)
    if rows <= block:
        return net, base
    reps = -(-rows // block)
    return net, pd.concat([base] * reps, ignore_index=True).iloc[:rows]


def empty_model(net):
    """A pgmpy DiscreteBayesianNetwork with ``net``'s nodes and edges and no CPDs."""
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork(net.edges())
    model.add_nodes_from(net.nodes())
    return model


def paired(runs: pd.DataFrame, method: str, baseline: str, metric: str,
           cell=("network", "records", "epsilon"), run: str = "run") -> pd.DataFrame:
    """Per cell: the mean paired difference ``method - baseline`` of ``metric`` over runs that share their
    data and seed, its standard error, the runs, in how many ``method`` was lower, and the baseline's mean."""
    cell = list(cell)
    a = runs[runs.method == method].set_index([*cell, run])[metric]
    b = runs[runs.method == baseline].set_index([*cell, run])[metric]
    d = (a - b).dropna().rename("diff").reset_index()
    g = d.groupby(cell, sort=False)["diff"]
    out = pd.DataFrame({"diff": g.mean(), "se": g.sem(), "runs": g.size(), "wins": g.apply(lambda x: int((x < 0).sum()))})
    out["baseline"] = b.groupby(cell).mean().reindex(out.index)
    return out.reset_index()


def win_counts(runs: pd.DataFrame, method: str, baseline: str, metrics, **cells) -> pd.DataFrame:
    """Per metric: cells where ``method`` has the lower mean, and where it is lower (significantly better) or
    higher (significantly worse) by more than two paired standard errors."""
    rows = []
    for metric in metrics:
        p = paired(runs, method, baseline, metric, **cells)
        if not len(p):
            continue
        rows.append({"metric": metric, "cells": len(p), "better": int((p["diff"] < 0).sum()),
                     "significantly_better": int((p["diff"] < -2 * p["se"]).sum()),
                     "significantly_worse": int((p["diff"] > 2 * p["se"]).sum()),
                     "run_wins": f"{int(p['wins'].sum())}/{int(p['runs'].sum())}"})
    return pd.DataFrame(rows)


# structure learning: the weights the benchmarks compare (structure.py, structure_k3.py)

def doubly_centred(t: np.ndarray) -> np.ndarray:
    """A k x k log-potential without its row and column terms (those belong to the node terms)."""
    return t - t.mean(axis=0, keepdims=True) - t.mean(axis=1, keepdims=True) + t.mean()


def sklearn_weights(codes: np.ndarray, k: int) -> dict:
    """Non-private l1 logistic regressions of every node on the others, symmetrised doubly centred weights."""
    from sklearn.linear_model import LogisticRegression

    n, p = codes.shape
    C = 1.0 / (math.sqrt(math.log(max(p, 3)) / n) / 4 * n)  # liblinear's C multiplies the summed loss
    if k == 2:
        S = 2.0 * codes - 1.0
        A = np.zeros((p, p))
        for i in range(p):
            others = np.delete(np.arange(p), i)
            with quiet():
                clf = LogisticRegression(l1_ratio=1.0, C=C, solver="liblinear", tol=1e-4, max_iter=1000)
                clf.fit(S[:, others], codes[:, i])
            A[i, others] = clf.coef_[0] / 2.0  # the log-odds of x_i are 2 sum_j A_ij s_j + 2 theta_i
        A = (A + A.T) / 2
        s = np.array([-1.0, 1.0])
        return {(i, j): A[i, j] * np.outer(s, s) for i, j in itertools.combinations(range(p), 2)}
    onehot = np.zeros((n, p * k))
    onehot[np.arange(n)[:, None], np.arange(p) * k + codes] = 1.0
    raw = {}
    for i in range(p):
        feats = np.delete(np.arange(p * k), np.arange(i * k, (i + 1) * k))
        D = np.zeros((k, k, p * k))
        for u, v in itertools.combinations(range(k), 2):
            rows = np.flatnonzero((codes[:, i] == u) | (codes[:, i] == v))
            y = codes[rows, i] == u
            if y.all() or not y.any():
                continue
            with quiet():
                clf = LogisticRegression(l1_ratio=1.0, C=1.0 / (math.sqrt(math.log(max(p, 3)) / n) / 4 * len(rows)),
                                         solver="liblinear", tol=1e-4, max_iter=1000)
                clf.fit(onehot[rows][:, feats], y)
            D[u, v, feats] = clf.coef_[0]
            D[v, u, feats] = -clf.coef_[0]
        for j in range(p):
            if j != i:
                block = D[:, :, j * k:(j + 1) * k]
                raw[i, j] = (block - block.mean(axis=2, keepdims=True)).mean(axis=1)
    return {(i, j): doubly_centred((raw[i, j] + raw[j, i].T) / 2) for i, j in itertools.combinations(range(p), 2)}


def load_adult(folder: Path, rows: int | None = None, columns: int | None = None, seed: int = 0):
    """``(integer codes, sizes)``: Adult's table and public domain sizes; ``rows`` a seeded subsample,
    ``columns`` the first that many columns."""
    sizes = json.loads((Path(folder) / "adult-domain.json").read_text())
    if columns is not None:
        sizes = dict(list(sizes.items())[:columns])
    codes = pd.read_csv(Path(folder) / "adult.csv")[list(sizes)]
    if rows is not None and rows < len(codes):
        codes = codes.sample(rows, random_state=seed).reset_index(drop=True)
    return codes, sizes


def contingency(codes: pd.DataFrame, sizes: dict, attrs) -> np.ndarray:
    """The exact count table of integer-coded columns over ``attrs`` (axes in that order)."""
    shape = tuple(sizes[a] for a in attrs)
    flat = np.ravel_multi_index(tuple(codes[a].to_numpy() for a in attrs), shape)
    return np.bincount(flat, minlength=math.prod(shape)).reshape(shape).astype(float)


def have_mbi() -> bool:
    """Whether mbi (private-pgm), the optional peer of the synthesis benchmarks, is installed."""
    try:
        import mbi  # noqa: F401
    except ImportError:
        return False
    return True


# -- Dask clusters: the workers' CPU time and peak memory ----------------------------------------------


def start_rss_sampler(dask_worker, interval=0.02):
    """Sample this worker's resident memory every ``interval`` s, keeping the maximum (ru_maxrss
    cannot be reset, and a worker's start-up imports already set it high); note its CPU time."""
    import threading

    import psutil

    proc = psutil.Process()
    dask_worker.rss_peak = proc.memory_info().rss
    dask_worker.rss_sampling = True
    dask_worker.cpu_start = sum(proc.cpu_times()[:2])

    def loop():
        while dask_worker.rss_sampling:
            dask_worker.rss_peak = max(dask_worker.rss_peak, proc.memory_info().rss)
            time.sleep(interval)

    threading.Thread(target=loop, daemon=True).start()
    return dask_worker.rss_peak / 2**20


def stop_rss_sampler(dask_worker):
    import psutil

    dask_worker.rss_sampling = False
    return dask_worker.rss_peak / 2**20, sum(psutil.Process().cpu_times()[:2]) - dask_worker.cpu_start


def cluster_measure(client, fn) -> dict:
    """Run ``fn()`` on the cluster: wall seconds, the workers' CPU seconds, their largest RSS before/during (MB).

    CPU seconds make the per-core throughput independent of how busy the machine is: on a
    shared machine two worker processes do not get two cores' worth of wall time.
    """
    before = max(client.run(start_rss_sampler).values())
    t0 = time.perf_counter()
    try:
        fn()
    finally:
        wall = time.perf_counter() - t0
        stopped = list(client.run(stop_rss_sampler).values())
    return {"wall": wall, "cpu": sum(c for _, c in stopped), "rss_before": before,
            "rss_peak": max(r for r, _ in stopped)}


@contextlib.contextmanager
def driver_rss():
    """Sample this process's resident memory every 20 ms inside the block; yields a dict that gets
    ``before`` and ``peak`` (MB) when the block ends (ru_maxrss cannot be reset between runs)."""
    import threading

    import psutil

    proc = psutil.Process()
    out = {"before": proc.memory_info().rss / 2**20}
    peak, running = [proc.memory_info().rss], [True]

    def loop():
        while running[0]:
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.02)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield out
    finally:
        running[0] = False
        thread.join()
        out["peak"] = max(peak[0], proc.memory_info().rss) / 2**20
