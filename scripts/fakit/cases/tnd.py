"""What the two TND training operators (varlen forward, V5 backward) share: per-batch
sequence lengths, sparse modes with the mask each mode takes, pse shapes and dropout."""

from __future__ import annotations

import numpy as np

from .core import DTYPES, Case, Forbidden, compressed_causal_mask, cumulative, mask_as, prefix_compressed_mask, uniform

MAX_INT = 2147483647
SPARSE_MODES = (0, 1, 2, 3, 4, 6, 7, 8)
COMPRESSED_MODES = (2, 3, 4, 7, 8)  # take the 2048x2048 optimised causal mask


def check_common(c: Case, *, max_d: int, max_b: int) -> None:
    s, a, o = c.shapes, c.attrs, c.options
    ql, kl, N, Nkv, D = s["qlens"], s["kvlens"], s["N"], s["Nkv"], s["D"]
    B = len(ql)
    if c.layout != "TND":
        raise Forbidden(f"inputLayout {c.layout}: only TND is supported")
    if len(kl) != B or B == 0:
        raise Forbidden(f"actual_seq_qlen/kvlen describe {B}/{len(kl)} batches; they must agree and be > 0")
    if not 1 <= N <= 256 or N % Nkv:
        raise Forbidden(f"N={N}, Nkv={Nkv}: Nq must be in [1, 256] and a multiple of Nkv")
    if not 1 <= D <= max_d:
        raise Forbidden(f"D={D}: must be in [1, {max_d}]")
    if B > (1024 if a["sparse_mode"] == 6 else max_b):
        raise Forbidden(f"B={B}: at most {max_b} (1K with prefix)")
    if not 1 <= sum(ql) <= 1 << 20 or not 1 <= sum(kl) <= 1 << 20:
        raise Forbidden("T must be in [1, 1M]")
    if any(q > 0 and k == 0 for q, k in zip(ql, kl)):
        raise Forbidden("a batch with Sq > 0 but Skv = 0 is not supported")
    if not 0 < a["keep_prob"] <= 1:
        raise Forbidden(f"keep_prob={a['keep_prob']}: must be in (0, 1]")
    mode, pre, nxt = a["sparse_mode"], a["pre_tokens"], a["next_tokens"]
    if mode not in SPARSE_MODES:
        raise Forbidden(f"sparse_mode={mode}: supported are {SPARSE_MODES} (5 is not supported for varlen)")
    if o["mask_dtype"] not in ("bool", "uint8"):
        raise Forbidden(f"atten_mask dtype {o['mask_dtype']}: BOOL or UINT8 only")
    if mode != 0 and o["mask"] == "none":
        raise Forbidden(f"sparse_mode={mode} needs the matching atten_mask")
    if mode in (4, 7, 8) or (mode == 0 and o["mask"] == "band"):
        if pre + nxt < 0:
            raise Forbidden(f"pre_tokens={pre}, next_tokens={nxt}: the band is empty")
    pse = o["pse"]
    if pse != "none" and any(q == 0 for q in ql):
        raise Forbidden("a batch with Sq = 0 does not support pse")
    if mode == 7 and pse != "none":
        raise Forbidden("sparse_mode=7 does not support pse")
    if mode == 8 and pse != "none" and list(ql) != list(kl):
        raise Forbidden("sparse_mode=8 supports pse only when every sequence has Sq == Skv")
    if pse.startswith("alibi"):
        if mode not in (0, 2, 3) or (mode == 0 and o["mask"] != "causal"):
            raise Forbidden("alibi-compressed pse needs a lower-triangular mask (sparse_mode 0/2/3)")
        if list(ql) != list(kl) or min(ql) <= 1024:
            raise Forbidden("alibi-compressed pse needs Sq == Skv > 1024 in every batch")
    if mode == 6:
        pref = o.get("prefix")
        if pref is None or len(pref) != B:
            raise Forbidden("sparse_mode=6 needs one prefix value per batch")
        for q, k, p in zip(ql, kl, pref):
            lo = 0 if q > k else k - q
            if not lo <= p <= k:
                raise Forbidden(f"prefix {p} outside [{lo}, {k}] for Sq={q}, Skv={k}")
    elif o.get("prefix") is not None:
        raise Forbidden("prefix is only used by sparse_mode=6")
    if mode in (7, 8):
        live = [i for i in range(B) if ql[i] and kl[i]]
        bi = live[-1] if mode == 7 else live[0]
        if mode == 7:
            if pre < kl[bi] or not ql[bi] - kl[bi] <= nxt <= 0:
                raise Forbidden(
                    f"sparse_mode=7 band batch needs pre_tokens >= {kl[bi]} and {ql[bi] - kl[bi]} <= next_tokens <= 0"
                )
            if any(ql[i] > kl[i] for i in live if i != bi):
                raise Forbidden("sparse_mode=7: non-band batches need Sq <= Skv")
        elif pre < kl[bi] or nxt < ql[bi] - kl[bi]:
            raise Forbidden(
                f"sparse_mode=8 band batch needs pre_tokens >= {kl[bi]} and next_tokens >= {ql[bi] - kl[bi]}"
            )
    if o["dropout"] and a["keep_prob"] >= 1:
        raise Forbidden("dropout needs keep_prob < 1")


def mask_for(c: Case, rng) -> np.ndarray | None:
    s, a, o = c.shapes, c.attrs, c.options
    mode, kind = a["sparse_mode"], o["mask"]
    if kind == "none":
        return None
    if mode in COMPRESSED_MODES:
        m = compressed_causal_mask()
    elif mode == 6:
        m = prefix_compressed_mask()
    else:
        sq, sk = max(s["qlens"]), max(s["kvlens"])
        if kind in ("random", "mode"):  # mode 1 (allMask) takes a full user mask
            m = rng.random((sq, sk)) < 0.3
            m[:, 0] = False  # a full row of 1 is not allowed in the user mask
        elif kind == "causal":
            m = np.triu(np.ones((sq, sk), dtype=bool), k=1)
        else:  # band, left-up (mode 0)
            i, j = np.arange(sq)[:, None], np.arange(sk)[None, :]
            m = (j - i > a["next_tokens"]) | (i - j > a["pre_tokens"])
    return mask_as(m, o["mask_dtype"])


def pse_for(c: Case, rng, dtype: str) -> np.ndarray | None:
    """pse shapes: full [B|1, N, maxSq, maxSkv]; alibi-compressed [B|1, N, 1024, maxSkv]
    (the last 1024 rows of a Toeplitz alibi bias); slopes [B, N] / [N] (fp32)."""
    s, o = c.shapes, c.options
    B, N = len(s["qlens"]), s["N"]
    sq, sk = max(s["qlens"]), max(s["kvlens"])
    kind = o["pse"]
    if kind == "none":
        return None
    if kind in ("slopes", "slopes_b"):
        shape = (B, N) if kind == "slopes_b" else (N,)
        return (rng.uniform(0.01, 0.5, size=shape)).astype(np.float32)
    lead = 1 if kind.endswith("1") else B
    if kind.startswith("alibi"):
        slopes = rng.uniform(0.01, 0.2, size=(lead, N, 1, 1))
        i = np.arange(sq - 1024, sq)[:, None]
        j = np.arange(sk)[None, :]
        return np.asarray(-slopes * np.abs(j - i - (sk - sq)), np.float32).astype(DTYPES[dtype])
    return uniform(rng, (lead, N, sq, sk), dtype, -1.0, 1.0)


def drop_mask_for(c: Case, rng) -> np.ndarray | None:
    """uint8 dropout bits; each bit is 1 (kept) with probability keep_prob. Dense, as the
    specs size the mask: (sum over batches of N * Sq_b * Skv_b) / 8 bytes, rounded up."""
    s, a = c.shapes, c.attrs
    if not c.options["dropout"]:
        return None
    total_bits = sum(s["N"] * q * k for q, k in zip(s["qlens"], s["kvlens"]))
    bits = rng.random(total_bits) < a["keep_prob"]
    return np.packbits(bits, bitorder="little")


def seq_kwargs(c: Case) -> dict:
    return {"actual_seq_qlen": cumulative(c.shapes["qlens"]), "actual_seq_kvlen": cumulative(c.shapes["kvlens"])}


def tnd(rng, lens, heads, d, dtype, value_range):
    return uniform(rng, (sum(lens), heads, d), dtype, *value_range)


def describe(c: Case) -> list:
    s, a, o = c.shapes, c.attrs, c.options
    f = [
        c.dtype,
        f"q{list(s['qlens'])}",
        f"kv{list(s['kvlens'])}",
        f"N{s['N']}/{s['Nkv']}",
        f"D{s['D']}",
        f"sparse{a['sparse_mode']}",
    ]
    if o["mask"] != "none":
        f.append(f"mask={o['mask']}[{o['mask_dtype']}]")
    if a["sparse_mode"] in (0, 4, 7, 8) and (a["pre_tokens"], a["next_tokens"]) != (MAX_INT, MAX_INT):
        f.append(f"pre={a['pre_tokens']},next={a['next_tokens']}")
    if o.get("prefix") is not None:
        f.append(f"prefix={list(o['prefix'])}")
    if o["pse"] != "none":
        f.append(f"pse={o['pse']}")
    if o["dropout"]:
        f.append(f"dropout(keep={a['keep_prob']})")
    if a.get("inner_precise", 0):
        f.append(f"inner_precise={a['inner_precise']}")
    return f
