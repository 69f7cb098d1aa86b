"""Private structure learning on random Ising models: Frank-Wolfe learner vs the 2-way tables route.

Routes, all at the same total zCDP budget ``rho``:

- ``fw``: ``PrivateIsingEstimator`` with oracle ``width`` (max row l1 norm of A, fields are zero) and ``eta``.
- ``tables-em`` / ``tables-mle``: Gaussian release of all p(p-1)/2 two-way tables, then
  ``PrivateMarkovEstimator(method="cgm-em" | "naive-mle")`` on the complete pairwise graph; the coupling of
  pair (i, j) in +-1 coding is ``(t00 + t11 - t01 - t10) / 4`` of its fitted log-potential table ``t``.
- ``tables-icov``: same release; the noisy tables give E[s_i], E[s_i s_j]; A_hat = -inv(Cov) off the
  diagonal (naive mean-field inverse), after clipping Cov's eigenvalues at 1e-3.

Edge when |A_hat_ij| > eta / 2 for every route. Writes one JSON line per (route, p, rho, n, model).

Usage: PYTHONPATH=. OMP_NUM_THREADS=1 nice -n 10 python studies/structure_tables_route/compare.py \
    --p 10 --models 8 --out studies/structure_tables_route/results_p10.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
import warnings

import numpy as np
from pgmpy.models import DiscreteMarkovNetwork

import pgmpy_dp  # noqa: F401  (registers the .dp accessor)
from pgmpy_dp import PrivateIsingEstimator, PrivateMarkovEstimator
from pgmpy_dp.structure.sampling import model_edges, random_pairwise_model, sample_pairwise_model

ETA = 0.5


def coupling_matrix(W):
    """A with W[i, j] = A_ij s s^T, s = (-1, 1)."""
    p = W.shape[0]
    A = np.zeros((p, p))
    for i, j in model_edges(W):
        t = W[i, j]
        A[i, j] = A[j, i] = (t[0, 0] + t[1, 1] - t[0, 1] - t[1, 0]) / 4
    return A


def edges_of(A, thr):
    p = A.shape[0]
    return {(i, j) for i in range(p) for j in range(i + 1, p) if abs(A[i, j]) > thr}


def couplings_from_fit(est, cols):
    idx = {c: i for i, c in enumerate(cols)}
    p = len(cols)
    A = np.zeros((p, p))
    for clique, t in zip(est.cliques_, est.log_potentials_):
        if len(clique) != 2:
            continue
        i, j = idx[clique[0]], idx[clique[1]]
        a = (t[0, 0] + t[1, 1] - t[0, 1] - t[1, 0]) / 4
        A[i, j] += a
        A[j, i] += a
    return A


def icov_couplings(release, cols):
    idx = {c: i for i, c in enumerate(cols)}
    p = len(cols)
    m_sum, m_cnt = np.zeros(p), np.zeros(p)
    C = np.eye(p)  # E[s_i^2] = 1
    for tab in release.tables:
        i, j = idx[tab.attrs[0]], idx[tab.attrs[1]]
        v = np.clip(tab.values.astype(float), 0, None)
        v = v / max(v.sum(), 1.0)
        C[i, j] = C[j, i] = v[0, 0] + v[1, 1] - v[0, 1] - v[1, 0]
        # every pair table also estimates both means; average them
        m_sum[i] += v[1, :].sum() - v[0, :].sum()
        m_sum[j] += v[:, 1].sum() - v[:, 0].sum()
        m_cnt[i] += 1
        m_cnt[j] += 1
    m = m_sum / m_cnt
    cov = C - np.outer(m, m)
    w, V = np.linalg.eigh(cov)
    prec = (V / np.clip(w, 1e-3, None)) @ V.T
    A = -prec
    np.fill_diagonal(A, 0.0)
    return A


def record(out, **kw):
    out.write(json.dumps(kw) + "\n")
    out.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--models", type=int, default=8)
    ap.add_argument("--first-model", type=int, default=0)
    ap.add_argument("--rhos", type=float, nargs="+", default=[0.1, 1.0])
    ap.add_argument("--ns", type=int, nargs="+", default=[1000, 3000, 10000, 30000])
    ap.add_argument("--routes", nargs="+", default=["fw", "tables-em", "tables-mle", "tables-icov"])
    ap.add_argument("--inference", default="auto")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    p = args.p
    cols = [f"x{i}" for i in range(p)]
    pairs = list(itertools.combinations(cols, 2))
    domain = {c: [0, 1] for c in cols}
    with open(args.out, "a") as out:
        for m in range(args.first_model, args.first_model + args.models):
            W, theta = random_pairwise_model(p, k=2, max_degree=3, eta=ETA, seed=1000 * p + m)
            A = coupling_matrix(W)
            true_edges = edges_of(A, 0.0)
            width = float(np.abs(A).sum(axis=1).max())  # fields are zero
            # one sample of the largest n; smaller n are its prefixes (still iid samples)
            full = sample_pairwise_model(W, theta, max(args.ns), seed=m)
            for n, rho in itertools.product(args.ns, args.rhos):
                df = full.iloc[:n].reset_index(drop=True)
                seed = int(1e6 * rho) + 7 * n + m
                base = dict(p=p, rho=rho, n=n, model=m, n_edges=len(true_edges))
                release = None
                for route in args.routes:
                    t0 = time.process_time()
                    if route == "fw":
                        est = PrivateIsingEstimator(width=width, eta=ETA, random_state=seed).fit(df, rho=rho)
                        A_hat = est.coef_
                    else:
                        if release is None:
                            tr = time.process_time()
                            release = df.dp.release(pairs, rho=rho, domain=domain, random_state=seed)
                            t_release = time.process_time() - tr
                        if route == "tables-icov":
                            A_hat = icov_couplings(release, cols)
                        else:
                            method = "cgm-em" if route == "tables-em" else "naive-mle"
                            est = PrivateMarkovEstimator(method=method, inference=args.inference, show_progress=False)
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                est.fit(DiscreteMarkovNetwork(pairs), release)
                            A_hat = couplings_from_fit(est, cols)
                        t0 -= t_release  # charge the release to every tables route
                    cpu = time.process_time() - t0
                    found = edges_of(A_hat, ETA / 2)
                    iu = np.triu_indices(p, 1)
                    record(out, route=route, **base, exact=found == true_edges,
                           fp=len(found - true_edges), fn=len(true_edges - found),
                           max_err=float(np.abs(A_hat - A)[iu].max()), cpu=cpu)
                print(f"p={p} model={m} n={n} rho={rho} done", flush=True)


if __name__ == "__main__":
    main()
