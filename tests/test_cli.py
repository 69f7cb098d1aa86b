"""The ``pgmpy-dp`` command line: end to end by subprocess, and bad input refused with exit code 2, nothing charged."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pgmpy_dp import PrivacyBudget
from pgmpy_dp.cli import load_schema, main

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = {
    "format": "pgmpy-dp/schema", "format_version": 1, "missing": "Missing",
    "columns": {"sex": {"type": "categorical", "states": ["F", "M"], "missing": True},
                "age": {"type": "numeric", "bins": [17, 30, 45, 60, 91], "missing": True},
                "smoker": {"type": "categorical", "states": [0, 1], "missing": True}},
}


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    n = 800
    sex = rng.choice(["F", "M"], n)
    age = rng.uniform(17, 90, n).round(1)
    smoker = (rng.random(n) < np.where(sex == "M", 0.4, 0.15)).astype(int)
    df = pd.DataFrame({"sex": sex, "age": age, "smoker": smoker})
    df.loc[:9, "age"] = np.nan  # the schema's missing state
    df.to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    PrivacyBudget.open(tmp_path / "budget.json", rho=1.0)
    return tmp_path


def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "pgmpy_dp", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_load_schema_reads_the_schema_format(files):
    d = load_schema(files / "schema.json")
    assert list(d.attrs) == ["sex", "age", "smoker"]
    assert d["age"] == ("[17, 30)", "[30, 45)", "[45, 60)", "[60, 91)", "Missing") and d.bins["age"][0] == 17.0
    assert d["sex"] == ("F", "M", "Missing")


def test_synthesize_charges_the_budget_file_once_and_writes_both_outputs(files, capsys):
    code = main(["synthesize", str(files / "data.csv"), "--schema", str(files / "schema.json"), "--rho", "0.5",
                 "--method", "mst", "--budget", str(files / "budget.json"), "--out", str(files / "syn.csv"),
                 "--artifact", str(files / "s.json"), "--seed", "0", "--quiet"])
    assert code == 0
    assert PrivacyBudget.open(files / "budget.json").spent == 0.5
    syn = pd.read_csv(files / "syn.csv")
    assert list(syn.columns) == ["sex", "age", "smoker"]
    age = syn["age"].dropna()  # raw values, drawn within their bins
    assert len(age) > 0 and age.between(17, 91).all() and set(syn["sex"].dropna()) <= {"F", "M"}
    assert main(["budget", str(files / "budget.json"), "--delta", "1e-9"]) == 0
    out = capsys.readouterr().out
    assert "spent: rho=0.5" in out and "remaining: rho=0.5" in out and "PrivateSynthesizer(method='mst')" in out


BAD = [
    (["--epsilon", "-1", "--delta", "1e-9"], "--epsilon: must be a positive finite number"),
    (["--epsilon", "1"], "needs a delta"),  # aim is a zCDP method: refused before the charge
    (["--rho", "0.5", "--schema", "{missing}"], "no schema file"),
    (["--rho", "0.5", "--schema", "{bad_schema}"], "columns.sex.states"),
    (["--rho", "0.5", "--table", "{missing}"], "no table file"),
    (["--rho", "0.5", "--out", "{no_dir}/x.csv"], "no directory"),
    (["--rho", "0.5", "--table", "{bad_data}"], "column 'smoker' of the"),
    (["--rho", "5.0"], "exceed"),  # more than the budget file holds
]


@pytest.mark.parametrize("extra, message", BAD)
def test_bad_input_exits_2_with_one_line_and_charges_nothing(files, capsys, extra, message):
    bad_schema = files / "bad_schema.json"
    bad_schema.write_text(json.dumps({**SCHEMA, "columns": {**SCHEMA["columns"], "sex": {"type": "categorical"}}}))
    bad_data = files / "bad.csv"
    pd.read_csv(files / "data.csv").assign(smoker=2).to_csv(bad_data, index=False)
    names = {"missing": files / "absent.json", "bad_schema": bad_schema, "no_dir": files / "nowhere",
             "bad_data": bad_data}
    extra = [e.format(**names) for e in extra]
    table = str(files / "data.csv")
    if "--table" in extra:
        i = extra.index("--table")
        table = extra[i + 1]
        del extra[i:i + 2]
    args = ["synthesize", table, "--schema", str(files / "schema.json"), "--budget", str(files / "budget.json"),
            "--out", str(files / "syn.csv"), "--quiet", *extra]
    before = (files / "budget.json").read_bytes()
    assert exit_code(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err
    assert (files / "budget.json").read_bytes() == before
    assert not (files / "syn.csv").exists()


def exit_code(args) -> int:
    """``main``'s exit code, whether it returns it or argparse exits with it."""
    try:
        return main(args)
    except SystemExit as exc:
        return exc.code


def test_help_on_every_command(capsys):
    for command in ([], ["synthesize"], ["sample"], ["query"], ["report"], ["budget"]):
        with pytest.raises(SystemExit) as info:
            main([*command, "--help"])
        assert info.value.code == 0
        assert "usage: pgmpy-dp" in capsys.readouterr().out


def test_a_missing_file_by_subprocess_is_exit_2_on_stderr(files):
    result = run("sample", files / "absent.json", "--rows", "5")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == f"pgmpy-dp sample: error: no artifact file {str(files / 'absent.json')!r}"


@pytest.mark.slow
def test_synthesize_then_report_as_the_docs_show(files):
    # docs/cli.md: synthesize, report, sample, query, budget
    result = run("synthesize", "data.csv", "--schema", "schema.json", "--epsilon", "1", "--delta", "1e-9",
                 "--out", "synthetic.csv", "--artifact", "synth.json", "--budget", "budget.json", cwd=files)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and "spent (epsilon=1, delta=1e-09)" in result.stderr
    result = run("report", "data.csv", "synthetic.csv", "--schema", "schema.json", "--target", "smoker",
                 "--out", "report.html", cwd=files)
    assert result.returncode == 0, result.stderr
    html = (files / "report.html").read_text()
    assert html.splitlines()[0].startswith("<!-- pgmpy-dp fidelity report: it reads the REAL table")
    result = run("sample", "synth.json", "--rows", "5", "--seed", "3", cwd=files)
    assert result.returncode == 0 and len(result.stdout.splitlines()) == 6
    assert result.stdout == run("sample", "synth.json", "--rows", "5", "--seed", "3", cwd=files).stdout
    result = run("query", "synth.json", "smoker", "--given", "sex=M", cwd=files)
    answer = pd.read_csv(pd.io.common.StringIO(result.stdout))
    assert result.returncode == 0 and answer["probability"].sum() == pytest.approx(1.0)
    result = run("budget", "budget.json", cwd=files)
    assert result.returncode == 0 and "accounting: zcdp" in result.stdout


def test_parquet_in_and_out_then_sample_and_query_from_the_artifact(files, capsys):
    pd.read_csv(files / "data.csv").to_parquet(files / "data.parquet")
    code = main(["synthesize", str(files / "data.parquet"), "--schema", str(files / "schema.json"), "--rho", "1",
                 "--method", "privbayes", "--out", str(files / "syn.parquet"), "--rows", "50",
                 "--artifact", str(files / "s.json"), "--seed", "0", "--quiet"])
    assert code == 0
    assert len(pd.read_parquet(files / "syn.parquet")) == 50
    assert main(["sample", str(files / "s.json"), "--rows", "4", "--seed", "2", "--quiet"]) == 0
    first = capsys.readouterr().out
    assert main(["sample", str(files / "s.json"), "--rows", "4", "--seed", "2", "--quiet"]) == 0
    assert capsys.readouterr().out == first and len(first.splitlines()) == 5
    assert main(["query", str(files / "s.json"), "smoker", "--given", "sex=M"]) == 0
    answer = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert list(answer.columns) == ["smoker", "probability"] and answer["probability"].sum() == pytest.approx(1.0)
    assert main(["query", str(files / "s.json"), "smoker", "--given", "sex=X"]) == 2
    assert "'X' is not a state of 'sex'" in capsys.readouterr().err


def test_budget_create_and_show_in_its_units(tmp_path, capsys):
    path = tmp_path / "b.json"
    assert main(["budget", str(path), "--create", "--epsilon", "2"]) == 0
    assert "accounting: pure-dp" in capsys.readouterr().out and PrivacyBudget.open(path).total == 2.0
    assert main(["budget", str(path), "--create", "--epsilon", "3"]) == 2  # never overwrites a ledger
    assert "exists already" in capsys.readouterr().err and PrivacyBudget.open(path).total == 2.0
    assert main(["budget", str(tmp_path / "none.json")]) == 2
    assert "no budget file" in capsys.readouterr().err


def test_report_takes_the_schema_from_an_artifact(files, capsys):
    assert main(["synthesize", str(files / "data.csv"), "--schema", str(files / "schema.json"), "--rho", "1",
                 "--method", "mst", "--out", str(files / "syn.csv"), "--artifact", str(files / "s.json"),
                 "--seed", "0", "--quiet"]) == 0
    assert main(["report", str(files / "data.csv"), str(files / "syn.csv"), "--artifact", str(files / "s.json"),
                 "--out", str(files / "r.html")]) == 0
    err = capsys.readouterr().err
    assert "2-way TVD mean" in err and "do not publish it" in err
    assert (files / "r.html").read_text().startswith("<!-- pgmpy-dp fidelity report")
    assert exit_code(["report", str(files / "data.csv"), str(files / "syn.csv"), "--out", "r.html"]) == 2


def test_a_schema_resolved_privately_then_the_report_from_the_artifact(files, capsys):
    schema = {"format": "pgmpy-dp/schema", "format_version": 1, "missing": "Missing",
              "columns": {"sex": {"type": "categorical", "discover": True},
                          "age": {"type": "numeric", "bounds": [17, 90], "n_bins": 4, "missing": True},
                          "smoker": {"type": "categorical", "states": [0, 1]}}}
    (files / "open.json").write_text(json.dumps(schema))
    frame = pd.read_csv(files / "data.csv")
    frame.loc[:2, "sex"] = "rare-unreleased"
    frame.to_csv(files / "data.csv", index=False)
    assert main(["synthesize", str(files / "data.csv"), "--schema", str(files / "open.json"), "--epsilon", "2",
                 "--delta", "1e-6", "--method", "mst", "--out", str(files / "syn.csv"), "--artifact",
                 str(files / "s.json"), "--seed", "0", "--quiet"]) == 0
    assert "rare-unreleased" not in (files / "s.json").read_text() + (files / "syn.csv").read_text()
    assert main(["report", str(files / "data.csv"), str(files / "syn.csv"), "--schema", str(files / "open.json"),
                 "--out", str(files / "r.html")]) == 2
    assert "pass --artifact" in capsys.readouterr().err
    assert main(["report", str(files / "data.csv"), str(files / "syn.csv"), "--artifact", str(files / "s.json"),
                 "--out", str(files / "r.html"), "--quiet"]) == 0
    assert (files / "r.html").exists()


def test_query_interval_on_an_artifact_by_subprocess_is_the_saved_synthesizers_band(files):
    from pgmpy_dp import PrivateSynthesizer, query_interval

    assert main(["synthesize", str(files / "data.csv"), "--schema", str(files / "schema.json"), "--rho", "0.5",
                 "--method", "mst", "--artifact", str(files / "s.json"), "--seed", "0", "--quiet"]) == 0
    result = run("query", "s.json", "smoker", "sex", "--interval", "--interval-type", "normal", "--n-samples", "3",
                 "--seed", "0", "--quiet", cwd=files)
    assert result.returncode == 0, result.stderr
    got = pd.read_csv(pd.io.common.StringIO(result.stdout), dtype={"smoker": str})
    assert list(got.columns) == ["smoker", "sex", "probability", "lower", "upper"]
    band = query_interval(PrivateSynthesizer.load(files / "s.json"), ["smoker", "sex"], n_samples=3,
                          interval="normal", random_state=0, show_progress=False)
    want = band.rename(index=str).loc[list(zip(got["smoker"], got["sex"]))]  # by state: rows need not align
    np.testing.assert_allclose(got[["lower", "upper"]].to_numpy(), want[["lower", "upper"]].to_numpy(), rtol=1e-12)
    assert (got["lower"] < got["upper"]).all()


def test_parquet_output_keeps_numbers_as_numbers(tmp_path):
    from pgmpy_dp.cli import write_table

    frame = pd.DataFrame({"age": [17.0, 42.5, float("nan")], "job": pd.Categorical(["a", None, "b"])})
    write_table(frame, tmp_path / "t.parquet")
    back = pd.read_parquet(tmp_path / "t.parquet")
    assert pd.api.types.is_float_dtype(back["age"]) and back["age"].isna().tolist() == [False, False, True]
    assert back["job"].isna().tolist() == [False, True, False] and back["job"].iloc[0] == "a"
