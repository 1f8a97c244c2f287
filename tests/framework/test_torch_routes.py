"""How ascend_fa routes torch_npu calls to the APIs that compute them, what it refuses by name,
the fake shapes, and torch.compile / torch.library.opcheck of every op (small shapes: the cpu
target runs the kernels on the emulator)."""

import pytest
import torch

import ascend_fa  # noqa: F401

OPS = torch.ops.ascend_fa
SDPA = torch.nn.functional.scaled_dot_product_attention


def rand(*shape, dtype=torch.float16, seed=0):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed)).sub(0.5).to(dtype)


def qkv(b=2, n=2, s=16, d=32, kv_s=None, seed=0):
    return rand(b, n, s, d, seed=seed), rand(b, n, kv_s or s, d, seed=seed + 1), rand(b, n, kv_s or s, d, seed=seed + 2)


LAYOUT = {
    "BNSD": lambda x: x,
    "BSND": lambda x: x.transpose(1, 2).contiguous(),
    "BSH": lambda x: x.transpose(1, 2).flatten(2).contiguous(),
    "SBH": lambda x: x.permute(2, 0, 1, 3).flatten(2).contiguous(),
}


# ------------------------------------------------------------------------- npu_fusion_attention


@pytest.mark.parametrize("layout", list(LAYOUT))
def test_fusion_attention_every_dense_layout_with_autograd(layout):
    q, k, v = qkv()
    conv = LAYOUT[layout]
    leaves = [conv(t).requires_grad_() for t in (q, k, v)]
    out, smax, ssum, sout, seed, offset, numels = OPS.npu_fusion_attention(*leaves, 2, layout, scale=0.2)
    assert smax.shape == ssum.shape == (2, 2, 16, 8) and (seed, offset, numels) == (0, 0, 0)
    torch.testing.assert_close(
        out.float(), conv(SDPA(q.float(), k.float(), v.float(), scale=0.2)), atol=2e-3, rtol=2e-3
    )
    dy = rand(*out.shape, seed=9)
    out.backward(dy)
    ref = [t.detach().double().requires_grad_() for t in (q, k, v)]
    to_bnsd = {
        "BNSD": lambda x: x,
        "BSND": lambda x: x.transpose(1, 2),
        "BSH": lambda x: x.unflatten(2, (2, 32)).transpose(1, 2),
        "SBH": lambda x: x.unflatten(2, (2, 32)).permute(1, 2, 0, 3),
    }[layout]
    SDPA(*ref, scale=0.2).backward(to_bnsd(dy).double())
    for leaf, r in zip(leaves, ref):
        torch.testing.assert_close(leaf.grad.double(), conv(r.grad), atol=4e-3, rtol=4e-3)


def test_fusion_attention_bsh_runs_on_a_view():
    """BSH/BSND reach the kernel as a TND view of the caller's storage (no copy)."""
    from ascend_fa.fusion_attention import _Tnd

    q = rand(2, 16, 64)
    tnd = _Tnd(q, q, 2, "BSH")
    assert tnd.rows(q, 2).data_ptr() == q.data_ptr() and tnd.rows(q, 2).shape == (32, 2, 32)


def test_fusion_attention_dropout_with_a_mask():
    """keep_prob < 1 with dropout_mask: 1 bit per element of [B, N, Sq, Skv], kept values scaled by
    1/keep_prob; the backward receives the same mask."""
    q, k, v = qkv(b=1, s=16)
    bits = torch.rand(1, 2, 16, 16, generator=torch.Generator().manual_seed(3)) < 0.8
    packed = torch.tensor(__import__("numpy").packbits(bits.numpy().reshape(-1), bitorder="little"))
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out, *_, numels = OPS.npu_fusion_attention(*leaves, 2, "BNSD", scale=0.2, keep_prob=0.8, dropout_mask=packed)
    assert numels == 2 * 16 * 16
    ref = [t.double().requires_grad_() for t in (q, k, v)]
    p = torch.softmax(ref[0] @ ref[1].transpose(-1, -2) * 0.2, -1) * bits / 0.8
    torch.testing.assert_close(out.double(), p @ ref[2], atol=3e-3, rtol=3e-3)
    dy = rand(*out.shape, seed=4)
    out.backward(dy)
    (p @ ref[2]).backward(dy.double())
    for leaf, r in zip(leaves, ref):
        torch.testing.assert_close(leaf.grad.double(), r.grad, atol=5e-3, rtol=5e-3)


def test_fusion_attention_refuses_what_it_cannot_compute():
    q, k, v = qkv()
    with pytest.raises(NotImplementedError, match="has no sink"):
        OPS.npu_fusion_attention(q, k, v, 2, "BNSD", sink=torch.zeros(2))
    with pytest.raises(NotImplementedError, match="atten_mask of shape \\(2, 1, 16, 16\\)"):
        mask = torch.zeros(2, 1, 16, 16, dtype=torch.bool)
        mask[1, 0, 0, 3] = True
        OPS.npu_fusion_attention(q, k, v, 2, "BNSD", atten_mask=mask)
    with pytest.raises(NotImplementedError, match="pse of shape \\(2, 2, 1, 16\\)"):
        OPS.npu_fusion_attention(q, k, v, 2, "BNSD", pse=rand(2, 2, 1, 16))


def test_fusion_attention_grad_with_sink_returns_dsink():
    q, k, v = (t[0].transpose(0, 1).contiguous() for t in qkv(b=1, s=8))  # TND [8, 2, 32]
    out, smax, ssum, *_ = OPS.npu_fusion_attention(
        q, k, v, 2, "TND", scale=0.2, actual_seq_qlen=[8], actual_seq_kvlen=[8]
    )
    dq, dk, dv, dpse, dsink = OPS.npu_fusion_attention_grad(
        q,
        k,
        v,
        rand(8, 2, 32, seed=5),
        2,
        "TND",
        softmax_max=smax,
        softmax_sum=ssum,
        attention_in=out,
        scale_value=0.2,
        actual_seq_qlen=[8],
        actual_seq_kvlen=[8],
        sink=torch.zeros(2),
    )
    assert dsink.shape == (2,) and dsink.dtype == torch.float32 and dpse.numel() == 0


# -------------------------------------------------------------------------- inference routes


def test_prompt_flash_attention_honours_pse_shift_and_kv_lengths():
    q, k, v = qkv()
    pse = rand(2, 2, 16, 16, seed=7) * 4
    out = OPS.npu_prompt_flash_attention(q, k, v, pse_shift=pse, num_heads=2, scale_value=0.2, input_layout="BNSD")
    torch.testing.assert_close(
        out.float(), SDPA(q.float(), k.float(), v.float(), attn_mask=pse.float(), scale=0.2), atol=3e-3, rtol=3e-3
    )
    out = OPS.npu_prompt_flash_attention(
        q,
        k,
        v,
        num_heads=2,
        scale_value=0.2,
        input_layout="BNSD",
        actual_seq_lengths=[16, 10],
        actual_seq_lengths_kv=[16, 5],
    )
    ref = SDPA(q[1:, :, :10].float(), k[1:, :, :5].float(), v[1:, :, :5].float(), scale=0.2)
    torch.testing.assert_close(out[1:, :, :10].float(), ref, atol=2e-3, rtol=2e-3)
    assert out[1:, :, 10:].abs().max() == 0


def test_prompt_flash_attention_pse_it_cannot_map_raises():
    q, k, v = qkv()
    with pytest.raises(NotImplementedError, match="pse_shift of shape"):
        OPS.npu_prompt_flash_attention(
            q, k, v, pse_shift=rand(2, 2, 16, 16), num_heads=2, input_layout="BNSD", actual_seq_lengths_kv=[16, 5]
        )


@pytest.mark.parametrize("sparse_mode", [2, 3])
def test_prompt_flash_attention_sparse_modes_and_tnd(sparse_mode):
    q, k, v = qkv(s=8, kv_s=12)
    mask = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), 1)
    out = OPS.npu_prompt_flash_attention(
        q, k, v, atten_mask=mask, sparse_mode=sparse_mode, num_heads=2, scale_value=0.2, input_layout="BNSD"
    )
    shift = 1 if sparse_mode == 2 else 12 - 8 + 1  # top-left / bottom-right causal
    keep = ~torch.ones(8, 12, dtype=torch.bool).triu(shift)
    torch.testing.assert_close(
        out.float(), SDPA(q.float(), k.float(), v.float(), attn_mask=keep, scale=0.2), atol=2e-3, rtol=2e-3
    )
    # the same call in TND
    qt, kt = q.transpose(1, 2).flatten(0, 1), k.transpose(1, 2).flatten(0, 1)
    vt = rand(24, 2, 32, seed=8)
    out = OPS.npu_prompt_flash_attention(
        qt,
        kt,
        vt,
        atten_mask=mask,
        sparse_mode=sparse_mode,
        num_heads=2,
        scale_value=0.2,
        input_layout="TND",
        actual_seq_lengths=[8, 16],
        actual_seq_lengths_kv=[12, 24],
    )
    assert out.shape == (16, 2, 32)
    ref = SDPA(q[0].float(), k[0].float(), vt[:12].transpose(0, 1).float(), attn_mask=keep, scale=0.2)
    torch.testing.assert_close(out[:8].float(), ref.transpose(0, 1), atol=2e-3, rtol=2e-3)


def test_prompt_flash_attention_int8_output_on_one_query_row():
    q, k, v = qkv(s=1, kv_s=16)
    out = OPS.npu_prompt_flash_attention(
        q, k, v, quant_scale2=torch.tensor([50.0]), num_heads=2, scale_value=0.2, input_layout="BNSD"
    )
    ref = (SDPA(q.float(), k.float(), v.float(), scale=0.2) * 50).round().clamp(-128, 127)
    assert out.dtype == torch.int8 and (out.float() - ref).abs().max() <= 1
    q, k, v = qkv()
    with pytest.raises(NotImplementedError, match="quant_scale2/quant_offset2 \\(int8 output\\)"):
        OPS.npu_prompt_flash_attention(q, k, v, quant_scale2=torch.tensor([50.0]), num_heads=2, input_layout="BNSD")


def test_inference_ops_raise_on_backward():
    q, k, v = (t.requires_grad_() for t in qkv())
    out = OPS.npu_prompt_flash_attention(q, k, v, num_heads=2, input_layout="BNSD")
    assert out.grad_fn is not None
    with pytest.raises(NotImplementedError, match="npu_prompt_flash_attention has no backward"):
        out.sum().backward()
    out, _ = OPS.npu_fused_infer_attention_score(q, k, v, num_heads=2, input_layout="BNSD")
    with pytest.raises(NotImplementedError, match="npu_fused_infer_attention_score has no backward"):
        out.sum().backward()


def test_fused_infer_attention_score_decode_paged_and_prefill_lse():
    b, n, d, blk = 2, 2, 32, 16
    q = rand(b, 1, n * d, seed=1)
    cache_k, cache_v = rand(4, blk, n * d, seed=2), rand(4, blk, n * d, seed=3)  # 4 blocks of 16 tokens
    table = torch.tensor([[2, 0], [1, 3]], dtype=torch.int32)
    out, lse = OPS.npu_fused_infer_attention_score(
        q,
        cache_k,
        cache_v,
        block_table=table,
        block_size=blk,
        actual_seq_lengths_kv=[20, 32],
        num_heads=n,
        scale=0.2,
        input_layout="BSH",
    )
    assert out.shape == (b, 1, n * d) and lse.numel() == 0
    for i, length in enumerate([20, 32]):
        keys = torch.cat([cache_k[j] for j in table[i]])[:length].unflatten(1, (n, d)).transpose(0, 1).float()
        vals = torch.cat([cache_v[j] for j in table[i]])[:length].unflatten(1, (n, d)).transpose(0, 1).float()
        ref = SDPA(q[i].unflatten(1, (n, d)).transpose(0, 1).float(), keys, vals, scale=0.2)
        torch.testing.assert_close(out[i].unflatten(1, (n, d)).transpose(0, 1).float(), ref, atol=2e-3, rtol=2e-3)
    q, k, v = qkv()
    out, lse = OPS.npu_fused_infer_attention_score(
        q, k, v, num_heads=2, scale=0.2, input_layout="BNSD", softmax_lse_flag=True
    )
    assert lse.shape == (2, 2, 16, 1)
    torch.testing.assert_close(
        lse, torch.logsumexp(q.float() @ k.float().transpose(-1, -2) * 0.2, -1, keepdim=True), atol=1e-3, rtol=1e-3
    )
    with pytest.raises(NotImplementedError, match="query_rope"):
        OPS.npu_fused_infer_attention_score(q, k, v, num_heads=2, input_layout="BNSD", query_rope=q)


# -------------------------------------------------------------------------------- fake shapes


def test_fake_shapes_and_dtypes_follow_torch_npu():
    meta = dict(device="meta")
    q = torch.empty(2, 16, 64, dtype=torch.float16, **meta)
    out, smax, *_ = OPS.npu_fusion_attention(q, q, q, 2, "BSH")
    assert out.shape == (2, 16, 64) and smax.shape == (2, 2, 16, 8)
    qt, vt = torch.empty(24, 2, 32, dtype=torch.float16, **meta), torch.empty(24, 2, 16, dtype=torch.float16, **meta)
    assert OPS.npu_prompt_flash_attention(qt, qt, vt, num_heads=2, input_layout="TND").shape == (24, 2, 16)
    q8 = torch.empty(1, 2, 16, 32, dtype=torch.int8, **meta)
    assert OPS.npu_prompt_flash_attention(q8, q8, q8, num_heads=2, input_layout="BNSD").dtype == torch.float16
    out, lse = OPS.npu_fused_infer_attention_score(q8, q8, q8, num_heads=2, input_layout="BNSD", softmax_lse_flag=True)
    assert out.dtype == torch.float16 and lse.shape == (1, 2, 16, 1)


# ------------------------------------------------------------------- torch.compile and opcheck


def _calls():
    q, k, v = qkv(b=1, s=8)
    t = q[0].transpose(0, 1).contiguous()
    out, smax, ssum, *_ = OPS.npu_fusion_attention(q, k, v, 2, "BNSD", scale=0.2)
    return {
        "npu_prompt_flash_attention": ((q, k, v), dict(num_heads=2, input_layout="BNSD", scale_value=0.2)),
        "npu_incre_flash_attention": ((q[:, :, :1], k, v), dict(num_heads=2, input_layout="BNSD")),
        "npu_fused_infer_attention_score": ((q, k, v), dict(num_heads=2, input_layout="BNSD", softmax_lse_flag=True)),
        "npu_fusion_attention": ((q, k, v, 2, "BNSD"), dict(scale=0.2)),
        "npu_fusion_attention_grad": (
            (q, k, v, out, 2, "BNSD"),
            dict(softmax_max=smax, softmax_sum=ssum, attention_in=out, scale_value=0.2),
        ),
        "npu_fusion_attention_tnd": ((t, t, t, 2, "TND"), dict(actual_seq_qlen=[8], actual_seq_kvlen=[8])),
    }


@pytest.mark.parametrize("name", list(_calls()))
def test_opcheck_and_compile(name):
    args, kwargs = _calls()[name]
    op = getattr(OPS, name.replace("_tnd", ""))
    torch.library.opcheck(
        op.default, args, kwargs, test_utils=("test_schema", "test_faketensor", "test_autograd_registration")
    )
    eager = op(*args, **kwargs)
    compiled = torch.compile(lambda *a: op(*a, **kwargs), backend="aot_eager", fullgraph=True)(*args)
    for e, c in zip(
        eager if isinstance(eager, tuple) else (eager,), compiled if isinstance(compiled, tuple) else (compiled,)
    ):
        if isinstance(e, torch.Tensor):
            torch.testing.assert_close(c, e, atol=0, rtol=0)


def test_sparse_ops_trace_with_fake_tensors():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        q, kv = torch.empty(4, 2, 512, dtype=torch.bfloat16), torch.empty(4, 1, 512, dtype=torch.bfloat16)
        qr, kr = torch.empty(4, 2, 64, dtype=torch.bfloat16), torch.empty(4, 1, 64, dtype=torch.bfloat16)
        idx = torch.empty(4, 1, 2048, dtype=torch.int32)
        out, smax, ssum = OPS.npu_sparse_flash_attention(
            q,
            kv,
            kv,
            idx,
            0.04,
            query_rope=qr,
            key_rope=kr,
            layout_query="TND",
            layout_kv="TND",
            return_softmax_lse=True,
        )
        assert out.shape == q.shape and smax.shape == (1, 4, 2)
        grads = OPS.npu_sparse_flash_attention_grad(
            q, kv, kv, idx, out, out, smax, ssum, 0.04, 1, query_rope=qr, key_rope=kr, layout="TND"
        )
        assert [g.shape for g in grads] == [q.shape, kv.shape, kv.shape, qr.shape, kr.shape]


def test_fusion_attention_gqa_in_a_copied_layout():
    """SBH (a copy to TND) with 4 query heads on 2 KV heads, against SDPA with enable_gqa."""
    q, k, v = rand(2, 4, 16, 32, seed=1), rand(2, 2, 16, 32, seed=2), rand(2, 2, 16, 32, seed=3)
    sbh = LAYOUT["SBH"]
    out = OPS.npu_fusion_attention(sbh(q), sbh(k), sbh(v), 4, "SBH", scale=0.2)[0]
    ref = SDPA(q.float(), k.float(), v.float(), scale=0.2, enable_gqa=True)
    torch.testing.assert_close(out.float(), sbh(ref), atol=2e-3, rtol=2e-3)
