"""The precision standard's small-value rule (docs/precision.md): elements whose golden lies
below the small-value threshold are judged by the small-value error count only, not by the
ratio metrics. An output that is analytically zero (every golden element 0) with rounding
residue far below the small-value error bound therefore passes, whatever the ratio of the
residues; residue above the bound still fails by the count."""

import ml_dtypes
import numpy as np
import pytest

from fakit.compare import SMALL_VALUE, compare

BF16 = ml_dtypes.bfloat16


def _residue(shape, scale, seed):
    return np.random.default_rng(seed).normal(0, scale, shape)


@pytest.mark.parametrize("dtype,name", [(np.float16, "fp16"), (BF16, "bf16")])
@pytest.mark.parametrize("kernel_scale,bench_scale", [(3e-7, 3e-7), (3e-7, 1e-9), (2e-6, 0.0)])
def test_zero_golden_with_residue_below_the_bound_passes(dtype, name, kernel_scale, bench_scale):
    g = np.zeros((64, 4, 16), np.float32)
    actual = _residue(g.shape, kernel_scale, 1).astype(dtype)
    bench = _residue(g.shape, bench_scale, 2).astype(dtype)
    rep = compare("x", actual, g, bench, dtype=name)
    assert rep.passed, rep.summary()
    assert rep.outputs[0].metrics.rmse == 0 and rep.outputs[0].metrics.small_errors == 0


@pytest.mark.parametrize("dtype,name", [(np.float16, "fp16"), (BF16, "bf16")])
def test_zero_golden_with_errors_above_the_bound_fails_by_the_count(dtype, name):
    g = np.zeros((64, 4, 16), np.float32)
    bound = SMALL_VALUE[name][1]
    actual = np.zeros(g.shape, dtype)
    actual.reshape(-1)[:10] = 4 * bound
    rep = compare("x", actual, g, np.zeros(g.shape, dtype), dtype=name)
    assert not rep.passed and rep.outputs[0].small_count_failed, rep.summary()


def test_small_elements_do_not_enter_the_rmse_of_a_mixed_output():
    g = np.concatenate([np.linspace(0.5, 1.0, 512), np.zeros(512)]).astype(np.float32)
    bench = g.astype(np.float16)
    actual = g.astype(np.float16)
    actual[512:] = _residue(512, 1e-7, 3).astype(np.float16)  # residue in the small domain only
    rep = compare("x", actual, g, bench, dtype="fp16")
    assert rep.passed, rep.summary()
    assert rep.outputs[0].ratios["rmse"] <= 1.0
