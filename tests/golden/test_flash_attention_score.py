"""fakit.golden.flash_attention_var_len_score / flash_attention_tnd_forward against the
independent dense torch reference."""

import numpy as np
import pytest
from conftest import PREFIX_3072, TRIL_2048, assert_close, randn, random_drop_mask, tnd_inputs
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_dense_ref import tnd_reference

from fakit import golden
from fakit.golden import _blockwise

FMIN, FMAX = np.finfo(np.float32).min, np.finfo(np.float32).max


def compare_forward(res, ref, t_valid=None):
    out, mx, sm = res["attention_out"], res["softmax_max"], res["softmax_sum"]
    assert_close(out, ref["out"], what="attention_out")
    assert np.all(mx == mx[..., :1]) and np.all(sm == sm[..., :1]), "stats not replicated x8"
    assert_close(mx[..., 0], ref["max"], rtol=1e-5, atol=1e-5, what="softmax_max")
    assert_close(sm[..., 0], ref["sum"], rtol=1e-4, atol=1e-5, what="softmax_sum")


# lengths with a zero-length batch (its cumulative value repeats the previous one)
Q_LENS = [7, 0, 12, 5]
KV_LENS = [9, 0, 12, 14]


@pytest.mark.parametrize(
    "mode,pre,nxt",
    [
        (0, 2147483647, 2147483647),
        (0, 4, 1),
        (0, 3, -2),
        (0, -1, 5),
        (1, 0, 0),
        (2, 0, 0),
        (3, 0, 0),
        (4, 5, 1),
        (4, 9, -3),
        (6, 0, 0),
        (7, 20, -2),
        (8, 20, 3),
    ],
)
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_sparse_modes_match_reference(rng, mode, pre, nxt, dtype):
    n, nkv, d = 4, 2, 16
    q, k, v, cq, ck = tnd_inputs(rng, Q_LENS, KV_LENS, n, nkv, d, dtype)
    prefix = [3, 0, 12, 10] if mode == 6 else None
    if mode in (0, 1):
        mask = (rng.random((12, 14)) < 0.2).astype(np.uint8)  # [maxSq, maxSkv]
    else:
        mask = PREFIX_3072 if mode == 6 else TRIL_2048
    kw = dict(
        actual_seq_qlen=cq,
        actual_seq_kvlen=ck,
        head_num=n,
        scale_value=0.25,
        atten_mask=mask,
        sparse_mode=mode,
        pre_tokens=pre,
        next_tokens=nxt,
        prefix=prefix,
    )
    res = golden.flash_attention_var_len_score(q, k, v, **kw)
    ref = tnd_reference(q, k, v, **kw)
    compare_forward(res, ref)
    assert res["attention_out"].shape == (sum(Q_LENS), n, d)
    assert res["softmax_max"].shape == (sum(Q_LENS), n, 8)


@pytest.mark.parametrize(
    "mode,pre,nxt,q_lens,kv_lens",
    [
        (3, 0, 0, [9, 4], [5, 4]),  # Sq > Skv right-down causal: top rows see nothing
        (0, 2147483647, -3, [6], [6]),  # negative next tokens
        (4, -2, 2147483647, [6], [8]),  # negative pre tokens
        (6, 0, 0, [8], [5]),  # prefix 0 with Sq > Skv
    ],
)
def test_invalid_rows_output_zero_and_official_stats(rng, mode, pre, nxt, q_lens, kv_lens):
    q, k, v, cq, ck = tnd_inputs(rng, q_lens, kv_lens, 2, 2, 16, "fp16")
    kw = dict(
        actual_seq_qlen=cq,
        actual_seq_kvlen=ck,
        head_num=2,
        scale_value=0.3,
        atten_mask=PREFIX_3072 if mode == 6 else TRIL_2048,
        sparse_mode=mode,
        pre_tokens=pre,
        next_tokens=nxt,
        prefix=[0] * len(q_lens),
        inner_precise=2,
    )
    res = golden.flash_attention_var_len_score(q, k, v, **kw)
    ref = tnd_reference(q, k, v, **kw)
    invalid = ref["max"] == FMIN
    assert invalid.any(), "the case must contain invalid rows"
    for key in res:
        assert not np.isnan(res[key]).any()
    assert np.all(res["attention_out"][invalid] == 0)
    assert np.all(res["softmax_max"][invalid] == FMIN)
    assert np.all(res["softmax_sum"][invalid] == FMAX)
    compare_forward(res, ref)


def test_without_mask_sparse_mode_and_tokens_do_not_apply(rng):
    q, k, v, cq, ck = tnd_inputs(rng, [5, 8], [7, 8], 2, 1, 16, "bf16")
    base = dict(actual_seq_qlen=cq, actual_seq_kvlen=ck, head_num=2, scale_value=0.3)
    full = golden.flash_attention_var_len_score(q, k, v, **base)
    moded = golden.flash_attention_var_len_score(q, k, v, sparse_mode=3, pre_tokens=1, next_tokens=0, **base)
    for key in full:
        np.testing.assert_array_equal(full[key], moded[key])
    compare_forward(full, tnd_reference(q, k, v, **base))


def test_real_shift_added_before_scale_bottom_right(rng):
    q_lens, kv_lens, n = [6, 9], [10, 9], 2
    q, k, v, cq, ck = tnd_inputs(rng, q_lens, kv_lens, n, n, 16, "fp16")
    pse = randn(rng, (2, n, 9, 10), "fp16")  # [B, N, maxSq, maxSkv]
    full = [pse[b, :, 9 - q_lens[b] :, 10 - kv_lens[b] :].astype(np.float64) for b in range(2)]
    import torch

    full = [torch.from_numpy(x) for x in full]
    kw = dict(actual_seq_qlen=cq, actual_seq_kvlen=ck, head_num=n, scale_value=0.3)
    res = golden.flash_attention_var_len_score(q, k, v, real_shift=pse, **kw)
    ref = tnd_reference(q, k, v, full_pse=full, pse_type=1, **kw)
    compare_forward(res, ref)


@pytest.mark.parametrize("mode", [2, 3])
@pytest.mark.parametrize("shared", [True, False])
def test_alibi_compressed_last_1024_rows_equal_full_pse(rng, mode, shared):
    s, n = 1100, 1
    q, k, v, cq, ck = tnd_inputs(rng, [s], [s], n, n, 8, "fp16")
    i = np.arange(s)[:, None]
    j = np.arange(s)[None, :]
    full = (-np.abs(j - i) * 0.0625).astype(np.float16)[None, None]  # a Toeplitz alibi
    compressed = full[:, :, -1024:]
    if not shared:
        compressed = np.concatenate([compressed], 0)  # [B=1, N, 1024, S]
    import torch

    kw = dict(
        actual_seq_qlen=cq, actual_seq_kvlen=ck, head_num=n, scale_value=0.3, atten_mask=TRIL_2048, sparse_mode=mode
    )
    res = golden.flash_attention_var_len_score(q, k, v, real_shift=compressed, **kw)
    ref = tnd_reference(q, k, v, full_pse=[torch.from_numpy(full[0].astype(np.float64))], pse_type=1, **kw)
    compare_forward(res, ref)


def test_dropout_bits_lsb_first_dense_across_rows_and_batches(rng):
    q_lens, kv_lens, n = [5, 0, 7], [13, 0, 20], 2  # rows of 13 keys start inside bytes
    q, k, v, cq, ck = tnd_inputs(rng, q_lens, kv_lens, n, 1, 16, "fp16")
    drop = random_drop_mask(rng, n, q_lens, kv_lens)
    kw = dict(
        actual_seq_qlen=cq,
        actual_seq_kvlen=ck,
        head_num=n,
        scale_value=0.3,
        keep_prob=0.7,
        drop_mask=drop,
        atten_mask=TRIL_2048,
        sparse_mode=3,
    )
    res = golden.flash_attention_var_len_score(q, k, v, **kw)
    compare_forward(res, tnd_reference(q, k, v, **kw))
    no_drop = golden.flash_attention_var_len_score(q, k, v, **{**kw, "drop_mask": None})
    assert not np.allclose(res["attention_out"], no_drop["attention_out"])
    # the statistics are those of the softmax before dropout
    np.testing.assert_array_equal(res["softmax_sum"], no_drop["softmax_sum"])


def test_dropout_single_kept_bit_selects_first_key():
    # byte 0 = 0b00000001 keeps only key 0 of row 0 (LSB = first element)
    q = np.ones((1, 1, 16), np.float16)
    k = np.zeros((3, 1, 16), np.float16)
    v = np.arange(48, dtype=np.float16).reshape(3, 1, 16)
    drop = np.zeros(2, np.uint8)
    drop[0] = 1
    res = golden.flash_attention_var_len_score(
        q, k, v, actual_seq_qlen=[1], actual_seq_kvlen=[3], head_num=1, keep_prob=0.5, drop_mask=drop
    )
    np.testing.assert_allclose(res["attention_out"][0, 0], v[0, 0].astype(np.float32) / 3 / 0.5)


def test_tnd_equals_per_batch_bsnd(rng):
    q_lens, kv_lens, n = [6, 11, 3], [9, 11, 7], 4
    q, k, v, cq, ck = tnd_inputs(rng, q_lens, kv_lens, n, 2, 16, "bf16")
    res = golden.flash_attention_var_len_score(
        q, k, v, actual_seq_qlen=np.array(cq), actual_seq_kvlen=np.array(ck), head_num=n, scale_value=0.25
    )
    qs, ks = 0, 0
    for sq, sk in zip(q_lens, kv_lens):
        per = golden.prompt_flash_attention(
            q[None, qs : qs + sq],
            k[None, ks : ks + sk],
            v[None, ks : ks + sk],
            num_heads=n,
            num_key_value_heads=2,
            scale_value=0.25,
            input_layout="BSND",
        )
        np.testing.assert_allclose(res["attention_out"][qs : qs + sq], per[0], rtol=1e-6, atol=1e-6)
        qs, ks = qs + sq, ks + sk


def test_gqa_equals_repeated_kv(rng):
    q, k, v, cq, ck = tnd_inputs(rng, [7, 4], [7, 9], 6, 2, 16, "fp16")
    kw = dict(
        actual_seq_qlen=cq, actual_seq_kvlen=ck, head_num=6, scale_value=0.25, atten_mask=TRIL_2048, sparse_mode=3
    )
    a = golden.flash_attention_var_len_score(q, k, v, **kw)
    b = golden.flash_attention_var_len_score(q, np.repeat(k, 3, 1), np.repeat(v, 3, 1), **kw)
    for key in a:
        np.testing.assert_allclose(a[key], b[key], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("pse_type", [0, 1, 2, 3])
@pytest.mark.parametrize("starts", [(0, 0), (3, 1)])
def test_tnd_forward_pse_types_rope_sink(rng, pse_type, starts):
    q_lens, kv_lens, n = [5, 8], [9, 8], 4
    q, k, v, cq, ck = tnd_inputs(rng, q_lens, kv_lens, n, 2, 16, "bf16")
    qr, kr = randn(rng, (13, n, 8), "bf16"), randn(rng, (17, 2, 8), "bf16")
    sink = rng.standard_normal(n).astype(np.float32)
    import torch

    if pse_type in (2, 3):
        pse = np.abs(rng.standard_normal((2, n))).astype(np.float32)  # [B, N] slopes
        full = None
    else:
        pse = randn(rng, (1, n, 8, 9), "bf16")
        full = [torch.from_numpy(pse[0, :, 8 - sq :, 9 - sk :].astype(np.float64)) for sq, sk in zip(q_lens, kv_lens)]
    kw = dict(
        actual_seq_qlen=cq,
        actual_seq_kvlen=ck,
        head_num=n,
        scale_value=0.3,
        atten_mask=TRIL_2048,
        sparse_mode=3,
        pse_type=pse_type,
    )
    res = golden.flash_attention_tnd_forward(
        q,
        k,
        v,
        query_rope=qr,
        key_rope=kr,
        pse_shift=pse,
        sink=sink,
        q_start_idx=[starts[0]],
        kv_start_idx=np.array([starts[1]]),
        softmax_in_layout="same_as_input",
        **kw,
    )
    ref = tnd_reference(
        q,
        k,
        v,
        query_rope=qr,
        key_rope=kr,
        pse=pse if full is None else None,
        full_pse=full,
        sink=sink,
        q_start_idx=starts[0],
        kv_start_idx=starts[1],
        **kw,
    )
    compare_forward(res, ref)


def test_tnd_forward_stats_ntd_layout_is_transpose(rng):
    q, k, v, cq, ck = tnd_inputs(rng, [5, 3], [5, 6], 2, 2, 16, "fp16")
    kw = dict(actual_seq_qlen=cq, actual_seq_kvlen=ck, head_num=2)
    ntd = golden.flash_attention_tnd_forward(q, k, v, softmax_in_layout="", **kw)
    tnd = golden.flash_attention_tnd_forward(q, k, v, softmax_in_layout="same_as_input", **kw)
    assert ntd["softmax_max"].shape == (2, 8, 8)
    np.testing.assert_array_equal(ntd["softmax_max"], tnd["softmax_max"].transpose(1, 0, 2))
    np.testing.assert_array_equal(ntd["softmax_sum"], tnd["softmax_sum"].transpose(1, 0, 2))


@pytest.mark.parametrize("dtype,tol", [("fp16", 2**-9), ("bf16", 2**-6)])
def test_benchmark_is_close_to_golden(rng, dtype, tol):
    q, k, v, cq, ck = tnd_inputs(rng, [300, 200], [300, 260], 2, 2, 64, dtype)
    kw = dict(
        query=q,
        key=k,
        value=v,
        actual_seq_qlen=cq,
        actual_seq_kvlen=ck,
        head_num=2,
        scale_value=0.125,
        atten_mask=TRIL_2048,
        sparse_mode=3,
    )
    gold = golden.flash_attention_var_len_score(**kw)
    bench = golden.benchmark("flash_attention_var_len_score", **kw)
    err = np.abs(bench["attention_out"] - gold["attention_out"])
    assert 0 < err.mean() < tol and err.max() < 8 * tol
    np.testing.assert_allclose(bench["softmax_max"], gold["softmax_max"], rtol=1e-6)
    np.testing.assert_allclose(bench["softmax_sum"], gold["softmax_sum"], rtol=1e-4)


def test_golden_float32_matches_float64_mode(rng, monkeypatch):
    q, k, v, cq, ck = tnd_inputs(rng, [40, 30], [50, 30], 2, 1, 32, "fp32")
    kw = dict(actual_seq_qlen=cq, actual_seq_kvlen=ck, head_num=2, scale_value=0.2)
    a = golden.flash_attention_var_len_score(q, k, v, **kw)
    monkeypatch.setattr(_blockwise, "COMPUTE_DTYPE", np.float64)
    b = golden.flash_attention_var_len_score(q, k, v, **kw)
    np.testing.assert_allclose(a["attention_out"], b["attention_out"], rtol=1e-5, atol=1e-6)


def test_invalid_arguments_name_the_parameter(rng):
    q, k, v, cq, ck = tnd_inputs(rng, [4], [4], 2, 2, 8, "fp16")
    with pytest.raises(ValueError, match="actual_seq_qlen"):
        golden.flash_attention_var_len_score(q, k, v, actual_seq_qlen=[3, 2], actual_seq_kvlen=[4, 4], head_num=2)
    with pytest.raises(ValueError, match="sparse_mode"):
        golden.flash_attention_var_len_score(
            q, k, v, actual_seq_qlen=cq, actual_seq_kvlen=ck, head_num=2, sparse_mode=5
        )
    with pytest.raises(ValueError, match="head_num"):
        golden.flash_attention_var_len_score(q, k, v, actual_seq_qlen=cq, actual_seq_kvlen=ck, head_num=3)


@pytest.mark.slow
@pytest.mark.parametrize("mode", [0, 3, 4, 7, 8])
def test_large_varlen_matches_reference(rng, mode):
    q_lens, kv_lens = [600, 0, 1300, 257], [700, 0, 1300, 900]
    q, k, v, cq, ck = tnd_inputs(rng, q_lens, kv_lens, 4, 2, 64, "bf16")
    kw = dict(
        actual_seq_qlen=cq,
        actual_seq_kvlen=ck,
        head_num=4,
        scale_value=0.125,
        atten_mask=TRIL_2048 if mode else np.zeros((1300, 1300), bool),
        sparse_mode=mode,
        pre_tokens=400,
        next_tokens=-5 if mode else 10,
        keep_prob=0.9,
        drop_mask=random_drop_mask(rng, 4, q_lens, kv_lens),
    )
    res = golden.flash_attention_var_len_score(q, k, v, **kw)
    compare_forward(res, tnd_reference(q, k, v, **kw))


@pytest.mark.parametrize("shape", ["SS", "11SS", "B1SS", "BNSS"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_tnd_mask_shapes_of_the_grad_spec(rng, shape, dtype):
    q_lens, kv_lens, n = [6, 9], [10, 7], 4
    q, k, v, cq, ck = tnd_inputs(rng, q_lens, kv_lens, n, 2, 16, dtype)
    full = rng.random((2, n, 9, 10)) < 0.3
    mask = {"SS": full[0, 0], "11SS": full[:1, :1], "B1SS": full[:, :1], "BNSS": full}[shape]
    kw = dict(
        actual_seq_qlen=cq,
        actual_seq_kvlen=ck,
        head_num=n,
        scale_value=0.25,
        atten_mask=mask.astype(np.uint8),
        sparse_mode=1,
    )
    compare_forward(
        golden.flash_attention_tnd_forward(q, k, v, softmax_in_layout="TND", **kw), tnd_reference(q, k, v, **kw)
    )


def test_benchmark_dispatch_rejects_unknown_operator():
    with pytest.raises(ValueError, match="unknown operator 'nope'"):
        golden.benchmark("nope")


# Random varlen problems: lengths (zero-length batches included), GQA ratio, every sparse mode
# and pre/next tokens of either sign, all against the dense reference.
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_random_varlen_problems_match_reference(data):
    batch = data.draw(st.integers(1, 3), "batch")
    q_lens = data.draw(st.lists(st.integers(0, 9), min_size=batch, max_size=batch), "q_lens")
    kv_lens = [
        data.draw(st.integers(1, 11), f"kv{b}") if q else data.draw(st.integers(0, 5)) for b, q in enumerate(q_lens)
    ]
    if sum(q_lens) == 0:
        q_lens[0], kv_lens[0] = 1, max(1, kv_lens[0])
    mode = data.draw(st.sampled_from([0, 1, 2, 3, 4, 6, 7, 8]), "mode")
    pre = data.draw(st.integers(-3, 12), "pre")
    nxt = data.draw(st.integers(-3, 12), "next")
    nkv, g = data.draw(st.sampled_from([(1, 1), (1, 3), (2, 2)]), "heads")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31), "seed"))
    q, k, v, cq, ck = tnd_inputs(rng, q_lens, kv_lens, nkv * g, nkv, 8, "bf16")
    mask = {0: rng.random((9, 11)) < 0.1, 1: rng.random((9, 11)) < 0.3, 6: PREFIX_3072}.get(mode, TRIL_2048)
    # the sparse-mode page's range: [Skv - Sq, Skv] (Sq <= Skv) or [0, Skv] (Sq > Skv)
    prefix = [data.draw(st.integers(max(0, k_ - q_), k_)) for q_, k_ in zip(q_lens, kv_lens)] if mode == 6 else None
    kw = dict(
        actual_seq_qlen=cq,
        actual_seq_kvlen=ck,
        head_num=nkv * g,
        scale_value=0.4,
        atten_mask=mask.astype(np.uint8),
        sparse_mode=mode,
        pre_tokens=pre,
        next_tokens=nxt,
        prefix=prefix,
    )
    compare_forward(golden.flash_attention_var_len_score(q, k, v, **kw), tnd_reference(q, k, v, **kw))
