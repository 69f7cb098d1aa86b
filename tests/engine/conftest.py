import numpy as np
import pytest

from pgmpy_dp.engine import align, log_marginal, logsumexp
from pgmpy_dp.privacy.domain import Domain


def _brute_force(domain, cliques, theta):
    """Clique marginals and log Z by enumerating the full joint table."""
    attrs = domain.attrs
    full = np.zeros(domain.shape(attrs))
    for c, t in zip(cliques, theta):
        full = full + align(t, c, attrs)
    log_z = float(logsumexp(full))
    logp = full - log_z
    return [np.exp(log_marginal(logp, attrs, c)) for c in cliques], log_z


@pytest.fixture
def loopy_model():
    """A non-decomposable model with mixed cardinalities, a 3-clique, a singleton and a free attribute."""
    rng = np.random.default_rng(0)
    domain = Domain({v: list(range(k)) for v, k in zip("abcdef", [2, 3, 2, 4, 3, 2])})
    cliques = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d", "e"), ("e", "a"), ("d",)]
    theta = [rng.normal(size=domain.shape(c)) for c in cliques]
    return domain, cliques, theta


@pytest.fixture
def brute_force():
    return _brute_force
