"""Cases for aclnnSparseFlashAttentionGrad (spec 004): backward of top-k sparse attention —
MQA (N2 = 1), D = 512 (+ rope 64), K = 2048 selected blocks of 1/8/16/32/64 tokens, sparse
modes 0 and 3, BSND and TND. out / softmax_max / softmax_sum come from
fakit.golden.sparse_flash_attention on the same inputs."""

from __future__ import annotations

import itertools

import numpy as np

from .core import Case, Forbidden, call_filtered, cumulative, uniform

OP = "sparse_flash_attention_grad"
BLOCK_SIZES = (1, 8, 16, 32, 64)
N1_VALUES = (1, 2, 4, 8, 16, 32, 64, 128)
D, ROPE_D, TOPK = 512, 64, 2048
MAX_INT = 2147483647


def make(
    dtype="bf16",
    layout="BSND",
    qlens=(64,),
    kvlens=(128,),
    N1=4,
    block=1,
    sparse_mode=3,
    rope=False,
    density=0.5,
    oob=False,
    K=TOPK,
    value_range=(-1.0, 1.0),
    seed=0,
) -> Case:
    return Case(
        OP,
        dtype,
        layout,
        {"qlens": list(qlens), "kvlens": list(kvlens), "N1": N1, "N2": 1, "D": D, "Dr": ROPE_D if rope else 0, "K": K},
        attrs={
            "scale_value": (D + (ROPE_D if rope else 0)) ** -0.5,
            "sparse_block_size": block,
            "layout": layout,
            "sparse_mode": sparse_mode,
            "pre_tokens": MAX_INT,
            "next_tokens": MAX_INT,
            "deterministic": False,
        },
        options={"rope": rope, "density": density, "oob": oob},
        value_range=tuple(value_range),
        seed=seed,
    )


def check(c: Case) -> None:
    s, a = c.shapes, c.attrs
    ql, kl = s["qlens"], s["kvlens"]
    if c.dtype not in ("fp16", "bf16"):
        raise Forbidden(f"dtype {c.dtype}: BFLOAT16 or FLOAT16 only")
    if c.layout not in ("BSND", "TND"):
        raise Forbidden(f"layout {c.layout}: BSND or TND only")
    if len(ql) != len(kl) or not 1 <= len(ql) <= 256:
        raise Forbidden(f"B={len(ql)}: 1-256 batches, equal for query and KV")
    if c.layout == "BSND" and (len(set(ql)) > 1 or len(set(kl)) > 1):
        raise Forbidden("BSND needs one S1 and one S2 for every batch (varied lengths need TND)")
    if any(not 1 <= x <= 128 * 1024 for x in list(ql) + list(kl)):
        raise Forbidden("S1, S2 must be in [1, 128K]")
    if s["N1"] not in N1_VALUES or s["N2"] != 1:
        raise Forbidden(f"N1={s['N1']}, N2={s['N2']}: N1 in {N1_VALUES}, N2 = 1 (MQA)")
    if s["D"] != D or s["Dr"] not in (0, ROPE_D) or s["K"] != TOPK:
        raise Forbidden(f"D={s['D']}, Drope={s['Dr']}, K={s['K']}: D = 512, Drope = 64, K = 2048")
    if a["sparse_block_size"] not in BLOCK_SIZES:
        raise Forbidden(f"sparse_block_size={a['sparse_block_size']}: supported are {BLOCK_SIZES}")
    if a["sparse_mode"] not in (0, 3):
        raise Forbidden(f"sparse_mode={a['sparse_mode']}: only 0 and 3 are supported")
    if (a["pre_tokens"], a["next_tokens"]) != (MAX_INT, MAX_INT):
        raise Forbidden("pre_tokens/next_tokens only support 2147483647")


def _indices(c: Case, rng) -> np.ndarray:
    """Per query token: a random subset of the blocks it may see (in random order), the rest
    -1. A negative index ends the list. With `oob`, a few indices point past the KV length."""
    s, a = c.shapes, c.attrs
    bs = a["sparse_block_size"]
    rows = []
    for sq, sk in zip(s["qlens"], s["kvlens"]):
        for i in range(sq):
            limit = sk - sq + i + 1 if a["sparse_mode"] == 3 else sk  # right-down causal
            nblk = max(0, -(-limit // bs))
            chosen = rng.permutation(nblk)[: max(1, int(nblk * c.options["density"]))] if nblk else []
            row = np.full(s["K"], -1, np.int64)
            row[: len(chosen)] = chosen
            if c.options["oob"] and len(chosen) < s["K"]:
                row[len(chosen)] = nblk + 3  # beyond the visible range: skipped
                row = np.concatenate([row[: len(chosen) + 1][rng.permutation(len(chosen) + 1)], row[len(chosen) + 1 :]])
            rows.append(row)
    idx = np.asarray(rows, np.int32).reshape(-1, 1, s["K"])
    if c.layout == "BSND":
        idx = idx.reshape(len(s["qlens"]), s["qlens"][0], 1, s["K"])
    return idx


def _tensor(c: Case, rng, lens, heads, d):
    if d == 0:
        return None
    x = uniform(rng, (sum(lens), heads, d), c.dtype, *c.value_range)
    return x.reshape(len(lens), lens[0], heads, d) if c.layout == "BSND" else x


def make_inputs(c: Case, rng) -> dict:
    from fakit import golden

    s, a = c.shapes, c.attrs
    ql, kl = s["qlens"], s["kvlens"]
    kw = {
        "query": _tensor(c, rng, ql, s["N1"], s["D"]),
        "key": _tensor(c, rng, kl, 1, s["D"]),
        "value": _tensor(c, rng, kl, 1, s["D"]),
        "sparse_indices": _indices(c, rng),
        "query_rope": _tensor(c, rng, ql, s["N1"], s["Dr"]),
        "key_rope": _tensor(c, rng, kl, 1, s["Dr"]),
        "actual_seq_lengths_query": cumulative(ql) if c.layout == "TND" else None,
        "actual_seq_lengths_kv": cumulative(kl) if c.layout == "TND" else None,
    }
    kw["d_out"] = uniform(rng, kw["query"].shape, c.dtype, *c.value_range)
    kw.update(a)
    fwd = call_filtered(golden.sparse_flash_attention, layout_query=c.layout, layout_kv=c.layout, **kw)
    kw["out"] = np.asarray(fwd["attention_out"]).astype(kw["query"].dtype)
    kw["softmax_max"] = np.asarray(fwd["softmax_max"], np.float32)
    kw["softmax_sum"] = np.asarray(fwd["softmax_sum"], np.float32)
    return kw


def output_dtypes(c: Case) -> dict:
    out = {"d_query": c.dtype, "d_key": c.dtype, "d_value": c.dtype}
    if c.options["rope"]:
        out.update(d_query_rope=c.dtype, d_key_rope=c.dtype)
    return out


def features(c: Case) -> str:
    s, a, o = c.shapes, c.attrs, c.options
    seq = (
        f"S{s['qlens'][0]}x{s['kvlens'][0]} B{len(s['qlens'])}"
        if c.layout == "BSND"
        else f"q{s['qlens']} kv{s['kvlens']}"
    )
    f = [
        c.layout,
        c.dtype,
        seq,
        f"N{s['N1']}/1",
        f"D{s['D']}",
        f"blk{a['sparse_block_size']}",
        f"sparse{a['sparse_mode']}",
        f"density={o['density']}",
    ]
    if o["rope"]:
        f.append(f"rope{s['Dr']}")
    if o["oob"]:
        f.append("oob-indices")
    return " ".join(f)


# ------------------------------------------------------------------------------- suites


def smoke():
    # The golden's cost grows with query tokens x K x block size, so the big-block cases
    # keep few query tokens.
    return [
        make("bf16", "BSND", qlens=[32], kvlens=[128], N1=4, block=1, sparse_mode=3),
        make("fp16", "BSND", qlens=[4, 4], kvlens=[256, 256], N1=2, block=16, sparse_mode=0, rope=True),
        make("bf16", "TND", qlens=[24, 40], kvlens=[64, 200], N1=4, block=1, sparse_mode=3, rope=True),
        make("bf16", "TND", qlens=[3, 5], kvlens=[64, 200], N1=4, block=8, sparse_mode=3, rope=True),
        make("fp16", "TND", qlens=[2], kvlens=[192], N1=1, block=64, sparse_mode=0, oob=True),
    ]


def full():
    for dtype, layout, block, mode, rope in itertools.product(
        ("fp16", "bf16"), ("BSND", "TND"), BLOCK_SIZES, (0, 3), (False, True)
    ):
        q, kv = ([48, 48], [320, 320]) if layout == "BSND" else ([40, 56], [300, 96])
        yield make(dtype, layout, qlens=q, kvlens=kv, N1=4, block=block, sparse_mode=mode, rope=rope)
    for n1 in N1_VALUES:
        yield make("bf16", "TND", qlens=[8], kvlens=[256], N1=n1, block=16, rope=True)
    for density, oob in itertools.product((0.05, 1.0), (False, True)):
        yield make("bf16", "TND", qlens=[32, 1], kvlens=[500, 33], block=32, density=density, oob=oob)
    yield make("bf16", "BSND", qlens=[64], kvlens=[4096], N1=16, block=64, sparse_mode=3, rope=True)
    yield make("fp16", "TND", qlens=[100], kvlens=[50], block=1, sparse_mode=3)  # rows with nothing selected
    # Forbidden by spec 004 (kept so the rejections are listed).
    yield make("bf16", N1=3)
    yield make("bf16", block=4)
    yield make("bf16", sparse_mode=2)
    yield make("fp32")
    yield make("bf16", "BSND", qlens=[8, 16], kvlens=[64, 64])
    yield make("bf16", K=512)


SUITES = {"smoke": smoke, "full": full}
