"""Junction-tree size of the exact likelihood fit on pgmpy's bnlearn networks, from their graphs alone.

Prints, per network, the CPD cells, the largest clique and the total cells of the triangulated moral
graph's cliques (what ``likelihood.exact_tree_cells`` reads) and the route ``DiscretePrivateMLE`` takes.

    PYTHONPATH=. python studies/wide_fallback/tree_cost.py
"""

from __future__ import annotations

import warnings

warnings.simplefilter("ignore")

import pgmpy_dp  # noqa: E402
from pgmpy_dp.datasets import load_network  # noqa: E402
from pgmpy_dp.estimators import likelihood  # noqa: E402

NETWORKS = ["asia", "child", "alarm", "insurance", "hailfinder", "win95pts", "andes", "pigs", "water", "diabetes",
            "mildew", "barley", "munin1", "link"]

if __name__ == "__main__":
    print("| network | nodes | CPD cells | largest clique | tree cells in all | route |")
    print("|---|---:|---:|---:|---:|---|")
    for name in NETWORKS:
        net = load_network(name)
        domain = pgmpy_dp.Domain({v: list(net.states[v]) for v in net.nodes()})
        families = [(v, *sorted(net.get_parents(v))) for v in net.nodes()]
        largest, total = likelihood.exact_tree_cells(domain, families)
        exact = largest <= likelihood.MAX_CLIQUE_CELLS and total <= likelihood.MAX_EXACT_CELLS
        cpd = sum(domain.cells(f) for f in families)
        print(f"| {name} | {len(families)} | {cpd:,} | {largest:,} | {total:,} | "
              f"{'likelihood' if exact else 'local-likelihood'} |", flush=True)
