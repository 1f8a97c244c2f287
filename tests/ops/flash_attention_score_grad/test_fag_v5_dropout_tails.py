"""The V5 backward's dropout keep bits where rows do not start on a byte (Skv % 8 != 0).

The backward (and its recompute of an absent forward output) reads the keep bits with the
forward's loader: the dense mask of spec 003, rows not padded, so with Skv % 8 != 0 every row
starts at another bit of a byte. The masks keep each row's first and last key and the last key
of every 128-key block (plus ~10 % at random) with keep_prob 0.25, so a bit read from the
neighbouring row or one column off changes dq/dk/dv beyond the comparison's tolerance.
"""

import numpy as np
import pytest
from fag_helpers import make_kwargs, run_and_judge

SHAPES = {
    # (q lens, kv lens, heads, head dim, sparse mode)
    "skv_mod8_odd": ((19, 33, 5), (9, 131, 13), 3, 32, 0),
    "ragged_key_blocks_causal": ((70, 130), (389, 203), 2, 64, 3),
}


def tail_keep_bits(q_lens, kv_lens, n, seed):
    rng = np.random.default_rng(seed)
    rows = []
    for sq, sk in zip(q_lens, kv_lens):
        keep = rng.random((n, sq, sk)) < 0.1
        keep[:, :, 0] = True
        keep[:, :, sk - 1] = True
        keep[:, :, 127:sk:128] = True
        rows.append(keep.reshape(-1))
    return np.packbits(np.concatenate(rows), bitorder="little")


@pytest.mark.parametrize("recompute", [False, True], ids=["given_stats", "recomputed_stats"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_backward_keep_bits_of_unaligned_rows(shape, recompute):
    q_lens, kv_lens, n, d, mode = SHAPES[shape]
    mask = np.triu(np.ones((2048, 2048), bool), 1) if mode else None
    kw = make_kwargs(
        "fp16",
        q_lens=q_lens,
        kv_lens=kv_lens,
        n=n,
        d=d,
        mask=mask,
        sparse_mode=mode,
        drop_mask=tail_keep_bits(q_lens, kv_lens, n, seed=7),
        keep_prob=0.25,
    )
    if recompute:  # the forward core recomputes the statistics and the output in the launch
        kw["softmax_max"] = kw["softmax_sum"] = kw["attention_in"] = None
    run_and_judge(kw)
