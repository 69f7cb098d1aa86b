import numpy as np
from pgmpy_dp import PrivateIsingEstimator
from pgmpy_dp.structure.sampling import random_pairwise_model, sample_pairwise_model
p=10
for n, rho in ((10000, 1.0), (30000, 10.0), (3000, 0.1)):
  for T in (25, 50, 100, 200, 400, 800):
    errs=[]
    for m in range(3):
        W, th = random_pairwise_model(p, k=2, max_degree=3, eta=0.5, seed=1000*p+m)
        A = (W[:, :, 0, 0] + W[:, :, 1, 1] - W[:, :, 0, 1] - W[:, :, 1, 0]) / 4
        df = sample_pairwise_model(W, th, n, seed=m)
        est = PrivateIsingEstimator(width=float(np.abs(A).sum(1).max()), eta=0.5, n_iter=T, random_state=m).fit(df, rho=rho)
        errs.append(np.abs(est.coef_-A).max())
    print(n, rho, T, round(float(np.mean(errs)),3), flush=True)
