"""The timeline model against documented ceilings and against its own counters:
a large fp16 GEMM proof kernel stays under the documented GEMM ceiling (89 % of the cube peak,
torch 4096^3 on 910B2, [S21] in docs/sources.md), a streaming kernel under the HBM bandwidth,
and no launch is ever modelled faster than the per-pipe bound of its own counters at peak rates."""

import numpy as np
import pytest

import fakit
from fakit.backends import cpu

GEMM_CEILING = 0.89  # measured torch fp16 GEMM 314.5 / 353.9 TF on 910B2 [S21]


def costs():
    return {c["key"]: c["value"] for c in cpu.cost_table()}


def assert_not_below_counter_bound(profile, counters):
    """Every core's pipe is busy at least (counted work / fastest rate of that pipe), no pipe is
    busy longer than the core ran, and the task lasts at least the busiest pipe of any core."""
    c = costs()
    mhz = profile["clock_mhz"]
    fastest = {  # cycles per counted unit at the fastest documented rate of each pipe
        "MTE2": ("bytes", 1 / c["l2_read_bytes"]),
        "MTE1": ("bytes", 1 / c["l0a_bytes"]),
        "M": ("macs", 1 / c["macs_int8"]),
        "V": ("ops", 1.0),
        "MTE3": ("bytes", 1 / c["l2_write_bytes"]),
        "FIXP": ("bytes", 1 / (4 * c["fixp_cast_elems"])),
    }
    by_core = {(x["core"], x["sub"]): x for x in profile["cores"]}
    longest = 0.0
    for cc in counters["cores"]:
        prof = by_core[(cc["core"], cc["sub"])]
        elapsed = (prof["end_us"] - prof["start_us"]) * mhz
        for pipe, (unit, per) in fastest.items():
            busy = prof["busy_us"][pipe] * mhz
            assert busy >= cc[pipe].get(unit, 0) * per * (1 - 1e-9), (cc["core"], cc["sub"], pipe)
            assert busy <= elapsed * (1 + 1e-9)
            longest = max(longest, busy)
    assert profile["task_duration_us"] >= profile["launch_us"] + longest / mhz * (1 - 1e-9)


def test_large_fp16_gemm_stays_under_the_documented_ceiling(run_proof):
    m = n = k = 1024
    a = np.random.default_rng(0).standard_normal((m, k)).astype(np.float16)
    b = np.random.default_rng(1).standard_normal((k, n)).astype(np.float16)
    run_proof("cube_matmul", a=a, b=b)
    p = cpu.last_profile()
    tflops = 2 * m * n * k / p["task_duration_us"] / 1e6
    peak = 353.9 if p["soc"] == "Ascend910B2" else None
    assert peak is not None
    assert 0 < tflops < GEMM_CEILING * peak
    assert_not_below_counter_bound(p, cpu.last_counters())


def test_streaming_kernel_stays_under_hbm_bandwidth(run_proof):
    x = np.random.default_rng(0).standard_normal(1 << 22).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(1 << 22).astype(np.float32)
    run_proof("vector_axpy", x=x, y=y, alpha=2.0, tileLength=4096)
    p = cpu.last_profile()
    # x and y come from HBM once (whole 512 B lines); z lands in L2
    assert p["hbm_bytes"] >= x.nbytes + y.nbytes
    assert p["hbm_bytes"] / (p["task_duration_us"] * 1e-6) <= 1.6e12 * (1 + 1e-9)
    assert p["l2_write_bytes"] == x.nbytes
    assert_not_below_counter_bound(p, cpu.last_counters())


@pytest.mark.parametrize("causal", [False, True])
def test_attention_launch_is_never_below_its_counter_bound(causal):
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((1, 2, 256, 128)).astype(np.float16) for _ in range(3))
    kw = dict(num_heads=2, input_layout="BNSD", scale_value=0.088)
    if causal:
        kw.update(atten_mask=np.triu(np.ones((256, 256), bool), 1), next_tokens=0)
    fakit.run("prompt_flash_attention", backend="cpu", query=q, key=k, value=v, **kw)
    p = cpu.last_profile()
    assert p["model"] == "timeline"
    for name in (
        "aic_mac_ratio",
        "aic_mte1_ratio",
        "aic_mte2_ratio",
        "aic_fixpipe_ratio",
        "aic_scalar_ratio",
        "aiv_vec_ratio",
        "aiv_mte2_ratio",
        "aiv_mte3_ratio",
        "aiv_scalar_ratio",
    ):
        assert 0 <= p[name] <= 1
    assert_not_below_counter_bound(p, cpu.last_counters())


@pytest.mark.parametrize(
    "op",
    [
        "prompt_flash_attention",
        "flash_attention_var_len_score",
        "incre_flash_attention_v4",
        "flash_attention_unpadding_score_grad_v5",
        "sparse_flash_attention_grad",
    ],
)
def test_every_operator_is_modelled_and_never_below_its_counter_bound(op):
    from fakit import cases

    case = cases.suite(op, "smoke")[0]
    fakit.run(op, backend="cpu", **case.inputs())
    p = cpu.last_profile()
    assert p["model"] == "timeline" and p["task_duration_us"] > p["launch_us"]
    assert p["hbm_bytes"] > 0 and p["bound_pipe"] != "-"
    assert_not_below_counter_bound(p, cpu.last_counters())
