"""Spec 004's own example program (TND, T1 = 1, 16 heads, K = 2048 INT32 indices over 2048
keys, INT64 lengths, rope) builds, unchanged, against the CPU target's CANN-shaped prefix
and runs to the end. The program is stored verbatim in tests/data/spec_examples/ (checked
against the spec when the spec pack is present)."""

import re
import shutil
from pathlib import Path

import pytest

from fakit import cpu_example, pack

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "tests" / "data" / "spec_examples" / "aclnn_sparse_flash_attention_grad_example.cpp"
SPEC = pack.specs_dir() / "004_9b762d6b62fa1de6.txt"


@pytest.mark.skipif(not SPEC.exists(), reason=f"spec 004 ({SPEC}; env FA_SPECS_DIR) is not present")
def test_stored_example_is_the_spec_program():
    assert EXAMPLE.read_text(encoding="utf-8") == cpu_example.spec_example_block(SPEC.read_text(encoding="utf-8"))


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None, reason="needs cmake and g++")
def test_spec_example_builds_and_runs_to_the_end(tmp_path):
    result = cpu_example.build_and_run(EXAMPLE, tmp_path, kind="builtin", timeout=300)
    assert result.failure() is None, result.failure()
    proc = result.run
    indices = [int(i) for i in re.findall(r"result\[(\d+)\] is:", proc.stdout)]
    # dq (16*512), dk (2048*512), dv (2048*512), dq_rope (16*64), dk_rope (2048*64), each from 0
    sizes = [16 * 512, 2048 * 512, 2048 * 512, 16 * 64, 2048 * 64]
    assert indices == [i for n in sizes for i in range(n)], proc.stdout[-2000:]
    assert "failed" not in proc.stdout.lower()
