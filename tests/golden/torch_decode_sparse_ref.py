"""Independent PyTorch references for the decode (IFA V4) and sparse (SFA / SFAG) goldens.

Written from the specs (docs/golden_decode_sparse.md lists the rules), deliberately in a
different style from the NumPy goldens: explicit per-token loops, dense boolean "allowed"
vectors over absolute KV positions, torch.softmax, float64 throughout, and gradients by
torch.autograd instead of hand-written backward formulas. Small shapes only.
"""

import math

import numpy as np
import torch

F64 = torch.float64


def t64(x):
    return torch.as_tensor(np.asarray(x).astype(np.float64))


def _heads_first(x, layout, n):
    """(B, N, S, D) float64 tensor from a BSH / BSND / BNSD array."""
    x = t64(x)
    if layout == "BSH":
        b, s, h = x.shape
        return x.reshape(b, s, n, h // n).permute(0, 2, 1, 3)
    if layout == "BSND":
        return x.permute(0, 2, 1, 3)
    return x


def _softmax_rows(scores, allowed):
    """softmax over allowed positions; rows with none allowed give all-zero weights."""
    s = scores.masked_fill(~allowed, float("-inf"))
    any_ok = allowed.any(dim=-1, keepdim=True)
    w = torch.softmax(torch.where(any_ok, s, torch.zeros_like(s)), dim=-1)
    return torch.where(any_ok & allowed, w, torch.zeros_like(w))


# ------------------------------------------------------------------------------- IFA V4
def ifa_reference(
    query,
    key,
    value,
    *,
    pse_shift=None,
    atten_mask=None,
    actual_seq_lengths=None,
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
    **unused,
):
    n_kv = num_key_value_heads or num_heads
    q = _heads_first(query, input_layout, num_heads)[:, :, 0, :]  # (B, N, D)
    B, N, D = q.shape
    group = N // n_kv
    lengths = None if actual_seq_lengths is None else [int(x) for x in actual_seq_lengths]
    if lengths is not None and len(lengths) == 1:
        lengths = lengths * B

    def dequant(x, which):
        x = t64(x)
        if antiquant_scale is None:
            return x
        sc = t64(antiquant_scale).reshape(2, -1)[which]
        off = t64(antiquant_offset).reshape(2, -1)[which] if antiquant_offset is not None else torch.zeros_like(sc)
        if sc.numel() > 1:  # per channel: (N_kv, D) over the last axes
            sc, off = sc.reshape(n_kv, 1, D), off.reshape(n_kv, 1, D)
        return (x + off) * sc

    def batch_kv(b):
        """Full (N_kv, S, D) key/value of batch b in absolute positions."""
        if block_table is not None:
            kc, vc = np.asarray(key[0]), np.asarray(value[0])
            L = lengths[b]
            ks, vs = [], []
            for t in range(L):  # token by token through the table
                blk, off = int(block_table[b][t // block_size]), t % block_size
                if kc.ndim == 3:
                    ks.append(kc[blk, off].reshape(n_kv, D))
                    vs.append(vc[blk, off].reshape(n_kv, D))
                else:
                    ks.append(kc[blk, :, off])
                    vs.append(vc[blk, :, off])
            k = np.stack(ks, axis=1) if ks else np.zeros((n_kv, 0, D), kc.dtype)
            v = np.stack(vs, axis=1) if vs else np.zeros((n_kv, 0, D), vc.dtype)
            return dequant(k, 0), dequant(v, 1)
        if len(key) == 1:
            k = _heads_first(key[0][b : b + 1], input_layout, n_kv)[0]
            v = _heads_first(value[0][b : b + 1], input_layout, n_kv)[0]
        else:
            k = _heads_first(key[b], input_layout, n_kv)[0]
            v = _heads_first(value[b], input_layout, n_kv)[0]
        return dequant(k.numpy(), 0), dequant(v.numpy(), 1)

    out = torch.zeros(B, N, D, dtype=F64)
    live = torch.zeros(B, N, dtype=torch.bool)
    for b in range(B):
        k, v = batch_kv(b)
        S = k.shape[1]
        pos = torch.arange(S)
        if lengths is None:
            allowed = torch.ones(S, dtype=torch.bool)
        elif kv_padding_size is None or np.size(kv_padding_size) == 0 or block_table is not None:
            allowed = pos < lengths[b]
        else:
            pad = max(int(np.asarray(kv_padding_size).reshape(-1)[0]), 0)
            lo, hi = S - pad - lengths[b], S - pad
            if lo < 0 or hi < 0:
                continue
            allowed = (pos >= lo) & (pos < hi)
        if atten_mask is not None:
            m = torch.as_tensor(np.asarray(atten_mask)[b].reshape(-1)[:S].astype(bool))
            allowed = allowed & ~m
        k = k.repeat_interleave(group, dim=0)  # GQA: query head n reads KV head n // G
        v = v.repeat_interleave(group, dim=0)
        scores = torch.einsum("nd,nsd->ns", q[b], k) * scale_value
        if pse_shift is not None:
            p = t64(pse_shift)
            scores = scores + p[b if p.shape[0] > 1 else 0, :, 0, :S]
        w = _softmax_rows(scores, allowed.expand(N, S))
        out[b] = torch.einsum("ns,nsd->nd", w, v)
        live[b] = allowed.any()
    if quant_scale2 is not None:
        qs = t64(quant_scale2).reshape(-1)
        qo = t64(quant_offset2).reshape(-1) if quant_offset2 is not None else torch.zeros_like(qs)
        if qs.numel() > 1:
            qs, qo = qs.reshape(N, D), qo.reshape(N, D)
        out = torch.clamp(torch.round(out * qs + qo), -128, 127)
        out = torch.where(live[..., None], out, torch.zeros_like(out))
    out4 = out[:, :, None, :]
    if input_layout == "BSND":
        out4 = out4.permute(0, 2, 1, 3)
    elif input_layout == "BSH":
        out4 = out4.permute(0, 2, 1, 3).reshape(B, 1, N * D)
    return out4.numpy().astype(np.float32)


# ------------------------------------------------------------------------------- sparse
def sparse_selection(indices, threshold, block):
    """KV token list selected by one row of sparse indices (the documented rule)."""
    chosen = []
    for i in range(min(len(indices), math.ceil(max(threshold, 0) / block))):
        idx = int(indices[i])
        if idx < 0:
            break
        chosen.extend(t for t in range(idx * block, idx * block + block) if t < threshold)
    return chosen


def _token_table(layout, x_shape, lengths):
    """[(batch, row, flat_index)] of the real tokens plus per-batch lengths and offsets."""
    if layout == "TND":
        cum = [int(c) for c in lengths]
        starts = [0] + cum[:-1]
        lens = [c - s for s, c in zip(starts, cum)]
    else:
        B, S = x_shape[0], x_shape[1]
        lens = [S] * B if lengths is None else [int(x) for x in lengths]
        starts = [b * S for b in range(B)]
    return lens, starts


def sparse_reference(
    query,
    key,
    value,
    sparse_indices,
    *,
    scale_value,
    actual_seq_lengths_query=None,
    actual_seq_lengths_kv=None,
    query_rope=None,
    key_rope=None,
    sparse_block_size=1,
    layout="BSND",
    sparse_mode=3,
    d_out=None,
):
    """Sparse attention forward (out, softmax_max, softmax_sum as float64 tensors in the
    operator layouts) and, when d_out is given, autograd gradients dict."""
    qx, kx, vx = (t64(x).requires_grad_(True) for x in (query, key, value))
    rope = query_rope is not None
    qr = t64(query_rope).requires_grad_(True) if rope else None
    kr = t64(key_rope).requires_grad_(True) if rope else None
    flat = (lambda t: t.reshape(-1, *t.shape[2:])) if layout == "BSND" else (lambda t: t)
    qf, kf, vf = flat(qx), flat(kx), flat(vx)
    qrf, krf = (flat(qr), flat(kr)) if rope else (None, None)
    q_lens, q_starts = _token_table(layout, qx.shape, actual_seq_lengths_query)
    kv_lens, kv_starts = _token_table(layout, kx.shape, actual_seq_lengths_kv)
    N1, N2 = qf.shape[1], kf.shape[1]
    G = N1 // N2
    idx = np.asarray(sparse_indices).reshape(qf.shape[0], N2, -1)
    T1 = qf.shape[0]
    rows_out = [torch.zeros(N1, vf.shape[-1], dtype=F64) for _ in range(T1)]
    smax = torch.zeros(T1, N2, G, dtype=F64)
    ssum = torch.zeros(T1, N2, G, dtype=F64)
    for b, (lq, lkv) in enumerate(zip(q_lens, kv_lens)):
        for s in range(lq):
            t = q_starts[b] + s
            thr = lkv if sparse_mode == 0 else lkv - lq + s + 1
            heads = []
            for n2 in range(N2):
                sel = sparse_selection(idx[t, n2], thr, sparse_block_size)
                qh = qf[t, n2 * G : (n2 + 1) * G]
                if not sel:
                    heads.append(torch.zeros(G, vf.shape[-1], dtype=F64))
                    continue
                rows = torch.tensor([kv_starts[b] + j for j in sel])
                sc = qh @ kf[rows, n2].T
                if rope:
                    sc = sc + qrf[t, n2 * G : (n2 + 1) * G] @ krf[rows, n2].T
                sc = sc * scale_value
                mx = sc.max(dim=-1).values
                smax[t, n2] = mx.detach()
                ssum[t, n2] = torch.exp(sc - mx[:, None]).sum(-1).detach()
                heads.append(torch.softmax(sc, dim=-1) @ vf[rows, n2])
            rows_out[t] = torch.cat(heads, dim=0)
    out = torch.stack(rows_out)
    grads = None
    if d_out is not None:
        loss = (out * flat(t64(d_out))).sum()
        leaves = [qx, kx, vx] + ([qr, kr] if rope else [])
        g = torch.autograd.grad(loss, leaves, allow_unused=True)
        g = [torch.zeros_like(l) if gi is None else gi for gi, l in zip(g, leaves)]
        names = ["d_query", "d_key", "d_value"] + (["d_query_rope", "d_key_rope"] if rope else [])
        grads = {n: gi.numpy() for n, gi in zip(names, g)}
        if not rope:
            grads.update(d_query_rope=None, d_key_rope=None)
    out = out.detach()
    if layout == "BSND":
        B, S1 = qx.shape[:2]
        out = out.reshape(B, S1, N1, -1)
        smax = smax.reshape(B, S1, N2, G).permute(0, 2, 1, 3)
        ssum = ssum.reshape(B, S1, N2, G).permute(0, 2, 1, 3)
    else:
        smax, ssum = smax.permute(1, 0, 2), ssum.permute(1, 0, 2)
    return dict(attention_out=out.numpy(), softmax_max=smax.numpy(), softmax_sum=ssum.numpy()), grads
