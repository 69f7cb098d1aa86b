"""Our PrivBayes on Adult: exact 3-way L1 of the model's marginals against the data's, and fit time.

OMP_NUM_THREADS=1 /work/venv/bin/python -m studies.privbayes.adult --seeds 0 1 2 --out studies/privbayes/results/ours.csv
(run from the worktree root so that pgmpy_dp is this checkout). Pure DP at epsilon 1 and zCDP at the rho of
(epsilon 1, delta 1e-9) by the tight conversion `epsilon_delta_to_rho`.
"""

import argparse
import string
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from adult_data import l1_kway, load_adult, table  # noqa: E402

import pgmpy_dp  # noqa: E402
from pgmpy_dp.privacy.parameters import epsilon_delta_to_rho  # noqa: E402
from pgmpy_dp.structure.privbayes import DEFAULT_THETA, run_privbayes  # noqa: E402


def exact_marginal(model):
    """attrs -> P(attrs) by contracting the CPDs of the attributes' ancestors (einsum finds the elimination order)."""
    cpds = {c.variable: c for c in model.get_cpds()}
    letters = {v: string.ascii_letters[i] for i, v in enumerate(model.nodes())}  # up to 52 nodes

    def marginal(attrs):
        need = set(attrs)
        for a in attrs:
            need |= set(model.get_ancestral_graph([a]).nodes())
        operands, subs = [], []
        for v in need:
            c = cpds[v]
            order = c.variables  # (v, *evidence); values reshaped to cardinalities
            operands.append(c.values.reshape(c.cardinality))
            subs.append("".join(letters[u] for u in order))
        expr = ",".join(subs) + "->" + "".join(letters[a] for a in attrs)
        return np.einsum(expr, *operands, optimize="greedy")

    return marginal


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--theta", type=float, nargs="+", default=[DEFAULT_THETA])
    p.add_argument("--degree", type=int, default=None)
    p.add_argument("--network", default=None, help="a bnlearn network sampled instead of Adult (held-out check)")
    p.add_argument("--rows", type=int, default=20000)
    p.add_argument("--sample", type=int, default=1_000_000, help="rows sampled from a network model to score it")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    if args.network:
        df = pgmpy_dp.datasets.sample_network(args.network, args.rows, seed=12345)
        domain = pgmpy_dp.Domain.from_dataframe(df)
        codes = domain.encode(df)
        sizes = {c: domain.size(c) for c in domain.attrs}
    else:
        df, sizes = load_adult()
        codes = {c: df[c].to_numpy(dtype=np.int64) for c in sizes}
        domain = pgmpy_dp.Domain({c: list(range(s)) for c, s in sizes.items()})
    rows = []
    for theta in args.theta:
        for label, kw in [("epsilon=1", dict(epsilon=1.0)), ("rho(1,1e-9)", dict(rho=epsilon_delta_to_rho(1.0, 1e-9)))]:
            for seed in args.seeds:
                t0 = time.perf_counter()
                model, releases, selected = run_privbayes(
                    codes, domain, rng=np.random.default_rng(seed), theta=theta, degree=args.degree, **kw)
                fit_s = time.perf_counter() - t0
                if args.network:  # many small-domain nodes: einsum over the ancestors is slow, sample instead
                    syn = domain.encode(pgmpy_dp.sample(model, args.sample, random_state=seed))
                    marginal = lambda a: table(syn, sizes, a)  # noqa: E731
                else:
                    marginal = exact_marginal(model)
                err = l1_kway(marginal, codes, sizes)
                err2 = l1_kway(marginal, codes, sizes, k=2)
                max_cells = max(int(np.prod([sizes[a] for a in (x, *pa)])) for x, pa in selected)
                rows.append(dict(method="ours-privbayes", data=args.network or "adult", budget=label, theta=theta, degree=args.degree, seed=seed,
                                 l1_3way=err, l1_2way=err2, fit_s=fit_s,
                                 max_parents=max(len(pa) for _, pa in selected), max_family_cells=max_cells,
                                 edges=" ".join(f"{'+'.join(pa)}>{x}" for x, pa in selected if pa)))
                print({k: v for k, v in rows[-1].items() if k != "edges"}, flush=True)
    if args.out:
        pd.DataFrame(rows).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
