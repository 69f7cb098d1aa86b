"""Plots for private models (matplotlib is the optional ``plot`` extra: ``pip install matplotlib``).

Each function draws on a new or given matplotlib ``Axes``, returns it, and
saves a PNG when ``path`` is given.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def _axes(ax, figsize):
    try:
        import matplotlib

        if ax is None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            'plotting needs matplotlib (the optional "plot" extra): pip install matplotlib, '
            'or pip install ".[plot]" in a pgmpy-dp checkout'
        ) from exc
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def _finish(ax, path):
    ax.grid(alpha=0.3)
    ax.figure.tight_layout()
    if path is not None:
        ax.figure.savefig(Path(path), dpi=120)
    return ax


def plot_privacy_utility(
    results: pd.DataFrame, metric: str, by: str = "method", ax=None, path=None, log: bool = True
):
    """Mean ``metric`` against epsilon, one line per value of ``by``, with min-max bands over runs.

    Parameters
    ----------
    results : pandas.DataFrame
        One row per run with columns ``epsilon``, ``by`` and ``metric``.

    Examples
    --------
    >>> runs = pd.DataFrame({"epsilon": [1, 1, 3, 3], "method": ["a", "a", "a", "a"],
    ...                      "error": [0.3, 0.5, 0.1, 0.2]})
    >>> ax = plot_privacy_utility(runs, "error")
    >>> ax.get_xlabel()
    'epsilon'
    """
    ax = _axes(ax, (5, 3.5))
    for label, part in results.groupby(by, sort=False):
        stats = part.groupby("epsilon")[metric].agg(["mean", "min", "max"])
        line = ax.plot(stats.index, stats["mean"], "o-", label=str(label))[0]
        ax.fill_between(stats.index, stats["min"], stats["max"], color=line.get_color(), alpha=0.15)
    if log:
        from matplotlib.ticker import FuncFormatter, LogFormatter

        ax.set_yscale("log")
        # plain numbers ("0.01", "3"), not "3 x 10^0"; minor ticks labelled only on narrow ranges
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False))
    ax.set_xlabel("epsilon")
    ax.set_ylabel(metric)
    ax.set_title(f"privacy-utility: {metric} (mean, min-max band)")
    ax.legend()
    return _finish(ax, path)


def plot_allocation(estimator, ax=None, path=None):
    """Stage-II budget per node of a fitted [`DiscretePrivateMLE`][pgmpy_dp.estimators.bayesian.DiscretePrivateMLE], largest first.

    The uniform share is drawn as a dashed line, so the data-dependent shift is visible.

    Examples
    --------
    >>> import pgmpy_dp
    >>> from pgmpy.models import DiscreteBayesianNetwork
    >>> df = pgmpy_dp.datasets.sample_network("asia", 2000, seed=0)
    >>> est = pgmpy_dp.DiscretePrivateMLE(1.0, random_state=0)
    >>> _ = DiscreteBayesianNetwork(pgmpy_dp.datasets.load_network("asia").edges()).fit(df, estimator=est)
    >>> len(plot_allocation(est).patches)
    8
    """
    ax = _axes(ax, (max(5, 0.28 * len(estimator.allocation_)), 3.5))
    alloc = estimator.allocation_.sort_values(ascending=False)
    ax.bar(range(len(alloc)), alloc.to_numpy(), color="tab:blue")
    ax.axhline(alloc.sum() / len(alloc), ls="--", color="gray", label="uniform share of stage II")
    ax.set_xticks(range(len(alloc)), alloc.index, rotation=70, ha="right", fontsize=8)
    ax.set_ylabel("epsilon")
    ax.set_title(
        f"{estimator.allocation} allocation: stage I {estimator.stage1_epsilon_:.3g}, "
        f"stage II {alloc.sum():.3g}"
    )
    ax.legend(fontsize=8)
    return _finish(ax, path)


def plot_noisy_vs_inferred(noisy, inferred, truth=None, ax=None, path=None):
    """Scatter of noisy against model-inferred marginal cells (Bernstein et al., Fig. 3a).

    Parameters
    ----------
    noisy, inferred : array-like
        The same cells: noisy released probabilities and the model's marginals.
    truth : array-like, optional
        True probabilities; when given, both are plotted against it instead.

    Examples
    --------
    >>> ax = plot_noisy_vs_inferred([0.1, 0.5, 0.4], [0.12, 0.48, 0.4])
    >>> ax.get_xlabel()
    'noisy release'
    """
    ax = _axes(ax, (4, 4))
    noisy, inferred = np.ravel(noisy), np.ravel(inferred)
    if truth is None:
        ax.scatter(noisy, inferred, s=8, alpha=0.6)
        ax.set_xlabel("noisy release")
        ax.set_ylabel("inferred by the model")
        lo, hi = min(noisy.min(), inferred.min()), max(noisy.max(), inferred.max())
    else:
        truth = np.ravel(truth)
        ax.scatter(truth, noisy, s=8, alpha=0.5, label="noisy release")
        ax.scatter(truth, inferred, s=8, alpha=0.5, label="inferred by the model")
        ax.set_xlabel("true marginal")
        ax.set_ylabel("estimate")
        ax.legend(fontsize=8)
        lo, hi = min(truth.min(), noisy.min()), max(truth.max(), noisy.max())
    ax.plot([lo, hi], [lo, hi], color="gray", lw=1)
    ax.set_title("marginal cells")
    return _finish(ax, path)
