"""op_host/common/op_log.h on the NPU build: with FA_NPU_BUILD (which cmake/npu.cmake defines
for the host code) it logs through CANN's toolchain/slog.h, module OP, and reaches no emulator
header; without it the CPU target keeps the emulator's logger (which records the last error
for fakit.AclnnError, covered by the aclnn error tests)."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
PROGRAM = r'''
#include "op_log.h"
int main() {
    FA_LOGE("PromptFlashAttention tiling: %s is %d", "num_heads", 7);
    FA_LOGW("plain warning");
    return 0;
}
'''


def compile_and_run(tmp_path, *flags):
    (tmp_path / "main.cpp").write_text(PROGRAM)
    exe = tmp_path / "main"
    # the poisoned emu/log.h comes first on the path: reaching it is a compile error
    cmd = [
        "g++",
        "-std=c++17",
        *flags,
        f"-I{FIXTURES / 'poisoned_emu'}",
        f"-I{ROOT / 'op_host' / 'common'}",
        str(tmp_path / "main.cpp"),
        "-o",
        str(exe),
    ]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if build.returncode != 0:
        return build, None
    return build, subprocess.run([str(exe)], capture_output=True, text=True, timeout=30)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_npu_branch_logs_through_cann_slog(tmp_path):
    build, run = compile_and_run(tmp_path, "-DFA_NPU_BUILD", f"-I{FIXTURES / 'fake_cann' / 'include'}")
    assert run is not None, build.stderr
    assert run.returncode == 0
    assert run.stdout.splitlines() == [
        "[slog ERROR module 42] [FA] PromptFlashAttention tiling: num_heads is 7",
        "[slog WARN module 42] [FA] plain warning",
    ]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_without_fa_npu_build_the_emulator_logger_is_chosen(tmp_path):
    # proves the poisoned header would catch an NPU-branch regression: the CPU branch reaches it
    build, run = compile_and_run(tmp_path)
    assert run is None and "included the emulator's emu/log.h" in build.stderr


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_npu_cmake_defines_fa_npu_build_for_host_code(tmp_path):
    from test_npu_build import configure, recorded  # npu.cmake configured against the fake toolkit

    _, build = configure(tmp_path)
    gen = recorded(build)["npu_op_code_gen"][0]
    assert "-DFA_NPU_BUILD" in gen[gen.index("COMPILE_OPTIONS") :]  # opbuild compiles the OpDefs
    for lib in ("cust_opapi", "cust_op_proto", "cust_optiling"):
        flags = (build / "CMakeFiles" / f"{lib}.dir" / "flags.make").read_text()
        assert "-DFA_NPU_BUILD" in flags, f"{lib}: {flags}"
