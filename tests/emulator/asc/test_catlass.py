"""CATLASS's own examples, built with CATLASS's own CMake against the CPU prefix, pass their own
checks (benchmarks/peers/catlass_examples.py). Needs a checkout: CATLASS_DIR=<hicann/catlass>."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CATLASS = os.environ.get("CATLASS_DIR")

pytestmark = [
    pytest.mark.skipif(not CATLASS, reason="set CATLASS_DIR to a CATLASS checkout"),
    pytest.mark.skipif(shutil.which("clang++") is None, reason="the ASC driver needs clang++"),
]


@pytest.mark.parametrize("example", ["00_basic_matmul", "23_flash_attention_infer"])
def test_example_passes_its_own_check(example, tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "peers" / "catlass_examples.py"),
            "--catlass",
            CATLASS,
            "--only",
            example,
            "--build-dir",
            str(ROOT / "build" / "catlass"),
        ],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert f"PASS {example}" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "catlass: 1/1 A2 examples pass" in proc.stdout
