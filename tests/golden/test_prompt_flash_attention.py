"""fakit.golden.prompt_flash_attention against the independent dense torch reference."""

import numpy as np
import pytest
from conftest import assert_close, randn
from torch_dense_ref import pfa_reference

from fakit import golden

LAYOUTS = ["BSH", "BSND", "BNSD", "BNSD_BSND"]


def make_qkv(rng, layout, b, n, nkv, s1, s2, d, dtype):
    if layout == "BSH":
        shapes = [(b, s1, n * d), (b, s2, nkv * d), (b, s2, nkv * d)]
    elif layout == "BSND":
        shapes = [(b, s1, n, d), (b, s2, nkv, d), (b, s2, nkv, d)]
    else:
        shapes = [(b, n, s1, d), (b, nkv, s2, d), (b, nkv, s2, d)]
    return [randn(rng, s, dtype) for s in shapes]


def run_both(q, k, v, **kw):
    out = golden.prompt_flash_attention(q, k, v, **kw)
    ref = pfa_reference(q, k, v, **kw)
    assert out.dtype == np.float32
    assert_close(out, ref, what=str({k_: v_ for k_, v_ in kw.items() if np.isscalar(v_)}))
    return out


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("n,nkv", [(4, 4), (4, 2), (4, 1)])
def test_layouts_gqa_causal_mask_match_reference(rng, layout, dtype, n, nkv):
    b, s1, s2, d = 2, 19, 23, 16
    q, k, v = make_qkv(rng, layout, b, n, nkv, s1, s2, d, dtype)
    mask = np.triu(np.ones((s1, s2), np.uint8), 1)
    out = run_both(
        q,
        k,
        v,
        num_heads=n,
        num_key_value_heads=nkv if nkv != n else 0,
        scale_value=0.25,
        atten_mask=mask,
        input_layout=layout,
        pre_tokens=2147483647,
        next_tokens=0,
    )
    expected_shape = (b, s1, n, d) if layout in ("BSND", "BNSD_BSND") else q.shape
    assert out.shape == expected_shape


@pytest.mark.parametrize("mask_shape", ["SS", "BSS", "1SS", "B1SS", "11SS", "padded32"])
def test_every_documented_mask_shape_broadcasts(rng, mask_shape):
    b, n, s1, s2, d = 2, 2, 9, 13, 16
    q, k, v = make_qkv(rng, "BNSD", b, n, n, s1, s2, d, "fp16")
    base = rng.random((b, s1, s2)) < 0.3
    shapes = {"SS": base[0], "BSS": base, "1SS": base[:1], "B1SS": base[:, None], "11SS": base[:1, None]}
    if mask_shape == "padded32":  # keys padded to 32 with ones, as the spec suggests
        mask = np.ones((b, 1, s1, 32), bool)
        mask[:, :, :, :s2] = base[:, None]
    else:
        mask = shapes[mask_shape]
    out = run_both(
        q,
        k,
        v,
        num_heads=n,
        atten_mask=mask.astype(np.int8),
        input_layout="BNSD",
        scale_value=0.3,
        pre_tokens=2147483647,
        next_tokens=2147483647,
    )
    # batch 1 differs from batch 0 only for the per-batch shapes
    if mask_shape in ("SS", "1SS", "11SS"):
        same = golden.prompt_flash_attention(
            q, k, v, num_heads=n, atten_mask=base[0], input_layout="BNSD", scale_value=0.3, next_tokens=2147483647
        )
        np.testing.assert_array_equal(out, same)


@pytest.mark.parametrize("pre,nxt", [(3, 2), (2147483647, 0), (5, -2), (-2, 6), (0, 0)])
def test_pre_next_tokens_band_with_mask_incl_negative(rng, pre, nxt):
    # Sq != Skv so that a right-down band would differ from the left-up one
    b, n, s1, s2, d = 1, 2, 10, 14, 8
    q, k, v = make_qkv(rng, "BSND", b, n, n, s1, s2, d, "bf16")
    mask = np.zeros((s1, s2), bool)
    out = run_both(
        q, k, v, num_heads=n, atten_mask=mask, input_layout="BSND", scale_value=0.35, pre_tokens=pre, next_tokens=nxt
    )
    if nxt < 0:  # the first -nxt rows see no key at all: invalid rows output 0
        assert np.all(out[:, :-nxt] == 0)


def test_band_changes_result_so_band_is_applied(rng):
    q, k, v = make_qkv(rng, "BNSD", 1, 2, 2, 10, 10, 8, "fp16")
    mask = np.zeros((10, 10), bool)
    wide = golden.prompt_flash_attention(
        q, k, v, num_heads=2, atten_mask=mask, input_layout="BNSD", next_tokens=2147483647
    )
    causal = golden.prompt_flash_attention(q, k, v, num_heads=2, atten_mask=mask, input_layout="BNSD", next_tokens=0)
    assert not np.allclose(wide[:, :, :-1], causal[:, :, :-1])
    np.testing.assert_allclose(wide[:, :, -1], causal[:, :, -1], rtol=1e-6, atol=1e-6)


def test_without_mask_pre_next_tokens_are_ignored(rng):
    q, k, v = make_qkv(rng, "BSH", 2, 2, 2, 8, 11, 16, "fp16")
    a = golden.prompt_flash_attention(q, k, v, num_heads=2, pre_tokens=1, next_tokens=-3)
    full = pfa_reference(q, k, v, num_heads=2)
    assert_close(a, full, what="no mask = full attention")


@pytest.mark.parametrize("as_array", [False, True])
def test_actual_seq_lengths_rows_beyond_output_zero(rng, as_array):
    b, n, s1, s2, d = 3, 2, 10, 12, 16
    q, k, v = make_qkv(rng, "BSND", b, n, n, s1, s2, d, "fp16")
    lens = [10, 4, 0]
    arg = np.array(lens, np.int64) if as_array else lens
    out = run_both(
        q,
        k,
        v,
        num_heads=n,
        input_layout="BSND",
        actual_seq_lengths=arg,
        atten_mask=np.triu(np.ones((s1, s2), bool), 1),
        scale_value=0.25,
    )
    assert np.all(out[1, 4:] == 0) and np.all(out[2] == 0)
    assert np.any(out[1, :4] != 0)


def test_pse_shift_added_after_scale_read_top_left(rng):
    b, n, s1, s2, d = 2, 2, 7, 9, 16
    q, k, v = make_qkv(rng, "BNSD", b, n, n, s1, s2, d, "fp16")
    pse = randn(rng, (1, n, s1 + 3, s2 + 5), "fp16")
    run_both(q, k, v, num_heads=n, input_layout="BNSD", pse_shift=pse, scale_value=0.2)


def test_empty_key_value_gives_zeros(rng):
    q = randn(rng, (1, 5, 32), "fp16")
    kv = np.zeros((1, 0, 32), np.float16)
    out = golden.prompt_flash_attention(q, kv, kv, num_heads=2)
    assert out.shape == (1, 5, 32) and np.all(out == 0)


def test_gqa_equals_repeated_kv(rng):
    q, k, v = make_qkv(rng, "BNSD", 2, 8, 2, 9, 14, 16, "bf16")
    mask = np.triu(np.ones((9, 14), bool), 1)
    gqa = golden.prompt_flash_attention(
        q, k, v, num_heads=8, num_key_value_heads=2, atten_mask=mask, input_layout="BNSD"
    )
    rep = golden.prompt_flash_attention(
        q, np.repeat(k, 4, axis=1), np.repeat(v, 4, axis=1), num_heads=8, atten_mask=mask, input_layout="BNSD"
    )
    np.testing.assert_allclose(gqa, rep, rtol=1e-6, atol=1e-7)


def test_features_off_is_plain_attention(rng):
    q, k, v = make_qkv(rng, "BNSD", 1, 1, 1, 6, 9, 8, "fp32")
    out = golden.prompt_flash_attention(q, k, v, num_heads=1, input_layout="BNSD", scale_value=0.5)
    s = q[0, 0].astype(np.float64) @ k[0, 0].T.astype(np.float64) * 0.5
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(out[0, 0], p @ v[0, 0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype,tol", [("fp16", 2**-9), ("bf16", 2**-6)])
def test_benchmark_is_close_to_golden_but_in_dtype(rng, dtype, tol):
    q, k, v = make_qkv(rng, "BSND", 1, 4, 2, 300, 300, 64, dtype)
    kw = dict(
        num_heads=4,
        num_key_value_heads=2,
        input_layout="BSND",
        scale_value=0.125,
        atten_mask=np.triu(np.ones((300, 300), bool), 1),
    )
    gold = golden.prompt_flash_attention(q, k, v, **kw)
    bench = golden.benchmark("prompt_flash_attention", query=q, key=k, value=v, **kw)
    err = np.abs(bench - gold)
    assert err.max() < tol * 8 and err.mean() < tol
    assert err.max() > 0  # it really is computed in the lower dtype
    rounded = np.asarray(bench).astype(q.dtype).astype(np.float32)
    np.testing.assert_array_equal(rounded, bench)


def test_invalid_arguments_name_the_parameter(rng):
    q, k, v = make_qkv(rng, "BSH", 1, 2, 2, 4, 4, 8, "fp16")
    with pytest.raises(ValueError, match="input_layout"):
        golden.prompt_flash_attention(q, k, v, num_heads=2, input_layout="SBH")
    with pytest.raises(ValueError, match="actual_seq_lengths"):
        golden.prompt_flash_attention(q, k, v, num_heads=2, actual_seq_lengths=[9])
    with pytest.raises(ValueError, match="num_key_value_heads"):
        golden.prompt_flash_attention(q, k, v, num_heads=2, num_key_value_heads=3)


@pytest.mark.slow
@pytest.mark.parametrize("layout", LAYOUTS)
def test_large_causal_matches_reference(rng, layout):
    q, k, v = make_qkv(rng, layout, 2, 8, 2, 700, 1100, 64, "fp16")
    mask = np.triu(np.ones((700, 1100), bool), 1)
    run_both(
        q,
        k,
        v,
        num_heads=8,
        num_key_value_heads=2,
        atten_mask=mask,
        input_layout=layout,
        scale_value=0.125,
        actual_seq_lengths=[700, 333],
        pre_tokens=300,
        next_tokens=5,
    )


def test_package_exports_every_entry_point_and_its_benchmark():
    entry_points = [
        "prompt_flash_attention",
        "flash_attention_var_len_score",
        "flash_attention_tnd_forward",
        "flash_attention_unpadding_score_grad_v5",
        "incre_flash_attention_v4",
        "sparse_flash_attention",
        "sparse_flash_attention_grad",
    ]
    for name in entry_points:
        assert callable(getattr(golden, name)) and name in golden.__all__
        assert callable(getattr(golden, f"{name}_benchmark"))
