"""Cases for aclnnFlashAttentionVarLenScore (spec 001): TND training forward with sparse
modes 0-8 (not 5), prefix, pse (full and alibi-compressed), dropout, GQA, empty batches."""

from __future__ import annotations

import itertools

from . import tnd
from .core import Case, Forbidden

OP = "flash_attention_var_len_score"
MAX_INT = tnd.MAX_INT


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
    dropout=False,
    keep_prob=1.0,
    inner_precise=0,
    value_range=(-1.0, 1.0),
    seed=0,
) -> Case:
    kvlens = qlens if kvlens is None else kvlens
    if sparse_mode != 0 and mask == "none":
        mask = "mode"  # the compressed mask the sparse mode takes
    return Case(
        OP,
        dtype,
        "TND",
        {"qlens": list(qlens), "kvlens": list(kvlens), "N": N, "Nkv": N if Nkv is None else Nkv, "D": D},
        attrs={
            "head_num": N,
            "scale_value": D**-0.5,
            "keep_prob": keep_prob,
            "pre_tokens": pre,
            "next_tokens": nxt,
            "input_layout": "TND",
            "inner_precise": inner_precise,
            "sparse_mode": sparse_mode,
        },
        options={
            "mask": mask,
            "mask_dtype": mask_dtype,
            "prefix": None if prefix is None else list(prefix),
            "pse": pse,
            "dropout": dropout,
        },
        value_range=tuple(value_range),
        seed=seed,
    )


def check(c: Case) -> None:
    if c.dtype not in ("fp16", "bf16", "fp32"):
        raise Forbidden(f"dtype {c.dtype}: FLOAT16, BFLOAT16 or FLOAT32 only")
    if c.options["pse"].startswith("slopes"):
        raise Forbidden("generated alibi slopes are a V5-grad pse type; the forward takes a pse tensor")
    tnd.check_common(c, max_d=512, max_b=2048)


def make_inputs(c: Case, rng) -> dict:
    s = c.shapes
    vr = c.value_range
    kw = {
        "query": tnd.tnd(rng, s["qlens"], s["N"], s["D"], c.dtype, vr),
        "key": tnd.tnd(rng, s["kvlens"], s["Nkv"], s["D"], c.dtype, vr),
        "value": tnd.tnd(rng, s["kvlens"], s["Nkv"], s["D"], c.dtype, vr),
        "real_shift": tnd.pse_for(c, rng, c.dtype),
        "drop_mask": tnd.drop_mask_for(c, rng),
        "padding_mask": None,
        "atten_mask": tnd.mask_for(c, rng),
        "prefix": c.options["prefix"],
    }
    kw.update(tnd.seq_kwargs(c))
    kw.update(c.attrs)
    return kw


def output_dtypes(c: Case) -> dict:
    return {"softmax_max": "fp32", "softmax_sum": "fp32", "attention_out": c.dtype}


def features(c: Case) -> str:
    return " ".join(tnd.describe(c))


# ------------------------------------------------------------------------------- suites


def smoke():
    return [
        make("fp16", qlens=[64, 100], kvlens=[64, 128], N=2, D=64),
        make("bf16", qlens=[128], N=4, Nkv=2, D=128, sparse_mode=2),
        make("fp16", qlens=[96, 0, 64], kvlens=[160, 0, 64], N=2, D=64, sparse_mode=3),
        make("fp32", qlens=[64, 48], kvlens=[64, 80], N=2, Nkv=1, D=64, mask="random", mask_dtype="uint8", pse="full1"),
        make("fp16", qlens=[128], N=2, D=64, sparse_mode=4, pre=32, nxt=8, dropout=True, keep_prob=0.9),
        make("bf16", qlens=[64, 64], kvlens=[128, 96], N=2, D=64, sparse_mode=6, prefix=[80, 40]),
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
    # Core product: dtype x sparse mode x head grouping, on two batches of unequal lengths.
    for dtype, (mode, extra), (N, Nkv) in itertools.product(
        ("fp16", "bf16", "fp32"), modes.items(), ((2, 2), (4, 1), (8, 2))
    ):
        extra = {"qlens": [64, 112], **extra}
        yield make(dtype, kvlens=[144, 112], N=N, Nkv=Nkv, D=64, sparse_mode=mode, **extra)
    # Mode 0 user masks (random / causal / band) in both mask dtypes.
    for kind, mdt in itertools.product(("random", "causal", "band"), ("bool", "uint8")):
        yield make("fp16", qlens=[80, 48], kvlens=[80, 96], mask=kind, mask_dtype=mdt, pre=24, nxt=4)
    # pse shapes, dropout and their combinations with the causal modes.
    for pse, mode, drop in itertools.product(("none", "full", "full1"), (0, 2, 3), (False, True)):
        yield make(
            "bf16",
            qlens=[64, 32],
            kvlens=[64, 32],
            sparse_mode=mode,
            pse=pse,
            dropout=drop,
            keep_prob=0.8 if drop else 1.0,
        )
    for pse in ("alibi", "alibi1"):
        yield make("fp16", qlens=[1040], N=2, D=64, sparse_mode=3, pse=pse)
    # Invalid rows: Sq > Skv right-down causal (detected automatically) and negative bands.
    yield make("fp16", qlens=[128], kvlens=[64], sparse_mode=3)
    yield make("fp16", qlens=[96], sparse_mode=4, pre=64, nxt=-8, inner_precise=2)
    # Shapes: D sweep, single tokens, empty batches, many batches.
    for D in (16, 40, 128, 192, 256, 512):
        yield make("bf16", qlens=[33, 65], kvlens=[47, 65], D=D, sparse_mode=3)
    yield make("fp16", qlens=[1, 1, 1], kvlens=[1, 7, 300])
    yield make("fp16", qlens=[0, 50, 0], kvlens=[0, 70, 0], sparse_mode=2)
    yield make("fp16", qlens=[16] * 24, kvlens=[24] * 24, sparse_mode=3)
    # Forbidden by spec 001 (kept so the rejections are listed).
    yield make("fp16", sparse_mode=5)
    yield make("fp16", qlens=[8, 8], kvlens=[8, 0])
    yield make("fp16", N=6, Nkv=4)
    yield make("fp16", sparse_mode=7, pre=200, nxt=-16, pse="full")
    yield make("fp16", qlens=[64, 64], kvlens=[32, 64], sparse_mode=6, prefix=[40, 10])
    yield make("fp16", sparse_mode=4, pre=-20, nxt=10)
    yield make("int8")
    yield make("fp16", keep_prob=0.0, dropout=True)


SUITES = {"smoke": smoke, "full": full}
