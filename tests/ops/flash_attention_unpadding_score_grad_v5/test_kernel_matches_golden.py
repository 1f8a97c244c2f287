"""The FlashAttentionUnpaddingScoreGradV5 kernel (CPU target) against the NumPy golden:
dq/dk/dv for TND batches of unequal lengths, fp16/bf16, GQA, head dims, sparse modes 0-4/7/8
with their generated or user masks, both softmax statistics layouts."""
import numpy as np
import pytest

from fag_helpers import MAX_INT, make_kwargs, run_and_judge


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_varlen_batches_gqa_match_golden(dtype):
    # 3 batches with ragged lengths (one kv block edge crossed), 4 query heads on 2 kv heads.
    run_and_judge(make_kwargs(dtype, q_lens=(37, 130, 5), kv_lens=(50, 140, 9), n=4, nkv=2, d=64))


@pytest.mark.parametrize("d", [16, 40, 128, 200])
def test_head_dims_match_golden(d):
    run_and_judge(make_kwargs(q_lens=(48, 20), kv_lens=(33, 70), n=2, d=d, seed=d))


def test_many_query_blocks_and_kv_blocks():
    # Sq 300 > blockQ and Skv 400 > blockKv: dK/dV sum over several query blocks, dQ over
    # several kv blocks (atomic adds from different units).
    run_and_judge(make_kwargs(q_lens=(300,), kv_lens=(400,), n=2, nkv=1, d=64))


def test_ntd_softmax_statistics_layout():
    run_and_judge(make_kwargs(q_lens=(40, 24), kv_lens=(40, 56), n=3, d=32, softmax_in_layout=""))


def _causal(s):
    return np.triu(np.ones((s, s), np.uint8), 1)


@pytest.mark.parametrize("mode", [2, 3])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_causal_sparse_modes(mode, dtype):
    # Sq != Skv per batch so left-up (2) and right-down (3) causal differ.
    kw = make_kwargs(dtype, q_lens=(150, 40), kv_lens=(200, 40), n=4, nkv=1, d=64,
                     mask=_causal(2048).astype(bool), sparse_mode=mode)
    run_and_judge(kw)


def test_sparse_mode_0_user_mask_and_band():
    rng = np.random.default_rng(3)
    mask = (rng.random((2, 1, 96, 160)) < 0.2)
    mask[..., 0] = False
    run_and_judge(make_kwargs(q_lens=(96, 64), kv_lens=(160, 100), n=2, d=64, mask=mask,
                              sparse_mode=0, pre_tokens=40, next_tokens=30))


def test_sparse_mode_1_user_mask_per_head():
    rng = np.random.default_rng(4)
    mask = rng.random((2, 3, 70, 90)) < 0.3
    mask[..., 0] = False
    run_and_judge(make_kwargs(q_lens=(70, 33), kv_lens=(90, 45), n=3, d=32, mask=mask, sparse_mode=1))


def test_sparse_mode_4_right_down_band():
    run_and_judge(make_kwargs(q_lens=(100, 60), kv_lens=(180, 60), n=2, d=64,
                              mask=_causal(2048).astype(bool), sparse_mode=4, pre_tokens=50,
                              next_tokens=10))


@pytest.mark.parametrize("mode", [7, 8])
def test_sparse_modes_7_8_band_batch(mode):
    run_and_judge(make_kwargs(q_lens=(64, 80, 48), kv_lens=(64, 130, 48), n=2, d=32,
                              mask=_causal(2048).astype(bool), sparse_mode=mode, pre_tokens=30,
                              next_tokens=5))


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
    rep = compare.compare("flash_attention_unpadding_score_grad_v5", {"dq": bad}, {"dq": gold["dq"]},
                          {"dq": bench["dq"]})
    assert not rep.passed


@pytest.mark.parametrize("dtype,stats", [("fp16", "same_as_input"), ("bf16", "")])
def test_sink_gradients_match_golden(dtype, stats):
    from fakit import compare, golden
    import fakit
    sink = np.array([0.5, -1.0, 2.0], np.float32)
    kw = make_kwargs(dtype, q_lens=(40, 70), kv_lens=(60, 70), n=3, d=32, sink=sink,
                     mask=_causal(2048).astype(bool), sparse_mode=3, softmax_in_layout=stats)
    out, gold = run_and_judge(kw)
    assert out["dsink"].dtype == np.float32 and out["dsink"].shape == (3,)
    np.testing.assert_allclose(out["dsink"], gold["dsink"], rtol=1e-3, atol=1e-4)
    assert np.abs(gold["dsink"]).max() > 1e-2   # the check has something to see
