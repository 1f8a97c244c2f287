"""Goldens of aclnnFlashAttentionVarLenScore (spec: docs/sources.md) and of the TND forward that
matches aclnnFlashAttentionUnpaddingScoreGradV5 (spec: docs/sources.md).  Choices: docs/golden.md.

Per batch b of the TND tensors (rows actual_seq_qlen[b-1]..actual_seq_qlen[b]):
  S = mask(scale·(Q·Kᵀ + Qr·Krᵀ) ⊕ pse),  P = softmax(S [+ sink]),  O = dropout(P)·V
with ⊕ = "add then multiply" (pse_type 1) or "multiply then add" (0, 2, 3).
"""

import inspect

import numpy as np

from . import _blockwise as bw
from . import _common as c

__all__ = [
    "flash_attention_var_len_score",
    "flash_attention_var_len_score_benchmark",
    "flash_attention_tnd_forward",
    "flash_attention_tnd_forward_benchmark",
]

_TND_STATS = ("same_as_input", "TND")
_NTD_STATS = ("", "NTD")


class TndProblem:
    """Validated, normalised arguments of a TND attention call (shared by the forward and
    the V5 backward)."""

    def __init__(
        self,
        query,
        key,
        value,
        *,
        actual_seq_qlen,
        actual_seq_kvlen,
        head_num,
        op,
        query_rope=None,
        key_rope=None,
        pse_shift=None,
        drop_mask=None,
        atten_mask=None,
        sink=None,
        prefix=None,
        q_start_idx=None,
        kv_start_idx=None,
        scale_value=1.0,
        keep_prob=1.0,
        pre_tokens=c.INT_MAX,
        next_tokens=c.INT_MAX,
        input_layout="TND",
        inner_precise=0,
        sparse_mode=0,
        pse_type=1,
    ):
        if input_layout != "TND":
            raise ValueError(f"input_layout {input_layout!r}: {op} supports only TND")
        self.dtype = c.float_dtype_of(query, "query")
        q, k, v = np.asarray(query), np.asarray(key), np.asarray(value)
        for name, t in (("query", q), ("key", k), ("value", v)):
            if t.ndim != 3:
                raise ValueError(f"{name}: TND needs a 3-D tensor, got shape {t.shape}")
        if q.shape[1] != head_num:
            raise ValueError(f"head_num {head_num} differs from query's N axis {q.shape[1]}")
        if k.shape[:2] != v.shape[:2] or q.shape[2] != k.shape[2]:
            raise ValueError(f"query {q.shape}, key {k.shape}, value {v.shape}: T/N/D do not match")
        c.gqa_group(head_num, k.shape[1], "key")
        if (query_rope is None) != (key_rope is None):
            raise ValueError("query_rope and key_rope must be given together")
        if sparse_mode not in (0, 1, 2, 3, 4, 6, 7, 8):
            raise ValueError(f"sparse_mode {sparse_mode} is not supported (0-4, 6-8)")
        if pse_type not in (0, 1, 2, 3):
            raise ValueError(f"pse_type {pse_type} is not one of 0-3")
        if inner_precise not in (0, 1, 2):
            raise ValueError(f"inner_precise {inner_precise} is not one of 0, 1, 2")
        if not 0 < keep_prob <= 1:
            raise ValueError(f"keep_prob {keep_prob} must lie in (0, 1]")
        self.q, self.k, self.v = q, k, v
        self.q_rope = None if query_rope is None else np.asarray(query_rope)
        self.k_rope = None if key_rope is None else np.asarray(key_rope)
        self.q_starts, self.q_lens = c.tnd_segments(actual_seq_qlen, q.shape[0], "actual_seq_qlen")
        self.kv_starts, self.kv_lens = c.tnd_segments(actual_seq_kvlen, k.shape[0], "actual_seq_kvlen")
        self.batch = self.q_lens.size
        if self.kv_lens.size != self.batch:
            raise ValueError(f"actual_seq_qlen has {self.batch} batches, actual_seq_kvlen {self.kv_lens.size}")
        bad = np.flatnonzero((self.q_lens > 0) & (self.kv_lens == 0))
        if bad.size:
            raise ValueError(f"batch {int(bad[0])} has query rows but no keys (unsupported by the spec)")
        self.prefix = c.int_seq(prefix, "prefix")
        if sparse_mode in (5, 6) and atten_mask is not None:
            if self.prefix is None or self.prefix.size != self.batch:
                raise ValueError(f"sparse_mode {sparse_mode} needs prefix with {self.batch} values")
        if sparse_mode in (5, 6) and self.prefix is not None and self.prefix.size == self.batch:
            # sparse-mode page: prefix N in [Skv - Sq, Skv] (Sq <= Skv) or [0, Skv] (Sq > Skv)
            lo = np.maximum(self.kv_lens - self.q_lens, 0)
            bad = np.flatnonzero((self.prefix < lo) | (self.prefix > self.kv_lens))
            if bad.size:
                b = int(bad[0])
                raise ValueError(f"prefix[{b}] = {int(self.prefix[b])} outside [{int(lo[b])}, {int(self.kv_lens[b])}]")
        self.q_start_idx = c.int_seq(q_start_idx, "q_start_idx")
        self.kv_start_idx = c.int_seq(kv_start_idx, "kv_start_idx")
        self.pse, self.pse_type = pse_shift, pse_type
        # keep_prob == 1 disables dropout: the mask is then not read (docs/golden.md).
        self.drop_mask = drop_mask if (drop_mask is not None and keep_prob < 1) else None
        if self.drop_mask is not None:
            self.drop_offsets, bits = c.tnd_drop_offsets(self.q_lens, self.kv_lens, head_num)
            if np.asarray(drop_mask).size * 8 < bits:
                raise ValueError(f"drop_mask has {np.asarray(drop_mask).size} bytes, needs {(bits + 7) // 8}")
        c.check_compressed_mask(atten_mask, sparse_mode)
        self.atten_mask, self.sink = atten_mask, None if sink is None else np.asarray(sink, np.float32)
        if self.sink is not None and self.sink.shape != (head_num,):
            raise ValueError(f"sink must have shape ({head_num},), got {self.sink.shape}")
        self.scale, self.keep_prob = scale_value, keep_prob
        self.pre, self.next, self.mode, self.heads = pre_tokens, next_tokens, sparse_mode, head_num
        self.band_index = c.band_batch_index(sparse_mode, self.q_lens, self.kv_lens)

    @classmethod
    def from_call(cls, args, op):
        """From an operator call's arguments (a dict of its parameters): the ones this takes."""
        names = inspect.signature(cls).parameters
        return cls(op=op, **{k: v for k, v in args.items() if k in names})

    def batch_views(self, b):
        """[N, S, D] views of Q, K, V (and rope parts) of batch b."""
        qs, ql, ks, kl = (int(self.q_starts[b]), int(self.q_lens[b]), int(self.kv_starts[b]), int(self.kv_lens[b]))
        view = c.tnd_view
        return dict(
            q=view(self.q, qs, ql),
            k=view(self.k, ks, kl),
            v=view(self.v, ks, kl),
            q_rope=None if self.q_rope is None else view(self.q_rope, qs, ql),
            k_rope=None if self.k_rope is None else view(self.k_rope, ks, kl),
        )

    def hooks(self, b):
        """excluded_fn / bias_fn / keep_fn / bias_before_scale for batch b (see
        _common.attention_batch)."""
        sq, sk = int(self.q_lens[b]), int(self.kv_lens[b])

        def excluded_fn(rows):
            # Without atten_mask the sparse mode and pre/next tokens do not apply (spec 001).
            if self.atten_mask is None:
                return None
            gen = c.sparse_excluded(
                self.mode,
                rows,
                sq,
                sk,
                pre_tokens=self.pre,
                next_tokens=self.next,
                prefix_n=None if self.prefix is None else self.prefix[b],
                is_band_batch=(b == self.band_index),
            )
            if self.mode in (0, 1):  # the user's mask is read; other modes generate it
                user = c.user_mask_rows(self.atten_mask, b, rows, sk)
                return user if gen is None else user | gen[None]
            return gen[None]

        bias_fn = None
        if self.pse is not None:
            if self.pse_type in (2, 3):
                qs = c.start_index(self.q_start_idx, b, "q_start_idx")
                ks = c.start_index(self.kv_start_idx, b, "kv_start_idx")

                def bias_fn(rows):
                    return c.alibi_rows(self.pse, b, rows, sq, sk, qs, ks, self.pse_type == 3)
            else:

                def bias_fn(rows):
                    return c.pse_rows(self.pse, b, rows, sq, sk, "pse_shift")

        keep_fn = None
        if self.drop_mask is not None:

            def keep_fn(heads, rows):
                return np.stack(
                    [c.drop_keep_rows(self.drop_mask, self.drop_offsets[b], h, sq, sk, rows) for h in heads]
                )

        return dict(
            excluded_fn=excluded_fn,
            bias_fn=bias_fn,
            keep_fn=keep_fn,
            bias_before_scale=(self.pse is not None and self.pse_type == 1),
        )


def stats_layout(softmax_in_layout):
    """'TND' for "same_as_input" (stats [T, N, 8]), 'NTD' for "" (stats [N, T, 8])."""
    if softmax_in_layout in _TND_STATS:
        return "TND"
    if softmax_in_layout in _NTD_STATS:
        return "NTD"
    raise ValueError(f"softmax_in_layout {softmax_in_layout!r} is not \"same_as_input\" or \"\"")


def run_forward(p, bench, stats="TND"):
    """Forward of a TndProblem: dict(softmax_max, softmax_sum, attention_out) float32."""
    t, n = p.q.shape[0], p.heads
    out = np.zeros((t, n, p.v.shape[2]), np.float32)
    mx = np.zeros((n, t), np.float32)
    sm = np.zeros((n, t), np.float32)
    for b in range(p.batch):
        sq = int(p.q_lens[b])
        if sq == 0:
            continue
        views = p.batch_views(b)
        o, m, s = bw.attention_batch(
            views["q"],
            views["k"],
            views["v"],
            scale=p.scale,
            q_rope=views["q_rope"],
            k_rope=views["k_rope"],
            keep_prob=p.keep_prob,
            sink=p.sink,
            bench_dtype=p.dtype if bench else None,
            **p.hooks(b),
        )
        r = slice(int(p.q_starts[b]), int(p.q_starts[b]) + sq)
        out[r] = o.transpose(1, 0, 2)
        mx[:, r], sm[:, r] = m, s
    if stats == "TND":
        mx, sm = mx.T, sm.T
    return dict(softmax_max=c.replicate8(mx), softmax_sum=c.replicate8(sm), attention_out=out)


def _var_len(
    bench,
    query,
    key,
    value,
    *,
    real_shift=None,
    drop_mask=None,
    padding_mask=None,
    atten_mask=None,
    prefix=None,
    actual_seq_qlen,
    actual_seq_kvlen,
    scale_value=1.0,
    keep_prob=1.0,
    pre_tokens=c.INT_MAX,
    next_tokens=c.INT_MAX,
    head_num,
    input_layout="TND",
    inner_precise=0,
    sparse_mode=0,
):
    """aclnnFlashAttentionVarLenScore: dict(softmax_max [T,N,8], softmax_sum [T,N,8],
    attention_out [T,N,Dv]) float32.  pse (real_shift) is added before the scale."""
    args = dict(locals(), pse_shift=real_shift)
    return run_forward(TndProblem.from_call(args, "aclnnFlashAttentionVarLenScore"), bench, "TND")


flash_attention_var_len_score, flash_attention_var_len_score_benchmark = c.golden_pair(
    _var_len, "flash_attention_var_len_score", "Device-like same-dtype variant of flash_attention_var_len_score."
)


def _tnd_forward(
    bench,
    query,
    key,
    value,
    *,
    query_rope=None,
    key_rope=None,
    pse_shift=None,
    drop_mask=None,
    padding_mask=None,
    atten_mask=None,
    sink=None,
    prefix=None,
    actual_seq_qlen,
    actual_seq_kvlen,
    q_start_idx=None,
    kv_start_idx=None,
    scale_value=1.0,
    keep_prob=1.0,
    pre_tokens=c.INT_MAX,
    next_tokens=c.INT_MAX,
    head_num,
    input_layout="TND",
    inner_precise=0,
    sparse_mode=0,
    pse_type=1,
    softmax_in_layout="",
):
    """The forward the V5 grad differentiates (its forward-relevant keywords): rope parts,
    sink, pse types 0-3, q/kv start indices.  Returns dict(softmax_max, softmax_sum,
    attention_out); the stats are [T,N,8] for softmax_in_layout="same_as_input" and
    [N,T,8] (NTD) for "", ready to pass to flash_attention_unpadding_score_grad_v5."""
    p = TndProblem.from_call(locals(), "flash_attention_tnd_forward")
    return run_forward(p, bench, stats_layout(softmax_in_layout))


flash_attention_tnd_forward, flash_attention_tnd_forward_benchmark = c.golden_pair(
    _tnd_forward, "flash_attention_tnd_forward", "Device-like same-dtype variant of flash_attention_tnd_forward."
)
