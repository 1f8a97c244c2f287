"""npu_incre_flash_attention, npu_fusion_attention (TND varlen) and its autograd
(npu_fusion_attention_grad) of framework/pytorch/ascend_fa/ on the cpu target."""

import numpy as np
import pytest
import torch

import ascend_fa  # installed by pip install -e .[test] (or .[torch])
import fakit  # noqa: E402
from fakit import compare  # noqa: E402

OPS = torch.ops.ascend_fa
npy = ascend_fa.to_numpy
DTYPES = [torch.float16, torch.bfloat16]


def rand(*shape, dtype, gen):
    return torch.rand(*shape, generator=gen).sub(0.5).to(dtype)


def judge(op, actual, kwargs):
    report = compare.compare(op, actual, getattr(fakit.golden, op)(**kwargs), fakit.golden.benchmark(op, **kwargs))
    assert report.passed, report.summary()


# ------------------------------------------------------------------- npu_incre_flash_attention


@pytest.mark.parametrize("dtype, layout", [(torch.float16, "BSH"), (torch.bfloat16, "BNSD")])
def test_incre_flash_attention_on_the_cpu_target_matches_the_golden(dtype, layout):
    """Decode (S=1) with GQA, per-batch KV lengths and a mask: key/value go to
    aclnnIncreFlashAttentionV4 as one-tensor lists."""
    g = torch.Generator().manual_seed(5)
    b, n, kvn, s, d = 2, 4, 2, 40, 32
    q, k, v = (
        rand(b, n, 1, d, dtype=dtype, gen=g),
        rand(b, kvn, s, d, dtype=dtype, gen=g),
        rand(b, kvn, s, d, dtype=dtype, gen=g),
    )
    qd, kd, vd = q, k, v  # BNSD copies for the reference
    if layout == "BSH":
        q, k, v = (t.transpose(1, 2).reshape(b, t.shape[2], -1).contiguous() for t in (q, k, v))
    mask = torch.zeros(b, 1, 1, s, dtype=torch.bool)
    mask[0, ..., 3] = True
    lens = [40, 17]
    out = OPS.npu_incre_flash_attention(
        q,
        k,
        v,
        atten_mask=mask,
        actual_seq_lengths=lens,
        num_heads=n,
        scale_value=0.17,
        input_layout=layout,
        num_key_value_heads=kvn,
    )
    assert out.dtype == dtype and out.shape == q.shape
    kwargs = dict(
        query=npy(q),
        key=[npy(k)],
        value=[npy(v)],
        atten_mask=mask.numpy(),
        actual_seq_lengths=lens,
        num_heads=n,
        scale_value=0.17,
        input_layout=layout,
        num_key_value_heads=kvn,
    )
    judge("incre_flash_attention_v4", npy(out), kwargs)
    np.testing.assert_array_equal(npy(out), fakit.run("incre_flash_attention_v4", **kwargs))
    # the mapping itself (independent torch reference): batch 0 without key 3, batch 1 sees 17 keys
    out_bnsd = out.float() if layout == "BNSD" else out.float().reshape(b, 1, n, d).transpose(1, 2)
    keep0 = torch.ones(s, dtype=torch.bool)
    keep0[3] = False
    for bi, keys in ((0, keep0), (1, torch.arange(s) < 17)):
        ref = torch.nn.functional.scaled_dot_product_attention(
            qd[bi].float(), kd[bi][:, keys].float(), vd[bi][:, keys].float(), scale=0.17, enable_gqa=True
        )
        torch.testing.assert_close(out_bnsd[bi], ref, atol=2e-2, rtol=2e-2)


def test_incre_flash_attention_fake_and_int8_output():
    q = torch.empty((2, 1, 64), dtype=torch.float16, device="meta")
    assert OPS.npu_incre_flash_attention(q, q, q, num_heads=2).shape == (2, 1, 64)
    out = OPS.npu_incre_flash_attention(q, q, q, num_heads=2, quant_scale2=torch.empty(1, device="meta"))
    assert out.dtype == torch.int8


# ------------------------------------------------------------ npu_fusion_attention (TND varlen)


def tnd_case(dtype, seed=7, n=2, d=32, qlen=(8, 24), kvlen=(12, 30)):
    g = torch.Generator().manual_seed(seed)
    q = rand(qlen[-1], n, d, dtype=dtype, gen=g)
    k, v = rand(kvlen[-1], n, d, dtype=dtype, gen=g), rand(kvlen[-1], n, d, dtype=dtype, gen=g)
    return q, k, v, list(qlen), list(kvlen)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fusion_attention_on_the_cpu_target_matches_the_golden(dtype):
    q, k, v, ql, kl = tnd_case(dtype)
    out, smax, ssum, sout, seed, offset, numels = OPS.npu_fusion_attention(
        q, k, v, 2, "TND", scale=0.2, actual_seq_qlen=ql, actual_seq_kvlen=kl
    )
    assert out.dtype == dtype and out.shape == q.shape and smax.shape == ssum.shape == (24, 2, 8)
    assert sout.numel() == 0 and (seed, offset, numels) == (0, 0, 0)
    kwargs = dict(
        query=npy(q),
        key=npy(k),
        value=npy(v),
        actual_seq_qlen=ql,
        actual_seq_kvlen=kl,
        scale_value=0.2,
        head_num=2,
        input_layout="TND",
    )
    judge(
        "flash_attention_var_len_score",
        dict(attention_out=npy(out), softmax_max=smax.numpy(), softmax_sum=ssum.numpy()),
        kwargs,
    )


def test_fusion_attention_causal_mask_maps_to_the_aclnn_parameters():
    """sparse_mode / atten_mask / pre_tockens / next_tockens reach the operator: a causal
    (sparse_mode 3, bottom-right) varlen run equals per-batch masked dense attention."""
    q, k, v, ql, kl = tnd_case(torch.float16, qlen=(8, 20), kvlen=(8, 20))
    mask = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), diagonal=1)  # sparse mode 3's compressed mask
    out = OPS.npu_fusion_attention(
        q, k, v, 2, "TND", atten_mask=mask, scale=0.2, actual_seq_qlen=ql, actual_seq_kvlen=kl, sparse_mode=3
    )[0]
    for lo, hi in ((0, 8), (8, 20)):
        qb, kb, vb = (t[lo:hi].float().transpose(0, 1) for t in (q, k, v))
        ref = torch.nn.functional.scaled_dot_product_attention(qb, kb, vb, is_causal=True, scale=0.2)
        torch.testing.assert_close(out[lo:hi].float(), ref.transpose(0, 1), atol=2e-3, rtol=2e-3)


def test_fusion_attention_dropout_without_a_mask_is_rejected_by_name():
    q, k, v, ql, kl = tnd_case(torch.float16)
    with pytest.raises(NotImplementedError, match="keep_prob < 1 without dropout_mask.*Philox"):
        OPS.npu_fusion_attention(q, k, v, 2, "TND", keep_prob=0.9, actual_seq_qlen=ql, actual_seq_kvlen=kl)
    dy = torch.zeros_like(q)
    with pytest.raises(NotImplementedError, match="keep_prob < 1 without dropout_mask"):
        OPS.npu_fusion_attention_grad(
            q, k, v, dy, 2, "TND", keep_prob=0.9, seed=1, actual_seq_qlen=ql, actual_seq_kvlen=kl
        )


def test_fusion_attention_grad_fake_outputs():
    q = torch.empty((24, 4, 64), dtype=torch.bfloat16, device="meta")
    kv = torch.empty((30, 2, 64), dtype=torch.bfloat16, device="meta")
    dq, dk, dv, dpse, dsink = OPS.npu_fusion_attention_grad(
        q, kv, kv, q, 4, "TND", actual_seq_qlen=[24], actual_seq_kvlen=[30]
    )
    assert dq.shape == q.shape and dk.shape == dv.shape == kv.shape and dpse.numel() == 0 and dsink.numel() == 0


# ------------------------------------------------------------------------------------ autograd


def dense_reference_grads(q, k, v, dy, ql, kl, scale, causal):
    """float64 torch.autograd of plain per-batch dense attention (GQA by repeating KV heads)."""
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    outs, q0, k0 = [], 0, 0
    for q1, k1 in zip(ql, kl):
        qb, kb, vb = q64[q0:q1].transpose(0, 1), k64[k0:k1].transpose(0, 1), v64[k0:k1].transpose(0, 1)
        rep = qb.shape[0] // kb.shape[0]
        kb, vb = kb.repeat_interleave(rep, 0), vb.repeat_interleave(rep, 0)
        s = qb @ kb.transpose(1, 2) * scale
        if causal:  # bottom-right aligned, as sparse_mode 3
            sq, sk = s.shape[1], s.shape[2]
            s = s.masked_fill(torch.ones(sq, sk, dtype=torch.bool).triu(sk - sq + 1), float("-inf"))
        outs.append((s.softmax(-1) @ vb).transpose(0, 1))
        q0, k0 = q1, k1
    torch.cat(outs).backward(dy.double())
    return q64.grad, k64.grad, v64.grad


@pytest.mark.parametrize("dtype, causal", [(torch.float16, False), (torch.bfloat16, True)])
def test_fusion_attention_autograd_matches_v5_golden_and_float64_dense(dtype, causal):
    n, nkv = 4, 2
    g = torch.Generator().manual_seed(11)
    ql, kl = [10, 26], ([14, 30] if not causal else [10, 26])
    q = rand(ql[-1], n, 32, dtype=dtype, gen=g).requires_grad_()
    k, v = (rand(kl[-1], nkv, 32, dtype=dtype, gen=g).requires_grad_() for _ in range(2))
    dy = rand(ql[-1], n, 32, dtype=dtype, gen=g)
    extra = dict(atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool), 1), sparse_mode=3) if causal else {}
    out, smax, ssum, *_ = OPS.npu_fusion_attention(
        q, k, v, n, "TND", scale=0.25, actual_seq_qlen=ql, actual_seq_kvlen=kl, **extra
    )
    out.backward(dy)
    grads = dict(dq=npy(q.grad), dk=npy(k.grad), dv=npy(v.grad))
    assert all(gr.dtype == dtype for gr in (q.grad, k.grad, v.grad))
    # 1. the V5 golden, given the same forward statistics the op saved
    kwargs = dict(
        query=npy(q),
        key=npy(k),
        value=npy(v),
        dy=npy(dy),
        softmax_max=npy(smax),
        softmax_sum=npy(ssum),
        attention_in=npy(out),
        actual_seq_qlen=ql,
        actual_seq_kvlen=kl,
        scale_value=0.25,
        head_num=n,
        input_layout="TND",
        softmax_in_layout="same_as_input",
        **{key: (npy(val) if torch.is_tensor(val) else val) for key, val in extra.items()},
    )
    gold = fakit.golden.flash_attention_unpadding_score_grad_v5(**kwargs)
    bench = fakit.golden.benchmark("flash_attention_unpadding_score_grad_v5", **kwargs)
    report = compare.compare(
        "flash_attention_unpadding_score_grad_v5",
        grads,
        {key: gold[key] for key in grads},
        {key: bench[key] for key in grads},
    )
    assert report.passed, report.summary()
    # 2. independently: float64 autograd of dense attention
    ref = dense_reference_grads(q, k, v, dy, ql, kl, 0.25, causal)
    tol = 2e-2 if dtype == torch.bfloat16 else 4e-3
    for got, want in zip((q.grad, k.grad, v.grad), ref):
        torch.testing.assert_close(got.double(), want, atol=tol, rtol=tol)


def test_fusion_attention_backward_refuses_a_pse_gradient():
    q, k, v, ql, kl = tnd_case(torch.float16, qlen=(8,), kvlen=(8,))
    pse = torch.zeros(1, 2, 8, 8, dtype=torch.float16, requires_grad=True)
    out = OPS.npu_fusion_attention(q, k, v, 2, "TND", pse=pse, actual_seq_qlen=ql, actual_seq_kvlen=kl)[0]
    with pytest.raises(NotImplementedError, match="has no pse gradient"):
        out.sum().backward()


def test_fusion_attention_autograd_traces_under_fake_tensors():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        q = torch.empty(24, 4, 32, dtype=torch.float16, requires_grad=True)
        kv = torch.empty(30, 2, 32, dtype=torch.float16, requires_grad=True)
        out = OPS.npu_fusion_attention(q, kv, kv, 4, "TND", actual_seq_qlen=[24], actual_seq_kvlen=[30])[0]
        out.sum().backward()
        assert q.grad.shape == q.shape and kv.grad.shape == kv.shape and kv.grad.dtype == torch.float16
