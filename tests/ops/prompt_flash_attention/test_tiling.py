"""The forward-core planning (op_host/common/tiling/forward_tiling.cpp) on its own: block sizes fit
the UB/L1/L0 budget, the work split covers every unit once in contiguous per-core ranges,
causal work spreads over all cores, and the plan is deterministic."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
UB_A2 = 196352  # Ascend910B2 UB as PlatformAscendC reports it (192 KiB - 256 B)
UB_USABLE = UB_A2 - 8192
MAX_INT = 2147483647


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.fail("g++ is required (the CPU target is built with it)")
    exe = tmp_path_factory.mktemp("tiling") / "tiling_driver"
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-O1",
            f"-I{ROOT / 'op_host'}",
            f"-I{ROOT / 'op_kernel'}",
            f"-I{ROOT}",
            str(Path(__file__).with_name("tiling_driver.cpp")),
            str(ROOT / "op_host/common/tiling/forward_tiling.cpp"),
            str(ROOT / "op_host/common/tiling/kv_staging_tiling.cpp"),
            str(ROOT / "op_host/common/tiling/forward_work_split.cpp"),
            "-o",
            str(exe),
        ],
        check=True,
    )

    def run(*problems):
        text = "".join(" ".join(str(v) for v in p) + "\n" for p in problems)
        out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True).stdout
        return [json.loads(line) for line in out.splitlines()]

    return run


def problem(b=1, n=1, nkv=1, sq=1024, skv=1024, d=128, mask=0, pre=MAX_INT, nxt=0, ub=UB_A2, aic=24):
    return (b, n, nkv, sq, skv, d, mask, pre, nxt, ub, aic)


# D = 16 and 64: with a head's keys past the K/V cache (S8K) P.V in two row parts (P of half the
# q-block in L0A at a time) and L0C's accumulator next to two S chunks allow 384 rows (S8K: 22
# q-blocks of 373 rows, rounded up to 384); D = 128: L0C's accumulator 192;
# 128 < D <= 256 without a mask or under a band: lazy P.V in 64-key blocks (K^T and V of a block
# fill L0B), L0C's accumulator 112 rows at D = 256; above 256: per-block P.V.
@pytest.mark.parametrize(
    "d,mask,rows,kv",
    [
        (16, 0, 192, 128),
        (64, 0, 192, 128),
        (128, 0, 96, 128),
        (192, 0, 64, 64),
        (192, 1, 64, 64),
        (256, 0, 56, 64),
        (256, 1, 56, 64),
        (512, 0, 32, 128),
    ],
)
def test_block_sizes_fit_the_buffers(plan, d, mask, rows, kv):
    (p,) = plan(problem(d=d, sq=8192, skv=8192, n=8, mask=mask))
    lazy = d <= 256
    assert p["ok"] and p["blockKv"] == kv and p["dChunk"] == (p["headDimAlign"] if kv == 64 else min(128, d))
    assert p["rowsPerVec"] == rows and p["blockQ"] == 2 * rows  # the largest that fits, 8 units/core
    assert p["ubBytes"] <= UB_USABLE and p["l1Bytes"] <= 524032 and p["l1PairBytes"] <= 524032
    bq, dp, sc, dc = p["blockQ"], p["headDimAlign"], p["sChunk"], p["dChunk"]
    pv = bq if bq <= 240 else (bq // 2 + 15) // 16 * 16  # P.V's row part (forward_layout.h PvPartRows)
    if p["lazyO"]:  # L0 regions of forward_cube.h: L0C [acc | S x2], L0A [P part | Q x2], L0B [K^T | V]
        assert sc % 16 == 0 and (bq * dp + 2 * sc * kv) * 4 <= 131072 and (pv * kv + 2 * sc * dc) * 2 <= 65536
        assert 2 * kv * dc * 2 <= 65536
        assert bq <= 192 or sc >= 32  # above 192 rows no 16-row S chunks
    else:
        assert sc == bq and bq * 128 * 4 <= 131072 and bq * 128 * 2 <= 65536  # L0C, L0A
    # sub-blocks of at most 64 rows (a multiple of 8) on the vector cores
    assert p["vecRows"] <= min(64, rows) and (p["vecRows"] % 8 == 0 or p["vecRows"] == rows)
    assert lazy == bool(p["lazyO"])
    # K/V staged (every key row loaded by 8 q-blocks at least; up to D = 64 K only, and without a
    # mask from 16 key blocks per head and 64 per core nothing), in pairs with 64-key blocks only
    assert p["kvNz"] == (1 if d > 64 else 2 if mask else 0) and p["kvNzPairs"] == (4 if kv == 64 else 0)


@pytest.mark.parametrize(
    "args",
    [
        dict(n=64, nkv=16, sq=570, skv=570, d=64),
        dict(n=64, nkv=64, sq=570, skv=570, d=72, mask=1),
        dict(n=64, nkv=8, sq=570, skv=570, d=128, mask=1),
    ],
)
def test_kernel_tests_of_192_row_q_blocks_get_them(plan, args):
    # the shapes of test_kernel_matches_golden.py::test_192_row_q_blocks_match_golden (570 rows:
    # three q-blocks, evened out to 190 rows, rounded up to 192); 500 rows come out even at 176
    (p,) = plan(problem(**args))
    # S chunks of 64 rows at D = 64 (its Q chunks are 64 columns wide), else of 32
    assert p["blockQ"] == 192 and p["lazyO"] == 1 and p["vecRows"] == 48
    assert p["sChunk"] == (64 if args["d"] == 64 else 32)
    (p,) = plan(problem(**dict(args, sq=500, skv=500)))
    assert p["blockQ"] == 176 and p["qBlocksPerHead"] == 3 and p["lazyO"] == 1


@pytest.mark.parametrize("d,sq,bq", [(64, 660, 224), (16, 700, 240)])
def test_kernel_tests_of_larger_q_blocks_get_them(plan, d, sq, bq):
    # the shapes of test_kernel_matches_golden.py::test_q_blocks_above_192_rows_below_d128_...
    for mask in (0, 1):
        (p,) = plan(problem(n=64, nkv=16, sq=sq, skv=sq, d=d, mask=mask))
        assert p["blockQ"] == bq and p["qBlocksPerHead"] == 3 and p["lazyO"] == 1 and p["sChunk"] >= 32


@pytest.mark.parametrize(
    "args,bq",
    [
        (dict(n=8, sq=2100, skv=2100, d=64, mask=1), 352),
        (dict(n=8, sq=2100, skv=2100, d=64, mask=1, pre=1500, nxt=-20), 304),
        (dict(n=24, nkv=6, sq=700, skv=2048, d=64), 352),
        (dict(n=24, nkv=6, sq=880, skv=2048, d=32), 304),
        (dict(n=4, sq=2048, skv=2048, d=64), 352),
    ],
)
def test_kernel_tests_of_two_part_q_blocks_get_them(plan, args, bq):
    # the shapes of test_kernel_matches_golden.py::test_two_part_q_blocks_match_golden: above 240
    # rows lazy P.V runs in two row parts, only where a head has 16 key blocks or more (2K keys;
    # 2047 keys keep whole q-blocks)
    (p,) = plan(problem(**args))
    assert p["blockQ"] == bq and p["lazyO"] == 1 and p["sChunk"] >= 32 and p["vecSBufs"] == 2
    (p,) = plan(problem(**dict(args, skv=2047, sq=min(args["sq"], 2047))))
    assert p["blockQ"] <= 240


@pytest.mark.parametrize(
    "b,n,nkv,sq,skv,d,splits",
    [
        (1, 1, 1, 448, 1024, 256, 6),
        (1, 2, 1, 1456, 1024, 256, 8),
        (1, 1, 1, 500, 3000, 128, 3),
        (1, 4, 4, 192, 4096, 128, 3),
        (1, 4, 4, 4096, 4096, 256, 6),
        (1, 1, 1, 8192, 8192, 256, 12),
        (1, 1, 1, 1456, 2048, 256, 3),
        (1, 3, 1, 3000, 2048, 256, 8),
        (1, 1, 1, 300, 3000, 72, 2),
        (1, 2, 1, 200, 2500, 40, 10),
        (1, 1, 1, 1, 4096, 128, 16),
    ],
)
def test_split_kv_tail_cuts_the_last_units_over_idle_cores(plan, b, n, nkv, sq, skv, d, splits):
    # the shapes of test_kernel_matches_golden.py::test_split_kv_tail_matches_golden and the
    # D = 256 sweep rows: every core takes tailPerCore whole units, the last units go in
    # pieces of whole key blocks covering the keys, as many per core that has any, no empty
    # piece
    (p,) = plan(problem(b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=d))
    q, pieces, per, cores = p["tailPerCore"], p["tailPieces"], p["tailCorePieces"], p["usedCores"]
    units = b * n * p["qBlocksPerHead"]
    assert p["tailSplits"] == splits and pieces % splits == 0 and pieces % per == 0 and pieces // per <= 24
    assert p["tailFirst"] == q * cores and units == q * cores + pieces // splits
    assert p["unitCount"] == q * cores + pieces and cores == (24 if q else pieces // per)
    assert p["starts"] == [c * q + min(c, pieces // per) * per for c in range(cores + 1)]
    keys = p["tailPieceBlocks"] * p["blockKv"]
    assert (splits - 1) * keys < skv <= splits * keys
    # a split unit's partial rows: a q-block's, or the short q-block's where those are split
    unit_rows = sq - (p["qBlocksPerHead"] - 1) * p["blockQ"] if p["foldQBlocks"] == 32 else p["blockQ"]
    rows = pieces // splits * unit_rows
    partials = splits * rows * (p["headDimAlign"] * 4 + 8)
    end = p["wsPartialOffset"] + partials
    assert p["wsPartialOffset"] % 512 == 0
    if p["qNzUnits"]:  # the Q copies after the partials
        assert end <= p["qNzOffset"] < end + 512 and p["workspace"] > p["qNzOffset"]
    else:
        assert p["workspace"] == end


def test_split_kv_tail_only_where_whole_units_leave_cores_idle(plan):
    # masks, bands and even splits keep whole units; so does D = 128 B1 N8 S4K, whose short
    # q-blocks' pieces would add partials and a combine pass to a launch L2 binds
    for args in (
        dict(sq=4096, skv=4096, n=4, d=256, mask=1),
        dict(n=8, sq=4096, skv=4096),
        dict(n=16, nkv=4, sq=2048, skv=2048),
    ):
        (p,) = plan(problem(**args))
        assert p["tailSplits"] == 0 and p["unitCount"] == args.get("b", 1) * args["n"] * p["qBlocksPerHead"]


@pytest.mark.parametrize(
    "b,n,nkv,sq,skv,d,splits",
    [
        (2, 8, 8, 2048, 2048, 256, 3),  # the sweep row: 16 short q-blocks of 32 rows in 48 pieces
        (1, 4, 4, 4096, 4096, 256, 6),
        (1, 10, 10, 300, 1024, 256, 4),  # the shapes of test_kernel_matches_golden.py
        (2, 5, 5, 300, 1000, 256, 4),
        (1, 10, 5, 300, 1000, 192, 4),
    ],
)
def test_split_kv_tail_cuts_the_short_q_blocks(plan, b, n, nkv, sq, skv, d, splits):
    # Above D = 128 (the cube's K/V stream binds) with a short last q-block per head and no more
    # leftover units than heads: every head's short q-block runs after all whole ones
    # (UNITS_SHORT_LAST), so the tail's pieces are the short q-blocks' key ranges
    (p,) = plan(problem(b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=d))
    count, bq, q = p["qBlocksPerHead"], p["blockQ"], p["tailPerCore"]
    assert p["foldQBlocks"] == 32 and p["tailSplits"] == splits
    assert sq % bq != 0 and count == -(-sq // bq)
    rest = b * n * count - q * 24
    assert 0 < rest <= b * n and p["tailPieces"] == rest * splits and p["tailFirst"] == q * 24


@pytest.mark.parametrize(
    "b,n,nkv,sq,skv,d,units",
    [
        (2, 8, 8, 2048, 2048, 256, 14),  # the sweep row: 12 whole units and 2 pieces per core
        (1, 40, 20, 300, 1100, 256, 5),  # the shapes of test_kernel_matches_golden.py
        (2, 16, 8, 448, 1024, 256, 6),
        (1, 32, 16, 448, 1100, 192, 6),
    ],
)
def test_late_staging_stages_q_from_each_cores_fourth_unit(plan, b, n, nkv, sq, skv, d, units):
    # With K/V staged during the first units the vector cores also write each core's Q blocks
    # from its fourth unit on in Nz order (ForwardParams::qNzUnits), a slot of blockQ rows per
    # unit position, after the rest of the workspace
    (p,) = plan(problem(b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=d))
    assert p["kvNzLate"] != 0 and p["qNzFirst"] == 3 and p["qNzUnits"] == units
    assert units == max(p["starts"][c + 1] - p["starts"][c] for c in range(p["usedCores"]))
    slots = p["usedCores"] * units * p["blockQ"] * p["headDimAlign"] * 2
    assert p["qNzOffset"] % 512 == 0 and p["workspace"] == p["qNzOffset"] + slots


@pytest.mark.parametrize("n,sq,skv,mask,units", [(12, 1024, 1024, 1, 7), (24, 560, 700, 0, 5), (4, 4096, 4096, 0, 7)])
def test_q_staged_where_kv_is_staged_before_the_loop(plan, n, sq, skv, mask, units):
    # the shapes of test_kernel_matches_golden.py and the D = 256 S4K sweep row: the copies in
    # chunks of the UB the softmax leaves free; under a band from each core's second unit on
    (p,) = plan(problem(n=n, nkv=n, sq=sq, skv=skv, d=256, mask=mask))
    first = 1 if mask else 3
    assert p["kvNzLate"] == 0 and p["kvNzOwnRows"] == 0 and p["qNzFirst"] == first and p["qNzUnits"] == units


def test_q_stays_with_the_caller_without_two_copies_per_core(plan):
    for args in (
        dict(n=12, sq=448, skv=1024, d=256),  # late staging, two units per core
        dict(sq=8192, skv=8192, d=256),  # four items per core: one copy
        dict(b=2, n=8, sq=2048, skv=2048),  # D = 128
    ):
        (p,) = plan(problem(**args))
        assert p["qNzUnits"] == 0 and p["qNzOffset"] == 0


@pytest.mark.parametrize(
    "d,sq,skv,pairs", [(256, 500, 300, 4), (256, 333, 701, 4), (200, 290, 333, 0), (192, 300, 300, 4)]
)
def test_kernel_tests_of_lazy_pv_above_d128_get_it(plan, d, sq, skv, pairs):
    # the shapes of test_kernel_matches_golden.py::test_lazy_pv_above_d128_matches_golden
    (p,) = plan(problem(n=8, nkv=2, sq=sq, skv=skv, d=d))
    assert p["lazyO"] == 1 and p["blockKv"] == 64 and p["dChunk"] == p["headDimAlign"]
    assert p["kvNz"] == (1 if pairs else 0) and p["kvNzPairs"] == pairs and p["qBlocksPerHead"] >= 2
    assert p["kvPairFirst"] == 0 and p["vecRows"] == p["rowsPerVec"]
    # under a band (causal) too, with the next S's K/V pair loaded ahead of P and vector
    # sub-blocks of at most 48 rows (forward_tiling.cpp WIDE_LAZY_BAND_VEC_ROWS)
    (p,) = plan(problem(n=8, nkv=2, sq=sq, skv=skv, d=d, mask=1))
    assert p["lazyO"] == 1 and p["blockKv"] == 64 and p["kvNzPairs"] == pairs
    assert p["kvPairFirst"] == (1 if pairs else 0) and p["vecRows"] == min(48, p["rowsPerVec"])


@pytest.mark.parametrize("b,d,sq,skv,mask", [(2, 128, 333, 150, 0), (2, 80, 333, 701, 1), (2, 32, 200, 40, 0)])
def test_kernel_tests_of_s_ahead_of_the_staging_get_it(plan, b, d, sq, skv, mask):
    # the shapes of test_kernel_matches_golden.py::test_s_ahead_of_the_kv_staging_matches_golden:
    # K/V staged, K and V apart (the cube's first S blocks go out before the staging's barrier),
    # one shape per staging mode: V only (few loads per key row), both (masked), K only (D <= 64)
    (p,) = plan(problem(b=b, n=8, nkv=2, sq=sq, skv=skv, d=d, mask=mask))
    assert p["kvNz"] == (2 if d <= 64 else 1 if mask else 3) and p["kvNzPairs"] == 0 and p["maskSummary"] == 0


@pytest.mark.parametrize(
    "b,n,nkv,sq,skv,d,mask,kv_nz,cache,bufs",
    [
        (2, 8, 2, 333, 150, 80, 0, 3, 10, 2),
        (1, 8, 2, 100, 600, 128, 0, 3, 6, 2),
        (2, 8, 2, 300, 20, 96, 0, 3, 8, 2),
        (2, 4, 4, 700, 150, 80, 0, 3, 10, 2),
        (2, 6, 2, 250, 200, 112, 0, 3, 6, 2),
        (2, 8, 2, 333, 260, 48, 0, 2, 16, 2),
        (2, 8, 2, 333, 701, 64, 1, 2, 14, 1),
        (1, 8, 2, 120, 2100, 64, 0, 2, 15, 1),
        (1, 2, 1, 2048, 2048, 32, 1, 2, 16, 2),
        (1, 8, 2, 300, 300, 160, 1, 1, 0, 2),
        (1, 8, 1, 300, 300, 144, 1, 1, 0, 2),
        (1, 8, 2, 200, 450, 256, 1, 1, 0, 2),
    ],
)
def test_kernel_tests_of_the_staging_modes_get_them(plan, b, n, nkv, sq, skv, d, mask, kv_nz, cache, bufs):
    # the shapes of test_kernel_matches_golden.py::test_staging_modes_match_golden (without the
    # ones with actual lengths): V only, K only, or both in pairs with the next pair ahead of P
    (p,) = plan(problem(b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=d, mask=mask))
    assert p["kvNz"] == kv_nz and p["lazyO"] == 1 and p["tailSplits"] == 0
    assert p["kvCacheTiles"] == cache and p["l1Bufs"] == bufs and p["l1CacheBytes"] <= 512 * 1024
    # without a mask in two Q copies one K tile more than V's (16: the most), with one P copy
    # where two leave no room for it; under a mask never one P copy alone
    if not mask and bufs == 2 and 0 < cache < 16:
        assert p["kvCacheKeyTiles"] == cache + 1
    if mask:
        assert p["kvCacheOneP"] == 0
    pairs = kv_nz == 1
    assert p["kvNzPairs"] == (4 if pairs else 0) and p["kvPairFirst"] == (1 if pairs else 0)
    if pairs:
        assert p["blockKv"] == 64 and p["vecRows"] == min(48, p["rowsPerVec"])


@pytest.mark.parametrize("n,sq,d", [(8, 4096, 128), (1, 8192, 128), (8, 1024, 128), (16, 4096, 64)])
def test_causal_staged_kv_fills_l1_with_the_kv_cache(plan, n, sq, d):
    # lazy P.V, K and V staged apart: as many K and V tiles as L1 holds beside Q and P (five
    # each at D = 128, 176-row q-blocks, 128-key blocks; ten at D = 64, 224 rows), up to sixteen;
    # with at most two units per core or at D <= 64 one copy of Q and P: six at D = 128,
    # thirteen at D = 64
    (p,) = plan(problem(n=n, sq=sq, skv=sq, d=d, mask=1))
    assert p["kvNz"] == (1 if d > 64 else 2) and p["kvNzPairs"] == 0 and p["lazyO"] == 1
    assert 3 <= p["kvCacheTiles"] <= 16 and p["l1CacheBytes"] <= 512 * 1024
    one = p["unitCount"] <= 2 * p["usedCores"] or d <= 64
    assert p["l1Bufs"] == (1 if one and p["kvCacheTiles"] > 3 else 2)
    if d == 128 and p["blockQ"] == 176:
        assert p["kvCacheTiles"] == (6 if one else 5)
    if d == 64 and p["blockQ"] == 224:
        assert p["kvCacheTiles"] == 13


WIDE_LAZY_PROBE = r"""
#include "common/tiling/forward_tiling.h"
#include <cstdio>
#include <cstdlib>
int main(int argc, char **argv)
{
    fa_host::CoreBudget b;
    b.aicNum = 24;
    b.ub = std::strtoull(argv[1], nullptr, 10);
    b.l1 = 524032;
    b.l0a = b.l0b = 65536;
    b.l0c = 131072;
    for (bool stats : {false, true}) {
        uint32_t rows = 0, kv = 0, dc = 0, v = 0, bufs = 0;
        const bool ok = fa_host::ChooseWideLazyBlocks(256, 2, b, rows, kv, dc, stats);
        const bool fits = ok && fa_host::ChooseVecRows(rows, kv, dc, 2, b.ub - 8192, v, bufs, stats);
        std::printf("%d %u %d\n", ok, rows, fits);
    }
    return 0;
}
"""


@pytest.mark.parametrize("ub", [UB_A2, 136 * 1024, 114 * 1024])
def test_wide_lazy_blocks_count_the_statistics_rows(tmp_path, ub):
    # the rows with the softmax statistics (FAV, FAG) must fit UB beside the rest, as in
    # ChooseBlocks; without them (PFA) the A2 budget keeps 56 rows per vector core at D = 256 (at
    # 136 KB 56 rows, 48 with them: with sub-blocks tmp holds 64 rows, forward_layout.h)
    src = tmp_path / "probe.cpp"
    src.write_text(WIDE_LAZY_PROBE)
    exe = tmp_path / "probe"
    subprocess.run(
        ["g++", "-std=c++17", "-O1", f"-I{ROOT / 'op_host'}", f"-I{ROOT / 'op_kernel'}", f"-I{ROOT}", str(src)]
        + [
            str(ROOT / "op_host/common/tiling/forward_tiling.cpp"),
            str(ROOT / "op_host/common/tiling/kv_staging_tiling.cpp"),
            str(ROOT / "op_host/common/tiling/forward_work_split.cpp"),
        ]
        + ["-o", str(exe)],
        check=True,
    )
    out = subprocess.run([str(exe), str(ub)], capture_output=True, text=True, check=True).stdout.split()
    plain, stats = [int(v) for v in out[:3]], [int(v) for v in out[3:]]
    assert plain[0] == 1 and plain[2] == 1 and stats[0] == 1 and stats[2] == 1
    assert stats[1] <= plain[1]
    if ub == UB_A2:
        assert plain[1] == 56
    else:
        assert stats[1] < plain[1]


@pytest.mark.parametrize("sq", [8192, 2048, 1024])
def test_unmasked_staged_kv_takes_one_q_and_p_copy_for_more_cache_tiles(plan, sq):
    # without a mask every unit boundary of a head reuses the cache: one copy of Q and P where
    # that frees L1 for another K/V tile pair (six at D = 128, 176-row q-blocks) and a unit runs
    # at least 16 key blocks; with fewer (S1K: 8) two Q copies and one P copy, five K/V tile
    # pairs and a sixth K tile (ForwardParams::kvCacheOneP); one copy: six pairs and a seventh K tile
    (p,) = plan(problem(n=16, sq=sq, skv=sq))
    assert p["kvNz"] == 1 and p["kvNzPairs"] == 0 and p["lazyO"] == 1 and p["l1CacheBytes"] <= 512 * 1024
    one = sq >= 16 * p["blockKv"]
    assert p["l1Bufs"] == (1 if one else 2)
    if p["blockQ"] == 176:
        assert p["kvCacheTiles"] == (6 if one else 5) and p["kvCacheKeyTiles"] == (7 if one else 6)
        assert p["kvCacheOneP"] == (0 if one else 1)


@pytest.mark.parametrize(
    "n,sq,d,mask",
    [(8, 4096, 64, 0), (4, 8192, 64, 0), (16, 4096, 64, 1), (8, 2048, 128, 0), (16, 2048, 128, 0), (8, 1024, 128, 0)],
)
def test_kv_cache_takes_one_more_k_tile_where_l1_has_room(plan, n, sq, d, mask):
    # the K/V cache's K tiles: its pairs, one more where L1 holds another K tile but no pair
    # (B1 N8 S4K D64: 352-row q-blocks, 11 pairs and a 12th K tile; D = 128 176-row q-blocks
    # with one Q and P copy: 6 pairs and a 7th K tile)
    (p,) = plan(problem(n=n, sq=sq, skv=sq, d=d, mask=mask))
    assert p["lazyO"] == 1 and p["kvNzPairs"] == 0 and p["kvCacheTiles"] >= 3
    tile = p["blockKv"] * p["headDimAlign"] * 2
    assert p["kvCacheKeyTiles"] - p["kvCacheTiles"] in (0, 1)
    assert p["l1CacheBytes"] <= 512 * 1024
    assert p["kvCacheKeyTiles"] == 16 or p["l1CacheBytes"] + tile > 512 * 1024
    if (n, sq, d) == (8, 4096, 64):
        assert (p["blockQ"], p["kvCacheTiles"], p["kvCacheKeyTiles"]) == (352, 11, 12)


@pytest.mark.parametrize(
    "b,n,nkv,sq,mask,staged",
    [
        (1, 8, 8, 4096, 0, False),  # 96 units of 32 key blocks on 24 cores
        (4, 8, 8, 2048, 0, False),
        (1, 16, 4, 4096, 0, False),  # GQA
        (1, 16, 16, 4096, 1, False),  # under a mask: MHA, 8 units per core
        (1, 16, 16, 2048, 1, True),  # under a mask, 4 units per core
        (1, 16, 4, 4096, 1, True),  # under a mask, GQA
        (1, 8, 8, 2048, 0, True),  # 32 key blocks per core
        (1, 32, 32, 1024, 0, True),  # 8 key blocks per head
        (1, 24, 24, 2100, 0, False),  # test_kernel_matches_golden.py's unstaged shapes
        (1, 32, 32, (1500, 2100, 300), 1, False),  # and its masked one: 192 units
    ],
)
def test_d64_stages_nothing_on_long_unmasked_planes(plan, b, n, nkv, sq, mask, staged):
    # D = 64: K alone staged (its scale folded in); without a mask, from 16 key blocks per head
    # and 64 per core, under a mask (MHA) from 16 key blocks per head and 8 units per core,
    # nothing: the K/V cache takes the caller's rows, the scale on the vector
    sq, skv, nxt = sq if isinstance(sq, tuple) else (sq, sq, 0)
    (p,) = plan(problem(b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=64, mask=mask, nxt=nxt))
    assert p["lazyO"] == 1 and p["kvNzPairs"] == 0 and p["kvCacheTiles"] >= 3
    assert p["kvNz"] == (2 if staged else 0)
    assert (p["kvNzRows"] != 0) == staged and p["l1CacheBytes"] <= 512 * 1024


def test_smaller_ub_gives_smaller_blocks_and_none_fits_is_an_error(plan):
    big, small, none = plan(problem(sq=8192, n=8), problem(sq=8192, n=8, ub=96 * 1024), problem(ub=16 * 1024))
    assert small["ok"] and small["rowsPerVec"] < big["rowsPerVec"] and small["ubBytes"] <= 96 * 1024 - 8192
    assert not none["ok"] and "no block size fits UB" in none["why"]


@pytest.mark.parametrize(
    "args",
    [
        dict(),
        dict(mask=1),
        dict(b=3, n=5, sq=300, skv=77, mask=1, pre=40, nxt=-8),
        dict(sq=1, skv=16, d=16),
        dict(b=2, n=2, sq=0),
        dict(n=64, sq=4096, mask=1),
    ],
)
def test_split_covers_every_unit_once_in_contiguous_ranges(plan, args):
    (p,) = plan(problem(**args))
    starts = p["starts"]
    assert starts[0] == 0 and starts[-1] == p["unitCount"]
    assert all(a < b for a, b in zip(starts, starts[1:])) or p["unitCount"] == 0  # no idle core
    assert 1 <= p["usedCores"] <= 24 and len(starts) == p["usedCores"] + 1
    assert p["unitCount"] == args.get("b", 1) * args.get("n", 1) * p["qBlocksPerHead"]


def test_causal_single_head_spreads_over_all_cores(plan):
    (p,) = plan(problem(sq=2048, skv=2048, mask=1))
    assert p["usedCores"] >= 20 and p["blockQ"] == 64 and p["foldQBlocks"] == 0
    sizes = [b - a for a, b in zip(p["starts"], p["starts"][1:])]
    # every planned core works; the light early q-blocks are grouped, the heavy late ones alone
    assert min(sizes) >= 1 and sizes[0] > sizes[-1]


def test_causal_single_head_with_long_rows_folds_its_q_blocks(plan):
    # S = 8K in q-blocks of 176-192 rows: in the plain order the 16 heaviest q-blocks need a
    # core each and the others share 8 cores; folded (0, last, 1, last - 1, ...) a light and a
    # heavy one pair up, so every core gets about the same number of key blocks
    # (the short q-block, if any, may come first: bit 4, UNITS_TAIL_FIRST)
    (p,) = plan(problem(sq=8192, skv=8192, mask=1))
    bq, fold = p["blockQ"], p["foldQBlocks"]
    assert 176 <= bq <= 192 and fold & ~16 == 1
    count = p["qBlocksPerHead"]
    order = [i // 2 if i % 2 == 0 else count - 1 - i // 2 for i in range(count)]
    assert sorted(order) == list(range(count))
    shift = count * bq - 8192 if fold & 16 else 0
    blocks = [-(-min(bq * (q + 1) - shift, 8192) // 128) for q in order]  # key blocks of each unit
    starts = p["starts"]
    per_core = [sum(blocks[a:b]) for a, b in zip(starts, starts[1:])]
    assert max(per_core) <= 1.2 * sum(blocks) / len(per_core)


@pytest.mark.parametrize(
    "b, n, nkv, s, d, folded",
    [
        (4, 16, 16, 1024, 128, True),
        (8, 8, 8, 1024, 128, True),
        (1, 16, 4, 2048, 128, False),
        (2, 8, 8, 2048, 256, False),
        (1, 32, 32, 1024, 64, False),
        (2, 24, 8, 400, 128, True),
        (1, 32, 8, 450, 128, True),
        (4, 16, 16, 1024, 320, False),  # above D = 128 (not measured there), not the wide lazy blocks either
    ],
)
def test_unmasked_tie_takes_the_folded_q_block_order_where_cores_cut_heads(plan, b, n, nkv, s, d, folded):
    # S1K D = 128 in six q-blocks of 176 rows and one of 144, 16 units per core: every order plans
    # alike and the folded one (0, 5, 1, 4, 2, 3: the short q-block second) is taken. Not where a
    # core takes fewer units than a head has q-blocks (S2K, 8 per core), nor at D = 256 or 64.
    (p,) = plan(problem(b=b, n=n, nkv=nkv, sq=s, skv={400: 333, 450: 700}.get(s, s), d=d))
    assert (p["foldQBlocks"] & 1 == 1) == folded
    if folded and s == 1024:
        assert p["qBlocksPerHead"] == 6 and p["blockQ"] == 176 and p["starts"][1] == 16 and p["foldQBlocks"] == 1


def test_workspace_is_four_hand_off_slots_per_core(plan):
    # WS_SLOTS = 4 slots of S (fp32) and P (input dtype), 4 + 4 (final lazy P.V sums of units
    # ending in each block slot) of O (fp32) per core and 12 control lines of 64 B: the cube runs
    # three key blocks ahead of the P.V it waits for, and a zero fractal (attention_core/forward/forward_params.h)
    (p,) = plan(problem(d=72, sq=512, n=4))
    bq, dp = p["blockQ"], p["headDimAlign"]
    assert dp == 80
    assert p["wsBytesPerCore"] == 4 * (bq * 128 * 4 + bq * 128 * 2) + 8 * bq * dp * 4 + 12 * 64 + 512
    assert p["workspace"] == p["usedCores"] * p["wsBytesPerCore"]


def test_plan_is_deterministic(plan):
    a, b = plan(problem(b=2, n=3, sq=777, mask=1, pre=100, nxt=5), problem(b=2, n=3, sq=777, mask=1, pre=100, nxt=5))
    assert a == b


def test_mask_plane_shared_by_heads_gets_a_summary_after_the_slots(plan):
    # one [Sq, Skv] plane serves all 32 heads at D = 64: the vector cores mark its 16-row x
    # 128-key tiles once (mask_band.h Prepare) and the workspace holds the marks after the
    # per-core slots
    (p,) = plan(problem(n=32, sq=4096, skv=4000, d=64, mask=1))
    assert p["maskSummary"] == 1
    assert p["summaryCols"] == 32 and p["summaryPitch"] == 256 + 8
    slots = p["usedCores"] * p["wsBytesPerCore"]
    assert p["wsMaskSummary"] >= slots and p["wsMaskSummary"] % 512 == 0
    assert p["workspace"] == p["wsMaskSummary"] + 32 * 264
    # the pass reads the plane's band before the main loop: not for a single (batch, head), nor
    # for a few (at D = 128: pairs x keys below 64K, or under 2K keys); no mask, no summary
    one, few, d128, d128s1k, none = plan(
        problem(n=1, sq=4096, d=64, mask=1),
        problem(n=8, sq=4096, d=64, mask=1),
        problem(n=16, sq=2048, mask=1),
        problem(n=64, sq=1024, mask=1),
        problem(n=32, sq=4096, mask=0),
    )
    for p in (one, few, d128, d128s1k, none):
        assert p["maskSummary"] == 0
    staged = 2 * 128 * none["kvNzRows"] * 2  # one KV head: K and V in Nz order after the slots
    assert none["workspace"] == none["kvNzOffset"] + staged


def test_summary_at_d128_from_64k_pair_keys_and_then_heads_not_in_a_row(plan):
    # At D = 128 where (batch, head) pairs x keys reach 64K from 2K keys on (forward_tiling.cpp
    # MaskSummaryPays); with the summary the units keep a head's q-blocks in a row
    # (UNITS_HEADS_INNER off: the summary skips the clear tiles' loads, and a head's q-blocks in
    # a row reuse the cached K/V)
    b2n16, b4n16, gqa, s4k, kernel = plan(
        problem(b=2, n=16, nkv=16, sq=2048, skv=2048, mask=1),
        problem(b=4, n=16, nkv=16, sq=2048, skv=2048, mask=1),
        problem(n=32, nkv=8, sq=2048, skv=2048, mask=1),
        problem(n=16, nkv=16, sq=4096, skv=4096, mask=1),
        problem(n=32, nkv=8, sq=300, skv=2048, mask=1),  # test_kernel_matches_golden.py's D = 128 summary shape
    )
    for p in (b2n16, b4n16, gqa, s4k, kernel):
        assert p["maskSummary"] == 1 and p["foldQBlocks"] & 2 == 0
    assert kernel["kvNz"] == 1  # K/V staged: the cube's first S goes out before the barrier


def test_only_value_staged_where_the_kv_cache_leaves_few_loads_per_key_row(plan):
    # S1K: six q-blocks of eight key blocks per head, each after the first finds five or six of
    # them in the cube's K/V cache (~2.9 loads per key row): only V is staged and K loads as the
    # caller wrote it. Longer key ranges (S1K x 4K: 5.1 loads), more q-blocks (S2K: 7.9) or a
    # mask keep both staged.
    s1k, s1k4k, s2k, masked = plan(
        problem(b=4, n=16, nkv=16),
        problem(n=8, nkv=8, skv=4096),
        problem(b=2, n=8, nkv=8, sq=2048, skv=2048),
        problem(b=4, n=16, nkv=16, mask=1),
    )
    assert s1k["kvNz"] == 3 and s1k["kvNzPairs"] == 0  # KV_NZ_V_ONLY
    for p in (s1k4k, s2k, masked):
        assert p["kvNz"] == 1  # KV_NZ_BOTH


def test_key_value_staged_in_nz_only_where_key_blocks_are_loaded_several_times(plan):
    # 4096 queries in q-blocks: every key row is loaded once per q-block, so the vector cores
    # stage K and V once in the cube's Nz order (kv_nz.h) after the per-core slots; a single
    # q-block (or a head dim the 16-element columns do not divide) loads them as they are.
    many, single, odd = plan(problem(sq=4096, skv=4000), problem(sq=16, skv=4000), problem(sq=4096, d=72))
    assert many["kvNz"] == 1 and many["kvNzRows"] == 4000 + 16 and many["kvNzChunk"] % 16 == 0
    slots = many["usedCores"] * many["wsBytesPerCore"]
    assert many["kvNzOffset"] >= slots and many["kvNzOffset"] % 512 == 0
    assert many["workspace"] == many["kvNzOffset"] + 2 * 128 * many["kvNzRows"] * 2
    assert single["kvNz"] == 0 and odd["kvNz"] == 0
    # up to D = 64 only K (the cube converts V's rows itself), in the same region layout
    (small,) = plan(problem(sq=4096, skv=4000, d=64))
    assert small["kvNz"] == 2 and small["kvNzPairs"] == 0 and small["kvNzRows"] == 4000 + 16
    assert small["workspace"] == small["kvNzOffset"] + 2 * 64 * small["kvNzRows"] * 2
    # the single q-block goes in key ranges over the cores (the split-KV tail): its partials
    # follow the slots, no staged K/V between
    slots = single["usedCores"] * single["wsBytesPerCore"]
    assert single["tailSplits"] > 1 and single["wsPartialOffset"] == -(-slots // 512) * 512


@pytest.mark.parametrize(
    "b,n,nkv,sq,skv,d,mask,rows",
    [
        (2, 16, 16, 600, 200, 128, 0, 48),  # test_kernel_matches_golden.py OWN_STAGING_SHAPES
        (2, 48, 16, 600, 200, 64, 0, 64),
        (2, 24, 24, 600, 200, 128, 1, 48),
        (1, 32, 32, 1000, 256, 64, 1, 64),
        (2, 16, 16, 700, 300, 128, 0, 16),
        (4, 16, 16, 1024, 1024, 128, 0, 16),  # the sweep's B4 N16 S1K: 1 or 2 regions of its own per core
        (2, 8, 8, 900, 256, 128, 1, 0),  # every region is some core's first: nothing of a core's own
        (1, 8, 2, 300, 300, 160, 1, 0),  # one unit per core
        # ~21 regions of its own per core: more than the 15 unconsumed sets the cube's ready flag
        # counter holds, which the vector cores could raise before the cube reaches the first
        (4, 128, 128, 1000, 32, 64, 0, 0),
        (16, 32, 32, 1024, 512, 64, 0, 0),
    ],
)
def test_own_staging_where_a_core_has_regions_of_its_own(plan, b, n, nkv, sq, skv, d, mask, rows):
    # K/V staged per core (ForwardParams::kvNzOwnRows, kv_nz.h): units in (batch, head, q-block)
    # order, some core's run holds a region that is neither its first nor the next core's first,
    # and UB holds three chunks of 16 rows or more beside the vector stage's buffers.
    (p,) = plan(problem(b, n, nkv, sq, skv, d, mask))
    assert p["kvNz"] != 0 and p["kvNzOwnRows"] == rows
    if rows:
        assert p["tailSplits"] <= 1 and p["foldQBlocks"] & 14 == 0
        assert p["ubBytes"] + (3 * rows * ((d + 15) // 16 * 16) + 32 * 16) * 2 <= UB_A2 - 8192


@pytest.mark.parametrize(
    "b,n,nkv,sq,skv,d,mask,rows",
    [
        (2, 8, 8, 2048, 2048, 256, 0, 16),  # the sweep's B2 N8 S2K D256: 0.67 staged rows per key
        (1, 12, 12, 448, 1024, 256, 0, 16),  # test_kernel_matches_golden.py LATE_STAGING_SHAPES
        (1, 32, 16, 448, 1100, 192, 0, 48),  # with a split-KV tail
        (1, 4, 4, 4096, 4096, 256, 0, 0),  # the sweep's B1 N4 S4K D256: 0.17 staged rows per key
        (1, 1, 1, 8192, 8192, 256, 0, 0),  # B1 N1 S8K: 0.05
        (2, 8, 8, 2048, 2048, 256, 1, 0),  # a band: units with few keys
        (2, 8, 8, 2048, 2048, 128, 0, 0),  # D = 128: K and V apart (no pairs)
        (1, 24, 24, 448, 960, 256, 0, 0),  # 15 key blocks per unit
    ],
)
def test_late_staging_where_the_pass_is_long_against_a_first_unit(plan, b, n, nkv, sq, skv, d, mask, rows):
    # K/V staged during each core's first unit (ForwardParams::kvNzLate, kv_nz.h LateStart): K/V
    # pairs, every unit seeing all keys, at least 16 key blocks per unit and a vector core's share
    # of the pass at least one row per two keys; then the scale stays off the staged K.
    (p,) = plan(problem(b, n, nkv, sq, skv, d, mask))
    assert p["kvNzLate"] == rows
    if rows:
        assert p["kvNz"] == 1 and p["kvNzPairs"] != 0 and p["kvNzOwnRows"] == 0
        assert p["ubBytes"] + (3 * rows * ((d + 15) // 16 * 16) + 32 * 16) * 2 <= UB_A2 - 8192


# (b, n, nkv, sq, skv, d) of the golden tests' GQA deals (test_kernel_matches_golden.py
# GQA_DEAL_SHAPES) and the sweep's B1 N8/2 S2K; at D = 64 none (DEAL_MIN_HEAD_DIM_EXCL).
GQA_DEALT = [
    (1, 6, 3, 1000, 1000, 128),
    (1, 4, 2, 1500, 1500, 128),
    (1, 9, 3, 600, 700, 128),
    (1, 15, 5, 512, 600, 128),
    (2, 4, 2, 777, 777, 128),
    (1, 8, 2, 2048, 2048, 128),
]


@pytest.mark.parametrize("b,n,nkv,sq,skv,d", GQA_DEALT)
def test_causal_gqa_units_dealt_by_cost_keep_a_group_together(plan, b, n, nkv, sq, skv, d):
    # Causal GQA dealt by cost (UNITS_TABLE = 4): the table holds every unit of the (b, n,
    # q-block) order once, and each core's units run by (b, KV head, q-block, head), so a group's
    # heads of one q-block on a core come in a row.
    (p,) = plan(problem(b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=d, mask=1))
    assert p["foldQBlocks"] == 4
    # a block's P.V leaves its last 32 head-dim columns for the next S's chunks
    assert p["pvFirstCols"] == d - 32
    order, starts, q = p["order"], p["starts"], p["qBlocksPerHead"]
    assert sorted(order) == list(range(p["unitCount"])) and starts[0] == 0 and starts[-1] == p["unitCount"]
    g = n // nkv

    def key(u):
        bn, qb = divmod(u, q)
        bb, h = divmod(bn, n)
        return (bb, h // g, qb, h)

    for c in range(p["usedCores"]):
        run = [key(u) for u in order[starts[c] : starts[c + 1]]]
        assert run == sorted(run)


def test_no_table_without_gqa_or_a_band_or_at_d64(plan):
    # Dense GQA, causal without GQA, causal GQA at D = 64: contiguous ranges of the fixed
    # orders, no table.
    for p in plan(
        problem(n=16, nkv=4, sq=2048, d=128),
        problem(n=8, nkv=8, sq=4096, d=128, mask=1),
        problem(n=12, nkv=4, sq=1024, d=64, mask=1),
    ):
        assert p["foldQBlocks"] & 4 == 0 and p["order"] == [] and p["pvFirstCols"] == 0


def test_long_staging_pass_takes_chunks_through_the_s_buffers(plan):
    # The K/V staging pass before the barrier converts kvNzChunk rows per copy (kv_nz.h Prepare).
    # Where it moves >= 256 KiB per vector core (kv_staging_tiling.h PlanKvNzChunk) the Nz copies
    # go into the two 48-row S buffers (forward_layout.h KvStagingBytes): 96-row chunks, where the
    # accumulator and tmp hold 48; a shorter pass (one head at S8K) and per-core staging keep them.
    long_pass, short_pass, own = plan(
        problem(b=2, n=16, nkv=16, sq=2048, skv=2048, mask=1),  # the sweep's causal B2 N16 S2K
        problem(sq=8192, skv=8192, mask=1),
        problem(b=2, n=16, nkv=16, sq=600, skv=200),
    )
    assert long_pass["kvNz"] == 1 and long_pass["kvNzOwnRows"] == 0
    assert long_pass["rowsPerVec"] == 96 and long_pass["vecRows"] == 48 and long_pass["kvNzChunk"] == 96
    assert short_pass["kvNz"] == 1 and short_pass["kvNzChunk"] == 48
    assert own["kvNzOwnRows"] != 0 and own["kvNzChunk"] == 32
    # test_kernel_matches_golden.py STAGING_MODE_SHAPES: 72 rows per vector core in 40-row
    # sub-blocks, 64-row chunks where the accumulator and tmp hold 32
    (golden,) = plan(problem(n=12, nkv=12, sq=576, skv=2048, mask=1))
    assert golden["kvNz"] == 1 and golden["kvNzOwnRows"] == 0 and golden["usedCores"] == 24
    assert golden["rowsPerVec"] == 72 and golden["vecRows"] == 40 and golden["kvNzChunk"] == 64


@pytest.mark.parametrize(
    "b,n,nkv,sq,skv,d,mask,keys",
    [
        (1, 8, 8, 1024, 4096, 128, 0, 8 * 128),  # the sweep's B1 N8 S1K x 4K: two units per core
        (1, 8, 8, 4096, 4096, 128, 0, 0),  # B1 N8 S4K: three runs of seven or eight units, 12 loads
        (1, 1, 1, 8192, 8192, 128, 0, 0),  # B1 N1 S8K: 24 runs of two units of one head
        (1, 8, 8, 1024, 3900, 128, 0, 25 * 128),  # a short last key block (not staged)
        (1, 16, 8, 512, 4096, 128, 0, 8 * 128),  # GQA: three runs of two units per KV head
        (1, 6, 2, 1024, 4000, 128, 0, 0),  # GQA: 12 runs of two units per KV head
        (1, 8, 8, 1024, 4096, 128, 1, 0),  # a mask
        (2, 8, 8, 2048, 2048, 128, 0, 0),  # cores whose units span two heads
        (1, 16, 4, 2048, 2048, 128, 0, 0),  # 16 key blocks against 6 cache tiles
    ],
)
def test_cached_key_blocks_stay_unstaged(plan, b, n, nkv, sq, skv, d, mask, keys):
    # K/V staged before the loop but for a head's last kvCacheTiles key blocks where the cores
    # load those at most four times, a core's units of one head every other unit
    # (ForwardParams::kvNzStageKeys): the cube loads them from the caller's rows. Where every
    # block is full (the driver's rows are contiguous) it loads them as wide-row tiles
    # (ForwardParams::kvWideRows) and only the first quarter of a head's blocks is staged; a
    # head's core with the fewest rows may start its first unit at the middle of the unstaged
    # blocks (ForwardParams::kvRotateBlock).
    (p,) = plan(problem(b, n, nkv, sq, skv, d, mask))
    assert p["kvNzStageKeys"] == keys
    wide = keys != 0 and skv % 128 == 0
    assert p["kvWideRows"] == (128 // 16 if wide else 0)
    if keys:
        assert p["kvNz"] == 1 and p["kvNzPairs"] == 0 and p["kvNzOwnRows"] == 0 and p["kvNzLate"] == 0
        blocks = (skv + 127) // 128
        staged = min(blocks - p["kvCacheTiles"], blocks // 4) if wide else blocks - p["kvCacheTiles"]
        assert keys == staged * 128
        assert p["kvRotateBlock"] in (0, staged + (blocks - staged) // 2)
    if not wide:
        assert p["kvRotateBlock"] == 0 and p["kvRotateCores"] == 0


@pytest.mark.parametrize(
    "n,nkv,sq,cores",
    [
        (8, 8, 1024, [c for c in range(24) if c % 3 == 2]),  # q-blocks 176 x 5 + 144: the third core of a head
        (16, 8, 512, [c for c in range(24) if c % 3 == 2]),  # GQA 176 + 176 + 160 per head: ties go to the last
    ],
)
def test_a_heads_lightest_core_starts_at_its_later_unstaged_blocks(plan, n, nkv, sq, cores):
    # With wide-row tiles every core of a head reads its unstaged blocks at the same time, and
    # whichever reads a block's lines first pays their HBM read: the core of each head with the
    # fewest rows (ending early) starts its first unit at the middle of the unstaged blocks
    # instead (ForwardParams::kvRotateBlock / kvRotateCores).
    (p,) = plan(problem(1, n, nkv, sq, 4096, 128, 0))
    assert p["kvWideRows"] == 8 and p["kvNzStageKeys"] == 8 * 128 and p["kvRotateBlock"] == 20
    assert p["kvRotateCores"] == sum(1 << c for c in cores)
