from pgmpy_dp import PrivateIsingEstimator
from pgmpy_dp.structure.sampling import random_pairwise_model, sample_pairwise_model, model_edges
p=20
for rho, ns in ((1.0, (1000, 1500, 2000)), (0.1, (3000, 5000))):
  for n in ns:
    res={}
    for name, kw in (("default", {}), ("eta", dict(eta=0.5))):
        ok=0; fp=0; fn=0
        for m in range(6):
            W, th = random_pairwise_model(p, k=2, max_degree=3, eta=0.5, seed=1000*p+m)
            df = sample_pairwise_model(W, th, n, seed=m)
            true = set(model_edges(W, list(df.columns)))
            est = PrivateIsingEstimator(random_state=m, **kw).fit(df, rho=rho)
            g=set(est.edges_); ok += g==true; fp+=len(g-true); fn+=len(true-g)
        res[name]=(ok,fp,fn)
    print(rho, n, res, flush=True)
