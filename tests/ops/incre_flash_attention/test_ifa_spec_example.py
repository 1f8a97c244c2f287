"""Spec 002's own example program (aclnnIncreFlashAttentionV4, "调用示例") builds, unchanged,
against the CPU target's CANN-shaped prefix and runs to the end with the expected output.

The program is stored verbatim in tests/data/spec_examples/ (checked against the spec when the
spec pack is present). It prints the fp16 output read back as doubles, so only the element
count is checked there; the last test runs the same call through fakit and checks the values.
"""

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import fakit
from fakit import cpu_example, pack

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "tests" / "data" / "spec_examples" / "aclnn_incre_flash_attention_v4_example.cpp"
SPEC = pack.specs_dir() / "002_9f5b11f2b5cf9769.txt"


@pytest.mark.skipif(not SPEC.exists(), reason=f"spec 002 ({SPEC}; env FA_SPECS_DIR) is not present")
def test_stored_example_is_the_spec_program():
    assert EXAMPLE.read_text(encoding="utf-8") == cpu_example.spec_example_block(SPEC.read_text(encoding="utf-8"))


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None, reason="needs cmake and g++")
def test_spec_example_builds_and_runs_to_the_end(tmp_path):
    result = cpu_example.build_and_run(EXAMPLE, tmp_path, kind="builtin", timeout=300)
    assert result.failure() is None, result.failure()
    proc = result.run
    assert "failed" not in proc.stdout.lower(), proc.stdout
    results = re.findall(r"result\[(\d+)\] is: (\S+)", proc.stdout)
    # outShape {1, 2, 1, 16}: 32 elements printed
    assert [int(i) for i, _ in results] == list(range(32)), proc.stdout


def test_spec_example_call_through_fakit_gives_ones():
    # B=1, N=2, D=16, KV S=16, BNSD, all-ones fp16 inputs, int8 (B,1,1,S) zero mask,
    # actualSeqLengths {16}, blockSize 1 without a block table (ignored), innerPrecise 1.
    ones = lambda *s: np.ones(s, np.float16)
    out = fakit.run(
        "incre_flash_attention_v4",
        backend="cpu",
        query=ones(1, 2, 1, 16),
        key=[ones(1, 2, 16, 16)],
        value=[ones(1, 2, 16, 16)],
        atten_mask=np.zeros((1, 1, 1, 16), np.int8),
        actual_seq_lengths=[16],
        num_heads=2,
        scale_value=0.25,
        input_layout="BNSD",
        num_key_value_heads=2,
        block_size=1,
        inner_precise=1,
    )
    np.testing.assert_array_equal(out, ones(1, 2, 1, 16))
