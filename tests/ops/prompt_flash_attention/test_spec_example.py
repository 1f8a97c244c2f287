"""Spec 000's own example program builds, unchanged, with the CMakeLists.txt of
ops-transformer's "编译与运行样例" page against the CPU target's CANN-shaped prefix
(ASCEND_HOME_PATH=build/cpu/install) and runs to the end.

Both texts are extracted at test time from the reference pack. The only edit is the one that
page asks for: the executable's source file name (test_flash_attention_score.cpp there) is
replaced by the name the example is saved under.
"""
import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from fakit import build

SHARED = Path(__file__).resolve().parents[4] / "shared"
SPEC = SHARED / "seeds" / "000_c6e29851992f4c4d.txt"
SAMPLE_PAGE = SHARED / "reference" / "ops-transformer" / "docs" / "context" / "编译与运行样例.md"
SOURCE = "test_prompt_flash_attention.cpp"


def example_program() -> str:
    text = SPEC.read_text(encoding="utf-8")
    section = text[text.index("## 调用示例"):]
    return re.search(r"```c\+\+\n(.*?)```", section, re.S).group(1)


def sample_cmakelists() -> str:
    text = SAMPLE_PAGE.read_text(encoding="utf-8")
    section = text[text.index("CMake文件示例如下"):]
    block = re.search(r"```\n(.*?)```", section, re.S).group(1)
    cmake = textwrap.dedent(block)
    assert "test_flash_attention_score.cpp" in cmake
    return cmake.replace("test_flash_attention_score.cpp", SOURCE)


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None, reason="needs cmake and g++")
def test_spec_example_builds_and_runs_to_the_end(tmp_path):
    build.ensure_built("cpu")
    prefix = build.install_prefix()
    (tmp_path / SOURCE).write_text(example_program(), encoding="utf-8")
    (tmp_path / "CMakeLists.txt").write_text(sample_cmakelists(), encoding="utf-8")
    bdir = tmp_path / "build"
    bdir.mkdir()
    env = dict(os.environ, ASCEND_HOME_PATH=str(prefix))
    for cmd in (["cmake", "../", "-DCMAKE_CXX_COMPILER=g++", "-DCMAKE_SKIP_RPATH=TRUE"], ["make"]):
        proc = subprocess.run(cmd, cwd=bdir, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    env["LD_LIBRARY_PATH"] = f"{prefix / 'lib64'}:{env.get('LD_LIBRARY_PATH', '')}"
    proc = subprocess.run(["./opapi_test"], cwd=bdir / "bin", env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"example exited with {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    results = re.findall(r"result\[(\d+)\] is: (\S+)", proc.stdout)
    # outShape {1, 2, 1, 16}: the example prints every element it copied back
    assert [int(i) for i, _ in results] == list(range(32)), proc.stdout
    assert "failed" not in proc.stdout.lower()
