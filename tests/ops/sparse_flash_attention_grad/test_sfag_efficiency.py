"""Efficiency properties of the SparseFlashAttentionGrad kernel, from the emulator's counters:
with G >= 16 heads the cube issues exactly the useful MACs (no padded rows, no chunk columns
past the selection), K/V rows are gathered once per token (cube GM reads close to the
gathered K + V bytes plus the dQ pass's second read of K), and the token split keeps the
cores evenly loaded."""

import numpy as np
import pytest
from sfag_helpers import DR, OP, D, make_kwargs, refresh_forward

import fakit
from fakit.backends import cpu


def _counters(**kw):
    fakit.run(OP, backend="cpu", **make_kwargs(**kw))
    aic = [x for x in cpu.last_counters()["cores"] if x["sub"] == "aic"]
    return np.array([x["M"]["macs"] for x in aic]), sum(x["MTE2"]["bytes"] for x in aic)


def test_useful_macs_gather_once_and_balance():
    # 24 tokens (one per core: no token is cut; S1 odd: no pair items) x 200 distinct
    # single-token picks of 256 keys (4 chunks, the last one partial).
    tokens, heads, picks = 24, 16, 200
    macs, mte2 = _counters(batch=8, s1=3, s2=256, heads=heads, picks=picks)
    qk = D + DR
    useful = tokens * heads * picks * (3 * qk + 2 * D)
    gathered = tokens * picks * (qk + D) * 2
    k_again = tokens * picks * qk * 2  # the dQ pass reads the gathered K rows once more
    assert macs.sum() == useful
    assert mte2 / (gathered + k_again) < 1.2  # the rest: Q, dO once per token, P and dS
    assert macs.max() == macs.min()  # equal tokens on every core


def test_pair_items_compute_the_union_once():
    # 48 tokens in 24 pair items (one per core): each item's S, dP, dQ, dK, dV Mmads run over
    # the union of its two selections with 2G rows, and its K/V rows are gathered once.
    tokens, heads, picks = 48, 16, 200
    kw = make_kwargs(batch=1, s1=tokens, s2=256, heads=heads, picks=picks)
    fakit.run(OP, backend="cpu", **kw)
    aic = [x for x in cpu.last_counters()["cores"] if x["sub"] == "aic"]
    idx = kw["sparse_indices"].reshape(tokens, -1)
    union = [len(set(idx[2 * i][idx[2 * i] >= 0]) | set(idx[2 * i + 1][idx[2 * i + 1] >= 0])) for i in range(24)]
    qk = D + DR
    macs = np.array([x["M"]["macs"] for x in aic])
    per_key = 2 * heads * (3 * qk + 2 * D)
    # (a partial last chunk's columns padded to the cube's 16: at most 15 per item)
    assert len(aic) == 24 and sum(union) * per_key <= macs.sum() <= (sum(union) + 24 * 15) * per_key
    gathered = sum(union) * (qk + D) * 2
    # the rest: Q, dO once per item, P and dS of 2G rows (and dS again in the dQ pass)
    assert sum(x["MTE2"]["bytes"] for x in aic) / (gathered + sum(union) * qk * 2) < 1.25


def test_block_runs_are_loaded_as_runs():
    # bs = 64: a chunk is one run of 64 consecutive rows, so each vector core gathers its half
    # of it with one DMA per tensor, not one per row; the cube loads the gathered chunk with
    # one copy per tensor. 2 tokens x 8 chunks (every block of S2) are cut into 16 parts of
    # one chunk each.
    fakit.run(OP, backend="cpu", **make_kwargs(batch=1, s1=2, s2=512, heads=16, block=64, picks=8))
    cores = cpu.last_counters()["cores"]
    aic = [x for x in cores if x["sub"] == "aic"]
    aiv = [x for x in cores if x["sub"] != "aic"]
    assert len(aic) == 16
    chunks_per_core = 1
    # per token: Q, Q rope, dO; per chunk: K (+ rope) and V from their slots, P and dS; in the
    # dQ pass per chunk and column pass: dS and a K column block (2 passes of 288 columns: a
    # 64 x 288 fp16 block takes both L0B copies)
    dq_passes = 2
    assert max(x["MTE2"]["ops"] for x in aic) == 3 + chunks_per_core * 4 + chunks_per_core * 2 * dq_passes
    # a vector core's 32 rows of a chunk one DMA per row and tensor would be 96 per chunk; per
    # run it is 3 (plus S and dP, the per-token loads and its share of the cast-out pass)
    assert max(x["MTE2"]["ops"] for x in aiv) < 32


def test_causal_rows_are_split_by_cost():
    # Mode 3, S1 = S2 = 480, every row selecting all keys it may see (row s: s + 1 keys): an
    # even token split would give the last core ~2x the mean; the cost cut keeps it near 1.
    kw = make_kwargs(batch=1, s1=480, s2=480, heads=16, picks=1, mode=3)
    idx = np.full_like(kw["sparse_indices"], -1)
    idx[..., :480] = np.arange(480)
    kw["sparse_indices"] = idx
    fakit.run(OP, backend="cpu", **refresh_forward(kw))
    macs = np.array([x["M"]["macs"] for x in cpu.last_counters()["cores"] if x["sub"] == "aic"])
    assert macs.max() / macs.mean() < 1.25


def test_few_tokens_are_cut_over_every_core():
    # 4 tokens x 2048 picks (32 chunks each) on 24 cores: cut at chunks, each token is shared
    # by several cores and no core computes more than 6 chunks (128 / 24 rounded up; a
    # whole-token cut: 32 chunks on each of 4 cores, 20 idle).
    kw = make_kwargs(batch=1, s1=4, s2=2048, heads=16, picks=2048, seed=4)
    fakit.run(OP, backend="cpu", **kw)
    counters = cpu.last_counters()
    assert counters["block_dim"] >= 20
    macs = np.array([x["M"]["macs"] for x in counters["cores"] if x["sub"] == "aic"])
    chunk = 16 * 64 * (3 * (D + DR) + 2 * D)
    assert macs.sum() == 4 * 32 * chunk
    assert macs.max() == 6 * chunk


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_shuffled_selection_is_walked_sorted(index_dtype):
    # Each token selects rows 0..127 in a random order (single-row picks): the kernel sorts the
    # selection first, so each 64-row chunk is one run of consecutive rows, gathered with a few
    # DMAs per vector core and scattered with one Fixpipe per key tile and tensor, not per row.
    tokens, picks = 2, 128
    kw = make_kwargs(batch=1, s1=tokens, s2=256, heads=16, picks=picks, seed=3, index_dtype=index_dtype)
    rng = np.random.default_rng(11)
    idx = np.full_like(kw["sparse_indices"], -1)
    for t in range(tokens):
        idx[0, t, 0, :picks] = rng.permutation(picks)
    kw["sparse_indices"] = idx
    fakit.run(OP, backend="cpu", **refresh_forward(kw))
    cores = cpu.last_counters()["cores"]
    aic = [x for x in cores if x["sub"] == "aic"]
    aiv = [x for x in cores if x["sub"] != "aic"]
    chunks = picks // 64  # per token, one token per core
    # unsorted: 32 rows x 3 tensors per vector core and chunk (192 DMAs); sorted: one run per
    # chunk, the rest are the S/dP, row-term and cast-out loads (about 40)
    assert max(x["MTE2"]["ops"] for x in aiv) < chunks * 48
    # unsorted: 2 scatter Fixpipes per key (256 per token); sorted: 2 per 16-key tile
    assert max(x["FIXP"]["ops"] for x in aic) < chunks * 40
