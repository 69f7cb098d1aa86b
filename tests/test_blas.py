from threadpoolctl import threadpool_info

from pgmpy_dp._blas import single_threaded_blas


def blas_threads():
    return {p["filepath"]: p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


def test_single_threaded_blas_limits_every_blas_pool_and_restores_it():
    before = blas_threads()
    assert before, "numpy/scipy load a BLAS; threadpoolctl should see it"
    with single_threaded_blas():
        assert set(blas_threads().values()) == {1}
    assert blas_threads() == before
