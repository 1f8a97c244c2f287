"""Efficiency properties of the decode split, read from the emulator's counters: the GQA
heads of a KV group share one Mmad (no per-head GEMV), the cube issues exactly the useful MACs,
K/V are streamed once, and a single long sequence spreads over many cores (split-KV)."""

import pytest
from ifa_helpers import OP, make_kwargs, page

import fakit
from fakit.backends import cpu


def measure(kw, g, d, keys):
    fakit.run(OP, backend="cpu", **kw)
    c = cpu.last_counters()
    aic = [x for x in c["cores"] if x["sub"] == "aic"]
    macs = sum(x["M"]["macs"] for x in aic)
    mmads = sum(x["M"]["ops"] for x in aic)
    kv_bytes = 2 * keys * d * 2  # K and V, fp16, per KV head
    return dict(
        mac_ratio=macs / (2.0 * g * keys * d),
        mmads=mmads,
        busy=sum(1 for x in aic if x["M"]["macs"]),
        cores=len(aic),
        mte2=sum(x["MTE2"]["bytes"] for x in aic),
        kv_bytes=kv_bytes,
    )


@pytest.fixture(scope="module")
def long_gqa():
    # one batch, one KV group of 16 heads, 8192 keys
    return measure(make_kwargs("fp16", "BNSD", b=1, n=16, nkv=1, s=8192, d=128), 16, 128, 8192)


def test_gqa_heads_share_each_mmad_and_macs_are_exact(long_gqa):
    r = long_gqa
    assert r["mac_ratio"] == pytest.approx(1.0), r
    # 64 key blocks x (Q.K^T + P.V) = 128 Mmads (D = 128 is one chunk): one per block, not per head
    assert r["mmads"] == 128, r


def test_single_sequence_spreads_over_the_cores(long_gqa):
    r = long_gqa
    assert r["busy"] >= min(r["cores"], 16) - 1, r


def test_kv_is_streamed_once(long_gqa):
    r = long_gqa
    # cube MTE2 = K and V once + P hand-offs (16 rows x 128 keys x 2 B per block) + Q once per
    # unit (16 rows x 128 x 2 B); the units are the KV splits, at most 64
    p_bytes = 64 * 16 * 128 * 2
    q_bytes = r["mte2"] - p_bytes - r["kv_bytes"]
    assert q_bytes % 4096 == 0 and 1 <= q_bytes // 4096 <= 64, r


def test_paged_small_pages_stream_the_same_bytes():
    kw = make_kwargs("fp16", "BNSD", b=1, n=8, nkv=1, s=1024, d=64, actual_seq_lengths=[1024])
    dense = measure(kw, 8, 64, 1024)
    paged = measure(page(kw, [1024], 32, "BNSD"), 8, 64, 1024)
    assert paged["mac_ratio"] == pytest.approx(1.0)
    assert paged["mte2"] == dense["mte2"], (paged, dense)
