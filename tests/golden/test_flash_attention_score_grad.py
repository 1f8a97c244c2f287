"""fakit.golden.flash_attention_unpadding_score_grad_v5 against torch.autograd of the
independent dense reference forward."""

import numpy as np
import pytest
from conftest import PREFIX_3072, TRIL_2048, assert_close, randn, random_drop_mask, tnd_inputs
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_dense_ref import tnd_reference

from fakit import golden

GRAD_TOL = dict(rtol=5e-4, atol=5e-5)


def grad_case(
    rng,
    q_lens,
    kv_lens,
    n=4,
    nkv=2,
    d=16,
    dtype="bf16",
    rope=False,
    sink=False,
    pse_type=None,
    drop=False,
    starts=(0, 0),
    **attrs,
):
    """Inputs, golden kwargs and reference kwargs of one V5 grad case."""
    import torch

    q, k, v, cq, ck = tnd_inputs(rng, q_lens, kv_lens, n, nkv, d, dtype)
    dy = randn(rng, q.shape[:2] + (d,), dtype)
    kw = dict(actual_seq_qlen=cq, actual_seq_kvlen=ck, head_num=n, scale_value=0.3, **attrs)
    gkw, rkw = {}, {}
    if rope:
        qr, kr = randn(rng, (q.shape[0], n, 8), dtype), randn(rng, (k.shape[0], nkv, 8), dtype)
        gkw.update(query_rope=qr, key_rope=kr)
        rkw.update(query_rope=qr, key_rope=kr)
    if sink:
        s = rng.standard_normal(n).astype(np.float32)
        gkw["sink"] = rkw["sink"] = s
    if pse_type is not None:
        kw["pse_type"] = pse_type
        if pse_type in (2, 3):
            slopes = np.abs(rng.standard_normal(n)).astype(np.float32)
            gkw["pse_shift"] = rkw["pse"] = slopes
            gkw.update(q_start_idx=[starts[0]], kv_start_idx=[starts[1]])
            rkw.update(q_start_idx=starts[0], kv_start_idx=starts[1])
        else:
            mq, mk = max(q_lens), max(kv_lens)
            pse = randn(rng, (len(q_lens), n, mq, mk), dtype)
            gkw["pse_shift"] = pse
            rkw["full_pse"] = [
                torch.from_numpy(pse[b, :, mq - sq :, mk - sk :].astype(np.float64))
                for b, (sq, sk) in enumerate(zip(q_lens, kv_lens))
            ]
    else:
        kw["pse_type"] = 1
    if drop:
        m = random_drop_mask(rng, n, q_lens, kv_lens)
        kw.update(keep_prob=0.8, drop_mask=m)
    return (q, k, v, dy), kw, gkw, rkw


def check_grad(args, kw, gkw, rkw, layout="same_as_input"):
    q, k, v, dy = args
    fwd = golden.flash_attention_tnd_forward(q, k, v, softmax_in_layout=layout, **kw, **gkw)
    grads = golden.flash_attention_unpadding_score_grad_v5(
        q,
        k,
        v,
        dy,
        softmax_max=fwd["softmax_max"],
        softmax_sum=fwd["softmax_sum"],
        attention_in=fwd["attention_out"],
        softmax_in_layout=layout,
        **kw,
        **gkw,
    )
    ref = tnd_reference(q, k, v, dy=dy, **kw, **rkw)
    assert_close(fwd["attention_out"], ref["out"], what="forward")
    for name in ("dq", "dk", "dv", "dq_rope", "dk_rope", "dsink"):
        if name in ref:
            assert_close(grads[name], ref[name], what=name, **GRAD_TOL)
        else:
            assert grads[name] is None, f"{name} must be None"
    assert grads["dpse"] is None
    return grads


@pytest.mark.parametrize(
    "mode,pre,nxt",
    [
        (0, 2147483647, 2147483647),
        (0, 3, 1),
        (1, 0, 0),
        (2, 0, 0),
        (3, 0, 0),
        (4, 4, -1),
        (6, 0, 0),
        (7, 20, -2),
        (8, 20, 3),
    ],
)
def test_sparse_modes_match_autograd(rng, mode, pre, nxt):
    q_lens, kv_lens = [6, 0, 9, 4], [8, 0, 9, 11]
    mask = {0: np.zeros((9, 11), bool), 1: rng.random((9, 11)) < 0.2, 6: PREFIX_3072}.get(mode, TRIL_2048)
    args, kw, gkw, rkw = grad_case(
        rng,
        q_lens,
        kv_lens,
        atten_mask=mask,
        sparse_mode=mode,
        pre_tokens=pre,
        next_tokens=nxt,
        prefix=[2, 0, 9, 8] if mode == 6 else None,
    )
    check_grad(args, kw, gkw, rkw)


# start indices only shape the generated alibi (pse types 2/3)
@pytest.mark.parametrize(
    "pse_type,starts", [(0, (0, 0)), (1, (0, 0)), (2, (0, 0)), (3, (0, 0)), (2, (4, 1)), (3, (1, 5))]
)
def test_pse_types_and_start_indices_match_autograd(rng, pse_type, starts):
    args, kw, gkw, rkw = grad_case(
        rng, [5, 8], [9, 8], pse_type=pse_type, starts=starts, atten_mask=TRIL_2048, sparse_mode=3
    )
    check_grad(args, kw, gkw, rkw)


@pytest.mark.parametrize("layout", ["same_as_input", ""])
def test_rope_and_sink_with_dsink_match_autograd(rng, layout):
    args, kw, gkw, rkw = grad_case(
        rng, [7, 5], [7, 9], n=4, nkv=1, rope=True, sink=True, atten_mask=TRIL_2048, sparse_mode=3
    )
    grads = check_grad(args, kw, gkw, rkw, layout)
    assert grads["dsink"].shape == (4,) and np.any(grads["dsink"] != 0)


def test_dropout_matches_autograd(rng):
    args, kw, gkw, rkw = grad_case(rng, [5, 0, 7], [13, 0, 20], drop=True, atten_mask=TRIL_2048, sparse_mode=3)
    check_grad(args, kw, gkw, rkw)


def test_invalid_rows_have_zero_grad_and_no_nan(rng):
    args, kw, gkw, rkw = grad_case(rng, [9], [5], sink=False, atten_mask=TRIL_2048, sparse_mode=3)
    grads = check_grad(args, kw, gkw, rkw)
    assert np.all(grads["dq"][:4] == 0)  # rows 0-3 see no key (Sq > Skv)
    for g in grads.values():
        assert g is None or not np.isnan(g).any()


def test_missing_stats_are_recomputed(rng):
    args, kw, gkw, _ = grad_case(rng, [6, 5], [6, 7], rope=True, sink=True, atten_mask=TRIL_2048, sparse_mode=2)
    q, k, v, dy = args
    fwd = golden.flash_attention_tnd_forward(q, k, v, **kw, **gkw)
    given = golden.flash_attention_unpadding_score_grad_v5(
        q,
        k,
        v,
        dy,
        softmax_max=fwd["softmax_max"],
        softmax_sum=fwd["softmax_sum"],
        attention_in=fwd["attention_out"],
        **kw,
        **gkw,
    )
    implied = golden.flash_attention_unpadding_score_grad_v5(q, k, v, dy, **kw, **gkw)
    for name, g in given.items():
        if g is not None:
            np.testing.assert_array_equal(g, implied[name])


def test_grad_reads_the_given_statistics(rng):
    # the kernel recomputes P from softmax_max/sum: other stats give other gradients
    args, kw, gkw, _ = grad_case(rng, [6], [6])
    q, k, v, dy = args
    fwd = golden.flash_attention_tnd_forward(q, k, v, **kw, **gkw)
    a = golden.flash_attention_unpadding_score_grad_v5(
        q,
        k,
        v,
        dy,
        softmax_max=fwd["softmax_max"],
        softmax_sum=fwd["softmax_sum"] * 2,
        attention_in=fwd["attention_out"],
        **kw,
    )
    b = golden.flash_attention_unpadding_score_grad_v5(q, k, v, dy, **kw)
    np.testing.assert_allclose(a["dv"], b["dv"] / 2, rtol=1e-5, atol=1e-6)


def test_gqa_grad_equals_summed_repeated_kv(rng):
    args, kw, gkw, _ = grad_case(rng, [7, 5], [7, 9], n=6, nkv=2, atten_mask=TRIL_2048, sparse_mode=3)
    q, k, v, dy = args
    a = golden.flash_attention_unpadding_score_grad_v5(q, k, v, dy, **kw)
    b = golden.flash_attention_unpadding_score_grad_v5(q, np.repeat(k, 3, 1), np.repeat(v, 3, 1), dy, **kw)
    np.testing.assert_allclose(a["dq"], b["dq"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a["dk"], b["dk"].reshape(-1, 2, 3, 16).sum(2), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype,tol", [("fp16", 2**-8), ("bf16", 2**-5)])
def test_benchmark_is_close_to_golden(rng, dtype, tol):
    args, kw, gkw, _ = grad_case(
        rng, [200, 150], [200, 180], n=2, nkv=2, d=64, dtype=dtype, atten_mask=TRIL_2048, sparse_mode=3
    )
    q, k, v, dy = args
    kw = dict(kw, query=q, key=k, value=v, dy=dy)
    gold = golden.flash_attention_unpadding_score_grad_v5(**kw)
    bench = golden.benchmark("flash_attention_unpadding_score_grad_v5", **kw)
    for name in ("dq", "dk", "dv"):
        ref = np.abs(gold[name]).mean()
        err = np.abs(bench[name] - gold[name]).mean() / ref
        assert 0 < err < tol, (name, err)


def test_rope_with_prefix_mode_is_rejected(rng):
    args, kw, gkw, _ = grad_case(rng, [4], [4], rope=True, atten_mask=PREFIX_3072, sparse_mode=6, prefix=[1])
    with pytest.raises(ValueError, match="sparse_mode 6"):
        golden.flash_attention_unpadding_score_grad_v5(*args, **kw, **gkw)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_random_grad_problems_match_autograd(data):
    batch = data.draw(st.integers(1, 3), "batch")
    q_lens = data.draw(st.lists(st.integers(1, 8), min_size=batch, max_size=batch), "q_lens")
    kv_lens = data.draw(st.lists(st.integers(1, 10), min_size=batch, max_size=batch), "kv_lens")
    mode = data.draw(st.sampled_from([0, 2, 3, 4, 7, 8]), "mode")
    flags = dict(
        rope=data.draw(st.booleans(), "rope"),
        sink=data.draw(st.booleans(), "sink"),
        drop=data.draw(st.booleans(), "drop"),
        pse_type=data.draw(st.sampled_from([None, 0, 2, 3]), "pse_type"),
    )
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31), "seed"))
    args, kw, gkw, rkw = grad_case(
        rng,
        q_lens,
        kv_lens,
        n=2,
        nkv=data.draw(st.sampled_from([1, 2]), "nkv"),
        atten_mask=np.zeros((8, 10), bool) if mode == 0 else TRIL_2048,
        sparse_mode=mode,
        pre_tokens=data.draw(st.integers(-2, 9), "pre"),
        next_tokens=data.draw(st.integers(-2, 9), "next"),
        **flags,
    )
    check_grad(args, kw, gkw, rkw, data.draw(st.sampled_from(["same_as_input", ""]), "layout"))


@pytest.mark.slow
@pytest.mark.parametrize("mode", [0, 3, 7])
def test_large_grad_matches_autograd(rng, mode):
    q_lens, kv_lens = [300, 700, 150], [400, 700, 500]
    args, kw, gkw, rkw = grad_case(
        rng,
        q_lens,
        kv_lens,
        n=4,
        nkv=2,
        d=64,
        rope=True,
        sink=True,
        atten_mask=np.zeros((700, 700), bool) if mode == 0 else TRIL_2048,
        sparse_mode=mode,
        pre_tokens=250,
        next_tokens=-3 if mode else 40,
    )
    check_grad(args, kw, gkw, rkw)


@pytest.mark.parametrize("pse_type", [None, 0, 1, 2, 3])
def test_fp32_benchmark_equals_golden_for_every_feature(rng, pse_type):
    # in fp32 the device-like path differs from the golden only by float32 rounding: this
    # pins the benchmark's semantics (online softmax, pse order, rope, sink, dropout)
    args, kw, gkw, _ = grad_case(
        rng,
        [150, 0, 90],
        [160, 0, 200],
        dtype="fp32",
        rope=True,
        sink=True,
        drop=True,
        pse_type=pse_type,
        atten_mask=TRIL_2048,
        sparse_mode=3,
    )
    q, k, v, dy = args
    fwd_g = golden.flash_attention_tnd_forward(q, k, v, **kw, **gkw)
    fwd_b = golden.benchmark("flash_attention_tnd_forward", query=q, key=k, value=v, **kw, **gkw)
    for name in fwd_g:
        np.testing.assert_allclose(fwd_b[name], fwd_g[name], rtol=2e-5, atol=2e-6, err_msg=name)
    grd_g = golden.flash_attention_unpadding_score_grad_v5(q, k, v, dy, **kw, **gkw)
    grd_b = golden.benchmark("flash_attention_unpadding_score_grad_v5", query=q, key=k, value=v, dy=dy, **kw, **gkw)
    for name, g in grd_g.items():
        if g is not None:
            np.testing.assert_allclose(grd_b[name], g, rtol=1e-4, atol=1e-5, err_msg=name)
