"""Attribute and value-tensor contents that used to overflow or make a kernel address
outside its tensors — pre/nextTokens of INT64_MIN (PFA), block-table ids outside the cache (IFA),
cumulative lengths that do not end at T or decrease (SFAG TND) — give 161002 naming the
parameter; legal neighbours of those values still match the golden."""

import sys
from pathlib import Path

import numpy as np
import pytest
from robust_helpers import call, expect_status, run_and_judge, smoke

import fakit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops" / "incre_flash_attention"))
from ifa_helpers import make_kwargs as ifa_kwargs  # noqa: E402
from ifa_helpers import page

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
PFA, IFA, SFAG = "prompt_flash_attention", "incre_flash_attention_v4", "sparse_flash_attention_grad"


# ------------------------------------------------------------------ PFA pre/next tokens
@pytest.mark.parametrize(
    "pre,nxt,param",
    [
        (0, INT64_MIN, "nextTokens"),
        (INT64_MIN, 0, "preTokens"),
        (INT64_MAX, INT64_MIN, "nextTokens"),
        (INT64_MIN, INT64_MAX, "preTokens"),
        (INT64_MIN, INT64_MIN, "nextTokens"),
    ],
)
def test_pfa_int64_min_tokens_are_161002(pre, nxt, param):
    kw = smoke(PFA, lambda k: k.get("atten_mask") is not None)
    kw.update(pre_tokens=pre, next_tokens=nxt)
    log = expect_status(161002, param, fakit.run, PFA, backend="cpu", **kw)
    assert "negative" in log


@pytest.mark.parametrize("pre,nxt", [(INT64_MIN, INT64_MIN), (INT64_MAX, INT64_MAX)])
def test_pfa_extreme_tokens_without_mask_are_ignored(pre, nxt):
    kw = smoke(PFA, lambda k: k.get("atten_mask") is not None)
    kw.update(atten_mask=None, pre_tokens=pre, next_tokens=nxt)
    run_and_judge(PFA, kw)


def test_pfa_legal_negative_next_tokens_still_run():
    kw = smoke(PFA, lambda k: k.get("atten_mask") is not None)
    s = np.asarray(kw["query"]).shape[2]
    rel = np.arange(s)[None, :] - np.arange(s)[:, None]
    kw.update(
        pre_tokens=40,
        next_tokens=-3,
        atten_mask=np.ascontiguousarray(np.broadcast_to((rel > -3) | (rel < -40), kw["atten_mask"].shape)),
    )
    run_and_judge(PFA, kw)


# ------------------------------------------------------------------ IFA block table
def _paged():
    kw = ifa_kwargs("fp16", "BNSD", b=2, n=4, nkv=2, s=64, d=32)
    return page(kw, [64, 40], 16, cache="BNSD")


@pytest.mark.parametrize("bad", [-5, 10**6, 2**31 - 1, -(2**31)])
@pytest.mark.parametrize("where", [(0, 0), (1, 2)])
def test_ifa_block_id_outside_the_cache_is_161002(bad, where):
    kw = _paged()
    kw["block_table"] = kw["block_table"].copy()
    kw["block_table"][where] = bad
    log = expect_status(161002, "blocktable", fakit.run, IFA, backend="cpu", **kw)
    assert f"is {bad}" in log


def test_ifa_block_id_equal_to_blocknum_is_161002():
    kw = _paged()
    kw["block_table"] = kw["block_table"].copy()
    kw["block_table"][0, 1] = kw["key"][0].shape[0]
    expect_status(161002, "blocktable", fakit.run, IFA, backend="cpu", **kw)


def test_ifa_padding_entries_past_the_length_may_hold_anything():
    kw = _paged()
    table = kw["block_table"].copy()
    table[1, 3:] = [-7, 10**6][: table.shape[1] - 3]  # batch 1 uses 3 blocks (40 tokens)
    kw["block_table"] = table
    out = fakit.run(IFA, backend="cpu", **kw)
    from fakit import compare, golden

    report = compare.compare(IFA, out, golden.incre_flash_attention_v4(**kw), golden.benchmark(IFA, **kw))
    assert report.passed, report.summary()


# ------------------------------------------------------------------ SFAG TND cumulative lengths
def _tnd():
    return smoke(SFAG, lambda k: k["layout"] == "TND" and len(k["actual_seq_lengths_query"]) == 2)


@pytest.mark.parametrize(
    "which,values,words",
    [
        ("actualSeqLengthsQueryOptional", [24, -1], "below the previous"),
        ("actualSeqLengthsQueryOptional", [24, 0], "below the previous"),
        ("actualSeqLengthsQueryOptional", [24, 10**6], "must equal T1"),
        ("actualSeqLengthsQueryOptional", [24, 63], "must equal T1"),
        ("actualSeqLengthsQueryOptional", [-1, 64], "below the previous"),
        ("actualSeqLengthsQueryOptional", [40, 24], "below the previous"),
        ("actualSeqLengthskvOptional", [64, -1], "below the previous"),
        ("actualSeqLengthskvOptional", [64, 0], "below the previous"),
        ("actualSeqLengthskvOptional", [64, 10**6], "must equal T2"),
        ("actualSeqLengthskvOptional", [300, 264], "below the previous"),
    ],
)
def test_sfag_tnd_cumulative_lengths_must_rise_to_t(which, values, words):
    kw = _tnd()
    log = expect_status(161002, which, call, SFAG, kw, {which: np.asarray(values, np.int64)})
    assert words in log


@pytest.mark.parametrize("which,value", [("actualSeqLengthsQueryOptional", 33), ("actualSeqLengthskvOptional", -1)])
def test_sfag_bsnd_lengths_must_lie_in_0_s(which, value):
    kw = smoke(SFAG, lambda k: k["layout"] == "BSND")
    b = np.asarray(kw["query"]).shape[0]
    vals = np.full(b, 8, np.int64)
    vals[0] = value
    other = "actualSeqLengthskvOptional" if which.startswith("actualSeqLengthsQ") else "actualSeqLengthsQueryOptional"
    expect_status(161002, which, call, SFAG, kw, {which: vals, other: np.full(b, 8, np.int64)})


def test_sfag_tnd_valid_lengths_still_match_the_golden():
    run_and_judge(SFAG, _tnd())


# ------------------------------------------------------------------ scale (found by the fuzz suite)
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
@pytest.mark.parametrize("scale", [1e300, -1e39, float("nan"), float("inf")])
def test_scale_not_finite_as_a_float_is_161002(op, scale):
    kw = smoke(op)
    kw["scale_value"] = scale
    log = expect_status(161002, "scaleValue", fakit.run, op, backend="cpu", **kw)
    assert "finite as a float" in log


# ------------------------------------------------------------------ IFA left padding (found by the fuzz campaign)
@pytest.mark.parametrize(
    "lens,pad", [([4294967296, INT64_MAX], 1), ([INT64_MAX], 1), ([50, 20], INT64_MAX), ([INT64_MAX, 3], INT64_MAX)]
)
def test_ifa_left_padded_window_leaving_the_cache_gives_zeros(lens, pad):
    # window [S - pad - L, S - pad): a start below 0 gives an all-zero output (spec 002); lengths
    # up to INT64_MAX used to size the split plan (an allocation of 64 GiB) and pad - L to wrap
    kw = smoke(IFA, lambda k: k.get("kv_padding_size") is not None)
    kw.update(actual_seq_lengths=lens, kv_padding_size=pad)
    run_and_judge(IFA, kw)
