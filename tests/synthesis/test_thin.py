"""Thin data, said: the warning that the noise swamps the table, read from noisy outputs only."""

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pgmpy_dp import Domain, PrivateSynthesizer
from pgmpy_dp.privacy.parameters import epsilon_delta_to_rho
from pgmpy_dp.synthesis import aim, marginals, thin
from pgmpy_dp.tables.artifact import MarginalRelease

DATA = Path("/work/shared/data")
RHO_AT_1 = epsilon_delta_to_rho(1.0, 1e-9)


def breast_cancer():
    """scikit-learn's 569-row table, every feature in 10 equal-width bins over its published range."""
    datasets = pytest.importorskip("sklearn.datasets")
    bc = datasets.load_breast_cancer(as_frame=True)
    # the ranges printed in the dataset's description (its DESCR table), rounded outward
    bins = {c: list(np.linspace(math.floor(bc.frame[c].min()), math.ceil(bc.frame[c].max()), 11))
            for c in bc.feature_names}
    df = bc.frame[list(bc.feature_names) + ["target"]]
    return df, Domain({"target": [0, 1]}, bins=bins)


def adult():
    if not (DATA / "adult.csv").exists():
        pytest.skip("Adult is not in /work/shared/data")
    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    from harness import load_adult

    codes, sizes = load_adult(DATA)
    return codes, Domain({a: range(k) for a, k in sizes.items()})


def aim_opening(df, dom, seed):
    """The 1-way release AIM opens with at epsilon 1 (delta 1e-9)."""
    sigma = aim._opening_sigma(dom, RHO_AT_1)
    codes = dom.encode(df, show_progress=False)
    return marginals.measure(codes, dom, [(a,) for a in dom.attrs], len(dom.attrs) * 0.5 / sigma**2,
                             np.random.default_rng(seed), "AIM: 1-way marginals")


@pytest.mark.parametrize("seed", [0, 1])
def test_the_rule_fires_on_breast_cancer_and_not_on_adult_at_epsilon_1(seed):
    report = thin.thin_data([aim_opening(*breast_cancer(), seed)])
    assert report.swamped and abs(report.n_records - 569) < 6 * max(report.noise_sd.values())
    assert not thin.thin_data([aim_opening(*adult(), seed)]).swamped


def test_the_decision_is_a_function_of_the_released_values_alone():
    # The fit's warning is thin_data of its releases; the same releases read back from their JSON (what is
    # published, nothing else) give the same decision and the same message. Two neighbouring tables can
    # therefore differ in the decision only through the released values, whose distribution the charge covers.
    df, dom = breast_cancer()
    with pytest.warns(thin.ThinDataWarning) as caught:
        s = PrivateSynthesizer(rho=RHO_AT_1, method="mst", random_state=0, show_progress=False)
        s.fit(df.iloc[:60], domain=dom)
    assert len([w for w in caught if w.category is thin.ThinDataWarning]) == 1  # once per fit
    published = [MarginalRelease.from_json(r.to_json()) for r in s.releases_]
    report = thin.thin_data(published)
    assert report.swamped and str(caught[0].message) == f"PrivateSynthesizer: {report.message()}"
    for needle in ("noisy record count", "larger epsilon", "coarser domains", "fewer columns"):
        assert needle in str(caught[0].message)


def test_no_warning_when_the_noise_is_small():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 2, 3000), "b": rng.integers(0, 3, 3000)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", thin.ThinDataWarning)
        PrivateSynthesizer(rho=1.0, method="mst", random_state=0, show_progress=False).fit(
            df, domain={"a": [0, 1], "b": [0, 1, 2]})


@pytest.mark.slow
def test_an_aim_fit_warns_on_breast_cancer_and_not_on_adult():
    df, dom = breast_cancer()
    with pytest.warns(thin.ThinDataWarning, match="the noise swamps the table"):
        PrivateSynthesizer(1.0, delta=1e-9, method="aim", random_state=0, show_progress=False).fit(df, domain=dom)
    codes, dom = adult()
    with warnings.catch_warnings():
        warnings.simplefilter("error", thin.ThinDataWarning)
        PrivateSynthesizer(1.0, delta=1e-9, method="aim", random_state=0, show_progress=False).fit(codes, domain=dom)
