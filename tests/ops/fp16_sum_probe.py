"""Which final-sum path a forward launch took (fp16 or fp32 P.V sums out of the cube), read from
the model's L2 write bytes: an fp16 final sum writes 2 bytes less per output element. Shared by
the PFA and varlen golden tests of fp16 final sums."""

import numpy as np

from fakit.backends import cpu


def standard_normal_qkv(kw, seed, query_scale=None):
    """Q, K and V of `kw` drawn standard-normal in fp16 (the sweep's kind of data), Q scaled by
    `query_scale` if given (near-uniform attention: l ~ the keys seen); returns the generator for
    further draws."""
    rng = np.random.default_rng(seed)
    for name in ("query", "key", "value"):
        kw[name] = rng.standard_normal(kw[name].shape).astype(np.float16)
    if query_scale is not None:
        kw["query"] *= np.float16(query_scale)
    return rng


def large_v(rng, shape):
    """V around 1000: every final sum ~ l * 1000, past fp16's 65504, so the guard keeps fp32."""
    return (1000.0 + rng.standard_normal(shape)).astype(np.float16)


def judged_l2_writes(run_and_judge, kw):
    """Runs and judges `kw` against its golden; the launch's modelled L2 write bytes."""
    run_and_judge(kw)
    return cpu.last_profile()["l2_write_bytes"]


def assert_v_pass_sums(run_and_judge, kw, rng, outputs):
    """The max|V| pass's final sums on `kw` (standard-normal Q, K, V drawn from `rng`): at least
    half of the `outputs` elements' sums go fp16 (2 bytes less each), V around 1000 keeps every
    sum fp32 (an fp16 sum there is inf), and so does a single 1000-valued row at the very end of
    V's memory, which the pass must not miss."""
    normal = judged_l2_writes(run_and_judge, kw)
    normal_v = kw["value"]
    kw["value"] = large_v(rng, normal_v.shape)
    large = judged_l2_writes(run_and_judge, kw)
    every = outputs * 2
    assert every // 2 <= large - normal <= every
    kw["value"] = normal_v.copy()
    kw["value"].reshape(-1, normal_v.shape[-1])[-1] = np.float16(1000.0)
    assert judged_l2_writes(run_and_judge, kw) == large
