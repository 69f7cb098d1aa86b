"""Progress bars (tqdm) for the library's loops that can run for more than a few seconds.

A bar appears only once its loop has run for `PROGRESS_DELAY` seconds, so quick calls
print nothing; the public functions that loop take ``show_progress=False`` to silence it.
Keep bars on outer loops (one step per table or query), never inside hot numeric code.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Seconds a loop must run before its bar is drawn.
PROGRESS_DELAY = 2.0


def progress(iterable: Iterable, show: bool, desc: str, total: int | None = None) -> Iterable:
    """``iterable`` itself, or wrapped in a delayed tqdm bar when ``show`` is true.

    Examples
    --------
    >>> list(progress(range(3), show=True, desc="counting tables"))
    [0, 1, 2]
    """
    if not show:
        return iterable
    return _bar(iterable, desc=desc, total=total)


def _bar(iterable: Iterable | None = None, **kwargs):
    """A delayed, self-removing tqdm bar, made while holding tqdm's lock.

    tqdm registers a bar before its ``__init__`` has finished, and another thread closing a bar may then
    reposition the half-built one (``AttributeError: ... has no attribute 'sp'``); the lock, which tqdm
    takes when it closes a bar, makes construction atomic.
    """
    from tqdm.auto import tqdm

    with tqdm.get_lock():
        return tqdm(iterable, delay=PROGRESS_DELAY, leave=False, **kwargs)


class ProgressCallback:
    """A delayed tqdm bar driven by an iterative solver's ``callback(iteration, objective, change)``.

    With ``show`` false it draws nothing and `callback` is ``None`` (solvers skip it).

    Examples
    --------
    >>> bar = ProgressCallback(False, 10, "CGM-EM")
    >>> bar.callback is None
    True
    >>> bar.close()
    """

    def __init__(self, show: bool, total: int, desc: str) -> None:
        self._bar = None
        if show:
            self._bar = _bar(total=total, desc=desc)

    @property
    def callback(self):
        """The function to hand to the solver, or ``None`` when no bar is shown."""
        return self._update if self._bar is not None else None

    def _update(self, iteration: int, objective: float, change: float) -> None:
        self._bar.update(iteration - self._bar.n)
        self._bar.set_postfix(objective=f"{objective:.4g}", change=f"{change:.1e}", refresh=False)

    def close(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.close()


class BudgetBar:
    """A delayed tqdm bar counting the share of a privacy budget spent, in percent, with a time-left estimate.

    A budget is a known total even when the number of rounds is not (AIM anneals and stops when it is
    spent), so the bar's end is the whole budget and tqdm's rate of percent per second gives the time left.

    Examples
    --------
    >>> bar = BudgetBar(False, total=2.0, desc="AIM: budget spent")
    >>> bar.spent(0.5)
    25.0
    >>> bar.close()
    """

    def __init__(self, show: bool, total: float, desc: str) -> None:
        self._total = float(total)
        self._bar = _bar(total=100.0, desc=desc, unit="%",
                         bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}{postfix}]") if show else None

    def spent(self, amount: float, **postfix) -> float:
        """Move the bar to ``amount`` of the total (clipped to 100 %); returns the percentage."""
        percent = min(100.0, 100.0 * amount / self._total)
        if self._bar is not None:
            if postfix:
                self._bar.set_postfix(postfix, refresh=False)
            self._bar.update(percent - self._bar.n)
        return percent

    def close(self) -> None:
        """Remove the bar."""
        if self._bar is not None:
            self._bar.close()
