"""benchmarks/perf_report.py and the benchmarks that use it: [PERF] lines, progress with an ETA,
a summary table, CSV/JSON, and a PNG plot (matplotlib is an optional extra)."""

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import perf_report  # noqa: E402
from perf_report import PerfReport  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_perf_lines_summary_csv_json_and_plot(tmp_path, capsys):
    err = io.StringIO()
    rep = PerfReport("demo", total=2, weights=[1, 3], stream=err)
    rep.start("a")
    rep.add("op/a", {"time_s": 0.5, "ratio": 2.0}, units={"time_s": "s"})
    rep.start("b")
    rep.add("op/b", {"time_s": 1.5, "ratio": 4.0})
    rep.finish(
        csv_path=tmp_path / "r.csv",
        json_path=tmp_path / "r.json",
        plot_path=tmp_path / "r.png",
        plot_metrics=["time_s", "ratio"],
    )
    out = capsys.readouterr().out
    assert "[PERF] op/a :: time_s 0.5 s; ratio 2" in out and "[PERF] op/b :: time_s 1.5 s; ratio 4" in out
    assert "time_s [s]  ratio" in out and "demo: 2 measurements" in out
    assert "[1/2] a (elapsed 0s)" in err.getvalue() and "[2/2] b (elapsed" in err.getvalue()
    assert ", eta " in err.getvalue().splitlines()[1]
    rows = list(csv.DictReader(open(tmp_path / "r.csv")))
    assert [r["name"] for r in rows] == ["op/a", "op/b"] and rows[1]["ratio"] == "4.0"
    assert json.loads((tmp_path / "r.json").read_text())["units"] == {"time_s": "s"}
    assert (tmp_path / "r.png").read_bytes()[:8] == PNG_MAGIC


def test_eta_scales_by_the_weights(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(perf_report.time, "perf_counter", lambda: now[0])
    err = io.StringIO()
    rep = PerfReport("demo", total=3, weights=[1, 2, 7], stream=err)
    assert rep.eta() is None
    rep.start("a")
    now[0] += 10.0  # the first step (weight 1) took 10 s
    assert rep.eta() == pytest.approx(90.0)  # weights 2 + 7 left, 10 s per unit
    rep.start("b")
    assert err.getvalue().splitlines()[1] == "[2/3] b (elapsed 10s, eta 1m30s)"


def test_plot_without_matplotlib_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(SystemExit, match=r"pip install -e '\.\[plot\]'"):
        perf_report.plot_bars(tmp_path / "x.png", ["a"], {"m": [1.0]}, "m", "t")


def test_golden_bench_end_to_end(tmp_path):
    """One tiny measurement through the real script: [PERF] line, ETA line, table, CSV, plot."""
    csv_path, png = tmp_path / "g.csv", tmp_path / "g.png"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks/golden_bench.py"),
            "--scale",
            "64",
            "--ops",
            "pfa",
            "--limit",
            "1",
            "--csv",
            str(csv_path),
            "--plot",
            str(png),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("[PERF] prompt_flash_attention/") == 1
    assert "[1/1] prompt_flash_attention/" in proc.stderr
    assert "golden_bench: 1 measurements" in proc.stdout and "ratio_vs_torch" in proc.stdout
    row = next(csv.DictReader(open(csv_path)))
    assert float(row["time_s"]) > 0 and float(row["gflops"]) > 0
    assert png.read_bytes()[:8] == PNG_MAGIC
