"""The decode planning (op_host/common/tiling/decode_tiling.cpp) on its own: the GQA group sets the
rows per unit, long sequences on few rows are split over the cores (chunks of 16-key
multiples: a core's last block is short), many rows are not split, every unit is planned once in contiguous per-core ranges,
the combine rows cover every output row once, and the workspace holds what the kernel uses."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.fail("g++ is required (the CPU target is built with it)")
    exe = tmp_path_factory.mktemp("decode_tiling") / "decode_tiling_driver"
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-O1",
            f"-I{ROOT / 'op_host'}",
            f"-I{ROOT / 'op_kernel'}",
            f"-I{ROOT}",
            str(Path(__file__).with_name("decode_tiling_driver.cpp")),
            str(ROOT / "op_host/common/tiling/decode_tiling.cpp"),
            str(ROOT / "op_host/common/tiling/forward_tiling.cpp"),
            str(ROOT / "op_host/common/tiling/kv_staging_tiling.cpp"),
            str(ROOT / "op_host/common/tiling/forward_work_split.cpp"),
            "-o",
            str(exe),
        ],
        check=True,
    )

    def run(b=1, n=8, nkv=1, s=4096, d=128, aic=24, quant=0, lengths=(), int8=0):
        line = f"{b} {n} {nkv} {s} {d} {aic} {quant} {len(lengths)} {' '.join(map(str, lengths))}\n"
        env = {**os.environ, "DECODE_DRIVER_INT8": str(int8)}
        out = subprocess.run([str(exe)], input=line, capture_output=True, text=True, check=True, env=env).stdout
        return json.loads(out)

    return run


def check_cover(p):
    starts = p["starts"]
    assert starts[0] == 0 and starts[-1] == p["unitCount"] and starts == sorted(starts)
    assert len(starts) == p["usedCores"] + 1 and p["usedCores"] <= 24
    cs = p["combineStarts"]
    assert cs[0] == 0 and cs[-1] == p["combineRows"] and cs == sorted(cs)


@pytest.mark.parametrize(
    "n,nkv,d,rows,blocks",
    [(8, 1, 128, 8, 1), (64, 1, 128, 32, 1), (64, 1, 512, 32, 1), (4, 4, 64, 8, 1), (48, 2, 256, 16, 1)],
)
def test_group_sets_the_rows_per_unit(plan, n, nkv, d, rows, blocks):
    p = plan(n=n, nkv=nkv, d=d)
    assert p["ok"] and p["rowsPerVec"] == rows and p["headBlocks"] == blocks
    assert p["blockQ"] * p["headBlocks"] >= n // nkv


@pytest.mark.parametrize(
    "n,copies,by_tensor,pairs,ahead,extra",
    [(8, [2, 2], 1, 4, 3, 2), (16, [2, 2], 1, 4, 3, 2), (64, [2, 1], 1, 4, 3, 1)],
)
def test_the_ring_leaves_the_stage_whole(plan, n, copies, by_tensor, pairs, ahead, extra):
    # the ring's producer takes the largest set of UB copies that still leaves the stage all its
    # rows in one sub-block with two S buffers: a whole key block per chunk and tensor (two
    # copies each way) for few rows, one out copy for G = 64; copied K/V also take K/V pairs and
    # a shorter lead; G = 64 also one block less before the first softmax
    p = plan(b=4, n=n, nkv=1, s=8192)
    rows = max(8, n // 2)
    assert p["ring"] == 1 and p["ringCopies"] == copies and p["ringByTensor"] == by_tensor
    assert p["kvPairCopies"] == pairs and p["ringAhead"] == ahead and p["ringStartExtra"] == extra
    assert p["rowsPerVec"] == rows and p["vecRows"] == rows and p["vecSBufs"] == 2


def test_long_sequence_on_one_row_is_split_over_the_cores(plan):
    p = plan(b=1, n=8, nkv=1, s=32768)
    assert p["kvSplits"] >= 12 and p["kvChunk"] % 16 == 0 and p["kvSplits"] * p["kvChunk"] >= 32768
    # no whole block more than the core's share of the keys: the last block of a chunk is short
    assert p["kvChunk"] % 128 != 0 and p["kvChunk"] - 32768 / p["kvSplits"] < 16
    assert p["usedCores"] == 24 and p["unitCount"] == p["kvSplits"]
    check_cover(p)
    # partial rows (fp32 D + max + sum) for every (split, head) after the core slots
    assert p["workspace"] >= p["coreBytes"] + p["kvSplits"] * 8 * (128 + 2) * 4


def test_many_rows_are_not_split(plan):
    p = plan(b=64, n=32, nkv=8, s=2048)
    assert p["kvSplits"] == 1 and p["unitCount"] == 64 * 8
    # no partials: the core slots, then the K/V ring the vector cores fill for the cube
    assert p["ring"] == 1 and p["ringOffset"] >= p["coreBytes"]
    assert p["workspace"] == p["ringOffset"] + p["ringBytes"]
    # a slot pair per ring slot: 128 keys x D for K and V, fp16
    assert p["ringBytes"] == p["usedCores"] * 8 * 2 * 128 * 128 * 2
    check_cover(p)


def test_short_sequences_are_not_split_and_lengths_bound_the_chunks(plan):
    assert plan(b=1, n=8, s=100)["kvSplits"] == 1
    p = plan(b=2, n=8, s=8192, lengths=(1000, 300))
    assert p["kvSplits"] > 1 and p["kvSplits"] * p["kvChunk"] >= 1000 and (p["kvSplits"] - 1) * p["kvChunk"] < 1000
    check_cover(p)


def test_int8_output_aligns_rows_and_always_has_partials(plan):
    p = plan(b=64, n=32, nkv=8, s=2048, d=40, quant=1)
    assert p["headDimAlign"] == 64 and p["kvSplits"] == 1
    assert p["workspace"] >= p["coreBytes"] + 64 * 32 * (64 + 2) * 4


def test_plan_is_deterministic(plan):
    assert plan(b=3, n=16, nkv=4, s=5000) == plan(b=3, n=16, nkv=4, s=5000)


# ---- the int8 x int8 core's plan (int8_digit_layout.h): the driver asks for it with int8=2
# (IncreFlashAttention's tiling for every int8 K/V), int8=1 plans the cast ring alone


def test_int8_digit_plan_only_where_asked(plan):
    p = plan(b=16, n=32, nkv=4, int8=1)
    assert p["ok"] and p["ring"] == 1 and p["digits"]["enabled"] == 0
    assert p["workspace"] == p["ringOffset"] + p["ringBytes"]


@pytest.mark.parametrize(
    "b,n,nkv,s,d,rows_pad",
    [
        (16, 32, 4, 4096, 128, 16),
        (64, 32, 4, 4096, 128, 16),
        (4, 64, 4, 8192, 128, 32),
        (8, 8, 8, 1024, 128, 16),
        (2, 16, 2, 32768, 128, 16),
        (1, 16, 16, 512, 128, 16),
    ],
)
def test_int8_digit_plan_regions(plan, b, n, nkv, s, d, rows_pad):
    p = plan(b=b, n=n, nkv=nkv, s=s, d=d, int8=2)
    g = p["digits"]
    assert p["ok"] and g["enabled"] == 1 and g["rowsPad"] == rows_pad
    dp = p["headDimAlign"]
    bk = p["blockKv"]
    cores = p["usedCores"]
    # the int8 ring: half the cast ring's bytes (rounded to 512)
    assert g["ringCoreBytes"] == -(-p["castRingCoreBytes"] // 2 // 512) * 512
    # S and O int32, P int8 slots (WS_SLOTS = 4)
    assert g["slotCoreBytes"] == -(-(4 * rows_pad * (bk * 4 + dp * 4 + bk)) // 512) * 512
    # every core's query items: from its first unit's (batch, KV head, head block) to its last's
    item = rows_pad * dp + -(-(n // nkv) * 4 // 32) * 32
    assert g["queryItemBytes"] == item
    st = p["starts"]
    span = max((st[c + 1] - 1) // p["kvSplits"] - st[c] // p["kvSplits"] + 1 for c in range(cores) if st[c + 1] > st[c])
    assert g["queryCoreBytes"] >= span * item
    # regions in order, after the core slots and the split-KV partials, inside the workspace
    assert g["queryOffset"] >= p["coreBytes"] and g["queryOffset"] % 512 == 0
    assert g["slotOffset"] == g["queryOffset"] + cores * g["queryCoreBytes"]
    assert g["ringOffset"] == g["slotOffset"] + cores * g["slotCoreBytes"]
    assert p["workspace"] == g["end"] == g["ringOffset"] + cores * g["ringCoreBytes"]
    # the ring's producer: the copied ring's plan at headDim / 2 16-bit columns
    assert g["ringChunkElems"] >= d // 2 and min(g["ringCopies"]) >= 1


@pytest.mark.parametrize("n,nkv,d", [(32, 1, 128), (64, 2, 128), (8, 1, 80), (8, 1, 256)])
def test_int8_digit_plan_not_where_unplanned(plan, n, nkv, d):
    """G > 16 (the hand-offs of 2G digit rows cost more than the cast ring), D not whole int8 Nz
    columns, or D > 128: the cast ring."""
    p = plan(b=4, n=n, nkv=nkv, d=d, int8=2)
    assert p["ok"] and p["ring"] == 1 and p["digits"]["enabled"] == 0


@pytest.mark.parametrize(
    "b,n,nkv,s,d", [(16, 32, 4, 4096, 64), (16, 32, 4, 4096, 96), (2, 16, 2, 32768, 32), (1, 8, 1, 256, 128)]
)
def test_int8_digit_plan_only_where_it_pays(plan, b, n, nkv, s, d):
    """Key blocks wider than the head dim (the S and O products in two copies per block), or a
    stream of one key block per core: the cast ring (modelled faster there)."""
    p = plan(b=b, n=n, nkv=nkv, s=s, d=d, int8=2)
    assert p["ok"] and p["ring"] == 1 and p["digits"]["enabled"] == 0


def test_int8_digit_ring_view_is_the_copied_ring_of_half_the_columns(plan):
    """The kernel's view of the plan (Int8DigitRingView) is what the planner planned the ring's
    producer on: the copied 16-bit ring of headDim / 2 columns over the same bytes."""
    b, n, nkv, s, d = 16, 32, 4, 4096, 128
    p = plan(b=b, n=n, nkv=nkv, s=s, d=d, int8=2)
    v = p["view"]
    assert v["headDim"] == d // 2 and v["headDimAlign"] == p["headDimAlign"] // 2 and v["antiquant"] == 0
    assert v["kvStrides"] == [nkv * s * d // 2, s * d // 2, d // 2]  # BNSD strides of the driver, halved
    assert v["ringChunkElems"] == p["digits"]["ringChunkElems"] and v["ringByTensor"] == p["digits"]["ringByTensor"]
    # the copied fp16 plan of the viewed problem reserves the same producer UB
    fp16 = plan(b=b, n=n, nkv=nkv, s=s, d=d // 2)
    assert fp16["ring"] == 1 and fp16["ringByTensor"] == v["ringByTensor"]
