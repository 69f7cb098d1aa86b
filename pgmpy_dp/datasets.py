"""Example data: bnlearn networks shipped offline with pgmpy, sampled into categorical frames.

Used by the examples, benchmarks and tests. The sampled frames carry the
network's state names as categorical dtypes, i.e. a declared public domain.
"""

from __future__ import annotations

import warnings

import pandas as pd

from .privacy.domain import PUBLIC_COLUMNS_ATTR

__all__ = ["load_network", "sample_network"]


def load_network(name: str):
    """Load a bnlearn network (``"asia"``, ``"sachs"``, ``"child"``, ``"alarm"``, ...) without network access.

    Examples
    --------
    >>> len(load_network("asia").nodes())
    8
    """
    from pgmpy.utils import get_example_model

    with warnings.catch_warnings():
        # get_example_model is deprecated in favour of a loader that downloads; we need the offline one
        warnings.simplefilter("ignore", FutureWarning)
        return get_example_model(name)


def sample_network(model, n: int, seed: int | None = None) -> pd.DataFrame:
    """Forward-sample ``n`` records from a fitted network, with categorical dtypes from its states.

    Parameters
    ----------
    model : str or pgmpy.models.DiscreteBayesianNetwork
        A network or the name of one for [`load_network`][pgmpy_dp.datasets.load_network].
    n : int
        Number of records.
    seed : int, optional
        Seed of the sampler.

    Examples
    --------
    >>> df = sample_network("asia", 100, seed=0)
    >>> df.shape, df["smoke"].cat.categories.tolist()
    ((100, 8), ['yes', 'no'])
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pgmpy 1.1 deprecation notices on import
        from pgmpy.sampling import BayesianModelSampling

    if isinstance(model, str):
        model = load_network(model)
    df = BayesianModelSampling(model).forward_sample(size=int(n), seed=seed, show_progress=False)
    df = df.astype({v: pd.CategoricalDtype(model.states[v]) for v in df.columns})
    df.attrs[PUBLIC_COLUMNS_ATTR] = list(df.columns)  # the states come from the model, not the sample
    return df
