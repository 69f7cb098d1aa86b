"""Run BLAS on one thread around small-vector numerical loops.

scipy's L-BFGS-B and LSQR make many tiny BLAS calls (dot products, norms,
rank-few updates). With OpenBLAS's default pool of one thread per core, each
call wakes and joins the pool; on 2 cores that cost about 8 ms per L-BFGS-B
iteration against 0.15 ms on one thread (``benchmarks/lbfgs_threads.py``), and
more under load. Our loops have no large dense products, so one thread loses nothing.
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
