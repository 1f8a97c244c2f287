"""docs/own_program.md: the one-line g++ recipe and the find_package(AscendFaCpu) CMakeLists.txt,
read from the page as written, build the PFA spec example against the CPU prefix and it runs."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fakit import build

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "own_program.md"
EXAMPLE = ROOT / "tests" / "data" / "spec_examples" / "aclnn_prompt_flash_attention_example.cpp"

pytestmark = pytest.mark.skipif(
    shutil.which("g++") is None or shutil.which("cmake") is None, reason="needs g++ and cmake"
)


def recipe(name: str) -> str:
    """The code block between <!-- name --> and <!-- /name --> of the page."""
    text = PAGE.read_text(encoding="utf-8")
    block = re.search(rf"<!-- {name} -->\n```[a-z]*\n(.*?)```\n<!-- /{name} -->", text, re.S)
    assert block, f"{PAGE} has no {name} block"
    return block.group(1)


def _check_ran(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # outShape {1, 2, 1, 16}: the example prints every element it copied back
    assert [int(i) for i in re.findall(r"result\[(\d+)\] is:", proc.stdout)] == list(range(32)), proc.stdout


def test_gxx_one_liner_builds_and_runs_the_spec_example(tmp_path):
    build.ensure_built("cpu")
    line = recipe("gxx-recipe").strip()
    assert "\n" not in line  # one line, as the page promises
    shutil.copy(EXAMPLE, tmp_path / "my_app.cpp")
    # run from the repository root as the page says; the program's files live in tmp_path
    app = str(tmp_path / "my_app")
    line = line.replace("./my_app", app).replace(" my_app", " " + app)
    proc = subprocess.run(["bash", "-c", line], cwd=ROOT, capture_output=True, text=True, timeout=600)
    _check_ran(proc)


def test_find_package_gives_imported_targets_that_build_the_spec_example(tmp_path):
    build.ensure_built("cpu")
    prefix = build.install_prefix()
    (tmp_path / "CMakeLists.txt").write_text(recipe("cmake-recipe"))
    shutil.copy(EXAMPLE, tmp_path / "my_app.cpp")
    env_cmd = f". {prefix}/set_env.sh && cmake -S . -B b -DCMAKE_BUILD_TYPE=Debug && cmake --build b && ./b/my_app"
    proc = subprocess.run(["bash", "-c", env_cmd], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    _check_ran(proc)


def test_package_config_fails_clearly_when_a_library_is_missing(tmp_path):
    """A broken prefix is reported by find_package, not by a link error later."""
    build.ensure_built("cpu")
    fake = tmp_path / "prefix"
    (fake / "lib" / "cmake" / "AscendFaCpu").mkdir(parents=True)
    shutil.copy(ROOT / "cmake" / "AscendFaCpuConfig.cmake", fake / "lib" / "cmake" / "AscendFaCpu")
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(recipe("cmake-recipe"))
    (src / "my_app.cpp").write_text("int main() { return 0; }\n")
    proc = subprocess.run(
        ["cmake", "-S", str(src), "-B", str(tmp_path / "b"), f"-DCMAKE_PREFIX_PATH={fake}"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    said = " ".join((proc.stdout + proc.stderr).split())  # CMake wraps its messages
    assert "libascendcl.so is missing: run ./build.sh" in said
