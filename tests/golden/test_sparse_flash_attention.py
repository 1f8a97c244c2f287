"""Sparse flash attention goldens (forward + aclnnSparseFlashAttentionGrad) against an
independent torch reference (dense per-token selection, autograd) and properties."""

import os
import sys

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from torch_decode_sparse_ref import sparse_reference, sparse_selection  # noqa: E402

from fakit.golden import sparse_flash_attention as sfa  # noqa: E402
from fakit.golden import sparse_flash_attention_benchmark as sfa_bench
from fakit.golden import sparse_flash_attention_grad as sfag
from fakit.golden import sparse_flash_attention_grad_benchmark as sfag_bench

BF16 = ml_dtypes.bfloat16


def case(
    rng,
    *,
    layout="BSND",
    B=2,
    S1=4,
    S2=40,
    N1=4,
    N2=1,
    D=16,
    Dr=8,
    K=6,
    block=4,
    lq=None,
    lkv=None,
    dtype=np.float16,
    mode=3,
    negatives=False,
    wild=False,
):
    """Random inputs; TND uses cumulative lengths lq/lkv (per batch counts given)."""
    lq = [S1] * B if lq is None else lq
    lkv = [S2] * B if lkv is None else lkv
    if layout == "TND":
        T1, T2 = sum(lq), sum(lkv)
        qs, ks = (T1, N1), (T2, N2)
    else:
        qs, ks = (B, S1, N1), (B, S2, N2)
    g = lambda shp, d: rng.standard_normal(shp + (d,)).astype(dtype)  # noqa: E731
    x = dict(query=g(qs, D), key=g(ks, D), value=g(ks, D))
    if Dr:
        x.update(query_rope=g(qs, Dr), key_rope=g(ks, Dr))
    idx = np.full(qs[:-1] + (N2, K), -1, np.int32)
    rows = [(b, s) for b in range(B) for s in range(lq[b])]
    for t, (b, s) in enumerate(rows):
        thr = lkv[b] if mode == 0 else lkv[b] - lq[b] + s + 1
        nblk = max(-(-thr // block), 0)
        for n2 in range(N2):
            pick = rng.permutation(max(nblk, 1))[:K] if nblk else np.array([], int)
            if wild:  # indices beyond the KV length and duplicates
                pick = np.concatenate([pick[: K - 2], [nblk + 3, pick[0] if pick.size else 0]])
                # in-range junk after the first ceil(threshold / block) entries is never read
                pick = np.concatenate([pick, rng.integers(0, max(nblk, 1), K - pick.size)])
            where = (t,) if layout == "TND" else (b, s)
            idx[where + (n2, slice(0, pick.size))] = pick
            if negatives and pick.size > 2:
                idx[where + (n2, 2)] = -7  # a negative index ends the list
    x["sparse_indices"] = idx
    kw = dict(scale_value=0.3, sparse_block_size=block, sparse_mode=mode)
    if layout == "TND":
        kw.update(actual_seq_lengths_query=np.cumsum(lq), actual_seq_lengths_kv=np.cumsum(lkv))
    elif lkv != [S2] * B or lq != [S1] * B:
        kw.update(actual_seq_lengths_query=lq, actual_seq_lengths_kv=lkv)
    return x, kw


def fwd(x, kw, layout, bench=False):
    return (sfa_bench if bench else sfa)(layout_query=layout, layout_kv=layout, **x, **kw)


def ref(x, kw, layout, d_out=None):
    return sparse_reference(layout=layout, d_out=d_out, **x, **kw)


FORWARD_CASES = {
    "bsnd_causal_rope": dict(),
    "bsnd_mode0_block1": dict(mode=0, block=1, K=12),
    "bsnd_block16_lengths": dict(block=16, K=3, S2=64, lkv=[64, 50], lq=[4, 3]),
    "bsnd_no_rope_gqa": dict(Dr=0, N1=8, N2=2),
    "bsnd_mqa_one_head": dict(N1=1),
    "bsnd_negative_indices": dict(negatives=True, mode=0),
    "bsnd_out_of_range_and_duplicates": dict(wild=True, mode=0),
    "bsnd_causal_short_kv": dict(S1=6, S2=4, block=2, K=3),  # early rows select nothing
    "bsnd_causal_unread_tail": dict(wild=True, S2=20, K=8),
    "tnd_causal": dict(layout="TND", lq=[3, 0, 5], lkv=[20, 7, 33], B=3),
    "tnd_mode0_bf16": dict(layout="TND", lq=[2, 4], lkv=[9, 30], mode=0, dtype=BF16),
}


@pytest.mark.parametrize("name", sorted(FORWARD_CASES))
def test_forward_matches_reference(name):
    opts = dict(FORWARD_CASES[name])
    layout = opts.get("layout", "BSND")
    x, kw = case(np.random.default_rng(len(name)), **opts)
    got = fwd(x, kw, layout)
    want, _ = ref(x, kw, layout)
    for key in ("attention_out", "softmax_max", "softmax_sum"):
        assert got[key].dtype == np.float32 and got[key].shape == want[key].shape, key
        assert np.isfinite(got[key]).all()
        np.testing.assert_allclose(got[key], want[key], rtol=2e-6, atol=2e-6, err_msg=key)


def test_softmax_stat_shapes():
    x, kw = case(np.random.default_rng(0), N1=8, N2=2, S1=3)
    got = fwd(x, kw, "BSND")
    assert got["softmax_max"].shape == (2, 2, 3, 4)  # (B, N2, S1, G)
    x, kw = case(np.random.default_rng(0), layout="TND", lq=[3, 2], lkv=[10, 10], N1=8, N2=2)
    got = fwd(x, kw, "TND")
    assert got["softmax_sum"].shape == (2, 5, 4)  # (N2, T1, G)


def test_selection_rule_on_a_hand_case():
    # block 4, threshold 10: read ceil(10/4) = 3 indices; block 2 is clipped to tokens 8, 9;
    # the fourth index is never read; -1 stops the list.
    assert sparse_selection([2, 0, 1, 1], 10, 4) == [8, 9, 0, 1, 2, 3, 4, 5, 6, 7]
    assert sparse_selection([0, -1, 1], 10, 4) == [0, 1, 2, 3]
    assert sparse_selection([5, 0], 10, 4) == [0, 1, 2, 3]  # block 5 starts beyond: skipped
    # the golden applies the same rule: equal scores, v = one-hot of the KV position, so the
    # output is the selection histogram (each of tokens 0..9 once -> 0.1 each)
    q = np.zeros((1, 1, 1, 10), np.float16)
    k = np.zeros((1, 10, 1, 10), np.float16)
    v = np.eye(10, dtype=np.float16).reshape(1, 10, 1, 10)
    out = sfa(q, k, v, np.array([[[[2, 0, 1, 1]]]], np.int32), scale_value=1.0, sparse_block_size=4, sparse_mode=0)[
        "attention_out"
    ].reshape(-1)
    np.testing.assert_allclose(out, np.full(10, 0.1), atol=1e-7)
    dup = sfa(q, k, v, np.array([[[[0, 0, -1]]]], np.int32), scale_value=1.0, sparse_block_size=4, sparse_mode=0)[
        "attention_out"
    ].reshape(-1)
    np.testing.assert_allclose(dup, [0.25] * 4 + [0] * 6, atol=1e-7)  # duplicates count twice


@pytest.mark.parametrize("mode", [0, 3])
@pytest.mark.parametrize("block", [1, 4])
def test_selecting_all_blocks_equals_dense_attention(mode, block):
    rng = np.random.default_rng(mode * 10 + block)
    B, S1, S2, N1, D = 2, 5, 23, 4, 16
    q = rng.standard_normal((B, S1, N1, D)).astype(np.float16)
    k = rng.standard_normal((B, S2, 1, D)).astype(np.float16)
    v = rng.standard_normal((B, S2, 1, D)).astype(np.float16)
    nblk = -(-S2 // block)
    idx = np.broadcast_to(np.arange(nblk, dtype=np.int32), (B, S1, 1, nblk)).copy()
    got = sfa(q, k, v, idx, scale_value=0.25, sparse_block_size=block, sparse_mode=mode)
    s = np.einsum("bqnd,bkd->bnqk", q.astype(np.float64), k[:, :, 0].astype(np.float64)) * 0.25
    if mode == 3:  # right-down causal: key j visible to row i iff j <= S2 - S1 + i
        s = np.where(np.arange(S2)[None, :] <= (S2 - S1 + np.arange(S1))[:, None], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    dense = np.einsum("bnqk,bkd->bqnd", p / p.sum(-1, keepdims=True), v[:, :, 0].astype(np.float64))
    np.testing.assert_allclose(got["attention_out"], dense, atol=2e-6)


def test_paged_kv_equals_contiguous_kv():
    rng = np.random.default_rng(5)
    x, kw = case(rng, S2=48, lkv=[48, 30], lq=[4, 4], block=4)
    contiguous = fwd(x, kw, "BSND")
    bs, ids = 16, rng.permutation(8)
    table = np.full((2, 3), -1, np.int32)
    caches = {n: np.zeros((8, bs, 1, x[n].shape[-1]), x[n].dtype) for n in ("key", "value", "key_rope")}
    used = 0
    for b, n in enumerate([48, 30]):
        for j in range(-(-n // bs)):
            table[b, j] = ids[used]
            for name, cache in caches.items():
                cache[ids[used]] = x[name][b, j * bs : (j + 1) * bs]
            used += 1
    px = dict(x, **caches)
    paged = sfa(**px, **kw, block_table=table, layout_query="BSND", layout_kv="PA_BSND")
    for key in contiguous:
        np.testing.assert_allclose(paged[key], contiguous[key], atol=1e-7, err_msg=key)


@pytest.mark.parametrize("dtype,tol", [(np.float16, 3e-3), (BF16, 3e-2)])
def test_forward_benchmark_is_close_and_in_dtype(dtype, tol):
    x, kw = case(np.random.default_rng(6), S2=300, K=80, block=4, dtype=dtype, mode=0)
    gold, bench = fwd(x, kw, "BSND"), fwd(x, kw, "BSND", bench=True)
    out_g, out_b = gold["attention_out"], bench["attention_out"]
    np.testing.assert_allclose(out_b, out_g, atol=tol)
    assert not np.array_equal(out_b, out_g)
    assert np.array_equal(out_b, out_b.astype(dtype).astype(np.float32))
    np.testing.assert_allclose(bench["softmax_max"], gold["softmax_max"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bench["softmax_sum"], gold["softmax_sum"], rtol=1e-4)


# ------------------------------------------------------------------------------ gradients
GRAD_CASES = {
    "bsnd_causal_rope": dict(),
    "bsnd_mode0_block1": dict(mode=0, block=1, K=10),
    "bsnd_gqa_no_rope": dict(Dr=0, N1=8, N2=2, block=8, K=3),
    "bsnd_duplicates_negatives": dict(wild=True, negatives=True, mode=0),
    "bsnd_causal_unread_tail": dict(wild=True, S2=20, K=8),
    "bsnd_lengths": dict(lkv=[40, 21], lq=[4, 2]),
    "tnd_causal": dict(layout="TND", lq=[3, 0, 4], lkv=[17, 5, 26], B=3),
    "tnd_mode0": dict(layout="TND", lq=[2, 3], lkv=[12, 31], mode=0, block=16, K=2),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grad_matches_autograd_of_sparse_forward(name):
    opts = dict(GRAD_CASES[name], dtype=np.float32)
    layout = opts.get("layout", "BSND")
    rng = np.random.default_rng(len(name) + 100)
    x, kw = case(rng, **opts)
    fw = fwd(x, kw, layout)
    d_out = rng.standard_normal(fw["attention_out"].shape).astype(np.float32)
    grads = sfag(
        **x,
        d_out=d_out,
        out=fw["attention_out"],
        softmax_max=fw["softmax_max"],
        softmax_sum=fw["softmax_sum"],
        layout=layout,
        **kw,
    )
    _, want = ref(x, kw, layout, d_out=d_out)
    for key, val in want.items():
        if val is None:
            assert grads[key] is None, key
            continue
        assert grads[key].dtype == np.float32 and grads[key].shape == val.shape, key
        np.testing.assert_allclose(grads[key], val, rtol=1e-4, atol=2e-5, err_msg=key)


def test_grad_benchmark_is_close_and_in_dtype():
    rng = np.random.default_rng(7)
    x, kw = case(rng, S2=200, K=40, block=4, dtype=np.float16, mode=0)
    fw = fwd(x, kw, "BSND")
    args = dict(
        x,
        d_out=rng.standard_normal(fw["attention_out"].shape).astype(np.float16),
        out=fw["attention_out"].astype(np.float16),
        softmax_max=fw["softmax_max"],
        softmax_sum=fw["softmax_sum"],
        layout="BSND",
        **kw,
    )
    gold, bench = sfag(**args), sfag_bench(**args)
    for key in gold:
        scale = np.abs(gold[key]).max()
        np.testing.assert_allclose(bench[key], gold[key], atol=5e-3 * scale, err_msg=key)
        assert np.array_equal(bench[key], bench[key].astype(np.float16).astype(np.float32))


@pytest.mark.parametrize(
    "bad,match",
    [
        (dict(sparse_mode=1), "sparse_mode"),
        (dict(sparse_block_size=3), "sparse_block_size"),
        (dict(pre_tokens=100), "pre_tokens"),
        (dict(layout="BNSD"), "layout"),
    ],
)
def test_grad_invalid_arguments_name_the_parameter(bad, match):
    x, kw = case(np.random.default_rng(8), dtype=np.float32)
    fw = fwd(x, kw, "BSND")
    args = dict(
        x,
        d_out=fw["attention_out"],
        out=fw["attention_out"],
        softmax_max=fw["softmax_max"],
        softmax_sum=fw["softmax_sum"],
        layout="BSND",
        **kw,
    )
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        sfag(**args)


@pytest.mark.slow
def test_mla_sized_grad_runs_bounded():
    # spec-sized heads: D = 512 + rope 64, N1 = 16, K = 256 tokens per query
    rng = np.random.default_rng(9)
    x, kw = case(rng, S1=64, S2=1024, N1=16, D=512, Dr=64, K=256, block=1, dtype=np.float16)
    fw = fwd(x, kw, "BSND")
    grads = sfag(
        **x,
        d_out=fw["attention_out"].astype(np.float16),
        out=fw["attention_out"].astype(np.float16),
        softmax_max=fw["softmax_max"],
        softmax_sum=fw["softmax_sum"],
        layout="BSND",
        **kw,
    )
    assert all(np.isfinite(g).all() for g in grads.values() if g is not None)
