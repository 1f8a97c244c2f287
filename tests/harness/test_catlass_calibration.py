"""The calibration against CATLASS's published 910B2 times runs end to end on the smallest
held-out point, as built and as measured (the host-side B RowMajor variant), each within 15 %.
Needs a checkout: CATLASS_DIR=<hicann/catlass>."""

import os
import shutil
from pathlib import Path

import pytest

from fakit import calibrate

ROOT = Path(__file__).resolve().parents[2]
CATLASS = os.environ.get("CATLASS_DIR")

pytestmark = [
    pytest.mark.skipif(not CATLASS, reason="set CATLASS_DIR to a CATLASS checkout"),
    pytest.mark.skipif(shutil.which("clang++") is None, reason="the ASC driver needs clang++"),
]


def test_smallest_held_out_point_as_built_and_as_measured():
    rows = calibrate.catlass_points(
        Path(CATLASS).resolve(),
        ROOT / "build" / "peers" / "catlass-timing",
        ROOT / "build" / "cpu" / "install",
        roles=("held-out",),
        only="2048,4096,4000",
    )
    assert [r["example"] for r in rows] == [
        "34_single_core_splitk_matmul",
        "34_single_core_splitk_matmul/b_rowmajor",
    ]
    for r in rows:
        assert abs(r["error_pct"]) < 15, r
