"""Builds the emulator's C++ kernel tests (tests/emulator/kernel/CMakeLists.txt) once per
session into build/tests/emulator_kernel; CMake's own dependency tracking makes it a cache."""

import fcntl
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
BUILD = REPO / "build" / "tests" / "emulator_kernel"
SANITIZE_FLAGS = "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"


def _build(sanitize=False):
    build = BUILD.with_name(BUILD.name + "_san") if sanitize else BUILD
    build.mkdir(parents=True, exist_ok=True)
    flags = (
        ["-DCMAKE_BUILD_TYPE=Debug", f"-DCMAKE_CXX_FLAGS={SANITIZE_FLAGS}"]
        if sanitize
        else ["-DCMAKE_BUILD_TYPE=Release"]
    )
    cfg = ["cmake", "-S", str(pathlib.Path(__file__).parent), "-B", str(build), *flags]
    # Parallel test workers share the build directory: one builds while the others wait, so none
    # runs a program another is relinking.
    with open(build.with_name(f".{build.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for cmd in (cfg, ["cmake", "--build", str(build), "-j2"]):
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
    return build


@pytest.fixture(scope="session")
def emu_build():
    return _build()


@pytest.fixture(scope="session")
def emu_build_sanitized():
    """ASan + UBSan build of the same programs (build/tests/emulator_kernel_san)."""
    return _build(sanitize=True)
