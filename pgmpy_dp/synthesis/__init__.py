"""Whole-table synthesis: the synthesizer and its selection methods (AIM, MST, PrivBayes).

[`PrivateSynthesizer`][pgmpy_dp.synthesis.synthesizer.PrivateSynthesizer] checks a method's plan
from public facts, charges the budget, and runs the method, which measures noisy marginals of the
data, chooses what to measure from noisy answers only, and fits the model with our estimators.
Built on the layers below (privacy, tables, engine, estimators); never imports ``structure``.
"""

from .synthesizer import METHODS, PrivateSynthesizer

__all__ = ["METHODS", "PrivateSynthesizer"]
