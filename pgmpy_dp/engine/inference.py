"""Choosing an inference engine for a model structure: exact when affordable, loopy otherwise."""

from __future__ import annotations

from collections.abc import Sequence

from ..privacy.domain import Domain
from .junction_tree import JunctionTree, as_cliques
from .loopy import LoopyBP

#: ``inference="auto"`` uses the junction tree while its largest clique has at most this many cells (8 MB).
DEFAULT_MAX_JT_CELLS = 1_000_000


def make_inference(
    domain: Domain,
    cliques: Sequence[Sequence[str]],
    method: str = "auto",
    max_cells: int = DEFAULT_MAX_JT_CELLS,
    **loopy_options,
) -> JunctionTree | LoopyBP:
    """Build the inference engine for ``cliques`` over ``domain``.

    Parameters
    ----------
    method : {"auto", "junction-tree", "loopy"}
        ``"auto"`` picks the exact junction tree unless its largest clique
        exceeds ``max_cells`` cells, then loopy belief propagation.
    loopy_options
        Passed to [`LoopyBP`][pgmpy_dp.engine.loopy.LoopyBP] (``damping``, ``max_iter``, ``tol``).

    Examples
    --------
    >>> d = Domain({v: range(10) for v in "abcd"})
    >>> type(make_inference(d, [("a", "b"), ("b", "c"), ("c", "d")])).__name__
    'JunctionTree'
    >>> type(make_inference(d, [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")], max_cells=100)).__name__
    'LoopyBP'
    """
    cliques = as_cliques(domain, cliques)
    if method not in ("auto", "junction-tree", "loopy"):
        raise ValueError(f"inference must be 'auto', 'junction-tree' or 'loopy', got {method!r}")
    if method == "loopy":
        return LoopyBP(domain, cliques, **loopy_options)
    jt = JunctionTree(domain, cliques)
    if method == "auto" and jt.max_cells > max_cells:
        return LoopyBP(domain, cliques, **loopy_options)
    return jt
