"""Run BLAS on one thread around small-vector numerical loops.

scipy's L-BFGS-B and LSQR make many tiny BLAS calls (dot products, norms,
rank-few updates). With OpenBLAS's default pool of one thread per core, each
call hands work to the pool's threads; when the other cores are busy (a shared
machine, two fits at once) it waits for a descheduled thread. Measured on 2
cores with one CPU-bound process beside it (``benchmarks/lbfgs_threads.py``):
a naive-MLE Markov-network fit took 1.5 s with the default pool and 0.69 s on
one thread; on an idle machine both took 0.67 s. Our loops have no large dense
products, so one thread loses nothing.
"""

from __future__ import annotations

from threadpoolctl import ThreadpoolController

_CONTROLLER = ThreadpoolController()


def single_threaded_blas():
    """Context manager running BLAS on one thread.

    Examples
    --------
    >>> with single_threaded_blas():
    ...     pass
    """
    return _CONTROLLER.limit(limits=1, user_api="blas")
