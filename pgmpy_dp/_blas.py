"""Run BLAS on one thread around small-vector numerical loops.

scipy's L-BFGS-B and LSQR make many tiny BLAS calls; with a thread pool on a busy machine each waits for
a descheduled thread, and our loops have no large dense products to gain from one (measured in
``benchmarks/lbfgs_threads.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import threadpoolctl

_CONTROLLER = threadpoolctl.ThreadpoolController()

# BLAS thread limits are process-wide, so overlapping users (fits in two threads) share one
# limit: the first to enter saves the original limits, the last to leave restores them.
_LOCK = threading.Lock()
_users = 0
_limiter = None

# threadpoolctl >= 3.8 silently ignores limit changes from all but one "controlling" thread, and
# the thread that leaves last is often not the one that entered: each (serialised) change takes
# control and hands it back. None with older threadpoolctl, which has no such rule.
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
