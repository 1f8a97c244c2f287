"""Cases for aclnnIncreFlashAttentionV4 (spec 002): decode (query S = 1) over a KV cache —
BSH/BSND/BNSD, GQA (ratio <= 64), masks, pse shift, actual KV lengths, KV left padding,
tensor-list KV, paged attention (both cache layouts), int8 KV antiquant, int8 output."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from .core import DTYPES, Case, Forbidden, mask_as, peer_cap, peer_entries, uniform

OP = "incre_flash_attention_v4"
LAYOUTS = ("BSH", "BSND", "BNSD")
PEER_FILE = "ifa_v4.json"  # in fakit/suites/peer/


def make(
    dtype="fp16",
    layout="BNSD",
    B=1,
    N=2,
    Nkv=None,
    S=128,
    D=64,
    actual=None,
    mask="none",
    mask_shape="B11S",
    mask_dtype="bool",
    pse="none",
    pad=None,
    kv_list=False,
    paged=None,
    cache="bsh",
    kv_int8=False,
    antiquant="tensor",
    antiquant_offset=True,
    quant=None,
    quant_offset=True,
    quant_dtype="fp32",
    inner_precise=1,
    scale=None,
    value_range=(-1.0, 1.0),
    seed=0,
) -> Case:
    Nkv = N if Nkv is None else Nkv
    options = {
        "actual": None if actual is None else list(actual),
        "mask": mask,
        "pse": pse,
        "pad": pad,
        "kv_list": kv_list,
        "paged": paged,
        "kv_int8": kv_int8,
        "quant": quant,
    }
    if mask != "none":
        options.update(mask_shape=mask_shape, mask_dtype=mask_dtype)
    if paged:
        options["cache"] = cache
    if kv_int8:
        options.update(antiquant=antiquant, antiquant_offset=antiquant_offset)
    if quant:
        options.update(quant_offset=quant_offset, quant_dtype=quant_dtype)
    return Case(
        OP,
        dtype,
        layout,
        {"B": B, "N": N, "Nkv": Nkv, "S": S, "D": D},
        attrs={
            "num_heads": N,
            "scale_value": float(D**-0.5 if scale is None else scale),
            "input_layout": layout,
            "num_key_value_heads": 0 if Nkv == N else Nkv,
            "block_size": paged or 0,
            "inner_precise": inner_precise,
        },
        options=options,
        value_range=tuple(value_range),
        seed=seed,
    )


def check(c: Case) -> None:
    s, o = c.shapes, c.options
    B, N, Nkv, S, D = (s[k] for k in ("B", "N", "Nkv", "S", "D"))
    act = o["actual"]
    if c.dtype not in ("fp16", "bf16"):
        raise Forbidden(f"query dtype {c.dtype}: FLOAT16 or BFLOAT16 only")
    if c.layout not in LAYOUTS:
        raise Forbidden(f"inputLayout {c.layout}: supported are {', '.join(LAYOUTS)}")
    if not (1 <= B <= 65536 and 1 <= N <= 256 and 1 <= D <= 512):
        raise Forbidden(f"B={B}, N={N}, D={D}: limits are B <= 65536, N <= 256, D <= 512")
    if N % Nkv or N // Nkv > 64:
        raise Forbidden(f"numHeads={N} must be a multiple of numKeyValueHeads={Nkv} with ratio <= 64")
    if act is not None and (len(act) != B or any(not 0 <= a <= S for a in act)):
        raise Forbidden(f"actualSeqLengths {act}: needs B={B} values in [0, S={S}]")
    if o["quant"] and o["quant_dtype"] == "bf16" and c.dtype != "bf16":
        raise Forbidden("quantScale2 in BFLOAT16 needs a BFLOAT16 query")
    if o["paged"]:
        bs = o["paged"]
        if act is None:
            raise Forbidden("page attention needs actualSeqLengths")
        if not 0 < bs <= 512 or bs % (32 if o["kv_int8"] else 16):
            raise Forbidden(f"blockSize={bs}: non-zero, <= 512, 16-aligned (32 for int8 KV)")
        if o["cache"] == "bnsd" and c.layout != "BNSD":
            raise Forbidden("paged cache (blocknum, KV_N, blocksize, D) needs a BNSD query")
        if o["cache"] == "bsh" and Nkv * D > 65535:
            raise Forbidden("paged cache (blocknum, blocksize, H) needs numKvHeads*D <= 64k")
        if o["pad"] is not None or o["kv_list"]:
            raise Forbidden("KV left padding / tensor-list KV are contiguous-cache features, not paged")
    if o["pad"] is not None:
        if act is None:
            raise Forbidden("kvPaddingSize needs actualSeqLengths")
        if any(a + o["pad"] > S for a in act):
            raise Forbidden(f"kvPaddingSize={o['pad']} + actual length exceeds S={S}")
    if o["mask"] != "none" and o["mask_dtype"] not in ("bool", "int8", "uint8"):
        raise Forbidden(f"attenMask dtype {o['mask_dtype']}: BOOL, INT8 or UINT8 only")


def _kv_shape(layout, B, N, S, D):
    return {"BSH": (B, S, N * D), "BSND": (B, S, N, D)}.get(layout, (B, N, S, D))


def _kv_values(c: Case, rng, shape):
    if c.options["kv_int8"]:
        return rng.integers(-127, 128, size=shape, dtype=np.int8)
    return uniform(rng, shape, c.dtype, *c.value_range)


def _paged(c: Case, rng, k_bnsd, v_bnsd):
    """Scatter contiguous [B, Nkv, S, D] K/V into a shuffled block pool + block table."""
    s, o = c.shapes, c.options
    B, Nkv, D, bs = s["B"], s["Nkv"], s["D"], o["paged"]
    nblk = [-(-a // bs) for a in o["actual"]]
    max_blk = max(max(nblk), 1)
    pool = sum(nblk) + 2  # a couple of unused blocks in the pool
    order = rng.permutation(pool)
    table = np.full((B, max_blk), -1, np.int32)
    kc = np.zeros((pool, Nkv, bs, D), k_bnsd.dtype)
    vc = np.zeros_like(kc)
    nxt = 0
    for b in range(B):
        for i in range(nblk[b]):
            blk = order[nxt]
            nxt += 1
            table[b, i] = blk
            lo, hi = i * bs, min((i + 1) * bs, s["S"])
            kc[blk, :, : hi - lo] = k_bnsd[b, :, lo:hi]
            vc[blk, :, : hi - lo] = v_bnsd[b, :, lo:hi]
    if o["cache"] == "bsh":
        kc = kc.transpose(0, 2, 1, 3).reshape(pool, bs, Nkv * D)
        vc = vc.transpose(0, 2, 1, 3).reshape(pool, bs, Nkv * D)
    return kc, vc, table, max_blk * bs


def make_inputs(c: Case, rng) -> dict:
    s, o = c.shapes, c.options
    B, N, Nkv, S, D = (s[k] for k in ("B", "N", "Nkv", "S", "D"))
    kw = {"query": uniform(rng, _kv_shape(c.layout, B, N, 1, D), c.dtype, *c.value_range)}
    span = S  # positions that masks / pse index
    if o["paged"]:
        kc, vc, table, span = _paged(c, rng, _kv_values(c, rng, (B, Nkv, S, D)), _kv_values(c, rng, (B, Nkv, S, D)))
        span = max(span, S)
        kw.update(key=[kc], value=[vc], block_table=table)
    elif o["kv_list"]:
        # one batch-1 tensor per batch; each holds exactly its own length (at least 1)
        lens = [max(a, 1) for a in (o["actual"] or [S] * B)]
        kw["key"] = [_kv_values(c, rng, _kv_shape(c.layout, 1, Nkv, n, D)) for n in lens]
        kw["value"] = [_kv_values(c, rng, _kv_shape(c.layout, 1, Nkv, n, D)) for n in lens]
    else:
        kw["key"] = [_kv_values(c, rng, _kv_shape(c.layout, B, Nkv, S, D))]
        kw["value"] = [_kv_values(c, rng, _kv_shape(c.layout, B, Nkv, S, D))]
    if o["mask"] != "none":
        lead = {"BS": (B,), "B1S": (B, 1), "B11S": (B, 1, 1)}[o["mask_shape"]]
        m = rng.random((B, span)) < 0.25
        m[:, 0] = False
        kw["atten_mask"] = mask_as(m.reshape(lead + (span,)), o["mask_dtype"])
    if o["pse"] != "none":
        kw["pse_shift"] = uniform(rng, ((B if o["pse"] == "BN1S" else 1), N, 1, span), c.dtype, -1, 1)
    if o["kv_int8"]:
        per_channel = {"BNSD": (2, Nkv, 1, D), "BSND": (2, Nkv, D), "BSH": (2, Nkv * D)}[c.layout]
        shape = (2,) if o["antiquant"] == "tensor" else per_channel
        kw["antiquant_scale"] = rng.uniform(0.004, 0.012, size=shape).astype(DTYPES[c.dtype])
        if o["antiquant_offset"]:
            kw["antiquant_offset"] = rng.uniform(-3, 3, size=shape).astype(DTYPES[c.dtype])
    if o["quant"]:
        shape = (
            (1,)
            if o["quant"] == "tensor"
            else {"BSH": (1, 1, N * D), "BSND": (1, 1, N, D), "BNSD": (1, N, 1, D)}[c.layout]
        )
        kw["quant_scale2"] = rng.uniform(40, 100, size=shape).astype(DTYPES[o["quant_dtype"]])
        if o["quant_offset"]:
            kw["quant_offset2"] = np.round(rng.uniform(-8, 8, size=shape)).astype(DTYPES[o["quant_dtype"]])
    if o["actual"] is not None:
        kw["actual_seq_lengths"] = list(o["actual"])
    if o["pad"] is not None:
        kw["kv_padding_size"] = [o["pad"]]
    kw.update(c.attrs)
    return kw


def output_dtypes(c: Case) -> dict:
    return {"attention_out": "int8" if c.options["quant"] else c.dtype}


def features(c: Case) -> str:
    s, o = c.shapes, c.options
    f = [c.layout, c.dtype, f"B{s['B']}", f"N{s['N']}/{s['Nkv']}", f"S{s['S']}", f"D{s['D']}"]
    if o["actual"] is not None:
        f.append(f"act={o['actual']}" if len(o["actual"]) <= 4 else "act=varied")
    if o["mask"] != "none":
        f.append(f"mask[{o['mask_shape']},{o['mask_dtype']}]")
    if o["pse"] != "none":
        f.append(f"pse[{o['pse']}]")
    if o["pad"] is not None:
        f.append(f"leftpad={o['pad']}")
    if o["kv_list"]:
        f.append("kv-list")
    if o["paged"]:
        f.append(f"paged[bs={o['paged']},{o['cache']}]")
    if o["kv_int8"]:
        f.append(f"int8kv[{o['antiquant']}{'+off' if o['antiquant_offset'] else ''}]")
    if o["quant"]:
        f.append(f"int8out[{o['quant']}{'+off' if o['quant_offset'] else ''},{o['quant_dtype']}]")
    return " ".join(f)


# ------------------------------------------------------------------------------- suites


def smoke():
    return [
        make("fp16", "BNSD", B=2, N=4, Nkv=1, S=256, D=128, actual=[256, 100]),
        make("bf16", "BSH", B=1, N=8, Nkv=2, S=128, D=64, mask="random", mask_shape="BS", pse="BN1S"),
        make("fp16", "BNSD", B=2, N=4, Nkv=2, S=200, D=64, actual=[200, 37], paged=64, cache="bnsd"),
        make("fp16", "BSND", B=2, N=2, S=128, D=64, actual=[90, 128], paged=32, cache="bsh"),
        make("fp16", "BNSD", B=1, N=4, Nkv=4, S=128, D=64, kv_int8=True, antiquant="channel"),
        make("bf16", "BSH", B=2, N=2, S=96, D=64, actual=[50, 20], pad=16, quant="tensor"),
    ]


def full():
    # Core product: dtype x layout x head grouping x (mask, pse).
    for dtype, layout, (N, Nkv), (mask, pse) in itertools.product(
        ("fp16", "bf16"),
        LAYOUTS,
        ((4, 4), (8, 1), (16, 2)),
        (("none", "none"), ("random", "none"), ("none", "BN1S"), ("random", "1N1S")),
    ):
        yield make(dtype, layout, B=2, N=N, Nkv=Nkv, S=160, D=64, mask=mask, pse=pse, actual=[160, 77])
    # Mask shapes and dtypes.
    for shape, mdt in itertools.product(("BS", "B1S", "B11S"), ("bool", "int8", "uint8")):
        yield make("fp16", "BSND", B=2, N=2, S=64, D=64, mask="random", mask_shape=shape, mask_dtype=mdt)
    # Paged attention: block sizes x both cache layouts x mask/pse on top.
    for bs, cache, layout, extra in itertools.product(
        (16, 128, 512), ("bsh", "bnsd"), LAYOUTS, ({}, {"mask": "random", "pse": "BN1S"})
    ):
        yield make("fp16", layout, B=3, N=4, Nkv=2, S=600, D=64, actual=[600, 1, 257], paged=bs, cache=cache, **extra)
    # int8 KV antiquant: per-tensor / per-channel, with and without offset, every layout, paged.
    for dtype, layout, mode, off in itertools.product(("fp16", "bf16"), LAYOUTS, ("tensor", "channel"), (True, False)):
        yield make(dtype, layout, B=2, N=4, Nkv=2, S=96, D=64, kv_int8=True, antiquant=mode, antiquant_offset=off)
    yield make(
        "fp16",
        "BNSD",
        B=2,
        N=4,
        Nkv=1,
        S=256,
        D=128,
        actual=[256, 64],
        kv_int8=True,
        antiquant="channel",
        paged=32,
        cache="bnsd",
    )
    # int8 output: per-tensor / per-channel, offsets, bf16 scales.
    for dtype, layout, q, off in itertools.product(("fp16", "bf16"), LAYOUTS, ("tensor", "channel"), (True, False)):
        yield make(dtype, layout, B=2, N=4, Nkv=2, S=128, D=64, quant=q, quant_offset=off)
    yield make("bf16", "BNSD", B=2, N=4, S=64, D=64, quant="channel", quant_dtype="bf16")
    # Left padding, tensor-list KV, zero lengths, long caches, GQA 64, D sweep.
    for pad in (0, 5, 64):
        yield make("fp16", "BSH", B=2, N=2, S=128, D=64, actual=[64, 0], pad=pad, mask="random", mask_shape="BS")
    yield make("fp16", "BNSD", B=3, N=4, S=96, D=64, actual=[96, 10, 50], kv_list=True)
    yield make("bf16", "BSND", B=2, N=2, S=8192, D=128, actual=[8192, 3000])
    yield make("fp16", "BNSD", B=1, N=64, Nkv=1, S=256, D=128)
    for D in (16, 40, 200, 512):
        yield make("fp16", "BNSD", B=2, N=2, S=64, D=D, inner_precise=0)
    # Forbidden by spec 002 (kept so the rejections are listed).
    yield make("fp16", "BNSD", N=128, Nkv=1)
    yield make("fp16", "TND")
    yield make("fp16", "BNSD", B=1, S=64, paged=16)
    yield make("fp16", "BSH", B=1, S=64, actual=[64], paged=64, cache="bnsd")
    yield make("fp16", "BNSD", B=1, S=64, actual=[64], paged=24)
    yield make("fp16", "BNSD", B=1, S=64, actual=[64], paged=16, kv_int8=True)
    yield make("fp16", "BNSD", B=1, S=64, actual=[60], pad=10)
    yield make("fp16", "BNSD", quant="tensor", quant_dtype="bf16")


def peer():
    """The official IFA V4 ST cases (fp16, BNSD/BSH, contiguous KV) from suites/peer/ifa_v4.json;
    FAKIT_MAX_SEQ caps the KV length."""
    cap = peer_cap()
    for r in peer_entries(PEER_FILE):
        if cap and r["Skv"] > cap:
            continue
        act = r["actual_seq_lengths"]
        case = make(
            "fp16",
            r["layout"],
            B=r["B"],
            N=r["N"],
            Nkv=r["Nkv"],
            S=r["Skv"],
            D=r["D"],
            actual=act * r["B"] if len(act) == 1 else act,
            scale=r["scale"],
            inner_precise=r["inner_precise"],
            value_range=tuple(r["q_range"]),
        )
        yield dataclasses.replace(case, label=f"ST#{r['official_id']}")


SUITES = {"smoke": smoke, "full": full, "peer": peer}
