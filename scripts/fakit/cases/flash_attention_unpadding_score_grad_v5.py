"""Cases for aclnnFlashAttentionUnpaddingScoreGradV5 (spec 003): TND backward with rope
parts, attention sink, pse types 0-3 (with q/kv start indices), dropout, sparse modes
0-8 (not 5), prefix, both softmax-statistics layouts. The forward inputs (softmax max/sum,
attention_in) come from fakit.golden.flash_attention_tnd_forward on the same inputs."""

from __future__ import annotations

import itertools

import numpy as np

from . import tnd
from .core import Case, Forbidden, call_filtered, uniform

OP = "flash_attention_unpadding_score_grad_v5"
MAX_INT = tnd.MAX_INT
ROPE_D = 64


def make(
    dtype="fp16",
    qlens=(64,),
    kvlens=None,
    N=2,
    Nkv=None,
    D=64,
    sparse_mode=0,
    mask="none",
    mask_dtype="bool",
    pre=MAX_INT,
    nxt=MAX_INT,
    prefix=None,
    pse="none",
    pse_type=1,
    start=None,
    dropout=False,
    keep_prob=1.0,
    rope=False,
    sink=False,
    stats="same_as_input",
    value_range=(-1.0, 1.0),
    seed=0,
) -> Case:
    kvlens = qlens if kvlens is None else kvlens
    if sparse_mode != 0 and mask == "none":
        mask = "mode"
    return Case(
        OP,
        dtype,
        "TND",
        {
            "qlens": list(qlens),
            "kvlens": list(kvlens),
            "N": N,
            "Nkv": N if Nkv is None else Nkv,
            "D": D,
            "Dr": ROPE_D if rope else 0,
        },
        attrs={
            "head_num": N,
            "scale_value": (D + (ROPE_D if rope else 0)) ** -0.5,
            "keep_prob": keep_prob,
            "pre_tokens": pre,
            "next_tokens": nxt,
            "input_layout": "TND",
            "inner_precise": 0,
            "sparse_mode": sparse_mode,
            "pse_type": pse_type,
            "softmax_in_layout": stats,
        },
        options={
            "mask": mask,
            "mask_dtype": mask_dtype,
            "prefix": None if prefix is None else list(prefix),
            "pse": pse,
            "dropout": dropout,
            "rope": rope,
            "sink": sink,
            "start": None if start is None else list(start),
        },
        value_range=tuple(value_range),
        seed=seed,
    )


def check(c: Case) -> None:
    a, o = c.attrs, c.options
    if c.dtype not in ("fp16", "bf16", "fp32"):
        raise Forbidden(f"dtype {c.dtype}: FLOAT16, BFLOAT16 or FLOAT32 only")
    tnd.check_common(c, max_d=768, max_b=2 << 20)
    if o["rope"]:
        if c.dtype != "bf16":
            raise Forbidden("queryRope/keyRope are BFLOAT16 only (and match the query dtype)")
        if o["dropout"]:
            raise Forbidden("dropMask is not compatible with rope")
        if a["sparse_mode"] == 6:
            raise Forbidden("sparse_mode=6 is not supported with rope")
    pt, pse = a["pse_type"], o["pse"]
    if pt not in (0, 1, 2, 3):
        raise Forbidden(f"pse_type={pt}: must be 0-3")
    if pse == "none" and pt != 1:
        raise Forbidden("without pse the pse_type must be 1")
    if pse.startswith("slopes") != (pt in (2, 3)) and pse != "none":
        raise Forbidden(f"pse_type={pt} takes {'slopes [B,N]/[N] (fp32)' if pt in (2, 3) else 'a pse tensor'}")
    if o["start"] is not None and pt not in (2, 3):
        raise Forbidden("q/kv start indices only shift the generated alibi of pse types 2/3")
    if a["softmax_in_layout"] not in ("", "same_as_input"):
        raise Forbidden(f"softmax_in_layout={a['softmax_in_layout']!r}: \"same_as_input\" or \"\"")


def _forward_inputs(c: Case, rng) -> dict:
    s, o = c.shapes, c.options
    vr = c.value_range
    kw = {
        "query": tnd.tnd(rng, s["qlens"], s["N"], s["D"], c.dtype, vr),
        "key": tnd.tnd(rng, s["kvlens"], s["Nkv"], s["D"], c.dtype, vr),
        "value": tnd.tnd(rng, s["kvlens"], s["Nkv"], s["D"], c.dtype, vr),
        "query_rope": tnd.tnd(rng, s["qlens"], s["N"], s["Dr"], c.dtype, vr) if o["rope"] else None,
        "key_rope": tnd.tnd(rng, s["kvlens"], s["Nkv"], s["Dr"], c.dtype, vr) if o["rope"] else None,
        "pse_shift": tnd.pse_for(c, rng, c.dtype),
        "drop_mask": tnd.drop_mask_for(c, rng),
        "padding_mask": None,
        "atten_mask": tnd.mask_for(c, rng),
        "sink": rng.uniform(-1, 1, size=s["N"]).astype(np.float32) if o["sink"] else None,
        "prefix": o["prefix"],
        "q_start_idx": None if o["start"] is None else [o["start"][0]],
        "kv_start_idx": None if o["start"] is None else [o["start"][1]],
    }
    kw.update(tnd.seq_kwargs(c))
    kw.update(c.attrs)
    return kw


def make_inputs(c: Case, rng) -> dict:
    from fakit import golden

    kw = _forward_inputs(c, rng)
    kw["dy"] = uniform(rng, kw["query"].shape, c.dtype, *c.value_range)
    fwd = call_filtered(golden.flash_attention_tnd_forward, **kw)
    kw["softmax_max"] = np.asarray(fwd["softmax_max"], np.float32)
    kw["softmax_sum"] = np.asarray(fwd["softmax_sum"], np.float32)
    kw["softmax_in"] = None
    kw["attention_in"] = np.asarray(fwd["attention_out"]).astype(kw["query"].dtype)
    return kw


def output_dtypes(c: Case) -> dict:
    out = {"dq": c.dtype, "dk": c.dtype, "dv": c.dtype}
    if c.options["rope"]:
        out.update(dq_rope=c.dtype, dk_rope=c.dtype)
    if c.options["sink"]:
        out["dsink"] = "fp32"
    return out


def features(c: Case) -> str:
    f = tnd.describe(c)
    o, a = c.options, c.attrs
    if o["pse"] != "none":
        f[-1 if not o["dropout"] else -2] += f"(type{a['pse_type']})"
    if o["start"] is not None:
        f.append(f"start={o['start']}")
    if o["rope"]:
        f.append(f"rope{c.shapes['Dr']}")
    if o["sink"]:
        f.append("sink")
    f.append("stats=" + ("TND" if a["softmax_in_layout"] else "NTD"))
    return " ".join(f)


# ------------------------------------------------------------------------------- suites


def smoke():
    return [
        make("fp16", qlens=[64, 100], kvlens=[64, 128], N=2, D=64),
        make("bf16", qlens=[128], N=4, Nkv=2, D=128, sparse_mode=3, rope=True, stats=""),
        make("fp16", qlens=[96, 64], kvlens=[96, 80], N=2, D=64, sparse_mode=2, sink=True),
        make("bf16", qlens=[64, 64], N=2, D=64, sparse_mode=3, pse="slopes", pse_type=2, start=[0, 0]),
        make("fp32", qlens=[64], N=2, Nkv=1, D=64, mask="random", pse="full1", pse_type=0, dropout=True, keep_prob=0.9),
        make("fp16", qlens=[128], N=2, D=64, sparse_mode=4, pre=32, nxt=0),
    ]


def full():
    modes = {
        0: {},
        1: {"mask": "random"},
        2: {},
        3: {},
        4: {"pre": 40, "nxt": 10},
        6: {"prefix": [100, 100]},
        7: {"pre": 200, "nxt": -16, "qlens": [64, 48]},
        8: {"pre": 200, "nxt": 0},
    }
    for dtype, (mode, extra), (N, Nkv) in itertools.product(("fp16", "bf16", "fp32"), modes.items(), ((2, 2), (4, 1))):
        extra = {"qlens": [64, 112], **extra}
        yield make(dtype, kvlens=[144, 112], N=N, Nkv=Nkv, D=64, sparse_mode=mode, **extra)
    # pse types x shapes (types 0/1: tensors; 2/3: slopes, with start indices).
    for pt, pse in itertools.product((0, 1), ("full", "full1")):
        yield make("fp16", qlens=[64, 48], kvlens=[64, 48], sparse_mode=3, pse=pse, pse_type=pt)
    for pt, pse, start in itertools.product((2, 3), ("slopes", "slopes_b"), (None, [0, 0], [16, 4])):
        yield make("bf16", qlens=[64, 48], kvlens=[64, 48], sparse_mode=3, pse=pse, pse_type=pt, start=start)
    for pse in ("alibi", "alibi1"):
        yield make("fp16", qlens=[1040], N=2, D=64, sparse_mode=3, pse=pse, pse_type=1)
    # rope x sink x stats layout x causal modes; dropout x sink.
    for rope, sink, stats, mode in itertools.product((False, True), (False, True), ("", "same_as_input"), (0, 3)):
        yield make(
            "bf16",
            qlens=[80, 48],
            kvlens=[80, 96],
            N=4,
            Nkv=2,
            D=128,
            sparse_mode=mode,
            rope=rope,
            sink=sink,
            stats=stats,
        )
    for dtype, sink in itertools.product(("fp16", "bf16", "fp32"), (False, True)):
        yield make(dtype, qlens=[64, 32], kvlens=[64, 48], sparse_mode=2, dropout=True, keep_prob=0.8, sink=sink)
    # Invalid rows, empty batches, D sweep up to 768.
    yield make("fp16", qlens=[128], kvlens=[64], sparse_mode=3)
    yield make("fp16", qlens=[0, 50, 0], kvlens=[0, 70, 0], sparse_mode=2)
    for D in (16, 40, 192, 512, 768):
        yield make("bf16", qlens=[33, 65], kvlens=[47, 65], D=D, sparse_mode=3)
    # Every KV length 1: dQ and dK are analytically 0 (judged by the small-value rule).
    for dtype in ("fp16", "bf16"):
        yield make(dtype, qlens=[31, 31, 5], kvlens=[1, 1, 1], N=4, Nkv=2, D=16)
    # Forbidden by spec 003 (kept so the rejections are listed).
    yield make("fp16", rope=True)
    yield make("bf16", rope=True, dropout=True, keep_prob=0.9)
    yield make("bf16", qlens=[64, 64], kvlens=[128, 96], rope=True, sparse_mode=6, prefix=[80, 40])
    yield make("fp16", pse="full", pse_type=2)
    yield make("fp16", pse="slopes", pse_type=0)
    yield make("fp16", pse_type=0)
    yield make("fp16", D=800)
    yield make("fp16", sparse_mode=5)


SUITES = {"smoke": smoke, "full": full}
