"""Defaults at p = 50, n = 5,000, rho = 1 (3 models): exact recovery by the tables route and by Frank-Wolfe.

Run from the repository root: PYTHONPATH=. python studies/structure_defaults/p50_check.py
Result (main after the structure benchmark merge): tables 3/3 exact, Frank-Wolfe 1/3 (5 and 8 false edges).
"""
import time
import warnings

import pandas as pd

import pgmpy_dp
from pgmpy_dp.structure.sampling import model_edges, random_pairwise_model, sample_pairwise_model

warnings.simplefilter("ignore")
res=[]
for seed in range(3):
    W, theta = random_pairwise_model(50, k=2, seed=seed)
    true = {frozenset(f"x{i}" for i in e) for e in model_edges(W)}
    X = sample_pairwise_model(W, theta, 5000, seed=seed)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(50)]).astype("category")
    for route in ["tables","frank-wolfe"]:
        t=time.time()
        est = pgmpy_dp.PrivateIsingEstimator(route=route, random_state=seed).fit(df, rho=1.0)
        got = {frozenset(e) for e in est.graph_.edges()}
        res.append((seed, route, got==true, len(got-true), len(true-got), round(time.time()-t,1)))
        print(res[-1], flush=True)
