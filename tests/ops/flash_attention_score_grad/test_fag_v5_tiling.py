"""The backward-core planning (op_host/common/tiling/backward_tiling.cpp) on its own: block sizes and
the pipelined cube fit UB/L1, every unit is covered once by contiguous per-core ranges, short
sequences are sliced over the cores, and the workspace holds every region."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
UB_A2 = 196352  # Ascend910B2 UB as PlatformAscendC reports it
L1_A2 = 524032


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.fail("g++ is required (the CPU target is built with it)")
    exe = tmp_path_factory.mktemp("bwd_tiling") / "driver"
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-O1",
            f"-I{ROOT / 'op_host'}",
            f"-I{ROOT / 'op_kernel'}",
            f"-I{ROOT}",
            str(Path(__file__).with_name("backward_tiling_driver.cpp")),
            str(ROOT / "op_host/common/tiling/backward_tiling.cpp"),
            "-o",
            str(exe),
        ],
        check=True,
    )

    def run(d=128, dr=0, n=2, nkv=2, mode=0, mask=0, q=(1024,), kv=None, ub=UB_A2, aic=24):
        kv = q if kv is None else kv
        line = " ".join(str(v) for v in (d, dr, n, nkv, mode, mask, ub, aic, len(q), *q, *kv)) + "\n"
        out = subprocess.run([str(exe)], input=line, capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    return run


@pytest.mark.parametrize(
    "d,dr,rows,pipelined,sets",
    [
        (64, 0, 128, 2, 4),
        (128, 0, 128, 2, 4),
        (128, 64, 128, 2, 3),
        (256, 0, 64, 2, 3),
        (512, 0, 64, 0, 1),
        (768, 0, 32, 0, 1),
    ],
)
def test_blocks_fit_and_pipeline_when_l1_allows(plan, d, dr, rows, pipelined, sets):
    # pipelined: steps issued ahead; sets: L1 tile sets (one more than pipelined + 1 when the
    # next step's tiles are staged early)
    p = plan(d=d, dr=dr)
    assert p["ok"], p
    assert (p["blockQ"], p["pipelined"], p["tileSets"]) == (rows, pipelined, sets)
    assert p["slots"] == max(2, pipelined + 1)
    assert p["ubBytes"] + 8192 <= UB_A2 and p["l1Bytes"] <= L1_A2


@pytest.mark.parametrize("d,dr,block_kv,accum", [(64, 0, 128, 1), (128, 0, 96, 1), (128, 64, 128, 0), (256, 0, 128, 0)])
def test_dk_dv_accumulate_in_l0c_where_two_sums_and_two_result_tiles_fit(plan, d, dr, block_kv, accum):
    # fp16, no rope, D <= 128: the key block shrinks until the two blockKv x D fp32 sums leave
    # two result tiles of >= 32 rows in L0C (128 KiB); the UB tiles stay whole 64-float repeats
    p = plan(d=d, dr=dr)
    assert (p["blockKv"], p["accumKv"]) == (block_kv, accum), p
    assert p["tileKv"] >= p["blockKv"] and p["tileKv"] % 64 == 0
    dp = (d + 15) // 16 * 16
    acc = 2 * p["blockKv"] * dp * 4 if accum else 0
    assert acc + p["l0Bufs"] * p["resElems"] * 4 <= 131072
    assert p["resElems"] // max(dp, p["blockKv"]) >= (32 if accum else p["blockQ"])


def test_units_are_covered_once_by_contiguous_ranges(plan):
    p = plan(n=8, nkv=2, q=(3000, 17, 900), kv=(2500, 40, 1200), mode=3, mask=1)
    s = p["starts"]
    assert s[0] == 0 and s[-1] == p["unitCount"] and all(a <= b for a, b in zip(s, s[1:]))
    assert p["usedCores"] <= 24


def test_short_sequences_slice_query_rows_over_the_cores(plan):
    # one kv head, 8 kv blocks: without slices only 8 of 24 cores would work
    p = plan(n=1, nkv=1, q=(1024,), mode=3, mask=1)
    assert p["qSplit"] > 1 and p["usedCores"] >= 20, p
    # plenty of kv blocks: whole kv blocks per core (one writer per dK/dV row)
    p = plan(n=16, nkv=16, q=(8192,), mode=3, mask=1)
    assert p["qSplit"] == 1 and p["usedCores"] == 24, p


def test_workspace_holds_every_region(plan):
    d, n, t = 128, 4, 1000
    p = plan(d=d, dr=64, n=n, nkv=n, q=(t,))
    grads = 4 * t * n * (3 * d + 2 * 64) + 4 * t * n * 8  # dq, dk, dv, rope grads, D rows
    assert p["wsSlots"] >= grads
    # per core: S, dP (fp32), P, dS (input dtype), `slots` of each, and two fp32 dQ partial
    # slots (only without the L0C dK/dV sums: with a rope part here)
    assert p["accumKv"] == 0
    slots = 2 * p["slots"] * p["blockQ"] * p["blockKv"] * (4 + 2) + 2 * p["blockQ"] * d * 4
    assert p["workspace"] >= p["wsSlots"] + p["usedCores"] * slots


def test_causal_heads_are_cut_inside_units_to_balance_the_cores(plan):
    # TND 1 x 4K, 8 heads, causal: a head's 43 units (96 keys) cost from 4096 visible rows down
    # to 96; whole units leave one core ~4 % above the mean, so ranges start inside units
    p = plan(n=8, nkv=8, q=(4096,), mode=3, mask=1)
    assert p["qSplit"] == 1 and p["usedCores"] == 24
    cut = [(u, s) for u, s in zip(p["starts"], p["stepStarts"]) if s]
    assert len(cut) >= 8 and all(s < 4096 // 128 for _, s in cut), cut
    assert p["stepStarts"][0] == 0 and p["stepStarts"][-1] == 0 and p["starts"][-1] == p["unitCount"]
    # 2 x 2K, 32 heads: whole units plan within 2 % of the cut inside them, but leave the cores
    # of each three sharing eight heads ~11 us of Fixpipe apart (modelled): cut inside them too
    p = plan(n=32, nkv=32, q=(2048, 2048), mode=3, mask=1)
    assert sum(1 for s in p["stepStarts"] if s) >= 8, p["stepStarts"]


def test_dq_groups_a_core_holds_are_cast_in_its_main_loop(plan):
    # 2 x 2K, 32 heads, causal: 64 (batch, kv head) groups over 24 cores. The ranges of groups
    # a core casts in its loop are in order and disjoint; the groups between them (cut by a
    # core boundary, or ending too close to their core's end) are cast after the final barrier.
    p = plan(n=32, nkv=32, q=(2048, 2048), mode=3, mask=1)
    assert p["dqGroupCast"] == 1
    ranges = p["dqCast"]
    owned = sum(hi - lo for lo, hi in ranges)
    assert 20 <= owned < 64, ranges
    assert all(lo <= hi for lo, hi in ranges)
    assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:])), ranges
    # a core casts the first rows of the group after its own in its loop (those no later core's
    # kv blocks see), where that group starts in its range and no core owns it
    tails = p["dqTailRows"]
    assert sum(1 for t in tails if t) >= 16 and all(t <= 2048 for t in tails), tails
    nxt = [lo for lo, _ in ranges[1:]] + [64]
    assert all(t == 0 or hi < n for t, (_, hi), n in zip(tails, ranges, nxt)), (tails, ranges)
    # 1 x 4K, 8 heads: every group spans three cores, none is a core's alone: the flat cast-out
    assert plan(n=8, nkv=8, q=(4096,), mode=3, mask=1)["dqGroupCast"] == 0


def test_early_steps_where_the_row_term_pass_is_long(plan):
    # S/dP issued before the first barrier only where the cube's staging of more than the
    # pipelined + 1 steps fits in the row-term pass of every core, and at most 14 (the flag
    # counter); a slot each.
    for kw in (dict(), dict(q=(4096,), n=8, nkv=8, mode=3), dict(q=(8192,), n=2, nkv=2)):
        p = plan(**kw)
        assert p["earlySteps"] == 0 and p["slots"] == max(2, p["pipelined"] + 1), (kw, p)
    for kw, early in (
        (dict(q=(2048, 2048), n=32, nkv=32, mode=3), 10),
        (dict(q=(128,) * 4, n=192, nkv=16), 7),
        (dict(d=256, q=(128,) * 4, n=128, nkv=16), 9),
    ):
        p = plan(**kw)
        assert p["earlySteps"] == early and p["slots"] == early, (kw, p)
    p = plan(q=(8192, 8192), n=64, nkv=64)
    assert p["earlySteps"] == 14, p
