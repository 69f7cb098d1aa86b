"""MST (McKenna, Miklau and Sheldon 2021): 1-way marginals, a private maximum spanning tree, its 2-way marginals.

A third of ``rho`` measures every 1-way marginal; rare states then merge
([`Compression`][pgmpy_dp.synthesis.compression.Compression], post-processing). A third selects a spanning
tree by Kruskal's algorithm, each edge drawn by the exponential mechanism (score: the L1 distance between
the pair's true 2-way table and the independence estimate, sensitivity 1). The last third measures the
tree's 2-way marginals. The CGM-EM fit of them all is expanded back to the declared states (docs/synthesis.md).
"""

from __future__ import annotations

import itertools

import numpy as np

from .._progress import progress
from ..engine import project_simplex
from ..estimators.evidence import pooled_n_records
from ..privacy.domain import DEFAULT_MAX_CELLS, CellLimitError, Domain, DomainError
from ..privacy.loss import PrivacyLoss
from ..privacy.selection import exponential_mechanism, exponential_mechanism_rho
from ..tables.counter import as_counter
from .compression import THRESHOLD, Compression
from .marginals import check_noise_scale, fit_final_model, measure
from .method import Measurements, Method, Plan


def check_mst(domain: Domain, rho: float) -> None:
    """Refuse, from public facts only, a domain or budget MST cannot run on (nothing is spent).

    The tree may pick any pair, so a pair whose *declared* states make more cells than one release
    allows is refused here (which states merge is known only after spending).

    Examples
    --------
    >>> check_mst(Domain({"a": [0, 1], "b": [0, 1]}), rho=1e-30)
    Traceback (most recent call last):
    ...
    ValueError: the budget is too small for MST's 1-way marginals: their noise scale 1.73205e+15 exceeds the largest supported 1.09951e+12 (the tables would be pure noise); raise rho (or epsilon)
    >>> check_mst(Domain({"a": range(4000), "b": range(3000), "c": [0, 1]}), rho=1.0)
    Traceback (most recent call last):
    ...
    pgmpy_dp.privacy.errors.CellLimitError: MST releases the 2-way table of every pair its spanning tree picks, and it may pick any pair: columns 'a' (4,000 states) and 'b' (3,000 states) make 12,000,000 cells, more than the 10,000,000 of one release (1 such pair in all); declare coarser domains for these columns (bins, or fewer states), or use method='aim', whose default workload leaves such sets out
    """
    d = len(domain.attrs)
    if d < 2:
        raise DomainError("MST needs at least two columns (a spanning tree joins them); use method='aim' for one")
    _check_pair_cells(domain)
    check_noise_scale((d / (2.0 * rho / 3.0)) ** 0.5, "MST's 1-way marginals")


def _check_pair_cells(domain: Domain) -> None:
    sizes = sorted((domain.size(a) for a in domain.attrs), reverse=True)
    if sizes[0] * sizes[1] <= DEFAULT_MAX_CELLS:  # the two largest columns make the largest pair
        return
    over = [p for p in itertools.combinations(domain.attrs, 2) if domain.cells(p) > DEFAULT_MAX_CELLS]
    a, b = max(over, key=domain.cells)
    count = "1 such pair" if len(over) == 1 else f"{len(over)} such pairs"
    raise CellLimitError(
        f"MST releases the 2-way table of every pair its spanning tree picks, and it may pick any pair: "
        f"columns {a!r} ({domain.size(a):,} states) and {b!r} ({domain.size(b):,} states) make "
        f"{domain.cells((a, b)):,} cells, more than the {DEFAULT_MAX_CELLS:,} of one release ({count} in all); "
        "declare coarser domains for these columns (bins, or fewer states), or use method='aim', whose "
        "default workload leaves such sets out"
    )


def run_mst(
    codes, domain: Domain, *, rho: float, rng=None, show_progress: bool = False,
    recorder: Measurements | None = None, threshold: float | None = THRESHOLD,
):
    """Run MST on encoded data; return ``(model, releases, selected)``.

    Parameters
    ----------
    codes, domain
        One integer code array per attribute (``Domain.encode``), or a
        [`Counter`][pgmpy_dp.tables.counter.Counter] of the rows, and the public domain (two or more attributes).
    rho : float
        The zCDP budget, spent exactly.
    rng, show_progress, recorder
        As for [`run_aim`][pgmpy_dp.synthesis.aim.run_aim] (``recorder`` gets each release and tree edge).
    threshold : float or None
        States whose noisy 1-way count is below ``threshold`` noise scales merge before the 2-way
        measurements (two or more per attribute; ``None`` merges nothing).

    Returns
    -------
    model : pgmpy.models.DiscreteMarkovNetwork
        The fitted tree-structured network over the declared states.
    releases : list of MarginalRelease
        The 1-way release, then the tree's 2-way release (over the merged states).
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
    recorder = Measurements() if recorder is None else recorder
    codes = as_counter(codes, domain)
    oneway = recorder.release(measure(codes, domain, [(a,) for a in attrs], third, rng, "MST: 1-way marginals"))
    n = pooled_n_records([oneway])
    compression = None if threshold is None else Compression.from_release(oneway, threshold)
    if compression is not None and compression.merged:
        domain = compression.merged_domain
        codes = codes.merged(compression.codes_map, domain)
        fitted_oneway = compression.merge_release(oneway)
    else:
        compression, fitted_oneway = None, oneway
    scores = pair_scores(codes, domain, {a: project_simplex(fitted_oneway[(a,)].values / n) for a in attrs}, n)
    selected = select_tree(attrs, scores, third, rng, show_progress, recorder=recorder)
    twoway = recorder.release(measure(codes, domain, selected, rho - 2.0 * third, rng, "MST: tree 2-way marginals"))
    model = fit_final_model([fitted_oneway, twoway], domain, show_progress).model_
    if compression is not None:
        model = compression.expand(model)
    return model, list(recorder.releases), selected


def pair_scores(codes, domain: Domain, probs, n: float) -> dict[tuple[str, str], float]:
    """MST's score of every pair: the L1 distance between its true counts and ``n`` times the
    product of the (noisy, public) 1-way distributions ``probs``; one record moves it by at most 1.

    ``codes``: the encoded rows or a [`Counter`][pgmpy_dp.tables.counter.Counter] of them (one pass for all pairs).

    Examples
    --------
    >>> import numpy as np
    >>> d = Domain({"a": [0, 1], "b": [0, 1]})
    >>> codes = {"a": np.array([0, 0, 1, 1]), "b": np.array([0, 0, 1, 1])}
    >>> pair_scores(codes, d, {"a": np.array([0.5, 0.5]), "b": np.array([0.5, 0.5])}, 4.0)
    {('a', 'b'): 4.0}
    """
    attrs = list(domain.attrs)
    pairs = [(a, b) for i, a in enumerate(attrs) for b in attrs[i + 1:]]
    tables = as_counter(codes, domain).tables(pairs)
    return {
        (a, b): float(np.abs(exact - n * np.multiply.outer(probs[a], probs[b])).sum())
        for (a, b), exact in zip(pairs, tables)
    }


def select_tree(
    attrs, scores, rho: float, rng=None, show_progress: bool = False, recorder: Measurements | None = None
) -> list[tuple[str, str]]:
    """A spanning tree by Kruskal's algorithm, each edge drawn by the exponential mechanism
    (sensitivity 1) among the pairs joining two components; spends exactly ``rho`` (zCDP).
    Each edge goes to ``recorder`` (if given) as soon as it is drawn.

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
        if recorder is not None:
            recorder.select(chosen)
    return selected


class Mst(Method):
    """MST behind the synthesizer's protocol: a zCDP method with no settings of its own.

    Examples
    --------
    >>> from pgmpy_dp.privacy.loss import ZCDP
    >>> MST.check(Domain({"a": [0, 1], "b": [0, 1]}), ZCDP(1.0)).loss
    ZCDP(rho=1.0)
    """

    name = "mst"

    def check(self, domain: Domain, loss: PrivacyLoss) -> Plan:
        check_mst(domain, self.zcdp_rho(loss))
        return Plan(domain, loss)

    def run(self, codes, plan: Plan, recorder: Measurements, rng, show_progress: bool):
        return run_mst(codes, plan.domain, rho=plan.loss.rho, rng=rng, show_progress=show_progress, recorder=recorder)


#: The MST method object of the synthesizer's registry.
MST = Mst()
