"""`fakit prof --backend cpu --out DIR` and `fakit run --prof-out DIR` write an msprof-shaped
PROF_* directory: op_summary with msprof's columns, the timeline in msprof's trace format (a bare
array, args on events, flow arrows for cross-core flags, no empty tracks), device info; and
msprof-analyze's advisor reads it and reports on the operator (when it is installed)."""

import csv
import json
import re
import shutil
import subprocess

import pytest

from fakit import prof_dir
from fakit.cli import main

FAV = "fav-00b090bf0e"  # a MIX FlashAttentionScore launch: msprof-analyze has FA rules


def _prof(tmp_path, *extra):
    assert main(["prof", "--backend", "cpu", "--case", FAV, "--out", str(tmp_path), *extra]) == 0
    (path,) = tmp_path.glob("PROF_*")
    return path


def _summary(path):
    (f,) = (path / "mindstudio_profiler_output").glob("op_summary_*.csv")
    assert re.fullmatch(r"op_summary_\d{14}\.csv", f.name)
    with f.open(newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]


def test_layout_and_op_summary_columns(tmp_path, capsys):
    path = _prof(tmp_path)
    assert re.fullmatch(r"PROF_\d{6}_\d{17}_\w+", path.name)  # msprof-analyze's pattern
    assert str(path) in capsys.readouterr().out
    header, rows = _summary(path)
    assert header == prof_dir.COLUMNS
    (row,) = rows
    assert row["Op Name"] == row["OP Type"] == "FlashAttentionScore"
    assert row["Task Type"] == "MIX_AIC" and int(row["Block Dim"]) >= 1 and int(row["Mix Block Dim"]) >= 1
    assert float(row["Task Duration(us)"]) > 0 and row["Input Data Types"].startswith("FLOAT16;")
    assert row["Input Shapes"].startswith('"') and row["Input Shapes"].endswith('"')  # as msprof quotes them
    for col in (
        "aicore_time(us)",
        "aic_total_cycles",
        "aic_mac_ratio",
        "aiv_vec_time(us)",
        "aiv_mte3_ratio",
        "cube_utilization( %)",
    ):
        assert float(row[col]) >= 0, col
    assert row["aic_icache_miss_rate"] == row["aiv_icache_miss_rate"] == ""  # not modelled: empty
    info = json.loads((path / "device_0" / "info.json.0").read_text())
    assert info["DeviceInfo"][0]["ai_core_num"] == 24 and info["DeviceInfo"][0]["aiv_num"] == 48


def test_trace_is_msprofs_format_with_flows(tmp_path):
    path = _prof(tmp_path)
    out = path / "mindstudio_profiler_output"
    (timeline,) = out.glob("msprof_*.json")
    assert re.fullmatch(r"msprof_\d{14}\.json", timeline.name)
    events = json.loads(timeline.read_text())
    assert isinstance(events, list)  # a bare array, as msprof writes
    assert json.loads((out / "trace_view.json").read_text()) == events
    tracks = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    busy = {(e["pid"], e["tid"]) for e in events if e["ph"] == "X"}
    assert tracks and tracks == busy  # no empty tracks
    assert all(isinstance(e.get("args"), dict) and e["args"] for e in events if e["ph"] == "X")
    task = [e for e in events if e["ph"] == "X" and e["args"].get("Task Type") == "MIX_AIC"]
    assert len(task) == 1 and task[0]["name"] == "FlashAttentionScore"
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert starts and set(starts) == set(ends)  # cross-core set -> wait arrows
    for i, s in starts.items():
        f = ends[i]
        assert s["cat"] == f["cat"] == "CrossCoreFlag" and f["bp"] == "e"
        assert s["ts"] <= f["ts"] and (s["pid"], s["tid"]) in tracks and (f["pid"], f["tid"]) in tracks
        assert (s["pid"], s["tid"]) != (f["pid"], f["tid"])  # from one core to another


def test_trace_alone(tmp_path):
    trace = tmp_path / "t.json"
    assert main(["prof", "--backend", "cpu", "--case", FAV, "--trace", str(trace)]) == 0
    events = json.loads(trace.read_text())
    assert isinstance(events, list) and any(e["ph"] == "f" for e in events)
    assert not list(tmp_path.glob("PROF_*"))


def test_run_prof_out_and_the_modelled_column(tmp_path, capsys):
    ids = ["pfa-51f73a49ba", FAV]
    assert main(["run", "--case", *ids, "--prof-out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "device[us]" in text and "(modelled)" in text
    (path,) = tmp_path.glob("PROF_*")
    _, rows = _summary(path)
    assert [r["OP Type"] for r in rows] == ["PromptFlashAttention", "FlashAttentionScore"]
    first, second = (float(r["Task Start Time(us)"]) for r in rows)
    assert second >= first + float(rows[0]["Task Duration(us)"]) * (1 - 1e-9)


def test_prof_out_needs_the_cpu_model_on_run(capsys):
    assert main(["run", "--case", FAV, "--backend", "golden", "--prof-out", "x"]) == 2
    assert "FAKIT_MSPROF_OUTPUT" in capsys.readouterr().err


def test_analyze_says_why_not_without_msprof_analyze(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main(["prof", "--backend", "cpu", "--case", FAV, "--out", str(tmp_path), "--analyze"]) == 0
    assert "msprof-analyze is not installed (pip install -e '.[prof]')" in capsys.readouterr().out


@pytest.mark.skipif(shutil.which("msprof-analyze") is None, reason="msprof-analyze not installed (extra: prof)")
def test_msprof_analyze_advisor_reports_on_the_operator(tmp_path):
    path = _prof(tmp_path)
    out = tmp_path / "advisor"
    proc = subprocess.run(
        ["msprof-analyze", "advisor", "all", "-d", str(path), "-o", str(out)],
        capture_output=True,
        text=True,
        input="",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (report,) = out.glob("mstt_advisor_*.html")
    text = report.read_text()
    assert "FlashAttentionScore" in text  # the FA rules found the operator ...
    assert "164,2,64" in text  # ... with its shapes from op_summary
