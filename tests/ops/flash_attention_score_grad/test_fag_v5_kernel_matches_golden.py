"""The FlashAttentionUnpaddingScoreGradV5 kernel (CPU target) against the NumPy golden:
dq/dk/dv for TND batches of unequal lengths, fp16/bf16/fp32, GQA, head dims, sparse modes 0-4/7/8
with their generated or user masks, both softmax statistics layouts."""

import numpy as np
import pytest
from fag_helpers import DTYPES, make_kwargs, run_and_judge


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_varlen_batches_gqa_match_golden(dtype):
    # 3 batches with ragged lengths (one kv block edge crossed), 4 query heads on 2 kv heads.
    run_and_judge(make_kwargs(dtype, q_lens=(37, 130, 5), kv_lens=(50, 140, 9), n=4, nkv=2, d=64))


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
@pytest.mark.parametrize("d", [16, 40, 128, 200, 768])
def test_head_dims_match_golden(dtype, d):
    # fp32 at D = 768: key blocks of 64 (128 do not fit L1) and D-term rows longer than a block
    run_and_judge(make_kwargs(dtype, q_lens=(48, 20), kv_lens=(33, 70), n=2, d=d, seed=d))


def test_unpipelined_cube_with_several_steps_per_core():
    # D = 512: L1 holds one set of step tiles (pipelined 0), so the cube issues S/dP of a step
    # only when the previous step's gradients are out; 8 query blocks x 4 kv blocks x 4 heads,
    # more steps than cores.
    run_and_judge(make_kwargs(q_lens=(512,), kv_lens=(512,), n=4, d=512, seed=5))


@pytest.mark.parametrize("d,n,mode", [(128, 192, 0), (128, 192, 3), (256, 128, 3)])
def test_early_steps_issued_during_the_row_term_pass(d, n, mode):
    # Many query heads on 16 kv heads over four 128-token batches: the row-term pass before the
    # first barrier outlasts the cube's staging of several steps, so the cube issues the S/dP
    # of each core's first steps (5 at D = 128 with the dK/dV sums in L0C, 7 at D = 256
    # without) into a slot each before it; each core has more steps than slots after them.
    lens = (128,) * 4
    mask = _causal(2048).astype(bool) if mode else None
    run_and_judge(make_kwargs(q_lens=lens, kv_lens=lens, n=n, nkv=16, d=d, mask=mask, sparse_mode=mode, seed=d))


def test_many_query_blocks_and_kv_blocks():
    # Sq 300 > blockQ and Skv 400 > blockKv: dK/dV sum over several query blocks, dQ over
    # several kv blocks (atomic adds from different units).
    run_and_judge(make_kwargs(q_lens=(300,), kv_lens=(400,), n=2, nkv=1, d=64))


def test_dq_groups_cast_in_the_main_loop():
    # 96 query heads on 48 kv heads, one kv block per batch: each core holds several whole
    # (batch, kv head) groups and casts their dQ in its main loop; the groups a core boundary
    # cuts are cast after the final barrier by all vector cores.
    run_and_judge(make_kwargs(q_lens=(128, 64, 128), kv_lens=(96, 40, 90), n=96, nkv=48, d=64, seed=11))


def test_ntd_softmax_statistics_layout():
    run_and_judge(make_kwargs(q_lens=(40, 24), kv_lens=(40, 56), n=3, d=32, softmax_in_layout=""))


def _causal(s):
    return np.triu(np.ones((s, s), np.uint8), 1)


@pytest.mark.parametrize("mode", [2, 3])
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_causal_sparse_modes(mode, dtype):
    # Sq != Skv per batch so left-up (2) and right-down (3) causal differ.
    kw = make_kwargs(
        dtype, q_lens=(150, 40), kv_lens=(200, 40), n=4, nkv=1, d=64, mask=_causal(2048).astype(bool), sparse_mode=mode
    )
    run_and_judge(kw)


def test_sparse_mode_0_user_mask_and_band():
    rng = np.random.default_rng(3)
    mask = rng.random((2, 1, 96, 160)) < 0.2
    mask[..., 0] = False
    run_and_judge(
        make_kwargs(
            q_lens=(96, 64), kv_lens=(160, 100), n=2, d=64, mask=mask, sparse_mode=0, pre_tokens=40, next_tokens=30
        )
    )


def test_sparse_mode_1_user_mask_per_head():
    rng = np.random.default_rng(4)
    mask = rng.random((2, 3, 70, 90)) < 0.3
    mask[..., 0] = False
    run_and_judge(make_kwargs(q_lens=(70, 33), kv_lens=(90, 45), n=3, d=32, mask=mask, sparse_mode=1))


def test_sparse_mode_4_right_down_band():
    run_and_judge(
        make_kwargs(
            q_lens=(100, 60),
            kv_lens=(180, 60),
            n=2,
            d=64,
            mask=_causal(2048).astype(bool),
            sparse_mode=4,
            pre_tokens=50,
            next_tokens=10,
        )
    )


@pytest.mark.parametrize("mode", [7, 8])
def test_sparse_modes_7_8_band_batch(mode):
    run_and_judge(
        make_kwargs(
            q_lens=(64, 80, 48),
            kv_lens=(64, 130, 48),
            n=2,
            d=32,
            mask=_causal(2048).astype(bool),
            sparse_mode=mode,
            pre_tokens=30,
            next_tokens=5,
        )
    )


def test_mask_modes_ignored_without_mask():
    # Without atten_mask the sparse mode does not apply: full attention (docs/golden.md).
    run_and_judge(make_kwargs(q_lens=(50,), kv_lens=(70,), n=2, d=32, sparse_mode=3))


def test_empty_query_batch_and_trailing_rows_give_zero():
    kw = make_kwargs(q_lens=(30, 0, 20), kv_lens=(40, 25, 30), n=2, d=32)
    out, gold = run_and_judge(kw)
    # keys of the batch without query rows get zero dK/dV
    assert np.all(out["dk"][40:65].astype(np.float32) == 0) and np.all(out["dv"][40:65].astype(np.float32) == 0)


def test_wrong_kernel_would_fail():
    # The judgement is sharp: a gradient scaled by 1.01 does not pass.
    from fakit import compare, golden

    kw = make_kwargs(q_lens=(64,), n=2, d=64)
    gold = golden.flash_attention_unpadding_score_grad_v5(**kw)
    bench = golden.benchmark("flash_attention_unpadding_score_grad_v5", **kw)
    bad = (gold["dq"] * 1.01).astype(kw["query"].dtype)
    rep = compare.compare(
        "flash_attention_unpadding_score_grad_v5", {"dq": bad}, {"dq": gold["dq"]}, {"dq": bench["dq"]}
    )
    assert not rep.passed


@pytest.mark.parametrize("dtype,stats", [("fp16", "same_as_input"), ("bf16", "")])
def test_sink_gradients_match_golden(dtype, stats):
    sink = np.array([0.5, -1.0, 2.0], np.float32)
    kw = make_kwargs(
        dtype,
        q_lens=(40, 70),
        kv_lens=(60, 70),
        n=3,
        d=32,
        sink=sink,
        mask=_causal(2048).astype(bool),
        sparse_mode=3,
        softmax_in_layout=stats,
    )
    out, gold = run_and_judge(kw)
    assert out["dsink"].dtype == np.float32 and out["dsink"].shape == (3,)
    np.testing.assert_allclose(out["dsink"], gold["dsink"], rtol=1e-3, atol=1e-4)
    assert np.abs(gold["dsink"]).max() > 1e-2  # the check has something to see


def test_sparse_mode_6_prefix():
    # Keys [0, prefix) stay visible to every row on top of the right-down causal band.
    run_and_judge(
        make_kwargs(
            q_lens=(60, 100),
            kv_lens=(200, 100),
            n=2,
            d=32,
            mask=np.triu(np.ones((3072, 2048), bool), 1),
            sparse_mode=6,
            prefix=[150, 30],
        )
    )


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_pse_type_1_matches_golden(dtype):
    # pse [B, N, Sq, Skv] added before the scale, bottom-right aligned to each batch.
    rng = np.random.default_rng(11)
    pse = rng.uniform(-1, 1, (2, 2, 72, 150)).astype(DTYPES[dtype])
    run_and_judge(make_kwargs(dtype, q_lens=(72, 40), kv_lens=(150, 90), n=2, d=64, pse_shift=pse, pse_type=1))


def test_pse_alibi_compressed_rows():
    # Sq 1100 > 1024 stored rows (alibi compression, causal, Sq == Skv): rows above the stored
    # ones read the bias along their diagonal.
    s = 1100
    i = np.arange(s)
    full = -np.abs(i[None, :] - i[:, None]).astype(np.float32) * 0.05
    pse = np.ascontiguousarray(full[-1024:][None, None]).astype(np.float16)
    run_and_judge(
        make_kwargs(
            "fp16", q_lens=(s,), n=1, d=16, pse_shift=pse, pse_type=1, mask=_causal(2048).astype(bool), sparse_mode=3
        )
    )


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
@pytest.mark.parametrize("keep_prob", [0.9, 0.5])
def test_dropout_matches_golden(keep_prob, dtype):
    rng = np.random.default_rng(5)
    q_lens, kv_lens, n = (50, 33), (70, 140), 2
    bits = sum(n * q * k for q, k in zip(q_lens, kv_lens))
    keep = (rng.random(bits) < keep_prob).astype(np.uint8)
    drop = np.packbits(keep, bitorder="little")
    run_and_judge(
        make_kwargs(
            dtype,
            q_lens=q_lens,
            kv_lens=kv_lens,
            n=n,
            d=32,
            drop_mask=drop,
            keep_prob=keep_prob,
            mask=_causal(2048).astype(bool),
            sparse_mode=3,
        )
    )


@pytest.mark.parametrize("dr,mode", [(64, 0), (32, 3)])
def test_rope_gradients_match_golden(dr, mode):
    # S = scale * (Q.K^T + Q_rope.K_rope^T); dq_rope / dk_rope from the same dS (bf16, spec).
    from fakit import compare, golden

    rng = np.random.default_rng(dr)
    q_lens, kv_lens, n, nkv = (70, 40), (90, 140), 4, 2
    qr = rng.uniform(-1, 1, (sum(q_lens), n, dr)).astype(DTYPES["bf16"])
    kr = rng.uniform(-1, 1, (sum(kv_lens), nkv, dr)).astype(DTYPES["bf16"])
    mask = None if mode == 0 else _causal(2048).astype(bool)
    kw = make_kwargs(
        "bf16",
        q_lens=q_lens,
        kv_lens=kv_lens,
        n=n,
        nkv=nkv,
        d=64,
        query_rope=qr,
        key_rope=kr,
        mask=mask,
        sparse_mode=mode,
    )
    out, gold = run_and_judge(kw)
    bench = golden.benchmark("flash_attention_unpadding_score_grad_v5", **kw)
    names = ("dq_rope", "dk_rope")
    rep = compare.compare(
        "flash_attention_unpadding_score_grad_v5",
        {k: out[k] for k in names},
        {k: gold[k] for k in names},
        {k: bench[k] for k in names},
    )
    assert rep.passed, rep.summary()


def test_pse_type_0_multiply_then_add():
    rng = np.random.default_rng(12)
    pse = rng.uniform(-2, 2, (1, 2, 64, 96)).astype(np.float16)
    run_and_judge(make_kwargs(q_lens=(64, 30), kv_lens=(96, 50), n=2, d=32, pse_shift=pse, pse_type=0))


@pytest.mark.parametrize(
    "pse_type,slopes,starts",
    [
        (2, [0.5, 0.25], None),
        (3, [[0.5, 0.25], [0.125, 1.0]], ([3, -2], [0, 5])),
        (2, [[0.3, 0.1], [0.2, 0.05]], ([4], [1])),
    ],
)
def test_generated_alibi_pse_types_2_3(pse_type, slopes, starts):
    qs, ks = starts if starts else (None, None)
    run_and_judge(
        make_kwargs(
            q_lens=(70, 40),
            kv_lens=(150, 40),
            n=2,
            d=32,
            pse_shift=np.asarray(slopes, np.float32),
            pse_type=pse_type,
            q_start_idx=qs,
            kv_start_idx=ks,
            mask=_causal(2048).astype(bool),
            sparse_mode=3,
        )
    )


def test_single_query_rows_and_tiny_batches():
    # 1-row query blocks (the cube's GEMV guard), a 2-key batch, 8 query heads on one kv head.
    run_and_judge(make_kwargs("bf16", q_lens=(1, 2, 1, 40), kv_lens=(300, 2, 17, 45), n=8, nkv=1, d=64))


@pytest.mark.slow
@pytest.mark.parametrize("mode", [0, 2, 3])
def test_long_causal_sequences(mode):
    s = 2048
    kw = make_kwargs(
        "bf16",
        q_lens=(s, 700),
        kv_lens=(s, 900),
        n=4,
        nkv=2,
        d=128,
        mask=_causal(s).astype(bool),
        sparse_mode=mode,
        pre_tokens=2147483647,
        next_tokens=0,
    )
    run_and_judge(kw)


def _without_forward_outputs(kw):
    for name in ("softmax_max", "softmax_sum", "attention_in"):
        kw[name] = None
    return kw


@pytest.mark.parametrize("dtype,mode", [("fp16", 0), ("bf16", 3), ("fp32", 3)])
def test_forward_outputs_recomputed_when_absent(dtype, mode):
    # The kernel first runs the varlen forward core into its workspace (golden: the TND forward).
    mask = None if mode == 0 else _causal(2048).astype(bool)
    run_and_judge(
        _without_forward_outputs(
            make_kwargs(dtype, q_lens=(130, 40), kv_lens=(150, 90), n=4, nkv=2, d=64, mask=mask, sparse_mode=mode)
        )
    )


def test_recompute_with_pse_dropout_and_4d_mask():
    rng = np.random.default_rng(21)
    q_lens, kv_lens, n = (48, 30), (64, 50), 2
    bits = sum(n * q * k for q, k in zip(q_lens, kv_lens))
    drop = np.packbits((rng.random(bits) < 0.8).astype(np.uint8), bitorder="little")
    mask = rng.random((2, n, 48, 64)) < 0.2
    mask[..., 0] = False
    pse = rng.uniform(-1, 1, (2, n, 48, 64)).astype(np.float16)
    run_and_judge(
        _without_forward_outputs(
            make_kwargs(
                q_lens=q_lens,
                kv_lens=kv_lens,
                n=n,
                d=32,
                mask=mask,
                sparse_mode=1,
                pse_shift=pse,
                drop_mask=drop,
                keep_prob=0.8,
            )
        )
    )


# D = 128, 16-bit: dK/dV sum in L0C over a unit, so key blocks are 96 keys while the vector
# cores work on 128-column UB tiles (32 padding columns masked like a short block's) and copy
# rows to and from the 96-key slots with strides. Several kv blocks (96, 96, 96, 12 keys),
# several query blocks, GQA, and a batch boundary inside a kv block's rows.
@pytest.mark.parametrize("dtype,mode", [("fp16", 0), ("bf16", 3), ("fp16", 2)])
def test_d128_key_blocks_of_96_with_padded_vector_tiles(dtype, mode):
    mask = None if mode == 0 else _causal(2048).astype(bool)
    run_and_judge(
        make_kwargs(dtype, q_lens=(300, 77), kv_lens=(300, 100), n=4, nkv=2, d=128, seed=3, mask=mask, sparse_mode=mode)
    )


def test_d128_pse_and_dropout_on_96_key_blocks():
    # the pse rows and dropout bits are read per key block: 96-key offsets, 128-column tiles
    rng = np.random.default_rng(21)
    q_lens, kv_lens, n = (150, 60), (200, 97), 2
    pse = rng.uniform(-1, 1, (2, n, 150, 200)).astype(np.float16)
    bits = sum(n * q * k for q, k in zip(q_lens, kv_lens))
    drop = np.packbits((rng.random(bits) < 0.8).astype(np.uint8), bitorder="little")
    run_and_judge(
        make_kwargs(
            "fp16", q_lens=q_lens, kv_lens=kv_lens, n=n, d=128, pse_shift=pse, pse_type=1, drop_mask=drop, keep_prob=0.8
        )
    )


def test_d128_generated_alibi_on_96_key_blocks():
    run_and_judge(
        make_kwargs(
            q_lens=(200, 40),
            kv_lens=(230, 40),
            n=2,
            d=128,
            pse_shift=np.asarray([0.5, 0.25], np.float32),
            pse_type=3,
            mask=_causal(2048).astype(bool),
            sparse_mode=3,
        )
    )


def test_d128_user_mask_on_96_key_blocks():
    rng = np.random.default_rng(8)
    mask = rng.random((2048, 2048)) < 0.3
    run_and_judge(
        make_kwargs(
            q_lens=(130, 70),
            kv_lens=(250, 100),
            n=2,
            d=128,
            mask=mask,
            sparse_mode=0,
            pre_tokens=2147483647,
            next_tokens=2147483647,
        )
    )


@pytest.mark.parametrize("dtype,d", [("fp16", 128), ("bf16", 64), ("fp32", 48), ("fp16", 256)])
def test_one_step_units_rotate_the_staged_tiles(dtype, d):
    # 20 query rows, one head per kv head: every kv block is a one-step unit, so the steps in
    # flight (issued ahead, and staged a step early where L1 allows) each hold another unit's
    # K and V copy in L1
    run_and_judge(make_kwargs(dtype, q_lens=(20, 3), kv_lens=(700, 260), n=2, nkv=2, d=d, seed=d))


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_units_cut_between_cores(dtype):
    # Causal, 4 heads, 768 rows, D = 128: one query slice per kv block, and the planner cuts 16
    # units between two cores (their first kv blocks see every row); both cores add their part
    # of the unit's dK/dV sums (zeroed first), every other unit writes its rows once.
    run_and_judge(make_kwargs(dtype, q_lens=(768,), n=4, d=128, seed=9, mask=_causal(2048).astype(bool), sparse_mode=3))


def test_units_cut_between_cores_beside_dq_groups_cast_in_the_loop():
    # Causal, 64 heads, 512 rows: ranges start inside units (both cores add a cut unit's dK/dV)
    # and most cores cast the dQ of the (batch, kv head) groups they hold alone in their loop,
    # the groups a boundary cuts after the final barrier.
    run_and_judge(
        make_kwargs("fp16", q_lens=(512,), n=64, d=128, seed=11, mask=_causal(2048).astype(bool), sparse_mode=3)
    )


def test_first_rows_of_a_cut_group_cast_by_the_earlier_core():
    # Causal, 40 heads, 768 rows: a core boundary cuts some (batch, kv head) groups inside
    # their kv blocks; the earlier core casts the group's rows below those the later core's kv
    # blocks see in its loop, as they become final, and the rest are cast after the barrier.
    run_and_judge(
        make_kwargs("fp16", q_lens=(768,), n=40, d=128, seed=13, mask=_causal(2048).astype(bool), sparse_mode=3)
    )
