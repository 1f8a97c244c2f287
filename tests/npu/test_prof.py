"""fakit prof: msprof op / msprof op simulator command lines and their summary, the emulator
counters in the same table, and the error path without CANN."""

import pytest
from test_cann_backends import demo_binding, demo_kwargs

from fakit import cli, prof
from fakit.backends import aclnn_runner

COUNTERS = {
    "kernel": "prompt_flash_attention",
    "block_dim": 2,
    "cores": [
        {"core": 0, "sub": "aic", "MTE2": {"bytes": 4096, "ops": 4}, "M": {"ops": 8, "macs": 65536}},
        {"core": 0, "sub": "aiv0", "V": {"bytes": 0, "ops": 30}, "MTE3": {"bytes": 1024, "ops": 2}},
        {"core": 1, "sub": "aiv1", "V": {"bytes": 0, "ops": 10}, "MTE3": {"bytes": 1024, "ops": 2}},
    ],
    "total": {},
}


@pytest.fixture
def demo_case(monkeypatch):
    monkeypatch.setattr(aclnn_runner, "binding", lambda op: demo_binding())
    monkeypatch.setattr(prof, "_case_kwargs", lambda op, case_id: demo_kwargs())


def test_prof_sim_runs_msprof_op_simulator_and_summarises(fake_cann, demo_case, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("FAKIT_CXX", str(fake_cann.root / "bin/fake-cxx"))
    fake_cann.install_package()
    assert (
        cli.main(["prof", "--backend", "sim", "--op", "demo_all_kinds", "--case", "c1", "--out", str(tmp_path / "p")])
        == 0
    )
    [call] = fake_cann.calls("msprof")
    assert call["argv"][:6] == [
        "op",
        "simulator",
        "--soc-version=Ascend910B2",
        f"--output={tmp_path / 'p' / 'c1' / 'msprof_op'}",
        "--aic-metrics=PipeUtilization",
        "--kernel-name=demo_all_kinds",
    ]
    table = capsys.readouterr().out
    assert "kernel prompt_flash_attention_1  backend sim  time 123.50 us  block dim 20" in table
    assert "aic.M      aic_cube_ratio       0.700" in table  # mean of 0.60 and 0.80
    assert "aiv.V      aiv_vec_ratio        0.500" in table
    assert "bandwidth GM_to_L1_bw: 500.0 GB/s" in table
    assert "msprof-analyze applies to device runs only" in table


def test_prof_npu_runs_msprof_op(fake_cann, demo_case, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("FAKIT_CXX", str(fake_cann.root / "bin/fake-cxx"))
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev/davinci0").touch()
    monkeypatch.setenv("FAKIT_ASCEND_DEV", str(tmp_path / "dev"))
    fake_cann.install_package()
    assert (
        cli.main(
            [
                "prof",
                "--backend",
                "npu",
                "--op",
                "demo_all_kinds",
                "--case",
                "c1",
                "--json",
                "--out",
                str(tmp_path / "p"),
            ]
        )
        == 0
    )
    [call] = fake_cann.calls("msprof")
    assert call["argv"][0] == "op" and call["argv"][1].startswith("--output=")
    assert "simulator" not in call["env"]["LD_LIBRARY_PATH"]
    assert '"aic_cube_ratio"' in capsys.readouterr().out


def test_prof_without_cann_exits_2(no_cann, demo_case, capsys):
    assert cli.main(["prof", "--backend", "sim", "--op", "demo_all_kinds", "--case", "c1"]) == 2
    assert "ASCEND_HOME_PATH" in capsys.readouterr().err


def test_emulator_counters_fill_the_same_table():
    s = prof.counters_summary(COUNTERS, "x")
    rows = {(r.unit, r.pipe): r for r in s.pipes}
    assert rows[("aic", "MTE2")].bytes == 4096 and rows[("aic", "M")].ops == 8
    assert rows[("aiv", "V")].ops == 40 and rows[("aiv", "MTE3")].bytes == 2048
    assert [(r.unit, r.pipe) for r in s.pipes] == [("aic", "MTE2"), ("aic", "M"), ("aiv", "V"), ("aiv", "MTE3")]
    table = prof.format_table(s)
    assert table.splitlines()[1].split() == ["pipe", "metric", "ratio", "bytes", "ops"]
    assert "kernel prompt_flash_attention  backend cpu  time - us  block dim 2" in table


def test_summary_of_an_opprof_directory_without_pipe_data(tmp_path):
    d = tmp_path / "OPPROF_1"
    d.mkdir()
    (d / "OpBasicInfo.csv").write_text("Op Name,Task Duration(us),Block Dim\nk,10.0,4\n")
    s = prof.summarise_opprof(d, "npu", "k")
    assert s.duration_us == 10.0 and s.block_dim == 4 and s.pipes == []
    assert any("PipeUtilization" in n for n in s.notes)
    with pytest.raises(RuntimeError, match="no OPPROF_"):
        prof.latest_opprof(tmp_path / "empty")


def test_prof_cpu_prints_the_emulator_counters_of_a_real_case(capsys):
    from fakit import cases

    case = cases.suite("prompt_flash_attention", "smoke")[0]
    assert cli.main(["prof", "--backend", "cpu", "--op", "prompt_flash_attention", "--case", case.id]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("kernel prompt_flash_attention  backend cpu")
    assert lines[1].split() == ["pipe", "metric", "ratio", "bytes", "ops"]
    rows = {l.split()[0]: l.split() for l in lines[2:] if l.startswith(("aic.", "aiv."))}
    assert int(rows["aic.M"][-1]) > 0 and int(rows["aiv.V"][-1]) > 0 and int(rows["aic.MTE2"][-2]) > 0


def test_prof_cpu_prints_modelled_time_and_writes_a_trace(tmp_path, capsys):
    import json

    from fakit import cases

    case = cases.suite("prompt_flash_attention", "smoke")[0]
    trace = tmp_path / "t.json"
    assert (
        cli.main(
            [
                "prof",
                "--backend",
                "cpu",
                "--op",
                "prompt_flash_attention",
                "--case",
                case.id,
                "--json",
                "--trace",
                str(trace),
            ]
        )
        == 0
    )
    s = json.loads(capsys.readouterr().out)
    assert s["duration_us"] > 0 and s["block_dim"] >= 1
    metrics = {r["metric"]: r["ratio"] for r in s["pipes"]}
    assert set(metrics) >= {"aic_mac_ratio", "aic_mte2_ratio", "aiv_vec_ratio", "aiv_mte3_ratio", "aiv_scalar_ratio"}
    assert all(0 <= metrics[m] <= 1 for m in metrics if m.endswith("_ratio"))
    events = json.loads(trace.read_text())  # msprof's format: a bare array
    spans = [e for e in events if e["ph"] == "X"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"aic M", "aic MTE2", "aiv0 V", "aiv1 MTE3"} <= names
    assert {"Mmad", "Exp"} <= {e["name"] for e in spans}
    assert max(e["ts"] + e["dur"] for e in spans) <= s["duration_us"] + 1e-3  # the trace has 0.1 ns steps
