"""npu_sparse_flash_attention_grad on aclnnSparseFlashAttentionGrad, and the forward
npu_sparse_flash_attention, which no kernel of this package computes (registered with torch_npu's
schema and fake shapes so code and graphs using it trace; calling it raises)."""

from __future__ import annotations

import torch

from .runtime import from_numpy, run, to_numpy, unsupported

SFA, SFAG = "npu_sparse_flash_attention", "npu_sparse_flash_attention_grad"
INT64_MAX = 9223372036854775807


def sfa_cpu(query, key, value, sparse_indices, scale_value, **_):
    raise unsupported(
        SFA,
        "no kernel of this package computes the sparse flash attention forward (only its "
        "backward, aclnnSparseFlashAttentionGrad); run it with torch_npu on an NPU",
    )


def sfa_fake(query, key, value, sparse_indices, scale_value, *, layout_query="BSND", return_softmax_lse=False, **_):
    f32 = torch.float32
    if not return_softmax_lse:
        stats = (0,)
    elif layout_query == "TND":
        stats = (key.shape[1], query.shape[0], query.shape[1] // key.shape[1])
    else:
        stats = (query.shape[0], key.shape[2], query.shape[1], query.shape[2] // key.shape[2])
    return query.new_empty(query.shape), query.new_empty(stats, dtype=f32), query.new_empty(stats, dtype=f32)


def _unbounded(tokens):
    """torch_npu's "no limit" is INT64_MAX, the API's 2147483647 (the only value its spec allows)."""
    return 2147483647 if tokens is None or tokens >= 2147483647 else tokens


def sfag_cpu(
    query,
    key,
    value,
    sparse_indices,
    d_out,
    out,
    softmax_max,
    softmax_sum,
    scale_value,
    sparse_block_size,
    query_rope=None,
    key_rope=None,
    actual_seq_qlen=None,
    actual_seq_kvlen=None,
    layout="BSND",
    sparse_mode=3,
    pre_tokens=INT64_MAX,
    next_tokens=INT64_MAX,
    attention_mode=0,
):
    """(d_query, d_key, d_value, d_query_rope, d_key_rope); the rope gradients are empty without
    query_rope. torch_npu passes deterministic=true and does not forward attention_mode either."""
    if value is None:
        raise unsupported(
            SFAG,
            "value=None: aclnnSparseFlashAttentionGrad here needs value (pass key again "
            "when key and value share storage)",
        )
    res = run(
        SFAG,
        "sparse_flash_attention_grad",
        dict(
            query=to_numpy(query),
            key=to_numpy(key),
            value=to_numpy(value),
            sparse_indices=to_numpy(sparse_indices),
            d_out=to_numpy(d_out),
            out=to_numpy(out),
            softmax_max=to_numpy(softmax_max),
            softmax_sum=to_numpy(softmax_sum),
            actual_seq_lengths_query=to_numpy(actual_seq_qlen),
            actual_seq_lengths_kv=to_numpy(actual_seq_kvlen),
            query_rope=to_numpy(query_rope),
            key_rope=to_numpy(key_rope),
            scale_value=scale_value,
            sparse_block_size=sparse_block_size,
            layout="BSND" if layout is None else layout,
            sparse_mode=3 if sparse_mode is None else sparse_mode,
            pre_tokens=_unbounded(pre_tokens),
            next_tokens=_unbounded(next_tokens),
            deterministic=True,
        ),
    )

    def grad(name, like):
        return like.new_empty((0,)) if res[name] is None else from_numpy(res[name], like.dtype).reshape(like.shape)

    return (
        grad("d_query", query),
        grad("d_key", key),
        grad("d_value", value),
        query.new_empty((0,)) if query_rope is None else grad("d_query_rope", query_rope),
        key.new_empty((0,)) if key_rope is None else grad("d_key_rope", key_rope),
    )


def sfag_fake(
    query,
    key,
    value,
    sparse_indices,
    d_out,
    out,
    softmax_max,
    softmax_sum,
    scale_value,
    sparse_block_size,
    query_rope=None,
    key_rope=None,
    *_,
    **__,
):
    return (
        query.new_empty(query.shape),
        key.new_empty(key.shape),
        query.new_empty((0,)) if value is None else value.new_empty(value.shape),
        query.new_empty((0,)) if query_rope is None else query_rope.new_empty(query_rope.shape),
        key.new_empty((0,)) if key_rope is None else key_rope.new_empty(key_rope.shape),
    )
