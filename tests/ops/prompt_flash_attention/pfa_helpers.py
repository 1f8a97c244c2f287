"""Helpers of the aclnnPromptFlashAttention tests: build inputs, run the kernel on the CPU
target through fakit.run, and judge it against the golden with the precision standard.
(A plain module, not a conftest, so that importing it by name cannot pick up another test
directory's conftest.)"""

import ml_dtypes
import numpy as np

import fakit
from fakit import compare, golden

OP = "prompt_flash_attention"
MAX_INT = 2147483647
DTYPES = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16}


def qkv_shape(layout, b, n, s, d):
    return {"BSH": (b, s, n * d), "BSND": (b, s, n, d)}.get(layout, (b, n, s, d))


def band_mask(sq, skv, pre=MAX_INT, nxt=0, lead=()):
    """1 = excluded outside the left-up band row - pre <= key <= row + next."""
    rel = np.arange(skv)[None, :] - np.arange(sq)[:, None]
    return np.ascontiguousarray(np.broadcast_to((rel > nxt) | (rel < -pre), lead + (sq, skv)))


def make_kwargs(dtype="fp16", layout="BNSD", b=1, n=2, nkv=None, sq=64, skv=None, d=64, mask=None, seed=0, **attrs):
    """Golden keyword arguments with uniform(-1, 1) inputs rounded to `dtype`."""
    rng = np.random.default_rng(seed)
    nkv = n if nkv is None else nkv
    skv = sq if skv is None else skv
    dt = DTYPES[dtype]
    kw = dict(
        query=rng.uniform(-1, 1, qkv_shape(layout, b, n, sq, d)).astype(dt),
        key=rng.uniform(-1, 1, qkv_shape(layout, b, nkv, skv, d)).astype(dt),
        value=rng.uniform(-1, 1, qkv_shape(layout, b, nkv, skv, d)).astype(dt),
        atten_mask=mask,
        num_heads=n,
        num_key_value_heads=0 if nkv == n else nkv,
        input_layout=layout,
        scale_value=d**-0.5,
    )
    kw.update(attrs)
    return kw


def run_and_judge(kw):
    """Kernel output vs golden (+ same-dtype benchmark) by fakit.compare; returns the report."""
    out = fakit.run(OP, backend="cpu", **kw)
    assert out.dtype == kw["query"].dtype, f"output dtype {out.dtype} != query dtype {kw['query'].dtype}"
    gold = golden.prompt_flash_attention(**kw)
    bench = golden.benchmark(OP, **kw)
    report = compare.compare(OP, {"attention_out": out}, {"attention_out": gold}, {"attention_out": bench})
    assert report.passed, report.summary()
    return out, gold
