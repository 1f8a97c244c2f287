"""What a newcomer sees: --version, help that is not cut, defaults shown, errors without stray
quotes, a visible build step, tables with a legend, --csv/--json, the UNIMPL verdict, the
counters table, prof deriving --op, --soc, and sim/npu telling the emulator prefix from CANN."""

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fakit
from fakit import build, cann, cases, golden
from fakit.cli import main
from fakit.errors import AclnnError, BackendUnavailable

ROOT = Path(__file__).resolve().parents[2]
PFA = "prompt_flash_attention"


def _small(op=PFA):
    return cases.suite(op, "smoke")[:2]


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    from importlib.metadata import version

    assert capsys.readouterr().out.strip() == f"fakit {version('fakit')}"


def test_help_is_whole_and_shows_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "compares the results with the precision standard." in " ".join(out.split())
    assert "sfag sparse_flash_attention_grad" in out  # the operator table stays a table
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: cpu)" in out and "exit 1 when any case does not pass." in out


@pytest.mark.parametrize("script", ["golden_bench.py", "pfa_efficiency.py", "emulator_bench.py"])
def test_benchmark_help_is_whole(script):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--help"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.split("\n\n")[1]  # the description paragraph
    assert first.rstrip().endswith("."), first


def test_errors_are_not_wrapped_in_quotes(tmp_path, capsys):
    assert main(["golden", "--case", "pfa-0000000000", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fakit: error: no case 'pfa-0000000000'"), err
    assert main(["golden", "--case", "zzz-1", "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("fakit: error: case id 'zzz-1' does not start")


def test_run_table_legend_csv_and_json(tmp_path, capsys):
    ids = [c.id for c in _small()]
    csv_path, json_path = tmp_path / "r.csv", tmp_path / "r.json"
    assert main(["run", "--case", *ids, "--backend", "golden", "--csv", str(csv_path), "--json", str(json_path)]) == 0
    out = capsys.readouterr().out
    assert "Columns:" in out and "xMARE/xMERE/xRMSE" in out
    for c in _small():
        assert c.features in out  # never cut when stdout is not a terminal
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    assert [r["case"] for r in rows] == ids and all(r["verdict"] == "PASS" for r in rows)
    assert float(rows[0]["MARE"]) >= 0 and rows[0]["features"] == _small()[0].features
    assert [r["id"] for r in json.loads(json_path.read_text())["results"]] == ids
    assert main(["run", "--case", ids[0], "--backend", "golden", "--no-legend"]) == 0
    assert "Columns:" not in capsys.readouterr().out


def test_table_cuts_only_the_last_column_to_the_terminal():
    from fakit.report import table

    text = table(("a", "features"), [("x" * 5, "f" * 200)], width=40)
    assert all(len(line) <= 40 for line in text.splitlines()) and text.splitlines()[-1].endswith("…")
    assert "f" * 200 in table(("a", "features"), [("x", "f" * 200)])  # stdout is not a terminal here


def test_not_implemented_rejection_has_its_own_verdict(monkeypatch, capsys):
    def fp32_gap(op, backend="cpu", **kw):
        raise AclnnError(161002, "aclnnX: query is FLOAT32: not implemented yet by this kernel")

    monkeypatch.setattr(fakit, "run", fp32_gap)
    case = _small()[0]
    assert main(["run", "--case", case.id, "--backend", "golden"]) == 1  # still not a pass
    out = capsys.readouterr().out
    assert f"UNIMPL {case.id}" in out and "1 not implemented yet" in out


def test_counters_are_a_table_not_a_blob(monkeypatch, capsys):
    monkeypatch.setattr(fakit, "run", lambda op, backend="cpu", **kw: golden.benchmark(op, **kw).astype(np.float16))
    counters = {"block_dim": 3, "cores": [{"M": {"macs": 2e9}, "MTE2": {"bytes": 5e6}}, {"MTE3": {"bytes": 1e6}}]}
    monkeypatch.setattr("fakit.commands.run.last_counters", lambda backend: counters)
    monkeypatch.setattr("fakit.commands.run._preflight", lambda backend: None)  # no CANN here
    case = _small()[0]
    assert main(["run", "--case", case.id, "--backend", "sim", "--counters"]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith(case.id) and "PASS" not in l)
    assert line.split() == [case.id, "3", "2", "5", "1", "-", "-"]
    assert max(len(l) for l in out.splitlines()) < 200


def test_run_builds_first_as_its_own_step(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(build, "ensure_built", lambda *a, **kw: calls.append(kw) or Path("lib"))
    monkeypatch.setattr(
        fakit,
        "run",
        lambda op, backend="cpu", **kw: calls.append("case") or golden.benchmark(op, **kw).astype(np.float16),
    )
    from fakit.backends import cpu

    monkeypatch.setattr(cpu, "last_profile", lambda: {"task_duration_us": 1.0})
    assert main(["run", "--case", _small()[0].id, "--backend", "cpu"]) == 0
    assert calls[0]["quiet"] is False and calls[1] == "case"


def test_build_progress_is_parsed_and_drawn(capsys):
    assert build.parse_progress("[12/73] Building CXX object a.o") == (12, 73, "Building CXX object a.o")
    assert build.parse_progress("[ 42%] Building CXX object b.o") == (42, 100, "Building CXX object b.o")
    assert build.parse_progress("-- Configuring done") is None
    code, out = build._run_with_progress(["bash", "-c", "echo '[1/2] Building x.o'; echo '[2/2] Linking y.so'"])
    assert code == 0 and "Linking y.so" in out
    assert "2/2" in capsys.readouterr().err


def test_prof_takes_the_operator_from_the_case_id(monkeypatch, capsys):
    from fakit import prof

    seen = []

    class Summary:
        def to_json(self):
            return {"ok": 1}

    monkeypatch.setattr(prof, "profile_cpu", lambda op, case_id, *a: seen.append((op, case_id)) or Summary())
    case = _small("ifa")[0]
    assert main(["prof", "--backend", "cpu", "--case", case.id, "--json"]) == 0
    assert seen == [("incre_flash_attention_v4", case.id)]
    monkeypatch.setenv("FAKIT_SOC", "x")
    monkeypatch.setenv("ASCEND_EMU_SOC", "x")
    assert main(["prof", "--backend", "cpu", "--case", case.id, "--soc", "ascend910b4", "--json"]) == 0
    import os

    assert os.environ["FAKIT_SOC"] == "ascend910b4"


def test_soc_option(monkeypatch, capsys):
    monkeypatch.setenv("FAKIT_SOC", "x")  # restored after the test
    monkeypatch.setenv("ASCEND_EMU_SOC", "x")
    case = _small()[0]
    assert main(["run", "--case", case.id, "--backend", "golden", "--soc", "ascend910b3", "--no-legend"]) == 0
    import os

    assert os.environ["FAKIT_SOC"] == os.environ["ASCEND_EMU_SOC"] == "ascend910b3"
    assert main(["run", "--case", case.id, "--backend", "golden", "--soc", "ascend310p"]) == 1
    assert "unsupported SoC 'ascend310p'" in capsys.readouterr().err


def test_sim_tells_the_emulator_prefix_from_a_toolkit(tmp_path, monkeypatch, capsys):
    prefix = tmp_path / "install"
    prefix.mkdir()
    (prefix / cann.EMULATOR_MARKER).write_text("emulator\n")
    monkeypatch.setenv("ASCEND_HOME_PATH", str(prefix))
    monkeypatch.delenv("ASCEND_CANN_PACKAGE_PATH", raising=False)
    with pytest.raises(BackendUnavailable, match="CPU emulator prefix.*not a CANN toolkit.*--backend cpu"):
        cann.find_cann()
    assert main(["run", "--case", _small()[0].id, "--backend", "sim"]) == 2
    assert "pick another --soc" not in capsys.readouterr().err
    real = tmp_path / "cann"
    real.mkdir()
    monkeypatch.setenv("ASCEND_CANN_PACKAGE_PATH", str(real))  # a toolkit beside it is used
    assert cann.find_cann() == real


def test_the_built_prefix_is_recognised():
    build.ensure_built("cpu")
    assert cann.is_emulator_prefix(build.install_prefix())


def test_ascend_fa_imports_from_any_directory(tmp_path):
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import ascend_fa, torch; print(callable(torch.ops.ascend_fa.npu_prompt_flash_attention))",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "True", proc.stderr


def test_default_job_needs_no_torch_and_the_quick_start_installs_none():
    """The quick start installs the base package only; the default job's code path must not
    import torch (or matplotlib)."""
    import re

    readme = (ROOT / "README.md").read_text()
    quick = re.search(r"## Quick start.*?```\n(.*?)\n```", readme, re.S).group(1)
    assert "pip install -e . &&" in quick and "fakit run --op prompt_flash_attention --suite smoke" in quick
    base = re.search(r"^dependencies = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(), re.S | re.M).group(1)
    assert "numpy" in base and "torch" not in base and "matplotlib" not in base
    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['matplotlib'] = None\n"
        "from fakit.cli import main\n"
        "sys.exit(main(['run', '--op', 'prompt_flash_attention', '--suite', 'smoke', '--backend', 'golden',"
        " '--limit', '2']))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "2/2 passed on golden" in proc.stdout


def test_torch_adapter_without_torch_says_what_to_install():
    code = "import sys; sys.modules['torch'] = None\nimport ascend_fa"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "pip install -e '.[torch]'" in proc.stderr


def test_no_cann_is_said_before_any_progress_bar(monkeypatch, capsys):
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    monkeypatch.delenv("ASCEND_CANN_PACKAGE_PATH", raising=False)
    ids = [c.id for c in _small()]
    assert main(["run", "--case", *ids, "--backend", "sim"]) == 2
    err = capsys.readouterr().err
    assert "ASCEND_HOME_PATH" in err and "case/s" not in err and "%|" not in err


def test_cases_and_run_take_json_alike(tmp_path, capsys):
    case = _small()[0]
    assert main(["cases", "--op", PFA, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["op"] == PFA
    assert main(["cases", "--op", PFA, "--json", str(tmp_path / "c.json")]) == 0
    assert json.loads((tmp_path / "c.json").read_text())["op"] == PFA
    capsys.readouterr()  # (the table, as with --csv PATH)
    assert main(["run", "--case", case.id, "--backend", "golden", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["id"] == case.id


def test_readme_test_command_is_one_line_that_installs_and_runs():
    """.ci/run runs the line between the test-command markers verbatim."""
    import re

    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- test-command -->\n```\n(.*?)\n```\n<!-- /test-command -->", readme, re.S).group(1)
    assert block.splitlines() == ["pip install -e '.[test]' && pytest"]
