"""What this process may still allocate: the machine's free memory, its own limits and its cgroup's."""

import resource

import pytest

from pgmpy_dp import _memory
from pgmpy_dp._memory import NotEnoughMemoryError, available_memory, check_memory

GIB = 2**30


def _files(monkeypatch, files):
    monkeypatch.setattr(_memory, "_read", lambda path: files.get(path))


def _no_rlimit(monkeypatch):
    monkeypatch.setattr(resource, "getrlimit", lambda limit: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


MEMINFO = {"/proc/meminfo": "MemTotal: 33554432 kB\nMemAvailable: 16777216 kB\n"}  # 16 GiB available


def test_mem_available_alone(monkeypatch):
    _files(monkeypatch, MEMINFO)
    _no_rlimit(monkeypatch)
    assert available_memory() == 16 * GIB


def test_the_address_space_limit_minus_what_is_mapped(monkeypatch):
    _files(monkeypatch, {**MEMINFO, "/proc/self/status": "VmSize:\t 1048576 kB\nVmData:\t 524288 kB\n"})
    limits = {resource.RLIMIT_AS: (4 * GIB, 4 * GIB), resource.RLIMIT_DATA: (resource.RLIM_INFINITY,) * 2}
    monkeypatch.setattr(resource, "getrlimit", lambda limit: limits[limit])
    assert available_memory() == 3 * GIB  # 4 GiB cap, 1 GiB already mapped


def test_the_data_limit_counts_too(monkeypatch):
    _files(monkeypatch, {**MEMINFO, "/proc/self/status": "VmSize:\t 1048576 kB\nVmData:\t 524288 kB\n"})
    limits = {resource.RLIMIT_AS: (resource.RLIM_INFINITY,) * 2, resource.RLIMIT_DATA: (2 * GIB, 2 * GIB)}
    monkeypatch.setattr(resource, "getrlimit", lambda limit: limits[limit])
    assert available_memory() == GIB + GIB // 2


def test_cgroup_v2_limit_minus_usage_plus_reclaimable_cache(monkeypatch):
    _files(monkeypatch, {
        **MEMINFO, "/proc/self/cgroup": "0::/\n",
        "/sys/fs/cgroup/memory.max": f"{2 * GIB}\n", "/sys/fs/cgroup/memory.current": f"{GIB}\n",
        "/sys/fs/cgroup/memory.stat": f"anon 1\ninactive_file {GIB // 4}\n",
    })
    _no_rlimit(monkeypatch)
    assert available_memory() == GIB + GIB // 4


def test_cgroup_v2_without_a_limit(monkeypatch):
    _files(monkeypatch, {**MEMINFO, "/sys/fs/cgroup/memory.max": "max\n", "/sys/fs/cgroup/memory.current": "5\n"})
    _no_rlimit(monkeypatch)
    assert available_memory() == 16 * GIB


def test_cgroup_v1_own_group_and_the_mount_root(monkeypatch):
    own = "/sys/fs/cgroup/memory/docker/abc"
    _files(monkeypatch, {
        **MEMINFO, "/proc/self/cgroup": "4:memory:/docker/abc\n1:cpu:/\n",
        f"{own}/memory.limit_in_bytes": f"{3 * GIB}\n", f"{own}/memory.usage_in_bytes": f"{2 * GIB}\n",
        f"{own}/memory.stat": "total_inactive_file 0\n",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",  # v1's "no limit"
        "/sys/fs/cgroup/memory/memory.usage_in_bytes": f"{20 * GIB}\n",
    })
    _no_rlimit(monkeypatch)
    assert available_memory() == GIB


def test_unreadable_sources_impose_no_limit(monkeypatch):
    _files(monkeypatch, {})
    _no_rlimit(monkeypatch)
    assert available_memory() > 0


def test_check_memory_names_the_work_and_the_fix(monkeypatch):
    monkeypatch.setattr(_memory, "available_memory", lambda: GIB)
    check_memory(GIB, "a table would need", "unused")
    with pytest.raises(NotEnoughMemoryError, match=r"^sample\(n=5\) would need about 2.0 GiB, more than the 1.0 GiB "
                                                   r"this process can still allocate; draw fewer$"):
        check_memory(2 * GIB, "sample(n=5) would need", "draw fewer")
    assert issubclass(NotEnoughMemoryError, ValueError) and issubclass(NotEnoughMemoryError, MemoryError)


def test_the_real_process_limit_is_seen():
    # the live reading under this process's real limits: never more than what RLIMIT_AS leaves
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        assert available_memory() <= soft
    assert available_memory() <= _memory._mem_available()
