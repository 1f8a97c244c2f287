"""torch_npu's documentation examples (Ascend/op-plugin docs/context/torch_npu-<op>.md), run with
`torch_npu.` replaced by `torch.ops.ascend_fa.` and `.npu()` dropped (CPU tensors run on the cpu
target), judged against scaled_dot_product_attention or a float64 reference."""

import math

import numpy as np
import pytest
import torch

import ascend_fa  # noqa: F401  (registers torch.ops.ascend_fa)
import fakit

SDPA = torch.nn.functional.scaled_dot_product_attention


def test_prompt_flash_attention_example():
    q = torch.randn(1, 8, 164, 128, dtype=torch.float16)
    k = torch.randn(1, 8, 1024, 128, dtype=torch.float16)
    v = torch.randn(1, 8, 1024, 128, dtype=torch.float16)
    scale = 1 / math.sqrt(128.0)
    actseqlen = [164]
    actseqlenkv = [1024]
    out = torch.ops.ascend_fa.npu_prompt_flash_attention(
        q,
        k,
        v,
        actual_seq_lengths=actseqlen,
        actual_seq_lengths_kv=actseqlenkv,
        num_heads=8,
        input_layout="BNSD",
        scale_value=scale,
        pre_tokens=65535,
        next_tokens=65535,
    )
    assert out.shape == (1, 8, 164, 128) and out.dtype == torch.float16
    torch.testing.assert_close(out.float(), SDPA(q.float(), k.float(), v.float(), scale=scale), atol=2e-3, rtol=2e-3)


def test_incre_flash_attention_example():
    q = torch.randn(2, 1, 40 * 128, dtype=torch.float16)
    k = torch.randn(2, 1, 40 * 128, dtype=torch.float16)
    v = torch.randn(2, 1, 40 * 128, dtype=torch.float16)
    scale = 1 / math.sqrt(128.0)
    out = torch.ops.ascend_fa.npu_incre_flash_attention(q, k, v, num_heads=40, input_layout="BSH", scale_value=scale)
    # one key per batch: the output is the value
    torch.testing.assert_close(out, v)


def test_incre_flash_attention_graph_example():
    """The graph-mode example (torch.compile, fullgraph) with a mask of a few masked keys
    (the doc's randn().bool() masks nearly every key)."""
    q = torch.randn(2, 1, 40 * 128, dtype=torch.float16)
    k = torch.randn(2, 2048, 40 * 128, dtype=torch.float16)
    v = torch.randn(2, 2048, 40 * 128, dtype=torch.float16)
    atten = torch.rand(2, 1, 1, 2048) < 0.1
    scale_value = 1 / math.sqrt(128.0)

    class Model(torch.nn.Module):
        def forward(self):
            return torch.ops.ascend_fa.npu_incre_flash_attention(
                q, k, v, num_heads=40, input_layout="BSH", scale_value=scale_value, atten_mask=atten
            )

    with torch.no_grad():
        graph_output = torch.compile(Model(), backend="aot_eager", dynamic=False, fullgraph=True)()
    single_op = torch.ops.ascend_fa.npu_incre_flash_attention(
        q, k, v, num_heads=40, input_layout="BSH", scale_value=scale_value, atten_mask=atten
    )
    assert single_op.shape == graph_output.shape == (2, 1, 5120)
    torch.testing.assert_close(graph_output, single_op, atol=0, rtol=0)
    bnsd = [t.reshape(2, -1, 40, 128).transpose(1, 2).float() for t in (q, k, v)]
    ref = SDPA(*bnsd, attn_mask=~atten, scale=scale_value).transpose(1, 2).reshape(2, 1, 5120)
    torch.testing.assert_close(single_op.float(), ref, atol=2e-3, rtol=2e-3)


def test_fused_infer_attention_score_example():
    q = torch.randn(1, 8, 164, 128, dtype=torch.float16)
    k = torch.randn(1, 8, 1024, 128, dtype=torch.float16)
    v = torch.randn(1, 8, 1024, 128, dtype=torch.float16)
    scale = 1 / math.sqrt(128.0)
    actseqlen = [164]
    actseqlenkv = [1024]
    out, _ = torch.ops.ascend_fa.npu_fused_infer_attention_score(
        q,
        k,
        v,
        actual_seq_lengths=actseqlen,
        actual_seq_lengths_kv=actseqlenkv,
        num_heads=8,
        input_layout="BNSD",
        scale=scale,
        pre_tokens=65535,
        next_tokens=65535,
    )
    torch.testing.assert_close(out.float(), SDPA(q.float(), k.float(), v.float(), scale=scale), atol=2e-3, rtol=2e-3)


class TestNPUFlashAttention:
    """The npu_fusion_attention example: BNSD, sparse modes 0-4 against the doc's reference."""

    def supported_op_exec(self, query, key, value, atten_mask):
        scale = 0.08838
        qk = torch.matmul(query, key.transpose(2, 3)).mul(scale)
        qk = qk + atten_mask * (-10000.0)
        softmax_res = torch.nn.functional.softmax(qk, dim=-1)
        attention_out = torch.matmul(softmax_res, value)
        return attention_out

    def custom_op_exec(self, query, key, value, sparse_params):
        scale = 0.08838
        atten_mask = None
        if sparse_params[0] == 0:
            shape = [1, 8, 256, 256]
            mask = torch.ones(shape, dtype=torch.bool)
            atten_mask_u = torch.triu(mask, diagonal=sparse_params[1] + 1)
            atten_mask_l = torch.tril(mask, diagonal=-sparse_params[2] - 1)
            atten_mask = atten_mask_u | atten_mask_l
        if sparse_params[0] == 2 or sparse_params[0] == 3 or sparse_params[0] == 4:
            atten_mask = torch.triu(torch.ones(2048, 2048, dtype=torch.bool), diagonal=1)
        return torch.ops.ascend_fa.npu_fusion_attention(
            query,
            key,
            value,
            head_num=8,
            input_layout="BNSD",
            scale=scale,
            sparse_mode=sparse_params[0],
            atten_mask=atten_mask,
            pre_tockens=sparse_params[1],
            next_tockens=sparse_params[2],
        )

    def get_atten_mask(self, sparse_mode=0, pre_tokens=65536, next_tokens=65536):
        shape = [1, 8, 256, 256]
        if sparse_mode == 0 or sparse_mode == 4:
            atten_masks = np.triu(np.ones(shape), k=next_tokens + 1) + np.tril(np.ones(shape), k=-pre_tokens - 1)
        elif sparse_mode == 1:
            atten_masks = np.zeros(shape)
        else:
            atten_masks = np.triu(np.ones(shape), k=1)
        return torch.tensor(atten_masks).to(torch.float16)

    def check_result(self, query, key, value, sparse_params):
        atten_mask = self.get_atten_mask(sparse_params[0], sparse_params[1], sparse_params[2])
        output = self.supported_op_exec(query.float(), key.float(), value.float(), atten_mask)
        fa_result = self.custom_op_exec(query, key, value, sparse_params)
        torch.testing.assert_close(fa_result[0].float(), output.half().float(), atol=0.01, rtol=0.01)

    # the doc's head size is 256; 64 keeps the cpu target quick
    @pytest.mark.parametrize(
        "sparse_params", [[0, 128, 128], [1, 65536, 65536], [2, 65536, 0], [3, 65536, 0], [4, 128, 128]]
    )
    def test_npu_flash_attention(self, sparse_params):
        query = torch.randn(1, 8, 256, 64, dtype=torch.float16)
        key = torch.randn(1, 8, 256, 64, dtype=torch.float16)
        value = torch.randn(1, 8, 256, 64, dtype=torch.float16)
        self.check_result(query, key, value, sparse_params)


def test_fusion_attention_backward_returns_five_gradients_like_torch_npu():
    """The doc example's call with requires_grad: the backward goes through npu_fusion_attention_grad,
    which returns torch_npu's five tensors (dq, dk, dv, dpse, dsink); gradients against float64 autograd."""
    query, key, value = (torch.randn(1, 8, 64, 32, dtype=torch.float16, requires_grad=True) for _ in range(3))
    out = torch.ops.ascend_fa.npu_fusion_attention(query, key, value, head_num=8, input_layout="BNSD", scale=0.08838)
    dy = torch.randn_like(out[0])
    out[0].backward(dy)
    grads = torch.ops.ascend_fa.npu_fusion_attention_grad(
        query.detach(),
        key.detach(),
        value.detach(),
        dy,
        8,
        "BNSD",
        softmax_max=out[1],
        softmax_sum=out[2],
        attention_in=out[0].detach(),
        scale_value=0.08838,
    )
    assert len(grads) == 5 and grads[3].numel() == 0 and grads[4].numel() == 0
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (query, key, value))
    SDPA(q64, k64, v64, scale=0.08838).backward(dy.double())
    for ours, op_grad, ref in (
        (query.grad, grads[0], q64.grad),
        (key.grad, grads[1], k64.grad),
        (value.grad, grads[2], v64.grad),
    ):
        torch.testing.assert_close(ours, op_grad, atol=0, rtol=0)
        torch.testing.assert_close(ours.double(), ref, atol=5e-3, rtol=5e-3)


def test_sparse_flash_attention_grad_call_as_torch_npu_users_make_it():
    """TND MLA call (one KV head, D=512 + rope 64, sparse_block_size 1, sparse_mode 3) with the forward
    statistics from fakit.golden; gradients against float64 autograd of the gathered attention."""
    g = torch.Generator().manual_seed(1)
    t, n, d, dr, topk = 6, 2, 512, 64, 2048
    u = lambda *s: torch.rand(*s, generator=g).sub(0.5).to(torch.bfloat16)  # noqa: E731
    query, key, value = u(t, n, d), u(t, 1, d), u(t, 1, d)
    query_rope, key_rope = u(t, n, dr), u(t, 1, dr)
    lengths = torch.tensor([2, 6], dtype=torch.int64)  # cumulative: batches of 2 and 4
    starts = [0, 0, 2, 2, 2, 2]
    rows = [0, 1, 0, 1, 2, 3]
    sparse_indices = torch.full((t, 1, topk), -1, dtype=torch.int32)
    for i, r in enumerate(rows):
        sparse_indices[i, 0, : r + 1] = torch.arange(r + 1)  # causal: every visible key
    scale = (d + dr) ** -0.5
    npy = ascend_fa.to_numpy
    fwd = fakit.golden.sparse_flash_attention(
        npy(query),
        npy(key),
        npy(value),
        npy(sparse_indices),
        scale_value=scale,
        actual_seq_lengths_query=lengths.numpy(),
        actual_seq_lengths_kv=lengths.numpy(),
        query_rope=npy(query_rope),
        key_rope=npy(key_rope),
        layout_query="TND",
        layout_kv="TND",
        sparse_block_size=1,
        sparse_mode=3,
    )
    out = ascend_fa.from_numpy(fwd["attention_out"], torch.bfloat16)
    softmax_max = torch.from_numpy(np.asarray(fwd["softmax_max"], np.float32))
    softmax_sum = torch.from_numpy(np.asarray(fwd["softmax_sum"], np.float32))
    d_out = u(t, n, d)
    dq, dk, dv, dqr, dkr = torch.ops.ascend_fa.npu_sparse_flash_attention_grad(
        query,
        key,
        value,
        sparse_indices,
        d_out,
        out,
        softmax_max,
        softmax_sum,
        scale,
        1,
        query_rope=query_rope,
        key_rope=key_rope,
        actual_seq_qlen=lengths,
        actual_seq_kvlen=lengths,
        layout="TND",
        sparse_mode=3,
        attention_mode=0,
    )
    leaves = [x.double().requires_grad_() for x in (query, key, value, query_rope, key_rope)]
    q64, k64, v64, qr64, kr64 = leaves
    outs = []
    for i in range(t):
        keys = [starts[i] + j for j in range(rows[i] + 1)]
        s = (q64[i] @ k64[keys, 0].T + qr64[i] @ kr64[keys, 0].T) * scale
        outs.append(torch.softmax(s, -1) @ v64[keys, 0])
    torch.autograd.backward(torch.stack(outs), d_out.double())
    for ours, ref in zip((dq, dk, dv, dqr, dkr), leaves):
        assert ours.shape == ref.shape and ours.dtype == torch.bfloat16
        torch.testing.assert_close(ours.double(), ref.grad, atol=2e-2, rtol=2e-2)


def test_sparse_flash_attention_forward_raises_that_no_kernel_computes_it():
    q, kv = torch.randn(4, 2, 512, dtype=torch.bfloat16), torch.randn(4, 1, 512, dtype=torch.bfloat16)
    idx = torch.zeros(4, 1, 8, dtype=torch.int32)
    with pytest.raises(NotImplementedError, match="no kernel of this package computes the sparse flash attention"):
        torch.ops.ascend_fa.npu_sparse_flash_attention(q, kv, kv, idx, 0.04, layout_query="TND", layout_kv="TND")
