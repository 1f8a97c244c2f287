"""benchmarks/device_model.py runs and prints a [PERF] line and the table (one small shape)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_device_model_prints_perf_lines_and_csv(tmp_path):
    out = tmp_path / "dm.csv"
    res = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks/device_model.py"),
            "--quick",
            "--ops",
            "incre_flash_attention_v4/B16_N32/4_S4K_D128_fp16",
            "--csv",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    perf = [l for l in res.stdout.splitlines() if l.startswith("[PERF]")]
    assert len(perf) == 1 and "modelled_us" in perf[0] and "hbm_pct" in perf[0] and "bound" in perf[0]
    rows = out.read_text().splitlines()
    assert len(rows) == 2 and "modelled_us" in rows[0]
    hbm_pct = float(perf[0].split("hbm_pct ")[1].split(";")[0])
    assert 0 < hbm_pct <= 100  # never above the HBM bandwidth


def test_device_model_help_is_whole():
    res = subprocess.run(
        [sys.executable, str(REPO / "benchmarks/device_model.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0
    text = " ".join(res.stdout.split())
    assert "not a measurement" in text and "--ops NAMES" in text and "--plot PLOT" in text
    assert "--only" in text  # the old spelling still works


def test_device_model_sweep_prints_goal_lines_and_the_summary():
    res = subprocess.run(
        [sys.executable, str(REPO / "benchmarks/device_model.py"), "--sweep", "--only", "B4_N64/1_S8K"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    lines = res.stdout.splitlines()
    sweep = [l for l in lines if l.startswith("[SWEEP]")]
    assert len(sweep) == 1 and "decode" in sweep[0] and "of HBM" in sweep[0] and "goal 80.0" in sweep[0]
    assert "bound " in sweep[0] and "modelled_us" in sweep[0]
    assert lines[-1] in ("sweep: 0/1 shapes at goal", "sweep: 1/1 shapes at goal")
