"""Block kernels of the goldens: one block of query rows of the query heads that share a KV
head, against that head's keys (forward, device-like benchmark, backward), and the per-batch
drivers that walk those blocks.  Semantics (masks, pse, dropout bits) come from _common; the
choices are in docs/golden.md.
"""

import numpy as np

from ._common import INVALID_ROW_MAX, INVALID_ROW_SUM, gqa_group, round_to, to_f32

# Golden arithmetic precision of 16-bit operators.  float32 BLAS keeps the big cases within
# the time budget; set to np.float64 to cross-check the golden itself (tests do this on small
# cases).  FLOAT32 operators are always computed in float64 (compute_dtype_for): an fp32 golden
# would be as far from the truth as the kernel it judges.
COMPUTE_DTYPE = np.float32


def compute_dtype_for(a):
    """Golden arithmetic dtype for operator inputs of a's dtype."""
    return np.float64 if np.asarray(a).dtype in (np.float32, np.float64) else COMPUTE_DTYPE


DEFAULT_Q_BLOCK = None  # query rows per golden block (None: sized by SCORE_BUDGET)
SCORE_BUDGET = 1 << 24  # score elements (heads x rows x keys) per block: 64 MiB of float32
BENCH_KV_BLOCK = 128  # keys per online-softmax step of the benchmark variant


def block_rows(heads, keys, budget=SCORE_BUDGET):
    """Query rows per block so that heads x rows x keys stays within `budget` (big blocks
    make BLAS efficient; the budget bounds memory)."""
    return int(max(64, min(4096, budget // max(1, heads * keys)) // 64 * 64))


def row_blocks(n_rows, block):
    """Yield (r0, r1) query-row blocks."""
    for r0 in range(0, n_rows, block):
        yield r0, min(n_rows, r0 + block)


def _trim_columns(excluded, sk):
    """Column range [c0, c1) outside which every score of the block is excluded."""
    if excluded is None or sk == 0:
        return 0, sk
    ex = excluded.reshape(-1, excluded.shape[-1])
    if ex.shape[-1] != sk:
        return 0, sk
    allowed = ~ex.all(axis=0)
    idx = np.flatnonzero(allowed)
    if idx.size == 0:
        return 0, 0
    return int(idx[0]), int(idx[-1]) + 1


def _slice_cols(a, c0, c1):
    if a is None or np.ndim(a) == 0 or a.shape[-1] == 1:
        return a
    return a[..., c0:c1]


def scores_block(q, k, scale, *, q_rope=None, k_rope=None, bias=None, bias_before_scale=False, fold_scale=True):
    """Float [H, R, C] scores of one block: (q·kᵀ + q_rope·k_ropeᵀ) * scale + bias
    (bias_before_scale: (q·kᵀ + bias) * scale, pse type 1).  q: [H, R, D]; k: [C, D].
    fold_scale (golden) multiplies q instead of the scores (R·D instead of R·C multiplies);
    the benchmark scales the accumulated scores as a device does."""
    pre_bias = bias is not None and bias_before_scale
    if pre_bias or not fold_scale:
        s = np.matmul(q, k.T)
        if q_rope is not None:
            s += np.matmul(q_rope, k_rope.T)
        if pre_bias:
            s += bias
        s *= scale
        if bias is not None and not pre_bias:
            s += bias
        return s
    dt = q.dtype.type
    s = np.matmul(q * dt(scale), k.T)
    if q_rope is not None:
        s += np.matmul(q_rope * dt(scale), k_rope.T)
    if bias is not None:
        s += bias
    return s


def attend_block(
    q,
    k,
    v,
    *,
    scale,
    q_rope=None,
    k_rope=None,
    bias=None,
    bias_before_scale=False,
    excluded=None,
    keep=None,
    keep_prob=1.0,
    sink=None,
    bench_dtype=None,
    compute_dtype=None,
):
    """Attention of one block of query rows against all keys of one KV head.

    q: [H, R, D] (H query heads sharing this KV head), k: [C, D], v: [C, Dv];
    bias / excluded / keep broadcast to [H, R, C]; sink: [H] logits joining every row's
    softmax denominator (no value row).  Returns (out [H,R,Dv], row_max [H,R],
    row_sum [H,R]) as float32, where row_max/row_sum are the softmax statistics of the
    scaled scores (the sink included).  Invalid rows (every key excluded, no sink) give
    out = 0, max = INVALID_ROW_MAX, sum = INVALID_ROW_SUM.

    bench_dtype=None computes the golden (whole rows at once, in compute_dtype, default
    COMPUTE_DTYPE).  A dtype
    computes the device-like benchmark instead: online softmax over blocks of
    BENCH_KV_BLOCK keys with running max/sum in float32, P rounded to bench_dtype before
    P·V, the output rounded to bench_dtype.
    """
    h, r = q.shape[0], q.shape[1]
    c0, c1 = _trim_columns(excluded, k.shape[0])
    k, v = k[c0:c1], v[c0:c1]
    if k_rope is not None:
        k_rope = k_rope[c0:c1]
    bias, excluded, keep = (_slice_cols(a, c0, c1) for a in (bias, excluded, keep))
    dt = (compute_dtype or COMPUTE_DTYPE) if bench_dtype is None else np.float32
    q, k, v = q.astype(dt, copy=False), k.astype(dt, copy=False), v.astype(dt, copy=False)
    if q_rope is not None:
        q_rope, k_rope = q_rope.astype(dt, copy=False), k_rope.astype(dt, copy=False)
    sink_b = None if sink is None else np.asarray(sink, dt).reshape(h, 1)
    s = scores_block(
        q,
        k,
        scale,
        q_rope=q_rope,
        k_rope=k_rope,
        bias=bias,
        bias_before_scale=bias_before_scale,
        fold_scale=bench_dtype is None,
    )
    if excluded is not None:
        np.copyto(s, -np.inf, where=excluded)
    kp = None if keep is None else np.broadcast_to(keep, s.shape)
    if bench_dtype is None:
        m, p = _softmax_numerators(s, sink_b)
        c = None
    else:
        m, p, c = _online_numerators(s, sink_b)
    valid = np.isfinite(m)  # False only without a sink (invalid row)
    m_safe = np.where(valid, m, 0)
    l = p.sum(axis=-1, keepdims=True) if c is None else (p.sum(axis=-1) * c).sum(-1)[..., None]
    if sink_b is not None:  # the sink's own exp(sink - max) term
        l = l + np.exp(sink_b[:, None] - m_safe)
    if kp is not None:
        kp = kp if c is None else _pad_blocks(kp, False)
        p = np.where(kp, p * dt(1.0 / keep_prob), dt(0))
    if bench_dtype is not None:  # P in the operator's dtype, rescaled in fp32
        p = (round_to(p, bench_dtype) * c[..., None]).reshape(h, r, -1)[..., : k.shape[0]]
    acc = np.matmul(p, v)
    l_safe = np.where(valid & (l > 0), l, 1)
    out = np.where(valid, acc / l_safe, 0).astype(np.float32)
    if bench_dtype is not None:
        out = round_to(out, bench_dtype)
    row_max = np.where(valid, m, INVALID_ROW_MAX)[..., 0].astype(np.float32)
    row_sum = np.where(valid, l, INVALID_ROW_SUM)[..., 0].astype(np.float32)
    return out, row_max, row_sum


def _softmax_numerators(s, sink_b):
    """Row max m [H,R,1] (sink included) and exp(s - m) of whole rows (in place in s)."""
    m = s.max(axis=-1, keepdims=True) if s.shape[-1] else np.full(s.shape[:2] + (1,), -np.inf, s.dtype)
    if sink_b is not None:
        m = np.maximum(m, sink_b[:, None])
    s -= np.where(np.isfinite(m), m, 0)
    return m, np.exp(s, out=s)


def _pad_blocks(a, fill):
    """[H, R, C] -> [H, R, nb, BENCH_KV_BLOCK], padding the last block with `fill`."""
    h, r, c = a.shape
    nb = -(-c // BENCH_KV_BLOCK)
    if nb * BENCH_KV_BLOCK != c:
        a = np.concatenate([a, np.full((h, r, nb * BENCH_KV_BLOCK - c), fill, a.dtype)], -1)
    return a.reshape(h, r, nb, BENCH_KV_BLOCK)


def _online_numerators(s, sink_b):
    """The device's online softmax over blocks of BENCH_KV_BLOCK keys, vectorised.

    Block j is exponentiated against the running max m_j after it (the value the device
    holds then); the device's later rescaling by exp(m_j - m_final) is returned as c_j.
    Returns (m_final [H,R,1], p [H,R,nb,B] = exp(s_j - m_j), c [H,R,nb])."""
    sb = _pad_blocks(s, -np.inf)
    bmax = sb.max(axis=-1) if sb.shape[2] else np.full(s.shape[:2] + (1,), -np.inf, s.dtype)
    if sink_b is not None:  # the sink starts the running max
        bmax[..., 0] = np.maximum(bmax[..., 0], sink_b)
    run = np.maximum.accumulate(bmax, axis=-1)
    run_ok = np.isfinite(run)
    run_safe = np.where(run_ok, run, 0)
    p = np.exp(sb - run_safe[..., None])
    m = run[..., -1:]
    c = np.where(run_ok, np.exp(run_safe - np.where(np.isfinite(m), m, 0)), 0)
    return m, p, c


def probs_from_stats(s, row_max, row_sum, excluded):
    """Softmax probabilities recomputed from the forward's statistics (as the backward
    kernels do): exp(s - max) / sum, 0 where excluded; s: [H, R, C], stats: [H, R]."""
    m = row_max[..., None]
    with np.errstate(over="ignore", invalid="ignore"):
        p = np.exp(s - m) / row_sum[..., None]
    if excluded is not None:
        p = np.where(np.broadcast_to(excluded, p.shape), 0, p)
    return np.where(np.isfinite(p), p, 0).astype(s.dtype, copy=False)


def attend_block_grad(
    q,
    k,
    v,
    dy,
    o,
    row_max,
    row_sum,
    *,
    scale,
    q_rope=None,
    k_rope=None,
    bias=None,
    bias_before_scale=False,
    excluded=None,
    keep=None,
    keep_prob=1.0,
    sink=None,
    bench_dtype=None,
    compute_dtype=None,
):
    """Backward of `attend_block` for one block of query rows of H heads sharing a KV head.

    dy, o: [H, R, Dv]; row_max/row_sum: [H, R] from the forward.  P is recomputed from
    the statistics, D = rowsum(dy ∘ o), dS = P ∘ (dP − D) with dP = dy·vᵀ (∘ keep/keep_prob).
    Returns dict(dq [H,R,D], dk [C,D], dv [C,Dv], dq_rope, dk_rope, dsink [H]) in float32
    (float64 when computed in float64);
    dk/dv/dk_rope are this block's contributions, summed over the H heads.
    bench_dtype rounds P (after dropout) and dS to that dtype before their matmuls.
    """
    dt = (compute_dtype or COMPUTE_DTYPE) if bench_dtype is None else np.float32
    cast = lambda a: None if a is None else np.asarray(a).astype(dt, copy=False)
    q, k, v, dy, o, q_rope, k_rope = map(cast, (q, k, v, dy, o, q_rope, k_rope))
    h, r = q.shape[0], q.shape[1]
    # GQA (h > 1): the h heads' rows form one [h*r, .] operand, so each product is one
    # large GEMM instead of h stacked ones (same per-element sums)
    if bias is None:
        s = scores_block(
            _rows(q),
            k,
            scale,
            q_rope=None if q_rope is None else _rows(q_rope),
            k_rope=k_rope,
            fold_scale=bench_dtype is None,
        ).reshape(h, r, -1)
    else:
        s = scores_block(
            q,
            k,
            scale,
            q_rope=q_rope,
            k_rope=k_rope,
            bias=bias,
            bias_before_scale=bias_before_scale,
            fold_scale=bench_dtype is None,
        )
    p = probs_from_stats(s, np.asarray(row_max, dt), np.asarray(row_sum, dt), excluded)
    dp = np.matmul(_rows(dy), v.T).reshape(h, r, -1)
    d_row = np.sum(dy * o, axis=-1, keepdims=True)
    if keep is not None:
        kf = np.where(keep, dt(1.0 / keep_prob), dt(0))
        p_drop, dp = p * kf, dp * kf
    else:
        p_drop = p
    ds = p * (dp - d_row)
    if bench_dtype is not None:
        p_drop, ds = round_to(p_drop, bench_dtype), round_to(ds, bench_dtype)
    dv = p_drop.reshape(h * r, -1).T @ dy.reshape(h * r, -1)
    ds2 = ds.reshape(h * r, -1)
    dq = (ds2 @ k).reshape(h, r, -1) * dt(scale)
    dk = (ds2.T @ q.reshape(h * r, -1)) * dt(scale)
    rt = np.float64 if dt == np.float64 else np.float32
    res = dict(dq=dq.astype(rt), dk=dk.astype(rt), dv=dv.astype(rt), dq_rope=None, dk_rope=None, dsink=None)
    if q_rope is not None:
        res["dq_rope"] = ((ds2 @ k_rope).reshape(h, r, -1) * dt(scale)).astype(rt)
        res["dk_rope"] = ((ds2.T @ q_rope.reshape(h * r, -1)) * dt(scale)).astype(rt)
    if sink is not None:
        sk_ = np.asarray(sink, dt).reshape(h, 1)
        with np.errstate(over="ignore", invalid="ignore"):
            p_sink = np.exp(sk_ - np.asarray(row_max, dt)) / np.asarray(row_sum, dt)
        p_sink = np.where(np.isfinite(p_sink), p_sink, 0)
        res["dsink"] = (-np.sum(p_sink * d_row[..., 0], axis=-1)).astype(rt)
    return res


def _rows(a):
    """[H, R, X] -> [1, H*R, X]: the heads' rows stacked into one matrix."""
    return a.reshape(1, -1, a.shape[-1])


# ------------------------------------------------------------------ per-batch drivers
def _head_slice(a, heads):
    """Rows `heads` of a per-head array [Nx, ...] (Nx = 1 broadcasts; None stays None)."""
    if a is None or a.shape[0] == 1:
        return a
    return a[heads]


def attention_batch(
    q,
    k,
    v,
    *,
    scale,
    q_rope=None,
    k_rope=None,
    excluded_fn=None,
    bias_fn=None,
    bias_before_scale=False,
    keep_fn=None,
    keep_prob=1.0,
    sink=None,
    bench_dtype=None,
    q_block=DEFAULT_Q_BLOCK,
):
    """Forward attention of one batch, one KV head and one block of query rows at a time.

    q: [N, Sq, D], k: [Nkv, Sk, D], v: [Nkv, Sk, Dv] (any float dtype; GQA: query head h
    reads KV head h // (N / Nkv)); q_rope/k_rope: [N, Sq, Dr] / [Nkv, Sk, Dr] or None.
    excluded_fn(rows) -> bool [1 or N, R, Sk] or None;  bias_fn(rows) -> float [1 or N, R, Sk]
    or None;  keep_fn(heads, rows) -> bool [len(heads), R, Sk] or None (dropout);
    sink: [N] or None.  Returns (out [N, Sq, Dv], row_max [N, Sq], row_sum [N, Sq]) float32.
    """
    n, sq = q.shape[0], q.shape[1]
    nkv = k.shape[0]
    g = gqa_group(n, nkv)
    cdt = compute_dtype_for(q)
    out = np.zeros((n, sq, v.shape[2]), np.float32)
    rmax = np.full((n, sq), INVALID_ROW_MAX, np.float32)
    rsum = np.full((n, sq), INVALID_ROW_SUM, np.float32)
    if sq == 0:
        return out, rmax, rsum
    # the benchmark keeps about twice as many score-sized temporaries as the golden
    budget = SCORE_BUDGET if bench_dtype is None else SCORE_BUDGET // 2
    for r0, r1 in row_blocks(sq, q_block or block_rows(g, k.shape[1], budget)):
        rows = np.arange(r0, r1)
        ex_all = None if excluded_fn is None else excluded_fn(rows)
        bias_all = None if bias_fn is None else bias_fn(rows)
        for kh in range(nkv):
            heads = slice(kh * g, (kh + 1) * g)
            kk, vv = to_f32(k[kh]), to_f32(v[kh])
            o, m, l = attend_block(
                to_f32(q[heads, r0:r1]),
                kk,
                vv,
                scale=scale,
                q_rope=None if q_rope is None else to_f32(q_rope[heads, r0:r1]),
                k_rope=None if k_rope is None else to_f32(k_rope[kh]),
                bias=_head_slice(bias_all, heads),
                bias_before_scale=bias_before_scale,
                excluded=_head_slice(ex_all, heads),
                keep=None if keep_fn is None else keep_fn(range(kh * g, (kh + 1) * g), rows),
                keep_prob=keep_prob,
                sink=None if sink is None else np.asarray(sink)[heads],
                bench_dtype=bench_dtype,
                compute_dtype=cdt,
            )
            out[heads, r0:r1], rmax[heads, r0:r1], rsum[heads, r0:r1] = o, m, l
    return out, rmax, rsum


def attention_batch_grad(
    q,
    k,
    v,
    dy,
    o,
    row_max,
    row_sum,
    *,
    scale,
    q_rope=None,
    k_rope=None,
    excluded_fn=None,
    bias_fn=None,
    bias_before_scale=False,
    keep_fn=None,
    keep_prob=1.0,
    sink=None,
    bench_dtype=None,
    q_block=DEFAULT_Q_BLOCK,
):
    """Backward of `attention_batch` for one batch (same argument conventions; dy, o:
    [N, Sq, Dv]; row_max/row_sum: [N, Sq]).  Returns dict(dq, dk, dv, dq_rope, dk_rope,
    dsink) float32; dk/dv are summed over the query heads of each KV head (GQA),
    dsink [N] is this batch's contribution."""
    n, sq, d = q.shape
    nkv, sk = k.shape[0], k.shape[1]
    g = gqa_group(n, nkv)
    cdt = compute_dtype_for(q)
    adt = np.float64 if bench_dtype is None and cdt == np.float64 else np.float32  # sums over blocks
    res = dict(
        dq=np.zeros((n, sq, d), adt),
        dk=np.zeros((nkv, sk, d), adt),
        dv=np.zeros((nkv, sk, v.shape[2]), adt),
        dq_rope=None,
        dk_rope=None,
        dsink=None if sink is None else np.zeros(n, adt),
    )
    if q_rope is not None:
        res["dq_rope"] = np.zeros(q_rope.shape, adt)
        res["dk_rope"] = np.zeros(k_rope.shape, adt)
    # the backward keeps about four score-sized temporaries alive: a quarter of the budget
    for r0, r1 in row_blocks(sq, q_block or block_rows(g, sk, SCORE_BUDGET // 4)):
        rows = np.arange(r0, r1)
        ex_all = None if excluded_fn is None else excluded_fn(rows)
        bias_all = None if bias_fn is None else bias_fn(rows)
        for kh in range(nkv):
            heads = slice(kh * g, (kh + 1) * g)
            ex = _head_slice(ex_all, heads)
            c0, c1 = _trim_columns(ex, sk)
            if c1 <= c0:
                continue  # every key excluded: all gradients 0
            gr = attend_block_grad(
                to_f32(q[heads, r0:r1]),
                to_f32(k[kh, c0:c1]),
                to_f32(v[kh, c0:c1]),
                to_f32(dy[heads, r0:r1]),
                to_f32(o[heads, r0:r1]),
                row_max[heads, r0:r1],
                row_sum[heads, r0:r1],
                scale=scale,
                q_rope=None if q_rope is None else to_f32(q_rope[heads, r0:r1]),
                k_rope=None if k_rope is None else to_f32(k_rope[kh, c0:c1]),
                bias=_slice_cols(_head_slice(bias_all, heads), c0, c1),
                bias_before_scale=bias_before_scale,
                excluded=_slice_cols(ex, c0, c1),
                keep=None if keep_fn is None else _slice_cols(keep_fn(range(kh * g, (kh + 1) * g), rows), c0, c1),
                keep_prob=keep_prob,
                sink=None if sink is None else np.asarray(sink)[heads],
                bench_dtype=bench_dtype,
                compute_dtype=cdt,
            )
            res["dq"][heads, r0:r1] = gr["dq"]
            res["dk"][kh, c0:c1] += gr["dk"]
            res["dv"][kh, c0:c1] += gr["dv"]
            if q_rope is not None:
                res["dq_rope"][heads, r0:r1] = gr["dq_rope"]
                res["dk_rope"][kh, c0:c1] += gr["dk_rope"]
            if sink is not None:
                res["dsink"][heads] += gr["dsink"]
    return {name: None if a is None else a.astype(np.float32) for name, a in res.items()}
