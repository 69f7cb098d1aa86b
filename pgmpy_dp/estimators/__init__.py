"""Layer 5: private estimators of graphical-model parameters.

Bayesian networks (known DAG) through pgmpy's parameter-estimator interface; Markov networks from
noisy clique marginals. Estimators consume measurements (`pgmpy_dp.tables`), never the other way.
"""

from .bayesian import DiscretePrivateMLE
from .markov import PrivateMarkovEstimator

__all__: list[str] = ["DiscretePrivateMLE", "PrivateMarkovEstimator"]
