"""Cases for aclnnPromptFlashAttention (spec 000): prefill, BSH/BSND/BNSD/BNSD_BSND, GQA,
masks of every documented shape and dtype, pre/next-token bands, actual sequence lengths."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from .core import Case, Forbidden, band_mask, mask_as, peer_cap, peer_entries, uniform

OP = "prompt_flash_attention"
LAYOUTS = ("BSH", "BSND", "BNSD", "BNSD_BSND")
MASK_SHAPES = ("SS", "BSS", "1SS", "B1SS", "11SS")  # spec 000, attenMask shape list
MASK_DTYPES = ("bool", "int8", "uint8")
MAX_INT = 2147483647
PEER_FILE = "pfa_v3.json"  # in fakit/suites/peer/


def make(
    dtype="fp16",
    layout="BNSD",
    B=1,
    N=2,
    Nkv=None,
    Sq=64,
    Skv=None,
    D=64,
    mask="none",
    mask_shape="B1SS",
    mask_dtype="bool",
    pre=MAX_INT,
    nxt=0,
    actual=None,
    pse=False,
    scale=None,
    value_range=(-1.0, 1.0),
    seed=0,
) -> Case:
    Nkv = N if Nkv is None else Nkv
    Skv = Sq if Skv is None else Skv
    if mask == "causal":
        pre, nxt = MAX_INT, 0
    options = {"mask": mask, "actual_seq_lengths": actual, "pse_shift": pse}
    if mask != "none":
        options.update(mask_shape=mask_shape, mask_dtype=mask_dtype)
    return Case(
        OP,
        dtype,
        layout,
        {"B": B, "N": N, "Nkv": Nkv, "Sq": Sq, "Skv": Skv, "D": D},
        attrs={
            "num_heads": N,
            "num_key_value_heads": 0 if Nkv == N else Nkv,
            "scale_value": float(D**-0.5 if scale is None else scale),
            "pre_tokens": pre,
            "next_tokens": nxt,
            "input_layout": layout,
        },
        options=options,
        value_range=tuple(value_range),
        seed=seed,
    )


def check(c: Case) -> None:
    s, o = c.shapes, c.options
    B, N, Nkv, Sq, Skv, D = (s[k] for k in ("B", "N", "Nkv", "Sq", "Skv", "D"))
    if c.dtype not in ("fp16", "bf16"):
        raise Forbidden(f"dtype {c.dtype}: query/key/value support FLOAT16 and BFLOAT16 only")
    if c.layout not in LAYOUTS:
        raise Forbidden(f"inputLayout {c.layout}: supported are {', '.join(LAYOUTS)}")
    if not 1 <= N <= 256:
        raise Forbidden(f"N={N}: the N axis must be in [1, 256]")
    if not 1 <= D <= 512:
        raise Forbidden(f"D={D}: the D axis must be in [1, 512]")
    if B > 65536 or (D % 16 and B > 128):
        raise Forbidden(f"B={B}: at most 65536, and at most 128 when D={D} is not 16-aligned")
    if c.layout in ("BSH", "BSND") and N * D >= 65535:
        raise Forbidden(f"N*D={N * D}: BSH/BSND require N*D < 65535")
    if N % Nkv:
        raise Forbidden(f"numHeads={N} is not divisible by numKeyValueHeads={Nkv}")
    if N // Nkv > 64:
        raise Forbidden(f"numHeads/numKeyValueHeads={N // Nkv} exceeds 64")
    if o.get("pse_shift"):
        raise Forbidden("pseShift is a reserved parameter (forced to nullptr)")
    act = o.get("actual_seq_lengths")
    if act is not None:
        if len(act) != B:
            raise Forbidden(f"actualSeqLengths has {len(act)} values for B={B}")
        if any(not 0 <= a <= Sq for a in act):
            raise Forbidden(f"actualSeqLengths {act}: each value must be in [0, Sq={Sq}]")
    if o["mask"] != "none":
        if o["mask_shape"] not in MASK_SHAPES or o["mask_dtype"] not in MASK_DTYPES:
            raise Forbidden(f"attenMask {o['mask_shape']}/{o['mask_dtype']}: not a documented shape/dtype")
    pre, nxt = c.attrs["pre_tokens"], c.attrs["next_tokens"]
    if o["mask"] == "band":
        # sparse_mode doc: a negative bound needs the other one to cover it, and |bound| < S.
        if nxt < 0 and (pre < -nxt or -nxt >= Skv):
            raise Forbidden(f"nextTokens={nxt} < 0 needs preTokens >= {-nxt} and |nextTokens| < Skv")
        if pre < 0 and (nxt < -pre or -pre >= Sq):
            raise Forbidden(f"preTokens={pre} < 0 needs nextTokens >= {-pre} and |preTokens| < Sq")


def _qkv_shape(layout, B, N, S, D):
    return {"BSH": (B, S, N * D), "BSND": (B, S, N, D)}.get(layout, (B, N, S, D))


def _mask(c: Case, rng) -> np.ndarray:
    s, o, a = c.shapes, c.options, c.attrs
    B, Sq, Skv = s["B"], s["Sq"], s["Skv"]
    kind, shape = o["mask"], o["mask_shape"]
    lead = {"SS": (), "BSS": (B,), "1SS": (1,), "B1SS": (B, 1), "11SS": (1, 1)}[shape]
    if kind == "random":
        m = rng.random(lead + (Sq, Skv)) < 0.3
        m[..., 0] = False  # keep every row valid; invalid rows have their own cases
    else:
        m = np.broadcast_to(band_mask(Sq, Skv, a["pre_tokens"], a["next_tokens"]), lead + (Sq, Skv))
    return mask_as(np.ascontiguousarray(m), o["mask_dtype"])


def make_inputs(c: Case, rng) -> dict:
    s, o = c.shapes, c.options
    lo, hi = c.value_range
    kw = {
        "query": uniform(rng, _qkv_shape(c.layout, s["B"], s["N"], s["Sq"], s["D"]), c.dtype, lo, hi),
        "key": uniform(rng, _qkv_shape(c.layout, s["B"], s["Nkv"], s["Skv"], s["D"]), c.dtype, lo, hi),
        "value": uniform(rng, _qkv_shape(c.layout, s["B"], s["Nkv"], s["Skv"], s["D"]), c.dtype, lo, hi),
        "pse_shift": None,
        "atten_mask": None if o["mask"] == "none" else _mask(c, rng),
        "actual_seq_lengths": None if o.get("actual_seq_lengths") is None else list(o["actual_seq_lengths"]),
    }
    kw.update(c.attrs)
    return kw


def output_dtypes(c: Case) -> dict:
    return {"attention_out": c.dtype}


def features(c: Case) -> str:
    s, o, a = c.shapes, c.options, c.attrs
    f = [c.layout, c.dtype, f"B{s['B']}", f"N{s['N']}/{s['Nkv']}", f"S{s['Sq']}x{s['Skv']}", f"D{s['D']}"]
    if o["mask"] != "none":
        f.append(f"mask={o['mask']}[{o['mask_shape']},{o['mask_dtype']}]")
        if o["mask"] == "band":
            f.append(f"pre={a['pre_tokens']},next={a['next_tokens']}")
    if o.get("actual_seq_lengths") is not None:
        f.append(f"act={o['actual_seq_lengths']}")
    if o.get("pse_shift"):
        f.append("pse")
    return " ".join(f)


# ------------------------------------------------------------------------------- suites


def smoke():
    return [
        make("fp16", "BNSD", B=1, N=2, Sq=128, D=64, mask="causal"),
        make("bf16", "BSH", B=2, N=4, Nkv=2, Sq=64, Skv=96, D=64),
        make(
            "fp16", "BSND", B=2, N=4, Nkv=1, Sq=100, Skv=100, D=128, mask="random", mask_shape="BSS", mask_dtype="uint8"
        ),
        make(
            "fp16",
            "BNSD_BSND",
            B=1,
            N=4,
            Nkv=4,
            Sq=96,
            Skv=160,
            D=72,
            mask="band",
            pre=32,
            nxt=16,
            mask_shape="SS",
            mask_dtype="int8",
        ),
        make("bf16", "BNSD", B=2, N=2, Sq=128, D=64, mask="causal", actual=[128, 77]),
        make("fp16", "BNSD", B=1, N=2, Sq=64, Skv=256, D=128, mask="band", pre=64, nxt=-16, mask_shape="11SS"),
    ]


def full():
    # Core product: dtype x layout x head grouping x mask kind.
    for dtype, layout, (N, Nkv), mask in itertools.product(
        ("fp16", "bf16"), LAYOUTS, ((4, 4), (4, 1), (8, 2)), ("none", "causal", "band", "random")
    ):
        yield make(dtype, layout, B=2, N=N, Nkv=Nkv, Sq=128, Skv=192, D=64, mask=mask, pre=48, nxt=8)
    # Shapes: unaligned S and D, Sq > Skv, long S, D up to 512.
    for (Sq, Skv), D in itertools.product(
        ((1, 1), (17, 33), (200, 77), (256, 1024), (1024, 1024)), (16, 40, 128, 256, 512)
    ):
        yield make("fp16", "BNSD", B=1, N=2, Sq=Sq, Skv=Skv, D=D, mask="causal")
    # Every mask shape x mask dtype.
    for shape, mdt in itertools.product(MASK_SHAPES, MASK_DTYPES):
        yield make("bf16", "BSND", B=2, N=2, Sq=64, Skv=80, D=64, mask="random", mask_shape=shape, mask_dtype=mdt)
    # Bands with negative bounds (leading/trailing rows fully excluded).
    for pre, nxt in ((0, 0), (16, -8), (-8, 24), (200, 200), (5, -10)):
        yield make("fp16", "BNSD", B=1, N=2, Sq=64, Skv=64, D=64, mask="band", pre=pre, nxt=nxt)
    # Actual sequence lengths, including 0 and the full length.
    for act in ([64, 1], [0, 64], [33, 50]):
        yield make("fp16", "BSH", B=2, N=2, Sq=64, D=64, mask="causal", actual=act)
    # Empty KV (output all zeros), GQA ratio 64, many heads.
    yield make("fp16", "BNSD", B=1, N=2, Sq=32, Skv=0, D=64)
    yield make("fp16", "BNSD", B=1, N=64, Nkv=1, Sq=32, D=64, mask="causal")
    yield make("bf16", "BSH", B=1, N=256, Nkv=256, Sq=16, D=16)
    # Forbidden by spec 000 (kept so that the rejections are visible in `fakit cases --json`).
    yield make("fp16", "BNSD", N=6, Nkv=4)
    yield make("fp16", "BNSD", N=128, Nkv=1)
    yield make("fp32", "BNSD")
    yield make("fp16", "BNSD", D=520)
    yield make("fp16", "BSH", N=256, D=256)
    yield make("fp16", "BNSD", B=200, D=72)
    yield make("fp16", "BNSD", pse=True)
    yield make("fp16", "BNSD", B=2, actual=[65, 3])


def peer():
    """The official PFA V3 ST cases (fp16, BNSD/BSH) with their shapes and value ranges
    (suites/peer/pfa_v3.json); FAKIT_MAX_SEQ caps the sequence lengths."""
    cap = peer_cap()
    for r in peer_entries(PEER_FILE):
        if cap and max(r["Sq"], r["Skv"]) > cap:
            continue
        case = make(
            "fp16",
            r["layout"],
            B=r["B"],
            N=r["N"],
            Nkv=r["Nkv"],
            Sq=r["Sq"],
            Skv=r["Skv"],
            D=r["D"],
            pre=r["pre_tokens"],
            nxt=r["next_tokens"],
            scale=r["scale"],
            value_range=tuple(r["q_range"]),
        )
        yield dataclasses.replace(case, label=f"ST#{r['official_id']}")


SUITES = {"smoke": smoke, "full": full, "peer": peer}
