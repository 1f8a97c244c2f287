"""Spec 000's own example program builds, unchanged, with the CMakeLists.txt of
ops-transformer's "编译与运行样例" page against the CPU target's CANN-shaped prefix
(ASCEND_HOME_PATH=build/cpu/install) and runs to the end.

The program is stored verbatim in tests/data/spec_examples/ (checked against the spec when the
spec pack is present); the CMakeLists.txt comes from the reference pack's page, or without the
pack from fakit.cpu_example's project-written equivalent. The example is saved under the source
file name the page uses.
"""

import re
import shutil
from pathlib import Path

import pytest

from fakit import cpu_example, pack

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "tests" / "data" / "spec_examples" / "aclnn_prompt_flash_attention_example.cpp"
SPEC = pack.specs_dir() / "000_c6e29851992f4c4d.txt"


@pytest.mark.skipif(not SPEC.exists(), reason=f"spec 000 ({SPEC}; env FA_SPECS_DIR) is not present")
def test_stored_example_is_the_spec_program():
    assert EXAMPLE.read_text(encoding="utf-8") == cpu_example.spec_example_block(SPEC.read_text(encoding="utf-8")), (
        f"{EXAMPLE} differs from the 调用示例 block of {SPEC}"
    )


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None, reason="needs cmake and g++")
def test_spec_example_builds_and_runs_to_the_end(tmp_path):
    result = cpu_example.build_and_run(EXAMPLE, tmp_path, kind="builtin", timeout=300)
    assert result.official == cpu_example.reference_root().exists()
    assert result.failure() is None, result.failure()
    proc = result.run
    results = re.findall(r"result\[(\d+)\] is: (\S+)", proc.stdout)
    # outShape {1, 2, 1, 16}: the example prints every element it copied back
    assert [int(i) for i, _ in results] == list(range(32)), proc.stdout
    assert "failed" not in proc.stdout.lower()
