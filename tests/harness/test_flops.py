"""benchmarks/flops.py: pair counts against brute force, FLOP and byte formulas."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import flops  # noqa: E402


@pytest.mark.parametrize(
    "sq, sk, pre, nxt, diag",
    [(7, 7, flops.INT_MAX, 0, 0), (5, 9, 2, 1, 0), (9, 5, flops.INT_MAX, 0, -4), (6, 6, 3, -1, 0), (4, 8, -1, 3, 4)],
)
def test_band_pairs_match_brute_force(sq, sk, pre, nxt, diag):
    i = np.arange(sq)[:, None] + diag
    j = np.arange(sk)[None, :]
    expected = int(np.count_nonzero((j - i <= nxt) & (i - j <= pre)))
    assert flops.band_pairs(sq, sk, pre, nxt, diag) == expected


def test_causal_and_formulas():
    assert flops.causal_pairs(4, 4) == 10
    assert flops.causal_pairs(2, 4, right_down=True) == 3 + 4
    assert flops.varlen_pairs([2, 3], [2, 3], "causal") == 3 + 6
    assert flops.forward_flops(10, 2, 64) == 2 * 128 * 10 * 2
    assert flops.backward_flops(1, 1, 64, 32) == 2 * (192 + 64)
    assert flops.attention_min_bytes(4, 8, 2, 1, 16, 16, 2) == 2 * (4 * 2 * 16 * 2 + 8 * 16 * 2)
