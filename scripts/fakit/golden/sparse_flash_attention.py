"""Goldens of SparseFlashAttention (forward) and aclnnSparseFlashAttentionGrad.

Each query token t (batch b, row s) attends only to the KV tokens its sparse_indices select:
index i selects the block [i * sparse_block_size, (i + 1) * sparse_block_size). The rule
(docs/golden_decode_sparse.md, after the official golden and kernels):
  threshold = act_kv[b]                          (sparse_mode 0)
            = act_kv[b] - act_q[b] + s + 1       (sparse_mode 3, right-down causal)
  only the first min(K, ceil(threshold / block)) indices are read; a negative index ends the
  list; a block starting at or beyond threshold is skipped, the others are clipped to
  [begin, min(begin + block, threshold)); repeated indices select their tokens again.
score = scale_value * [q, q_rope] . [k, k_rope]; softmax over the selected tokens; rows with
nothing selected output 0 and softmax_max = softmax_sum = 0. softmax_max is the row max of the
scaled scores, softmax_sum the sum of exp(score - max); shapes (B, N2, S1, G) or (N2, T1, G).
"""

import numpy as np

from ._common import INT_MAX, golden_pair, tnd_segments
from ._common import int_seq as _int_seq
from ._common import round_to as _round_to
from .incre_flash_attention import online_softmax_attention

__all__ = [
    "sparse_flash_attention",
    "sparse_flash_attention_benchmark",
    "sparse_flash_attention_grad",
    "sparse_flash_attention_grad_benchmark",
]

_BIG = 2147483647
_CHUNK_ELEMS = 1 << 22  # gathered K elements per query chunk (~32 MiB in float64)


class _Tokens:
    """One side (query or KV) flattened to (T, N, D) with per-batch offsets and lengths."""

    def __init__(self, x, layout, lengths, name, batch=None):
        x = np.asarray(x)
        if layout == "TND":
            if x.ndim != 3:
                raise ValueError(f"{name} with layout TND must be (T, N, D), got {x.shape}")
            if lengths is None:
                raise ValueError(f"layout TND needs the cumulative actual sequence lengths of {name}")
            self.offsets, self.lengths = tnd_segments(lengths, x.shape[0], f"actual lengths of {name}")
            self.flat, self.seq = x, None
        elif layout == "BSND":
            if x.ndim != 4:
                raise ValueError(f"{name} with layout BSND must be (B, S, N, D), got {x.shape}")
            b, s = x.shape[:2]
            self.lengths = np.full(b, s, np.int64) if lengths is None else lengths
            if self.lengths.size != b or (self.lengths < 0).any() or (self.lengths > s).any():
                raise ValueError(
                    f"actual lengths of {name} must hold B={b} values in [0, {s}], got {list(self.lengths)}"
                )
            self.offsets = np.arange(b, dtype=np.int64) * s
            self.flat, self.seq = x.reshape(b * s, *x.shape[2:]), s
        else:
            raise ValueError(f"layout of {name} must be BSND or TND, got {layout!r}")
        if batch is not None and self.lengths.size != batch:
            raise ValueError(f"{name} describes {self.lengths.size} batches, query has {batch}")

    def unflatten(self, flat):
        """(T, ...) -> the layout's shape (BSND restores (B, S, ...))."""
        if self.seq is None:
            return flat
        return flat.reshape(-1, self.seq, *flat.shape[1:])


class _Sparse:
    """Validated problem: flattened Q/K/V, per-query-token batch, threshold and indices."""

    def __init__(
        self,
        query,
        key,
        value,
        sparse_indices,
        query_rope,
        key_rope,
        lq,
        lkv,
        layout_q,
        layout_kv,
        scale_value,
        sparse_block_size,
        sparse_mode,
        pre_tokens,
        next_tokens,
        block_table=None,
    ):
        if sparse_mode not in (0, 3):
            raise ValueError(f"sparse_mode must be 0 or 3, got {sparse_mode}")
        if pre_tokens < _BIG or next_tokens < _BIG:
            raise ValueError("pre_tokens/next_tokens only support their default (no band)")
        bs = int(sparse_block_size)
        if bs < 1 or bs > 128 or bs & (bs - 1):
            raise ValueError(f"sparse_block_size must be a power of two in [1, 128], got {bs}")
        if (query_rope is None) != (key_rope is None):
            raise ValueError("query_rope and key_rope must be given together")
        query = np.asarray(query)
        if query.dtype.name not in ("float16", "bfloat16", "float32"):
            raise ValueError(f"query dtype must be float16 or bfloat16, got {query.dtype}")
        self.dtype, self.scale, self.block, self.mode = query.dtype, float(scale_value), bs, sparse_mode
        lq, lkv = _int_seq(lq, "actual_seq_lengths_query"), _int_seq(lkv, "actual_seq_lengths_kv")
        self.q = _Tokens(query, layout_q, lq, "query")
        B = self.q.lengths.size
        if block_table is not None:
            key, value, key_rope, layout_kv = _unpage(key, value, key_rope, block_table, lkv, B)
            lkv = np.cumsum(lkv)
        self.k = _Tokens(key, layout_kv, lkv, "key", B)
        self.v = _Tokens(value, layout_kv, lkv, "value", B)
        self.qr = _Tokens(query_rope, layout_q, lq, "query_rope") if query_rope is not None else None
        self.kr = _Tokens(key_rope, layout_kv, lkv, "key_rope", B) if key_rope is not None else None
        T1, N1, D = self.q.flat.shape
        T2, N2 = self.k.flat.shape[:2]
        if self.v.flat.shape[:2] != (T2, N2) or self.k.flat.shape[2] != D:
            raise ValueError(f"key/value shapes {np.shape(key)}/{np.shape(value)} do not match query {query.shape}")
        if N2 == 0 or N1 % N2:
            raise ValueError(f"query heads ({N1}) must be a multiple of key heads ({N2})")
        self.N1, self.N2, self.G = N1, N2, N1 // N2
        idx = np.asarray(sparse_indices)
        want = (T1, N2) if layout_q == "TND" else (B, self.q.seq, N2)
        if idx.shape[:-1] != want or not np.issubdtype(idx.dtype, np.integer) or idx.shape[-1] < 1:
            raise ValueError(f"sparse_indices must be integer {want + ('K',)} with K > 0, got {idx.shape} {idx.dtype}")
        self.idx = idx.reshape(T1, N2, -1).astype(np.int64)
        # per query token: batch, row in batch, and whether it is a real (non-padding) row
        self.tb = np.zeros(T1, np.int64)
        self.ts = np.zeros(T1, np.int64)
        self.tvalid = np.zeros(T1, bool)
        for b in range(B):
            o, n = self.q.offsets[b], self.q.lengths[b]
            self.tb[o : o + n], self.ts[o : o + n], self.tvalid[o : o + n] = b, np.arange(n), True
        act_q, act_kv = self.q.lengths[self.tb], self.k.lengths[self.tb]
        thr = act_kv if sparse_mode == 0 else act_kv - act_q + self.ts + 1
        self.threshold = np.where(self.tvalid, np.maximum(thr, 0), 0)

    def chunks(self):
        """Query-token ranges sized so the gathered keys stay memory-bounded."""
        # a row reads at most ceil(threshold / block) <= ceil(max act_kv / block) entries
        reach = min(self.idx.shape[-1], -(-int(self.k.lengths.max(initial=0)) // self.block))
        width = max(reach, 1) * self.block * self.N2 * (self.k.flat.shape[2] + 64)
        step = max(1, _CHUNK_ELEMS // max(width, 1))
        return [(i, min(i + step, self.tvalid.size)) for i in range(0, self.tvalid.size, step)]

    def selection(self, lo, hi):
        """Flat KV rows (c, N2, K*block) and their validity for query tokens [lo, hi)."""
        thr = self.threshold[lo:hi, None, None]
        count = np.minimum(self.idx.shape[-1], -(-thr // self.block))  # indices read per row
        K = max(int(count.max(initial=0)), 1)  # entries worth reading
        idx = self.idx[lo:hi, :, :K]
        k_pos = np.arange(K)[None, None, :]
        live = (k_pos < count) & (np.cumsum(idx < 0, axis=-1) == 0)  # stop at first negative
        tok = idx[..., None] * self.block + np.arange(self.block)  # (c, N2, K, block)
        ok = live[..., None] & (tok < thr[..., None])
        c = hi - lo
        base = self.k.offsets[self.tb[lo:hi]][:, None, None, None]
        rows = np.where(ok, base + tok, 0).reshape(c, self.N2, K * self.block)
        return rows, ok.reshape(c, self.N2, K * self.block)

    def gather(self, rows, rope):
        """Selected keys (c, N2, L, D[+Dr]) and values (c, N2, L, Dv)."""
        heads = np.arange(self.N2)[None, :, None]
        k = self.k.flat[rows, heads]
        if rope:
            k = np.concatenate([k, self.kr.flat[rows, heads]], axis=-1)
        return k, self.v.flat[rows, heads]

    def kv_flat(self, ftype, rope):
        """All keys (T2, N2, D[+Dr]) and values (T2, N2, Dv) converted to ftype once, so the
        per-chunk gathers read ready operands (same values as converting after the gather)."""
        k = self.k.flat.astype(ftype)
        if rope:
            k = np.concatenate([k, self.kr.flat.astype(ftype)], axis=-1)
        return k, self.v.flat.astype(ftype)

    def queries(self, lo, hi, rope):
        q = self.q.flat[lo:hi]
        if rope:
            q = np.concatenate([q, self.qr.flat[lo:hi]], axis=-1)
        return q.reshape(hi - lo, self.N2, self.G, -1)

    def stats_layout(self, x):
        """(T1, N2, G) -> (B, N2, S1, G) for BSND or (N2, T1, G) for TND."""
        if self.q.seq is None:
            return np.ascontiguousarray(x.transpose(1, 0, 2))
        return np.ascontiguousarray(self.q.unflatten(x).transpose(0, 2, 1, 3))

    def stats_flat(self, x, name):
        x = np.asarray(x, dtype=np.float64)
        T1 = self.tvalid.size
        want = (self.N2, T1, self.G) if self.q.seq is None else (self.q.lengths.size, self.N2, self.q.seq, self.G)
        if x.shape != want:
            raise ValueError(f"{name} must have shape {want}, got {x.shape}")
        if self.q.seq is None:
            return x.transpose(1, 0, 2)
        return x.transpose(0, 2, 1, 3).reshape(T1, self.N2, self.G)


def _unpage(key, value, key_rope, block_table, lkv, B):
    """PA_BSND caches (block_num, block_size, N2, D) -> TND by following block_table."""
    table = np.asarray(block_table)
    if lkv is None:
        raise ValueError("actual_seq_lengths_kv is required with block_table")
    if table.ndim != 2 or table.shape[0] != B:
        raise ValueError(f"block_table must be (B={B}, maxBlocks), got {table.shape}")
    key = np.asarray(key)
    bsz = key.shape[1]
    parts = {"key": [], "value": [], "key_rope": []}
    for b in range(B):
        n = int(lkv[b])
        ids = table[b, : -(-n // bsz)].astype(np.int64)
        for name, cache in (("key", key), ("value", value), ("key_rope", key_rope)):
            if cache is not None:
                c = np.asarray(cache)
                parts[name].append(c[ids].reshape(-1, *c.shape[2:])[:n])
    cat = {k: (np.concatenate(v) if v else None) for k, v in parts.items()}
    return cat["key"], cat["value"], cat["key_rope"], "TND"


def _batch_chunks(pb):
    """(lo, hi, batch) ranges of real query tokens of one batch, sized so one (chunk, G, W)
    score block stays memory-bounded."""
    for b in range(pb.q.lengths.size):
        o, n = int(pb.q.offsets[b]), int(pb.q.lengths[b])
        step = max(1, _CHUNK_ELEMS // max(pb.G * int(pb.k.lengths[b]), 1))
        for i in range(o, o + n, step):
            yield i, min(i + step, o + n), b


def _scores(pb, q, k, ok, benchmark):
    if benchmark:
        s = np.matmul(q.astype(np.float32), np.swapaxes(k.astype(np.float32), -1, -2))
        s *= np.float32(pb.scale)
    else:
        s = np.matmul(q.astype(np.float64), np.swapaxes(k.astype(np.float64), -1, -2)) * pb.scale
    return np.where(ok[:, :, None, :], s, -np.inf)


def _forward(
    benchmark,
    query,
    key,
    value,
    sparse_indices,
    scale_value,
    block_table,
    actual_seq_lengths_query,
    actual_seq_lengths_kv,
    query_rope,
    key_rope,
    sparse_block_size,
    layout_query,
    layout_kv,
    sparse_mode,
    pre_tokens,
    next_tokens,
    attention_mode,
    return_softmax_lse,
):
    if attention_mode not in (0, 2):
        raise ValueError(f"attention_mode must be 2 (MLA-absorb) or 0, got {attention_mode}")
    if layout_kv == "PA_BSND":
        if block_table is None:
            raise ValueError("layout_kv PA_BSND needs block_table")
        layout_kv = None
    elif block_table is not None:
        raise ValueError("block_table needs layout_kv PA_BSND")
    pb = _Sparse(
        query,
        key,
        value,
        sparse_indices,
        query_rope,
        key_rope,
        actual_seq_lengths_query,
        actual_seq_lengths_kv,
        layout_query,
        layout_kv,
        scale_value,
        sparse_block_size,
        sparse_mode,
        min(pre_tokens, _BIG),
        min(next_tokens, _BIG),
        block_table,
    )
    T1, Dv, rope = pb.tvalid.size, pb.v.flat.shape[-1], query_rope is not None
    out = np.zeros((T1, pb.N2, pb.G, Dv))
    smax = np.zeros((T1, pb.N2, pb.G))
    ssum = np.zeros((T1, pb.N2, pb.G))
    for lo, hi in pb.chunks():
        rows, ok = pb.selection(lo, hi)
        k, v = pb.gather(rows, rope)
        s = _scores(pb, pb.queries(lo, hi, rope), k, ok, benchmark)
        if benchmark:
            o, m, l = online_softmax_attention(s, _round_to(v, pb.dtype), pb.dtype)
        else:
            m = s.max(axis=-1)
            valid = np.isfinite(m)[..., None]
            p = np.exp(s - np.where(valid, m[..., None], 0.0))
            l = p.sum(axis=-1)
            o = np.matmul(p, v.astype(np.float64)) / np.where(valid, l[..., None], 1.0)
        empty = ~np.isfinite(m)
        out[lo:hi] = np.where(empty[..., None], 0.0, o)
        smax[lo:hi] = np.where(empty, 0.0, m)
        ssum[lo:hi] = np.where(empty, 0.0, l)
    if benchmark:
        out = _round_to(out, pb.dtype)
    att = pb.q.unflatten(out.reshape(T1, pb.N1, Dv))
    return dict(
        attention_out=np.ascontiguousarray(att, dtype=np.float32),
        softmax_max=pb.stats_layout(smax).astype(np.float32),
        softmax_sum=pb.stats_layout(ssum).astype(np.float32),
    )


def _backward(
    benchmark,
    query,
    key,
    value,
    sparse_indices,
    d_out,
    out,
    softmax_max,
    softmax_sum,
    actual_seq_lengths_query,
    actual_seq_lengths_kv,
    query_rope,
    key_rope,
    scale_value,
    sparse_block_size,
    layout,
    sparse_mode,
    pre_tokens,
    next_tokens,
    deterministic,
):
    pb = _Sparse(
        query,
        key,
        value,
        sparse_indices,
        query_rope,
        key_rope,
        actual_seq_lengths_query,
        actual_seq_lengths_kv,
        layout,
        layout,
        scale_value,
        sparse_block_size,
        sparse_mode,
        pre_tokens,
        next_tokens,
    )
    T1, T2, rope = pb.tvalid.size, pb.k.flat.shape[0], query_rope is not None
    Dv = pb.v.flat.shape[-1]
    ftype = np.float32 if benchmark else np.float64
    do = _Tokens(d_out, layout, _int_seq(actual_seq_lengths_query, "q"), "d_out").flat
    o = _Tokens(out, layout, _int_seq(actual_seq_lengths_query, "q"), "out").flat
    if do.shape != (T1, pb.N1, Dv) or o.shape != do.shape:
        raise ValueError(f"d_out/out must match the query tokens and value D: {(T1, pb.N1, Dv)}")
    do = do.reshape(T1, pb.N2, pb.G, Dv).astype(ftype)
    o = o.reshape(T1, pb.N2, pb.G, Dv).astype(ftype)
    smax = pb.stats_flat(softmax_max, "softmax_max")
    ssum = pb.stats_flat(softmax_sum, "softmax_sum")
    Dq = pb.q.flat.shape[-1] + (pb.qr.flat.shape[-1] if rope else 0)
    dq = np.zeros((T1, pb.N2, pb.G, Dq))
    dk = np.zeros((T2, pb.N2, Dq))
    dv = np.zeros((T2, pb.N2, Dv))
    cast = (lambda x: _round_to(x, pb.dtype)) if benchmark else (lambda x: x)
    kf, vf = pb.kv_flat(ftype, rope)
    qf = pb.queries(0, T1, rope).astype(ftype)
    G, heads = pb.G, np.arange(pb.N2)[None, :, None]
    # Per chunk of query tokens of one batch, the selection becomes a multiplicity matrix
    # M[t, j] (how often token t picks KV token j, 0 = not selected) over the batch's first W
    # KV tokens; the gradients are then dense products with P and dS zeroed where M = 0 and
    # scaled by M where a token was picked repeatedly: the same sums as gathering the picked
    # rows, in another summation order, with large contiguous matmuls instead of gathers.
    for lo, hi, b in _batch_chunks(pb):
        rows, ok = pb.selection(lo, hi)
        W = int(pb.threshold[lo:hi].max())
        if W == 0:
            continue
        c, base = hi - lo, int(pb.k.offsets[b])
        cell = ((np.arange(c)[:, None, None] * pb.N2 + heads) * W + (rows - base))[ok]
        mult = np.bincount(cell, minlength=c * pb.N2 * W).reshape(c, pb.N2, 1, W)
        unpicked, repeated = mult == 0, bool((mult > 1).any())
        delta = (do[lo:hi] * o[lo:hi]).sum(axis=-1, keepdims=True)
        for h in range(pb.N2):
            # 2-D (c*G, .) operands: one large matmul each instead of c small stacked ones
            k, v = kf[base : base + W, h], vf[base : base + W, h]
            q = qf[lo:hi, h].reshape(c * G, -1)
            d_o = do[lo:hi, h].reshape(c * G, Dv)
            p = np.matmul(q, k.T)
            p *= np.float32(pb.scale) if benchmark else pb.scale
            m = smax[lo:hi, h].reshape(-1, 1).astype(ftype)
            l = ssum[lo:hi, h].reshape(-1, 1).astype(ftype)
            # P from the forward statistics; rows whose sum is 0 selected nothing
            p -= m
            np.copyto(p.reshape(c, G, W), -np.inf, where=unpicked[:, h])
            np.exp(p, out=p)
            p /= np.where(l > 0, l, 1)
            np.copyto(p, 0, where=~(l > 0))
            ds = np.matmul(d_o, v.T)  # dP
            ds -= delta[:, h].reshape(-1, 1)
            ds *= p
            ds, p = cast(ds), cast(p)
            if repeated:
                ds.reshape(c, G, W)[...] *= mult[:, h]
                p.reshape(c, G, W)[...] *= mult[:, h]
            dq[lo:hi, h] = (np.matmul(ds, k) * pb.scale).reshape(c, G, -1)
            dk[base : base + W, h] += np.matmul(ds.T, q) * pb.scale
            dv[base : base + W, h] += np.matmul(p.T, d_o)
    dq[~pb.tvalid] = 0.0
    if benchmark:
        dq, dk, dv = (_round_to(x, pb.dtype) for x in (dq, dk, dv))
    dq = dq.reshape(T1, pb.N1, Dq)
    D = pb.q.flat.shape[-1]

    def out_q(x):
        return np.ascontiguousarray(pb.q.unflatten(x), dtype=np.float32)

    def out_k(x):
        return np.ascontiguousarray(pb.k.unflatten(x), dtype=np.float32)

    return dict(
        d_query=out_q(dq[..., :D]),
        d_key=out_k(dk[..., :D]),
        d_value=out_k(dv),
        d_query_rope=out_q(dq[..., D:]) if rope else None,
        d_key_rope=out_k(dk[..., D:]) if rope else None,
    )


def _forward_call(
    benchmark,
    query,
    key,
    value,
    sparse_indices,
    *,
    scale_value,
    block_table=None,
    actual_seq_lengths_query=None,
    actual_seq_lengths_kv=None,
    query_rope=None,
    key_rope=None,
    sparse_block_size=1,
    layout_query="BSND",
    layout_kv="BSND",
    sparse_mode=3,
    pre_tokens=(1 << 63) - 1,
    next_tokens=(1 << 63) - 1,
    attention_mode=2,
    return_softmax_lse=True,
):
    """Golden of the SparseFlashAttention forward -> dict(attention_out, softmax_max, softmax_sum)."""
    return _forward(**locals())


def _backward_call(
    benchmark,
    query,
    key,
    value,
    sparse_indices,
    d_out,
    out,
    softmax_max,
    softmax_sum,
    *,
    actual_seq_lengths_query=None,
    actual_seq_lengths_kv=None,
    query_rope=None,
    key_rope=None,
    scale_value,
    sparse_block_size=1,
    layout="BSND",
    sparse_mode=0,
    pre_tokens=INT_MAX,
    next_tokens=INT_MAX,
    deterministic=False,
):
    """Golden of aclnnSparseFlashAttentionGrad -> dict(d_query, d_key, d_value, d_query_rope,
    d_key_rope); the rope grads are None without rope inputs."""
    return _backward(**locals())


sparse_flash_attention, sparse_flash_attention_benchmark = golden_pair(
    _forward_call, "sparse_flash_attention", "Same-dtype blockwise benchmark of the SparseFlashAttention forward."
)
sparse_flash_attention_grad, sparse_flash_attention_grad_benchmark = golden_pair(
    _backward_call,
    "sparse_flash_attention_grad",
    "Same-dtype benchmark of aclnnSparseFlashAttentionGrad (P and dS rounded to the dtype).",
)
