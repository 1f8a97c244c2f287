"""The inference ops: npu_prompt_flash_attention, npu_incre_flash_attention and
npu_fused_infer_attention_score, each call routed to the API of ours that computes it.

- aclnnPromptFlashAttention (V1): dense prefill with a mask, pre/next tokens and per-batch
  query lengths; it has no key lengths, sparse modes, pse or quantisation.
- aclnnFlashAttentionVarLenScore: the rest of prefill (key lengths, sparse modes 1-4, pse,
  TND, softmax_lse); the batches are packed as TND rows (a view when every length is full).
- aclnnIncreFlashAttentionV4: decode (one query row): paged KV, int8 antiquant, int8 output.
"""

from __future__ import annotations

import torch

from .runtime import NAMESPACE, from_numpy, ints, refuse, refuse_reserved, run, to_numpy, unsupported

PFA, IFA, FIA = "npu_prompt_flash_attention", "npu_incre_flash_attention", "npu_fused_infer_attention_score"
V1, VARLEN, V4 = "aclnnPromptFlashAttention", "aclnnFlashAttentionVarLenScore", "aclnnIncreFlashAttentionV4"
MAX = 2147483647


# ------------------------------------------------------------------------------- shapes


def _bsnd(t, layout, heads):
    """[B, S, N, D] view of a BSH / BSND / BNSD tensor."""
    if layout == "BSH":
        return t.unflatten(2, (heads, t.shape[2] // heads))
    return t if layout == "BSND" else t.transpose(1, 2)


def _in_layout(input_layout):
    return "BNSD" if input_layout == "BNSD_BSND" else input_layout


def _out_layout(input_layout):
    return "BSND" if input_layout == "BNSD_BSND" else input_layout


def _from_bsnd(t, layout):
    if layout == "BSH":
        return t.flatten(2)
    return t if layout == "BSND" else t.transpose(1, 2)


def out_shape(query, key, value, num_heads, num_key_value_heads, input_layout, block_table=None):
    """torch_npu's attention_out shape: the query's, with value's head size and BNSD_BSND as BSND."""
    kv_heads = num_key_value_heads or num_heads
    if input_layout == "TND":
        return (*query.shape[:2], value.shape[-1])
    if block_table is not None or input_layout != "BSH":
        dv = value.shape[-1] if value.dim() != 3 else value.shape[2] // kv_heads
    else:
        dv = value.shape[2] // kv_heads
    q = _bsnd(query, _in_layout(input_layout), num_heads)
    return tuple(_from_bsnd(q.new_empty((*q.shape[:3], dv), device="meta"), _out_layout(input_layout)).shape)


def out_dtype(query, quant_scale2):
    if quant_scale2 is not None:
        return torch.int8
    return torch.float16 if query.dtype == torch.int8 else query.dtype


def _lse_shape(query, num_heads, input_layout):
    if input_layout == "TND":
        return (*query.shape[:2], 1)
    b, s = _bsnd(query, _in_layout(input_layout), num_heads).shape[:2]
    return (b, num_heads, s, 1)


# ------------------------------------------------------------------- the three routes


def run_v1(
    op,
    query,
    key,
    value,
    *,
    atten_mask,
    actual_seq_lengths,
    num_heads,
    scale,
    pre_tokens,
    next_tokens,
    input_layout,
    num_key_value_heads,
):
    res = run(
        op,
        "prompt_flash_attention",
        dict(
            query=to_numpy(query),
            key=to_numpy(key),
            value=to_numpy(value),
            atten_mask=to_numpy(atten_mask),
            actual_seq_lengths=ints(actual_seq_lengths),
            num_heads=num_heads,
            scale_value=scale,
            pre_tokens=pre_tokens,
            next_tokens=next_tokens,
            input_layout=input_layout,
            num_key_value_heads=num_key_value_heads,
        ),
    )
    return from_numpy(res, query.dtype).reshape(
        out_shape(query, key, value, num_heads, num_key_value_heads, input_layout)
    )


def _mask_2d(op, atten_mask, sparse_mode, s, kv_s):
    if atten_mask is None:
        return None
    m = atten_mask
    while m.dim() > 2 and bool((m == m[:1]).all()):  # equal over batch (and head)
        m = m[0]
    if m.dim() != 2:
        raise unsupported(
            op,
            f"atten_mask of shape {tuple(atten_mask.shape)} on {VARLEN}: it takes one "
            "[Sq, Skv] mask per batch; a mask that differs between heads needs the V1 path "
            "(no actual_seq_lengths_kv, sparse_mode, pse_shift or TND)",
        )
    return m[:s, :kv_s] if sparse_mode in (0, 1) else m


def _mask_per_batch(atten_mask, b):
    """A [B, S, Skv] / [B, 1, S, Skv] mask that differs between batches (equal over heads)."""
    if atten_mask is None or atten_mask.dim() < 3 or atten_mask.shape[0] != b or b == 1:
        return False
    m = atten_mask
    same_heads = m.dim() == 3 or bool((m == m[:, :1]).all())
    return same_heads and not bool((m == m[:1]).all())


def _per_batch(lens, b, full):
    """torch_npu's reading of a lengths list: none = full, one value for every batch, else the first B."""
    if lens is None:
        return [full] * b
    return list(lens) * b if len(lens) == 1 else list(lens)[:b]


def run_varlen(
    op,
    query,
    key,
    value,
    *,
    atten_mask,
    pse_shift,
    q_lens,
    kv_lens,
    num_heads,
    scale,
    pre_tokens,
    next_tokens,
    input_layout,
    num_key_value_heads,
    sparse_mode,
    inner_precise=0,
):
    """Prefill on aclnnFlashAttentionVarLenScore: (attention_out, softmax_lse). q_lens/kv_lens are
    per-batch lengths (cumulative for TND); rows past a batch's length are 0."""
    kv_heads = num_key_value_heads or num_heads
    if inner_precise not in (0, 1):
        raise unsupported(op, f"inner_precise={inner_precise} (row-invalid correction) on {VARLEN}; use 0 or 1")
    if sparse_mode not in (0, 1, 2, 3, 4):
        raise unsupported(op, f"sparse_mode={sparse_mode}: {VARLEN} serves sparse modes 0-4 here")
    if input_layout == "TND":
        if q_lens is None or kv_lens is None:
            raise ValueError(f"{NAMESPACE}::{op}: TND needs actual_seq_lengths and actual_seq_lengths_kv (cumulative)")
        q, k, v, qcum, kvcum = query, key, value, list(q_lens), list(kv_lens)
        full = True
        s, kv_s = max(b - a for a, b in zip([0] + qcum, qcum)), max(b - a for a, b in zip([0] + kvcum, kvcum))
    else:
        lay = _in_layout(input_layout)
        qd, kd, vd = _bsnd(query, lay, num_heads), _bsnd(key, lay, kv_heads), _bsnd(value, lay, kv_heads)
        b, s, kv_s = qd.shape[0], qd.shape[1], kd.shape[1]
        lq, lk = _per_batch(q_lens, b, s), _per_batch(kv_lens, b, kv_s)
        if len(lq) != b or len(lk) != b or not all(0 <= x <= s for x in lq) or not all(0 <= x <= kv_s for x in lk):
            raise ValueError(f"{NAMESPACE}::{op}: actual lengths {lq} / {lk} do not fit batch {b}, S {s}, Skv {kv_s}")
        if _mask_per_batch(atten_mask, b):
            # the varlen API takes one [Sq, Skv] mask: a mask that differs between batches runs per batch
            parts = [
                run_varlen(
                    op, query[i : i + 1], key[i : i + 1], value[i : i + 1], atten_mask=atten_mask[i : i + 1],
                    pse_shift=pse_shift if pse_shift is None or pse_shift.shape[0] == 1 else pse_shift[i : i + 1],
                    q_lens=[lq[i]], kv_lens=[lk[i]], num_heads=num_heads, scale=scale, pre_tokens=pre_tokens,
                    next_tokens=next_tokens, input_layout=input_layout, num_key_value_heads=num_key_value_heads,
                    sparse_mode=sparse_mode, inner_precise=inner_precise,
                )
                for i in range(b)
            ]  # fmt: skip
            return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
        full = lq == [s] * b and lk == [kv_s] * b
        pack = (
            (lambda t, lens: t.reshape(-1, *t.shape[2:]))
            if full
            else (lambda t, lens: torch.cat([t[i, :n] for i, n in enumerate(lens)]))
        )
        q, k, v = pack(qd, lq), pack(kd, lk), pack(vd, lk)
        qcum = torch.tensor(lq).cumsum(0).tolist()
        kvcum = torch.tensor(lk).cumsum(0).tolist()
    real_shift = None
    if pse_shift is not None:
        # pse_shift is added after the scale, realShift before it: pass pse_shift / scale. The
        # varlen API aligns pse to each batch's bottom-right corner, PFA to the top-left: equal
        # only for full-length batches.
        if not full or pse_shift.dim() != 4 or pse_shift.shape[2] < s or pse_shift.shape[3] < kv_s or scale == 0:
            raise unsupported(
                op,
                f"pse_shift of shape {tuple(pse_shift.shape)} with per-batch lengths or "
                f"scale 0: only a [B or 1, N, >=S, >=Skv] pse over full-length batches maps to "
                f"{VARLEN}'s realShift (V1 {V1} reserves pseShift)",
            )
        real_shift = (pse_shift[..., :s, :kv_s].double() / scale).to(query.dtype)
    res = run(
        op,
        "flash_attention_var_len_score",
        dict(
            query=to_numpy(q),
            key=to_numpy(k),
            value=to_numpy(v),
            real_shift=to_numpy(real_shift),
            atten_mask=to_numpy(_mask_2d(op, atten_mask, sparse_mode, s, kv_s)),
            actual_seq_qlen=qcum,
            actual_seq_kvlen=kvcum,
            scale_value=scale,
            pre_tokens=pre_tokens,
            next_tokens=next_tokens,
            head_num=num_heads,
            input_layout="TND",
            inner_precise=inner_precise,
            sparse_mode=sparse_mode,
        ),
    )
    out = from_numpy(res["attention_out"], query.dtype)
    lse = (from_numpy(res["softmax_max"], torch.float32) + from_numpy(res["softmax_sum"], torch.float32).log())[..., :1]
    if input_layout == "TND":
        return out, lse
    dense_out = out.new_zeros((b, s, num_heads, out.shape[-1]))
    dense_lse = lse.new_zeros((b, s, num_heads, 1))
    for i, (start, n) in enumerate(zip([0] + qcum[:-1], lq)):
        dense_out[i, :n], dense_lse[i, :n] = out[start : start + n], lse[start : start + n]
    return _from_bsnd(dense_out, _out_layout(input_layout)).contiguous(), dense_lse.transpose(1, 2).contiguous()


def run_v4(op, query, key, value, **kw):
    """Decode on aclnnIncreFlashAttentionV4 (key/value as one-tensor lists)."""
    arrays = {name: to_numpy(kw.pop(name)) for name in list(kw) if isinstance(kw[name], torch.Tensor)}
    lens = ints(kw.pop("actual_seq_lengths", None))
    res = run(
        op,
        "incre_flash_attention_v4",
        dict(
            query=to_numpy(query), key=[to_numpy(key)], value=[to_numpy(value)], actual_seq_lengths=lens, **arrays, **kw
        ),
    )
    quant = arrays.get("quant_scale2") is not None
    return from_numpy(res, torch.int8 if quant else query.dtype).reshape(
        out_shape(
            query, key, value, kw["num_heads"], kw["num_key_value_heads"], kw["input_layout"], arrays.get("block_table")
        )
    )


# ------------------------------------------------------------------ npu_prompt_flash_attention


def pfa_cpu(
    query,
    key,
    value,
    *,
    padding_mask=None,
    atten_mask=None,
    pse_shift=None,
    actual_seq_lengths=None,
    deq_scale1=None,
    quant_scale1=None,
    deq_scale2=None,
    quant_scale2=None,
    quant_offset2=None,
    num_heads=1,
    scale_value=1.0,
    pre_tokens=MAX,
    next_tokens=0,
    input_layout="BSH",
    num_key_value_heads=0,
    actual_seq_lengths_kv=None,
    sparse_mode=0,
):
    refuse_reserved(PFA, padding_mask=padding_mask)
    refuse(
        PFA,
        "no API of this package with an int8 query path (dequantisation)",
        deq_scale1=(deq_scale1, None),
        quant_scale1=(quant_scale1, None),
        deq_scale2=(deq_scale2, None),
    )
    q_lens, kv_lens = ints(actual_seq_lengths), ints(actual_seq_lengths_kv)
    if quant_scale2 is not None or quant_offset2 is not None:
        return _pfa_int8_out(
            query,
            key,
            value,
            atten_mask=atten_mask,
            pse_shift=pse_shift,
            q_lens=q_lens,
            kv_lens=kv_lens,
            quant_scale2=quant_scale2,
            quant_offset2=quant_offset2,
            num_heads=num_heads,
            scale_value=scale_value,
            input_layout=input_layout,
            num_key_value_heads=num_key_value_heads,
            sparse_mode=sparse_mode,
        )
    if kv_lens is None and sparse_mode == 0 and pse_shift is None and input_layout != "TND":
        return run_v1(
            PFA,
            query,
            key,
            value,
            atten_mask=atten_mask,
            actual_seq_lengths=q_lens,
            num_heads=num_heads,
            scale=scale_value,
            pre_tokens=pre_tokens,
            next_tokens=next_tokens,
            input_layout=input_layout,
            num_key_value_heads=num_key_value_heads,
        )
    return run_varlen(
        PFA,
        query,
        key,
        value,
        atten_mask=atten_mask,
        pse_shift=pse_shift,
        q_lens=q_lens,
        kv_lens=kv_lens,
        num_heads=num_heads,
        scale=scale_value,
        pre_tokens=pre_tokens,
        next_tokens=next_tokens,
        input_layout=input_layout,
        num_key_value_heads=num_key_value_heads,
        sparse_mode=sparse_mode,
    )[0]


def _pfa_int8_out(
    query,
    key,
    value,
    *,
    atten_mask,
    pse_shift,
    q_lens,
    kv_lens,
    quant_scale2,
    quant_offset2,
    num_heads,
    scale_value,
    input_layout,
    num_key_value_heads,
    sparse_mode,
):
    """Output quantisation exists in V4 only: a single query row without mask or sparse mode."""
    if (
        input_layout == "TND"
        or _bsnd(query, _in_layout(input_layout), num_heads).shape[1] != 1
        or atten_mask is not None
        or sparse_mode != 0
        or (q_lens is not None and set(q_lens) != {1})
        or input_layout == "BNSD_BSND"
    ):
        raise unsupported(
            PFA,
            f"quant_scale2/quant_offset2 (int8 output): only {V4} quantises its output, "
            "so it is served for one query row (S=1, BSH/BSND/BNSD) without atten_mask or "
            "sparse_mode; the prefill APIs here have no output quantisation",
        )
    return run_v4(
        PFA,
        query,
        key,
        value,
        pse_shift=pse_shift,
        actual_seq_lengths=kv_lens,
        quant_scale2=quant_scale2,
        quant_offset2=quant_offset2,
        num_heads=num_heads,
        scale_value=scale_value,
        input_layout=input_layout,
        num_key_value_heads=num_key_value_heads,
    )


def pfa_fake(query, key, value, *, quant_scale2=None, num_heads=1, input_layout="BSH", num_key_value_heads=0, **_):
    shape = out_shape(query, key, value, num_heads, num_key_value_heads, input_layout)
    return query.new_empty(shape, dtype=out_dtype(query, quant_scale2))


# ------------------------------------------------------------------ npu_incre_flash_attention


def ifa_cpu(
    query,
    key,
    value,
    *,
    padding_mask=None,
    atten_mask=None,
    pse_shift=None,
    actual_seq_lengths=None,
    antiquant_scale=None,
    antiquant_offset=None,
    block_table=None,
    dequant_scale1=None,
    quant_scale1=None,
    dequant_scale2=None,
    quant_scale2=None,
    quant_offset2=None,
    kv_padding_size=None,
    num_heads=1,
    scale_value=1.0,
    input_layout="BSH",
    num_key_value_heads=0,
    block_size=0,
    inner_precise=1,
):
    refuse_reserved(IFA, padding_mask=padding_mask)  # every other argument is V4's
    return run_v4(
        IFA,
        query,
        key,
        value,
        atten_mask=atten_mask,
        pse_shift=pse_shift,
        actual_seq_lengths=actual_seq_lengths,
        antiquant_scale=antiquant_scale,
        antiquant_offset=antiquant_offset,
        block_table=block_table,
        dequant_scale1=dequant_scale1,
        quant_scale1=quant_scale1,
        dequant_scale2=dequant_scale2,
        quant_scale2=quant_scale2,
        quant_offset2=quant_offset2,
        kv_padding_size=kv_padding_size,
        num_heads=num_heads,
        scale_value=scale_value,
        input_layout=input_layout,
        num_key_value_heads=num_key_value_heads,
        block_size=block_size,
        inner_precise=inner_precise,
    )


def ifa_fake(query, key, value, *, quant_scale2=None, **_):
    return query.new_empty(query.shape, dtype=out_dtype(query, quant_scale2))


# ------------------------------------------------------------- npu_fused_infer_attention_score

FIA_LAYOUTS = ("BSH", "BSND", "BNSD", "BNSD_BSND", "TND")


def fia_cpu(
    query,
    key,
    value,
    *,
    pse_shift=None,
    atten_mask=None,
    actual_seq_lengths=None,
    actual_seq_lengths_kv=None,
    dequant_scale1=None,
    quant_scale1=None,
    dequant_scale2=None,
    quant_scale2=None,
    quant_offset2=None,
    antiquant_scale=None,
    antiquant_offset=None,
    key_antiquant_scale=None,
    key_antiquant_offset=None,
    value_antiquant_scale=None,
    value_antiquant_offset=None,
    block_table=None,
    query_padding_size=None,
    kv_padding_size=None,
    key_shared_prefix=None,
    value_shared_prefix=None,
    actual_shared_prefix_len=None,
    query_rope=None,
    key_rope=None,
    key_rope_antiquant_scale=None,
    num_heads=1,
    scale=1.0,
    pre_tokens=MAX,
    next_tokens=MAX,
    input_layout="BSH",
    num_key_value_heads=0,
    sparse_mode=0,
    inner_precise=0,
    block_size=0,
    antiquant_mode=0,
    key_antiquant_mode=0,
    value_antiquant_mode=0,
    softmax_lse_flag=False,
):
    refuse(
        FIA,
        "PFA / VarLenScore / IFA V4 (none has these)",
        dequant_scale1=(dequant_scale1, None),
        quant_scale1=(quant_scale1, None),
        dequant_scale2=(dequant_scale2, None),
        key_antiquant_scale=(key_antiquant_scale, None),
        key_antiquant_offset=(key_antiquant_offset, None),
        value_antiquant_scale=(value_antiquant_scale, None),
        value_antiquant_offset=(value_antiquant_offset, None),
        query_padding_size=(query_padding_size, None),
        key_shared_prefix=(key_shared_prefix, None),
        value_shared_prefix=(value_shared_prefix, None),
        actual_shared_prefix_len=(actual_shared_prefix_len, None),
        query_rope=(query_rope, None),
        key_rope=(key_rope, None),
        key_rope_antiquant_scale=(key_rope_antiquant_scale, None),
        antiquant_mode=(antiquant_mode, 0),
        key_antiquant_mode=(key_antiquant_mode, 0),
        value_antiquant_mode=(value_antiquant_mode, 0),
    )
    if input_layout not in FIA_LAYOUTS:
        raise unsupported(FIA, f"input_layout {input_layout!r}: served layouts are {', '.join(FIA_LAYOUTS)}")
    q_lens, kv_lens = ints(actual_seq_lengths), ints(actual_seq_lengths_kv)
    empty_lse = query.new_empty((0,), dtype=torch.float32)
    decode_only = dict(
        block_table=block_table,
        antiquant_scale=antiquant_scale,
        antiquant_offset=antiquant_offset,
        kv_padding_size=kv_padding_size,
        quant_scale2=quant_scale2,
        quant_offset2=quant_offset2,
    )
    decode = input_layout != "TND" and _bsnd(query, _in_layout(input_layout), num_heads).shape[1] == 1
    if any(t is not None for t in decode_only.values()) or (decode and not softmax_lse_flag):
        if not decode or input_layout == "BNSD_BSND":
            given = [name for name, t in decode_only.items() if t is not None]
            raise unsupported(
                FIA,
                f"{', '.join(given)} on a prefill (S>1) or TND/BNSD_BSND query: only {V4} "
                "(decode, one query row) has paged KV, antiquant and output quantisation",
            )
        refuse(
            FIA,
            f"{V4} (decode)",
            softmax_lse_flag=(softmax_lse_flag, False),
            sparse_mode=(sparse_mode, 0),
            pre_tokens=(pre_tokens, MAX),
            next_tokens=(next_tokens, MAX),
        )
        if q_lens is not None and set(q_lens) != {1}:
            raise unsupported(FIA, f"actual_seq_lengths {q_lens} on {V4}: a decode query has one row per batch")
        if inner_precise not in (0, 1):
            raise unsupported(FIA, f"inner_precise={inner_precise} on {V4} (0 or 1)")
        out = run_v4(
            FIA,
            query,
            key,
            value,
            atten_mask=atten_mask,
            pse_shift=pse_shift,
            actual_seq_lengths=kv_lens,
            num_heads=num_heads,
            scale_value=scale,
            input_layout=input_layout,
            num_key_value_heads=num_key_value_heads,
            block_size=block_size,
            inner_precise=inner_precise,
            **{k: v for k, v in decode_only.items() if v is not None},
        )
        return out, empty_lse
    if (
        not softmax_lse_flag
        and kv_lens is None
        and sparse_mode == 0
        and pse_shift is None
        and input_layout != "TND"
        and inner_precise in (0, 1)
    ):
        out = run_v1(
            FIA,
            query,
            key,
            value,
            atten_mask=atten_mask,
            actual_seq_lengths=q_lens,
            num_heads=num_heads,
            scale=scale,
            pre_tokens=pre_tokens,
            next_tokens=next_tokens,
            input_layout=input_layout,
            num_key_value_heads=num_key_value_heads,
        )
        return out, empty_lse
    out, lse = run_varlen(
        FIA,
        query,
        key,
        value,
        atten_mask=atten_mask,
        pse_shift=pse_shift,
        q_lens=q_lens,
        kv_lens=kv_lens,
        num_heads=num_heads,
        scale=scale,
        pre_tokens=pre_tokens,
        next_tokens=next_tokens,
        input_layout=input_layout,
        num_key_value_heads=num_key_value_heads,
        sparse_mode=sparse_mode,
        inner_precise=inner_precise,
    )
    return out, (lse if softmax_lse_flag else empty_lse)


def fia_fake(
    query,
    key,
    value,
    *,
    quant_scale2=None,
    block_table=None,
    num_heads=1,
    input_layout="BSH",
    num_key_value_heads=0,
    softmax_lse_flag=False,
    **_,
):
    out = query.new_empty(
        out_shape(query, key, value, num_heads, num_key_value_heads, input_layout, block_table),
        dtype=out_dtype(query, quant_scale2),
    )
    lse = _lse_shape(query, num_heads, input_layout) if softmax_lse_flag else (0,)
    return out, query.new_empty(lse, dtype=torch.float32)
