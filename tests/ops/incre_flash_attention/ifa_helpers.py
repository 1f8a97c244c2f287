"""Helpers of the aclnnIncreFlashAttentionV4 tests: build decode inputs (contiguous, paged),
run the kernel on the CPU target through fakit.run, and judge it against the golden with the
precision standard. (A plain module, not a conftest.)"""

import ml_dtypes
import numpy as np

import fakit
from fakit import compare, golden

OP = "incre_flash_attention_v4"
DTYPES = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16}


def to_layout(x, layout):
    """(B, N, S, D) -> the layout's shape."""
    b, n, s, d = x.shape
    if layout == "BNSD":
        return np.ascontiguousarray(x)
    if layout == "BSND":
        return np.ascontiguousarray(x.transpose(0, 2, 1, 3))
    return np.ascontiguousarray(x.transpose(0, 2, 1, 3).reshape(b, s, n * d))


def make_kwargs(dtype="fp16", layout="BNSD", b=2, n=4, nkv=None, s=200, d=64, seed=0, **extra):
    """Golden keywords with uniform(-1, 1) inputs rounded to `dtype`; extra keywords override."""
    rng = np.random.default_rng(seed)
    nkv = n if nkv is None else nkv
    dt = DTYPES[dtype]
    q = rng.uniform(-1, 1, (b, n, 1, d)).astype(dt)
    k = rng.uniform(-1, 1, (b, nkv, s, d)).astype(dt)
    v = rng.uniform(-1, 1, (b, nkv, s, d)).astype(dt)
    kw = dict(
        query=to_layout(q, layout),
        key=[to_layout(k, layout)],
        value=[to_layout(v, layout)],
        num_heads=n,
        num_key_value_heads=0 if nkv == n else nkv,
        input_layout=layout,
        scale_value=d**-0.5,
    )
    kw.update(extra)
    return kw


def page(kw, lengths, block_size, cache="BSH", seed=1):
    """Turn contiguous KV of `kw` into a paged cache (blocks shuffled) + block table."""
    rng = np.random.default_rng(seed)
    layout = kw["input_layout"]
    n = kw["num_heads"]
    nkv = kw["num_key_value_heads"] or n

    def bnsd(x):
        x = np.asarray(x)
        if layout == "BNSD":
            return x
        if layout == "BSND":
            return x.transpose(0, 2, 1, 3)
        b, s, h = x.shape
        return x.reshape(b, s, nkv, h // nkv).transpose(0, 2, 1, 3)

    k, v = bnsd(kw["key"][0]), bnsd(kw["value"][0])
    b, _, s, d = k.shape
    counts = [-(-int(l) // block_size) for l in lengths]
    total = sum(counts) + 2  # two spare blocks nobody reads
    ids = rng.permutation(total)
    table = np.full((b, max(max(counts), 1) + 1), -1, np.int32)
    kc = np.zeros((total, nkv, block_size, d), k.dtype)
    vc = np.zeros_like(kc)
    at = 0
    for bi in range(b):
        for j in range(counts[bi]):
            blk = ids[at]
            at += 1
            table[bi, j] = blk
            lo, hi = j * block_size, min((j + 1) * block_size, s)
            kc[blk, :, : hi - lo] = k[bi, :, lo:hi]
            vc[blk, :, : hi - lo] = v[bi, :, lo:hi]
    if cache == "BSH":
        kc = kc.transpose(0, 2, 1, 3).reshape(total, block_size, nkv * d)
        vc = vc.transpose(0, 2, 1, 3).reshape(total, block_size, nkv * d)
    out = dict(kw)
    out.update(
        key=[np.ascontiguousarray(kc)],
        value=[np.ascontiguousarray(vc)],
        block_table=table,
        block_size=block_size,
        actual_seq_lengths=list(lengths),
    )
    return out


def run_and_judge(kw):
    """Kernel output vs golden (+ same-dtype benchmark) by fakit.compare; returns (out, golden)."""
    out = fakit.run(OP, backend="cpu", **kw)
    assert out.dtype == np.asarray(kw["query"]).dtype
    assert out.shape == np.asarray(kw["query"]).shape
    gold = golden.incre_flash_attention_v4(**kw)
    bench = golden.benchmark(OP, **kw)
    report = compare.compare(OP, {"attention_out": out}, {"attention_out": gold}, {"attention_out": bench})
    assert report.passed, report.summary()
    return out, gold
