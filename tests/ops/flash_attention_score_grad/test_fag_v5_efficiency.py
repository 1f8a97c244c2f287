"""Efficiency properties of the V5 backward read from the emulator's counters: the cube issues
the useful multiply-accumulates only (five matmuls per visible (query, key) pair: S, dP, dV,
dK, dQ — kv blocks outside a causal band are never computed), and the (batch, kv head, kv
block) units spread over the AI cores."""

import numpy as np
from fag_helpers import OP, make_kwargs

import fakit
from fakit.backends import cpu
from fakit.golden import _common


def measure(kw):
    fakit.run(OP, backend="cpu", **kw)
    counters = cpu.last_counters()
    aic = [c for c in counters["cores"] if c["sub"] == "aic"]
    per_core = [c.get("M", {}).get("macs", 0) for c in aic]
    n, d = kw["head_num"], kw["query"].shape[2]
    cq, ck = [0] + list(kw["actual_seq_qlen"]), [0] + list(kw["actual_seq_kvlen"])
    mode = kw.get("sparse_mode", 0) if kw.get("atten_mask") is not None else 1
    visible = 0
    for b in range(len(cq) - 1):
        sq, sk = cq[b + 1] - cq[b], ck[b + 1] - ck[b]
        ex = _common.sparse_excluded(mode, np.arange(sq), sq, sk)
        visible += sq * sk if ex is None else int((~ex).sum())
    return sum(per_core), visible * 5 * d * n, per_core, counters["block_dim"]


def _causal(s):
    return np.triu(np.ones((s, s), bool), 1)


def test_full_attention_issues_exactly_the_useful_macs():
    issued, useful, _, _ = measure(make_kwargs(q_lens=(256, 130), kv_lens=(384, 200), n=2, d=64))
    assert issued == useful


def test_causal_blocks_outside_the_band_are_skipped():
    issued, useful, _, _ = measure(make_kwargs(q_lens=(1024,), n=1, d=64, mask=_causal(2048), sparse_mode=3))
    # whole 128-row query blocks around the diagonal: about 1 + 64/512 of the useful work
    assert issued <= 1.15 * useful, (issued, useful)


def test_units_spread_over_the_cores():
    issued, useful, per_core, block_dim = measure(
        make_kwargs(q_lens=(1024, 300), kv_lens=(1024, 500), n=4, nkv=2, d=64, mask=_causal(2048), sparse_mode=3)
    )
    busy = [m for m in per_core if m > 0]
    assert block_dim >= 20 and len(busy) >= 20, per_core
    assert max(busy) <= 1.5 * (sum(busy) / len(busy)), per_core
