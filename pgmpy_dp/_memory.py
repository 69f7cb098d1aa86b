"""How much memory this process may still allocate, and the one refusal for work that needs more.

Fits estimate their largest arrays from public facts and refuse, before charging, work that cannot fit:
[`check_memory`][pgmpy_dp._memory.check_memory] raises [`NotEnoughMemoryError`][pgmpy_dp._memory.NotEnoughMemoryError]
when [`available_memory`][pgmpy_dp._memory.available_memory] is short. Nothing here reads the data.
"""

from __future__ import annotations

import math
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


def _kb_field(path: str, field: str) -> int | None:
    """A ``kB`` field of a ``/proc`` file (``MemAvailable``, ``VmSize``, ``VmData``) in bytes."""
    for line in (_read(path) or "").splitlines():
        if line.startswith(field + ":"):
            value = _int(line.split()[1])
            return None if value is None else value * 1024
    return None


def _mem_available() -> int:
    """``MemAvailable`` of ``/proc/meminfo``, or the physical memory where that file is missing."""
    value = _kb_field("/proc/meminfo", "MemAvailable")
    if value is not None:
        return value
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return _UNLIMITED


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
        used = _kb_field("/proc/self/status", field)
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


#: (root, cgroup v2?, limit file, usage file, reclaimable cache key, the value that means "no limit")
_CGROUPS = (
    ("/sys/fs/cgroup", True, "memory.max", "memory.current", "inactive_file", math.inf),
    ("/sys/fs/cgroup/memory", False, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file",
     _CGROUP_V1_NO_LIMIT),
)


def _cgroup_left() -> int:
    """What the memory cgroups' limits leave: ``limit - usage + inactive file cache`` (reclaimable), the least.

    Limits nest, so the process's own cgroup and the mount's root (a container's own cgroup) both count.
    """
    left = _UNLIMITED
    for root, v2, limit_file, usage_file, cache_key, no_limit in _CGROUPS:
        for d in _cgroup_dirs(root, v2=v2):
            limit_bytes = _int(_read(os.path.join(d, limit_file)))  # v2's "max" (no limit) parses to None
            usage = _int(_read(os.path.join(d, usage_file)))
            if limit_bytes is not None and limit_bytes < no_limit and usage is not None:
                cache = _stat_value(_read(os.path.join(d, "memory.stat")), cache_key)
                left = min(left, max(limit_bytes - usage + cache, 0))
    return left


def available_memory() -> int:
    """Bytes this process can still allocate: the least of the machine's, its own limits' and its cgroup's.

    ``MemAvailable`` (or the physical memory), the ``RLIMIT_AS``/``RLIMIT_DATA`` limits minus what the
    process maps, and the cgroup (v2 or v1) limit minus its usage plus reclaimable cache: a process
    capped by ``ulimit -v`` or its container dies long after the budget was spent if only the machine's
    free memory is checked. A source that cannot be read imposes no limit.

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
