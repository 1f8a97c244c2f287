"""The IncreFlashAttentionV4 kernel on the CPU target against the NumPy golden, feature by
feature: layouts, dtypes, GQA (heads batched as rows, several head blocks), KV lengths, the
split-KV combine, masks, pse_shift, KV left padding, paged caches, head dims."""
import numpy as np
import pytest

import fakit

from ifa_helpers import OP, make_kwargs, page, run_and_judge


def out_f32(kw):
    return fakit.run(OP, backend="cpu", **kw).astype(np.float32)


@pytest.mark.parametrize("layout", ["BSH", "BSND", "BNSD"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_layouts_and_dtypes_match_golden(layout, dtype):
    run_and_judge(make_kwargs(dtype, layout, b=2, n=8, nkv=2, s=300, d=64))


@pytest.mark.parametrize("n,nkv", [(4, 4), (8, 1), (16, 4), (64, 1)])
def test_gqa_and_mqa_match_golden(n, nkv):
    run_and_judge(make_kwargs("fp16", "BSH", b=2, n=n, nkv=nkv, s=160, d=32))


def test_group_larger_than_a_head_block():
    # D = 512 gives 32-row head blocks: a group of 64 heads spans two units.
    run_and_judge(make_kwargs("bf16", "BNSD", b=1, n=64, nkv=1, s=130, d=512))


@pytest.mark.parametrize("d", [16, 40, 128, 256])
def test_head_dims(d):
    run_and_judge(make_kwargs("fp16", "BSND", b=2, n=4, nkv=2, s=140, d=d, seed=2))


def test_actual_seq_lengths_including_zero_and_block_edges():
    kw = make_kwargs("fp16", "BNSD", b=4, n=4, nkv=2, s=400, d=64, actual_seq_lengths=[400, 0, 129, 128])
    out, _ = run_and_judge(kw)
    assert np.all(out[1].astype(np.float32) == 0)


def test_single_actual_seq_length_applies_to_every_batch():
    kw = make_kwargs("bf16", "BSH", b=3, n=2, s=300, d=32, actual_seq_lengths=[77])
    out, _ = run_and_judge(kw)
    ref = out_f32(make_kwargs("bf16", "BSH", b=3, n=2, s=300, d=32, actual_seq_lengths=[77, 77, 77]))
    np.testing.assert_array_equal(out.astype(np.float32), ref)


def test_split_kv_combine_equals_one_unit_per_row():
    # b = 1, one KV head: the planner splits the 1000 keys over cores (combine pass); with
    # 40 batches there are enough units and no split. Both must match the golden.
    run_and_judge(make_kwargs("fp16", "BNSD", b=1, n=8, nkv=1, s=1000, d=64))
    run_and_judge(make_kwargs("fp16", "BNSD", b=40, n=2, nkv=1, s=260, d=32))


def test_split_kv_with_ragged_lengths_and_empty_chunks():
    run_and_judge(make_kwargs("bf16", "BSND", b=2, n=4, nkv=1, s=1100, d=64, actual_seq_lengths=[1100, 3]))


@pytest.mark.parametrize("shape", ["BS", "B1S", "B11S"])
@pytest.mark.parametrize("mdtype", [np.bool_, np.int8, np.uint8])
def test_mask_shapes_and_dtypes(shape, mdtype):
    b, s = 2, 300
    rng = np.random.default_rng(3)
    m = rng.random((b, s + 20)) < 0.4   # wider than the KV S: only the first S positions count
    m = m.reshape({"BS": (b, s + 20), "B1S": (b, 1, s + 20), "B11S": (b, 1, 1, s + 20)}[shape])
    run_and_judge(make_kwargs("fp16", "BNSD", b=b, n=4, nkv=2, s=s, d=64, atten_mask=m.astype(mdtype)))


def test_fully_masked_batch_outputs_zero():
    m = np.zeros((2, 1, 1, 256), np.bool_)
    m[1] = True
    out, _ = run_and_judge(make_kwargs("fp16", "BNSD", b=2, n=4, s=256, d=32, atten_mask=m))
    assert np.all(out[1].astype(np.float32) == 0) and np.any(out[0] != 0)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("lead", [1, 2])
def test_pse_shift(dtype, lead):
    rng = np.random.default_rng(5)
    kw = make_kwargs(dtype, "BSH", b=2, n=4, nkv=2, s=200, d=64)
    kw["pse_shift"] = rng.uniform(-2, 2, (lead, 4, 1, 210)).astype(kw["query"].dtype)
    out, _ = run_and_judge(kw)
    without = out_f32(dict(kw, pse_shift=None))
    assert np.abs(out.astype(np.float32) - without).max() > 1e-2  # the pse is really applied


def test_pse_mask_and_lengths_together():
    rng = np.random.default_rng(6)
    kw = make_kwargs("bf16", "BNSD", b=3, n=8, nkv=2, s=500, d=64, actual_seq_lengths=[500, 260, 1])
    kw["pse_shift"] = rng.uniform(-1, 1, (3, 8, 1, 500)).astype(kw["query"].dtype)
    kw["atten_mask"] = (rng.random((3, 1, 1, 500)) < 0.3)
    run_and_judge(kw)


@pytest.mark.parametrize("pad,lengths", [(10, [100, 50]), (0, [190, 200]), (-5, [7, 0]), (150, [60, 51])])
def test_kv_left_padding(pad, lengths):
    # window [S - pad - L, S - pad); (150, 51) leaves the cache (200 - 150 - 51 < 0): zeros
    rng = np.random.default_rng(9)
    kw = make_kwargs("fp16", "BSH", b=2, n=4, nkv=2, s=200, d=32, actual_seq_lengths=lengths,
                     kv_padding_size=np.array([pad], np.int64))
    kw["atten_mask"] = rng.random((2, 200)) < 0.2
    kw["pse_shift"] = rng.uniform(-1, 1, (1, 4, 1, 200)).astype(np.float16)
    out, _ = run_and_judge(kw)
    if pad == 150:
        assert np.all(out[1].astype(np.float32) == 0)


def test_kv_padding_without_lengths_is_ignored():
    kw = make_kwargs("fp16", "BNSD", b=2, n=2, s=140, d=32)
    ref = out_f32(kw)
    out, _ = run_and_judge(dict(kw, kv_padding_size=np.array([30], np.int64)))
    np.testing.assert_array_equal(out.astype(np.float32), ref)


@pytest.mark.parametrize("cache", ["BSH", "BNSD"])
@pytest.mark.parametrize("block", [128, 256])
def test_paged_attention_matches_contiguous(cache, block):
    lengths = [300, 5, 0, 520]
    kw = make_kwargs("fp16", "BNSD", b=4, n=8, nkv=2, s=520, d=64, actual_seq_lengths=lengths)
    paged = page(kw, lengths, block, cache)
    out, _ = run_and_judge(paged)
    np.testing.assert_array_equal(out.astype(np.float32), out_f32(kw))


def test_paged_bsh_query_with_mask_and_pse():
    rng = np.random.default_rng(11)
    lengths = [200, 384]
    kw = make_kwargs("bf16", "BSH", b=2, n=4, nkv=1, s=384, d=64, actual_seq_lengths=lengths)
    kw["atten_mask"] = rng.random((2, 1, 1, 384)) < 0.3
    kw["pse_shift"] = rng.uniform(-1, 1, (2, 4, 1, 384)).astype(kw["query"].dtype)
    run_and_judge(page(kw, lengths, 128, "BSH"))
