"""How much memory this process may still allocate, and the one refusal for work that needs more.

A fit that charges a budget estimates its largest arrays from public facts (the declared states,
a requested number of rows) and refuses, before charging, work that cannot fit. The machine's free
memory (``MemAvailable``) is not enough: a process may be capped by its own address-space limit
(``ulimit -v``, ``resource.setrlimit(RLIMIT_AS)``) or by its container's cgroup, and then dies with a
``MemoryError`` (or is killed) long after the budget was spent. [`available_memory`][pgmpy_dp._memory.available_memory]
takes the least of the three; [`check_memory`][pgmpy_dp._memory.check_memory] raises
[`NotEnoughMemoryError`][pgmpy_dp._memory.NotEnoughMemoryError] with the caller's fix.
Nothing here reads the data.
"""

from __future__ import annotations

import os
import resource

_UNLIMITED = 2**63

# cgroup v1 writes "no limit" as the largest page-aligned 64-bit value
_CGROUP_V1_NO_LIMIT = 2**62


class NotEnoughMemoryError(ValueError, MemoryError):
    """Work was refused before it started (and before any charge): it needs more memory than this process may use.

    A ``ValueError`` (a request too large for this process) and a ``MemoryError``, so code that
    catches either keeps working.
    """


def _read(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


def _int(text: str | None) -> int | None:
    try:
        return int(text.strip())
    except (AttributeError, ValueError):
        return None


def _mem_available() -> int:
    """``MemAvailable`` of ``/proc/meminfo``, or the physical memory where that file is missing."""
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemAvailable:"):
            value = _int(line.split()[1])
            if value is not None:
                return value * 1024
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return _UNLIMITED


def _status_bytes(field: str) -> int | None:
    """A ``kB`` field of ``/proc/self/status`` (``VmSize``, ``VmData``) in bytes."""
    for line in (_read("/proc/self/status") or "").splitlines():
        if line.startswith(field + ":"):
            value = _int(line.split()[1])
            return None if value is None else value * 1024
    return None


def _rlimit_left() -> int:
    """What the process's address-space and data limits leave, minus what it already maps."""
    left = _UNLIMITED
    for limit, field in ((resource.RLIMIT_AS, "VmSize"), (getattr(resource, "RLIMIT_DATA", None), "VmData")):
        if limit is None:
            continue
        try:
            soft, _ = resource.getrlimit(limit)
        except (OSError, ValueError):
            continue
        if soft == resource.RLIM_INFINITY or soft < 0:
            continue
        used = _status_bytes(field)
        left = min(left, max(soft - (used or 0), 0))
    return left


def _stat_value(text: str | None, key: str) -> int:
    for line in (text or "").splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return _int(value) or 0
    return 0


def _cgroup_dirs(controller_root: str, v2: bool) -> list[str]:
    """The cgroup directories of this process under ``controller_root``: its own first, then the mount's root."""
    dirs = []
    for line in (_read("/proc/self/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if (v2 and parts[0] == "0" and parts[1] == "") or (not v2 and "memory" in parts[1].split(",")):
            own = os.path.join(controller_root, parts[2].lstrip("/"))
            if own.rstrip("/") != controller_root.rstrip("/"):
                dirs.append(own)
    return [*dirs, controller_root]


def _cgroup_left() -> int:
    """What the memory cgroups' limits leave: ``limit - usage + inactive file cache`` (reclaimable), the least.

    Limits nest, so the process's own cgroup and the mount's root (a container's own cgroup) both count.
    """
    left = _UNLIMITED
    for d in _cgroup_dirs("/sys/fs/cgroup", v2=True):
        limit = _read(os.path.join(d, "memory.max"))
        if limit is None:
            continue
        limit_bytes = _int(limit)  # "max" (no limit) parses to None
        usage = _int(_read(os.path.join(d, "memory.current")))
        if limit_bytes is not None and usage is not None:
            cache = _stat_value(_read(os.path.join(d, "memory.stat")), "inactive_file")
            left = min(left, max(limit_bytes - usage + cache, 0))
    for d in _cgroup_dirs("/sys/fs/cgroup/memory", v2=False):
        limit_bytes = _int(_read(os.path.join(d, "memory.limit_in_bytes")))
        if limit_bytes is None:
            continue
        usage = _int(_read(os.path.join(d, "memory.usage_in_bytes")))
        if limit_bytes < _CGROUP_V1_NO_LIMIT and usage is not None:
            cache = _stat_value(_read(os.path.join(d, "memory.stat")), "total_inactive_file")
            left = min(left, max(limit_bytes - usage + cache, 0))
    return left


def available_memory() -> int:
    """Bytes this process can still allocate: the least of the machine's, its own limits' and its cgroup's.

    The machine's is ``MemAvailable`` (``/proc/meminfo``; the physical memory where that file is
    missing); the process's own is ``resource.getrlimit(RLIMIT_AS)`` (and ``RLIMIT_DATA``) minus what
    it already maps (``VmSize``, ``VmData`` of ``/proc/self/status``); its cgroup's is
    ``memory.max - memory.current`` (cgroup v2) or ``memory.limit_in_bytes - memory.usage_in_bytes``
    (v1), plus the reclaimable file cache. A source that cannot be read imposes no limit.

    Examples
    --------
    >>> available_memory() > 0
    True
    """
    return min(_mem_available(), _rlimit_left(), _cgroup_left())


def check_memory(need: float, what: str, fix: str) -> None:
    """Refuse work needing ``need`` bytes when this process cannot allocate them (before any charge).

    Parameters
    ----------
    need : float
        Estimated bytes of the work's largest arrays, from public facts only.
    what : str
        The work, as the start of the message: ``"sample(n=10**12) would need"``.
    fix : str
        How to make the work fit, appended to the message.

    Raises
    ------
    NotEnoughMemoryError
        When ``need`` exceeds [`available_memory`][pgmpy_dp._memory.available_memory].

    Examples
    --------
    >>> check_memory(1024, "a tiny table would need", "nothing to fix")
    >>> check_memory(2.0**70, "sample(n=2**64) would need", "draw fewer rows")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pgmpy_dp._memory.NotEnoughMemoryError: sample(n=2**64) would need about ... GiB, more than the ... GiB this process can still allocate; draw fewer rows
    """
    have = available_memory()
    if need > have:
        raise NotEnoughMemoryError(
            f"{what} about {need / 2**30:,.1f} GiB, more than the {have / 2**30:,.1f} GiB this process can "
            f"still allocate; {fix}"
        )
