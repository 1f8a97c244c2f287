"""Helpers of the aclnnFlashAttentionUnpaddingScoreGradV5 tests: consistent inputs (the TND
forward golden gives softmax_max/sum and attention_in), the kernel through fakit.run on the
CPU target, and the judgement by the precision standard (fakit.compare)."""

import ml_dtypes
import numpy as np

import fakit
from fakit import compare, golden

OP = "flash_attention_unpadding_score_grad_v5"
MAX_INT = 2147483647
DTYPES = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16, "fp32": np.float32}
GRADS = ("dq", "dk", "dv")


def make_kwargs(
    dtype="fp16",
    q_lens=(64,),
    kv_lens=None,
    n=2,
    nkv=None,
    d=64,
    mask=None,
    seed=0,
    softmax_in_layout="same_as_input",
    **attrs,
):
    """Golden keywords of the V5 grad with uniform(-1, 1) inputs and the forward's outputs."""
    rng = np.random.default_rng(seed)
    kv_lens = q_lens if kv_lens is None else kv_lens
    nkv = n if nkv is None else nkv
    dt = DTYPES[dtype]
    tq, tkv = int(sum(q_lens)), int(sum(kv_lens))
    kw = dict(
        query=rng.uniform(-1, 1, (tq, n, d)).astype(dt),
        key=rng.uniform(-1, 1, (tkv, nkv, d)).astype(dt),
        value=rng.uniform(-1, 1, (tkv, nkv, d)).astype(dt),
        atten_mask=mask,
        actual_seq_qlen=list(np.cumsum(q_lens)),
        actual_seq_kvlen=list(np.cumsum(kv_lens)),
        head_num=n,
        input_layout="TND",
        scale_value=d**-0.5,
        softmax_in_layout=softmax_in_layout,
    )
    kw.update(attrs)
    fwd = golden.flash_attention_tnd_forward(**kw)
    kw["dy"] = rng.uniform(-1, 1, (tq, n, d)).astype(dt)
    kw["softmax_max"] = fwd["softmax_max"]
    kw["softmax_sum"] = fwd["softmax_sum"]
    kw["attention_in"] = fwd["attention_out"].astype(dt)
    return kw


def run_and_judge(kw):
    """Kernel dq/dk/dv vs golden (+ same-dtype benchmark) by fakit.compare; returns them."""
    out = fakit.run(OP, backend="cpu", **kw)
    gold = golden.flash_attention_unpadding_score_grad_v5(**kw)
    bench = golden.benchmark(OP, **kw)
    for name in GRADS:
        assert out[name].dtype == kw["query"].dtype, f"{name} dtype {out[name].dtype}"
    report = compare.compare(OP, {k: out[k] for k in GRADS}, {k: gold[k] for k in GRADS}, {k: bench[k] for k in GRADS})
    assert report.passed, report.summary()
    return out, gold
