"""Builds the timeline model's validation kernels once per session (build/tests/emulator_timing)
and runs one scenario: run_timing(scenario, n, param, buffers=1, env=None) -> {"profile",
"costs", "counters"}."""

import fcntl
import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
BUILD = REPO / "build" / "tests" / "emulator_timing"


@pytest.fixture(scope="session")
def timing_build():
    BUILD.mkdir(parents=True, exist_ok=True)
    # Parallel test workers share the build directory: one builds while the others wait.
    with open(BUILD.with_name(f".{BUILD.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for cmd in (
            ["cmake", "-S", str(pathlib.Path(__file__).parent), "-B", str(BUILD), "-DCMAKE_BUILD_TYPE=Release"],
            ["cmake", "--build", str(BUILD), "-j2"],
        ):
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed:\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}")
    return BUILD


@pytest.fixture(scope="session")
def run_timing(timing_build):
    def run(scenario, n, param, buffers=1, env=None, block_dim=1):
        e = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_EMU_")}
        e["ASCEND_EMU_RACECHECK"] = "1"  # every kernel of the project runs clean under the hazard checker
        e.update(env or {})
        res = subprocess.run(
            [str(timing_build / "timing_kernels"), scenario, str(n), str(param), str(buffers), str(block_dim)],
            capture_output=True,
            text=True,
            env=e,
            timeout=300,
        )
        assert res.returncode == 0, res.stderr[-3000:]
        out = json.loads(res.stdout.strip().splitlines()[-1])
        out["costs"] = {c["key"]: c["value"] for c in out["costs"]}
        out["stderr"] = res.stderr
        return out

    return run
