"""The TND operators (FA varlen forward, V5 backward) at the limits of their int64 arguments
and with the dropout mask as the specs size it:

* pre/nextTokens at INT64_MIN / INT64_MAX in every sparse mode answer a documented status or a
  result the golden confirms (their sum used to overflow in the band check);
* prefixOptional outside [Skv - Sq, Skv] (or [0, Skv] when Sq > Skv) in sparse mode 6 is 161002
  naming it, with or without a mask; q/kv start indices too far out to add to a position are
  161002;
* the dropout mask is dense, (sum over batches of N x Sq x Skv) / 8 bytes, rows not padded: a
  mask of exactly that size works for any Skv in both APIs, one byte less is 161002.
"""

import numpy as np
import pytest
from robust_helpers import expect_status, run_and_judge

import fakit
from fakit.cases import flash_attention_unpadding_score_grad_v5 as v5_cases
from fakit.cases import flash_attention_var_len_score as fav_cases

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
FAV, V5 = "flash_attention_var_len_score", "flash_attention_unpadding_score_grad_v5"
MODULES = {FAV: fav_cases, V5: v5_cases}
BAND = {0: dict(mask="band", pre=12, nxt=3), 4: dict(pre=8, nxt=2), 7: dict(pre=24, nxt=-4), 8: dict(pre=9, nxt=0)}


def _case(op, mode, **kw):
    opts = dict(BAND.get(mode, {}), **kw)
    return MODULES[op].make("fp16", qlens=(5, 20), kvlens=(9, 24), N=2, D=16, sparse_mode=mode, **opts).inputs()


@pytest.mark.parametrize("op", [FAV, V5])
@pytest.mark.parametrize("mode", [0, 4, 7, 8])
@pytest.mark.parametrize("pre,nxt", [(INT64_MAX, INT64_MAX), (INT64_MAX, INT64_MIN), (INT64_MIN, INT64_MAX)])
def test_band_modes_with_extreme_tokens_compute(op, mode, pre, nxt):
    # max + min = -1: the band [-pre, next] is still non-empty only when one side is INT64_MAX
    kw = _case(op, mode)
    kw.update(pre_tokens=pre, next_tokens=nxt)
    if pre + nxt < 0:
        expect_status(161002, "nextTokens", fakit.run, op, backend="cpu", **kw)
    else:
        run_and_judge(op, kw)


@pytest.mark.parametrize("op", [FAV, V5])
@pytest.mark.parametrize("mode", [0, 4, 7, 8])
def test_band_modes_with_both_tokens_int64_min_are_161002(op, mode):
    kw = _case(op, mode)
    kw.update(pre_tokens=INT64_MIN, next_tokens=INT64_MIN)
    log = expect_status(161002, "nextTokens", fakit.run, op, backend="cpu", **kw)
    assert "empty" in log


@pytest.mark.parametrize("op", [FAV, V5])
@pytest.mark.parametrize("mode", [1, 2, 3, 6])
@pytest.mark.parametrize("pre,nxt", [(INT64_MIN, INT64_MIN), (INT64_MAX, INT64_MAX)])
def test_modes_that_ignore_the_tokens_ignore_their_extremes(op, mode, pre, nxt):
    kw = _case(op, mode, prefix=[6, 10] if mode == 6 else None)
    kw.update(pre_tokens=pre, next_tokens=nxt)
    run_and_judge(op, kw)


@pytest.mark.parametrize("op", [FAV, V5])
@pytest.mark.parametrize("prefix", [[-1, -1], [10**9, 10**9], [INT64_MIN, 10], [6, INT64_MAX], [3, 10]])
@pytest.mark.parametrize("mask", [True, False])
def test_prefix_outside_the_sparse_mode_range_is_161002(op, prefix, mask):
    # batch 0: Sq 5 <= Skv 9 -> [4, 9]; batch 1: Sq 20 <= Skv 24 -> [4, 24]
    kw = _case(op, 6, prefix=[6, 10])
    kw["prefix"] = prefix
    if not mask:
        kw["atten_mask"] = None
    log = expect_status(161002, "prefixOptional", fakit.run, op, backend="cpu", **kw)
    assert "must be in [" in log


@pytest.mark.parametrize("which", ["q_start_idx", "kv_start_idx"])
@pytest.mark.parametrize("value", [INT64_MIN, INT64_MAX, 2**40 + 1])
def test_v5_start_index_beyond_the_position_range_is_161002(which, value):
    kw = v5_cases.make(
        "fp16", qlens=(5, 20), kvlens=(9, 24), N=2, D=16, sparse_mode=3, pse="slopes", pse_type=3, start=[1, 2]
    ).inputs()
    kw[which] = [value]
    name = "qStartIdxOptional" if which == "q_start_idx" else "kvStartIdxOptional"
    expect_status(161002, name, fakit.run, V5, backend="cpu", **kw)


# ------------------------------------------------------------------ dropout mask as the spec sizes it
Q_LENS, KV_LENS, N = (20, 33, 7), (50, 27, 13), 2
SPEC_BYTES = -(-sum(N * q * k for q, k in zip(Q_LENS, KV_LENS)) // 8)  # 3964 bits -> 496 bytes


def _dropout_case(op, dtype, mode, seed=0):
    return (
        MODULES[op]
        .make(dtype, qlens=Q_LENS, kvlens=KV_LENS, N=N, D=16, sparse_mode=mode, dropout=True, keep_prob=0.8, seed=seed)
        .inputs()
    )


def test_the_spec_sized_mask_of_the_example_is_496_bytes():
    assert SPEC_BYTES == 496
    assert _dropout_case(FAV, "fp16", 0)["drop_mask"].size == SPEC_BYTES


@pytest.mark.parametrize("op", [FAV, V5])
@pytest.mark.parametrize("dtype,mode", [("fp16", 0), ("bf16", 3), ("fp32", 2)])
def test_dense_dropout_mask_with_any_skv_matches_the_golden(op, dtype, mode):
    run_and_judge(op, _dropout_case(op, dtype, mode))


@pytest.mark.parametrize("op", [FAV, V5])
def test_dropout_mask_one_byte_short_is_161002(op):
    kw = _dropout_case(op, "fp16", 0)
    kw["drop_mask"] = kw["drop_mask"][:-1]
    log = expect_status(161002, "dropMaskOptional", fakit.run, op, backend="cpu", **kw)
    assert f"has {SPEC_BYTES - 1} bytes" in log and f"need {SPEC_BYTES}" in log


@pytest.mark.parametrize("op", [FAV, V5])
def test_dropout_rows_start_inside_bytes(op):
    # Skv = 13 and 27: nearly every row's first keep bit lies inside a byte; a mask whose bit i is
    # (i % 3 == 0) drops a different column pattern on every row, so a kernel reading rows from
    # byte boundaries (or padded rows) would drop the wrong keys
    kw = _dropout_case(op, "fp16", 0)
    bits = np.arange(SPEC_BYTES * 8) % 3 != 0
    kw["drop_mask"] = np.packbits(bits, bitorder="little")
    run_and_judge(op, kw)
