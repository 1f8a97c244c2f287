"""The proof kernels and the semantic API cases under AddressSanitizer + UBSan: they must
run clean (any report makes the process fail: -fno-sanitize-recover)."""

import math
import os
import struct
import subprocess

import numpy as np
import pytest
from test_emu_kernel_api import SEMANTIC_CASES
from test_emu_proof_kernels import _launch, _matmul_tiling
from test_ib_sync import CLEAN as IB_CLEAN
from test_race_gm import CLEAN as RACE_CLEAN
from test_race_gm import RACES


@pytest.mark.parametrize("case", SEMANTIC_CASES)
def test_api_case_is_sanitizer_clean(emu_build_sanitized, case):
    res = subprocess.run([str(emu_build_sanitized / "api_tests"), case], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and "ERROR" not in res.stderr and "runtime error" not in res.stderr, res.stderr[-3000:]


@pytest.mark.parametrize("case", RACE_CLEAN + ["ref_write_unordered", "split_page_partial_write_races"])
def test_race_checker_case_is_sanitizer_clean(emu_build_sanitized, case):
    """The GM hazard checker's shadow and per-pipe views under the sanitizers: a clean case runs
    clean, a race aborts with its report and nothing else."""
    env = {**os.environ, "ASCEND_EMU_RACECHECK": "1"}
    res = subprocess.run(
        [str(emu_build_sanitized / "race_gm_tests"), case], capture_output=True, text=True, timeout=300, env=env
    )
    assert "ERROR: AddressSanitizer" not in res.stderr and "runtime error" not in res.stderr, res.stderr[-3000:]
    if case in RACES:
        assert res.returncode != 0 and all(f in res.stderr for f in RACES[case]), res.stderr[-3000:]
    else:
        assert res.returncode == 0, res.stderr[-3000:]


@pytest.mark.parametrize("case", IB_CLEAN + ["deadlock_in_raise_mode_survives"])
def test_ib_sync_case_is_sanitizer_clean(emu_build_sanitized, case):
    """IBSet / IBWait: slot polls, blocking and the raise-mode unwinding of a wait no core ends."""
    env = {**os.environ, "ASCEND_EMU_RACECHECK": "1"}
    res = subprocess.run(
        [str(emu_build_sanitized / "ib_sync_tests"), case], capture_output=True, text=True, timeout=300, env=env
    )
    assert "ERROR: AddressSanitizer" not in res.stderr and "runtime error" not in res.stderr, res.stderr[-3000:]
    assert res.returncode == 0 and "FAIL" not in res.stdout, res.stdout + res.stderr[-3000:]


def test_proof_kernels_are_sanitizer_clean(emu_build_sanitized, tmp_path):
    x = np.arange(1000, dtype=np.float32)
    _launch(
        emu_build_sanitized,
        tmp_path,
        "vector_axpy",
        3,
        "aiv",
        0,
        x,
        x,
        struct.pack("<IIIf", 1000, 336, 128, 2.0),
        x.nbytes,
    )
    a = np.ones((37, 40), np.float16)
    b = np.ones((40, 21), np.float16)
    out, _ = _launch(
        emu_build_sanitized,
        tmp_path,
        "cube_matmul",
        2,
        "aic",
        0,
        a,
        b,
        _matmul_tiling(37, 21, 40, 16, 16, 16),
        37 * 21 * 2,
    )
    assert np.all(np.frombuffer(out, np.float16) == 40)
    bt = np.ones((21, 40), np.float16)
    tiling = struct.pack("<6I", 37, 21, 40, 32, 32, math.ceil(37 / 32))
    out, _ = _launch(
        emu_build_sanitized, tmp_path, "mix_softmax", 2, "mix", 0, a, bt, tiling, 37 * 21 * 4, 2 * 2 * 32 * 32 * 4
    )
    np.testing.assert_allclose(np.frombuffer(out, np.float32), 1 / 21, rtol=1e-6)
