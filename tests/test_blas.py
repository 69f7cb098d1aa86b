import threading

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from pgmpy_dp._blas import single_threaded_blas


def blas_threads():
    return {p["filepath"]: p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


@pytest.fixture
def two_blas_threads():
    """BLAS at 2 threads whatever the machine or environment says, so a leaked 1 is visible."""
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        assert before, "numpy/scipy load a BLAS; threadpoolctl should see it"
        # a bundled single-threaded OpenBLAS (scs, loaded with cvxpy) stays at 1; the others must reach 2
        if 2 not in before.values():
            pytest.skip(f"no BLAS here can run 2 threads: {before}")
        yield before


def test_single_threaded_blas_limits_every_blas_pool_and_restores_it(two_blas_threads):
    with single_threaded_blas():
        assert set(blas_threads().values()) == {1}
    assert blas_threads() == two_blas_threads


def test_nested_blocks_restore_only_when_the_outer_one_exits(two_blas_threads):
    with single_threaded_blas():
        with single_threaded_blas():
            pass
        assert set(blas_threads().values()) == {1}
    assert blas_threads() == two_blas_threads


def test_overlapping_blocks_in_two_threads_restore_the_original_limits(two_blas_threads):
    """Thread 1 enters, thread 2 enters, thread 1 leaves, thread 2 leaves (two overlapping fits)."""
    step = [threading.Event() for _ in range(3)]
    seen = {}
    errors = []

    def first():
        try:
            with single_threaded_blas():
                seen["first inside"] = set(blas_threads().values())
                step[0].set()
                assert step[1].wait(10)
            seen["after first left"] = set(blas_threads().values())
            step[2].set()
        except BaseException as exc:  # surfaced in the main thread
            errors.append(exc)
            step[2].set()

    def second():
        try:
            assert step[0].wait(10)
            with single_threaded_blas():
                seen["second inside"] = set(blas_threads().values())
                step[1].set()
                assert step[2].wait(10)
        except BaseException as exc:
            errors.append(exc)
            step[1].set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert seen["first inside"] == seen["second inside"] == {1}
    assert seen["after first left"] == {1}, "the second fit still runs: BLAS must stay on one thread"
    assert blas_threads() == two_blas_threads, "the last to leave restores the original limits"


def test_an_exception_inside_the_block_still_restores_the_limits(two_blas_threads):
    with pytest.raises(KeyboardInterrupt):
        with single_threaded_blas():
            raise KeyboardInterrupt
    assert blas_threads() == two_blas_threads
