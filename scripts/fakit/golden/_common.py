"""Shared building blocks of the NumPy goldens (semantics and their sources: docs/golden.md).

Everything here works on one batch and one block of query rows at a time, so that no
[B, N, S1, S2] tensor is ever materialised.  Conventions:

* arrays handed in by callers are in the operator's dtype; `to_f32` widens them exactly;
* a "view" of Q/K/V for one batch is [N, S, D] (heads first), see `to_bnsd` / `tnd_view`;
* masks are boolean "excluded" arrays (True = the position does not take part), the
  operators' own convention (1 = excluded);
* every score computation is float32 with BLAS matmuls (COMPUTE_DTYPE); docs/golden.md
  explains why that is accurate enough and how to switch to float64 for checking.

The function names below are a stable interface (other golden modules import them).
"""
import math

import ml_dtypes
import numpy as np

# Golden arithmetic precision.  float32 BLAS keeps the big cases within the time budget;
# set to np.float64 to cross-check the golden itself (tests do this on small cases).
COMPUTE_DTYPE = np.float32

# Values the official operators write for rows where every key is masked ("invalid rows").
INVALID_ROW_MAX = float(np.finfo(np.float32).min)
INVALID_ROW_SUM = float(np.finfo(np.float32).max)

INT_MAX = 2147483647
DEFAULT_Q_BLOCK = None    # query rows per golden block (None: sized by SCORE_BUDGET)
SCORE_BUDGET = 1 << 24    # score elements (heads x rows x keys) per block: 64 MiB of float32
BENCH_KV_BLOCK = 128      # keys per online-softmax step of the benchmark variant

_DTYPES = {
    "fp16": np.dtype(np.float16), "float16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16), "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "fp32": np.dtype(np.float32), "float32": np.dtype(np.float32),
    "int8": np.dtype(np.int8),
}


# ----------------------------------------------------------------------------- dtypes
def dtype_of(spec):
    """np.dtype for a dtype spec: np.float16, ml_dtypes.bfloat16, np.float32, or a name
    ("fp16", "bf16", "fp32", "float16", ...)."""
    if isinstance(spec, str):
        try:
            return _DTYPES[spec.lower()]
        except KeyError:
            raise ValueError(f"unknown dtype name {spec!r}") from None
    return np.dtype(spec)


def round_to(x, dtype):
    """Round `x` through `dtype` (fp16 / bf16 / fp32, via ml_dtypes for bf16) and return
    float32: the value a tensor of that dtype would hold."""
    return np.asarray(x).astype(dtype_of(dtype)).astype(np.float32)


def to_f32(x):
    """Widen an input array of any supported dtype (fp16, bf16, fp32, ints) to float32."""
    return np.asarray(x).astype(np.float32)


def float_dtype_of(x, name):
    """The floating dtype of input array `x`, checked to be fp16, bf16 or fp32."""
    dt = np.asarray(x).dtype
    if dt not in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)):
        raise ValueError(f"{name}: dtype {dt} is not float16, bfloat16 or float32")
    return dt


# ---------------------------------------------------------------- integer sequences
def int_seq(value, name, *, allow_none=True, length=None):
    """Normalise an integer-sequence argument (Python list/tuple or 1-D NumPy integer
    array) to a 1-D np.int64 array.  None stays None when allowed."""
    if value is None:
        if allow_none:
            return None
        raise ValueError(f"{name} is required")
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D integer sequence, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.equal(np.mod(arr, 1), 0)):
            raise ValueError(f"{name} must hold integers, got {arr.tolist()}")
    arr = arr.astype(np.int64)
    if length is not None and arr.size != length:
        raise ValueError(f"{name} must have {length} entries, got {arr.size}")
    return arr


def tnd_segments(cumulative, total, name):
    """(starts, lengths) of the batches of a TND tensor from the cumulative
    `actual_seq_*` values.  A batch of length 0 repeats the previous value, e.g. lengths
    [2,2,0,2] are passed as [2,4,4,6].  The last value must not exceed `total` (T)."""
    cum = int_seq(cumulative, name, allow_none=False)
    if cum.size == 0:
        raise ValueError(f"{name} must not be empty")
    starts = np.concatenate([[0], cum[:-1]]).astype(np.int64)
    lengths = cum - starts
    if np.any(lengths < 0):
        raise ValueError(f"{name} must be non-decreasing cumulative lengths, got {cum.tolist()}")
    if cum[-1] > total:
        raise ValueError(f"{name}: last value {cum[-1]} exceeds the T axis ({total})")
    return starts, lengths


# ---------------------------------------------------------------------------- layouts
LAYOUTS = ("BSH", "BSND", "BNSD", "BNSD_BSND", "TND")


def to_bnsd(x, layout, num_heads, name):
    """[B, N, S, D] view of a BSH / BSND / BNSD / BNSD_BSND tensor (BSH: H = N*D)."""
    x = np.asarray(x)
    if layout == "BSH":
        if x.ndim != 3 or x.shape[2] % num_heads:
            raise ValueError(f"{name}: BSH needs [B,S,H] with H divisible by {num_heads}, got {x.shape}")
        b, s, h = x.shape
        return x.reshape(b, s, num_heads, h // num_heads).transpose(0, 2, 1, 3)
    if layout == "BSND":
        _check_ndim(x, 4, name, layout)
        return x.transpose(0, 2, 1, 3)
    if layout in ("BNSD", "BNSD_BSND"):
        _check_ndim(x, 4, name, layout)
        return x
    raise ValueError(f"input_layout {layout!r} is not one of BSH, BSND, BNSD, BNSD_BSND")


def from_bnsd(out, layout):
    """Turn a [B, N, S, D] result into the output layout of `layout` (BNSD_BSND -> BSND)."""
    if layout == "BSH":
        b, n, s, d = out.shape
        return out.transpose(0, 2, 1, 3).reshape(b, s, n * d)
    if layout in ("BSND", "BNSD_BSND"):
        return out.transpose(0, 2, 1, 3)
    return out


def heads_of(x, layout, name):
    """Number of heads N of a 4-D BSND/BNSD tensor (None for BSH, which needs num_heads)."""
    x = np.asarray(x)
    if layout == "BSND":
        return x.shape[2]
    if layout in ("BNSD", "BNSD_BSND"):
        return x.shape[1]
    return None


def tnd_view(x, start, length):
    """[N, length, D] view of batch rows start..start+length of a TND tensor [T, N, D]."""
    return x[start:start + length].transpose(1, 0, 2)


def _check_ndim(x, ndim, name, layout):
    if x.ndim != ndim:
        raise ValueError(f"{name}: layout {layout} needs a {ndim}-D tensor, got shape {x.shape}")


def gqa_group(n_q, n_kv, name="num_key_value_heads"):
    """Query heads per KV head (G); query head h reads KV head h // G."""
    if n_kv <= 0 or n_q % n_kv:
        raise ValueError(f"{name}: query heads {n_q} must be a positive multiple of KV heads {n_kv}")
    return n_q // n_kv


# ------------------------------------------------------------------------------ masks
def band_excluded(rows, sk, pre_tokens, next_tokens, diag=0):
    """Bool [len(rows), sk]: True where key c lies outside the band
    row + diag - pre_tokens <= c <= row + diag + next_tokens.
    diag = 0 is the left-up alignment, diag = sk - sq the right-down one; negative
    pre/next tokens are allowed (the band then excludes the diagonal itself)."""
    rel = np.arange(sk, dtype=np.int64)[None, :] - (np.asarray(rows, np.int64)[:, None] + diag)
    return (rel > next_tokens) | (rel < -pre_tokens)


def band_batch_index(sparse_mode, q_lens, kv_lens):
    """The batch that carries the band of sparse modes 7 (last non-empty batch) and
    8 (first non-empty batch); non-empty = Sq > 0 and Skv > 0.  -1 if none."""
    idx = [i for i in range(len(q_lens)) if q_lens[i] > 0 and kv_lens[i] > 0]
    if not idx:
        return -1
    return idx[-1] if sparse_mode == 7 else idx[0]


def sparse_excluded(sparse_mode, rows, sq, sk, *, pre_tokens=INT_MAX, next_tokens=INT_MAX,
                    prefix_n=None, is_band_batch=False):
    """Bool [len(rows), sk] exclusion generated by a sparse mode for one batch (rows are
    0-based query rows of that batch), or None when the mode generates nothing (mode 1:
    the user mask alone decides).  Modes (docs/context/sparse_mode参数说明.md):
      0 band left-up (pre/next), 1 none, 2 causal left-up, 3 causal right-down,
      4 band right-down (pre/next), 5/6 prefix: causal right-down plus the first
      prefix_n keys always visible, 7/8: the band batch uses the right-down band, the
      other batches causal right-down (7) or left-up (8)."""
    rd = sk - sq
    if sparse_mode == 0:
        return band_excluded(rows, sk, pre_tokens, next_tokens, 0)
    if sparse_mode == 1:
        return None
    if sparse_mode == 2:
        return band_excluded(rows, sk, INT_MAX, 0, 0)
    if sparse_mode == 3:
        return band_excluded(rows, sk, INT_MAX, 0, rd)
    if sparse_mode == 4:
        return band_excluded(rows, sk, pre_tokens, next_tokens, rd)
    if sparse_mode in (5, 6):
        if prefix_n is None:
            raise ValueError(f"sparse_mode {sparse_mode} needs prefix")
        ex = band_excluded(rows, sk, INT_MAX, 0, rd)
        ex[:, :max(0, int(prefix_n))] = False
        return ex
    if sparse_mode in (7, 8):
        if is_band_batch:
            return band_excluded(rows, sk, pre_tokens, next_tokens, rd)
        return band_excluded(rows, sk, INT_MAX, 0, rd if sparse_mode == 7 else 0)
    raise ValueError(f"sparse_mode {sparse_mode} is not one of 0-8")


def user_mask_rows(atten_mask, b, rows, sk, name="atten_mask"):
    """Bool [Nm, R, sk] (Nm = 1 or N) of a user mask for batch b and the given rows.
    Accepted shapes: [S1,S2], [B,S1,S2], [1,S1,S2], [B,1,S1,S2], [1,1,S1,S2],
    [B,N,S1,S2] and [1,N,S1,S2]; the mask may be larger than (sq, sk) (e.g. padded to 32
    keys, or [maxSq, maxSkv] for TND) and is read from its top-left corner.  Any
    non-zero value means excluded."""
    m = np.asarray(atten_mask)
    if m.ndim == 2:
        m = m[None, None]
    elif m.ndim == 3:
        m = m[:, None]
    elif m.ndim != 4:
        raise ValueError(f"{name}: unsupported mask rank {m.ndim} (shape {m.shape})")
    if m.shape[0] not in (1,) and b >= m.shape[0]:
        raise ValueError(f"{name}: batch axis {m.shape[0]} too small for batch {b}")
    rows = np.asarray(rows, np.int64)
    if rows.size and (rows.max() >= m.shape[2] or sk > m.shape[3]):
        raise ValueError(f"{name}: shape {np.asarray(atten_mask).shape} does not cover "
                         f"{int(rows.max()) + 1} query rows x {sk} keys")
    mb = m[0 if m.shape[0] == 1 else b]
    return mb[:, rows, :sk] != 0


def combine_excluded(*parts):
    """OR of boolean exclusion arrays (None = nothing excluded); result broadcast-ready."""
    out = None
    for p in parts:
        if p is None:
            continue
        out = p if out is None else (out | p)
    return out


# ------------------------------------------------------------------------ pse / alibi
def pse_rows(pse, b, rows, sq, sk, name="pse", align="bottom_right"):
    """Float32 [Np, R, sk] slice of a 4-D positional bias [Bp, Np, H, W] (Bp in {1, B})
    for batch b.  align="top_left" (PFA/IFA pse_shift, which may be larger than the
    sequence) reads pse[.., rows, :sk].  align="bottom_right" (FA/FAG pse): the bias is aligned to the bottom-right corner of the batch's
    [sq, sk] score matrix (row H - sq + r, column W - sk + c), which is the identity
    for an exact [.., sq, sk] bias.  When sq > H the bias is the alibi-compressed form
    (the last H = 1024 rows of a Toeplitz matrix): rows above are rebuilt by moving
    down-right along the diagonal by multiples of H (exact for Toeplitz inputs);
    positions that fall outside the stored columns read 0 (they are masked in the
    causal modes where compression is allowed)."""
    p = np.asarray(pse)
    if p.ndim != 4:
        raise ValueError(f"{name}: expected a 4-D tensor, got shape {p.shape}")
    bp, _, h, w = p.shape
    if sk > w:
        raise ValueError(f"{name}: last axis {w} shorter than the key length {sk}")
    pb = p[0 if bp == 1 else b]
    rows = np.asarray(rows, np.int64)
    if align == "top_left":
        if rows.size and rows.max() >= h:
            raise ValueError(f"{name}: shape {p.shape} does not cover query row {int(rows.max())}")
        return pb[:, rows, :sk].astype(np.float32)
    t = h - sq + rows                                   # row in the stored tensor
    shift = np.where(t < 0, (-t + h - 1) // h * h, 0)   # diagonal move for compressed rows
    t = t + shift
    cols = (w - sk) + np.arange(sk, dtype=np.int64)[None, :] + shift[:, None]
    valid = cols < w
    vals = pb[:, t[:, None], np.minimum(cols, w - 1)].astype(np.float32)
    if not valid.all():
        vals = np.where(valid[None], vals, np.float32(0))
    return vals


def alibi_rows(slopes, b, rows, sq, sk, q_start=0, kv_start=0, use_sqrt=False, name="pse_shift"):
    """Float32 [N, R, sk] internally generated alibi of pse types 2 and 3:
    slope[h] * -|c - r - (sk - sq) - q_start + kv_start|  (type 2)   and
    slope[h] * -sqrt(|...|)  (type 3).  The zero line is the right-down diagonal
    shifted by the start indices.  slopes: [N] or [B, N] (float32)."""
    s = np.asarray(slopes, np.float32)
    if s.ndim == 2:
        s = s[b]
    elif s.ndim != 1:
        raise ValueError(f"{name}: alibi slopes must be [N] or [B,N], got shape {s.shape}")
    rows = np.asarray(rows, np.int64)
    rel = (np.arange(sk, dtype=np.int64)[None, :] - rows[:, None]
           - (sk - sq) - int(q_start) + int(kv_start))
    base = np.abs(rel).astype(np.float32)
    if use_sqrt:
        base = np.sqrt(base)
    return -s[:, None, None] * base[None]


def start_index(values, b, name):
    """Start index of batch b from q_start_idx / kv_start_idx (None -> 0; one value
    applies to every batch; otherwise one value per batch)."""
    if values is None:
        return 0
    if values.size == 0:
        return 0
    if values.size == 1:
        return int(values[0])
    if b >= values.size:
        raise ValueError(f"{name}: has {values.size} values, batch {b} needs one")
    return int(values[b])


# ---------------------------------------------------------------------------- dropout
def drop_row_stride(sk):
    """Bits per (head, query row) in a dropout mask: Skv padded to a multiple of 16."""
    return (int(sk) + 15) // 16 * 16


def tnd_drop_offsets(q_lens, kv_lens, n_heads):
    """Bit offset of every batch in a flattened TND dropout mask and the total number of
    bits.  Batch b occupies n_heads * Sq_b * pad16(Skv_b) bits, laid out [N, Sq, pad16(Skv)]."""
    sizes = [n_heads * int(q) * drop_row_stride(k) for q, k in zip(q_lens, kv_lens)]
    offs = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return offs[:-1], int(offs[-1])


def drop_keep_rows(drop_mask, bit_offset, head, sq, sk, rows):
    """Bool keep [R, sk] for one head and a contiguous block of query rows, read from the
    uint8 dropout mask (8 one-bit keeps per byte, least-significant bit first).  Rows are
    16-bit aligned, so every row starts on a byte boundary."""
    stride = drop_row_stride(sk)
    rows = np.asarray(rows, np.int64)
    r0, r1 = int(rows[0]), int(rows[-1]) + 1
    first = bit_offset + (head * sq + r0) * stride
    nbits = (r1 - r0) * stride
    flat = np.asarray(drop_mask).reshape(-1)
    need = (first + nbits + 7) // 8
    if need > flat.size:
        raise ValueError(f"drop_mask: {flat.size} bytes is too short, needs at least {need}")
    bits = np.unpackbits(flat[first // 8:first // 8 + nbits // 8], bitorder="big")
    return bits.reshape(r1 - r0, stride)[rows - r0, :sk].astype(bool)


# ---------------------------------------------------------------------- softmax stats
def replicate8(x):
    """Append a last axis of 8 identical copies (the softmax_max / softmax_sum layout)."""
    x = np.asarray(x, np.float32)
    return np.repeat(x[..., None], 8, axis=-1)


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


def scores_block(q, k, scale, *, q_rope=None, k_rope=None, bias=None, bias_before_scale=False,
                 fold_scale=True):
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


def attend_block(q, k, v, *, scale, q_rope=None, k_rope=None, bias=None,
                 bias_before_scale=False, excluded=None, keep=None, keep_prob=1.0,
                 sink=None, bench_dtype=None):
    """Attention of one block of query rows against all keys of one KV head.

    q: [H, R, D] (H query heads sharing this KV head), k: [C, D], v: [C, Dv];
    bias / excluded / keep broadcast to [H, R, C]; sink: [H] logits joining every row's
    softmax denominator (no value row).  Returns (out [H,R,Dv], row_max [H,R],
    row_sum [H,R]) as float32, where row_max/row_sum are the softmax statistics of the
    scaled scores (the sink included).  Invalid rows (every key excluded, no sink) give
    out = 0, max = INVALID_ROW_MAX, sum = INVALID_ROW_SUM.

    bench_dtype=None computes the golden (whole rows at once, COMPUTE_DTYPE).  A dtype
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
    dt = COMPUTE_DTYPE if bench_dtype is None else np.float32
    q, k, v = q.astype(dt, copy=False), k.astype(dt, copy=False), v.astype(dt, copy=False)
    if q_rope is not None:
        q_rope, k_rope = q_rope.astype(dt, copy=False), k_rope.astype(dt, copy=False)
    sink_b = None if sink is None else np.asarray(sink, dt).reshape(h, 1)
    s = scores_block(q, k, scale, q_rope=q_rope, k_rope=k_rope, bias=bias,
                     bias_before_scale=bias_before_scale, fold_scale=bench_dtype is None)
    if excluded is not None:
        np.copyto(s, -np.inf, where=excluded)
    kp = None if keep is None else np.broadcast_to(keep, s.shape)
    if bench_dtype is None:
        m, p = _softmax_numerators(s, sink_b)
        c = None
    else:
        m, p, c = _online_numerators(s, sink_b)
    valid = np.isfinite(m)                      # False only without a sink (invalid row)
    m_safe = np.where(valid, m, 0)
    l = p.sum(axis=-1, keepdims=True) if c is None else (p.sum(axis=-1) * c).sum(-1)[..., None]
    if sink_b is not None:                      # the sink's own exp(sink - max) term
        l = l + np.exp(sink_b[:, None] - m_safe)
    if kp is not None:
        kp = kp if c is None else _pad_blocks(kp, False)
        p = np.where(kp, p * dt(1.0 / keep_prob), dt(0))
    if bench_dtype is not None:                 # P in the operator's dtype, rescaled in fp32
        p = (round_to(p, bench_dtype) * c[..., None]).reshape(h, r, -1)[..., :k.shape[0]]
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
    if sink_b is not None:                      # the sink starts the running max
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


def attend_block_grad(q, k, v, dy, o, row_max, row_sum, *, scale, q_rope=None, k_rope=None,
                      bias=None, bias_before_scale=False, excluded=None, keep=None,
                      keep_prob=1.0, sink=None, bench_dtype=None):
    """Backward of `attend_block` for one block of query rows of H heads sharing a KV head.

    dy, o: [H, R, Dv]; row_max/row_sum: [H, R] from the forward.  P is recomputed from
    the statistics, D = rowsum(dy ∘ o), dS = P ∘ (dP − D) with dP = dy·vᵀ (∘ keep/keep_prob).
    Returns dict(dq [H,R,D], dk [C,D], dv [C,Dv], dq_rope, dk_rope, dsink [H]) in float32;
    dk/dv/dk_rope are this block's contributions, summed over the H heads.
    bench_dtype rounds P (after dropout) and dS to that dtype before their matmuls.
    """
    dt = COMPUTE_DTYPE if bench_dtype is None else np.float32
    cast = (lambda a: None if a is None else np.asarray(a).astype(dt, copy=False))
    q, k, v, dy, o, q_rope, k_rope = map(cast, (q, k, v, dy, o, q_rope, k_rope))
    h, r = q.shape[0], q.shape[1]
    s = scores_block(q, k, scale, q_rope=q_rope, k_rope=k_rope, bias=bias,
                     bias_before_scale=bias_before_scale, fold_scale=bench_dtype is None)
    p = probs_from_stats(s, np.asarray(row_max, dt), np.asarray(row_sum, dt), excluded)
    dp = np.matmul(dy, v.T)
    d_row = np.sum(dy * o, axis=-1, keepdims=True)
    if keep is not None:
        kf = np.where(keep, dt(1.0 / keep_prob), dt(0))
        p_drop, dp = p * kf, dp * kf
    else:
        p_drop = p
    ds = p * (dp - d_row)
    if bench_dtype is not None:
        p_drop, ds = round_to(p_drop, bench_dtype), round_to(ds, bench_dtype)
    dv = np.einsum("hrc,hrd->cd", p_drop, dy, optimize=True) if h > 1 else p_drop[0].T @ dy[0]
    ds2 = ds.reshape(h * r, -1)
    dq = np.matmul(ds, k) * dt(scale)
    dk = (ds2.T @ q.reshape(h * r, -1)) * dt(scale)
    res = dict(dq=dq.astype(np.float32), dk=dk.astype(np.float32), dv=dv.astype(np.float32),
               dq_rope=None, dk_rope=None, dsink=None)
    if q_rope is not None:
        res["dq_rope"] = (np.matmul(ds, k_rope) * dt(scale)).astype(np.float32)
        res["dk_rope"] = ((ds2.T @ q_rope.reshape(h * r, -1)) * dt(scale)).astype(np.float32)
    if sink is not None:
        sk_ = np.asarray(sink, dt).reshape(h, 1)
        with np.errstate(over="ignore", invalid="ignore"):
            p_sink = np.exp(sk_ - np.asarray(row_max, dt)) / np.asarray(row_sum, dt)
        p_sink = np.where(np.isfinite(p_sink), p_sink, 0)
        res["dsink"] = (-np.sum(p_sink * d_row[..., 0], axis=-1)).astype(np.float32)
    return res


# ------------------------------------------------------------------ per-batch drivers
def _head_slice(a, heads):
    """Rows `heads` of a per-head array [Nx, ...] (Nx = 1 broadcasts; None stays None)."""
    if a is None or a.shape[0] == 1:
        return a
    return a[heads]


def attention_batch(q, k, v, *, scale, q_rope=None, k_rope=None, excluded_fn=None,
                    bias_fn=None, bias_before_scale=False, keep_fn=None, keep_prob=1.0,
                    sink=None, bench_dtype=None, q_block=DEFAULT_Q_BLOCK):
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
                to_f32(q[heads, r0:r1]), kk, vv, scale=scale,
                q_rope=None if q_rope is None else to_f32(q_rope[heads, r0:r1]),
                k_rope=None if k_rope is None else to_f32(k_rope[kh]),
                bias=_head_slice(bias_all, heads), bias_before_scale=bias_before_scale,
                excluded=_head_slice(ex_all, heads),
                keep=None if keep_fn is None else keep_fn(range(kh * g, (kh + 1) * g), rows),
                keep_prob=keep_prob, sink=None if sink is None else np.asarray(sink)[heads],
                bench_dtype=bench_dtype)
            out[heads, r0:r1], rmax[heads, r0:r1], rsum[heads, r0:r1] = o, m, l
    return out, rmax, rsum


def attention_batch_grad(q, k, v, dy, o, row_max, row_sum, *, scale, q_rope=None,
                         k_rope=None, excluded_fn=None, bias_fn=None, bias_before_scale=False,
                         keep_fn=None, keep_prob=1.0, sink=None, bench_dtype=None,
                         q_block=DEFAULT_Q_BLOCK):
    """Backward of `attention_batch` for one batch (same argument conventions; dy, o:
    [N, Sq, Dv]; row_max/row_sum: [N, Sq]).  Returns dict(dq, dk, dv, dq_rope, dk_rope,
    dsink) float32; dk/dv are summed over the query heads of each KV head (GQA),
    dsink [N] is this batch's contribution."""
    n, sq, d = q.shape
    nkv, sk = k.shape[0], k.shape[1]
    g = gqa_group(n, nkv)
    res = dict(dq=np.zeros((n, sq, d), np.float32), dk=np.zeros((nkv, sk, d), np.float32),
               dv=np.zeros((nkv, sk, v.shape[2]), np.float32), dq_rope=None, dk_rope=None,
               dsink=None if sink is None else np.zeros(n, np.float32))
    if q_rope is not None:
        res["dq_rope"] = np.zeros(q_rope.shape, np.float32)
        res["dk_rope"] = np.zeros(k_rope.shape, np.float32)
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
                continue                         # every key excluded: all gradients 0
            gr = attend_block_grad(
                to_f32(q[heads, r0:r1]), to_f32(k[kh, c0:c1]), to_f32(v[kh, c0:c1]),
                to_f32(dy[heads, r0:r1]), to_f32(o[heads, r0:r1]),
                row_max[heads, r0:r1], row_sum[heads, r0:r1], scale=scale,
                q_rope=None if q_rope is None else to_f32(q_rope[heads, r0:r1]),
                k_rope=None if k_rope is None else to_f32(k_rope[kh, c0:c1]),
                bias=_slice_cols(_head_slice(bias_all, heads), c0, c1),
                bias_before_scale=bias_before_scale, excluded=_slice_cols(ex, c0, c1),
                keep=None if keep_fn is None else
                _slice_cols(keep_fn(range(kh * g, (kh + 1) * g), rows), c0, c1),
                keep_prob=keep_prob, sink=None if sink is None else np.asarray(sink)[heads],
                bench_dtype=bench_dtype)
            res["dq"][heads, r0:r1] = gr["dq"]
            res["dk"][kh, c0:c1] += gr["dk"]
            res["dv"][kh, c0:c1] += gr["dv"]
            if q_rope is not None:
                res["dq_rope"][heads, r0:r1] = gr["dq_rope"]
                res["dk_rope"][kh, c0:c1] += gr["dk_rope"]
            if sink is not None:
                res["dsink"][heads] += gr["dsink"]
    return res
