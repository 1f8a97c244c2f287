"""Shared helpers of the golden tests (import path + input generators)."""

import os
import sys
import zlib

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # torch_dense_ref lives next to the tests

DTYPES = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16, "fp32": np.float32}


def randn(rng, shape, dtype, scale=1.0):
    """Normal samples rounded to `dtype` (the operator's input dtype)."""
    return (rng.standard_normal(shape) * scale).astype(DTYPES.get(dtype, dtype))


def assert_close(actual, expected, *, rtol=2e-4, atol=2e-5, what=""):
    """Compare the float32 golden with the float64 reference; no NaN anywhere."""
    actual = np.asarray(actual, np.float64)
    expected = np.asarray(expected, np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert not np.isnan(actual).any(), f"{what}: golden has NaN"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


@pytest.fixture
def rng(request):
    # a per-test deterministic seed so that failures reproduce
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


TRIL_2048 = np.triu(np.ones((2048, 2048), np.uint8), 1)  # the compressed mask of modes 2-8
PREFIX_3072 = np.concatenate(
    [TRIL_2048, np.concatenate([np.zeros((1024, 1024), np.uint8), np.ones((1024, 1024), np.uint8)], 1)], 0
)


def tnd_inputs(rng, q_lens, kv_lens, n, nkv, d, dtype, dv=None):
    tq, tk = sum(q_lens), sum(kv_lens)
    q = randn(rng, (tq, n, d), dtype)
    k = randn(rng, (tk, nkv, d), dtype)
    v = randn(rng, (tk, nkv, dv or d), dtype)
    return q, k, v, list(np.cumsum(q_lens)), list(np.cumsum(kv_lens))


def random_drop_mask(rng, n, q_lens, kv_lens):
    bits = sum(n * q * k for q, k in zip(q_lens, kv_lens))
    return rng.integers(0, 256, size=(bits + 7) // 8, dtype=np.uint8)
