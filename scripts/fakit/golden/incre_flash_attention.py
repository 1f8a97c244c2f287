"""Golden of aclnnIncreFlashAttentionV4 (decode: query S = 1 over a KV cache).

Semantics (sources and every choice in docs/golden_decode_sparse.md):
  score[n, j] = scale_value * q[n] . k[n // G, j] + pse_shift[b, n, j]   (pse added after scale)
  positions j outside the batch's KV range, or with atten_mask[b, j] != 0, are excluded;
  out[n] = softmax(score[n]) @ v[n // G]; a row with no position left outputs 0.
The KV range of batch b is [0, S) by default, [0, L_b) with actual_seq_lengths, and
[S - pad - L_b, S - pad) with kv_padding_size (KV left padding; an empty one pads nothing). Masks and pse are indexed by
the absolute KV position. int8 KV is dequantised as (x + antiquant_offset) * antiquant_scale;
quant_scale2 quantises the output to int8 (round half to even, saturate to [-128, 127]).

`incre_flash_attention_v4` computes in float64 from the given (already rounded) inputs;
`incre_flash_attention_v4_benchmark` computes the way a device does in the operator's dtype.
"""

import numpy as np

from ._common import golden_pair, int_seq
from ._common import round_to as _round_to

__all__ = ["incre_flash_attention_v4", "incre_flash_attention_v4_benchmark"]

KV_BLOCK = 128  # keys per online-softmax step of the benchmark (the device's S2 tile)
_FLOAT_QUERY = ("float16", "bfloat16", "float32")


# ----------------------------------------------------------------------------- small helpers
def _given(x):
    """An optional tensor, or None when it is not passed or empty (spec 002 allows every optional
    tensor to be empty, which means the same as not passing it)."""
    return None if x is None or np.size(x) == 0 else x


def _no_padding(kv_padding_size):
    """No KV left padding: kvPaddingSize not passed or empty."""
    return _given(kv_padding_size) is None


def _split_heads(x, layout, num_heads, name):
    """Query/output-like (B, S, H) | (B, S, N, D) | (B, N, S, D) -> (B, N, S, D) view."""
    if layout == "BSH":
        if x.ndim != 3 or x.shape[2] % num_heads:
            raise ValueError(
                f"{name} with input_layout BSH must be (B, S, H) with H divisible by {num_heads} heads, got {x.shape}"
            )
        b, s, h = x.shape
        return x.reshape(b, s, num_heads, h // num_heads).transpose(0, 2, 1, 3)
    if x.ndim != 4:
        raise ValueError(f"{name} with input_layout {layout} must be 4-D, got {x.shape}")
    if layout == "BSND":
        return x.transpose(0, 2, 1, 3)
    return x  # BNSD


def _astype_in_memory_order(x, dtype):
    """x.astype(dtype) for a transposed view of a contiguous block (BSH/BSND keys seen as
    (N, S, D)): converts in memory order, which is much faster than walking the view, and
    returns the same values with the same strides order."""
    perm = np.argsort([-st for st in x.strides], kind="stable")
    flat = x.transpose(perm)
    if not flat.flags.c_contiguous:
        return x.astype(dtype)
    return flat.astype(dtype).transpose(np.argsort(perm))


class _Problem:
    """Inputs normalised to per-batch (N_kv, L, D) KV slices plus masks/pse/quant params."""

    def __init__(
        self,
        query,
        key,
        value,
        pse_shift,
        atten_mask,
        actual_seq_lengths,
        dequant_scale1,
        quant_scale1,
        dequant_scale2,
        quant_scale2,
        quant_offset2,
        antiquant_scale,
        antiquant_offset,
        block_table,
        kv_padding_size,
        num_heads,
        input_layout,
        num_key_value_heads,
        block_size,
        inner_precise,
    ):
        if input_layout not in ("BSH", "BSND", "BNSD"):
            raise ValueError(f"input_layout must be BSH, BSND or BNSD, got {input_layout!r}")
        pse_shift, atten_mask, block_table = _given(pse_shift), _given(atten_mask), _given(block_table)
        dequant_scale1, quant_scale1, dequant_scale2 = (
            _given(dequant_scale1),
            _given(quant_scale1),
            _given(dequant_scale2),
        )
        quant_scale2, quant_offset2 = _given(quant_scale2), _given(quant_offset2)
        antiquant_scale, antiquant_offset = _given(antiquant_scale), _given(antiquant_offset)
        query = np.asarray(query)
        if query.dtype.name not in _FLOAT_QUERY:
            raise ValueError(f"query dtype must be float16 or bfloat16, got {query.dtype}")
        if num_heads <= 0:
            raise ValueError(f"num_heads must be positive, got {num_heads}")
        n_kv = num_key_value_heads or num_heads
        if num_heads % n_kv or num_heads // n_kv > 64:
            raise ValueError(
                f"num_heads ({num_heads}) must be a multiple of num_key_value_heads ({n_kv}) with a ratio of at most 64"
            )
        if inner_precise not in (0, 1):
            raise ValueError(f"inner_precise must be 0 or 1, got {inner_precise}")
        for name, val in (
            ("dequant_scale1", dequant_scale1),
            ("quant_scale1", quant_scale1),
            ("dequant_scale2", dequant_scale2),
        ):
            if val is not None:
                raise ValueError(
                    f"{name} is only used with int8 query, which aclnnIncreFlashAttentionV4 does not support; pass None"
                )
        q4 = _split_heads(query, input_layout, num_heads, "query")
        if q4.shape[1] != num_heads or q4.shape[2] != 1:
            raise ValueError(f"query must have N = num_heads = {num_heads} and S = 1, got {query.shape}")
        self.query, self.layout, self.dtype = query, input_layout, query.dtype
        self.q = q4[:, :, 0, :]  # (B, N, D) in query dtype
        self.B, self.N, self.D = self.q.shape
        self.n_kv, self.G = n_kv, num_heads // n_kv

        if not isinstance(key, (list, tuple)) or not isinstance(value, (list, tuple)):
            raise ValueError("key and value must be lists of arrays (the aclTensorList)")
        if len(key) != len(value) or any(np.shape(k) != np.shape(v) for k, v in zip(key, value)):
            raise ValueError("key and value lists must hold tensors of identical shapes")
        self.kv_int8 = np.asarray(key[0]).dtype == np.int8
        self.lengths = int_seq(actual_seq_lengths, "actual_seq_lengths")
        if self.lengths is not None:
            if self.lengths.size == 1:
                self.lengths = np.repeat(self.lengths, self.B)
            if self.lengths.size != self.B or (self.lengths < 0).any():
                raise ValueError(
                    f"actual_seq_lengths must hold B={self.B} (or 1) values >= 0, got {list(self.lengths)}"
                )
        self.paged = block_table is not None
        if self.paged:
            self._init_paged(key, value, np.asarray(block_table), block_size, kv_padding_size)
        else:
            self._init_contiguous(key, value, kv_padding_size)
        self._init_mask_pse(atten_mask, pse_shift)
        self._init_antiquant(antiquant_scale, antiquant_offset)
        self._init_quant(quant_scale2, quant_offset2)

    # -- KV sources ------------------------------------------------------------------------
    def _init_contiguous(self, key, value, kv_padding_size):
        if len(key) == 1 and np.shape(key[0])[0] == self.B:
            ks = [_split_heads(np.asarray(key[0]), self.layout, self.n_kv, "key")]
            vs = [_split_heads(np.asarray(value[0]), self.layout, self.n_kv, "value")]
            self._kv = lambda b: (ks[0][b], vs[0][b])
            seq = [ks[0].shape[2]] * self.B
            shapes = [ks[0].shape]
        elif len(key) == self.B and all(np.shape(k)[0] == 1 for k in key):
            ks = [_split_heads(np.asarray(k), self.layout, self.n_kv, "key") for k in key]
            vs = [_split_heads(np.asarray(v), self.layout, self.n_kv, "value") for v in value]
            self._kv = lambda b: (ks[b][0], vs[b][0])
            seq = [k.shape[2] for k in ks]
            shapes = [k.shape for k in ks]
        else:
            raise ValueError(
                f"key list must hold 1 tensor of batch B={self.B} or B tensors of "
                f"batch 1, got shapes {[np.shape(k) for k in key]}"
            )
        for shp in shapes:
            if shp[1] != self.n_kv or shp[3] != self.D:
                raise ValueError(
                    f"key/value must have N = num_key_value_heads = {self.n_kv} and "
                    f"D = {self.D}, got (B, N, S, D) = {shp}"
                )
        self.seq = np.asarray(seq, dtype=np.int64)
        pad = (
            None
            if _no_padding(kv_padding_size)
            else int_seq(np.atleast_1d(kv_padding_size), "kv_padding_size", length=1)
        )
        starts = np.zeros(self.B, np.int64)
        if self.lengths is None:
            ends = self.seq.copy()
        elif pad is None:
            if (self.lengths > self.seq).any():
                raise ValueError(f"actual_seq_lengths {list(self.lengths)} exceed the KV S {list(self.seq)}")
            ends = self.lengths.copy()
        else:
            # Left padding: valid tokens end `pad` before S; negative pad counts as 0.
            pad = max(int(pad[0]), 0)
            ends = self.seq - pad
            starts = ends - self.lengths
        self.empty = (starts < 0) | (ends < 0) | (ends <= starts)
        self.starts, self.ends = np.maximum(starts, 0), np.maximum(ends, 0)

    def _init_paged(self, key, value, table, block_size, kv_padding_size):
        if len(key) != 1:
            raise ValueError("with block_table, key/value must be lists of exactly one cache tensor")
        if not _no_padding(kv_padding_size):
            raise ValueError("kv_padding_size cannot be combined with block_table (paged attention)")
        if self.lengths is None:
            raise ValueError("actual_seq_lengths is required with block_table (paged attention)")
        kc, vc = np.asarray(key[0]), np.asarray(value[0])
        if table.ndim != 2 or table.shape[0] != self.B:
            raise ValueError(f"block_table must be (B={self.B}, maxBlockNumPerSeq), got {table.shape}")
        if kc.ndim == 3:  # (blocknum, blocksize, H)
            bs = kc.shape[1]
            if kc.shape[2] != self.n_kv * self.D:
                raise ValueError(f"paged key (blocknum, blocksize, H) needs H = {self.n_kv * self.D}, got {kc.shape}")
        elif kc.ndim == 4:  # (blocknum, KV_N, blocksize, D): only with BNSD query
            if self.layout != "BNSD":
                raise ValueError("paged cache (blocknum, KV_N, blocksize, D) needs input_layout BNSD")
            bs = kc.shape[2]
            if kc.shape[1] != self.n_kv or kc.shape[3] != self.D:
                raise ValueError(f"paged key must be (blocknum, {self.n_kv}, blocksize, {self.D}), got {kc.shape}")
        else:
            raise ValueError(f"paged key must be 3-D or 4-D, got {kc.shape}")
        if block_size != bs or bs <= 0 or bs > 512:
            raise ValueError(
                f"block_size ({block_size}) must equal the cache block size ({bs}), non-zero and at most 512"
            )
        nblk = -(-self.lengths // bs)
        if (nblk > table.shape[1]).any():
            raise ValueError(
                f"block_table has {table.shape[1]} columns, fewer than the blocks "
                f"needed by actual_seq_lengths {list(self.lengths)}"
            )

        def gather(cache, b):
            ids = table[b, : nblk[b]].astype(np.int64)
            if ((ids < 0) | (ids >= cache.shape[0])).any():
                raise ValueError(f"block_table[{b}] holds block ids outside [0, {cache.shape[0]})")
            if cache.ndim == 3:
                tok = cache[ids].reshape(-1, self.n_kv, self.D)[: self.lengths[b]]
                return tok.transpose(1, 0, 2)
            blocks = cache[ids]  # (nb, N, bs, D)
            return blocks.transpose(1, 0, 2, 3).reshape(self.n_kv, -1, self.D)[:, : self.lengths[b]]

        self._kv = lambda b: (gather(kc, b), gather(vc, b))
        self.seq = nblk * bs
        self.starts = np.zeros(self.B, np.int64)
        self.ends = self.lengths.copy()
        self.empty = self.lengths == 0

    # -- masks, position encoding, quantisation parameters -----------------------------------
    def _init_mask_pse(self, atten_mask, pse_shift):
        self.mask = None
        if atten_mask is not None:
            m = np.asarray(atten_mask)
            if m.shape[0] != self.B or m.ndim not in (2, 3, 4) or any(d != 1 for d in m.shape[1:-1]):
                raise ValueError(f"atten_mask must be (B, S), (B, 1, S) or (B, 1, 1, S) with B={self.B}, got {m.shape}")
            self.mask = m.reshape(self.B, -1) != 0
        self.pse = None
        if pse_shift is not None:
            p = np.asarray(pse_shift)
            if p.ndim != 4 or p.shape[0] not in (1, self.B) or p.shape[1] != self.N or p.shape[2] != 1:
                raise ValueError(f"pse_shift must be (B, N, 1, S) or (1, N, 1, S) with N={self.N}, got {p.shape}")
            self.pse = p[:, :, 0, :]
        need = int(self.ends.max(initial=0))
        for name, arr in (("atten_mask", self.mask), ("pse_shift", self.pse)):
            if arr is not None and arr.shape[-1] < need:
                raise ValueError(f"{name} last dim ({arr.shape[-1]}) is shorter than the KV positions used ({need})")

    def _init_antiquant(self, scale, offset):
        self.anti = None
        if not self.kv_int8:
            if scale is not None or offset is not None:
                raise ValueError("antiquant_scale/antiquant_offset need int8 key/value")
            return
        if scale is None:
            raise ValueError("int8 key/value need antiquant_scale")

        def params(arr, name):
            a = np.asarray(arr, dtype=np.float64)
            if a.size == 2:  # per-tensor: [key, value]
                return a.reshape(2, 1, 1, 1)
            if a.size == 2 * self.n_kv * self.D and a.shape[0] == 2:  # (2,N,1,D)|(2,N,D)|(2,H)
                return a.reshape(2, self.n_kv, 1, self.D)
            raise ValueError(
                f"{name} must be (2,), (2, N, 1, D), (2, N, D) or (2, H) with N={self.n_kv}, D={self.D}, got {a.shape}"
            )

        s = params(scale, "antiquant_scale")
        o = params(offset, "antiquant_offset") if offset is not None else np.zeros_like(s)
        if offset is not None and np.asarray(offset).shape != np.asarray(scale).shape:
            raise ValueError("antiquant_offset must have the shape of antiquant_scale")
        self.anti = (s, o)

    def _init_quant(self, scale, offset):
        self.quant = None
        if scale is None:
            if offset is not None:
                raise ValueError("quant_offset2 needs quant_scale2")
            return
        s = np.asarray(scale, dtype=np.float64).reshape(-1)
        o = np.asarray(offset, dtype=np.float64).reshape(-1) if offset is not None else np.zeros_like(s)
        if offset is not None and np.asarray(offset).shape != np.asarray(scale).shape:
            raise ValueError("quant_offset2 must have the shape of quant_scale2")
        if s.size not in (1, self.N * self.D):
            raise ValueError(
                f"quant_scale2 must be per-tensor (1) or per-channel with N*D = "
                f"{self.N * self.D} elements, got {np.shape(scale)}"
            )
        # per-channel index is head * D + d over the output heads
        shape = (1, 1) if s.size == 1 else (self.N, self.D)
        self.quant = (s.reshape(shape), o.reshape(shape))

    # -- per batch data ----------------------------------------------------------------------
    def batch(self, b):
        """(k, v, mask, pse) of batch b restricted to its valid KV range; k/v raw dtype."""
        k, v = self._kv(b)
        lo, hi = int(self.starts[b]), int(self.ends[b])
        if not self.paged:
            k, v = k[:, lo:hi], v[:, lo:hi]
        mask = self.mask[b, lo:hi] if self.mask is not None else None
        pse = None
        if self.pse is not None:
            pse = self.pse[b if self.pse.shape[0] > 1 else 0, :, lo:hi]
        return k, v, mask, pse

    def dequant(self, x, which, dtype):
        """int8 -> float via (x + offset) * scale; `which` 0 = key, 1 = value."""
        if self.anti is None:
            return _astype_in_memory_order(x, dtype)
        s, o = self.anti[0][which], self.anti[1][which]
        y = _astype_in_memory_order(x, np.float64)
        y += o
        y *= s
        return y.astype(dtype, copy=False)

    def finish(self, out):
        """(B, N, D) float -> output in the query layout, float32 (int8 values if quantised)."""
        out4 = out[:, :, None, :]
        if self.layout == "BSND":
            out4 = out4.transpose(0, 2, 1, 3)
        elif self.layout == "BSH":
            out4 = out4.transpose(0, 2, 1, 3).reshape(self.query.shape)
        return np.ascontiguousarray(out4, dtype=np.float32)


def _quantize(out, quant, via_fp16):
    """y = out * scale + offset, rounded half to even and saturated to int8 (as float)."""
    s, o = quant
    if via_fp16:  # A2 has no direct fp32 -> int8 cast: the kernel goes through fp16
        y = out.astype(np.float32) * s.astype(np.float32) + o.astype(np.float32)
        y = y.astype(np.float16).astype(np.float32)
    else:
        y = out * s + o
    return np.clip(np.rint(y), -128, 127)


# ----------------------------------------------------------------------------- attention cores
def _exact_attention(q, k, v, bias, excluded, scale):
    """q (Nkv, G, D), k/v (Nkv, L, D), bias (Nkv, G, L)|None, excluded (L,)|None -> (Nkv, G, D)."""
    s = np.matmul(q, k.transpose(0, 2, 1)) * scale
    if bias is not None:
        s = s + bias
    if excluded is not None:
        s[..., excluded] = -np.inf
    m = s.max(axis=-1, keepdims=True)
    valid = np.isfinite(m)
    p = np.exp(s - np.where(valid, m, 0.0))
    denom = p.sum(axis=-1, keepdims=True)
    out = np.matmul(p, v) / np.where(valid, denom, 1.0)
    return np.where(valid, out, 0.0)


def online_softmax_attention(scores, v, p_dtype, block=KV_BLOCK):
    """Device-style attention from fp32 scores (..., M, L) (-inf = excluded) and v (..., L, Dv).

    Walks L in blocks of `block` keys with a running max/sum in fp32; P is rounded to p_dtype
    before P.V (accumulated in fp32). Returns (out, row_max, row_sum); out is 0 on rows with
    no valid key, where row_max = -inf and row_sum = 0. Also used by the sparse benchmark.
    """
    lead = scores.shape[:-1]
    m = np.full(lead + (1,), -np.inf, np.float32)
    l = np.zeros(lead + (1,), np.float32)
    acc = np.zeros(lead + (v.shape[-1],), np.float32)
    for j in range(0, scores.shape[-1], block):
        s = scores[..., j : j + block]
        m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
        base = np.where(np.isfinite(m_new), m_new, np.float32(0))
        alpha = np.exp(m - base)
        p = np.exp(s - base)
        l = l * alpha + p.sum(axis=-1, keepdims=True, dtype=np.float32)
        pv = np.matmul(_round_to(p, p_dtype), v[..., j : j + block, :].astype(np.float32))
        acc = acc * alpha + pv
        m = m_new
    out = np.where(l > 0, acc / np.where(l > 0, l, 1), np.float32(0))
    return out, m[..., 0], l[..., 0]


# ----------------------------------------------------------------------------- entry points
def _run(benchmark, query, key, value, **kw):
    scale = kw.pop("scale_value")
    pb = _Problem(query, key, value, **kw)
    out = np.zeros((pb.B, pb.N, pb.D), np.float64)
    row_valid = np.zeros((pb.B, pb.N), bool)  # rows with at least one KV position left
    for b in range(pb.B):
        if pb.empty[b]:
            continue
        k_raw, v_raw, excluded, pse = pb.batch(b)
        if k_raw.shape[1] == 0:
            continue
        q = pb.q[b].reshape(pb.n_kv, pb.G, pb.D)
        row_valid[b] = excluded is None or not excluded.all()
        bias = None if pse is None else pse.reshape(pb.n_kv, pb.G, -1)
        if not benchmark:
            k = pb.dequant(k_raw, 0, np.float64)
            v = pb.dequant(v_raw, 1, np.float64)
            bias = None if bias is None else bias.astype(np.float64)
            out[b] = _exact_attention(q.astype(np.float64), k, v, bias, excluded, scale).reshape(pb.N, pb.D)
            continue
        # device path: K/V in the query dtype (int8 dequantised then rounded), QK^T in fp32
        k = _round_to(pb.dequant(k_raw, 0, np.float32), pb.dtype)
        v = _round_to(pb.dequant(v_raw, 1, np.float32), pb.dtype)
        s = np.matmul(q.astype(np.float32), k.transpose(0, 2, 1)) * np.float32(scale)
        if bias is not None:
            s = s + bias.astype(np.float32)
        if excluded is not None:
            s[..., excluded] = -np.inf
        o, _, _ = online_softmax_attention(s, v, pb.dtype)
        out[b] = o.reshape(pb.N, pb.D)
    if pb.quant is not None:
        out = _quantize(out, pb.quant, via_fp16=benchmark)
        out[~row_valid] = 0.0  # rows with nothing to attend output 0, not quantised offset
    elif benchmark:
        out = _round_to(out, pb.dtype)
    return pb.finish(out)


def _ifa(
    benchmark,
    query,
    key,
    value,
    *,
    pse_shift=None,
    atten_mask=None,
    actual_seq_lengths=None,
    dequant_scale1=None,
    quant_scale1=None,
    dequant_scale2=None,
    quant_scale2=None,
    quant_offset2=None,
    antiquant_scale=None,
    antiquant_offset=None,
    block_table=None,
    kv_padding_size=None,
    num_heads,
    scale_value=1.0,
    input_layout="BSH",
    num_key_value_heads=0,
    block_size=0,
    inner_precise=1,
):
    """High-precision golden of aclnnIncreFlashAttentionV4; returns attentionOut as float32."""
    args = dict(locals())
    del args["benchmark"]
    return _run(benchmark, **args)


incre_flash_attention_v4, incre_flash_attention_v4_benchmark = golden_pair(
    _ifa,
    "incre_flash_attention_v4",
    "Same-dtype, blockwise (128-key online softmax) benchmark of aclnnIncreFlashAttentionV4.",
)
