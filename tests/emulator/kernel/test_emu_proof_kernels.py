"""The three proof kernels (tests/emulator/kernels/) run through ICPU_RUN_KF against NumPy,
plus their per-pipe counters against hand-computed totals."""

import json
import math
import os
import struct
import subprocess

import ml_dtypes
import numpy as np
import pytest


def _launch(emu_build, tmp_path, kernel, block_dim, mode, key, in0, in1, tiling, out_bytes, ws_bytes=0, env=None):
    in0.tofile(tmp_path / "in0.bin")
    in1.tofile(tmp_path / "in1.bin")
    (tmp_path / "tiling.bin").write_bytes(tiling)
    (tmp_path / "launch.txt").write_text(f"{kernel} {block_dim} {mode} {key} {out_bytes} {ws_bytes}\n")
    res = subprocess.run(
        [str(emu_build / "kernel_driver"), str(tmp_path)], capture_output=True, text=True, timeout=300, env=env
    )
    assert res.returncode == 0, res.stderr
    return (tmp_path / "out.bin").read_bytes(), json.loads((tmp_path / "counters.json").read_text())


@pytest.mark.parametrize("dtype,key", [(np.float32, 0), (np.float16, 1)])
@pytest.mark.parametrize("total,cores,tile", [(10007, 8, 512), (4096, 4, 256), (33, 3, 64)])
def test_vector_axpy_matches_numpy(emu_build, tmp_path, dtype, key, total, cores, tile):
    rng = np.random.default_rng(total)
    x = rng.standard_normal(total).astype(dtype)
    y = rng.standard_normal(total).astype(dtype)
    alpha = 1.7
    per_block = 32 // np.dtype(dtype).itemsize
    per_core = math.ceil(math.ceil(total / cores) / per_block) * per_block
    tiling = struct.pack("<IIIf", total, per_core, tile, alpha)
    out, counters = _launch(emu_build, tmp_path, "vector_axpy", cores, "aiv", key, x, y, tiling, x.nbytes)
    z = np.frombuffer(out, dtype=dtype)
    # Muls then Add, each rounded to the element type.
    want = (x * dtype(alpha)).astype(dtype) + y
    np.testing.assert_array_equal(z, want.astype(dtype))
    total_counters = counters["total"]
    assert total_counters["MTE2"]["bytes"] == 2 * x.nbytes
    assert total_counters["MTE3"]["bytes"] == x.nbytes
    assert total_counters["M"]["macs"] == 0


def _matmul_tiling(m, n, k, base_m, base_n, base_k):
    return struct.pack("<8I", m, n, k, base_m, base_n, base_k, math.ceil(m / base_m), math.ceil(n / base_n))


def _hand_macs(m, n, k, base_m, base_n, base_k):
    macs = 0
    for mi in range(math.ceil(m / base_m)):
        rows = min(base_m, m - mi * base_m)
        for ni in range(math.ceil(n / base_n)):
            cols = min(base_n, n - ni * base_n)
            macs += (16 if rows == 1 else rows) * cols * k
    return macs


@pytest.mark.parametrize("dtype,key", [(np.float16, 0), (ml_dtypes.bfloat16, 1)])
@pytest.mark.parametrize(
    "m,n,k,base,cores",
    [
        (77, 93, 200, (32, 32, 64), 4),
        (128, 128, 256, (64, 64, 128), 3),
        (1, 17, 5, (16, 16, 16), 2),
        (33, 250, 31, (32, 128, 32), 5),
    ],
)
def test_cube_matmul_matches_numpy(emu_build, tmp_path, dtype, key, m, n, k, base, cores):
    rng = np.random.default_rng(m * n + k)
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (k, n)).astype(dtype)
    out, counters = _launch(
        emu_build, tmp_path, "cube_matmul", cores, "aic", key, a, b, _matmul_tiling(m, n, k, *base), m * n * 2
    )
    c = np.frombuffer(out, dtype=dtype).reshape(m, n).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    want = exact.astype(np.float32).astype(dtype).astype(np.float32)
    ulp = 2.0**-10 if dtype == np.float16 else 2.0**-7
    np.testing.assert_allclose(c, want, rtol=ulp * 1.01, atol=1e-3 * math.sqrt(k) * ulp)
    t = counters["total"]
    assert t["M"]["macs"] == _hand_macs(m, n, k, *base)
    assert t["FIXP"]["bytes"] == m * n * 2
    assert t["MTE2"]["bytes"] == (a.nbytes * math.ceil(n / base[1])) + (b.nbytes * math.ceil(m / base[0]))


@pytest.mark.parametrize("m,n,k,base_m,cores", [(150, 100, 72, 32, 2), (64, 512, 130, 32, 1), (40, 7, 16, 32, 4)])
def test_mix_softmax_matches_numpy(emu_build, tmp_path, m, n, k, base_m, cores):
    rng = np.random.default_rng(m + n + k)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (n, k)).astype(np.float16)
    n_align = math.ceil(n / 16) * 16
    row_blocks = math.ceil(m / base_m)
    tiling = struct.pack("<6I", m, n, k, base_m, n_align, row_blocks)
    ws = cores * 2 * base_m * n_align * 4
    out, counters = _launch(emu_build, tmp_path, "mix_softmax", cores, "mix", 0, a, b, tiling, m * n * 4, ws)
    y = np.frombuffer(out, dtype=np.float32).reshape(m, n)
    s = a.astype(np.float64) @ b.astype(np.float64).T
    e = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=2e-5, atol=1e-6)
    t = counters["total"]
    assert t["FIXP"]["bytes"] == m * n * 4  # S written once, fp32
    assert t["MTE3"]["bytes"] == m * n * 4  # Y written once
    assert t["MTE2"]["bytes"] >= m * n_align * 4  # S read back by the vector cores


def test_proof_kernels_have_no_missing_synchronisation(emu_build, tmp_path):
    """With the hazard checker on (ASCEND_EMU_RACECHECK=1) every pipe hand-over in the three
    proof kernels is ordered by a queue, a flag pair or a barrier."""
    env = {**os.environ, "ASCEND_EMU_RACECHECK": "1"}
    x = np.arange(1000, dtype=np.float16)
    _launch(
        emu_build,
        tmp_path,
        "vector_axpy",
        3,
        "aiv",
        1,
        x,
        x,
        struct.pack("<IIIf", 1000, 336, 128, 2.0),
        x.nbytes,
        env=env,
    )
    a = np.ones((37, 40), np.float16)
    b = np.ones((40, 21), np.float16)
    _launch(
        emu_build,
        tmp_path,
        "cube_matmul",
        2,
        "aic",
        0,
        a,
        b,
        _matmul_tiling(37, 21, 40, 16, 16, 16),
        37 * 21 * 2,
        env=env,
    )
    tiling = struct.pack("<6I", 37, 21, 40, 32, 32, 2)
    _launch(
        emu_build,
        tmp_path,
        "mix_softmax",
        2,
        "mix",
        0,
        a,
        np.ones((21, 40), np.float16),
        tiling,
        37 * 21 * 4,
        2 * 2 * 32 * 32 * 4,
        env=env,
    )
