"""Helpers of the aclnnSparseFlashAttentionGrad tests: consistent inputs (the sparse forward
golden gives out, softmax_max and softmax_sum), the kernel through fakit.run on the CPU
target, and the judgement by the precision standard (fakit.compare)."""

import ml_dtypes
import numpy as np

import fakit
from fakit import compare, golden

OP = "sparse_flash_attention_grad"
D, DR, TOP_K = 512, 64, 2048
DTYPES = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16}
GRADS = ("d_query", "d_key", "d_value", "d_query_rope", "d_key_rope")


def make_indices(rng, tokens, kv_lens, block, picks, duplicates=False, index_dtype=np.int32, top_k=TOP_K):
    """(tokens, 1, top_k) indices: per token `picks` block ids of its batch's KV (distinct
    unless `duplicates`), padded with -1; kv_lens[t] is the KV length of token t's batch."""
    idx = np.full((tokens, 1, top_k), -1, index_dtype)
    for t in range(tokens):
        blocks = max(1, -(-int(kv_lens[t]) // block))
        n = min(picks, blocks) if not duplicates else picks
        idx[t, 0, :n] = rng.choice(blocks, n, replace=duplicates)
    return idx


def make_kwargs(
    dtype="fp16",
    batch=1,
    s1=4,
    s2=64,
    heads=2,
    block=1,
    picks=16,
    mode=0,
    rope=True,
    seed=0,
    layout="BSND",
    q_lens=None,
    kv_lens=None,
    duplicates=False,
    index_dtype=np.int32,
    deterministic=False,
    top_k=TOP_K,
):
    """Golden keywords of the grad: uniform(-1, 1) inputs and the forward golden's outputs.
    TND takes per-batch q_lens/kv_lens (passed cumulative, as the golden takes them)."""
    rng = np.random.default_rng(seed)
    dt = DTYPES[dtype]
    if layout == "TND":
        q_lens, kv_lens = list(q_lens), list(kv_lens)
        qs, ks = (sum(q_lens),), (sum(kv_lens),)
        tok_kv = np.repeat(kv_lens, q_lens)
        seq = dict(actual_seq_lengths_query=np.cumsum(q_lens), actual_seq_lengths_kv=np.cumsum(kv_lens))
    else:
        qs, ks = (batch, s1), (batch, s2)
        tok_kv = np.full(batch * s1, s2)
        seq = {}
        if q_lens is not None:
            seq = dict(actual_seq_lengths_query=np.asarray(q_lens), actual_seq_lengths_kv=np.asarray(kv_lens))
            tok_kv = np.repeat(kv_lens, s1)

    def u(*shape):
        return rng.uniform(-1, 1, shape).astype(dt)

    tokens = int(np.prod(qs))
    kw = dict(
        query=u(*qs, heads, D),
        key=u(*ks, 1, D),
        value=u(*ks, 1, D),
        sparse_indices=make_indices(rng, tokens, tok_kv, block, picks, duplicates, index_dtype, top_k).reshape(
            *qs, 1, top_k
        ),
        scale_value=(D + DR) ** -0.5,
        sparse_block_size=block,
        sparse_mode=mode,
        **seq,
    )
    if rope:
        kw.update(query_rope=u(*qs, heads, DR), key_rope=u(*ks, 1, DR))
    kw.update(d_out=u(*qs, heads, D), layout=layout, deterministic=deterministic)
    return refresh_forward(kw)


def refresh_forward(kw):
    """(Re)computes out, softmax_max and softmax_sum of kw with the forward golden."""
    fwd_keys = (
        "query",
        "key",
        "value",
        "sparse_indices",
        "scale_value",
        "sparse_block_size",
        "sparse_mode",
        "actual_seq_lengths_query",
        "actual_seq_lengths_kv",
        "query_rope",
        "key_rope",
    )
    fwd = golden.sparse_flash_attention(
        **{k: kw[k] for k in fwd_keys if k in kw}, layout_query=kw["layout"], layout_kv=kw["layout"]
    )
    kw.update(
        out=fwd["attention_out"].astype(kw["query"].dtype),
        softmax_max=fwd["softmax_max"],
        softmax_sum=fwd["softmax_sum"],
    )
    return kw


def run_and_judge(kw):
    """Kernel gradients vs golden (+ same-dtype benchmark) by fakit.compare; returns them."""
    out = fakit.run(OP, backend="cpu", **kw)
    gold = golden.sparse_flash_attention_grad(**kw)
    bench = golden.benchmark(OP, **kw)
    names = [n for n in GRADS if gold[n] is not None]
    for name in names:
        assert out[name].dtype == kw["query"].dtype, f"{name} dtype {out[name].dtype}"
    report = compare.compare(OP, {k: out[k] for k in names}, {k: gold[k] for k in names}, {k: bench[k] for k in names})
    assert report.passed, report.summary()
    return out, gold
