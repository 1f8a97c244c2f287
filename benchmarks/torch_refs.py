"""Straightforward torch float32 implementations of the five operators, for the features the
benchmark shapes use (plain/causal/band masks, GQA, paged and int8 KV, rope). They are the
"what anyone would write" yardstick of golden_bench.py: per batch and head, full score
matrix, torch.softmax, autograd for the V5 backward. Not used by the product."""

from __future__ import annotations

import numpy as np
import torch


def _t(x):
    return torch.from_numpy(np.asarray(x).astype(np.float32))


def _bnsd(x, layout, n):
    x = _t(x)
    if layout == "BSH":
        b, s, h = x.shape
        return x.reshape(b, s, n, h // n).permute(0, 2, 1, 3)
    if layout == "BSND":
        return x.permute(0, 2, 1, 3)
    return x


def _mask_2d(m, b):
    """[S1, S2] slice for batch b of a [S1,S2] / [B|1,S1,S2] / [B|1,1,S1,S2] mask."""
    if m.dim() == 2:
        return m
    m = m[b if m.shape[0] > 1 else 0]
    return m if m.dim() == 2 else m[0]


def _attend(q, k, v, scale, excluded=None):
    s = (q @ k.T) * scale
    if excluded is not None:
        s = s.masked_fill(excluded, float("-inf"))
    p = torch.nan_to_num(torch.softmax(s, dim=-1))
    return p @ v


def prompt_flash_attention(
    query, key, value, *, atten_mask=None, num_heads, scale_value=1.0, input_layout="BSH", num_key_value_heads=0, **_
):
    nkv = num_key_value_heads or num_heads
    q, k, v = _bnsd(query, input_layout, num_heads), _bnsd(key, input_layout, nkv), _bnsd(value, input_layout, nkv)
    m = None if atten_mask is None else torch.from_numpy(np.asarray(atten_mask) != 0)
    out = torch.empty_like(q)
    g = num_heads // nkv
    for b in range(q.shape[0]):
        mb = None if m is None else _mask_2d(m, b)
        for n in range(num_heads):
            out[b, n] = _attend(q[b, n], k[b, n // g], v[b, n // g], scale_value, mb)
    return out


def incre_flash_attention_v4(
    query,
    key,
    value,
    *,
    actual_seq_lengths=None,
    antiquant_scale=None,
    antiquant_offset=None,
    block_table=None,
    num_heads,
    scale_value=1.0,
    input_layout="BSH",
    num_key_value_heads=0,
    block_size=0,
    **_,
):
    nkv = num_key_value_heads or num_heads
    q = _bnsd(query, input_layout, num_heads)
    B, g = q.shape[0], num_heads // nkv
    if block_table is not None:
        kc, vc = _t(key[0]), _t(value[0])  # (blocks, N, bs, D)
        table = torch.from_numpy(np.asarray(block_table).astype(np.int64))
        lens = list(actual_seq_lengths)

        def kv(b):
            nb = -(-lens[b] // block_size)
            ids = table[b, :nb]
            return (
                kc[ids].permute(1, 0, 2, 3).reshape(nkv, -1, kc.shape[-1])[:, : lens[b]],
                vc[ids].permute(1, 0, 2, 3).reshape(nkv, -1, vc.shape[-1])[:, : lens[b]],
            )
    else:
        k, v = _bnsd(key[0], input_layout, nkv), _bnsd(value[0], input_layout, nkv)
        if antiquant_scale is not None:
            s, o = _t(antiquant_scale), _t(antiquant_offset) if antiquant_offset is not None else 0
            s = s.reshape(2, nkv, 1, -1) if s.numel() > 2 else s.reshape(2, 1, 1, 1)
            o = o.reshape(s.shape) if torch.is_tensor(o) else torch.zeros_like(s)
            k, v = (k + o[0]) * s[0], (v + o[1]) * s[1]

        def kv(b):
            n = k.shape[2] if actual_seq_lengths is None else actual_seq_lengths[b]
            return k[b, :, :n], v[b, :, :n]

    out = torch.empty_like(q)
    for b in range(B):
        kb, vb = kv(b)
        for n in range(num_heads):
            out[b, n] = _attend(q[b, n], kb[n // g], vb[n // g], scale_value)
    return out


def _segments(cum):
    cum = [0] + list(cum)
    return [(cum[i], cum[i + 1]) for i in range(len(cum) - 1)]


def _sparse_excluded(mode, sq, sk):
    i = torch.arange(sq)[:, None]
    j = torch.arange(sk)[None, :]
    if mode == 2:
        return j > i
    if mode == 3:
        return j > i + (sk - sq)
    return None


def flash_attention_var_len_score(
    query, key, value, *, actual_seq_qlen, actual_seq_kvlen, scale_value=1.0, head_num, sparse_mode=0, **_
):
    q, k, v = _t(query), _t(key), _t(value)
    g = head_num // k.shape[1]
    out = torch.zeros_like(q)
    for (q0, q1), (k0, k1) in zip(_segments(actual_seq_qlen), _segments(actual_seq_kvlen)):
        ex = _sparse_excluded(sparse_mode, q1 - q0, k1 - k0)
        for n in range(head_num):
            out[q0:q1, n] = _attend(q[q0:q1, n], k[k0:k1, n // g], v[k0:k1, n // g], scale_value, ex)
    return out


def flash_attention_unpadding_score_grad_v5(
    query,
    key,
    value,
    dy,
    *,
    query_rope=None,
    key_rope=None,
    actual_seq_qlen,
    actual_seq_kvlen,
    scale_value=1.0,
    head_num,
    sparse_mode=0,
    **_,
):
    q, k, v, do = _t(query), _t(key), _t(value), _t(dy)
    qr = None if query_rope is None else _t(query_rope)
    kr = None if key_rope is None else _t(key_rope)
    g = head_num // k.shape[1]
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    for (q0, q1), (k0, k1) in zip(_segments(actual_seq_qlen), _segments(actual_seq_kvlen)):
        ex = _sparse_excluded(sparse_mode, q1 - q0, k1 - k0)
        for n in range(head_num):
            qh = q[q0:q1, n].clone().requires_grad_()
            kh = k[k0:k1, n // g].clone().requires_grad_()
            vh = v[k0:k1, n // g].clone().requires_grad_()
            s = qh @ kh.T
            if qr is not None:
                s = s + qr[q0:q1, n] @ kr[k0:k1, n // g].T
            s = s * scale_value
            if ex is not None:
                s = s.masked_fill(ex, float("-inf"))
            o = torch.nan_to_num(torch.softmax(s, -1)) @ vh
            o.backward(do[q0:q1, n])
            dq[q0:q1, n] = qh.grad
            dk[k0:k1, n // g] += kh.grad
            dv[k0:k1, n // g] += vh.grad
    return dq, dk, dv


def sparse_flash_attention_grad(
    query,
    key,
    value,
    sparse_indices,
    d_out,
    out,
    softmax_max,
    softmax_sum,
    *,
    query_rope=None,
    key_rope=None,
    scale_value,
    sparse_block_size=1,
    layout="BSND",
    sparse_mode=0,
    actual_seq_lengths_query=None,
    actual_seq_lengths_kv=None,
    **_,
):
    """Per query token: gather the selected KV tokens, recompute P, and accumulate the
    gradients by the usual formulas (dS = P * (dP - rowsum(dO * O)))."""
    flat = lambda x: None if x is None else _t(x).reshape(-1, *np.shape(x)[-2:])
    q, k, v, do, o = flat(query), flat(key), flat(value), flat(d_out), flat(out)
    qr, kr = flat(query_rope), flat(key_rope)
    if qr is not None:
        q, k = torch.cat([q, qr], -1), torch.cat([k, kr], -1)
    idx = np.asarray(sparse_indices).reshape(q.shape[0], -1)
    if layout == "TND":
        qs, ks = _segments(actual_seq_lengths_query), _segments(actual_seq_lengths_kv)
    else:
        B = np.shape(query)[0]
        s1, s2 = np.shape(query)[1], np.shape(key)[1]
        qs = [(b * s1, (b + 1) * s1) for b in range(B)]
        ks = [(b * s2, (b + 1) * s2) for b in range(B)]
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    bs = sparse_block_size
    for (q0, q1), (k0, k1) in zip(qs, ks):
        sq, sk = q1 - q0, k1 - k0
        for i in range(sq):
            t = q0 + i
            thr = sk - sq + i + 1 if sparse_mode == 3 else sk
            sel = []
            for blk in idx[t, : -(-max(thr, 0) // bs)]:
                if blk < 0:
                    break
                start = int(blk) * bs
                if start < thr:
                    sel.extend(range(k0 + start, k0 + min(start + bs, thr)))
            if not sel:
                continue
            sel = torch.tensor(sel)
            ks_, vs_ = k[sel, 0], v[sel, 0]
            p = torch.softmax((q[t] @ ks_.T) * scale_value, -1)
            dp = do[t] @ vs_.T
            ds = p * (dp - (do[t] * o[t]).sum(-1, keepdim=True))
            dq[t] = ds @ ks_ * scale_value
            dk[:, 0].index_add_(0, sel, ds.T @ q[t] * scale_value)
            dv[:, 0].index_add_(0, sel, p.T @ do[t])
    return dq, dk, dv
