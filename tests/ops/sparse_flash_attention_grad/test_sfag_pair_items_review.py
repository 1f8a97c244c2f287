"""Pair items (two tokens of a batch as one 2G-head item over the union of their selections)
against the golden in the cases the pair tests do not reach: a workspace that holds stale
data (real device memory is not cleared), the largest G, bf16, no rope, indices past the KV
length, repeats on both sides, empty items and the conditions that keep single tokens."""

import ctypes

import numpy as np
import pytest
from sfag_helpers import make_kwargs, refresh_forward, run_and_judge

from fakit.backends import cpu


def _stale_device_memory(monkeypatch, word):
    """Every device allocation from here on starts as int32 `word` repeated (as memory a
    previous launch left behind; the inputs are copied over it, the workspace keeps it)."""
    rt = cpu.runtime()
    real = rt.lib.aclrtMalloc

    def malloc(ptr_ref, size, policy):
        status = real(ptr_ref, size, policy)
        addr = ptr_ref._obj.value
        if status == 0 and addr:
            fill = np.full(int(size) // 4, word, np.int32)
            ctypes.memmove(addr, fill.ctypes.data, fill.nbytes)
        return status

    monkeypatch.setattr(rt.lib, "aclrtMalloc", malloc)


def _same_selection_pair():
    # One pair item whose tokens select the same 640 rows: the union is 640 rows (10 chunks of
    # 64) where the plan expects 2K - K^2 / S2 = 1080 (17 chunks), so the item is cut into
    # parts of which the last ones start past the merged list's end (its -1 at entry 640).
    kw = make_kwargs(batch=1, s1=2, s2=2048, heads=4, picks=640, seed=41)
    rng = np.random.default_rng(43)
    row = kw["sparse_indices"][0, 0, 0, :640]
    kw["sparse_indices"][0, 1, 0, :640] = rng.permutation(row)
    return refresh_forward(kw)


def test_pair_cut_past_its_union_matches_golden():
    run_and_judge(_same_selection_pair())
    assert cpu.last_counters()["block_dim"] > 10  # parts that start past chunk 10


def test_pair_cut_past_its_union_ignores_stale_workspace(monkeypatch):
    # A part's jump to its first chunk (KvGather::LimitChunks) reads entry
    # first * blockKv - 1 of the full 2 x min(K, reach) row, past the union here: the merge
    # stores the whole row (-1 after the union), so what the workspace held (int32 1 = KV
    # row 0 selected by token 0 of the pair, taken as an entry if it were read) is never read.
    _stale_device_memory(monkeypatch, 1)
    run_and_judge(_same_selection_pair())


def test_pair_at_g64_matches_golden():
    # G = 64: pair items of 2G = 128 heads (the cube's largest M), overlapping selections
    run_and_judge(make_kwargs(batch=1, s1=2, s2=256, heads=64, picks=96, seed=47))


def test_pair_bf16_without_rope_matches_golden():
    out, _ = run_and_judge(make_kwargs("bf16", batch=2, s1=2, s2=160, heads=2, picks=80, rope=False, seed=53))
    assert out["d_query_rope"] is None


def test_pair_indices_past_kv_length_are_skipped():
    # BSND with KV lengths: entries in [kv_len, S2), past S2 and the sort clamp's range, on
    # one token of a pair and on both, between valid ones (the merge stops a half at reach)
    kw = make_kwargs(batch=2, s1=2, s2=64, heads=2, picks=24, q_lens=[2, 2], kv_lens=[40, 64], seed=59)
    del kw["actual_seq_lengths_query"]
    idx = kw["sparse_indices"]
    idx[0, 0, 0, 3] = 45  # past batch 0's length 40, below S2
    idx[0, 0, 0, 5] = 64  # past S2
    idx[0, 1, 0, 2] = 0x7F000001  # past the sort's clamp
    idx[0, 1, 0, 7] = 45
    idx[1, 0, 0, 1] = 100
    run_and_judge(refresh_forward(kw))


def test_pair_repeats_on_both_tokens():
    # one KV row three times in token 0, once in token 1 (one merged entry for both, two for
    # token 0 alone), another row twice in each, and a token that repeats a single row
    kw = make_kwargs(batch=1, s1=4, s2=128, heads=4, picks=40, seed=61)
    idx = kw["sparse_indices"]
    idx[0, 0, 0, 0:3] = 9
    idx[0, 1, 0, 5] = 9
    idx[0, 0, 0, 10:12] = 77
    idx[0, 1, 0, 20:22] = 77
    idx[0, 2, 0, :40] = 3
    run_and_judge(refresh_forward(kw))


def test_pair_items_with_empty_and_early_ending_tokens():
    # item 0: both tokens select nothing (-1 first); item 1: one token ends after 1 entry
    kw = make_kwargs(batch=1, s1=4, s2=96, heads=2, picks=50, seed=67)
    idx = kw["sparse_indices"]
    idx[0, 0, 0, :] = -1
    idx[0, 1, 0, :] = -1
    idx[0, 2, 0, 1:] = -1
    out, _ = run_and_judge(refresh_forward(kw))
    assert not out["d_query"][0, :2].any()


def test_pair_items_deterministic_match_golden():
    # deterministic mode (one core): two pair items in a row on it, one token ending early
    kw = make_kwargs(batch=1, s1=4, s2=2048, heads=4, picks=640, seed=73, deterministic=True)
    kw["sparse_indices"][0, 3, 0, 200:] = -1
    run_and_judge(refresh_forward(kw))
    assert cpu.last_counters()["block_dim"] == 1


@pytest.mark.parametrize(
    "case",
    [
        dict(q_lens=[4], kv_lens=[96]),  # BSND with actual_seq_qlen
        dict(index_dtype=np.int64),
        dict(block=8),
        dict(mode=3),
        dict(layout="TND", q_lens=[2, 4], kv_lens=[96, 64]),
    ],
)
def test_single_token_fallbacks_match_golden(case):
    # the conditions that keep single tokens: results as before
    run_and_judge(make_kwargs(**{**dict(batch=1, s1=4, s2=96, heads=2, picks=30, seed=71), **case}))


def test_single_tokens_ignore_stale_workspace(monkeypatch):
    # the control of the stale-workspace case: S1 odd (single tokens, each sorted list stored
    # whole) over the same stale memory
    _stale_device_memory(monkeypatch, 1)
    kw = make_kwargs(batch=1, s1=3, s2=2048, heads=4, picks=640, seed=41)
    run_and_judge(kw)
    assert cpu.last_counters()["block_dim"] > 10


def test_pair_items_of_a_batch_without_keys():
    # BSND with KV lengths only, batch 0 of length 0: its pair items read no entry (reach 0)
    kw = make_kwargs(batch=2, s1=2, s2=64, heads=2, picks=30, q_lens=[2, 2], kv_lens=[0, 64], seed=79)
    del kw["actual_seq_lengths_query"]
    out, _ = run_and_judge(refresh_forward(kw))
    assert not out["d_query"][0].any()
