"""Shared building blocks of the NumPy goldens (semantics and their sources: docs/golden.md).

Everything here works on one batch and one block of query rows at a time, so that no
[B, N, S1, S2] tensor is ever materialised.  Conventions:

* arrays handed in by callers are in the operator's dtype; `to_f32` widens them exactly;
* a "view" of Q/K/V for one batch is [N, S, D] (heads first), see `to_bnsd` / `tnd_view`;
* masks are boolean "excluded" arrays (True = the position does not take part), the
  operators' own convention (1 = excluded);
* the block kernels (scores, online softmax, backward) and the per-batch drivers that
  walk query-row blocks are in _blockwise.py.

The function names below are a stable interface (other golden modules import them).
"""

import inspect

import ml_dtypes
import numpy as np

# Values the official operators write for rows where every key is masked ("invalid rows").
INVALID_ROW_MAX = float(np.finfo(np.float32).min)
INVALID_ROW_SUM = float(np.finfo(np.float32).max)

INT_MAX = 2147483647

_DTYPES = {
    "fp16": np.dtype(np.float16),
    "float16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "fp32": np.dtype(np.float32),
    "float32": np.dtype(np.float32),
    "int8": np.dtype(np.int8),
}


# ----------------------------------------------------------------------------- golden pairs
def golden_pair(impl, name, benchmark_doc):
    """The golden `name` and its same-dtype `name_benchmark` (the two-golden rule of
    docs/precision.md) from one implementation `impl(bench, ...)`.  Both take impl's parameters
    after `bench`, so each operator's signature is written once; `name` takes impl's docstring."""
    public = inspect.signature(impl)
    public = public.replace(parameters=list(public.parameters.values())[1:])

    def variant(bench, fname, doc):
        def fn(*args, **kwargs):
            try:
                return impl(bench, *args, **kwargs)
            except TypeError as e:
                if e.__traceback__.tb_next is not None:  # raised inside impl, not by the call
                    raise
                raise TypeError(str(e).replace(f"{impl.__name__}()", f"{fname}()", 1)) from None

        fn.__name__ = fn.__qualname__ = fname
        fn.__doc__, fn.__module__, fn.__signature__ = doc, impl.__module__, public
        return fn

    return variant(False, name, impl.__doc__), variant(True, f"{name}_benchmark", benchmark_doc)


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


def tnd_view(x, start, length):
    """[N, length, D] view of batch rows start..start+length of a TND tensor [T, N, D]."""
    return x[start : start + length].transpose(1, 0, 2)


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


def sparse_excluded(
    sparse_mode, rows, sq, sk, *, pre_tokens=INT_MAX, next_tokens=INT_MAX, prefix_n=None, is_band_batch=False
):
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
        ex[:, : max(0, int(prefix_n))] = False
        return ex
    if sparse_mode in (7, 8):
        if is_band_batch:
            return band_excluded(rows, sk, pre_tokens, next_tokens, rd)
        return band_excluded(rows, sk, INT_MAX, 0, rd if sparse_mode == 7 else 0)
    raise ValueError(f"sparse_mode {sparse_mode} is not one of 0-8")


# The optimised masks the sparse modes that generate their mask take (sparse-mode page): the
# 2048 x 2048 lower-triangular one (modes 2, 3, 4, 7, 8) and the 3072 x 2048 causal-plus-prefix
# one (mode 6).  Modes 0 and 1 read the user's own [maxSq, maxSkv] mask; 5 takes BNSS / B1SS.
COMPRESSED_MASK_SHAPES = {
    2: (2048, 2048),
    3: (2048, 2048),
    4: (2048, 2048),
    6: (3072, 2048),
    7: (2048, 2048),
    8: (2048, 2048),
}


def check_compressed_mask(atten_mask, sparse_mode, name="atten_mask"):
    """ValueError unless a mask given with a compressed sparse mode has the documented shape
    (its last two dims; the leading ones are the operator's own rule)."""
    want = COMPRESSED_MASK_SHAPES.get(sparse_mode)
    if atten_mask is None or want is None:
        return
    shape = tuple(np.shape(atten_mask))
    if shape[-2:] != want:
        raise ValueError(
            f"{name}: shape {shape} but sparse_mode {sparse_mode} takes the compressed {want[0]}x{want[1]} mask"
        )


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
        raise ValueError(
            f"{name}: shape {np.asarray(atten_mask).shape} does not cover {int(rows.max()) + 1} query rows x {sk} keys"
        )
    mb = m[0 if m.shape[0] == 1 else b]
    return mb[:, rows, :sk] != 0


# ------------------------------------------------------------------------ pse / alibi
def pse_rows(pse, b, rows, sq, sk, name="pse", align="bottom_right"):
    """Float32 [Np, R, sk] slice of a 4-D positional bias [Bp, Np, H, W] (Bp in {1, B})
    for batch b.  align="top_left" (PFA/IFA pse_shift, which may be larger than the
    sequence) reads pse[.., rows, :sk].  align="bottom_right" (FA/FAG pse): the bias is
    aligned to the bottom-right corner of the batch's [sq, sk] score matrix (row
    H - sq + r, column W - sk + c), the identity for an exact [.., sq, sk] bias.  When sq > H the bias is the alibi-compressed form
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
    t = h - sq + rows  # row in the stored tensor
    shift = np.where(t < 0, (-t + h - 1) // h * h, 0)  # diagonal move for compressed rows
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
    rel = np.arange(sk, dtype=np.int64)[None, :] - rows[:, None] - (sk - sq) - int(q_start) + int(kv_start)
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
def tnd_drop_offsets(q_lens, kv_lens, n_heads):
    """Bit offset of every batch in a flattened TND dropout mask and the total number of
    bits.  The mask is dense, as the specs size it: batch b occupies n_heads * Sq_b * Skv_b
    bits, laid out [N, Sq, Skv], so a row may start in the middle of a byte."""
    sizes = [n_heads * int(q) * int(k) for q, k in zip(q_lens, kv_lens)]
    offs = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return offs[:-1], int(offs[-1])


def drop_keep_rows(drop_mask, bit_offset, head, sq, sk, rows):
    """Bool keep [R, sk] for one head and a contiguous block of query rows, read from the
    uint8 dropout mask (8 one-bit keeps per byte, least-significant bit first)."""
    rows = np.asarray(rows, np.int64)
    r0, r1 = int(rows[0]), int(rows[-1]) + 1
    first = bit_offset + (head * sq + r0) * sk
    nbits = (r1 - r0) * sk
    flat = np.asarray(drop_mask).reshape(-1)
    need = (first + nbits + 7) // 8
    if need > flat.size:
        raise ValueError(f"drop_mask: {flat.size} bytes is too short, needs at least {need}")
    bits = np.unpackbits(flat[first // 8 : need], bitorder="little")[first % 8 : first % 8 + nbits]
    return bits.reshape(r1 - r0, sk)[rows - r0].astype(bool)


# ---------------------------------------------------------------------- softmax stats
def replicate8(x):
    """Append a last axis of 8 identical copies (the softmax_max / softmax_sum layout)."""
    x = np.asarray(x, np.float32)
    return np.repeat(x[..., None], 8, axis=-1)
