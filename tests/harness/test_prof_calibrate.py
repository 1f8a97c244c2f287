"""`fakit prof calibrate` against msprof-shaped fixtures.

The fixtures are written the way `msprof op` writes its output (OPPROF_*/OpBasicInfo.csv and a
per-block PipeUtilization.csv) from a "device" that is the timeline model itself run with
known, different assumed costs. The calibration starts from the default table and must move the
assumed costs it can identify towards the device's values and shrink the duration error; the
documented rates must not move.
"""

import csv
import os

import pytest

from fakit import calibrate, cases, cli, prof
from fakit.backends import cpu

OP = "prompt_flash_attention"
DEVICE = {"issue": 14.0, "mmad_head": 40.0, "dma_head": 150.0, "vec_head": 4.0, "launch_us": 5.0}


def write_msprof(dirpath, profile):
    """OPPROF_<ts>/OpBasicInfo.csv + PipeUtilization.csv (one row per block) from a profile."""
    d = dirpath / "OPPROF_20260101000000_ABCDEF"
    d.mkdir(parents=True)
    with (d / "OpBasicInfo.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Op Name", "Op Type", "Task Duration(us)", "Block Dim", "Mix Block Dim"])
        w.writerow(
            [
                profile["kernel"],
                "mix",
                f"{profile['task_duration_us']:.3f}",
                profile["block_dim"],
                profile["block_dim"] * 2,
            ]
        )
    metrics = calibrate.TARGETS
    with (d / "PipeUtilization.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["block_id", *metrics])
        for b in range(profile["block_dim"]):  # msprof lists blocks; the mean is what the model gives
            w.writerow([b, *(f"{profile[m]:.6f}" for m in metrics)])


@pytest.fixture(scope="module")
def msprof_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("msprof")
    costs = root / "device.costs"
    costs.write_text("".join(f"{k} {v}\n" for k, v in DEVICE.items()))
    ids = [c.id for c in cases.suite(OP, "smoke")[:3]]
    os.environ["ASCEND_EMU_COSTS"] = str(costs)
    try:
        for i in ids:
            prof.profile_cpu(OP, i)
            write_msprof(root / "cases" / i, cpu.last_profile())
    finally:
        del os.environ["ASCEND_EMU_COSTS"]
    return root / "cases"


def test_msprof_fixture_reads_back(msprof_dir):
    case_dir = sorted(msprof_dir.iterdir())[0]
    duration, ratios = calibrate.measured(case_dir)
    assert duration > 0
    assert set(ratios) == set(calibrate.TARGETS)


def test_calibration_moves_assumed_costs_towards_the_device(msprof_dir, tmp_path, capsys):
    out = tmp_path / "fitted.costs"
    assert (
        cli.main(["prof", "calibrate", "--op", OP, "--msprof", str(msprof_dir), "--costs-out", str(out), "--json"]) == 0
    )
    import json

    r = json.loads(capsys.readouterr().out)
    fitted, defaults = r["costs"], r["defaults"]
    for key in ("issue", "mmad_head", "dma_head"):
        before = abs(defaults[key] - DEVICE[key])
        after = abs(fitted[key] - DEVICE[key])
        assert after < 0.25 * before, (key, defaults[key], fitted[key], DEVICE[key])
    for c in r["cases"]:
        assert abs(c["model_after_us"] - c["measured_us"]) < 0.5 * abs(c["model_before_us"] - c["measured_us"])
    # the file is usable as ASCEND_EMU_COSTS and holds only assumed entries
    table = {c["key"]: c for c in cpu.cost_table()}
    for line in out.read_text().splitlines():
        key = line.split()[0]
        assert table[key]["assumed"], key


def test_calibrate_needs_its_inputs(capsys):
    assert cli.main(["prof", "calibrate", "--op", OP]) == 2
    assert "--msprof" in capsys.readouterr().err
