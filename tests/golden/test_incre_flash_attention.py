"""fakit.golden.incre_flash_attention_v4 against an independent torch reference and properties."""

import os
import sys
import time
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from torch_decode_sparse_ref import ifa_reference  # noqa: E402

from fakit.golden import incre_flash_attention_v4 as ifa  # noqa: E402
from fakit.golden import incre_flash_attention_v4_benchmark as ifa_bench  # noqa: E402

BF16 = ml_dtypes.bfloat16


def make(rng, B=2, N=4, n_kv=2, D=16, S=40, layout="BSH", dtype=np.float16, batch=None):
    """Query and key/value tensors in `layout` (B = batch of the KV tensors)."""

    def shaped(n, s, b):
        x = rng.standard_normal((b, n, s, D))
        if layout == "BSH":
            x = x.transpose(0, 2, 1, 3).reshape(b, s, n * D)
        elif layout == "BSND":
            x = x.transpose(0, 2, 1, 3)
        return x.astype(dtype)

    kb = B if batch is None else batch
    return shaped(N, 1, B), shaped(n_kv, S, kb), shaped(n_kv, S, kb)


def check(out, ref, atol=2e-6):
    assert out.dtype == np.float32 and out.shape == ref.shape
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, ref, atol=atol, rtol=1e-5)


def both(q, k, v, **kw):
    """Golden and reference of the same call."""
    return ifa(q, k, v, **kw), ifa_reference(q, k, v, **kw)


# ------------------------------------------------------------------ layouts, dtypes, GQA
@pytest.mark.parametrize("layout", ["BSH", "BSND", "BNSD"])
@pytest.mark.parametrize("dtype", [np.float16, BF16])
@pytest.mark.parametrize("N,n_kv", [(4, 4), (8, 2), (4, 1), (64, 1)])
def test_layouts_gqa_mqa_match_reference(layout, dtype, N, n_kv):
    rng = np.random.default_rng(N * 7 + n_kv)
    q, k, v = make(rng, N=N, n_kv=n_kv, layout=layout, dtype=dtype)
    kw = dict(num_heads=N, num_key_value_heads=n_kv if n_kv != N else 0, scale_value=0.25, input_layout=layout)
    check(*both(q, [k], [v], **kw))


def test_gqa_equals_repeated_kv():
    rng = np.random.default_rng(1)
    q, k, v = make(rng, N=8, n_kv=2, layout="BNSD")
    grouped = ifa(q, [k], [v], num_heads=8, num_key_value_heads=2, input_layout="BNSD", scale_value=0.3)
    rep = lambda x: np.repeat(x, 4, axis=1)  # noqa: E731  KV head h serves query heads 4h..4h+3
    full = ifa(q, [rep(k)], [rep(v)], num_heads=8, input_layout="BNSD", scale_value=0.3)
    np.testing.assert_allclose(grouped, full, atol=1e-7)


def test_gqa_ratio_above_64_is_rejected():
    rng = np.random.default_rng(2)
    q, k, v = make(rng, N=128, n_kv=1, D=8, layout="BNSD")
    with pytest.raises(ValueError, match="num_key_value_heads"):
        ifa(q, [k], [v], num_heads=128, num_key_value_heads=1, input_layout="BNSD")


# ------------------------------------------------------------------ lengths, padding, masks
@pytest.mark.parametrize("lengths", [[40, 7], [0, 13], [25]])
def test_actual_seq_lengths_match_reference(lengths):
    rng = np.random.default_rng(3)
    q, k, v = make(rng)
    out, ref = both(q, [k], [v], num_heads=4, num_key_value_heads=2, scale_value=0.2, actual_seq_lengths=lengths)
    check(out, ref)
    if lengths[0] == 0:
        assert not out[0].any()  # nothing to attend: output 0, never NaN


def test_positions_beyond_actual_length_do_not_take_part():
    rng = np.random.default_rng(4)
    q, k, v = make(rng)
    base = ifa(q, [k], [v], num_heads=4, num_key_value_heads=2, actual_seq_lengths=[10, 20])
    k2, v2 = k.copy(), v.copy()
    k2[0, 10:], v2[1, 20:] = 100, -50
    again = ifa(q, [k2], [v2], num_heads=4, num_key_value_heads=2, actual_seq_lengths=[10, 20])
    np.testing.assert_array_equal(base, again)


@pytest.mark.parametrize("pad", [0, 5, -3, 38])
def test_kv_left_padding_matches_reference(pad):
    rng = np.random.default_rng(5)
    q, k, v = make(rng, S=40)
    out, ref = both(
        q,
        [k],
        [v],
        num_heads=4,
        num_key_value_heads=2,
        scale_value=0.3,
        actual_seq_lengths=[30, 2],
        kv_padding_size=[pad],
    )
    check(out, ref)
    if pad == 38:  # start = 40 - 38 - 30 < 0: documented all-zero result for that batch
        assert not out[0].any() and out[1].any()


def test_left_padding_reads_the_right_window():
    rng = np.random.default_rng(6)
    q, k, v = make(rng, S=40, layout="BNSD")
    lens, pad = [12, 12], 5
    padded = ifa(
        q,
        [k],
        [v],
        num_heads=4,
        num_key_value_heads=2,
        input_layout="BNSD",
        actual_seq_lengths=lens,
        kv_padding_size=np.array([pad]),
    )
    win = slice(40 - pad - 12, 40 - pad)
    direct = ifa(q, [k[:, :, win]], [v[:, :, win]], num_heads=4, num_key_value_heads=2, input_layout="BNSD")
    np.testing.assert_allclose(padded, direct, atol=1e-7)


@pytest.mark.parametrize("shape", ["BS", "B1S", "B11S"])
@pytest.mark.parametrize("mdtype", [bool, np.int8, np.uint8])
def test_mask_shapes_and_dtypes_match_reference(shape, mdtype):
    rng = np.random.default_rng(7)
    q, k, v = make(rng, S=40)
    m = rng.random((2, 48)) < 0.4  # longer than S: only the first S columns are read
    m[1, :] = True  # batch 1 fully masked -> output 0
    m = {"BS": m, "B1S": m[:, None], "B11S": m[:, None, None]}[shape].astype(mdtype)
    out, ref = both(q, [k], [v], num_heads=4, num_key_value_heads=2, atten_mask=m, scale_value=0.5)
    check(out, ref)
    assert not out[1].any()


def test_mask_with_left_padding_uses_absolute_positions():
    rng = np.random.default_rng(8)
    q, k, v = make(rng, S=32)
    m = np.zeros((2, 1, 1, 32), bool)
    m[:, ..., 20] = True
    check(
        *both(
            q,
            [k],
            [v],
            num_heads=4,
            num_key_value_heads=2,
            atten_mask=m,
            actual_seq_lengths=[10, 10],
            kv_padding_size=[4],
        )
    )


@pytest.mark.parametrize("pb", [2, 1])
def test_pse_shift_matches_reference(pb):
    rng = np.random.default_rng(9)
    q, k, v = make(rng, N=4, n_kv=2, S=40, dtype=BF16)
    pse = (rng.standard_normal((pb, 4, 1, 40)) * 2).astype(BF16)
    check(*both(q, [k], [v], num_heads=4, num_key_value_heads=2, pse_shift=pse, scale_value=0.125), atol=5e-6)


def test_tensor_list_of_batch_one_tensors_matches_reference():
    rng = np.random.default_rng(10)
    q, _, _ = make(rng, B=3, layout="BSND")
    ks = [make(rng, B=1, S=s, layout="BSND")[1] for s in (5, 17, 33)]
    vs = [make(rng, B=1, S=s, layout="BSND")[2] for s in (5, 17, 33)]
    check(
        *both(
            q,
            ks,
            vs,
            num_heads=4,
            num_key_value_heads=2,
            input_layout="BSND",
            scale_value=0.25,
            actual_seq_lengths=[5, 10, 33],
        )
    )


# ------------------------------------------------------------------ paged attention
def to_paged(k, layout, lengths, bs, n_kv, rng, four_d):
    """Contiguous (B, S, H)/(B, N, S, D) cache -> shuffled block pool + block table."""
    kb = k if layout == "BNSD" else k.reshape(k.shape[0], k.shape[1], n_kv, -1).transpose(0, 2, 1, 3)
    B, _, S, D = kb.shape
    per = -(-np.asarray(lengths) // bs)
    ids = rng.permutation(int(per.sum()) + 3)
    table = np.full((B, int(per.max()) + 1), -1, np.int32)
    pool = np.zeros((len(ids), n_kv, bs, D), k.dtype)
    used = 0
    for b in range(B):
        for j in range(per[b]):
            blk = ids[used]
            used += 1
            table[b, j] = blk
            chunk = kb[b, :, j * bs : (j + 1) * bs]
            pool[blk, :, : chunk.shape[1]] = chunk
    if not four_d:
        pool = pool.transpose(0, 2, 1, 3).reshape(len(ids), bs, n_kv * D)
    return pool, table


@pytest.mark.parametrize("layout,four_d", [("BSH", False), ("BSND", False), ("BNSD", False), ("BNSD", True)])
@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_paged_cache_matches_reference_and_contiguous(layout, four_d, dtype):
    rng = np.random.default_rng(11)
    q, k, v = make(rng, N=8, n_kv=2, S=64, layout=layout, dtype=dtype)
    lens, bs = [64, 37], 16
    kp, table = to_paged(k, layout, lens, bs, 2, np.random.default_rng(0), four_d)
    vp, _ = to_paged(v, layout, lens, bs, 2, np.random.default_rng(0), four_d)
    kw = dict(num_heads=8, num_key_value_heads=2, input_layout=layout, scale_value=0.25, actual_seq_lengths=lens)
    paged, ref = both(q, [kp], [vp], block_table=table, block_size=bs, **kw)
    check(paged, ref)
    np.testing.assert_allclose(paged, ifa(q, [k], [v], **kw), atol=1e-7)


@pytest.mark.parametrize("layout,four_d", [("BNSD", True), ("BNSD", False), ("BSH", False)])
def test_paged_with_mask_and_pse_matches_reference(layout, four_d):
    # position-dependent terms make the block order matter (plain attention is order-free)
    rng = np.random.default_rng(12)
    q, k, v = make(rng, N=4, n_kv=4, S=48, layout=layout)
    lens, bs = [40, 48], 16
    kp, table = to_paged(k, layout, lens, bs, 4, np.random.default_rng(1), four_d)
    vp, _ = to_paged(v, layout, lens, bs, 4, np.random.default_rng(1), four_d)
    m = rng.random((2, 1, 1, 48)) < 0.3
    pse = rng.standard_normal((1, 4, 1, 48)).astype(np.float16)
    check(
        *both(
            q,
            [kp],
            [vp],
            block_table=table,
            block_size=bs,
            num_heads=4,
            input_layout=layout,
            actual_seq_lengths=lens,
            atten_mask=m,
            pse_shift=pse,
        )
    )


def test_paged_requires_actual_seq_lengths():
    rng = np.random.default_rng(13)
    q, k, v = make(rng, layout="BNSD")
    kp, table = to_paged(k, "BNSD", [40, 40], 16, 2, rng, True)
    with pytest.raises(ValueError, match="actual_seq_lengths"):
        ifa(q, [kp], [kp], block_table=table, block_size=16, num_heads=4, num_key_value_heads=2, input_layout="BNSD")


# ------------------------------------------------------------------ int8 antiquant
def int8_kv(rng, layout, n_kv=2, D=16, S=40, B=2):
    q, k, v = make(rng, N=4, n_kv=n_kv, D=D, S=S, B=B, layout=layout)
    k8 = rng.integers(-128, 128, k.shape).astype(np.int8)
    v8 = rng.integers(-128, 128, v.shape).astype(np.int8)
    return q, k8, v8


@pytest.mark.parametrize(
    "layout,shape", [("BNSD", (2, 2, 1, 16)), ("BSND", (2, 2, 16)), ("BSH", (2, 32)), ("BSH", (2,)), ("BNSD", (2,))]
)
@pytest.mark.parametrize("with_offset", [True, False])
def test_antiquant_matches_reference(layout, shape, with_offset):
    rng = np.random.default_rng(14)
    q, k8, v8 = int8_kv(rng, layout)
    scale = (rng.random(shape) * 0.05 + 0.01).astype(np.float16)
    offset = (rng.standard_normal(shape) * 3).astype(np.float16) if with_offset else None
    check(
        *both(
            q,
            [k8],
            [v8],
            num_heads=4,
            num_key_value_heads=2,
            input_layout=layout,
            antiquant_scale=scale,
            antiquant_offset=offset,
            scale_value=0.3,
        ),
        atol=5e-6,
    )


def test_antiquant_equals_dequantised_float_input():
    rng = np.random.default_rng(15)
    q, k8, v8 = int8_kv(rng, "BNSD")
    scale = np.array([[[[0.0625] * 16], [[0.125] * 16]], [[[0.25] * 16], [[0.03125] * 16]]], np.float16)
    offset = np.full((2, 2, 1, 16), 1.5, np.float16)
    quant = ifa(
        q,
        [k8],
        [v8],
        num_heads=4,
        num_key_value_heads=2,
        input_layout="BNSD",
        antiquant_scale=scale,
        antiquant_offset=offset,
    )
    kf = ((k8.astype(np.float32) + 1.5) * scale[0].astype(np.float32)).astype(np.float32)
    vf = ((v8.astype(np.float32) + 1.5) * scale[1].astype(np.float32)).astype(np.float32)
    plain = ifa(q, [kf], [vf], num_heads=4, num_key_value_heads=2, input_layout="BNSD")
    np.testing.assert_allclose(quant, plain, atol=1e-7)


def test_paged_int8_antiquant_matches_reference():
    rng = np.random.default_rng(16)
    q, k8, v8 = int8_kv(rng, "BSH", S=64)
    lens, bs = [64, 33], 32
    kp, table = to_paged(k8, "BSH", lens, bs, 2, np.random.default_rng(2), False)
    vp, _ = to_paged(v8, "BSH", lens, bs, 2, np.random.default_rng(2), False)
    scale = (rng.random((2, 32)) * 0.05 + 0.01).astype(np.float16)
    check(
        *both(
            q,
            [kp],
            [vp],
            block_table=table,
            block_size=bs,
            num_heads=4,
            num_key_value_heads=2,
            actual_seq_lengths=lens,
            antiquant_scale=scale,
        ),
        atol=5e-6,
    )


# ------------------------------------------------------------------ int8 output quantisation
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("with_offset", [False, True])
def test_output_quant_matches_reference_exactly(per_channel, with_offset):
    rng = np.random.default_rng(17)
    q, k, v = make(rng, layout="BNSD")
    shape = (1, 4, 1, 16) if per_channel else (1,)
    qs = (rng.random(shape) * 60 + 20).astype(np.float32)
    qo = (rng.standard_normal(shape) * 4).astype(np.float32) if with_offset else None
    m = np.zeros((2, 40), bool)
    m[1] = True  # a fully masked batch stays 0 after quantisation
    out, ref = both(
        q,
        [k],
        [v],
        num_heads=4,
        num_key_value_heads=2,
        input_layout="BNSD",
        quant_scale2=qs,
        quant_offset2=qo,
        atten_mask=m,
    )
    np.testing.assert_array_equal(out, ref)
    assert out.min() >= -128 and out.max() <= 127 and (out == np.round(out)).all()
    assert (np.abs(out) == 127).any() or (out == -128).any()  # saturation is exercised
    assert not out[1].any()


def test_output_quant_rounds_half_to_even():
    # one KV token: out = v exactly, so quant inputs are controlled
    q = np.zeros((1, 1, 1, 4), np.float16)
    v = np.array([0.5, 1.5, -2.5, 300.0], np.float16).reshape(1, 1, 1, 4)
    out = ifa(q, [v], [v], num_heads=1, input_layout="BNSD", quant_scale2=np.array([1.0], np.float32))
    np.testing.assert_array_equal(out.reshape(-1), [0, 2, -2, 127])


# ------------------------------------------------------------------ features off, benchmark
def test_features_off_reduce_to_plain_attention():
    rng = np.random.default_rng(18)
    q, k, v = make(rng, N=4, n_kv=4, layout="BNSD", S=40)
    plain = ifa(q, [k], [v], num_heads=4, input_layout="BNSD", scale_value=0.25)
    neutral = ifa(
        q,
        [k],
        [v],
        num_heads=4,
        input_layout="BNSD",
        scale_value=0.25,
        atten_mask=np.zeros((2, 1, 1, 40), np.int8),
        pse_shift=np.zeros((1, 4, 1, 40), np.float16),
        actual_seq_lengths=[40, 40],
        num_key_value_heads=4,
        inner_precise=0,
    )
    np.testing.assert_array_equal(plain, neutral)
    qf, kf, vf = (x.astype(np.float64) for x in (q, k, v))
    s = np.einsum("bnd,bnsd->bns", qf[:, :, 0], kf) * 0.25
    p = np.exp(s - s.max(-1, keepdims=True))
    expect = np.einsum("bns,bnsd->bnd", p / p.sum(-1, keepdims=True), vf)[:, :, None]
    np.testing.assert_allclose(plain, expect, atol=1e-6)


@pytest.mark.parametrize("dtype,tol", [(np.float16, 2e-3), (BF16, 2e-2)])
def test_benchmark_is_close_but_computed_in_dtype(dtype, tol):
    rng = np.random.default_rng(19)
    q, k, v = make(rng, N=8, n_kv=2, S=300, layout="BSND", dtype=dtype)
    kw = dict(
        num_heads=8,
        num_key_value_heads=2,
        input_layout="BSND",
        scale_value=0.25,
        actual_seq_lengths=[300, 129],
        atten_mask=rng.random((2, 300)) < 0.2,
    )
    gold, bench = ifa(q, [k], [v], **kw), ifa_bench(q, [k], [v], **kw)
    assert bench.shape == gold.shape and bench.dtype == np.float32
    np.testing.assert_allclose(bench, gold, atol=tol)
    assert not np.array_equal(bench, gold)
    assert np.array_equal(bench, bench.astype(dtype).astype(np.float32))  # rounded to dtype


def test_benchmark_quant_and_invalid_rows():
    rng = np.random.default_rng(20)
    q, k, v = make(rng, layout="BNSD")
    kw = dict(
        num_heads=4,
        num_key_value_heads=2,
        input_layout="BNSD",
        actual_seq_lengths=[0, 40],
        quant_scale2=np.array([50.0], np.float32),
    )
    gold, bench = ifa(q, [k], [v], **kw), ifa_bench(q, [k], [v], **kw)
    assert not gold[0].any() and not bench[0].any()
    assert np.abs(gold - bench).max() <= 1


@pytest.mark.parametrize(
    "bad,match",
    [
        (dict(input_layout="TND"), "input_layout"),
        (dict(dequant_scale1=np.array([1.0], np.float32)), "dequant_scale1"),
        (dict(actual_seq_lengths=[41, 3]), "actual_seq_lengths"),
        (dict(atten_mask=np.zeros((2, 1, 1, 8), bool)), "atten_mask"),
        (dict(quant_scale2=np.ones(7, np.float32)), "quant_scale2"),
    ],
)
def test_invalid_arguments_name_the_parameter(bad, match):
    rng = np.random.default_rng(21)
    q, k, v = make(rng)
    kw = dict(num_heads=4, num_key_value_heads=2)
    kw.update(bad)
    with pytest.raises(ValueError, match=match):
        ifa(q, [k], [v], **kw)


@pytest.mark.slow
def test_large_paged_case_is_fast_and_bounded():
    rng = np.random.default_rng(22)
    B, N, n_kv, D, S, bs = 16, 32, 8, 128, 8192, 128
    q = rng.standard_normal((B, N, 1, D), np.float32).astype(np.float16)
    nb = B * S // bs
    kc = rng.standard_normal((nb, n_kv, bs, D), np.float32).astype(np.float16)
    vc = rng.standard_normal((nb, n_kv, bs, D), np.float32).astype(np.float16)
    table = rng.permutation(nb).reshape(B, -1).astype(np.int32)
    tracemalloc.start()
    t0 = time.process_time()  # CPU time: robust to other jobs sharing the machine
    out = ifa(
        q,
        [kc],
        [vc],
        num_heads=N,
        num_key_value_heads=n_kv,
        input_layout="BNSD",
        block_table=table,
        block_size=bs,
        actual_seq_lengths=[S] * B,
        scale_value=D**-0.5,
    )
    cpu = time.process_time() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert np.isfinite(out).all()
    assert cpu < 20, f"golden took {cpu:.1f} s CPU"  # ~1 s on an idle 2-core machine
    assert peak < 512 << 20, f"golden peak {peak >> 20} MiB"  # one batch of K/V in float64


def test_benchmark_with_antiquant_and_paged_cache_is_close():
    rng = np.random.default_rng(23)
    q, k8, v8 = int8_kv(rng, "BNSD", S=256)
    lens, bs = [256, 200], 64
    kp, table = to_paged(k8, "BNSD", lens, bs, 2, np.random.default_rng(3), True)
    vp, _ = to_paged(v8, "BNSD", lens, bs, 2, np.random.default_rng(3), True)
    kw = dict(
        block_table=table,
        block_size=bs,
        num_heads=4,
        num_key_value_heads=2,
        input_layout="BNSD",
        actual_seq_lengths=lens,
        scale_value=0.05,
        antiquant_scale=np.full((2,), 0.02, np.float16),
        antiquant_offset=np.full((2,), -1.0, np.float16),
    )
    gold, bench = ifa(q, [kp], [vp], **kw), ifa_bench(q, [kp], [vp], **kw)
    np.testing.assert_allclose(bench, gold, atol=3e-3)
    assert not np.array_equal(bench, gold)
