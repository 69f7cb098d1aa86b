"""MST (McKenna, Miklau and Sheldon 2021): 1-way marginals, a private maximum spanning tree, its 2-way marginals.

The zCDP budget ``rho`` is split in three equal parts. A third measures every 1-way marginal
with Gaussian noise. Per attribute, the states whose noisy count is below three noise scales
then merge into one (MST's compression, [`Compression`][pgmpy_dp.synthesis.compression.Compression];
post-processing). A third selects a spanning tree by Kruskal's algorithm, each edge drawn by the
exponential mechanism among the pairs that join two components; a pair's score is the L1 distance
between its true 2-way table over the merged states and the independence estimate from the noisy
1-way tables (a record moves it by at most 1). The last third measures the tree's 2-way marginals
over the merged states. The model is our CGM-EM fit of all those measurements on the merged
states, expanded back to the declared states (a merged state's probability shared in proportion to
the noisy 1-way counts of its states, see docs/synthesis.md).
"""

from __future__ import annotations

import numpy as np

from .._progress import progress
from ..engine import project_simplex
from ..estimators.evidence import pooled_n_records
from ..privacy.domain import Domain, DomainError
from ..privacy.selection import exponential_mechanism, exponential_mechanism_rho
from ..tables.counting import contingency_table
from .compression import THRESHOLD, Compression
from .marginals import check_noise_scale, fit_final_model, measure

__all__ = ["check_mst", "pair_scores", "run_mst", "select_tree"]


def check_mst(domain: Domain, rho: float) -> None:
    """Refuse, from public facts only, a domain or budget MST cannot run on (nothing is spent).

    Examples
    --------
    >>> check_mst(Domain({"a": [0, 1], "b": [0, 1]}), rho=1e-30)
    Traceback (most recent call last):
    ...
    ValueError: the budget is too small for MST's 1-way marginals: their noise scale 1.73205e+15 exceeds the largest supported 1.09951e+12 (the tables would be pure noise); raise rho (or epsilon)
    """
    d = len(domain.attrs)
    if d < 2:
        raise DomainError("MST needs at least two columns (a spanning tree joins them); use method='aim' for one")
    check_noise_scale((d / (2.0 * rho / 3.0)) ** 0.5, "MST's 1-way marginals")


def run_mst(
    codes, domain: Domain, *, rho: float, rng=None, show_progress: bool = False, releases: list | None = None,
    threshold: float | None = THRESHOLD,
):
    """Run MST on encoded data; return ``(model, releases, selected)``.

    Parameters
    ----------
    codes : dict of str to numpy.ndarray
        One integer code array per attribute of ``domain`` (as ``Domain.encode`` gives).
    domain : Domain
        The public domain; at least two attributes.
    rho : float
        The zCDP budget, spent exactly.
    rng : numpy.random.Generator, optional
        A seeded generator for experiments; ``None`` draws every noise and selection from OpenDP's
        exact samplers.
    show_progress : bool
        Progress bars over the tree's edges and the final fit.
    releases : list, optional
        A list each release is appended to as soon as its noise is drawn (what a failure
        afterwards leaves paid for).
    threshold : float or None
        States whose noisy 1-way count is below ``threshold`` noise scales merge before the 2-way
        measurements (two or more per attribute; ``None`` merges nothing).

    Returns
    -------
    model : pgmpy.models.DiscreteMarkovNetwork
        The fitted tree-structured network over the declared states (with one potential per attribute).
    releases : list of MarginalRelease
        The 1-way release, then the tree's 2-way release (over the merged states: a merged
        state is the tuple of the declared states it holds).
    selected : list of tuple of str
        The tree's edges, in the order they were selected.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 2000)
    >>> codes = {"a": a, "b": a ^ (rng.random(2000) < 0.1), "c": rng.integers(0, 2, 2000)}
    >>> d = Domain({v: [0, 1] for v in "abc"})
    >>> model, releases, selected = run_mst(codes, d, rho=1.0, rng=rng)
    >>> selected[0]
    ('a', 'b')
    """
    attrs = list(domain.attrs)
    third = rho / 3.0
    releases = [] if releases is None else releases
    oneway = measure(codes, domain, [(a,) for a in attrs], third, rng, "MST: 1-way marginals")
    releases.append(oneway)
    n = pooled_n_records([oneway])
    compression = None if threshold is None else Compression.from_release(oneway, threshold)
    if compression is not None and compression.merged:
        codes, domain = compression.codes(codes), compression.merged_domain
        fitted_oneway = compression.merge_release(oneway)
    else:
        compression, fitted_oneway = None, oneway
    scores = pair_scores(codes, domain, {a: project_simplex(fitted_oneway[(a,)].values / n) for a in attrs}, n)
    selected = select_tree(attrs, scores, third, rng, show_progress)
    twoway = measure(codes, domain, selected, rho - 2.0 * third, rng, "MST: tree 2-way marginals")
    releases.append(twoway)
    model = fit_final_model([fitted_oneway, twoway], domain, show_progress).model_
    if compression is not None:
        model = compression.expand(model)
    return model, list(releases), selected


def pair_scores(codes, domain: Domain, probs, n: float) -> dict[tuple[str, str], float]:
    """MST's score of every pair: the L1 distance between its true counts and ``n`` times the
    product of the (noisy, public) 1-way distributions ``probs``; one record moves it by at most 1.

    Examples
    --------
    >>> import numpy as np
    >>> d = Domain({"a": [0, 1], "b": [0, 1]})
    >>> codes = {"a": np.array([0, 0, 1, 1]), "b": np.array([0, 0, 1, 1])}
    >>> pair_scores(codes, d, {"a": np.array([0.5, 0.5]), "b": np.array([0.5, 0.5])}, 4.0)
    {('a', 'b'): 4.0}
    """
    attrs = list(domain.attrs)
    scores = {}
    for i, a in enumerate(attrs):
        for b in attrs[i + 1:]:
            exact = contingency_table(codes, domain, (a, b))
            scores[(a, b)] = float(np.abs(exact - n * np.multiply.outer(probs[a], probs[b])).sum())
    return scores


def select_tree(attrs, scores, rho: float, rng=None, show_progress: bool = False) -> list[tuple[str, str]]:
    """A spanning tree by Kruskal's algorithm, each edge drawn by the exponential mechanism
    (sensitivity 1) among the pairs joining two components; spends exactly ``rho`` (zCDP).

    Examples
    --------
    >>> import numpy as np
    >>> tree = select_tree(["a", "b", "c"], {("a", "b"): 1e6, ("a", "c"): 0.0, ("b", "c"): 1e6}, 1.0,
    ...                    np.random.default_rng(0))
    >>> sorted(tree)   # the two heavy pairs, in either order
    [('a', 'b'), ('b', 'c')]
    """
    component = {a: a for a in attrs}

    def find(a):
        while component[a] != a:
            component[a] = component[component[a]]
            a = component[a]
        return a

    # the last edge's budget is what the others leave, so the selections spend exactly rho
    edges = len(attrs) - 1
    epsilon = (8.0 * rho / edges) ** 0.5
    spent = 0.0
    pairs = list(scores)
    selected = []
    for k in progress(range(edges), show_progress, "MST: spanning tree"):
        eps = epsilon if k < edges - 1 else (8.0 * (rho - spent)) ** 0.5
        spent += exponential_mechanism_rho(eps)
        candidates = [e for e in pairs if find(e[0]) != find(e[1])]
        chosen = candidates[exponential_mechanism([scores[e] for e in candidates], eps, 1.0, rng)]
        component[find(chosen[0])] = find(chosen[1])
        selected.append(chosen)
    return selected
