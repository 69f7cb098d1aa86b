"""The fidelity report's numbers against direct computations (pandas counts, scikit-learn's logistic regression)."""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from pgmpy_dp import Domain
from pgmpy_dp.evaluation.fidelity import NOT_A_RELEASE, fidelity_report

DOMAIN = Domain({"a": [0, 1], "b": ["x", "y", "z"], "y": ["no", "yes"]}, bins={"age": [0, 30, 60, 100]})


def tables(seed=0, n=3000):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = np.array(["x", "y", "z"])[rng.integers(0, 3, n)]
    age = rng.uniform(0, 99, n)
    logit = -1 + 1.5 * a + 0.8 * (b == "z") + 0.02 * age
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    real = pd.DataFrame({"a": a, "b": b, "age": age, "y": y})
    # a "synthetic" table that keeps the 1-way margins roughly but breaks the a-y link, in states (binned labels)
    fake = pd.DataFrame({"a": rng.permutation(a), "b": b, "y": y,
                         "age": pd.cut(age, [0, 30, 60, 100], right=False,
                                       labels=["[0, 30)", "[30, 60)", "[60, 100)"]).astype(str)})
    return real, fake.sample(frac=0.8, random_state=1)


def binned(frame):
    out = frame.copy()
    if pd.api.types.is_numeric_dtype(out["age"]):
        out["age"] = pd.cut(out["age"], [0, 30, 60, 100], right=False, labels=list(DOMAIN["age"])).astype(str)
    return out


def direct_tvd(real, fake, cols):
    p = real.groupby(list(cols)).size() / len(real)
    q = fake.groupby(list(cols)).size() / len(fake)
    return p.sub(q, fill_value=0).abs().sum() / 2


@pytest.fixture(scope="module")
def report():
    real, fake = tables()
    return real, fake, fidelity_report(real, fake, domain=DOMAIN, target="y")


def test_distributions_and_marginal_distances_match_pandas(report):
    real, fake, rep = report
    r, f = binned(real), binned(fake)
    for col in DOMAIN.attrs:
        got = rep.distributions[rep.distributions["column"] == col].set_index("state")
        want = r[col].value_counts(normalize=True).reindex(list(DOMAIN[col]), fill_value=0)
        np.testing.assert_allclose(got["real"].to_numpy(), want.to_numpy(), rtol=1e-12)
        want = f[col].value_counts(normalize=True).reindex(list(DOMAIN[col]), fill_value=0)
        np.testing.assert_allclose(got["synthetic"].to_numpy(), want.to_numpy(), rtol=1e-12)
    for k in (1, 2, 3):
        got = rep.marginals[rep.marginals["k"] == k]
        assert len(got) == len(list(combinations(DOMAIN.attrs, k)))
        for attrs, value in zip(got["attrs"], got["tvd"]):
            assert value == pytest.approx(direct_tvd(r, f, attrs), abs=1e-12)
        assert list(got["tvd"]) == sorted(got["tvd"], reverse=True)  # worst first
    # the broken a-y link is the worst pair, and the report names it
    assert rep.worst(2, 1)["attrs"][0] == ("a", "y")
    assert rep.summary.set_index("k").loc[2, "worst"] == ("a", "y")


def _one_hot(frame, cols):
    parts = [pd.get_dummies(pd.Categorical(frame[c].astype(str), categories=[str(s) for s in DOMAIN[c]]),
                            prefix=c, drop_first=True) for c in cols]
    return pd.concat(parts, axis=1).to_numpy(dtype=float)


def test_pmse_and_model_coefficients_match_scikit_learn(report):
    linear_model = pytest.importorskip("sklearn.linear_model")
    real, fake, rep = report
    r, f = binned(real), binned(fake)
    cols = list(DOMAIN.attrs)
    x = np.vstack([_one_hot(r, cols), _one_hot(f, cols)])
    label = np.r_[np.zeros(len(r)), np.ones(len(f))]
    fit = linear_model.LogisticRegression(C=1e8, tol=1e-12, max_iter=10_000).fit(x, label)
    p = fit.predict_proba(x)[:, 1]
    c = len(f) / (len(r) + len(f))
    assert rep.utility["pmse"] == pytest.approx(np.mean((p - c) ** 2), rel=1e-4)
    assert rep.utility["parameters"] == x.shape[1] + 1
    assert rep.utility["s_pmse"] == pytest.approx(rep.utility["pmse"] / ((x.shape[1]) * (1 - c) ** 2 * c / len(x)))

    features = [a for a in cols if a != "y"]
    coef = rep.coefficients.set_index("term")
    for name, frame in (("real", r), ("synthetic", f)):
        fit = linear_model.LogisticRegression(C=1e8, tol=1e-12, max_iter=10_000).fit(
            _one_hot(frame, features), frame["y"] == "yes")
        np.testing.assert_allclose(coef[name].to_numpy(), np.r_[fit.intercept_, fit.coef_[0]], atol=2e-3)
    # the real fit recovers a's effect; the synthetic table lost it, and z says so
    assert coef.loc["a=1", "real"] == pytest.approx(1.5, abs=0.3)
    assert abs(coef.loc["a=1", "synthetic"]) < 0.3 and abs(coef.loc["a=1", "z"]) > 5


def test_html_is_one_self_contained_page_that_says_it_is_not_a_release(report, tmp_path):
    pytest.importorskip("matplotlib")
    rep = report[2]
    rep.to_html(tmp_path / "r.html")
    text = (tmp_path / "r.html").read_text()
    first = text.splitlines()[0]
    assert "REAL table" in first and "NOT a private release" in first and NOT_A_RELEASE in first
    assert text.count("data:image/png;base64,") == len(DOMAIN.attrs) + 1  # one per column, the pair heatmap
    assert "http://" not in text and "https://" not in text and "<script" not in text
    assert "a x y" in text  # the worst pair is named


def test_bad_inputs_name_the_problem():
    real, fake = tables(n=200)
    with pytest.raises(ValueError, match="target 'q' is not a column"):
        fidelity_report(real, fake, domain=DOMAIN, target="q")
    with pytest.raises(ValueError, match="no column"):
        fidelity_report(real.drop(columns="b"), fake, domain=DOMAIN)
    fake = fake.assign(b="w")
    with pytest.raises(ValueError, match="column 'b' of the synthetic table holds"):
        fidelity_report(real, fake, domain=DOMAIN)
