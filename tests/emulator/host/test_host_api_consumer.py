"""The emulator consumed alone by an external CMake project (add_subdirectory(emulator) + target
ascendc_emu): its host-API probe checks OpDef registration, gert::TilingContext, the op runner's
error codes and PlatformAscendC per SoC. The probe does not build unless the ascendc_emu target
gives its consumers ASCENDC_CPU_DEBUG (CANN samples test it before including tikicpulib.h)."""

import fcntl
import json
import os
import shutil
import subprocess

import pytest

from fakit import build

SOURCE = build.ROOT / "tests" / "emulator" / "host" / "consumer"
BUILD = build.ROOT / "build" / "emulator-consumer"


@pytest.fixture(scope="module")
def probe():
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    BUILD.parent.mkdir(parents=True, exist_ok=True)
    with open(BUILD.parent / ".emulator-consumer.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers share the build directory
        if not (BUILD / "CMakeCache.txt").exists():
            subprocess.run(
                ["cmake", "-S", str(SOURCE), "-B", str(BUILD), *gen, "-DCMAKE_BUILD_TYPE=Release"],
                check=True,
                capture_output=True,
                text=True,
            )
        done = subprocess.run(["cmake", "--build", str(BUILD), "-j", "2"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return BUILD / "host_api_probe"


def test_tiling_context_and_op_runner(probe):
    done = subprocess.run([str(probe), "tiling"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("ok ")


@pytest.mark.parametrize("mode", ["optiling", "malloc", "fp16"])
def test_optiling_registration_and_malloc_slack(probe, mode):
    """optiling: IMPL_OP_OPTILING(X).Tiling(f) (alone and chained with TilingParse) registers f
    for X. malloc: a copy one byte past aclrtMalloc's page-rounded size fails, and so does the
    kernels' GM bounds lookup (no second rounding). fp16: op::fp16_t arithmetic rounds every
    result to half, as a host golden of half vector arithmetic needs."""
    done = subprocess.run([str(probe), mode], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("ok ")


# (AI cores, vector cores): 910B1/B2/93 have 24 AI cores, 910B3/B4 20 ([INI] in docs/sources.md).
SOCS = {
    "Ascend910B1": (24, 48),
    "Ascend910B2": (24, 48),
    "Ascend910B3": (20, 40),
    "Ascend910B4": (20, 40),
    "Ascend910_93": (24, 48),
}


@pytest.mark.parametrize("soc", sorted(SOCS))
def test_platform_numbers_per_soc(probe, soc):
    env = dict(os.environ, ASCEND_EMU_SOC=soc)
    done = subprocess.run([str(probe), "platform"], capture_output=True, text=True, env=env, check=True)
    p = json.loads(done.stdout)
    assert p["soc_name"] == soc
    assert (p["aic"], p["aiv"]) == SOCS[soc]
    assert p["core_num"] == SOCS[soc][0]
    assert p["soc_version"] == 1  # SocVersion::ASCEND910B for every A2/A3 SoC
    # GetCoreMemSize: physical size minus the platform's 256 bytes for UB and L1.
    assert (p["ub"], p["l1"], p["l0a"], p["l0b"], p["l0c"]) == (196352, 524032, 65536, 65536, 131072)
    assert p["lib_workspace"] == 16 * 1024 * 1024


def test_unknown_soc_is_reported(probe):
    env = dict(os.environ, ASCEND_EMU_SOC="Ascend310P")
    done = subprocess.run([str(probe), "platform"], capture_output=True, text=True, env=env)
    assert done.returncode != 0
    assert "ASCEND_EMU_SOC=Ascend310P is not a known SoC" in done.stderr
