"""The cube proof kernel (GM -> L1 Nd2Nz -> LoadData -> Mmad -> Fixpipe, K-loop accumulation)
against NumPy for fp16 and bf16, aligned and unaligned shapes, with hand-computed counters."""

import ml_dtypes
import numpy as np
import pytest

from fakit.backends import cpu

BF16 = ml_dtypes.bfloat16


def reference(a, b, dtype):
    """fp32 accumulation of the exact products, rounded once to the output dtype."""
    return (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float16, BF16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("m,k,n", [(16, 16, 16), (64, 200, 48), (37, 19, 53), (1, 70, 5), (300, 129, 260)])
def test_matmul_matches_numpy(run_proof, dtype, m, k, n):
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (k, n)).astype(dtype)
    c = run_proof("cube_matmul", a=a, b=b)
    assert c.dtype == np.dtype(dtype) and c.shape == (m, n)
    expected = reference(a, b, dtype).astype(np.float32)
    # Accumulation order inside the cube differs from NumPy's: allow a few output ulps.
    tol = 2.0**-9 if dtype == np.float16 else 2.0**-6
    np.testing.assert_allclose(c.astype(np.float32), expected, rtol=tol, atol=tol * np.sqrt(k))


def test_matmul_counters_equal_hand_computed_values(run_proof):
    m, k, n = 256, 192, 256  # 128 x 128 x 64 tiles: 2 x 2 tiles, 3 K steps each
    a = np.ones((m, k), np.float16)
    b = np.ones((k, n), np.float16)
    c = run_proof("cube_matmul", a=a, b=b)
    assert (c == k).all()
    counters = cpu.last_counters()
    assert counters["block_dim"] == 4
    t = counters["total"]
    m_tiles, n_tiles = 2, 2
    assert t["MTE2"]["bytes"] == (m * k * n_tiles + k * n * m_tiles) * 2  # A once per N tile, B per M tile
    assert t["M"]["macs"] == m * n * k
    assert t["M"]["ops"] == m_tiles * n_tiles * 3  # one Mmad per K step
    assert t["FIXP"]["bytes"] == m * n * 2  # C written once as fp16
    assert t["V"]["ops"] == 0
