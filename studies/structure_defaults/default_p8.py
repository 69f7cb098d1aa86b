from pgmpy_dp import PrivateIsingEstimator
from pgmpy_dp.structure.sampling import random_pairwise_model, sample_pairwise_model, model_edges
p=8
for rho in (1.0, 0.1):
  for n in ((500, 1000, 2000) if rho==1 else (2000, 4000, 8000)):
    ok=0; fp=0
    for m in range(10):
        W, th = random_pairwise_model(p, k=2, max_degree=3, eta=0.5, seed=1000*p+m)
        df = sample_pairwise_model(W, th, n, seed=m)
        true = set(model_edges(W, list(df.columns)))
        est = PrivateIsingEstimator(random_state=m).fit(df, rho=rho)
        ok += set(est.edges_)==true; fp += len(set(est.edges_)-true)
    print(rho, n, ok, fp, flush=True)
