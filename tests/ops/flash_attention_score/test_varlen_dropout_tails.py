"""The dropout keep bits where rows do not start on a byte (Skv % 8 != 0).

The spec's mask is dense — (sum over batches of N x Sq x Skv) / 8 bytes, rows not padded — so
with Skv % 8 != 0 (or a batch whose bits end inside a byte) every row starts at another bit of
a byte, and the kernel must shift each row's bits down to its key block's first column. The
masks here keep few bits per row, among them each row's first and last keys and the last key of
every 128-key block, and drop with keep_prob 0.25 (kept P scaled by 4): a bit read from the
neighbouring row or one column off picks another value row, which the golden comparison does
not forgive. Lengths cover Skv % 8 = 1..7, one key, several key blocks with a ragged last one,
batches whose bits end inside a byte, GQA, both P.V modes (D 32 and 128) and sparse modes that
start a row's key range past column 0 (3: right-down causal, 4: band).
"""

import numpy as np
import pytest
from fa_varlen_helpers import make_kwargs, run_and_judge, tiling_carries_unit_table

MAX_INT = 2147483647


def tail_keep_bits(seq_q, seq_kv, n, seed):
    """Dense keep bits: per row the first and last key, the last key of each 128-key block,
    and ~10 % of the others at random."""
    rng = np.random.default_rng(seed)
    rows = []
    for sq, sk in zip(seq_q, seq_kv):
        keep = rng.random((n, sq, sk)) < 0.1
        keep[:, :, 0] = True
        keep[:, :, sk - 1] = True
        keep[:, :, 127:sk:128] = True
        rows.append(keep.reshape(-1))
    bits = np.concatenate(rows) if rows else np.zeros(0, bool)
    return np.packbits(bits, bitorder="little")


SHAPES = {
    # (seq_q, seq_kv, heads, kv heads, head dim)
    "skv_mod8_1_to_7": ((19, 5, 33, 8, 41, 3, 12), (9, 2, 131, 13, 45, 7, 23), 3, 3, 32),
    "one_key_rows": ((7, 40), (1, 1), 2, 2, 32),
    "ragged_key_blocks": ((70, 1, 33), (389, 257, 131), 3, 1, 128),
    "long_rows_odd_heads": ((130,), (1001,), 5, 5, 64),
}


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_keep_bits_of_unaligned_rows(shape, dtype):
    seq_q, seq_kv, n, nkv, d = SHAPES[shape]

    def case(seed):
        kw = make_kwargs(dtype, seq_q=seq_q, seq_kv=seq_kv, n=n, nkv=nkv, d=d, seed=seed)
        kw.update(drop_mask=tail_keep_bits(seq_q, seq_kv, n, seed=20 + seed), keep_prob=0.25)
        return kw

    run_and_judge(case(0), reseed=case)


@pytest.mark.parametrize("mode,pre,nxt", [(3, MAX_INT, MAX_INT), (4, 37, 5), (0, 61, 29)])
def test_keep_bits_of_unaligned_rows_with_a_sparse_mode(mode, pre, nxt):
    # the key range of a row starts past column 0 (band) and its blocks end inside a byte
    seq_q, seq_kv = (45, 130, 9), (77, 203, 11)

    def case(seed):
        kw = make_kwargs(
            "fp16", seq_q=seq_q, seq_kv=seq_kv, n=3, d=64, mode=mode, pre_tokens=pre, next_tokens=nxt, seed=seed
        )
        kw.update(drop_mask=tail_keep_bits(seq_q, seq_kv, 3, seed=40 + seed), keep_prob=0.25)
        return kw

    run_and_judge(case(0), reseed=case)


def test_keep_bits_of_units_dealt_by_cost():
    # Uneven causal lengths: the cores walk units dealt by cost (UNITS_TABLE), so a core's
    # batches skip some; the keep-bit cursor only moves forward within a core.
    seq_q = (130, 700, 61, 300)

    def case(seed):
        kw = make_kwargs("fp16", seq_q=seq_q, n=4, nkv=2, d=64, mode=3, seed=seed)
        kw.update(drop_mask=tail_keep_bits(seq_q, seq_q, 4, seed=60 + seed), keep_prob=0.25)
        return kw

    run_and_judge(case(0), reseed=case)
    assert tiling_carries_unit_table(), "the planner kept contiguous ranges: the table path went untested"
