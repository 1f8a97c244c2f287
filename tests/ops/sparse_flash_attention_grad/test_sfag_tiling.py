"""The sparse backward planning (PlanSparseBackward) on its own, through a small driver linked
against the CPU target's library: the dQ pass fits L0C / L0B / the L1 staging, the rings are
one segment plus three slots, and the (token, chunk) cut covers every position once in order,
cuts tokens only where it pays and uses every core for few tokens."""

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from fakit import build

ROOT = Path(__file__).resolve().parents[3]
L0C = 131072


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.fail("g++ is required (the CPU target is built with it)")
    lib = build.ensure_built("cpu")
    exe = tmp_path_factory.mktemp("sfag_tiling") / "driver"
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-O1",
            f"-I{ROOT / 'emulator/include'}",
            f"-I{ROOT / 'op_host'}",
            f"-I{ROOT / 'op_kernel'}",
            str(Path(__file__).with_name("sparse_tiling_driver.cpp")),
            str(lib),
            f"-Wl,-rpath,{lib.parent}",
            "-o",
            str(exe),
        ],
        check=True,
    )

    def run(heads=64, dr=64, top_k=2048, bs=1, mode=0, s1=256, s2=4096, batch=1, aic=24, det=0):
        line = f"{heads} {dr} {top_k} {bs} {mode} {s1} {s2} {batch} {aic} {det}\n"
        out = subprocess.run([str(exe)], input=line, capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    return run


def _parts(p, chunks_per_token):
    """Chunks of each core's range, from the starts, with every token `chunks_per_token` long."""
    pos = [t * chunks_per_token + c for t, c in p["starts"]]
    assert pos == sorted(pos), p["starts"]
    return [b - a for a, b in zip(pos, pos[1:])]


# mode 0 with G <= 64 plans pair items of 2G heads (pairTokens); mode 3 single tokens
@pytest.mark.parametrize(
    "heads,mode,cols,tiles,pair", [(64, 3, 288, 1, 0), (64, 0, 192, 1, 1), (128, 0, 192, 1, 0), (16, 3, 288, 2, 0)]
)
def test_dq_pass_fits_l0c_l0b_and_the_staging(plan, heads, mode, cols, tiles, pair):
    p = plan(heads=heads, mode=mode)
    assert p["ok"], p
    assert p["pairTokens"] == pair
    assert (p["dqPassCols"], p["dqTiles"]) == (cols, tiles)
    assert p["dqTiles"] * p["headsPad"] * p["dqPassCols"] * 4 <= L0C
    assert p["l0cTiles"] * p["l0cTileElems"] * 4 <= L0C
    # a K column block in one L0B copy, or in both when it is wider
    assert (
        p["l0Copies"] * p["l0bElems"] >= p["blockKv"] * p["dqPassCols"] and p["l0Copies"] * p["l0bElems"] * 2 <= 65536
    )
    assert p["l0Copies"] == 2
    staging = 2 * (p["headsPad"] * 64 + 64 * p["dqPassCols"]) * 2
    assert staging <= (2 * 64 * 576 + 64 * 512) * 2  # two K copies and V


@pytest.mark.parametrize(
    "top_k,bs,mode,seg", [(2048, 1, 3, 32), (2048, 1, 0, 52), (2048, 64, 0, 32), (100, 1, 0, 2), (8, 8, 0, 1)]
)
def test_segments_and_rings(plan, top_k, bs, mode, seg):
    p = plan(top_k=top_k, bs=bs, mode=mode, s2=max(4096, top_k * bs))
    # a segment: at most 32 chunks, all of a token's K * bs rows when fewer; a pair item
    # (mode 0, bs 1): its estimated union (3072 rows of 4096: 48 chunks) and 4 more
    assert (p["dqSegChunks"], p["ringSlots"]) == (seg, seg + 3)
    ring = p["ringSlots"] * (p["headsPad"] * 64 * 2 + 64 * 576 * 2)  # dS and K slots
    assert p["wsSlotBytesPerCore"] >= ring


def test_benchmark_tokens_are_cut_at_chunks(plan):
    # 256 tokens x 32 chunks on 24 cores: 341 or 342 chunks each (whole tokens: 10 or 11, 352)
    p = plan(heads=128)
    assert p["usedCores"] == 24
    parts = _parts(p, 32)
    assert len(parts) == 24 and sum(parts) == 256 * 32
    assert max(parts) <= 343 and any(c != 0 for _, c in p["starts"])


def test_few_tokens_use_every_core(plan):
    p = plan(s1=4, s2=2048, mode=3)
    parts = _parts(p, 32)
    assert p["usedCores"] >= 20 and sum(parts) == 4 * 32 and max(parts) <= math.ceil(128 / 24)
    # mode 0: two pair items, each over the union of two selections of every key (32 chunks)
    p = plan(s1=4, s2=2048)
    parts = _parts(p, 32)
    assert p["pairTokens"] == 1 and p["usedCores"] >= 20 and sum(parts) == 2 * 32 and max(parts) <= 3


def test_whole_tokens_when_they_balance_or_many(plan):
    # 48 tokens on 24 cores divide evenly; 960 tokens (> 32 a core) are not looked at
    for s1 in (48, 960):
        p = plan(s1=s1, s2=2048)
        assert all(c == 0 for _, c in p["starts"]), p["starts"]
        assert p["usedCores"] == 24


def test_no_cut_without_a_jump_or_with_one_core(plan):
    # a block size not dividing the 64-key chunk (the walk would have to skip chunk by chunk)
    p = plan(s1=4, s2=2048, bs=3)
    assert p["usedCores"] == 4 and all(c == 0 for _, c in p["starts"])
    p = plan(s1=4, s2=2048, det=1)  # deterministic: one core, every add in one order
    assert p["usedCores"] == 1 and p["starts"] == [[0, 0], [2, 0]]  # two pair items


def test_block_size_zero_is_refused(plan):
    p = plan(bs=0)
    assert not p["ok"] and "sparse_block_size" in p["why"]
