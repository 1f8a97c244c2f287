"""The FlashAttentionScore kernel (aclnnFlashAttentionVarLenScore, TND) on the CPU target
against the NumPy golden: attention_out and the softmax max/sum statistics, feature by feature
(dtypes, GQA, varlen batches incl. empty ones, sparse modes 0-8, prefix, pse/alibi, invalid
rows, block edges, head dims)."""

import numpy as np
import pytest
from fa_varlen_helpers import FLT_MAX, MAX_INT, OP, make_kwargs, run_and_judge, tiling_carries_unit_table
from fp16_sum_probe import assert_v_pass_sums, judged_l2_writes, large_v, standard_normal_qkv

from fakit import cases
from fakit.backends import cpu


@pytest.mark.parametrize("case", cases.suite(OP, "smoke"), ids=lambda c: c.id)
def test_smoke_suite_matches_golden(case):
    run_and_judge(case.inputs())


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("n,nkv", [(2, 2), (4, 1), (6, 2)])
def test_dtypes_and_gqa_without_mask_match_golden(dtype, n, nkv):
    run_and_judge(make_kwargs(dtype, seq_q=(37, 64, 5), seq_kv=(50, 64, 130), n=n, nkv=nkv, d=32))


def test_statistics_are_eight_replicated_values_per_row_and_head():
    out, gold = run_and_judge(make_kwargs(seq_q=(20, 9), seq_kv=(33, 40)))
    for name in ("softmax_max", "softmax_sum"):
        assert out[name].shape == (29, 2, 8)
        assert np.all(out[name] == out[name][..., :1])
    # exact maxima: the kernel's row max is the max of the same fp32 scores
    np.testing.assert_allclose(out["softmax_max"], gold["softmax_max"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["softmax_sum"], gold["softmax_sum"], rtol=1e-4)


def test_several_query_and_key_blocks_with_ragged_tails():
    run_and_judge(make_kwargs(seq_q=(300, 129), seq_kv=(400, 257), n=2, d=64))


@pytest.mark.parametrize("mode", [None, 3])
def test_s_ahead_of_the_kv_staging_matches_golden(mode):
    # Uneven TND batches over 2 KV heads: K/V staged in Nz order, each core's first S block reads
    # the caller's K rows at its batch's token offset before the staging's barrier
    # (forward_cube.h Run).
    run_and_judge(make_kwargs(seq_q=(333, 40, 500), seq_kv=(150, 30, 700), n=8, nkv=2, d=128, mode=mode))


def test_long_staging_pass_through_the_s_buffers_matches_golden():
    # A staging pass of >= 256 KiB per vector core over uneven batches: its chunks go through the
    # S buffers (PlanKvNzChunk), with the statistics.
    run_and_judge(make_kwargs("bf16", seq_q=(700, 300, 900), seq_kv=(1100, 250, 900), n=16, d=128, mode=0))


@pytest.mark.parametrize(
    "dtype,seq_q,seq_kv,nkv,d,pse",
    [
        ("bf16", (333, 0, 0, 200), (150, 0, 30, 140), 2, 128, False),  # batches without queries, one without keys
        ("bf16", (333, 120, 200), (150, 20, 140), 4, 80, False),  # groups of 2, D = 80
        ("fp16", (333, 200), (150, 140), 2, 128, True),  # pse keeps the power-of-two scale out of K
    ],
)
def test_only_value_staged_matches_golden(dtype, seq_q, seq_kv, nkv, d, pse):
    # Few loads per key row and no mask: only V is staged in Nz order (ForwardParams::kvNz
    # KV_NZ_V_ONLY), every S reads the caller's K rows at its batch's token offset, and each
    # core's first three S blocks go out before the staging's barrier (forward_cube.h Run).
    kw = make_kwargs(dtype, seq_q=seq_q, seq_kv=seq_kv, n=8, nkv=nkv, d=d)
    if pse:
        rng = np.random.default_rng(5)
        kw["real_shift"] = rng.uniform(-2, 2, (1, 8, max(seq_q), max(seq_kv))).astype(kw["query"].dtype)
        kw["scale_value"] = 0.125
    run_and_judge(kw)


@pytest.mark.parametrize(
    "dtype,seq_q,seq_kv,nkv,d,mode,pse",
    [
        ("fp16", (333, 0, 200), (333, 30, 260), 2, 64, 3, False),  # causal, scale 1/8 in the staged K
        ("fp16", (333, 200), (150, 140), 2, 64, None, True),  # pse keeps the scale out of K
        ("bf16", (100, 300, 150), (100, 300, 150), 2, 48, 3, False),  # D = 48, a short first batch
        ("bf16", (260, 70), (400, 90), 1, 32, None, False),  # groups of 8, no mask
        ("fp16", (333, 200), (333, 200), 4, 64, 0, False),  # a user mask
    ],
)
def test_only_key_staged_up_to_d64_matches_golden(dtype, seq_q, seq_kv, nkv, d, mode, pse):
    # Up to D = 64 only K is staged in Nz order (ForwardParams::kvNz KV_NZ_K_ONLY): the cube
    # converts V's rows itself, at their batch's token offset, into its tiles and its K/V cache.
    kw = make_kwargs(dtype, seq_q=seq_q, seq_kv=seq_kv, n=8, nkv=nkv, d=d, mode=mode)
    if pse:
        rng = np.random.default_rng(7)
        kw["real_shift"] = rng.uniform(-2, 2, (1, 8, max(seq_q), max(seq_kv))).astype(kw["query"].dtype)
    kw["scale_value"] = 0.125
    run_and_judge(kw)
    key, _ = cpu.last_tiling()
    assert key // 1000 % 10 == 1, "K/V staging (the tiling key's K/V Nz digit) not planned"


def test_empty_batches_and_uncovered_tail_rows():
    # Lengths [2, 0, 70, 0] (cumulative [2, 2, 72, 72]); rows past the last length stay zero.
    out, _ = run_and_judge(make_kwargs(seq_q=(2, 0, 70, 0), seq_kv=(3, 5, 90, 4), extra_t=6))
    assert not out["attention_out"][-6:].any() and not out["softmax_sum"][-6:].any()


def test_only_empty_query_batches_write_nothing():
    out, _ = run_and_judge(make_kwargs(seq_q=(0, 0), seq_kv=(3, 5), extra_t=4))
    assert not out["attention_out"].any() and not out["softmax_max"].any()


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
@pytest.mark.parametrize("d", [16, 72, 128, 256])
def test_head_dims_match_golden(dtype, d):
    run_and_judge(make_kwargs(dtype, seq_q=(40, 17), seq_kv=(70, 33), n=2, d=d, mode=3))


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_row_pitch_beyond_16_bits_is_loaded_row_by_row(dtype):
    # N x D = 130 x 512 = 66560 elements between tokens: wider than Nd2Nz's 16-bit source pitch.
    run_and_judge(make_kwargs(dtype, seq_q=(5, 17), seq_kv=(9, 30), n=130, d=512, mode=3))


def test_fp32_group_stride_beyond_16_bits_is_loaded_row_by_row():
    # FLOAT32 tiles take one Nd2Nz per 16-row group; 16 x N x D = 16 x 40 x 128 > 65535 elements
    # between groups is more than its 16-bit matrix stride, so the rows go one by one.
    run_and_judge(make_kwargs("fp32", seq_q=(37, 20), seq_kv=(50, 33), n=40, nkv=8, d=128))


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("mode", [2, 3])
def test_causal_modes_match_golden(dtype, mode):
    run_and_judge(make_kwargs(dtype, seq_q=(150, 40, 64), seq_kv=(150, 200, 30), n=2, nkv=1, d=64, mode=mode))


@pytest.mark.parametrize("mode", [None, 3, 0])
def test_192_row_q_blocks_with_statistics_match_golden(mode):
    # 64 heads give the planner enough units for 192-row q-blocks (Q.K^T in 32-row chunks, the
    # vector cores in 48-row sub-blocks); batches of 300 and 200 rows end in partial q-blocks.
    # Mode 0 reads the user mask (the all-zero tiles skip the mask passes).
    run_and_judge(make_kwargs(seq_q=(300, 200), seq_kv=(320, 200), n=64, nkv=16, d=64, mode=mode))


@pytest.mark.parametrize("seq_q,nkv", [((300, 900, 100, 1200), 4), ((700, 60, 300, 20), 2)])
def test_units_dealt_by_cost_match_golden(seq_q, nkv):
    # Uneven causal lengths: the planner deals the units to the cores by cost (UNITS_TABLE),
    # each core walking its units, not a contiguous range, in ascending order.
    run_and_judge(make_kwargs(seq_q=seq_q, n=4, nkv=nkv, d=64, mode=3))
    assert tiling_carries_unit_table(), "the planner kept contiguous ranges: the table path went untested"


@pytest.mark.parametrize(
    "seq_q,seq_kv,d,mode,attrs",
    [
        ((452, 230, 700), None, 64, 3, {}),  # 224-row q-blocks: 4-, 6- and 28-row short ones first
        ((452, 230, 700), (500, 230, 640), 64, 2, {}),  # left-up: keys beyond the queries
        ((452, 700), (400, 760), 128, 3, {}),  # right-down with Skv != Sq, D = 128
        ((452, 700), None, 64, 4, {"pre_tokens": 300, "next_tokens": 40}),  # a band
    ],
)
def test_short_q_block_first_under_a_causal_band_matches_golden(seq_q, seq_kv, d, mode, attrs):
    # Under a band whose right edge moves with the row each batch's short q-block (Sq % blockQ
    # rows) is its first (UNITS_TAIL_FIRST): every later q-block starts blockQ - short rows before
    # a multiple of blockQ, its diagonal tiles and staircase pieces off the 16-row grid of keys.
    run_and_judge(make_kwargs(seq_q=seq_q, seq_kv=seq_kv, n=4, nkv=2, d=d, mode=mode, **attrs))


@pytest.mark.parametrize("dtype,nkv", [("fp16", 8), ("bf16", 4)])
def test_causal_q_blocks_dealt_by_head_with_one_qp_copy_match_golden(dtype, nkv):
    # Uneven causal lengths at D = 64: dealt by cost, a unit goes to a core already holding its
    # (batch, KV head) where that core is within half the unit's cost of the least loaded one, so
    # a core runs several q-blocks of a head in a row from the K/V cache, which holds 13 tile
    # pairs beside one Q and P copy (PlanVarLenForward).
    run_and_judge(make_kwargs(dtype, seq_q=(100, 1100, 500, 250, 800), n=8, nkv=nkv, d=64, mode=3))
    assert tiling_carries_unit_table(), "the planner kept contiguous ranges: the table path went untested"


@pytest.mark.parametrize("dtype,nkv,mode", [("fp16", 8, None), ("bf16", 2, None), ("fp16", 8, 0)])
def test_head_runs_in_alternating_key_order_match_golden(dtype, nkv, mode):
    # D = 128 without a band, 700 and 1300 tokens (short last key blocks): dealt by cost, a core
    # takes runs of up to three units of one K/V head (equal-cost units regrouped by head), each
    # running the keys in the opposite order of the one before, from the blocks the cube's K/V
    # cache still holds (policies.h PlanKvReuse): every second unit starts with the short block.
    # Mode 0 reads the user mask (all keys visible: no band).
    mask = np.zeros((1300, 1300), np.bool_) if mode == 0 else None
    run_and_judge(make_kwargs(dtype, seq_q=(700, 1300), n=8, nkv=nkv, d=128, mode=mode, mask=mask))
    assert tiling_carries_unit_table(), "the planner kept contiguous ranges: the head runs went untested"


def test_right_down_causal_with_more_queries_than_keys_has_invalid_rows():
    # Mode 3 with Sq > Skv: the first Sq - Skv rows see no key -> out 0, max = fp32 lowest,
    # sum = fp32 max (the official values for invalid rows).
    out, gold = run_and_judge(make_kwargs(seq_q=(50, 20), seq_kv=(30, 20), mode=3))
    assert not out["attention_out"][:20].any()
    assert np.all(out["softmax_max"][:20] == -FLT_MAX) and np.all(out["softmax_sum"][:20] == FLT_MAX)
    np.testing.assert_array_equal(out["softmax_max"][:20], gold["softmax_max"][:20])


@pytest.mark.parametrize("pre,nxt", [(MAX_INT, MAX_INT), (40, 5), (0, 0), (64, -16), (-8, 24)])
def test_mode0_band_and_user_mask_match_golden(pre, nxt):
    rng = np.random.default_rng(3)
    mask = rng.random((160, 170)) < 0.2
    mask[:, :2] = False
    run_and_judge(make_kwargs(seq_q=(96, 160), seq_kv=(170, 100), mode=0, mask=mask, pre_tokens=pre, next_tokens=nxt))


def test_mode1_reads_the_user_mask_only_and_ignores_the_band():
    rng = np.random.default_rng(4)
    mask = rng.random((80, 96)) < 0.4
    mask[:, 0] = False
    run_and_judge(make_kwargs(seq_q=(80, 33), seq_kv=(96, 50), mode=1, mask=mask, pre_tokens=1, next_tokens=0))


@pytest.mark.parametrize("pre,nxt", [(32, 0), (100, 20), (10, -4)])
def test_mode4_right_down_band_matches_golden(pre, nxt):
    run_and_judge(make_kwargs(seq_q=(64, 140), seq_kv=(130, 140), mode=4, pre_tokens=pre, next_tokens=nxt))


def test_mode6_prefix_keys_stay_visible():
    run_and_judge(make_kwargs(seq_q=(64, 100, 40), seq_kv=(100, 100, 20), mode=6, prefix=[70, 30, 5]))


@pytest.mark.parametrize("mode", [7, 8])
def test_modes_7_and_8_put_the_band_on_one_batch(mode):
    # Batch 0 and the last batch are empty: the band goes to the last (7) / first (8)
    # non-empty batch; the others are right-down (7) / left-up (8) causal.
    run_and_judge(make_kwargs(seq_q=(0, 60, 90, 0), seq_kv=(0, 80, 130, 0), mode=mode, pre_tokens=30, next_tokens=10))


def test_without_mask_sparse_mode_and_band_do_not_apply():
    run_and_judge(make_kwargs(seq_q=(64, 30), seq_kv=(64, 90), sparse_mode=3, pre_tokens=0, next_tokens=0))


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("pse_batch", [1, 2])
def test_pse_is_added_before_the_scale(dtype, pse_batch):
    kw = make_kwargs(dtype, seq_q=(48, 70), seq_kv=(80, 90), n=2, d=32, mode=3)
    rng = np.random.default_rng(5)
    kw["real_shift"] = rng.uniform(-2, 2, (pse_batch, 2, 70, 96)).astype(kw["query"].dtype)
    kw["scale_value"] = 0.3
    run_and_judge(kw)


@pytest.mark.parametrize("pse_batch", [1, 2])
def test_pse_with_192_row_q_blocks(pse_batch):
    # 64 heads give 192-row q-blocks: the pse rows of each 48-row sub-block are staged in the P
    # buffer (one sub-block's worth) before the softmax of that sub-block.
    kw = make_kwargs("bf16", seq_q=(230, 150), seq_kv=(240, 150), n=64, nkv=8, d=32, mode=3)
    rng = np.random.default_rng(6)
    kw["real_shift"] = rng.uniform(-2, 2, (pse_batch, 64, 230, 240)).astype(kw["query"].dtype)
    kw["scale_value"] = 0.3
    run_and_judge(kw)


def test_alibi_compressed_pse_of_long_causal_sequences():
    # Sq = Skv = 1100 > 1024 stored rows: the rows above are rebuilt along the diagonal.
    s, n = 1100, 1
    rel = np.arange(s)[None, :] - np.arange(s)[:, None]
    slope = np.array([0.05, 0.11], np.float32)[:n]
    alibi = (-slope[:, None, None] * np.abs(rel)[None]).astype(np.float16)
    kw = make_kwargs(seq_q=(s,), n=n, d=16, mode=2)
    kw["real_shift"] = np.ascontiguousarray(alibi[None, :, -1024:, :])
    run_and_judge(kw)


def drop_bits(seq_q, seq_kv, n, keep_prob, seed=9):
    bits = sum(n * q * k for q, k in zip(seq_q, seq_kv))
    keep = np.random.default_rng(seed).random(bits) < keep_prob
    return np.packbits(keep, bitorder="little")


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("mode,pre,nxt", [(None, MAX_INT, MAX_INT), (4, 50, 3), (3, MAX_INT, MAX_INT)])
def test_dropout_keeps_the_masked_bits_and_rescales(dtype, mode, pre, nxt):
    seq_q, seq_kv = (37, 0, 150), (70, 9, 181)

    def case(seed):
        kw = make_kwargs(
            dtype, seq_q=seq_q, seq_kv=seq_kv, n=2, d=32, mode=mode, pre_tokens=pre, next_tokens=nxt, seed=seed
        )
        kw.update(drop_mask=drop_bits(seq_q, seq_kv, 2, 0.8, seed=9 + seed), keep_prob=0.8)
        return kw

    out, gold = run_and_judge(case(0), reseed=case)
    # the statistics are those of the plain softmax (dropout acts on P after the row sums)
    np.testing.assert_allclose(out["softmax_sum"], gold["softmax_sum"], rtol=1e-4)


@pytest.mark.parametrize("mode", [0, 3])
def test_dropout_and_mask_with_192_row_q_blocks(mode):
    # 64 heads: 192-row q-blocks, two 48-row sub-blocks per vector core; the keep bits and the
    # mask rows share one UB buffer, which the next sub-block's mask load may only take after
    # this sub-block's dropout pass. Batch 0 ends inside its first q-block.
    seq_q, seq_kv = (150, 260), (200, 260)

    def case(seed):
        kw = make_kwargs("fp16", seq_q=seq_q, seq_kv=seq_kv, n=64, nkv=16, d=64, mode=mode, seed=seed)
        kw.update(drop_mask=drop_bits(seq_q, seq_kv, 64, 0.8, seed=9 + seed), keep_prob=0.8)
        return kw

    run_and_judge(case(0), reseed=case)


def test_keep_prob_below_one_without_a_drop_mask_drops_nothing():
    run_and_judge(make_kwargs(seq_q=(20, 30), seq_kv=(40, 30), keep_prob=0.5, inner_precise=2))


def test_keep_prob_one_ignores_the_drop_mask():
    kw = make_kwargs(seq_q=(20, 30), seq_kv=(40, 30))
    kw.update(drop_mask=np.zeros(1000, np.uint8), keep_prob=1.0)
    run_and_judge(kw)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("mode,pre,nxt", [(2, MAX_INT, MAX_INT), (3, MAX_INT, MAX_INT), (4, 300, 20), (0, 500, 100)])
def test_large_varlen_batches_match_golden(dtype, mode, pre, nxt):
    seq_q, seq_kv = (2048, 700, 1, 1300), (2048, 900, 64, 1300)
    kw = make_kwargs(dtype, seq_q=seq_q, seq_kv=seq_kv, n=4, nkv=2, d=128, mode=mode, pre_tokens=pre, next_tokens=nxt)
    kw.update(drop_mask=drop_bits(seq_q, seq_kv, 4, 0.9), keep_prob=0.9)
    run_and_judge(kw)


@pytest.mark.parametrize("dtype,mode", [("fp16", 2), ("bf16", 3), ("fp16", 4)])
def test_diagonal_tiles_of_the_sparse_modes_match_golden(dtype, mode):
    # D = 128 (lazy P.V), odd lengths: the diagonal tiles hand over only the P of their band.
    extra = dict(pre_tokens=100, next_tokens=21) if mode == 4 else {}
    run_and_judge(make_kwargs(dtype, seq_q=(700, 333), seq_kv=(700, 401), n=8, d=128, mode=mode, **extra))


@pytest.mark.parametrize(
    "dtype,seq_q,seq_kv,n,nkv,d,mode",
    [
        ("fp16", (480, 480, 480), (480, 480, 470), 32, 32, 128, None),  # V only, 26 zero rows at the end
        ("bf16", (300, 100, 250), (160, 96, 333), 16, 8, 128, 3),  # both, groups of 2, causal
        ("fp16", (480, 480, 480, 480), (480, 480, 480, 461), 24, 8, 64, None),  # K only at D = 64
    ],
)
def test_own_staging_per_batch_matches_golden(dtype, seq_q, seq_kv, n, nkv, d, mode):
    # K/V staged per core over the TND token axis (ForwardParams::kvNzOwnPerBatch): a region is a
    # (batch, KV head)'s rows of the head's staged matrix, every core's first before the barrier,
    # the others by the core's own vector cores (every batch but the last a multiple of 16 keys).
    # A region staged with the wrong rows, too late or only in part reads the workspace's stale
    # rows: errors far past the precision standard.
    run_and_judge(make_kwargs(dtype, seq_q=seq_q, seq_kv=seq_kv, n=n, nkv=nkv, d=d, mode=mode))


def test_final_sums_in_fp16_only_where_they_fit():
    # As the PFA test of the name: standard-normal inputs take fp16 final sums (every unit's, V
    # staged whole before the barrier in this plan), V around 1000 keeps them fp32 (an fp16 sum
    # there is inf) and the outputs still match.
    seq, n, d = (1024, 2048), 4, 128
    kw = make_kwargs(seq_q=seq, n=n, d=d)
    rng = standard_normal_qkv(kw, 1)
    normal = judged_l2_writes(run_and_judge, kw)
    kw["value"] = large_v(rng, kw["value"].shape)
    large = judged_l2_writes(run_and_judge, kw)
    assert large - normal == sum(seq) * n * d * 2  # every unit's rows, 2 bytes less per element


def test_final_sums_in_fp16_from_the_v_pass_at_d64():
    # As the PFA test of the name: D = 64 with three q-blocks per head over the batches, nothing
    # staged, max|V| from the vector cores' read-only pass over V in the main loop; the units
    # that end after their meeting take fp16 final sums with standard-normal inputs, V around
    # 1000 keeps every sum fp32 (inf in fp16: with the guard removed this fails) and so does one
    # large row at the end of V's token axis.
    seq_q, seq_kv, n, d = (150, 300), (1024, 1024), 24, 64
    kw = make_kwargs(seq_q=seq_q, seq_kv=seq_kv, n=n, d=d)
    rng = standard_normal_qkv(kw, 3, query_scale=0.05)
    assert_v_pass_sums(run_and_judge, kw, rng, sum(seq_q) * n * d)


def test_final_sums_in_fp16_from_the_v_pass_with_k_staged_at_d64():
    # D = 64 under a causal band with K alone staged before the barrier (the scale on K, no
    # per-core staging: the batches are not multiples of 16 keys): max|V| comes from the vector
    # cores' read-only pass over V in the main loop, its meeting on the staging's flag id, which
    # that plan no longer uses past the barrier. The units that end after the meeting take fp16
    # final sums with standard-normal inputs; V around 1000 keeps every sum fp32 (inf in fp16),
    # and so does one large row at the end of V's token axis.
    seq, n, d = (100, 1500, 700), 8, 64
    kw = make_kwargs(seq_q=seq, n=n, d=d, mode=3)
    rng = standard_normal_qkv(kw, 5, query_scale=0.05)
    assert_v_pass_sums(run_and_judge, kw, rng, sum(seq) * n * d)
