"""fakit.compare: the precision standard on hand-made arrays and on real goldens."""

import ml_dtypes
import numpy as np
import pytest

from fakit import cases, golden
from fakit.compare import THRESHOLD, compare, compare_output, metrics

BF16 = ml_dtypes.bfloat16


def _golden_like(shape=(4, 64, 32), seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


def _device_like(g, dtype, seed=1, ulps=1.0):
    """g rounded to dtype plus a few-ulp random error: what a decent kernel produces."""
    rng = np.random.default_rng(seed)
    eps = {np.float16: 2.0**-11, BF16: 2.0**-8}[dtype]
    noisy = g * (1 + rng.uniform(-ulps, ulps, size=g.shape) * eps)
    return noisy.astype(dtype)


def test_metrics_by_hand():
    g = np.array([1.0, -2.0, 4.0, 0.5], np.float32)
    a = np.array([1.5, -2.0, 3.0, 0.5], np.float32)
    m = metrics(a, g, "fp32")
    assert m.max_abs == pytest.approx(1.0)
    assert m.mare == pytest.approx(0.5, rel=1e-6)  # 0.5 / 1
    assert m.mere == pytest.approx((0.5 + 0 + 0.25 + 0) / 4, rel=1e-6)
    assert m.rmse == pytest.approx(np.sqrt((0.25 + 1.0) / 4))


def test_golden_against_itself_passes_and_reports_zero():
    g = _golden_like()
    rep = compare("prompt_flash_attention", g.astype(np.float16), g.astype(np.float16).astype(np.float32), dtype="fp16")
    assert rep.passed, rep.summary()
    assert rep.outputs[0].metrics.mare == 0 and rep.summary().startswith("PASS")


@pytest.mark.parametrize("dtype, name", [(np.float16, "fp16"), (BF16, "bf16")])
def test_device_like_output_passes_the_two_golden_rule(dtype, name):
    g = _golden_like()
    bench = _device_like(g, dtype, seed=1)
    actual = _device_like(g, dtype, seed=2)
    rep = compare("x", actual, g, bench, dtype=name)
    assert rep.passed, rep.summary()
    assert rep.outputs[0].ratios["mere"] < 1.5


@pytest.mark.parametrize("dtype, name", [(np.float16, "fp16"), (BF16, "bf16")])
def test_perturbed_output_fails(dtype, name):
    g = _golden_like()
    bench = _device_like(g, dtype, seed=1)
    actual = _device_like(g, dtype, seed=2, ulps=8.0)  # 8x the benchmark's error
    rep = compare("x", actual, g, bench, dtype=name)
    assert not rep.passed
    assert "benchmark" in rep.summary()


def test_exact_benchmark_does_not_make_the_ratio_stricter_than_the_ecosystem_bound():
    # fp32 statistics: the benchmark shares the golden's arithmetic and is exact
    g = _golden_like() + 2.0
    close = (g * (1 + 1e-6)).astype(np.float32)  # accumulation-order noise
    assert compare("x", close, g, g.copy(), dtype="fp32").passed
    far = (g * (1 + 4 * THRESHOLD["fp32"])).astype(np.float32)
    assert not compare("x", far, g, g.copy(), dtype="fp32").passed


def test_single_wrong_element_fails_on_mare():
    g = _golden_like()
    bench = _device_like(g, np.float16)
    actual = bench.copy()
    actual[0, 0, 0] = -actual[0, 0, 0]
    rep = compare("x", actual, g, bench, dtype="fp16")
    assert not rep.passed and "MARE" in rep.summary()


def test_ecosystem_bound_applies_without_benchmark():
    g = np.full((100,), 1.0, np.float32)
    ok = (g * (1 + 0.5 * THRESHOLD["fp16"])).astype(np.float32)
    bad = (g * (1 + 2 * THRESHOLD["fp16"])).astype(np.float32)
    assert compare("x", ok, g, dtype="fp16").passed
    rep = compare("x", bad, g, dtype="fp16")
    assert not rep.passed and "ecosystem bound" in rep.summary()


def test_ecosystem_bound_waived_when_benchmark_cannot_meet_it():
    g = np.full((100,), 1.0, np.float32)
    bench = (g * (1 + 2 * THRESHOLD["fp16"])).astype(np.float32)
    rep = compare("x", bench.copy(), g, bench, dtype="fp16")
    assert rep.passed and any("waived" in n for n in rep.outputs[0].notes)


def test_nan_and_inf_positions_must_match():
    g = _golden_like((64,))
    a = g.copy()
    a[3] = np.nan
    rep = compare("x", a, g, dtype="fp32")
    assert not rep.passed and rep.outputs[0].nonfinite_mismatches == 1
    g2, a2 = g.copy(), g.copy()
    g2[5], a2[5] = np.inf, np.inf
    assert compare("x", a2, g2, dtype="fp32").passed
    a2[5] = -np.inf
    assert not compare("x", a2, g2, dtype="fp32").passed
    g2[7] = a2[7] = np.nan
    a2[5] = np.inf
    assert compare("x", a2, g2, dtype="fp32").passed


def test_near_zero_golden_values_use_the_small_value_domain():
    # relative error of tiny golden values would explode with the 1e-7 guard alone
    g = np.concatenate([np.ones(1000, np.float32), np.full(10, 1e-6, np.float32)])
    a = g.copy()
    a[1000:] = 3e-6  # abs error 2e-6 < 2^-11
    rep = compare("x", a.astype(np.float16), g, dtype="fp16")
    assert rep.passed, rep.summary()
    assert rep.outputs[0].metrics.mare == 0  # tiny values are outside MARE/MERE
    a[1000:] = 1e-2  # abs error 1e-2 > 2^-11
    assert not compare("x", a.astype(np.float16), g, dtype="fp16").passed


def test_small_value_error_count_against_benchmark():
    g = np.concatenate([np.ones(100, np.float32), np.zeros(100, np.float32)])
    bench = g.copy()
    bench[100:110] = 1e-4  # 10 small-value errors (> 2^-16)
    actual = g.copy()
    actual[100:125] = 1e-4  # 25 > 2 x 10
    rep = compare("x", actual, g, bench, dtype="fp16")
    assert not rep.passed and "small-value" in rep.summary()
    actual[120:125] = 0
    assert compare("x", actual, g, bench, dtype="fp16").passed


def test_int8_outputs_allow_one_quantisation_step_only():
    g = np.arange(-50, 50, dtype=np.float32)
    assert compare("x", g.astype(np.int8), g, dtype="int8").passed
    a = g.astype(np.int8)
    a[3] += 1
    assert compare("x", a, g, dtype="int8").passed  # |a - g| <= 1 (commercial standard)
    a[4] += 2
    rep = compare("x", a, g, dtype="int8")
    assert not rep.passed and "exceeds 1" in rep.summary()


def test_zero_size_none_and_shape_mismatch():
    empty = np.zeros((0, 4), np.float32)
    assert compare("x", {"o": empty, "p": None}, {"o": empty, "p": None}, dtype="fp16").passed
    rep = compare("x", {"o": None}, {"o": np.ones(3, np.float32)}, dtype="fp16")
    assert not rep.passed and "no o" in rep.summary()
    rep = compare("x", {"o": np.ones(4, np.float16)}, {"o": np.ones(3, np.float32)})
    assert not rep.passed and "shape" in rep.summary()
    assert compare_output("o", np.ones(3, np.float16), np.ones(3, np.float32)).dtype == "fp16"


def test_real_golden_benchmark_passes_and_scaled_output_fails():
    op = "prompt_flash_attention"
    case = cases.suite(op, "smoke")[0]
    kw = case.inputs()
    gold, bench = golden.prompt_flash_attention(**kw), golden.benchmark(op, **kw)
    out = np.asarray(bench).astype(np.float16)
    assert compare(op, out, gold, bench, dtype="fp16").passed
    rep = compare(op, (np.asarray(gold) * 1.01).astype(np.float16), gold, bench, dtype="fp16")
    assert not rep.passed
    assert rep.worst("ratio_mere") > 1.5
