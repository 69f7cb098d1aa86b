"""Progress bars (tqdm) for the library's loops that can run for more than a few seconds.

A bar appears only once its loop has run for :data:`PROGRESS_DELAY` seconds, so quick calls
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
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, total=total, delay=PROGRESS_DELAY, leave=False)
