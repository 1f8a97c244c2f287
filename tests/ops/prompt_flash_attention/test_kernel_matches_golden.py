"""The PromptFlashAttention kernel on the CPU target against the NumPy golden, feature by
feature (layouts, dtypes, GQA, masks and bands, query lengths, block edges, head dims)."""

import numpy as np
import pytest
from fp16_sum_probe import assert_v_pass_sums, judged_l2_writes, large_v, standard_normal_qkv
from pfa_helpers import MAX_INT, OP, band_mask, make_kwargs, run_and_judge

import fakit
from fakit import cases, golden
from fakit.backends import cpu


@pytest.mark.parametrize("case", cases.suite(OP, "smoke"), ids=lambda c: c.id)
def test_smoke_suite_matches_golden(case):
    run_and_judge(case.inputs())


@pytest.mark.parametrize("layout", ["BSH", "BSND", "BNSD", "BNSD_BSND"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_layouts_and_dtypes_match_golden(layout, dtype):
    out, _ = run_and_judge(make_kwargs(dtype, layout, b=2, n=4, nkv=2, sq=40, skv=72, d=48))
    if layout == "BNSD_BSND":
        assert out.shape == (2, 40, 4, 48)


def test_multiple_query_and_key_blocks_online_softmax():
    # 300 queries x 400 keys: several q-blocks per head and key blocks with a ragged tail.
    run_and_judge(make_kwargs(sq=300, skv=400, d=64, n=3))


def test_causal_gqa_bsh_bf16_skips_blocks_and_matches():
    run_and_judge(
        make_kwargs(
            "bf16", "BSH", n=8, nkv=2, sq=256, d=64, mask=band_mask(256, 256), pre_tokens=MAX_INT, next_tokens=0
        )
    )


@pytest.mark.parametrize(
    "lead,mdtype",
    [((), np.bool_), ((1,), np.int8), ((2,), np.uint8), ((2, 1), np.bool_), ((1, 1), np.uint8), ((2, 3), np.int8)],
)
def test_mask_shapes_and_dtypes_match_golden(lead, mdtype):
    rng = np.random.default_rng(7)
    mask = rng.random(lead + (48, 80)) < 0.3
    mask[..., 0] = False
    run_and_judge(make_kwargs(b=2, n=3, sq=48, skv=80, d=32, mask=mask.astype(mdtype)))


@pytest.mark.parametrize(
    "dtype,nkv,d,mask,actual",
    [
        ("fp16", 16, 64, None, None),  # 570 rows: q-blocks of 192, 192 and 186
        ("bf16", 64, 72, "causal", None),  # head dim 72 (rows of 80), causal mask tiles
        ("fp16", 8, 128, "causal", [570]),  # D = 128: lazy P.V with a 192 x 128 accumulator
        ("fp16", 64, 32, None, [389]),  # a query length cutting the second q-block
    ],
)
def test_192_row_q_blocks_match_golden(dtype, nkv, d, mask, actual):
    # 64 heads of 570 queries give the planner enough units to take 192-row q-blocks
    # (test_tiling.py asserts that plan): Q.K^T in 32-row chunks (64 at D = 64), the vector cores in sub-blocks
    # of 48 rows (the last q-block: 93 rows per core, sub-blocks of 48 and 45).
    extra = {}
    if mask == "causal":
        extra = dict(mask=band_mask(570, 570), pre_tokens=MAX_INT, next_tokens=0)
    if actual is not None:
        extra["actual_seq_lengths"] = actual
    run_and_judge(make_kwargs(dtype, "BNSD", n=64, nkv=nkv, sq=570, d=d, **extra))


@pytest.mark.parametrize("dtype,n,sq,actual", [("fp16", 8, 1100, None), ("bf16", 8, 1300, [1300, 1211])])
def test_causal_q_blocks_after_their_head_take_cached_kv_match_golden(dtype, n, sq, actual):
    # D = 128 causal, K/V staged: two or three units per core in folded pairs per head, the
    # second q-block of a pair takes the first one's last full key blocks first, from the cube's
    # K/V cache (policies.h PlanKvReuse), and loads only the others; a query length cuts the
    # second batch's last q-block.
    extra = dict(mask=band_mask(sq, sq), pre_tokens=MAX_INT, next_tokens=0)
    if actual is not None:
        extra["actual_seq_lengths"] = actual
    run_and_judge(make_kwargs(dtype, "BNSD", b=1 if actual is None else 2, n=n, sq=sq, d=128, **extra))


# Causal GQA shapes the planner deals by cost (ForwardParams UNITS_TABLE: test_tiling.py asserts
# it for each): group sizes 2, 3, 4 and 5, short last q-blocks, more keys than queries, two
# batches (one cut by a query length), BNSD and BSH.
GQA_DEAL_SHAPES = [
    ("fp16", "BNSD", 1, 6, 3, 1000, 1000, 128, None),
    ("bf16", "BNSD", 1, 4, 2, 1500, 1500, 128, None),
    ("fp16", "BSH", 1, 9, 3, 600, 700, 128, None),
    ("bf16", "BNSD", 1, 15, 5, 512, 600, 128, None),
    ("fp16", "BNSD", 2, 4, 2, 777, 777, 128, [777, 650]),
]


@pytest.mark.parametrize("dtype,layout,b,n,nkv,sq,skv,d,actual", GQA_DEAL_SHAPES)
def test_causal_gqa_units_dealt_by_cost_match_golden(dtype, layout, b, n, nkv, sq, skv, d, actual):
    # Each core runs its units from the table by (batch, KV head, q-block, head): a group's
    # next head on the same q-block takes the diagonal blocks the head before ran last from the
    # cube's K/V cache, in ascending order (policies.h PlanKvReuse, reuseUp), a later q-block of
    # the KV head its last full blocks in reverse.
    extra = dict(mask=band_mask(sq, skv), pre_tokens=MAX_INT, next_tokens=0)
    if actual is not None:
        extra["actual_seq_lengths"] = actual
    run_and_judge(make_kwargs(dtype, layout, b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=d, **extra))


@pytest.mark.parametrize("dtype,n,nkv,sq,skv,d", [("fp16", 12, 4, 900, 1111, 128), ("bf16", 24, 8, 500, 1500, 64)])
def test_dense_q_block_runs_take_cached_kv_match_golden(dtype, n, nkv, sq, skv, d):
    # No mask, three q-blocks of one head per core, more key blocks than the K/V cache holds and
    # a short last key block: the second unit takes the first one's last full blocks first, the
    # third the second one's last run (the blocks before those it took cached; policies.h
    # PlanKvReuse), so the three run their keys in three orders.
    run_and_judge(make_kwargs(dtype, "BNSD", n=n, nkv=nkv, sq=sq, skv=skv, d=d))


@pytest.mark.parametrize(
    "dtype,layout,b,n,nkv,sq,skv", [("fp16", "BSH", 2, 24, 8, 400, 333), ("bf16", "BNSD", 1, 32, 8, 450, 700)]
)
def test_dense_folded_q_block_order_matches_golden(dtype, layout, b, n, nkv, sq, skv):
    # No mask, D = 128, more units per core than a head has q-blocks (three, the last short):
    # the folded order (0, 2, 1) with the K/V cache between a head's q-blocks and a group's heads
    # (test_tiling.py asserts the plan), cores' ranges cutting heads.
    run_and_judge(make_kwargs(dtype, layout, b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=128))


@pytest.mark.parametrize("dtype,n,nkv,sq,skv", [("fp16", 24, 24, 2100, 2100), ("bf16", 24, 6, 1400, 2100)])
def test_unstaged_d64_planes_take_cached_kv_match_golden(dtype, n, nkv, sq, skv):
    # D = 64 without a mask, 17 key blocks per head (the last short) and over 64 per core:
    # nothing staged (test_tiling.py asserts the plan), the K/V cache takes the caller's rows
    # (Nd2Nz), 12 K tiles beside 11 V tiles, the scale on the vector cores; units of a head
    # (and of a KV group) in a row reuse the blocks the one before ran last.
    run_and_judge(make_kwargs(dtype, "BNSD", n=n, nkv=nkv, sq=sq, skv=skv, d=64))


def test_unstaged_d64_masked_plane_matches_golden():
    # D = 64 under a mask with 8 units per core (MHA, 192 units of 256 rows, 17 key blocks per
    # head, the last short): K is not staged either (test_tiling.py asserts the plan), so the
    # scale goes to the vector cores beside the band and the mask, and the K/V cache takes the
    # caller's rows.
    mask = band_mask(1500, 2100, MAX_INT, 300)
    run_and_judge(
        make_kwargs("fp16", "BNSD", n=32, sq=1500, skv=2100, d=64, mask=mask, pre_tokens=MAX_INT, next_tokens=300)
    )


@pytest.mark.parametrize(
    "dtype,pre,nxt,holes", [("fp16", MAX_INT, 37, False), ("bf16", 300, 0, False), ("fp16", 200, 53, True)]
)
def test_diagonal_tiles_hand_over_only_their_band_match_golden(dtype, pre, nxt, holes):
    # D = 128 (lazy P.V), odd lengths: a diagonal tile's P rows before the band are zeros the cube
    # takes from the workspace's zero fractal, its columns past the band are left out of P.V's k
    # and its mask rows are read only up to the last key the rows see (holes: keys the mask
    # excludes inside the band as well).
    mask = band_mask(777, 777, pre, nxt)
    if holes:
        mask = mask | (np.random.default_rng(5).random(mask.shape) < 0.05)
    kw = make_kwargs(dtype, "BNSD", n=16, nkv=4, sq=777, d=128, mask=mask)
    run_and_judge(dict(kw, pre_tokens=pre, next_tokens=nxt))


@pytest.mark.parametrize(
    "dtype,d,sq,skv,nxt",
    [("fp16", 128, 600, 700, -21), ("bf16", 128, 600, 700, 5), ("fp16", 64, 333, 333, 130), ("bf16", 64, 520, 400, 3)],
)
def test_band_right_edge_staircase_matches_golden(dtype, d, sq, skv, nxt):
    # Only the band's right edge cuts the tiles (pre_tokens unbounded): the scores past it go by
    # 8-row groups (mask_band.h KillStaircase; the edge at every offset modulo 8, rows above the
    # band that lose every key, rows that lose none, groups whose edge blocks leave the tile).
    # The mask has scattered holes only, so the band alone excludes the keys past the edge.
    mask = np.random.default_rng(7).random((sq, skv)) < 0.03
    kw = make_kwargs(dtype, "BNSD", n=4, nkv=2, sq=sq, skv=skv, d=d, mask=mask)
    run_and_judge(dict(kw, pre_tokens=MAX_INT, next_tokens=nxt))


@pytest.mark.parametrize(
    "dtype,nkv,d,sq,causal",
    [
        ("fp16", 16, 64, 660, False),  # 224-row q-blocks: L0A holds P and two 32 x 64 Q chunks
        ("bf16", 64, 64, 660, True),
        ("fp16", 16, 16, 700, False),  # 240 rows, Q chunks of 16 columns
    ],
)
def test_q_blocks_above_192_rows_below_d128_match_golden(dtype, nkv, d, sq, causal):
    # 64 heads give three q-blocks of 224 / 240 rows (test_tiling.py asserts the plan), the
    # vector cores in sub-blocks of 56 / 64 rows, the last q-block cut short.
    extra = dict(mask=band_mask(sq, sq), pre_tokens=MAX_INT, next_tokens=0) if causal else {}
    run_and_judge(make_kwargs(dtype, "BNSD", n=64, nkv=nkv, sq=sq, d=d, **extra))


@pytest.mark.parametrize(
    "dtype,n,nkv,sq,skv,d,band,actual",
    [
        ("fp16", 8, 8, 2100, 2100, 64, (MAX_INT, 0), None),  # causal: 352-row q-blocks, the last of 340 rows
        ("bf16", 8, 8, 2100, 2100, 64, (1500, -20), None),  # a band past the diagonal: 304-row q-blocks
        ("bf16", 24, 6, 700, 2048, 64, None, None),  # q-blocks of 352 and 348 rows, GQA
        ("fp16", 24, 6, 880, 2048, 32, None, [450]),  # 304-row q-blocks; a query length leaves 146 rows: one part
    ],
)
def test_two_part_q_blocks_match_golden(dtype, n, nkv, sq, skv, d, band, actual):
    # Above 240 rows lazy P.V runs in two row parts, each with its own accumulator (forward_cube.h
    # AccumulatePV; test_tiling.py asserts the plans): P rows skipped before a diagonal fall in
    # either part, a unit's final sum leaves part by part.
    extra = {} if band is None else dict(mask=band_mask(sq, skv, *band), pre_tokens=band[0], next_tokens=band[1])
    if actual is not None:
        extra["actual_seq_lengths"] = actual
    run_and_judge(make_kwargs(dtype, "BNSD", n=n, nkv=nkv, sq=sq, skv=skv, d=d, **extra))


@pytest.mark.parametrize(
    "dtype,layout,d,sq,skv,causal,actual",
    [
        ("fp16", "BNSD", 256, 500, 300, False, None),  # 64-key blocks, K/V staged and loaded in pairs
        ("bf16", "BSH", 256, 333, 701, False, [333, 250]),  # a key block cut short, a query length short
        ("fp16", "BNSD", 200, 290, 333, False, None),  # unaligned D: lazy P.V without the staging
        ("fp16", "BNSD", 192, 300, 300, False, None),
        ("fp16", "BNSD", 256, 500, 500, True, None),  # under a band: the next pair ahead of P, 48-row sub-blocks
        ("bf16", "BNSD", 200, 290, 333, True, None),  # under a band without the staging (K and V apart)
    ],
)
def test_lazy_pv_above_d128_matches_golden(dtype, layout, d, sq, skv, causal, actual):
    # 128 < D <= 256 without a mask or under a band: lazy P.V with K^T and V of a 64-key block filling L0B and the
    # q-block x D accumulator in L0C (test_tiling.py asserts the plan); 8 heads over 2 KV heads
    # load every key row from 4 q-blocks or more, so K/V are staged in Nz order, K and V of a block
    # one copy.
    extra = dict(mask=band_mask(sq, skv), pre_tokens=MAX_INT, next_tokens=0) if causal else {}
    if actual is not None:
        extra["actual_seq_lengths"] = actual
    run_and_judge(make_kwargs(dtype, layout, b=2 if actual else 1, n=8, nkv=2, sq=sq, skv=skv, d=d, **extra))


@pytest.mark.parametrize("dtype,d,pre,nxt", [("fp16", 256, 96, 16), ("bf16", 192, 200, -8)])
def test_lazy_pv_above_d128_under_a_sliding_band_matches_golden(dtype, d, pre, nxt):
    # Lazy P.V in 64-key blocks under a band that starts past key 0 and a mask that also excludes
    # keys inside it (the next K/V pair ahead of P, 48-row vector sub-blocks: test_tiling.py).
    sq, skv = 300, 360
    mask = band_mask(sq, skv, pre, nxt) | (np.random.default_rng(1).random((sq, skv)) < 0.1)
    run_and_judge(
        make_kwargs(dtype, "BNSD", n=8, nkv=2, sq=sq, skv=skv, d=d, mask=mask, pre_tokens=pre, next_tokens=nxt)
    )


@pytest.mark.parametrize(
    "dtype,layout,d,sq,skv,causal",
    [
        ("fp16", "BNSD", 128, 333, 150, False),  # D = 128 (1/sqrt(128) stays out of the staged K)
        ("bf16", "BSH", 80, 333, 701, True),  # causal (no mask summary above D = 64): S rows before the band left out
        ("fp16", "BSND", 32, 200, 40, False),  # one short key block per unit
    ],
)
def test_s_ahead_of_the_kv_staging_matches_golden(dtype, layout, d, sq, skv, causal):
    # With K/V staged in Nz order, K unscaled and K and V loaded apart, the cube issues its first
    # S block(s) from the caller's K rows while the vector cores stage K/V (forward_cube.h Run);
    # 8 heads over 2 KV heads make the planner stage them, one shape per staging mode: V only,
    # both, K only (test_tiling.py asserts the plan).
    extra = dict(mask=band_mask(sq, skv), pre_tokens=MAX_INT, next_tokens=0) if causal else {}
    run_and_judge(make_kwargs(dtype, layout, b=2, n=8, nkv=2, sq=sq, skv=skv, d=d, **extra))


STAGING_MODE_SHAPES = [
    # V only (few loads per key row): every S reads the caller's K, three S blocks go out before
    # the staging's barrier
    ("bf16", "BSH", 2, 8, 2, 333, 150, 80, False, None),  # D = 80, rows of 80 elements
    ("fp16", "BNSD", 1, 8, 2, 100, 600, 128, False, None),  # one q-block: the early S blocks of one unit
    ("fp16", "BNSD", 2, 8, 2, 300, 20, 96, False, None),  # one short key block per unit
    ("bf16", "BSND", 2, 8, 4, 333, 150, 128, False, [333, 41]),  # groups of 2, a query length short
    ("bf16", "BNSD", 2, 4, 4, 700, 150, 80, False, None),  # no GQA
    ("bf16", "BNSD", 2, 6, 2, 250, 200, 112, False, None),  # groups of 3
    # K only (D <= 64): V's rows converted by the cube
    ("fp16", "BNSD", 2, 8, 2, 333, 260, 48, False, None),  # 16 K/V cache tiles
    ("fp16", "BNSD", 2, 8, 2, 333, 701, 64, True, None),  # scale 1/8 in the staged K, one Q/P copy
    ("bf16", "BNSD", 1, 8, 2, 120, 2100, 64, False, None),  # one Q/P copy without a mask
    ("fp16", "BNSD", 1, 2, 1, 2048, 2048, 32, True, None),  # units of up to 16 cached key blocks
    # both, loaded in pairs, the next pair ahead of P under a band, 48-row (or fewer) sub-blocks
    ("fp16", "BNSD", 1, 8, 2, 300, 300, 160, True, None),  # 56 rows per vector core: 48 + 8
    ("bf16", "BSH", 1, 8, 1, 300, 300, 144, True, None),  # groups of 8
    ("fp16", "BNSD", 1, 8, 2, 200, 450, 256, True, None),  # 40 rows per vector core, Skv > Sq
    ("bf16", "BSND", 2, 8, 2, 300, 300, 256, True, [300, 77]),  # a query length short
    # a pass of >= 256 KiB per vector core: 64-row chunks through the S buffers (PlanKvNzChunk),
    # where the accumulator and tmp hold 32; keys past the band staged too
    ("fp16", "BNSD", 1, 12, 12, 576, 2048, 128, True, None),
    ("bf16", "BSND", 1, 12, 12, 768, 4096, 80, True, None),  # D = 80: 96-row chunks
    ("bf16", "BNSD", 1, 4, 4, 192, 4096, 192, False, None),  # D = 192: 32-row chunks fill S exactly
]


@pytest.mark.parametrize("dtype,layout,b,n,nkv,sq,skv,d,causal,actual", STAGING_MODE_SHAPES)
def test_staging_modes_match_golden(dtype, layout, b, n, nkv, sq, skv, d, causal, actual):
    # One shape per corner of the K/V staging modes (ForwardParams::kvNz) and of lazy P.V with
    # the next K/V pair ahead of P (ForwardParams::kvPairFirst); test_tiling.py asserts the plans.
    extra = dict(mask=band_mask(sq, skv), pre_tokens=MAX_INT, next_tokens=0) if causal else {}
    if actual is not None:
        extra["actual_seq_lengths"] = actual
    run_and_judge(make_kwargs(dtype, layout, b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=d, **extra))


PARTLY_STAGED_SHAPES = [
    # K/V staged but for each head's last kvCacheTiles key blocks (ForwardParams::kvNzStageKeys),
    # which the cube loads from the caller's rows (test_tiling.py asserts the plans)
    ("fp16", "BNSD", 1, 8, 8, 1024, 4096, 128, None),  # the sweep's B1 N8 S1K x 4K (wide-row tiles)
    ("bf16", "BNSD", 1, 16, 8, 512, 4096, 128, 0.125),  # GQA, wide-row tiles (ForwardParams::kvWideRows)
    ("bf16", "BSND", 1, 8, 8, 1024, 3900, 128, None),  # a short last key block
    ("fp16", "BSH", 1, 16, 8, 512, 4096, 128, 0.125),  # GQA; a power-of-two scale stays off K
]


@pytest.mark.parametrize("dtype,layout,b,n,nkv,sq,skv,d,scale", PARTLY_STAGED_SHAPES)
def test_partly_staged_kv_matches_golden(dtype, layout, b, n, nkv, sq, skv, d, scale):
    # A block read from the staged region where it was not staged reads the workspace's stale
    # rows: every row's error far past the precision standard.
    extra = {} if scale is None else dict(scale_value=scale)
    run_and_judge(make_kwargs(dtype, layout, b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=d, **extra))


OWN_STAGING_SHAPES = [
    # K/V staged per core (ForwardParams::kvNzOwnRows): every core's first (batch, KV head) region
    # before the barrier, the others by the core's own vector cores during the main loop; a
    # region read by two cores' runs is the second one's first (test_tiling.py asserts the plans)
    ("fp16", "BNSD", 2, 16, 16, 600, 200, 128, False, None),  # V only, no GQA, 48-row chunks, 24 zero rows
    ("bf16", "BSH", 2, 48, 16, 600, 200, 64, False, None),  # K only, groups of 3, 64-row chunks
    ("fp16", "BNSD", 2, 24, 24, 600, 200, 128, True, None),  # both, causal (short q-block first), cached tiles
    ("fp16", "BSND", 1, 32, 32, 1000, 256, 64, True, None),  # causal, scale 1/8 in the staged K
    ("bf16", "BNSD", 2, 16, 16, 700, 300, 128, False, [700, 123]),  # 16-row chunks, a query length short
    # more own regions per core than the ready flag's counter holds: staged before the barrier
    ("fp16", "BNSD", 4, 128, 128, 1000, 32, 64, False, None),
]


@pytest.mark.parametrize("dtype,layout,b,n,nkv,sq,skv,d,causal,actual", OWN_STAGING_SHAPES)
def test_own_staging_matches_golden(dtype, layout, b, n, nkv, sq, skv, d, causal, actual):
    # A region staged by the wrong core, too late (no ready flag) or only in part reads the
    # workspace's stale rows: every row's error far past the precision standard.
    extra = dict(mask=band_mask(sq, skv), pre_tokens=MAX_INT, next_tokens=0) if causal else {}
    if actual is not None:
        extra["actual_seq_lengths"] = actual
    run_and_judge(make_kwargs(dtype, layout, b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=d, **extra))


LATE_STAGING_SHAPES = [
    # K/V staged during each core's first unit (ForwardParams::kvNzLate): the first units read the
    # caller's rows, the later ones the staged regions once the vector cores met (test_tiling.py
    # asserts the plans)
    ("fp16", "BNSD", 1, 12, 12, 448, 1024, 256),  # 16-row chunks, two units per core, 16 zero rows
    ("bf16", "BSH", 1, 32, 16, 448, 1100, 192),  # groups of 2, 48-row chunks, 20 zero rows, a split-KV tail
    # Q staged per core from each core's fourth unit on (ForwardParams::qNzUnits): 76-row
    # q-blocks (pad rows in the Nz copy's tile), five units per core; and a split-KV tail's
    # pieces among the staged Q blocks
    ("bf16", "BNSD", 1, 40, 20, 300, 1100, 256),
    ("bf16", "BSND", 2, 16, 8, 448, 1024, 256),
]


@pytest.mark.parametrize("dtype,layout,b,n,nkv,sq,skv,d", LATE_STAGING_SHAPES)
def test_late_staging_matches_golden(dtype, layout, b, n, nkv, sq, skv, d):
    # A region read before it is staged, or staged in part, reads the workspace's stale rows;
    # with the scale left on the staged K every later unit's scores would be scaled twice.
    run_and_judge(make_kwargs(dtype, layout, b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=d))


@pytest.mark.parametrize(
    "dtype,layout,n,sq,skv,causal",
    [
        ("fp16", "BNSD", 12, 1024, 1024, True),  # causal: folded q-blocks, seven items per core
        ("bf16", "BSND", 24, 560, 700, False),  # five units per core, 16-row chunks
    ],
)
def test_q_staged_with_kv_staged_before_the_loop_matches_golden(dtype, layout, n, sq, skv, causal):
    # K/V staged before the main loop, Q blocks from each core's fourth unit on staged in Nz
    # order by its vector cores during the first units (ForwardParams::qNzUnits, qNzChunk;
    # test_tiling.py asserts the plans): a copy read before it is written, or into the wrong
    # unit's slot, gives another unit's queries.
    extra = dict(mask=band_mask(sq, skv), pre_tokens=MAX_INT, next_tokens=0) if causal else {}
    run_and_judge(make_kwargs(dtype, layout, n=n, nkv=n, sq=sq, skv=skv, d=256, **extra))


@pytest.mark.parametrize(
    "dtype,layout,b,n,nkv,sq,skv,d",
    [
        ("fp16", "BNSD", 1, 1, 1, 448, 1024, 256),  # 4 units in 6 pieces each, no whole unit
        ("bf16", "BSH", 1, 2, 1, 1456, 1024, 256),  # one whole unit per core, 2 units in 8 pieces
        ("fp16", "BNSD_BSND", 1, 1, 1, 500, 3000, 128),  # a short last unit; 3 pieces, the last short
        ("bf16", "BSND", 1, 4, 4, 192, 4096, 128),
        ("fp16", "BNSD", 1, 1, 1, 1456, 2048, 256),  # two pieces per core
        ("bf16", "BNSD", 1, 3, 1, 3000, 2048, 256),  # three whole units and three pieces per core
        ("bf16", "BSH", 1, 1, 1, 300, 3000, 72),  # rows of 80 elements in UB, 72 in the output
        ("fp16", "BSND", 1, 2, 1, 200, 2500, 40),  # 16-row q-blocks in 10 pieces
        ("bf16", "BNSD_BSND", 1, 1, 1, 1, 4096, 128),  # one query row: one vector core's half is empty
        ("fp16", "BNSD", 1, 10, 10, 300, 1024, 256),  # heads' 76-row q-blocks last, 4 pieces each
        ("bf16", "BSH", 2, 5, 5, 300, 1000, 256),  # the same over two batches, 1000 keys
        ("fp16", "BSND", 1, 10, 5, 300, 1000, 192),  # groups of 2
    ],
)
def test_split_kv_tail_matches_golden(dtype, layout, b, n, nkv, sq, skv, d):
    # The last units cut into key ranges over the cores they would leave idle (ForwardParams::
    # tailSplits; test_tiling.py asserts the plan): each piece stores partial rows and the
    # combine pass merges them into the output layout. Key 700 scores high for query rows
    # 100-120, so one piece holds their max and the others' weights are tiny.
    kw = make_kwargs(dtype, layout, b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=d)
    seq_q = {"BSH": 1, "BSND": 1, "BNSD_BSND": 2, "BNSD": 2}[layout]
    rows = [slice(None)] * kw["query"].ndim
    rows[seq_q] = slice(100, 120) if sq > 120 else slice(0, 1)
    kw["query"][tuple(rows)] = 1.0
    keys = [slice(None)] * kw["key"].ndim
    keys[seq_q] = 700
    kw["key"][tuple(keys)] = 1.0
    run_and_judge(kw)


def test_short_q_block_tail_evens_the_cores(monkeypatch):
    # B2 N8 S2K D256 (the sweep row; test_tiling.py asserts its plan): 16 heads end in a 32-row
    # q-block. The kernel runs those last (UNITS_SHORT_LAST) and the tail cuts them: every cube
    # ends within 1 % of the others (modelled 300.7-301.6 us). Cutting the last units of the
    # plain order instead leaves short q-blocks whole on 15 cores (296.8-306.2 us).
    from fakit.backends import cpu

    monkeypatch.setenv("ASCEND_EMU_TIMING_ONLY", "1")
    fakit.run(OP, backend="cpu", **make_kwargs("fp16", "BNSD", b=2, n=8, nkv=8, sq=2048, skv=2048, d=256))
    ends = [c["end_us"] for c in cpu.last_profile()["cores"] if c["sub"] == "aic"]
    assert len(ends) == 24 and max(ends) < 1.01 * min(ends)


def test_empty_q_blocks_inside_the_unit_stream():
    # Batch 0's query length 100 leaves its second and third q-blocks (176 rows) without a valid
    # row: in the middle of a core's stream the vector cores finish everything in flight, write
    # those rows as zeros and go on with batch 1.
    run_and_judge(make_kwargs("fp16", "BNSD", b=2, n=64, nkv=16, sq=500, d=32, actual_seq_lengths=[100, 500]))


def test_one_sub_block_moving_its_softmax_reference_alone():
    # Rows 60-69 (the second sub-block of vector core 0 in a 176-row q-block) meet key 300
    # with a score of 8, far above their earlier maxima (lazy P.V moves a reference only beyond
    # ln 256): at that key block only their sub-block rescales, the other one must keep alpha = 1.
    kw = make_kwargs("fp16", "BNSD", n=64, nkv=16, sq=500, d=64)
    kw["query"][:, :, 60:70, :] = 1.0
    kw["key"][:, :, 300, :] = 1.0
    kw["value"][:, :, 300, :] = 4.0
    run_and_judge(kw)


@pytest.mark.parametrize(
    "sq,skv,b,n", [(256, 384, 1, 1), (100, 200, 1, 1), (256, 384, 2, 3), (100, 200, 1, 4), (100, 200, 2, 8)]
)
def test_single_excluded_byte_in_a_clean_tile_is_applied(sq, skv, b, n):
    # Tiles without an excluded key skip the mask passes (mask_band.h AnyExcluded); a tile with
    # one excluded byte anywhere - its first, its last, one past a fold's half - must still apply
    # it. With 16 (batch, head) pairs or more at D = 64 the [Sq, Skv] plane is shared and its
    # 16-row x 128-key marks come from the summary pass (Prepare): hits on both sides of a
    # mark's edges and in the partial last row group and key column. The excluded keys carry large values,
    # so a missed exclusion moves its row far past the precision standard (asserted on the
    # goldens, so the test can fail).
    hits = [
        (0, 0),
        (15, 127),
        (16, 128),
        (63, 127),
        (64, 128),
        (sq - 1, skv - 1),
        (37, 65),
        (sq // 2 + 1, skv // 2 - 1),
    ]
    mask = np.zeros((sq, skv), np.bool_)
    for r, k in hits:
        mask[r, k] = True
    kw = make_kwargs(sq=sq, skv=skv, d=64, b=b, n=n, mask=mask, pre_tokens=MAX_INT, next_tokens=MAX_INT)
    for _, k in hits:
        kw["value"][:, :, k, :] = 8.0
    with_hits = golden.prompt_flash_attention(**kw)
    without = golden.prompt_flash_attention(**{**kw, "atten_mask": np.zeros_like(mask)})
    rows = [r for r, _ in hits]
    assert np.abs(with_hits[0, 0, rows] - without[0, 0, rows]).min(axis=-1).min() > 0.01
    run_and_judge(kw)


@pytest.mark.parametrize("pre,nxt", [(MAX_INT, 0), (150, 20), (40, -8)])
def test_band_summary_reads_the_band_and_applies_its_hits(pre, nxt):
    # The summary pass reads only the key columns each 16-row group's band reaches (mask_band.h
    # Summarise, BandColumns); 16 (batch, head) pairs at D = 64 share the plane. Excluded bytes
    # at the band's edges, in the first and last row groups and columns, must still apply; the
    # mask outside the band is all excluded (the band drops those keys anyway).
    sq, skv = 300, 400
    band = band_mask(sq, skv, pre, nxt)
    mask = band.copy()
    hits = []
    for r in (0, 15, 16, 130, 131, 255, sq - 1):
        ks = [k for k in range(skv) if not band[r, k]]
        if ks:
            hits += [(r, ks[0]), (r, ks[-1]), (r, ks[len(ks) // 2])]
    for r, k in hits:
        mask[r, k] = True
    kw = make_kwargs(sq=sq, skv=skv, d=64, b=2, n=8, mask=mask, pre_tokens=pre, next_tokens=nxt)
    for _, k in hits:
        kw["value"][:, :, k, :] = 8.0
    with_hits = golden.prompt_flash_attention(**kw)
    without = golden.prompt_flash_attention(**{**kw, "atten_mask": band})
    rows = sorted({r for r, _ in hits if (~band[r]).sum() > 1})
    assert np.abs(with_hits[0, 0, rows] - without[0, 0, rows]).max() > 0.01
    run_and_judge(kw)


@pytest.mark.parametrize("side", ["hi", "lo"])
@pytest.mark.parametrize("pre,nxt", [(151, 20), (150, 21)])
def test_band_summary_keeps_exclusions_at_odd_band_edges(side, pre, nxt):
    # A uint16 lane at an odd band edge holds a byte inside the band and one outside it
    # (mask_band.h ZeroOutsideBand): the mask excludes only that inside byte, on exactly those
    # rows, so a lane zeroed whole clears the summary mark and the score is not masked.
    sq, skv = 300, 400
    rel = np.arange(skv)[None, :] - np.arange(sq)[:, None]
    row = np.arange(sq)[:, None]
    if side == "hi":
        edge = (rel == nxt) & ((row + nxt + 1) % 2 == 1)
    else:
        edge = (rel == -pre) & ((row - pre) % 2 == 1)
    mask = band_mask(sq, skv, pre, nxt) | edge
    run_and_judge(make_kwargs(sq=sq, skv=skv, d=64, b=2, n=8, mask=mask, pre_tokens=pre, next_tokens=nxt))


@pytest.mark.parametrize("pre,nxt", [(MAX_INT, 0), (150, 21)])
def test_band_summary_leaves_a_mask_that_excludes_only_outside_the_band_clear(pre, nxt):
    # The summary pass zeroes the mask bytes outside the band before it marks (mask_band.h
    # ZeroOutsideBand; an odd band edge shares a uint16 lane with an excluded byte): a mask that
    # excludes exactly what the band does (causal) leaves every mark clear, so the main loop
    # loads no mask rows, as with an all-zero plane; the L2 read bytes of the two launches match.
    sq, skv = 300, 400
    band = band_mask(sq, skv, pre, nxt)
    reads = []
    for mask in (band, np.zeros_like(band)):
        run_and_judge(make_kwargs(sq=sq, skv=skv, d=64, b=2, n=8, mask=mask, pre_tokens=pre, next_tokens=nxt))
        reads.append(cpu.last_profile()["l2_read_bytes"])
    assert reads[0] == reads[1]


@pytest.mark.parametrize(
    "dtype,layout,b,n,nkv,sq,skv",
    [
        ("fp16", "BNSD", 1, 32, 8, 300, 2048),  # K/V staged: the cube's first S ahead of the barrier
        ("bf16", "BSH", 2, 16, 16, 333, 2100),  # partial last row group and key column
    ],
)
def test_summary_at_d128_applies_its_hits(dtype, layout, b, n, nkv, sq, skv):
    # At D = 128 a plane serving 64K (batch, head) pairs x keys from 2K keys on gets the summary
    # too (forward_tiling.cpp MaskSummaryPays); with K/V staged the cube issues its first S block from the caller's K
    # during the vector cores' summary and staging pass (forward_cube.h Run: the summary is the
    # vector cores' alone). Excluded bytes inside the causal band, at mark edges and in the last
    # row group, must still apply.
    band = band_mask(sq, skv, MAX_INT, 0)
    mask = band.copy()
    hits = [(15, 3), (16, 15), (130, 128), (131, 127), (sq - 1, 0), (sq - 1, sq - 2), (200, 199)]
    for r, k in hits:
        mask[r, k] = True
    kw = make_kwargs(
        dtype, layout, b=b, n=n, nkv=nkv, sq=sq, skv=skv, d=128, mask=mask, pre_tokens=MAX_INT, next_tokens=0
    )
    seq = {"BSH": 1, "BNSD": 2}[layout]
    for _, k in hits:
        keys = [slice(None)] * kw["value"].ndim
        keys[seq] = k
        kw["value"][tuple(keys)] = 8.0
    with_hits = golden.prompt_flash_attention(**kw)
    without = golden.prompt_flash_attention(**{**kw, "atten_mask": band})
    assert np.abs(with_hits - without).max() > 0.01
    run_and_judge(kw)


@pytest.mark.parametrize(
    "b,d,n,sq,skv",
    [
        (1, 128, 2, 700, 900),
        (2, 64, 2, 700, 900),
        (1, 128, 5, 700, 900),
        (1, 128, 5, 800, 800),
        (1, 128, 3, 1200, 1200),
    ],
)
def test_two_heads_share_the_clear_tiles_of_a_mask_plane(b, d, n, sq, skv):
    # Heads reading one mask plane run a q-block's heads in a row on a core (units ordered
    # batch, q-block, head: always for two heads, for more where the planner finds the ranges no
    # longer); the later heads skip the mask rows of the tiles an earlier one found clear
    # (mask_band.h CLEAR_TILES). Clear tiles next to tiles with one excluded byte, causal.
    # 5 x 800: the planner orders the units (batch, folded pair, head, member) with the short
    # q-block first (nine q-blocks: the middle one alone); 3 x 1200: the short q-block first in
    # the (batch, head) order.
    mask = band_mask(sq, skv).copy()
    rng = np.random.default_rng(3)
    rows = rng.integers(0, sq, 40)
    for r in rows:
        k = int(rng.integers(0, r + 1))
        mask[r, k] = True
    kw = make_kwargs(sq=sq, skv=skv, d=d, b=b, n=n, mask=mask, pre_tokens=MAX_INT, next_tokens=0)
    run_and_judge(kw)


@pytest.mark.parametrize("pre,nxt", [(MAX_INT, 0), (301, 0), (300, 3)])
def test_later_heads_keep_a_mask_byte_at_the_band_edge(pre, nxt):
    # A tile the band cuts whose excluded bytes all lie outside the band is recorded clear
    # for the later heads (mask_band.h InBandExcluded); a byte excluded on the band's last or
    # first key of a row shares its uint16 with a byte outside the band and is read apart.
    # Rows of both parities, on either edge; two heads run a q-block's heads in a row.
    sq = skv = 640
    band = band_mask(sq, skv, pre, nxt)
    mask = band.copy()
    hit_rows = (40, 41, 200, 333, 334, 517, 600)
    for r in hit_rows:
        mask[r, min(r + nxt, skv - 1)] = True
        if pre < sq and r - pre >= 0:
            mask[r, r - pre] = True
    kw = make_kwargs(sq=sq, skv=skv, d=128, n=2, mask=mask, pre_tokens=pre, next_tokens=nxt)
    with_hits = golden.prompt_flash_attention(**kw)
    without = golden.prompt_flash_attention(**{**kw, "atten_mask": band})
    assert np.abs(with_hits[0, 1, list(hit_rows)] - without[0, 1, list(hit_rows)]).max() > 1e-3
    run_and_judge(kw)


def test_mask_padded_wider_than_kv_is_read_from_top_left():
    mask = np.zeros((1, 1, 64, 96), np.bool_)  # KV_S 70 padded to 96 columns
    mask[..., 64:, :] = True
    mask[..., :, 70:] = True
    mask[..., 5, 10:40] = True
    run_and_judge(make_kwargs(sq=64, skv=70, d=64, mask=mask))


@pytest.mark.parametrize("pre,nxt", [(32, 16), (64, -16), (-8, 24), (0, 0)])
def test_band_with_mask_matches_golden(pre, nxt):
    run_and_judge(make_kwargs(sq=96, skv=160, d=64, mask=band_mask(96, 160, pre, nxt), pre_tokens=pre, next_tokens=nxt))


def test_band_excludes_more_than_the_mask_says():
    # The mask excludes nothing; the band alone (pre 8, next -4) decides and leaves the first
    # rows without any key: those rows must be 0.
    kw = make_kwargs(sq=64, skv=64, d=32, mask=np.zeros((64, 64), np.uint8), pre_tokens=8, next_tokens=-4)
    out, gold = run_and_judge(kw)
    assert np.all(out[:, :, :4].astype(np.float32) == 0)


def test_pre_next_tokens_ignored_without_mask():
    kw = make_kwargs(sq=64, skv=64, d=32, pre_tokens=0, next_tokens=0)
    out, _ = run_and_judge(kw)
    full = fakit.run(OP, backend="cpu", **dict(kw, pre_tokens=MAX_INT, next_tokens=MAX_INT))
    np.testing.assert_array_equal(out, full)


def test_actual_seq_lengths_zero_the_padding_rows():
    kw = make_kwargs("bf16", "BSND", b=3, n=2, sq=64, d=32, actual_seq_lengths=[64, 17, 0])
    out, _ = run_and_judge(kw)
    assert np.all(out[1, 17:].astype(np.float32) == 0) and np.all(out[2].astype(np.float32) == 0)


@pytest.mark.parametrize("d", [16, 40, 72, 256, 512])
def test_head_dims_including_unaligned_and_512(d):
    run_and_judge(make_kwargs(sq=33, skv=150, d=d))


def test_single_query_row_as_in_the_spec_example():
    run_and_judge(make_kwargs(sq=1, skv=16, d=16, pre_tokens=65535, next_tokens=65535))


def test_large_gqa_ratio_64():
    run_and_judge(make_kwargs(n=64, nkv=1, sq=8, skv=40, d=16))


def test_pse_shift_is_reserved_and_ignored():
    kw = make_kwargs(sq=16, skv=16, d=16)
    base = fakit.run(OP, backend="cpu", **kw)
    pse = np.ones((1, 2, 16, 16), np.float16)
    np.testing.assert_array_equal(fakit.run(OP, backend="cpu", **dict(kw, pse_shift=pse)), base)


def test_empty_key_value_fills_zeros():
    kw = make_kwargs(sq=24, skv=0, d=32)
    out = fakit.run(OP, backend="cpu", **kw)
    assert out.shape == (1, 2, 24, 32) and np.all(out.astype(np.float32) == 0)


def test_empty_query_succeeds_doing_nothing():
    kw = make_kwargs(sq=0, skv=16, d=32)
    out = fakit.run(OP, backend="cpu", **kw)
    assert out.shape == (1, 2, 0, 32)


def test_many_units_over_all_cores_are_deterministic():
    kw = make_kwargs(b=2, n=8, nkv=4, sq=200, skv=300, d=64)
    first, _ = run_and_judge(kw)
    np.testing.assert_array_equal(fakit.run(OP, backend="cpu", **kw), first)


@pytest.mark.slow
@pytest.mark.parametrize("case", cases.suite(OP, "full"), ids=lambda c: c.id)
def test_full_suite_matches_golden(case):
    run_and_judge(case.inputs())


@pytest.mark.slow
@pytest.mark.parametrize("case,reason", cases.sweep(OP, "full")[1], ids=lambda x: getattr(x, "id", ""))
def test_full_suite_forbidden_cases_are_rejected(case, reason):
    kw = case.inputs()
    if case.options.get("pse_shift"):
        # pseShift is reserved (forced to nullptr by the spec): accepted and ignored.
        without = fakit.run(OP, backend="cpu", **dict(kw, pse_shift=None))
        np.testing.assert_array_equal(fakit.run(OP, backend="cpu", **kw), without)
        return
    with pytest.raises(fakit.AclnnError) as err:
        fakit.run(OP, backend="cpu", **kw)
    assert err.value.status == 161002, reason


@pytest.mark.parametrize("scale", [0.5, -0.25, 1.0, 0.3])
def test_scale_on_the_staged_key_matches_golden(scale):
    # Key rows loaded by several q-blocks are staged in Nz order (kv_nz.h); a power-of-two scale
    # (0.5, -0.25, 1) is then multiplied into K there and the vector cores skip their scale
    # pass, any other (0.3) stays a vector pass. A scale applied twice or not at all moves
    # every row far past the precision standard.
    kw = make_kwargs("fp16", "BNSD", n=64, nkv=16, sq=500, d=64)
    kw["scale_value"] = scale
    run_and_judge(kw)


def test_final_sums_in_fp16_only_where_they_fit():
    # A unit's final P.V sum leaves the cube in fp16 where l * max|V| stays below
    # FP16_SUM_LIMIT (V staged whole before the barrier, as in this plan: KV_NZ_BOTH): with
    # standard-normal inputs (the sweep's kind) every unit's final sum is fp16, half the bytes
    # of its fp32 rows; with V around 1000 (sums ~ l * 1000, far past fp16's 65504) they stay
    # fp32 and the output still matches (an fp16 sum there is inf).
    b, n, sq, skv, d = 1, 4, 1024, 2048, 128
    kw = make_kwargs("fp16", "BNSD", b=b, n=n, sq=sq, skv=skv, d=d)
    rng = standard_normal_qkv(kw, 1)
    normal = judged_l2_writes(run_and_judge, kw)
    kw["value"] = large_v(rng, kw["value"].shape)
    large = judged_l2_writes(run_and_judge, kw)
    # every unit's final sum: its rows x 128 head-dim columns, 2 bytes less per element in fp16
    assert large - normal == b * n * sq * d * 2


def test_final_sums_guard_sees_the_last_staged_v_rows():
    # The largest |V| only in the last key row, in a last staging chunk of 6 rows (skv = 384 + 6:
    # 768 elements, folded to 384 lanes before the last step): the guard must see it, keep the
    # final sums fp32 (2 bytes more per element than fp16) and the output must match.
    b, n, sq, skv, d = 1, 4, 1024, 390, 128
    kw = make_kwargs("fp16", "BNSD", b=b, n=n, sq=sq, skv=skv, d=d)
    standard_normal_qkv(kw, 2, query_scale=0.05)  # near-uniform attention: l ~ skv
    normal = judged_l2_writes(run_and_judge, kw)
    kw["value"][:, :, -1, :] = np.float16(1000.0)
    spiked = judged_l2_writes(run_and_judge, kw)
    assert spiked - normal == b * n * sq * d * 2


@pytest.mark.parametrize(
    "layout,b,n,sq,skv,causal",
    [
        ("BNSD", 1, 24, 500, 1024, False),
        ("BSND", 2, 12, 500, 1024, False),
        ("BNSD", 1, 24, 1056, 2048, True),  # 352-row q-blocks under a band
    ],
)
def test_final_sums_in_fp16_from_the_v_pass_at_d64(layout, b, n, sq, skv, causal):
    # D = 64 with three q-blocks per head: nothing is staged, so the largest |V| comes from the
    # vector cores' read-only pass over V in the main loop (v_abs_max.h), and the units that
    # end after their meeting take fp16 final sums (most of them here: three units per core).
    # Standard-normal inputs (the sweep's kind) take that path; V around 1000 keeps every sum
    # fp32 (an fp16 sum there is inf: with the guard removed this fails), and so does a single
    # large row at the very end of V's memory (the last vector core's share, near-uniform
    # attention: l ~ skv), which the pass must not miss.
    d = 64
    extra = dict(mask=band_mask(sq, skv, nxt=skv - sq), pre_tokens=MAX_INT, next_tokens=skv - sq) if causal else {}
    kw = make_kwargs("fp16", layout, b=b, n=n, sq=sq, skv=skv, d=d, **extra)
    rng = standard_normal_qkv(kw, 3, query_scale=0.05)
    assert_v_pass_sums(run_and_judge, kw, rng, b * n * sq * d)
