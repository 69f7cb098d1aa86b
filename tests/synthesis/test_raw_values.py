"""A raw table in, a raw-typed synthetic table out, with a schema declared once (issue 44, items 1 and 4)."""

import json

import numpy as np
import pandas as pd
import pytest

import pgmpy_dp
from pgmpy_dp import Domain, PrivateSynthesizer

SCHEMA = {
    "format": "pgmpy-dp/schema", "format_version": 1, "missing": "Missing",
    "columns": {
        "age": {"type": "numeric", "bounds": [17, 90], "integer": True, "n_bins": 6},
        "gain": {"type": "numeric", "bins": [0, 1, 1000, 5000, "inf"], "bounds": [0, 99999]},
        "job": {"type": "categorical", "states": ["clerk", "nurse", "smith"], "missing": True},
        "sex": {"type": "categorical", "states": ["F", "M"]},
    },
}


def raw_frame(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(17, 91, n)
    return pd.DataFrame({
        "age": age,
        "gain": np.where(rng.random(n) < 0.8, 0.0, rng.exponential(3000.0, n).round(2)),
        "job": pd.Series(np.where(rng.random(n) < 0.1, None, np.where(age > 50, "smith", rng.choice(["clerk", "nurse"], n)))),
        "sex": pd.Series(rng.choice(["F", "M"], n)),
    })


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    path = tmp_path_factory.mktemp("schema") / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    schema = Domain.from_json(path).with_public_bins()  # age: 6 equal-width public bins from its bounds
    df = raw_frame()
    return df, schema, PrivateSynthesizer(rho=50.0, method="mst", random_state=0, show_progress=False).fit(df, domain=schema)


def test_sample_gives_raw_values_in_the_fitted_dtypes(fitted):
    df, schema, synth = fitted
    out = synth.sample(4000, random_state=1)
    assert list(out.columns) == list(df.columns) and (out.dtypes == df.dtypes).all()
    assert out["age"].between(17, 90).all() and out["gain"].between(0, 99999).all()
    assert out["job"].isna().any() and "Missing" not in set(out["job"].dropna())
    assert set(out["job"].dropna()) <= {"clerk", "nurse", "smith"}
    # the model kept the dependence of job on age (the raw values carry the states' joint distribution)
    assert (out.loc[out["age"] > 62, "job"] == "smith").mean() > 0.8


def test_decoded_values_re_bin_to_the_sampled_states(fitted):
    _, schema, synth = fitted
    raw = synth.sample(2000, random_state=5)
    labels = synth.sample(2000, random_state=5, decode=False)
    for col in ("age", "gain"):
        codes = schema.encode(raw, [col])[col]
        assert (np.asarray(schema[col], dtype=object)[codes] == labels[col].astype(object).to_numpy()).all(), col
    assert (raw["job"].isna() == (labels["job"] == "Missing")).all()


def test_sample_is_seeded_and_the_labels_option_is_checked(fitted):
    _, _, synth = fitted
    pd.testing.assert_frame_equal(synth.sample(500, random_state=3), synth.sample(500, random_state=3))
    assert not synth.sample(500, random_state=3).equals(synth.sample(500, random_state=4))
    with pytest.raises(TypeError, match="decode must be True or False"):
        synth.sample(5, decode="no")


def test_pgmpy_dp_sample_decodes_with_a_domain_or_a_schema_file(fitted, tmp_path):
    _, schema, synth = fitted
    schema.to_json(tmp_path / "binned.json")
    a = pgmpy_dp.sample(synth.model_, 300, random_state=2, domain=schema)
    b = pgmpy_dp.sample(synth.model_, 300, random_state=2, domain=tmp_path / "binned.json")
    pd.testing.assert_frame_equal(a, b)
    assert a["age"].dtype == np.int64 and isinstance(pgmpy_dp.sample(synth.model_, 3)["age"].dtype, pd.CategoricalDtype)
    with pytest.raises(TypeError, match="domain must be a pgmpy_dp.Domain"):
        pgmpy_dp.sample(synth.model_, 3, domain=3)
