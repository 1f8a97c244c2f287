"""The shapes of `device_model.py --sweep`: every class of the speed goals, over shapes the
benchmark table does not list (few and many heads, short and long sequences, D = 64/128/256,
GQA, uneven TND lengths, decode batches and group sizes, both backward kernels).

A class's goal is % of the fp16 cube peak on useful FLOPs (forward, backward) or % of HBM
bandwidth (decode). Where the calibrated model proves a class goal out of reach for a shape,
BOUNDS gives that shape's proven bound (the arithmetic is in docs/performance.md, "Sweep") and
the shape's goal is 95 % of it.
"""

from __future__ import annotations

import flops

from fakit.cases import flash_attention_unpadding_score_grad_v5 as fag
from fakit.cases import flash_attention_var_len_score as fav
from fakit.cases import incre_flash_attention_v4 as ifa
from fakit.cases import prompt_flash_attention as pfa
from fakit.cases import sparse_flash_attention_grad as sfag

# class -> (description, goal in %, unit of the %)
CLASSES = {
    "dense": ("forward D = 128/256, non-causal, S >= 1K", 65.0, "cube"),
    "causal": ("forward causal (lower-triangular), S >= 2K, useful FLOPs", 60.0, "cube"),
    "d64": ("forward D = 64", 45.0, "cube"),
    "varlen": ("TND varlen, uneven lengths: the goal of its mask class", None, "cube"),
    "decode": ("decode (IFA V4), fp16 and int8 K/V, GQA 1-64", 80.0, "HBM"),
    "backward": ("V5 backward D = 128, S >= 2K", 55.0, "cube"),
    "sparse_grad": ("SparseFlashAttentionGrad H 64/128", 40.0, "cube"),
}

# Proven bounds (docs/performance.md, "Bounds"): the shape's goal is 95 % of its bound.
# D = 64 forward: the S/P hand-off through L2 alone, 12 B per score of 4 D = 256 FLOP, at the
# 7 TB/s L2 floor: 256 / 12 x 7e12 = 149.3 TFLOPS = 42.2 % of the cube peak. Every design also
# reads Q, K and V and writes O at least once, reads an explicit mask's plane once, and pays the
# launch, so a shape's bound is its FLOPs over 2 us + (12 B per useful score + those bytes) /
# 7 TB/s (d64_bound).
L2_BYTES_PER_SEC = 7e12  # cost table l2_bytes_per_sec ([S6])
LAUNCH_US = 2.0  # cost table launch_us
CUBE_PEAK_FLOPS = 353.9e12  # 910B2 fp16, as device_model.py


def d64_bound(work: int, d: int, io_bytes: int) -> float:
    """% of the cube peak no D = 64 forward design passes on the model: `work` useful FLOPs
    (4 d per useful score), each score's S/P hand-off through L2 (S fp32 written and read, P
    fp16 written and read: 12 B) plus `io_bytes` (Q, K, V read once, O written once, an explicit
    mask read once) at the L2 floor, plus the launch."""
    seconds = LAUNCH_US * 1e-6 + (12 * work / (4 * d) + io_bytes) / L2_BYTES_PER_SEC
    return 100 * work / seconds / CUBE_PEAK_FLOPS


# shape name -> proven bound in % of its unit. None at present: the int8 decode's cast-ring
# ceiling and SFAG's per-pair scatter floor are limits of our designs, not of A2 (a design past
# each is described in docs/performance.md), so those shapes keep their class goal.
BOUNDS: dict[str, float] = {}


def _k(s: int) -> str:
    return f"{s // 1024}K" if s % 1024 == 0 else str(s)


def shapes():
    """(cls, goal, op, name, factory, kind, work) per sweep shape."""
    out = []

    def add(cls, op, name, factory, kind, work, goal=None, bound=None):
        goal = CLASSES[cls][1] if goal is None else goal
        bound = BOUNDS.get(name, bound)
        if bound is not None:
            goal = min(goal, 0.95 * bound)
        out.append(dict(cls=cls, goal=goal, op=op, name=name, factory=factory, kind=kind, work=work, anchor=None))

    def prompt(cls, b, n, s, d, causal=False, nkv=None, skv=None):
        skv = s if skv is None else skv
        nkv = n if nkv is None else nkv
        name = f"B{b}_N{n}" + (f"/{nkv}" if nkv != n else "") + f"_S{_k(s)}"
        name += (f"x{_k(skv)}" if skv != s else "") + f"_D{d}" + ("_causal" if causal else "")
        pairs = flops.causal_pairs(s, skv) if causal else flops.full_pairs(s, skv)
        mask = dict(mask="causal", mask_shape="SS") if causal else {}
        work = flops.forward_flops(pairs, n, d) * b
        # Q and O (fp16), K and V per KV head, the bool SS mask plane once
        io = 2 * d * 2 * b * (s * n + skv * nkv) + (s * skv if causal else 0)
        add(
            cls,
            pfa.OP,
            name,
            lambda: pfa.make("fp16", "BNSD", B=b, N=n, Nkv=nkv, Sq=s, Skv=skv, D=d, **mask),
            "compute",
            work,
            bound=d64_bound(work, d, io) if d == 64 else None,
        )

    for b, n, s in ((1, 1, 8192), (1, 2, 8192), (1, 8, 4096), (2, 8, 2048), (4, 16, 1024), (8, 8, 1024)):
        prompt("dense", b, n, s, 128)
    prompt("dense", 1, 16, 2048, 128, nkv=4)
    prompt("dense", 1, 8, 1024, 128, skv=4096)
    for b, n, s in ((1, 1, 8192), (1, 4, 4096), (2, 8, 2048)):
        prompt("dense", b, n, s, 256)
    for b, n, s in ((1, 1, 8192), (1, 2, 8192), (2, 16, 2048), (1, 8, 4096)):
        prompt("causal", b, n, s, 128, causal=True)
    prompt("causal", 1, 8, 2048, 128, causal=True, nkv=2)
    prompt("causal", 1, 4, 4096, 256, causal=True)
    for b, n, s, causal in ((1, 8, 4096, False), (1, 16, 4096, True), (4, 8, 2048, False), (1, 32, 1024, False)):
        prompt("d64", b, n, s, 64, causal=causal)

    def varlen(lens, n, d, causal, goal_cls):
        kind = "causal" if causal else "full"
        name = "TND_" + ("_".join(str(x) for x in lens) if len(set(lens)) > 1 else f"{len(lens)}x{_k(lens[0])}")
        name += f"_N{n}_D{d}" + ("_causal" if causal else "")
        work = flops.forward_flops(flops.varlen_pairs(lens, lens, "causal_rd" if causal else kind), n, d)
        io = 2 * d * 4 * sum(lens) * n  # Q, K, V, O (fp16); sparse mode 3 defines its mask
        add(
            "varlen",
            fav.OP,
            name,
            lambda: fav.make("fp16", qlens=lens, N=n, D=d, sparse_mode=3 if causal else 0),
            "compute",
            work,
            goal=CLASSES[goal_cls][1],
            bound=d64_bound(work, d, io) if d == 64 else None,
        )

    varlen([1024] * 6, 16, 128, False, "dense")
    varlen([300, 2900, 800, 4000], 8, 128, True, "causal")
    varlen([512, 1024, 2048, 4096], 8, 128, False, "dense")
    varlen([2048] * 4, 8, 128, True, "causal")
    varlen([1000, 5000, 2000], 4, 128, False, "dense")
    varlen([100, 3000, 1500, 700, 2200], 8, 64, True, "d64")

    for b, n, nkv, s, int8 in (
        (16, 32, 4, 4096, False),
        (16, 32, 4, 4096, True),
        (1, 32, 8, 32768, False),
        (64, 32, 4, 1024, False),
        (1, 16, 1, 32768, False),
        (4, 64, 1, 8192, False),
        (8, 8, 8, 8192, False),
        (64, 32, 4, 4096, True),
        (32, 32, 32, 2048, True),
    ):
        kv_bytes = b * nkv * s * 128 * 2 * (1 if int8 else 2)
        qo_bytes = 2 * b * n * 128 * 2
        add(
            "decode",
            ifa.OP,
            f"B{b}_N{n}/{nkv}_S{_k(s)}_D128_{'int8kv' if int8 else 'fp16'}",
            lambda b=b, n=n, nkv=nkv, s=s, int8=int8: ifa.make(
                "fp16", "BNSD", B=b, N=n, Nkv=nkv, S=s, D=128, kv_int8=int8, antiquant="channel"
            ),
            "memory",
            kv_bytes + qo_bytes,
        )

    for lens, n, causal in (([4096], 8, True), ([4096], 8, False), ([2048] * 2, 32, True), ([8192], 2, False)):
        name = f"TND_{len(lens)}x{_k(lens[0])}_N{n}_D128" + ("_causal" if causal else "")
        pairs = flops.varlen_pairs(lens, lens, "causal_rd" if causal else "full")
        add(
            "backward",
            fag.OP,
            name,
            lambda lens=lens, n=n, causal=causal: fag.make(
                "fp16", qlens=lens, N=n, D=128, sparse_mode=3 if causal else 0
            ),
            "compute",
            flops.backward_flops(pairs, n, 128),
        )

    for h in (64, 128):
        add(
            "sparse_grad",
            sfag.OP,
            f"BSND_S1_128_N{h}_K2048_rope",
            lambda h=h: sfag.make(
                "fp16", "BSND", qlens=[128], kvlens=[4096], N1=h, block=1, sparse_mode=0, rope=True, density=0.5
            ),
            "compute",
            flops.backward_flops(128 * 2048, h, 576, 512),
        )
    return out
