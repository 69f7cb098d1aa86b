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

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import threadpoolctl

_CONTROLLER = threadpoolctl.ThreadpoolController()

# BLAS thread limits are process-wide, so overlapping users (fits in two threads) share one
# limit: the first to enter saves the original limits, the last to leave restores them. With
# independent limiters the first to leave would restore while the other still runs, and the
# last would "restore" the one-thread limit it found on entry, for good.
_LOCK = threading.Lock()
_users = 0
_limiter = None

# threadpoolctl >= 3.8 lets only one "controlling" thread change OpenBLAS's (pthreads) limit and
# silently ignores the others; the thread that leaves last is often not the one that entered
# first. Our changes are serialised by _LOCK, so whichever thread makes one takes control for
# it and hands it back at once. None with older threadpoolctl, which has no such rule.
_CLEAR_CONTROL = getattr(getattr(threadpoolctl, "OpenBLASController", None), "clear_controlling_thread", None)


def _as_controller(action):
    if _CLEAR_CONTROL is None:
        return action()
    _CLEAR_CONTROL(force=True)
    try:
        return action()
    finally:
        _CLEAR_CONTROL()


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Context manager running BLAS on one thread; thread-safe and re-entrant.

    The original limits come back when the last of any overlapping (nested, or
    concurrent in other threads) ``with`` blocks exits.

    Examples
    --------
    >>> with single_threaded_blas():
    ...     pass
    """
    global _users, _limiter
    with _LOCK:
        if _users == 0:
            _limiter = _as_controller(lambda: _CONTROLLER.limit(limits=1, user_api="blas"))
        _users += 1
    try:
        yield
    finally:
        with _LOCK:
            _users -= 1
            if _users == 0:
                _as_controller(_limiter.restore_original_limits)
                _limiter = None
