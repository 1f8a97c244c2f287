"""The MIX proof kernel: the cube core computes S = A * B^T into a GM workspace slot, its two
vector cores take the row softmax, cross-core flags ping-pong two slots per core."""

import numpy as np
import pytest

from fakit.backends import cpu


def reference(a, b):
    s = a.astype(np.float32) @ b.astype(np.float32).T
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("m,n,k,max_cores", [(32, 16, 16, 0), (100, 77, 40, 0), (256, 512, 64, 2), (200, 33, 17, 1)])
def test_softmax_of_scores_matches_numpy(run_proof, m, n, k, max_cores):
    rng = np.random.default_rng(m + n + k)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (n, k)).astype(np.float16)
    y = run_proof("mix_softmax", a=a, b=b, maxCores=max_cores)
    assert y.dtype == np.float32 and y.shape == (m, n)
    np.testing.assert_allclose(y, reference(a, b), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(y.sum(axis=1), 1.0, rtol=1e-5)


def test_several_iterations_per_core_use_both_workspace_slots(run_proof):
    m, n, k = 8 * 32, 64, 32  # 8 row blocks on 2 cores: 4 iterations each, slots 0,1,0,1
    a = np.random.default_rng(1).uniform(-1, 1, (m, k)).astype(np.float16)
    b = np.random.default_rng(2).uniform(-1, 1, (n, k)).astype(np.float16)
    y = run_proof("mix_softmax", a=a, b=b, maxCores=2)
    np.testing.assert_allclose(y, reference(a, b), rtol=2e-5, atol=1e-6)
    counters = cpu.last_counters()
    assert counters["block_dim"] == 2
    t = counters["total"]
    assert t["M"]["macs"] == m * n * k
    assert t["MTE3"]["bytes"] >= m * n * 4  # Y written (fp32) by the vector cores
