"""Each launch's peak UB / L1 / L0 use equals what the layout headers say.

The stages' Init and the host planners share host-includable layout headers (forward_layout.h,
backward_layout.h, kv_ring_layout.h, split_kv_combine_layout.h, sparse_backward_layout.h): the
planner checks a layout's total against the core's buffers, the stage allocates its pieces. The
emulator reports, per launch, the highest byte of each local buffer any core allocated
(``last_counters()["peak"]``); ``layout_totals.cpp`` computes the headers' totals from the
launch's tiling data. A stage that allocates more than its layout (a buffer the planner never
budgeted) or a layout that reserves what no stage allocates makes them differ. The shapes cover
every layout choice the planners make on an A2 core (lazy or per-block P.V, one or two copies of
the L1 / L0 tiles, vector sub-blocks, int8 K/V, split-KV, int8 output, the backward's tile sets,
rope, alibi, sink, the recompute forward; the sparse backward's rope and INT64 indices).
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import fakit
from fakit.backends import cpu

ROOT = Path(__file__).resolve().parents[3]
for folder in (
    "prompt_flash_attention",
    "flash_attention_score",
    "incre_flash_attention",
    "flash_attention_score_grad",
    "sparse_flash_attention_grad",
):
    sys.path.insert(0, str(ROOT / "tests/ops" / folder))
import fa_varlen_helpers as fav  # noqa: E402
import fag_helpers as fag  # noqa: E402
import ifa_helpers as ifa  # noqa: E402
import pfa_helpers as pfa  # noqa: E402
import sfag_helpers as sfag  # noqa: E402

# harness name -> kernel folder (OpType in snake case), which layout_totals.cpp reads
KERNELS = {
    pfa.OP: "prompt_flash_attention",
    fav.OP: "flash_attention_score",
    ifa.OP: "incre_flash_attention",
    fag.OP: "flash_attention_score_grad",
    sfag.OP: "sparse_flash_attention_grad",
}


@pytest.fixture(scope="module")
def layout_totals(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.fail("g++ is required (the CPU target is built with it)")
    exe = tmp_path_factory.mktemp("layout") / "layout_totals"
    source = Path(__file__).with_name("layout_totals.cpp")
    subprocess.run(
        ["g++", "-std=c++17", "-O1", f"-I{ROOT / 'op_kernel'}", str(source), "-o", str(exe)],
        check=True,
    )

    def run(op, kw):
        fakit.run(op, backend="cpu", **kw)
        key, tiling = cpu.last_tiling()
        peak = cpu.last_counters()["peak"]
        res = subprocess.run([str(exe), KERNELS[op], str(key)], input=tiling, capture_output=True, check=True)
        return peak, json.loads(res.stdout)

    return run


def check(layout_totals, op, kw, seen):
    peak, planned = layout_totals(op, kw)
    modes = planned.pop("modes")
    for name, value in modes.items():
        seen.setdefault(name, set()).add(value)
    seen["cases run"] = seen.get("cases run", 0) + 1
    assert planned, "no layout header describes this launch"
    differ = {b: (peak[b], planned[b]) for b in planned if peak[b] != planned[b]}
    assert not differ, f"emulator peak vs layout total, bytes per core: {differ} (modes {modes})"


def int8_kv(kw, seed=21, shape=(2,)):
    """int8 K/V with per-tensor antiquant, or per channel with shape (2, H_kv) (BSH)."""
    rng = np.random.default_rng(seed)
    out = dict(kw)
    out["key"] = [rng.integers(-127, 128, np.shape(kw["key"][0])).astype(np.int8)]
    out["value"] = [rng.integers(-127, 128, np.shape(kw["value"][0])).astype(np.int8)]
    out["antiquant_scale"] = rng.uniform(0.002, 0.01, shape).astype(kw["query"].dtype)
    out["antiquant_offset"] = rng.integers(-4, 5, shape).astype(kw["query"].dtype)
    return out


def causal(n):
    return np.triu(np.ones((n, n), np.bool_), 1)


PFA = [
    dict(sq=1024, skv=256, d=128, n=8),  # lazy P.V, vector sub-blocks
    dict(sq=128, skv=200, d=128, mask=pfa.band_mask(128, 200)),  # mask summary
    dict(sq=128, skv=128, d=256, dtype="bf16", mask=pfa.band_mask(128, 128)),  # per-block P.V, two L0 copies
    dict(sq=500, skv=300, d=256, n=8, nkv=2),  # lazy P.V in 64-key blocks, staged K/V in pairs
    dict(sq=256, skv=256, d=512),  # one L1 copy
    dict(sq=64, skv=300, d=64, layout="BSH", mask=pfa.band_mask(64, 300, pre=40, nxt=20, lead=(1, 1))),
    dict(sq=660, skv=660, d=64, n=64, nkv=16),  # 224-row q-blocks: Q chunks of D = 64 columns
    dict(sq=700, skv=2048, d=64, n=24, nkv=6),  # 352-row q-blocks: P.V in two row parts
]
FAV = [
    dict(dtype="fp32", d=256, seq_q=(200,)),  # one L1 and one L0 copy
    dict(dtype="fp32", d=128, seq_q=(300,)),  # one L0 copy, two L1 copies
    dict(dtype="bf16", d=192, seq_q=(64, 130), mode=3),
    dict(d=64, seq_q=(37, 130), mode=0),  # lazy P.V
    dict(d=128, seq_q=(512,), seq_kv=(256,), n=8),  # vector sub-blocks
]
IFA = [
    dict(b=2, n=4, s=64, d=64),  # one split
    dict(b=1, n=8, nkv=2, s=300, d=128, dtype="bf16", int8=True),  # int8 K/V (bf16 cast stages)
    dict(b=2, n=8, nkv=2, s=300, d=64, int8="channel"),  # per channel: the value rows in UB
    dict(b=1, n=8, nkv=1, s=4096, d=128),  # 16 splits: the combine's statistics rows
    dict(b=2, n=4, s=300, d=256, dtype="bf16"),  # 3 splits, D = 256: the combine is the larger phase
    dict(b=1, n=4, nkv=1, s=300, d=32, quant=True),  # int8 output: the combine's quantisation rows
]
FAG = [
    dict(q_lens=(64,), d=64),
    dict(q_lens=(256,), d=128),
    dict(dtype="fp32", q_lens=(64,), d=64),  # three tile sets
    dict(q_lens=(100, 30), d=192),  # two tile sets
    dict(q_lens=(70, 40), kv_lens=(150, 40), d=32, pse_type=2, alibi=True, mode=3),
    dict(q_lens=(64, 30), d=64, sink=True),
    dict(dtype="bf16", q_lens=(70, 40), kv_lens=(90, 140), n=4, nkv=2, d=64, rope=64),
    dict(q_lens=(130, 40), kv_lens=(150, 90), n=4, nkv=2, d=64, recompute=True),
]
SFAG = [
    dict(),  # rope, INT32 indices
    dict(rope=False, dtype="bf16"),
    dict(s1=3, s2=50, heads=2, picks=30, index_dtype=np.int64),  # INT64 indices narrowed in place
    dict(heads=128, s1=1, s2=64, picks=16),  # L0 and most of L1
    dict(layout="TND", q_lens=[3, 2], kv_lens=[70, 40], heads=4),
]


def pfa_kwargs(p):
    return pfa.make_kwargs(**p)


def fav_kwargs(p):
    return fav.make_kwargs(**p)


def ifa_kwargs(p):
    p = dict(p)
    int8 = p.pop("int8", False)
    quant = p.pop("quant", False)
    dtype = p.pop("dtype", "fp16")
    kw = ifa.make_kwargs(dtype, "BSH", **p)
    if quant:
        rng = np.random.default_rng(13)
        kw["quant_scale2"] = rng.uniform(500, 4000, (1,)).astype(np.float32)
        kw["quant_offset2"] = rng.uniform(-3, 3, (1,)).astype(np.float32)
    if int8 == "channel":
        return int8_kv(kw, shape=(2, np.shape(kw["key"][0])[-1]))
    return int8_kv(kw) if int8 else kw


def fag_kwargs(p):
    p = dict(p)
    rng = np.random.default_rng(5)
    extra = {}
    n, nkv = p.get("n", 2), p.get("nkv", p.get("n", 2))
    tq, tkv = sum(p["q_lens"]), sum(p.get("kv_lens", p["q_lens"]))
    if p.pop("alibi", False):
        extra.update(pse_shift=np.asarray([0.5, 0.25], np.float32), mask=causal(2048), sparse_mode=p.pop("mode"))
    if p.pop("sink", False):
        extra["sink"] = np.array([0.5, -1.0], np.float32)
    dr = p.pop("rope", 0)
    if dr:
        dt = ml_dtypes.bfloat16
        extra.update(
            query_rope=rng.uniform(-1, 1, (tq, n, dr)).astype(dt),
            key_rope=rng.uniform(-1, 1, (tkv, nkv, dr)).astype(dt),
        )
    recompute = p.pop("recompute", False)
    dtype = p.pop("dtype", "fp16")
    kw = fag.make_kwargs(dtype, **p, **extra)
    if recompute:
        for name in ("softmax_max", "softmax_sum", "attention_in"):
            kw[name] = None
    return kw


@pytest.fixture(scope="module")
def seen():
    return {}


@pytest.mark.parametrize("shape", PFA, ids=range(len(PFA)))
def test_prompt_flash_attention(layout_totals, seen, shape):
    check(layout_totals, pfa.OP, pfa_kwargs(shape), seen.setdefault(pfa.OP, {}))


@pytest.mark.parametrize("shape", FAV, ids=range(len(FAV)))
def test_flash_attention_var_len_score(layout_totals, seen, shape):
    check(layout_totals, fav.OP, fav_kwargs(shape), seen.setdefault(fav.OP, {}))


@pytest.mark.parametrize("shape", IFA, ids=range(len(IFA)))
def test_incre_flash_attention(layout_totals, seen, shape):
    check(layout_totals, ifa.OP, ifa_kwargs(shape), seen.setdefault(ifa.OP, {}))


@pytest.mark.parametrize("shape", FAG, ids=range(len(FAG)))
def test_flash_attention_score_grad(layout_totals, seen, shape):
    check(layout_totals, fag.OP, fag_kwargs(shape), seen.setdefault(fag.OP, {}))


@pytest.mark.parametrize("shape", SFAG, ids=range(len(SFAG)))
def test_sparse_flash_attention_grad(layout_totals, seen, shape):
    check(layout_totals, sfag.OP, sfag.make_kwargs(**shape), seen.setdefault(sfag.OP, {}))


def test_the_shapes_cover_every_layout_choice(seen):
    forward = {"lazyPv": {0, 1}, "l1Bufs": {1, 2}, "l0Bufs": {1, 2}, "subBlocks": {0, 1}, "elementBytes": {2, 4}}
    want = {
        pfa.OP: {"lazyPv": {0, 1}, "l1Bufs": {1, 2}, "l0Bufs": {1, 2}, "subBlocks": {0, 1}},
        fav.OP: forward,
        ifa.OP: {"antiquant": {0, 1}, "split": {0, 1}, "quantOut": {0, 1}, "kvPairs": {0, 1}, "antiTable": {0, 1}},
        fag.OP: {
            "tileSets": {2, 3, 4},
            "rope": {0, 1},
            "alibi": {0, 1},
            "sink": {0, 1},
            "recompute": {0, 1},
            "prefetch": {0, 1},
        },
        sfag.OP: {"rope": {0, 1}, "index64": {0, 1}, "pairTokens": {0, 1}},
    }
    cases = {pfa.OP: len(PFA), fav.OP: len(FAV), ifa.OP: len(IFA), fag.OP: len(FAG), sfag.OP: len(SFAG)}
    if any(seen.get(op, {}).get("cases run", 0) < n for op, n in cases.items()):
        # A subset (-k, or pytest-xdist spreading the cases over workers) ran in this process.
        pytest.skip("needs every buffer-peak case in the same process (pytest -k peaks, without -n)")
    missing = {
        (op, mode): sorted(values - seen[op].get(mode, set()))
        for op, modes in want.items()
        for mode, values in modes.items()
        if values - seen[op].get(mode, set())
    }
    assert not missing, f"layout choices no shape makes: {missing}"
