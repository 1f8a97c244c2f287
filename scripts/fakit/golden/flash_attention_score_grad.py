"""Golden of aclnnFlashAttentionUnpaddingScoreGradV5 (spec: docs/sources.md;
choices: docs/golden.md §V5).

The backward recomputes P from the forward's softmax statistics, as the kernel does:
  P = exp(S − max) / sum,  D = rowsum(dY ∘ attention_in),
  dV = dropout(P)ᵀ·dY,  dP = dropout(dY·Vᵀ),  dS = P ∘ (dP − D),
  dQ = scale·dS·K, dK = scale·dSᵀ·Q (rope parts likewise with Q_rope / K_rope),
  dsink[h] = −Σ_rows exp(sink_h − max)/sum · D.
"""

import numpy as np

from . import _blockwise as bw
from . import _common as c
from .flash_attention_score import TndProblem, run_forward, stats_layout

__all__ = ["flash_attention_unpadding_score_grad_v5", "flash_attention_unpadding_score_grad_v5_benchmark"]


def _stats_to_nt(x, layout, t, n, name):
    """[N, T] from softmax stats in [T,N,8] (TND) or [N,T,8] (NTD)."""
    a = np.asarray(x, np.float32)
    want = (t, n) if layout == "TND" else (n, t)
    if a.ndim != 3 or a.shape[:2] != want:
        raise ValueError(f"{name}: expected shape {want + (8,)} for layout {layout}, got {a.shape}")
    a = a[..., 0]
    return a.T if layout == "TND" else a


def _grad(
    bench,
    query,
    key,
    value,
    dy,
    *,
    query_rope=None,
    key_rope=None,
    pse_shift=None,
    drop_mask=None,
    padding_mask=None,
    atten_mask=None,
    softmax_max=None,
    softmax_sum=None,
    softmax_in=None,
    attention_in=None,
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
    """dict(dq, dq_rope, dk, dk_rope, dv, dpse, dsink) float32 (TND like their inputs;
    dsink [head_num]).  dpse is None (the spec marks it unused); rope grads and dsink are
    None without rope / sink.  Missing softmax_max/softmax_sum/attention_in are computed
    with flash_attention_tnd_forward."""
    if query_rope is not None and sparse_mode == 6:
        raise ValueError("sparse_mode 6 is not supported together with query_rope/key_rope")
    p = TndProblem.from_call(locals(), "aclnnFlashAttentionUnpaddingScoreGradV5")
    layout = stats_layout(softmax_in_layout)
    t, n = p.q.shape[0], head_num
    dy = np.asarray(dy)
    if dy.shape != (t, n, p.v.shape[2]):
        raise ValueError(f"dy: expected shape {(t, n, p.v.shape[2])}, got {dy.shape}")
    if softmax_max is None or softmax_sum is None or attention_in is None:
        fwd = run_forward(p, bench, layout)  # fill in what the caller did not provide
        softmax_max = fwd["softmax_max"] if softmax_max is None else softmax_max
        softmax_sum = fwd["softmax_sum"] if softmax_sum is None else softmax_sum
        attention_in = fwd["attention_out"] if attention_in is None else attention_in
    mx = _stats_to_nt(softmax_max, layout, t, n, "softmax_max")
    sm = _stats_to_nt(softmax_sum, layout, t, n, "softmax_sum")
    o = np.asarray(attention_in)
    if o.shape != dy.shape:
        raise ValueError(f"attention_in: expected shape {dy.shape}, got {o.shape}")
    dq = np.zeros(p.q.shape, np.float32)
    dk = np.zeros(p.k.shape, np.float32)
    dv = np.zeros(p.v.shape, np.float32)
    dq_rope = None if p.q_rope is None else np.zeros(p.q_rope.shape, np.float32)
    dk_rope = None if p.k_rope is None else np.zeros(p.k_rope.shape, np.float32)
    dsink = None if p.sink is None else np.zeros(n, np.float32)
    for b in range(p.batch):
        sq = int(p.q_lens[b])
        if sq == 0:
            continue
        views = p.batch_views(b)
        rq = slice(int(p.q_starts[b]), int(p.q_starts[b]) + sq)
        rk = slice(int(p.kv_starts[b]), int(p.kv_starts[b]) + int(p.kv_lens[b]))
        g = bw.attention_batch_grad(
            views["q"],
            views["k"],
            views["v"],
            c.tnd_view(dy, rq.start, sq),
            c.tnd_view(o, rq.start, sq),
            mx[:, rq],
            sm[:, rq],
            scale=p.scale,
            q_rope=views["q_rope"],
            k_rope=views["k_rope"],
            keep_prob=p.keep_prob,
            sink=p.sink,
            bench_dtype=p.dtype if bench else None,
            **p.hooks(b),
        )
        dq[rq] = g["dq"].transpose(1, 0, 2)
        dk[rk] = g["dk"].transpose(1, 0, 2)
        dv[rk] = g["dv"].transpose(1, 0, 2)
        if dq_rope is not None:
            dq_rope[rq] = g["dq_rope"].transpose(1, 0, 2)
            dk_rope[rk] = g["dk_rope"].transpose(1, 0, 2)
        if dsink is not None:
            dsink += g["dsink"]
    if bench:  # the device writes the gradients in the operator's dtype
        dq, dk, dv = (c.round_to(x, p.dtype) for x in (dq, dk, dv))
        if dq_rope is not None:
            dq_rope, dk_rope = c.round_to(dq_rope, p.dtype), c.round_to(dk_rope, p.dtype)
    return dict(dq=dq, dq_rope=dq_rope, dk=dk, dk_rope=dk_rope, dv=dv, dpse=None, dsink=dsink)


flash_attention_unpadding_score_grad_v5, flash_attention_unpadding_score_grad_v5_benchmark = c.golden_pair(
    _grad,
    "flash_attention_unpadding_score_grad_v5",
    "Device-like variant: P and dS rounded to the dtype before their matmuls, gradients rounded to the dtype.",
)
