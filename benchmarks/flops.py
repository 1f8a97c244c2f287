"""FLOP and byte formulas of the attention operators (the one place they live).

A "pair" is one (query row, key) score that a mask leaves in; an operator's useful work is
proportional to its pairs:
  forward:   QKᵀ (2·D flops per pair per head) + PV (2·Dv) -> 2·(D + Dv) per pair per head
  backward:  recompute S (2·D), dP = dO·Vᵀ (2·Dv), dV += Pᵀ·dO (2·Dv), dQ += dS·K (2·D),
             dK += dSᵀ·Q (2·D)                      -> 2·(3·D + 2·Dv) per pair per head
Softmax, scaling and masking are O(pairs) element-wise work and are not counted (as in
FlashAttention's and FlashInfer's reported TFLOP/s).
"""

from __future__ import annotations

from typing import Iterable, Sequence

INT_MAX = 2147483647


def band_pairs(sq: int, sk: int, pre: int = INT_MAX, nxt: int = INT_MAX, diag: int = 0) -> int:
    """Pairs (i, j), 0 <= i < sq, 0 <= j < sk, with i + diag - pre <= j <= i + diag + nxt.
    diag = 0: left-up alignment; diag = sk - sq: right-down alignment."""
    total = 0
    for i in range(sq):
        lo = max(0, i + diag - min(pre, sk + sq))
        hi = min(sk - 1, i + diag + min(nxt, sk + sq))
        total += max(0, hi - lo + 1)
    return total


def full_pairs(sq: int, sk: int) -> int:
    return sq * sk


def causal_pairs(sq: int, sk: int, right_down: bool = False) -> int:
    return band_pairs(sq, sk, INT_MAX, 0, sk - sq if right_down else 0)


def forward_flops(pairs: int, heads: int, d: int, dv: int | None = None) -> int:
    return 2 * (d + (d if dv is None else dv)) * pairs * heads


def backward_flops(pairs: int, heads: int, d: int, dv: int | None = None) -> int:
    dv = d if dv is None else dv
    return 2 * (3 * d + 2 * dv) * pairs * heads


def varlen_pairs(q_lens: Sequence[int], kv_lens: Sequence[int], kind: str = "full") -> int:
    """Pairs of a TND batch: kind is 'full', 'causal' (left-up) or 'causal_rd' (right-down)."""
    fn = {"full": full_pairs, "causal": causal_pairs, "causal_rd": lambda q, k: causal_pairs(q, k, right_down=True)}[
        kind
    ]
    return sum(fn(q, k) for q, k in zip(q_lens, kv_lens))


def min_bytes(tensors: Iterable[tuple]) -> int:
    """Minimum GM traffic: every (element count, bytes per element) tensor moved once."""
    return sum(int(n) * int(b) for n, b in tensors)


def attention_min_bytes(
    tq: int, tk: int, heads: int, kv_heads: int, d: int, dv: int, elem: int, backward: bool = False
) -> int:
    """Q, K, V read once and O written once (forward); backward also reads O and dO and
    writes dQ, dK, dV once."""
    q, k, v, o = tq * heads * d, tk * kv_heads * d, tk * kv_heads * dv, tq * heads * dv
    fwd = q + k + v + o
    return elem * (fwd + (o + q + k + v) if backward else fwd)
