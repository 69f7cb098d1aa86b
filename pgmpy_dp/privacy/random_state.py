"""Validation of the ``random_state`` argument of every public entry point.

A seed makes noise reproducible, and so removable by anyone who knows it: it is for experiments only.
Every entry point refuses the same non-seeds with the same message (numpy would take a bool as a seed).
"""

from __future__ import annotations

import numpy as np

_SEED_TYPES = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)


def check_random_state(random_state, name: str = "random_state") -> np.random.Generator | None:
    """Validate a ``random_state`` argument and return the generator it stands for.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator, BitGenerator or SeedSequence
        ``None`` (OS randomness, as a real release needs) or a seed for a reproducible experiment.
    name : str
        Parameter name used in error messages.

    Returns
    -------
    numpy.random.Generator or None
        ``None`` for ``None``; a given generator itself (one stream); else ``default_rng(random_state)``.

    Raises
    ------
    TypeError
        For a bool, a str, a float, a legacy ``numpy.random.RandomState`` or any other type.
    ValueError
        For a negative int.

    Examples
    --------
    >>> check_random_state(None) is None
    True
    >>> int(check_random_state(0).integers(10)) == int(np.random.default_rng(0).integers(10))
    True
    >>> check_random_state(False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: random_state must be None, a non-negative int seed or a numpy.random.Generator, got False (bool); ...
    """
    if random_state is None:
        return None
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, (int, np.integer, *_SEED_TYPES)):
        hint = (
            "a bool is not a seed; leave it None for a real release"
            if isinstance(random_state, (bool, np.bool_))
            else "use None for a real release (OS randomness) or an int seed for an experiment"
        )
        raise TypeError(
            f"{name} must be None, a non-negative int seed or a numpy.random.Generator, "
            f"got {random_state!r} ({type(random_state).__name__}); {hint}"
        )
    if isinstance(random_state, (int, np.integer)) and random_state < 0:
        raise ValueError(
            f"{name} must be a non-negative int seed, got {random_state!r}; pass e.g. {name}=0 for a reproducible "
            "experiment, or None for a real release"
        )
    return np.random.default_rng(random_state)
