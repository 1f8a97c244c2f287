"""Golden of aclnnPromptFlashAttention (spec and sources: docs/sources.md;
choices: docs/golden.md §PFA).

attention_out = softmax(scale · Q·Kᵀ + pse_shift, masked) · V, per batch and head, with
BSH / BSND / BNSD / BNSD_BSND layouts, GQA, the atten_mask (1 = excluded) combined with the
left-up pre/next-tokens band, and actual_seq_lengths limiting the query rows.
"""

import numpy as np

from . import _blockwise as bw
from . import _common as c

__all__ = ["prompt_flash_attention", "prompt_flash_attention_benchmark"]


def _pfa(
    bench,
    query,
    key,
    value,
    *,
    pse_shift=None,
    atten_mask=None,
    actual_seq_lengths=None,
    num_heads,
    scale_value=1.0,
    pre_tokens=c.INT_MAX,
    next_tokens=0,
    input_layout="BSH",
    num_key_value_heads=0,
):
    """attention_out of aclnnPromptFlashAttention as float32 (query's layout; BSND for
    BNSD_BSND).  Query rows at or beyond actual_seq_lengths[b] output 0."""
    layout = str(input_layout)
    if layout not in ("BSH", "BSND", "BNSD", "BNSD_BSND"):
        raise ValueError(f"input_layout {layout!r} is not one of BSH, BSND, BNSD, BNSD_BSND")
    if num_heads <= 0:
        raise ValueError(f"num_heads must be positive, got {num_heads}")
    dtype = c.float_dtype_of(query, "query")
    n_kv = num_key_value_heads or num_heads
    gqa = c.gqa_group(num_heads, n_kv)
    if gqa > 64:
        raise ValueError(f"num_heads / num_key_value_heads = {gqa} exceeds 64")
    in_layout = "BNSD" if layout == "BNSD_BSND" else layout
    q = c.to_bnsd(query, in_layout, num_heads, "query")
    k = c.to_bnsd(key, in_layout, n_kv, "key")
    v = c.to_bnsd(value, in_layout, n_kv, "value")
    if q.shape[1] != num_heads:
        raise ValueError(f"query has {q.shape[1]} heads, num_heads is {num_heads}")
    if k.shape[1] != n_kv or v.shape[1] != n_kv:
        raise ValueError(f"key/value have {k.shape[1]}/{v.shape[1]} heads, expected {n_kv}")
    b, _, s1, _ = q.shape
    s2 = k.shape[2]
    if k.shape[0] != b or v.shape[:3] != k.shape[:3]:
        raise ValueError(f"key {k.shape} / value {v.shape} do not match query {q.shape} (BNSD view)")
    lens = c.int_seq(actual_seq_lengths, "actual_seq_lengths")
    if lens is not None:
        if lens.size not in (1, b):
            raise ValueError(f"actual_seq_lengths has {lens.size} values, batch is {b}")
        lens = np.broadcast_to(lens, (b,))
        if np.any(lens < 0) or np.any(lens > s1):
            raise ValueError(f"actual_seq_lengths {lens.tolist()} must lie in [0, {s1}]")
    out = np.zeros((b, num_heads, s1, v.shape[3]), np.float32)
    for bi in range(b):
        sq = s1 if lens is None else int(lens[bi])
        if sq == 0 or s2 == 0:
            continue  # empty key/value: the spec fills zeros

        def excluded_fn(rows, bi=bi):
            # Without a mask the PFA docs ignore pre/next tokens (full attention).
            if atten_mask is None:
                return None
            band = c.band_excluded(rows, s2, pre_tokens, next_tokens, 0)[None]
            return c.user_mask_rows(atten_mask, bi, rows, s2) | band

        def bias_fn(rows, bi=bi):
            if pse_shift is None:
                return None
            # pse_shift [B or 1, N, >=S1, >=S2] is read from its top-left corner.
            return c.pse_rows(pse_shift, bi, rows, s1, s2, "pse_shift", align="top_left")

        o, _, _ = bw.attention_batch(
            q[bi, :, :sq],
            k[bi],
            v[bi],
            scale=scale_value,
            excluded_fn=excluded_fn,
            bias_fn=bias_fn,
            bench_dtype=dtype if bench else None,
        )
        out[bi, :, :sq] = o
    return np.ascontiguousarray(c.from_bnsd(out, layout))


prompt_flash_attention, prompt_flash_attention_benchmark = c.golden_pair(
    _pfa,
    "prompt_flash_attention",
    "Same result computed the way a device would in query's dtype (online softmax over blocks of 128 keys,"
    " P rounded to the dtype, output rounded to the dtype).",
)
