"""npu_fusion_attention and npu_fusion_attention_grad on the varlen APIs, with autograd.

Every layout runs as TND: BSH/BSND/BNSD/SBH become T = B*S rows of equal length
(actual_seq_qlen = S, 2S, ...), a view where the strides allow (BSH, BSND), a copy otherwise
(BNSD, SBH). The forward runs aclnnFlashAttentionVarLenScore, the backward
aclnnFlashAttentionUnpaddingScoreGradV5; the statistics come back in torch_npu's shapes
([B, N, S, 8] for the dense layouts, [T, N, 8] for TND).
"""

from __future__ import annotations

import inspect

import torch

from .runtime import NAMESPACE, from_numpy, ints, refuse, refuse_reserved, run, to_numpy, unsupported

FA, FAG = "npu_fusion_attention", "npu_fusion_attention_grad"
FWD_API, BWD_API = "aclnnFlashAttentionVarLenScore", "aclnnFlashAttentionUnpaddingScoreGradV5"
LAYOUTS = ("BSH", "SBH", "BSND", "BNSD", "TND")


# --------------------------------------------------------------------------------- layouts


def _check_layout(op, input_layout):
    if input_layout not in LAYOUTS:
        raise ValueError(f"{NAMESPACE}::{op}: input_layout must be one of {', '.join(LAYOUTS)}, got {input_layout!r}")


def _bsnd(t, layout, heads):
    """[B, S, N, D] of a BSH/SBH/BSND/BNSD tensor (a view)."""
    if layout in ("BSH", "SBH"):
        t = t if layout == "BSH" else t.transpose(0, 1)
        return t.unflatten(2, (heads, t.shape[2] // heads))
    return t if layout == "BSND" else t.transpose(1, 2)


def _from_bsnd(t, layout):
    if layout in ("BSH", "SBH"):
        t = t.flatten(2)
        return t if layout == "BSH" else t.transpose(0, 1)
    return t if layout == "BSND" else t.transpose(1, 2)


def _dims(query, key, head_num, layout):
    """(batch, query length, key length, key heads) of a dense layout."""
    if layout == "SBH":
        s, b, kv_s = query.shape[0], query.shape[1], key.shape[0]
    elif layout == "BNSD":
        b, s, kv_s = query.shape[0], query.shape[2], key.shape[2]
    else:
        b, s, kv_s = query.shape[0], query.shape[1], key.shape[1]
    if layout in ("BSH", "SBH"):
        kv_heads = key.shape[2] // (query.shape[2] // head_num)
    else:
        kv_heads = key.shape[2] if layout == "BSND" else key.shape[1]
    return b, s, kv_s, kv_heads


class _Tnd:
    """The TND form of a dense call: tensors in and out, and the cumulative lengths."""

    def __init__(self, query, key, head_num, layout):
        self.layout, self.heads = layout, head_num
        self.b, self.s, self.kv_s, self.kv_heads = _dims(query, key, head_num, layout)
        self.qlen = [self.s * (i + 1) for i in range(self.b)]
        self.kvlen = [self.kv_s * (i + 1) for i in range(self.b)]

    def rows(self, t, heads):  # dense -> [T, N, D], a view for BSH/BSND
        t = _bsnd(t, self.layout, heads)
        return t.reshape(-1, heads, t.shape[-1])

    def unrows(self, t, heads):  # [T, N, D] -> dense
        return _from_bsnd(t.reshape(self.b, -1, heads, t.shape[-1]), self.layout).contiguous()

    def stats_out(self, t):  # [T, N, 8] -> [B, N, S, 8]
        return t.reshape(self.b, self.s, self.heads, 8).transpose(1, 2).contiguous()

    def stats_in(self, t):  # [B, N, S, 8] -> [T, N, 8]
        return None if t is None else t.transpose(1, 2).reshape(-1, self.heads, 8)


def _mask_2d(op, atten_mask):
    """The one [maxSq, maxSkv] mask the varlen APIs take (a mask that varies over the batch runs
    per batch before this); a 4-D mask must not vary over the heads."""
    if atten_mask is None or atten_mask.dim() == 2:
        return atten_mask
    if atten_mask.dim() == 4 and bool((atten_mask == atten_mask[:1, :1]).all()):
        return atten_mask[0, 0]  # 11SS, or BNSS / B1SS equal over batch and head
    raise unsupported(
        op,
        f"atten_mask of shape {tuple(atten_mask.shape)}: {FWD_API} and {BWD_API} take one "
        "[Sq, Skv] mask per batch (SS, 11SS, B1SS, or BNSS equal over N); a mask that differs between "
        "heads needs aclnnFlashAttentionScore, which this package does not build",
    )


def _check_pse(op, pse, tnd, layout):
    if pse is None or layout == "TND":
        return
    if pse.dim() != 4 or pse.shape[0] not in (1, tnd.b) or pse.shape[2:] != (tnd.s, tnd.kv_s):
        raise unsupported(
            op,
            f"pse of shape {tuple(pse.shape)}: only the full BNSS / 1NSS forms "
            f"([{tnd.b} or 1, N, {tnd.s}, {tnd.kv_s}]) map to the varlen realShift; "
            "BN1Skv and alibi-compressed pse need aclnnFlashAttentionScore",
        )


def _check_softmax_layout(op, softmax_layout, layout):
    if softmax_layout not in ("", "TND") or (softmax_layout == "TND" and layout != "TND"):
        raise ValueError(
            f"{NAMESPACE}::{op}: softmax_layout is \"\" or \"TND\" (TND input only), "
            f"got {softmax_layout!r} with input_layout {layout!r}"
        )


def _check_sparse_mode(op, sparse_mode, layout):
    if sparse_mode == 5:
        raise unsupported(
            op,
            "sparse_mode=5 (uncompressed prefix): the varlen APIs do not have it; use "
            "sparse_mode=6 (compressed prefix) or aclnnFlashAttentionScore, which this package "
            "does not build",
        )
    if layout != "TND" and sparse_mode in (7, 8):
        raise ValueError(
            f"{NAMESPACE}::{op}: sparse_mode {sparse_mode} is for TND input only (torch_npu: "
            "sparse_mode in [0, 6] for BSH/SBH/BSND/BNSD)"
        )


def _mask_per_batch(atten_mask, layout, batch):
    """A BNSS/B1SS mask that differs between batches but not between heads: the varlen APIs take
    one [Sq, Skv] mask, so such a call runs once per batch."""
    if layout == "TND" or atten_mask is None or atten_mask.dim() != 4 or atten_mask.shape[0] != batch or batch == 1:
        return False
    return not bool((atten_mask == atten_mask[:1]).all()) and bool((atten_mask == atten_mask[:, :1]).all())


def _batch_slice(t, layout, b):
    """Batch b of a dense tensor (the batch axis kept); None stays None."""
    if t is None:
        return None
    return t[:, b : b + 1] if layout == "SBH" else t[b : b + 1]


def _drop_mask_slices(op, dropout_mask, keep_prob, batch, bits_per_batch):
    if keep_prob == 1:
        return [None] * batch
    if bits_per_batch % 8:
        raise unsupported(
            op,
            f"dropout_mask with a mask that differs between batches: each batch's {bits_per_batch} mask bits "
            "must fill whole bytes to split the mask per batch",
        )
    n = bits_per_batch // 8
    return [dropout_mask[b * n : (b + 1) * n] for b in range(batch)]


def _pse_slice(pse, b):
    return pse if pse is None or pse.shape[0] == 1 else pse[b : b + 1]


# --------------------------------------------------------------------------- forward


def _no_dropout_generator(op):
    return unsupported(
        op,
        "keep_prob < 1 without dropout_mask: torch_npu draws the dropout mask on the device "
        "(aclnnDropoutGenMaskV2's Philox stream addressed by seed/offset), which cannot be "
        "reproduced here; pass dropout_mask (uint8, one bit per element of [B, N, Sq, Skv])",
    )


def _out_shape(query, key, value, head_num, layout):
    if layout in ("BSH", "SBH"):
        d = query.shape[2] // head_num
        dv = value.shape[2] // (key.shape[2] // d) if d and key.shape[2] else 0
        return (*query.shape[:2], head_num * dv)
    return (*query.shape[:-1], value.shape[-1])


def _stats_shape(query, head_num, layout):
    if layout == "TND":
        return (query.shape[0], head_num, 8)
    b = query.shape[1] if layout == "SBH" else query.shape[0]
    s = {"BSH": 1, "BSND": 1, "SBH": 0, "BNSD": 2}[layout]
    return (b, head_num, query.shape[s], 8)


def fa_cpu(
    query,
    key,
    value,
    head_num,
    input_layout,
    pse=None,
    padding_mask=None,
    atten_mask=None,
    scale=1.0,
    keep_prob=1.0,
    pre_tockens=2147483647,
    next_tockens=2147483647,
    inner_precise=0,
    prefix=None,
    actual_seq_qlen=None,
    actual_seq_kvlen=None,
    sparse_mode=0,
    gen_mask_parallel=True,
    sync=False,
    softmax_layout="",
    sink=None,
    dropout_mask=None,
    seed=0,
    offset=0,
):
    _check_layout(FA, input_layout)
    _check_softmax_layout(FA, softmax_layout, input_layout)
    refuse_reserved(FA, padding_mask=padding_mask)
    # gen_mask_parallel/sync only schedule the
    # device's mask generation, which does not happen here.
    if keep_prob < 1 and dropout_mask is None:
        raise _no_dropout_generator(FA)
    _check_sparse_mode(FA, sparse_mode, input_layout)
    if input_layout == "TND":
        if actual_seq_qlen is None or actual_seq_kvlen is None:
            raise ValueError(f"{NAMESPACE}::{FA}: input_layout TND needs actual_seq_qlen and actual_seq_kvlen")
        q, k, v, qlen, kvlen, tnd = query, key, value, ints(actual_seq_qlen), ints(actual_seq_kvlen), None
    else:
        refuse(
            FA,
            f"{FWD_API} (dense layouts run as equal-length TND)",
            actual_seq_qlen=(actual_seq_qlen, None),
            actual_seq_kvlen=(actual_seq_kvlen, None),
        )
        tnd = _Tnd(query, key, head_num, input_layout)
        _check_pse(FA, pse, tnd, input_layout)
        if _mask_per_batch(atten_mask, input_layout, tnd.b):
            masks = _drop_mask_slices(FA, dropout_mask, keep_prob, tnd.b, head_num * tnd.s * tnd.kv_s)
            parts = [
                fa_cpu(
                    *(_batch_slice(t, input_layout, b) for t in (query, key, value)), head_num, input_layout,
                    pse=_pse_slice(pse, b), atten_mask=atten_mask[b : b + 1], scale=scale, keep_prob=keep_prob,
                    pre_tockens=pre_tockens, next_tockens=next_tockens, inner_precise=inner_precise,
                    prefix=None if prefix is None else ints(prefix)[b : b + 1], sparse_mode=sparse_mode,
                    dropout_mask=masks[b], seed=seed, offset=offset, sink=sink,
                )
                for b in range(tnd.b)
            ]  # fmt: skip
            out = torch.cat([p[0] for p in parts], dim=1 if input_layout == "SBH" else 0)
            smax, ssum = (torch.cat([p[i] for p in parts]) for i in (1, 2))
            return out, smax, ssum, query.new_empty((0,)), seed, offset, sum(p[6] for p in parts)
        q, k, v = tnd.rows(query, head_num), tnd.rows(key, tnd.kv_heads), tnd.rows(value, tnd.kv_heads)
        qlen, kvlen = tnd.qlen, tnd.kvlen
    real_shift, mask, kv_rows, next_tokens = pse, _mask_2d(FA, atten_mask), kvlen, next_tockens
    if sink is not None:
        k, v, kv_rows, real_shift, mask, sparse_mode, next_tokens = _sink_as_key(
            sink, k, v, qlen, kvlen, pse, mask, sparse_mode, pre_tockens, next_tockens, scale, head_num, keep_prob
        )
    res = run(
        FA,
        "flash_attention_var_len_score",
        dict(
            query=to_numpy(q),
            key=to_numpy(k),
            value=to_numpy(v),
            real_shift=to_numpy(real_shift),
            drop_mask=to_numpy(dropout_mask) if keep_prob < 1 else None,
            atten_mask=to_numpy(mask),
            prefix=ints(prefix),
            actual_seq_qlen=qlen,
            actual_seq_kvlen=kv_rows,
            scale_value=scale,
            keep_prob=keep_prob,
            pre_tokens=pre_tockens,
            next_tokens=next_tokens,
            head_num=head_num,
            input_layout="TND",
            inner_precise=inner_precise,
            sparse_mode=sparse_mode,
        ),
    )
    out = from_numpy(res["attention_out"], query.dtype)
    smax = from_numpy(res["softmax_max"], torch.float32)
    ssum = from_numpy(res["softmax_sum"], torch.float32)
    if tnd is not None:
        out = tnd.unrows(out, head_num)
        smax, ssum = tnd.stats_out(smax), tnd.stats_out(ssum)
    return out.contiguous(), smax, ssum, query.new_empty((0,)), seed, offset, _numels(keep_prob, head_num, qlen, kvlen)


def _lengths(cumulative):
    return [b - a for a, b in zip([0] + cumulative[:-1], cumulative)]


def _sink_as_key(sink, k, v, qlen, kvlen, pse, mask, sparse_mode, pre_tokens, next_tokens, scale, heads, keep_prob):
    """The forward API has no sink input; the sink is one more key, first in each batch: key and
    value 0 (score 0, nothing added to the output) with a realShift column sink / scale (realShift
    is added before the scale), so the softmax gains the term exp(sink - m) of the V5 grad's
    formula and the statistics include it. Returns the TND key/value, cumulative key lengths,
    realShift, mask, sparse mode and next tokens of that call."""
    sq, sk = _lengths(qlen), _lengths(kvlen)
    why = None
    if keep_prob < 1:
        why = "keep_prob < 1 (the extra key would shift the dropout mask bits)"
    elif scale == 0:
        why = "scale 0"
    elif sparse_mode == 2 and sq != sk:
        why = "sparse_mode 2 with Sq != Skv (the leading key would shift the top-left diagonal)"
    elif sparse_mode not in (0, 1, 2, 3):
        why = f"sparse_mode {sparse_mode}"
    elif sparse_mode == 0 and mask is not None and pre_tokens < max(sq):
        why = "pre_tockens < Sq with a mask (the band would cut the leading key)"
    elif pse is not None and (pse.shape[2] != max(sq) or pse.shape[3] != max(sk)):
        why = f"a pse of shape {tuple(pse.shape)} (the sink column needs pse [B or 1, N, maxSq, maxSkv])"
    if why:
        raise unsupported(FA, f"sink is run as a leading key with a realShift column; not with {why}")
    if sparse_mode == 2:
        sparse_mode = 3  # equal lengths: the top-left and bottom-right diagonals coincide
    if mask is not None and sparse_mode in (0, 1):
        mask = torch.cat([mask.new_zeros(mask.shape[0], 1), mask], 1)
        if sparse_mode == 0 and next_tokens < 2147483647:
            next_tokens += 1
    zk, zv = k.new_zeros((1, *k.shape[1:])), v.new_zeros((1, *v.shape[1:]))
    starts = [0] + kvlen[:-1]
    k = torch.cat([t for a, b in zip(starts, kvlen) for t in (zk, k[a:b])])
    v = torch.cat([t for a, b in zip(starts, kvlen) for t in (zv, v[a:b])])
    width = max(sk) + 1
    shift = torch.zeros(len(sq), heads, max(sq), width, dtype=torch.float64)
    if pse is not None:
        shift[..., 1:] = pse.double()  # realShift is read bottom-right aligned per batch
    for b, n in enumerate(sk):
        shift[b, :, :, width - n - 1] = sink.double()[:, None] / scale
    return k, v, [e + b + 1 for b, e in enumerate(kvlen)], shift.to(k.dtype), mask, sparse_mode, next_tokens


def _numels(keep_prob, head_num, qlen, kvlen):
    """Bits of the dropout mask: head_num * Sq * Skv summed over the batches."""
    if keep_prob == 1:
        return 0
    return sum(head_num * (q - pq) * (k - pk) for q, pq, k, pk in zip(qlen, [0] + qlen[:-1], kvlen, [0] + kvlen[:-1]))


_FA_SIGNATURE = inspect.signature(fa_cpu)


def fa_fake(*args, **kwargs):
    a = _FA_SIGNATURE.bind(*args, **kwargs)
    a.apply_defaults()
    query, key, value, head_num, layout = (
        a.arguments[n] for n in ("query", "key", "value", "head_num", "input_layout")
    )
    _check_layout(FA, layout)
    if layout == "TND":
        qlen, kvlen = ints(a.arguments["actual_seq_qlen"]) or [], ints(a.arguments["actual_seq_kvlen"]) or []
    else:
        tnd = _Tnd(query, key, head_num, layout)
        qlen, kvlen = tnd.qlen, tnd.kvlen
    stats = _stats_shape(query, head_num, layout)
    f32 = torch.float32
    return (
        query.new_empty(_out_shape(query, key, value, head_num, layout)),
        query.new_empty(stats, dtype=f32),
        query.new_empty(stats, dtype=f32),
        query.new_empty((0,)),
        a.arguments["seed"],
        a.arguments["offset"],
        _numels(a.arguments["keep_prob"], head_num, qlen, kvlen),
    )


# --------------------------------------------------------------------------- backward


def fag_impl(
    query,
    key,
    value,
    dy,
    head_num,
    input_layout,
    *,
    pse=None,
    atten_mask=None,
    softmax_max=None,
    softmax_sum=None,
    attention_in=None,
    scale_value=1.0,
    keep_prob=1.0,
    pre_tockens=2147483647,
    next_tockens=2147483647,
    inner_precise=0,
    prefix=None,
    actual_seq_qlen=None,
    actual_seq_kvlen=None,
    sparse_mode=0,
    sink=None,
    drop_mask=None,
):
    """(dq, dk, dv, dpse, dsink) from aclnnFlashAttentionUnpaddingScoreGradV5 (drop_mask: the
    forward's dropout_mask, which torch_npu's grad schema cannot carry)."""
    _check_layout(FAG, input_layout)
    _check_sparse_mode(FAG, sparse_mode, input_layout)
    if input_layout == "TND":
        if actual_seq_qlen is None or actual_seq_kvlen is None:
            raise ValueError(f"{NAMESPACE}::{FAG}: input_layout TND needs actual_seq_qlen and actual_seq_kvlen")
        q, k, v, g, o = query, key, value, dy, attention_in
        smax, ssum, qlen, kvlen, tnd = softmax_max, softmax_sum, ints(actual_seq_qlen), ints(actual_seq_kvlen), None
    else:
        refuse(
            FAG,
            f"{BWD_API} (dense layouts run as equal-length TND)",
            actual_seq_qlen=(actual_seq_qlen, None),
            actual_seq_kvlen=(actual_seq_kvlen, None),
        )
        tnd = _Tnd(query, key, head_num, input_layout)
        _check_pse(FAG, pse, tnd, input_layout)
        if _mask_per_batch(atten_mask, input_layout, tnd.b):
            masks = _drop_mask_slices(FAG, drop_mask, keep_prob, tnd.b, head_num * tnd.s * tnd.kv_s)
            parts = [
                fag_impl(
                    *(_batch_slice(t, input_layout, b) for t in (query, key, value, dy)), head_num, input_layout,
                    pse=_pse_slice(pse, b), atten_mask=atten_mask[b : b + 1],
                    softmax_max=softmax_max[b : b + 1], softmax_sum=softmax_sum[b : b + 1],
                    attention_in=_batch_slice(attention_in, input_layout, b), scale_value=scale_value,
                    keep_prob=keep_prob, pre_tockens=pre_tockens, next_tockens=next_tockens,
                    inner_precise=inner_precise, prefix=None if prefix is None else ints(prefix)[b : b + 1],
                    sparse_mode=sparse_mode, sink=sink, drop_mask=masks[b],
                )
                for b in range(tnd.b)
            ]  # fmt: skip
            dim = 1 if input_layout == "SBH" else 0
            dq, dk, dv = (torch.cat([p[i] for p in parts], dim=dim) for i in range(3))
            dsink = parts[0][4] if sink is None else sum(p[4] for p in parts)
            return dq, dk, dv, query.new_empty((0,)), dsink
        q, k, v = tnd.rows(query, head_num), tnd.rows(key, tnd.kv_heads), tnd.rows(value, tnd.kv_heads)
        g = tnd.rows(dy, head_num)
        o = None if attention_in is None else tnd.rows(attention_in, head_num)
        smax, ssum, qlen, kvlen = tnd.stats_in(softmax_max), tnd.stats_in(softmax_sum), tnd.qlen, tnd.kvlen
    res = run(
        FAG,
        "flash_attention_unpadding_score_grad_v5",
        dict(
            query=to_numpy(q),
            key=to_numpy(k),
            value=to_numpy(v),
            dy=to_numpy(g),
            pse_shift=to_numpy(pse),
            drop_mask=to_numpy(drop_mask) if keep_prob < 1 else None,
            atten_mask=to_numpy(_mask_2d(FAG, atten_mask)),
            softmax_max=to_numpy(smax),
            softmax_sum=to_numpy(ssum),
            attention_in=to_numpy(o),
            sink=to_numpy(sink),
            prefix=ints(prefix),
            actual_seq_qlen=qlen,
            actual_seq_kvlen=kvlen,
            scale_value=scale_value,
            keep_prob=keep_prob,
            pre_tokens=pre_tockens,
            next_tokens=next_tockens,
            head_num=head_num,
            input_layout="TND",
            inner_precise=inner_precise,
            sparse_mode=sparse_mode,
            # pse is added before the scale (torch_npu's pse_type 1); the statistics are [T, N, 8]
            pse_type=1,
            softmax_in_layout="same_as_input",
        ),
    )
    grads = [from_numpy(res[name], t.dtype) for name, t in (("dq", query), ("dk", key), ("dv", value))]
    if tnd is not None:
        grads = [tnd.unrows(gr, gr.shape[1]) for gr in grads]
    dsink = (
        query.new_empty((0,), dtype=torch.float32)
        if sink is None
        else from_numpy(res["dsink"], sink.dtype).reshape(sink.shape)
    )
    return (*[gr.contiguous() for gr in grads], query.new_empty((0,)), dsink)


def fag_cpu(
    query,
    key,
    value,
    dy,
    head_num,
    input_layout,
    *,
    pse=None,
    padding_mask=None,
    atten_mask=None,
    softmax_max=None,
    softmax_sum=None,
    softmax_in=None,
    attention_in=None,
    scale_value=1.0,
    keep_prob=1.0,
    pre_tockens=2147483647,
    next_tockens=2147483647,
    inner_precise=0,
    seed=0,
    offset=0,
    numels=0,
    prefix=None,
    actual_seq_qlen=None,
    actual_seq_kvlen=None,
    sparse_mode=0,
    gen_mask_parallel=True,
    sync=False,
    softmax_layout="",
    sink=None,
):
    """dpse is an empty tensor: the V5 API has no pse gradient (its dpseOut is unused).
    padding_mask and softmax_in are reserved in torch_npu."""
    refuse_reserved(FAG, padding_mask=padding_mask, softmax_in=softmax_in)  # torch_npu passes an empty softmax_in
    _check_softmax_layout(FAG, softmax_layout, input_layout)
    if keep_prob < 1:  # seed/offset/numels address torch_npu's device mask generator
        raise _no_dropout_generator(FAG)
    return fag_impl(
        query,
        key,
        value,
        dy,
        head_num,
        input_layout,
        pse=pse,
        atten_mask=atten_mask,
        softmax_max=softmax_max,
        softmax_sum=softmax_sum,
        attention_in=attention_in,
        scale_value=scale_value,
        keep_prob=keep_prob,
        pre_tockens=pre_tockens,
        next_tockens=next_tockens,
        inner_precise=inner_precise,
        prefix=prefix,
        actual_seq_qlen=actual_seq_qlen,
        actual_seq_kvlen=actual_seq_kvlen,
        sparse_mode=sparse_mode,
        sink=sink,
    )


def fag_fake(query, key, value, dy, head_num, input_layout, *, sink=None, **_):
    dsink = query.new_empty((0,), dtype=torch.float32) if sink is None else sink.new_empty(sink.shape)
    return (
        query.new_empty(query.shape),
        key.new_empty(key.shape),
        value.new_empty(value.shape),
        query.new_empty((0,)),
        dsink,
    )


# ------------------------------------------------------------- autograd of npu_fusion_attention


def setup_context(ctx, inputs, output):
    args = dict(zip(ARGS, inputs))
    out, softmax_max, softmax_sum = output[:3]
    mask = args["dropout_mask"] if args["keep_prob"] < 1 else None
    ctx.save_for_backward(
        args["query"], args["key"], args["value"], args["pse"], args["atten_mask"], out, softmax_max, softmax_sum,
        mask, args["sink"],
    )  # fmt: skip
    ctx.attrs = {name: args[name] for name in ATTRS}
    ctx.seed_offset_numels = output[4:]


def backward(ctx, d_out, *_unused_stat_grads):
    """dq/dk/dv through the V5 grad from the saved statistics and output, as torch_npu's backward
    does (softmax_max/sum are auxiliary outputs without a gradient)."""
    if ctx.needs_input_grad[ARGS.index("pse")]:
        raise NotImplementedError(
            f"{NAMESPACE}::{FA} backward: {BWD_API} has no pse gradient (dpseOut is unused); detach pse"
        )
    query, key, value, pse, atten_mask, out, softmax_max, softmax_sum, mask, sink = ctx.saved_tensors
    a = ctx.attrs
    dy = torch.zeros_like(out) if d_out is None else d_out.to(out.dtype).contiguous()
    common = dict(
        pse=pse,
        atten_mask=atten_mask,
        softmax_max=softmax_max,
        softmax_sum=softmax_sum,
        attention_in=out,
        scale_value=a["scale"],
        keep_prob=a["keep_prob"],
        pre_tockens=a["pre_tockens"],
        next_tockens=a["next_tockens"],
        inner_precise=a["inner_precise"],
        prefix=a["prefix"],
        actual_seq_qlen=a["actual_seq_qlen"],
        actual_seq_kvlen=a["actual_seq_kvlen"],
        sparse_mode=a["sparse_mode"],
        sink=sink,
    )
    if mask is not None:
        # torch_npu's grad op regenerates the mask from seed/offset; the mask given to the forward
        # can only reach the V5 kernel directly.
        if query.device.type != "cpu":
            raise NotImplementedError(
                f"{NAMESPACE}::{FA} backward: a dropout_mask forward on "
                f"{query.device.type} tensors has no torch_npu grad op to go to"
            )
        dq, dk, dv, _, dsink = fag_impl(
            query, key, value, dy, a["head_num"], a["input_layout"], drop_mask=mask, **common
        )
    else:
        seed, offset, numels = ctx.seed_offset_numels
        dq, dk, dv, _, dsink = torch.ops.ascend_fa.npu_fusion_attention_grad(
            query,
            key,
            value,
            dy,
            a["head_num"],
            a["input_layout"],
            seed=seed,
            offset=offset,
            numels=numels,
            gen_mask_parallel=a["gen_mask_parallel"],
            sync=a["sync"],
            softmax_layout=a["softmax_layout"],
            **common,
        )
    grads = [dq, dk, dv] + [None] * (len(ARGS) - 3)
    if sink is not None:
        grads[ARGS.index("sink")] = dsink
    return tuple(grads)


def _arg_names():
    from .schemas import SCHEMAS

    return [a.name for a in torch._C.parse_schema(SCHEMAS[FA]).arguments]


ARGS = _arg_names()
ATTRS = (
    "head_num",
    "input_layout",
    "scale",
    "keep_prob",
    "pre_tockens",
    "next_tockens",
    "inner_precise",
    "prefix",
    "actual_seq_qlen",
    "actual_seq_kvlen",
    "sparse_mode",
    "gen_mask_parallel",
    "sync",
    "softmax_layout",
)
