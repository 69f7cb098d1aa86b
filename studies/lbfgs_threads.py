"""Why L-BFGS runs with single-threaded BLAS: a side-by-side timing.

scipy's L-BFGS-B makes a few tiny BLAS calls per iteration. With OpenBLAS's
default thread pool (one thread per core) each call hands work to the pool, and
waits for a descheduled thread when the other cores are busy; run it on an idle
machine and beside a CPU-bound process to see both cases. This script times one naive-MLE fit of the Markov-network benchmark
(a 10-node third-order chain, k = 10, from one noisy release) and a bare
L-BFGS-B run on a diagonal quadratic of the same size, with the default BLAS
threads and with one thread, alternating in one process.

Run:  python benchmarks/lbfgs_threads.py
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from pgmpy_dp.engine import ConvergenceWarning, JunctionTree, fit_log_potentials
from pgmpy_dp.engine import mle as mle_module
from pgmpy_dp.privacy.domain import Domain


def quadratic(n: int) -> float:
    d = np.linspace(1.0, 100.0, n)
    t0 = time.perf_counter()
    res = minimize(lambda x: (0.5 * float(x @ (d * x)) - x.sum(), d * x - 1.0), np.zeros(n), jac=True,
                   method="L-BFGS-B", options={"maxiter": 200, "gtol": 1e-12, "ftol": 1e-15, "maxcor": 20})
    return (time.perf_counter() - t0) / res.nfev


def mn_fit() -> tuple[float, int]:
    k, nodes = 10, 10
    rng = np.random.default_rng(0)
    domain = Domain({f"x{i}": list(range(k)) for i in range(nodes)})
    edges = [(f"x{i}", f"x{j}") for i in range(nodes) for j in range(i + 1, nodes) if j - i <= 3]
    theta = [np.log(rng.dirichlet(np.ones(k * k)).reshape(k, k)) for _ in edges]
    jt = JunctionTree(domain, edges)
    mu, _ = jt.marginals(theta)
    noisy = [np.maximum(m * 1e5 + rng.laplace(scale=50.0, size=m.shape), 0.0) for m in mu]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = fit_log_potentials(jt, noisy, regularization=1e-5, max_iter=300)
    return time.perf_counter() - t0, fit.n_iter


def main() -> None:
    limit = mle_module.single_threaded_blas  # the name fit_log_potentials looks up
    rows = []
    for rep in range(3):
        for mode in ("default threads", "one thread"):
            # the library pins BLAS to one thread; undo that for the "default" arm
            mle_module.single_threaded_blas = (lambda: threadpool_limits(None)) if mode == "default threads" else limit
            ctx = threadpool_limits(None) if mode == "default threads" else threadpool_limits(1, user_api="blas")
            with ctx:
                q = quadratic(2700)
            secs, nit = mn_fit()
            rows.append((rep, mode, q * 1e3, secs, nit))
    mle_module.single_threaded_blas = limit
    print(f"{'rep':>3}  {'BLAS':<16} {'quadratic ms/iter':>18} {'MN fit s':>9} {'iters':>6}")
    for rep, mode, q, secs, nit in rows:
        print(f"{rep:>3}  {mode:<16} {q:>18.3f} {secs:>9.3f} {nit:>6}")


if __name__ == "__main__":
    main()
