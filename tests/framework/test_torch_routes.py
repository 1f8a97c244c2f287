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
    with pytest.raises(NotImplementedError, match="sink is run as a leading key .* not with sparse_mode 4"):
        mask = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), 1)
        OPS.npu_fusion_attention(q, k, v, 2, "BNSD", sink=torch.zeros(2), atten_mask=mask, sparse_mode=4)
    with pytest.raises(NotImplementedError, match="atten_mask of shape \\(1, 2, 16, 16\\)"):
        mask = torch.zeros(1, 2, 16, 16, dtype=torch.bool)
        mask[0, 1, 0, 3] = True  # differs between heads
        OPS.npu_fusion_attention(q, k, v, 2, "BNSD", atten_mask=mask)
    with pytest.raises(NotImplementedError, match="pse of shape \\(2, 2, 1, 16\\)"):
        OPS.npu_fusion_attention(q, k, v, 2, "BNSD", pse=rand(2, 2, 1, 16))


def sink_reference(q, k, v, sink, scale, causal_rows=None):
    """float64 attention with a per-head sink logit in the softmax's denominator ([N, S, D] inputs)."""
    s = q @ k.transpose(-1, -2) * scale
    if causal_rows is not None:  # bottom-right causal
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(s.shape[-1] - s.shape[-2] + 1), float("-inf"))
    col = sink[:, None, None].expand(-1, s.shape[1], 1)
    p = torch.softmax(torch.cat([col, s], -1), -1)[..., 1:]
    return p @ v


@pytest.mark.parametrize("layout", ["BNSD", "TND"])
def test_fusion_attention_sink_forward_and_backward(layout):
    """sink as a leading key with a realShift column: forward against float64, and the autograd
    gradients of query/key/value and sink (dsink from the V5 grad) against float64 autograd."""
    sink = torch.tensor([0.7, -0.4], dtype=torch.float32, requires_grad=True)
    if layout == "BNSD":
        q, k, v = (t.requires_grad_() for t in qkv())
        out = OPS.npu_fusion_attention(q, k, v, 2, "BNSD", scale=0.2, sink=sink)[0]
        ref_in = [t.detach().double().requires_grad_() for t in (q, k, v)]
        s64 = sink.detach().double().requires_grad_()
        ref = torch.stack([sink_reference(*(t[b] for t in ref_in), s64, 0.2) for b in range(2)])
    else:  # two batches (6 and 10 queries on 8 and 12 keys), causal
        q, k, v = rand(16, 2, 32, seed=1), rand(20, 2, 32, seed=2), rand(20, 2, 32, seed=3)
        q, k, v = (t.requires_grad_() for t in (q, k, v))
        mask = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), 1)
        out = OPS.npu_fusion_attention(
            q,
            k,
            v,
            2,
            "TND",
            scale=0.2,
            sink=sink,
            atten_mask=mask,
            sparse_mode=3,
            actual_seq_qlen=[6, 16],
            actual_seq_kvlen=[8, 20],
        )[0]
        ref_in = [t.detach().double().requires_grad_() for t in (q, k, v)]
        s64 = sink.detach().double().requires_grad_()
        parts = [
            sink_reference(
                ref_in[0][a:b].transpose(0, 1),
                ref_in[1][c:d].transpose(0, 1),
                ref_in[2][c:d].transpose(0, 1),
                s64,
                0.2,
                causal_rows=True,
            ).transpose(0, 1)
            for a, b, c, d in ((0, 6, 0, 8), (6, 16, 8, 20))
        ]
        ref = torch.cat(parts)
    torch.testing.assert_close(out.double(), ref, atol=3e-3, rtol=3e-3)
    dy = rand(*out.shape, seed=7)
    out.backward(dy)
    ref.backward(dy.double())
    for leaf, r in zip((q, k, v, sink), (*ref_in, s64)):
        torch.testing.assert_close(leaf.grad.double(), r.grad, atol=5e-3, rtol=5e-3)


def test_reserved_arguments_raise_when_given():
    q, k, v = qkv()
    with pytest.raises(NotImplementedError, match="padding_mask is reserved"):
        OPS.npu_fusion_attention(q, k, v, 2, "BNSD", padding_mask=torch.ones(2, 2, 16, 16))
    with pytest.raises(NotImplementedError, match="padding_mask is reserved"):
        OPS.npu_prompt_flash_attention(q, k, v, num_heads=2, input_layout="BNSD", padding_mask=torch.ones(1))
    with pytest.raises(NotImplementedError, match="softmax_in is reserved"):
        OPS.npu_fusion_attention_grad(q, k, v, q, 2, "BNSD", softmax_in=torch.ones(1))


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


def _sparse_grad_call():
    """A two-token TND call of npu_sparse_flash_attention_grad (D 512 + rope 64, one KV head,
    K = 2048 indices as the API requires) with forward statistics from fakit.golden."""
    import fakit

    t, n = 2, 2
    query, key, value = rand(t, n, 512, dtype=torch.bfloat16), rand(t, 1, 512, seed=1), rand(t, 1, 512, seed=2)
    key, value = key.to(torch.bfloat16), value.to(torch.bfloat16)
    qr, kr = rand(t, n, 64, dtype=torch.bfloat16, seed=3), rand(t, 1, 64, dtype=torch.bfloat16, seed=4)
    idx = torch.full((t, 1, 2048), -1, dtype=torch.int32)
    idx[0, 0, 0], idx[1, 0, :2] = 0, torch.arange(2)
    lengths = torch.tensor([2])
    npy = ascend_fa.to_numpy
    fwd = fakit.golden.sparse_flash_attention(
        npy(query),
        npy(key),
        npy(value),
        npy(idx),
        scale_value=0.04,
        actual_seq_lengths_query=lengths.numpy(),
        actual_seq_lengths_kv=lengths.numpy(),
        query_rope=npy(qr),
        key_rope=npy(kr),
        layout_query="TND",
        layout_kv="TND",
        sparse_block_size=1,
        sparse_mode=3,
    )
    out = ascend_fa.from_numpy(fwd["attention_out"], torch.bfloat16)
    smax, ssum = (torch.from_numpy(fwd[k].astype("float32")) for k in ("softmax_max", "softmax_sum"))
    args = (query, key, value, idx, rand(t, n, 512, dtype=torch.bfloat16, seed=5), out, smax, ssum, 0.04, 1)
    return args, dict(query_rope=qr, key_rope=kr, actual_seq_qlen=lengths, actual_seq_kvlen=lengths, layout="TND")


def test_opcheck_and_compile_sparse_grad():
    args, kwargs = _sparse_grad_call()
    op = OPS.npu_sparse_flash_attention_grad
    torch.library.opcheck(
        op.default, args, kwargs, test_utils=("test_schema", "test_faketensor", "test_autograd_registration")
    )
    eager = op(*args, **kwargs)
    compiled = torch.compile(lambda *a: op(*a, **kwargs), backend="aot_eager", fullgraph=True)(*args)
    for e, c in zip(eager, compiled):
        torch.testing.assert_close(c, e, atol=0, rtol=0)


def test_sparse_forward_traces_and_compiles_on_meta_tensors():
    """No kernel computes the sparse forward, so its checks run on meta tensors (the fake kernel)."""
    meta = dict(device="meta", dtype=torch.bfloat16)
    q, kv = torch.empty(4, 2, 512, **meta), torch.empty(4, 1, 512, **meta)
    qr, kr = torch.empty(4, 2, 64, **meta), torch.empty(4, 1, 64, **meta)
    idx = torch.empty(4, 1, 2048, dtype=torch.int32, device="meta")
    kwargs = dict(query_rope=qr, key_rope=kr, layout_query="TND", layout_kv="TND", return_softmax_lse=True)
    op = OPS.npu_sparse_flash_attention
    torch.library.opcheck(
        op.default,
        (q, kv, kv, idx, 0.04),
        kwargs,
        test_utils=("test_schema", "test_faketensor", "test_autograd_registration"),
    )
    out, smax, ssum = torch.compile(lambda *a: op(*a, **kwargs), backend="aot_eager", fullgraph=True)(
        q, kv, kv, idx, 0.04
    )
    assert out.shape == q.shape and smax.shape == ssum.shape == (1, 4, 2) and smax.dtype == torch.float32


def test_fusion_attention_gqa_in_a_copied_layout():
    """SBH (a copy to TND) with 4 query heads on 2 KV heads, against SDPA with enable_gqa."""
    q, k, v = rand(2, 4, 16, 32, seed=1), rand(2, 2, 16, 32, seed=2), rand(2, 2, 16, 32, seed=3)
    sbh = LAYOUT["SBH"]
    out = OPS.npu_fusion_attention(sbh(q), sbh(k), sbh(v), 4, "SBH", scale=0.2)[0]
    ref = SDPA(q.float(), k.float(), v.float(), scale=0.2, enable_gqa=True)
    torch.testing.assert_close(out.float(), sbh(ref), atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("layout", ["BSH", "SBH"])
def test_fusion_attention_per_batch_padding_mask_runs_batch_by_batch(layout):
    """A B1SS mask that differs between batches (key padding) runs one varlen call per batch,
    forward and backward."""
    q, k, v = qkv()
    mask = torch.zeros(2, 1, 16, 16, dtype=torch.bool)
    mask[1, ..., 11:] = True  # batch 1: 5 padded keys
    conv = LAYOUT[layout]
    leaves = [conv(t).requires_grad_() for t in (q, k, v)]
    out = OPS.npu_fusion_attention(*leaves, 2, layout, atten_mask=mask, scale=0.2)[0]
    ref = [t.detach().double().requires_grad_() for t in (q, k, v)]
    expect = SDPA(*ref, attn_mask=~mask, scale=0.2)
    torch.testing.assert_close(out.double(), conv(expect), atol=2e-3, rtol=2e-3)
    dy = rand(2, 2, 16, 32, seed=6)
    out.backward(conv(dy))
    expect.backward(dy.double())
    for leaf, r in zip(leaves, ref):
        torch.testing.assert_close(leaf.grad.double(), conv(r.grad), atol=4e-3, rtol=4e-3)


def test_prompt_flash_attention_per_batch_mask_with_kv_lengths():
    """Key lengths send the call to the varlen API; its per-batch mask then runs batch by batch."""
    q, k, v = qkv()
    mask = torch.zeros(2, 1, 16, 16, dtype=torch.bool)
    mask[0, ..., 2] = True
    out = OPS.npu_prompt_flash_attention(
        q,
        k,
        v,
        atten_mask=mask,
        num_heads=2,
        scale_value=0.2,
        input_layout="BNSD",
        actual_seq_lengths_kv=[16, 12],
        next_tokens=65535,
    )
    keep = ~mask.clone()
    keep[1, ..., 12:] = False
    torch.testing.assert_close(
        out.float(), SDPA(q.float(), k.float(), v.float(), attn_mask=keep, scale=0.2), atol=2e-3, rtol=2e-3
    )
