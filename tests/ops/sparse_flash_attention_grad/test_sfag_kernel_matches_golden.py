"""The SparseFlashAttentionGrad kernel (CPU target) against the NumPy golden: BSND and TND,
fp16/bf16, rope on/off, G = 1..128 query heads on the one KV head, block sizes 1-64, sparse
modes 0 and 3, duplicate / out-of-range / -1 indices, several chunks of gathered keys per
token (more than 64 rows), INT32/INT64 indices, deterministic mode."""

import numpy as np
import pytest
from sfag_helpers import make_kwargs, refresh_forward, run_and_judge

import fakit
from fakit.backends import cpu


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_bsnd_rope_block1_mode0_matches_golden(dtype):
    # 2 batches x 5 tokens, 4 heads, 40 picks of single tokens from 96 keys.
    run_and_judge(make_kwargs(dtype, batch=2, s1=5, s2=96, heads=4, picks=40))


def test_without_rope_matches_golden():
    out, _ = run_and_judge(make_kwargs(batch=1, s1=3, s2=48, heads=2, picks=20, rope=False))
    assert out["d_query_rope"] is None and out["d_key_rope"] is None


@pytest.mark.parametrize("heads", [1, 16, 128])
def test_head_counts_match_golden(heads):
    # G = 1 (a single cube row, no GEMV), 16 (one fractal), 128 (the largest M).
    run_and_judge(make_kwargs(s1=2, s2=40, heads=heads, picks=24, seed=heads))


@pytest.mark.parametrize("block", [8, 16, 32, 64])
def test_block_sizes_match_golden(block):
    # S2 not a multiple of the block: the last block is clipped to the KV length.
    run_and_judge(make_kwargs(batch=1, s1=3, s2=200, heads=2, block=block, picks=5, seed=block))


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("block", [1, 16])
def test_mode3_right_down_causal_matches_golden(dtype, block):
    # S1 < S2: early rows see a prefix only; picks past the threshold are skipped or clipped.
    run_and_judge(make_kwargs(dtype, batch=2, s1=6, s2=70, heads=2, block=block, picks=64, mode=3, seed=block + 3))


def test_mode3_rows_without_keys_get_zero_gradients():
    # S1 > S2: the first S1 - S2 rows select nothing (threshold <= 0).
    kw = make_kwargs(batch=1, s1=6, s2=3, heads=2, picks=3, mode=3)
    out, gold = run_and_judge(kw)
    assert not out["d_query"][0, :3].astype(np.float32).any()


def test_many_chunks_duplicates_and_filler():
    # 150 picks with repeats: three chunks of gathered keys, repeated rows accumulate.
    run_and_judge(make_kwargs(batch=1, s1=3, s2=100, heads=2, picks=150, duplicates=True, seed=7))


def test_dq_over_several_segments_matches_golden():
    # 40 picks of 64-row blocks (every block of S2 = 2560 once, in random order): 40 chunks a
    # token, so the dQ pass runs for a segment of 32 chunks (written plainly) and one of 8
    # (added atomically).
    run_and_judge(make_kwargs(batch=1, s1=3, s2=2560, heads=4, block=64, picks=40, seed=13))


def test_pair_item_over_two_segments_matches_golden():
    # A pair whose selections are disjoint (rows 0..2047 and 2048..4095, shuffled): a union of
    # 64 chunks where the plan expects 48 (random picks), so its dQ pass runs for a segment of
    # 52 chunks (written plainly) and one of 12 (added atomically); deterministic: the item
    # whole on one core.
    kw = make_kwargs(batch=1, s1=2, s2=4096, heads=2, picks=2048, seed=29, deterministic=True)
    rng = np.random.default_rng(31)
    for t in range(2):
        kw["sparse_indices"][0, t, 0, :] = rng.permutation(2048) + 2048 * t
    run_and_judge(refresh_forward(kw))


def test_out_of_range_indices_are_skipped():
    kw = make_kwargs(batch=1, s1=2, s2=30, heads=2, block=8, picks=3, seed=5)
    # block 0x7F000001 is past S2 (and would be a NaN sort key unclamped); 3 is clipped
    kw["sparse_indices"][0, 0, 0, 3:6] = [0x7F000001, 3, 2]
    kw["sparse_indices"][0, 1, 0, 1] = -7  # any negative ends the list
    run_and_judge(refresh_forward(kw))


def test_first_negative_entry_ends_each_list_wherever_it_lies():
    # The vector search for the first negative entry: at a list's start, inside and at the
    # edges of 8- and 64-entry groups, at the last entry, and a later -1 after an earlier one.
    kw = make_kwargs(batch=1, s1=7, s2=600, heads=2, picks=300, seed=17)
    for t, pos in enumerate((0, 7, 8, 64, 129, 299)):
        kw["sparse_indices"][0, t, 0, pos] = -1
    kw["sparse_indices"][0, 6, 0, 250] = -1
    kw["sparse_indices"][0, 6, 0, 70] = -3
    run_and_judge(refresh_forward(kw))


def test_int64_indices_match_golden():
    run_and_judge(make_kwargs(s1=3, s2=50, heads=2, picks=30, index_dtype=np.int64))


def test_int64_indices_past_int32_are_skipped():
    # The sort narrows INT64 rows to INT32: 2**33 + 2 must stay past the KV length (skipped),
    # not become row 2; a negative entry still ends the list.
    kw = make_kwargs(s1=2, s2=40, heads=2, picks=6, index_dtype=np.int64, seed=9)
    kw["sparse_indices"][0, 0, 0, 2] = 2**33 + 2
    kw["sparse_indices"][0, 1, 0, 3] = -(2**40)
    run_and_judge(refresh_forward(kw))


@pytest.mark.parametrize("mode", [0, 3])
def test_tnd_with_empty_batch_matches_golden(mode):
    run_and_judge(
        make_kwargs(
            layout="TND",
            q_lens=(3, 0, 4),
            kv_lens=(50, 20, 90),
            heads=4,
            picks=40,
            block=8 if mode else 1,
            mode=mode,
            seed=11,
        )
    )


def test_bsnd_actual_lengths_match_golden():
    # Per-batch lengths in BSND: query rows past act_q get nothing, keys past act_kv are unread.
    run_and_judge(make_kwargs(batch=2, s1=4, s2=64, heads=2, picks=30, q_lens=[2, 4], kv_lens=[40, 64], mode=3))


def test_deterministic_mode_is_reproducible_and_matches_golden():
    # One core in deterministic mode: the atomic adds into dK/dV come in one fixed order.
    kw = make_kwargs(batch=2, s1=4, s2=20, heads=2, picks=20, duplicates=True, deterministic=True)
    first, _ = run_and_judge(kw)
    assert cpu.last_counters()["block_dim"] == 1
    second = fakit.run("sparse_flash_attention_grad", backend="cpu", **kw)
    for name in ("d_query", "d_key", "d_value", "d_query_rope", "d_key_rope"):
        assert np.array_equal(first[name].view(np.uint16), second[name].view(np.uint16)), name


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_tokens_cut_between_cores_match_golden(index_dtype):
    # 3 tokens x 640 picks of 2048 keys (10 chunks each) on 24 cores: every token is cut into
    # parts on several cores (each starts inside it, its dQ rows zeroed first and added by every
    # part); one token ends its list early (-1 after 100 picks), so the later parts of it find
    # no chunk; another repeats rows.
    kw = make_kwargs(batch=1, s1=3, s2=2048, heads=4, picks=640, seed=21, index_dtype=index_dtype)
    kw["sparse_indices"][0, 1, 0, 100:] = -1
    kw["sparse_indices"][0, 2, 0, 10:20] = 7
    run_and_judge(refresh_forward(kw))
    assert cpu.last_counters()["block_dim"] == 24


@pytest.mark.parametrize(("heads", "rope", "deterministic"), [(2, True, False), (64, False, False), (4, True, True)])
def test_later_tokens_of_a_core_match_golden(heads, rope, deterministic):
    # 80 tokens on 24 cores (or all on one): a core's tokens after its first two have their
    # selections sorted in the main loop by its own vector cores. Some tokens select nothing
    # (three in a row, -1 from the first entry) or end early, so the cube and the vector cores
    # skip tokens between the sorted ones.
    kw = make_kwargs(batch=1, s1=80, s2=160, heads=heads, picks=70, rope=rope, deterministic=deterministic, seed=29)
    idx = kw["sparse_indices"]
    idx[0, [9, 10, 11, 30, 47, 79], 0, :] = -1
    idx[0, [12, 40], 0, 5:] = -1
    run_and_judge(refresh_forward(kw))
    assert cpu.last_counters()["block_dim"] == (1 if deterministic else 24)


def test_tokens_are_split_over_the_cores():
    # mode 0 BSND: the tokens go in pairs (one item of 2G heads over the union of the two
    # selections), one pair per core; every key selected by both tokens of a pair
    run_and_judge(make_kwargs(batch=2, s1=4, s2=20, heads=2, picks=20, duplicates=True))
    assert cpu.last_counters()["block_dim"] == 4
    # an odd S1 keeps single tokens, one per core
    run_and_judge(make_kwargs(batch=2, s1=3, s2=20, heads=2, picks=20, duplicates=True))
    assert cpu.last_counters()["block_dim"] == 6


def test_token_pairs_cut_between_cores_match_golden():
    # 4 tokens (2 pair items, each ~17 chunks over the union) on 24 cores: every item is cut
    # into parts (the merged list's jump to a part's first chunk); one token ends its list
    # early, one repeats rows, one selects nothing (its pair's other token alone), and the
    # first negative entry of each list lies elsewhere.
    kw = make_kwargs(batch=1, s1=4, s2=2048, heads=4, picks=640, seed=23)
    kw["sparse_indices"][0, 1, 0, 100:] = -1
    kw["sparse_indices"][0, 2, 0, 10:20] = 7
    kw["sparse_indices"][0, 3, 0, :] = -1
    run_and_judge(refresh_forward(kw))
    assert cpu.last_counters()["block_dim"] >= 20


def test_token_pairs_with_kv_lengths_match_golden():
    # BSND with actual_seq_kvlen only: both tokens of a pair see their batch's KV length
    kw = make_kwargs(batch=2, s1=4, s2=64, heads=2, picks=30, q_lens=[4, 4], kv_lens=[40, 64])
    del kw["actual_seq_lengths_query"]
    run_and_judge(refresh_forward(kw))


def test_token_pairs_with_partly_shared_selections_match_golden():
    # pairs whose selections overlap in part (the merged walk's three kinds of rows) over
    # several chunks and cores, with repeated indices and -1 filler
    run_and_judge(make_kwargs(batch=2, s1=6, s2=160, heads=8, picks=96, duplicates=True))


@pytest.mark.slow
def test_spec_sized_token_128_heads_2048_keys():
    # The spec's largest G with the full K = 2048 picks of single tokens (32 chunks a token).
    run_and_judge(make_kwargs("bf16", batch=1, s1=4, s2=2048, heads=128, picks=2048, mode=3, block=1))


@pytest.mark.parametrize(("layout", "heads"), [("TND", 128), ("BSND", 32)])
def test_next_token_query_loaded_under_the_dq_pass_matches_golden(layout, heads):
    # Two or three tokens a core whose dQ pass ends in the upper L1 staging half (G = 128: 8
    # chunks, two groups per column pass; a pair item of 2 x 32 heads: two column passes), so
    # the next token's Q loads under the pass's last group; one token selects nothing (its
    # core skips it after the early load) and one selects a single chunk.
    if layout == "TND":
        kw = make_kwargs(layout="TND", q_lens=[40, 24], kv_lens=[640, 576], heads=heads, picks=500, mode=0, seed=31)
        skip, short = [5, 30], [17]
    else:
        kw = make_kwargs(batch=1, s1=96, s2=640, heads=heads, picks=500, mode=0, seed=31)
        skip, short = [10, 11], [40]
    idx = kw["sparse_indices"]
    flat = idx.reshape(-1, idx.shape[-1])
    flat[skip, :] = -1
    flat[short, 40:] = -1
    run_and_judge(refresh_forward(kw))
