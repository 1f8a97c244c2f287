"""aclnnIncreFlashAttentionV4GetWorkspaceSize rejects every violated constraint of spec 002
(Atlas A2) with the documented status — 161001 for null required arguments, 161002 for
dtype/format/shape/attribute violations and for the features this implementation does not
provide — and a log line naming the parameter."""

import dataclasses

import numpy as np
import pytest
from ifa_helpers import OP, make_kwargs, page

import fakit
from fakit import ops
from fakit.backends import cpu

BINDING = ops.REGISTRY[OP]


def expect(status, param, kw):
    with pytest.raises(fakit.AclnnError) as info:
        fakit.run(OP, backend="cpu", **kw)
    assert info.value.status == status, info.value.log
    assert param in info.value.log, info.value.log
    return info.value.log


def base(**extra):
    return make_kwargs("fp16", "BNSD", b=2, n=4, nkv=2, s=64, d=32, **extra)


# ------------------------------------------------------------------ 161001: null pointers
def _raw(drop=(), out=True, kw=None, **override):
    """Call with the binding's aclnn values of `kw` (default base()), `drop` passed as null
    pointers and `override` replacing aclnn values as given (no conversion)."""
    values = BINDING.prepare(dict(base() if kw is None else kw))
    for name in drop:
        values[name] = None
    values.update(override)
    relaxed = dataclasses.replace(
        BINDING,
        params=[dataclasses.replace(p, optional=True) for p in BINDING.params],
        prepare=lambda kw: kw,
        make_outputs=(lambda kw: {"attentionOut": np.zeros((2, 4, 1, 32), np.float16)}) if out else (lambda kw: {}),
    )
    return cpu.run_binding(relaxed, **values)


@pytest.mark.parametrize("name", ["query", "key", "value", "inputLayout"])
def test_null_required_argument_is_161001(name):
    with pytest.raises(fakit.AclnnError) as info:
        _raw([name])
    assert info.value.status == 161001 and name in info.value.log, info.value.log


def test_null_output_is_161001():
    with pytest.raises(fakit.AclnnError) as info:
        _raw([], out=False)
    assert info.value.status == 161001 and "attentionOut" in info.value.log


# ------------------------------------------------------------- 161002: query and attributes
def test_query_dtype_float32():
    kw = base()
    kw["query"] = kw["query"].astype(np.float32)
    expect(161002, "query", kw)


def test_query_s_must_be_one():
    kw = base()
    kw["query"] = np.concatenate([kw["query"]] * 2, axis=2)
    expect(161002, "query", kw)


@pytest.mark.parametrize("layout", ["TND", "BNSD_BSND", "XYZ"])
def test_unsupported_layouts(layout):
    expect(161002, "inputLayout", base(input_layout=layout))


@pytest.mark.parametrize(
    "n,nkv,param", [(4, 3, "numKeyValueHeads"), (0, 0, "numHeads"), (4, -1, "numKeyValueHeads"), (3, 0, "numHeads")]
)
def test_head_counts(n, nkv, param):
    expect(161002, param, base(num_heads=n, num_key_value_heads=nkv))


def test_gqa_ratio_above_64():
    kw = make_kwargs("fp16", "BSH", b=1, n=128, nkv=1, s=16, d=16)
    expect(161002, "numKeyValueHeads", kw)


def test_head_dim_above_512():
    expect(161002, "query", make_kwargs("fp16", "BNSD", b=1, n=1, s=16, d=528))


@pytest.mark.parametrize("value", [2, -1])
def test_inner_precise(value):
    expect(161002, "innerPrecise", base(inner_precise=value))


def test_scale_not_finite():
    expect(161002, "scaleValue", base(scale_value=float("nan")))


# -------------------------------------------------------------------- key / value lists
def test_key_dtype_differs_from_query():
    kw = base()
    kw["key"] = [kw["key"][0].astype(np.float32)]
    expect(161002, "key", kw)


def test_value_shape_differs_from_key():
    kw = base()
    kw["value"] = [kw["value"][0][:, :, :32]]
    expect(161002, "value", kw)


def test_key_heads_and_batch():
    kw = base()
    expect(161002, "key", dict(kw, key=[kw["key"][0][:1]], value=[kw["value"][0][:1]]))
    expect(161002, "numKeyValueHeads", dict(kw, num_key_value_heads=1))


def test_list_sizes():
    kw = base()
    expect(161002, "value", dict(kw, value=kw["value"] * 2))
    expect(161002, "key", dict(kw, key=kw["key"] * 3, value=kw["value"] * 3))


def test_tensor_list_tensors_must_hold_one_batch():
    kw = base()
    ks = [kw["key"][0], kw["key"][0]]
    vs = [kw["value"][0], kw["value"][0]]
    expect(161002, "key", dict(kw, key=ks, value=vs))


def test_tensor_list_lengths_checked_per_batch():
    kw = base()
    ks = [kw["key"][0][:1, :, :40], kw["key"][0][1:]]
    vs = [kw["value"][0][:1, :, :40], kw["value"][0][1:]]
    expect(161002, "actualSeqLengths", dict(kw, key=ks, value=vs, actual_seq_lengths=[41, 64]))


def test_int8_kv_needs_antiquant_scale_of_the_right_shape():
    kw = base()
    k8 = [np.zeros(kw["key"][0].shape, np.int8)]
    expect(161002, "antiquantScale", dict(kw, key=k8, value=k8))
    expect(161002, "antiquantScale", dict(kw, key=k8, value=k8, antiquant_scale=np.ones(0, np.float16)))  # empty
    for shape in [(3,), (2, 2, 16), (2, 64, 2)]:
        expect(161002, "antiquantScale", dict(kw, key=k8, value=k8, antiquant_scale=np.ones(shape, np.float16)))
    expect(161002, "antiquantScale", dict(kw, key=k8, value=k8, antiquant_scale=np.ones(2, np.float32)))
    expect(
        161002,
        "antiquantOffset",
        dict(
            kw,
            key=k8,
            value=k8,
            antiquant_scale=np.ones(2, np.float16),
            antiquant_offset=np.ones((2, 2, 32), np.float16),
        ),
    )


def test_antiquant_with_float_kv():
    expect(161002, "antiquantScale", base(antiquant_scale=np.ones(2, np.float16)))


def test_paged_bsh_cache_wider_than_65535():
    kw = make_kwargs("fp16", "BSH", b=1, n=256, s=128, d=512)
    expect(161002, "key", page(kw, [128], 128, "BSH"))


# -------------------------------------------------------------- lengths, padding, mask, pse
@pytest.mark.parametrize("lens", [[1, 2, 3], [65, 1], [-1, 2]])
def test_actual_seq_lengths(lens):
    expect(161002, "actualSeqLengths", base(actual_seq_lengths=lens))


def test_kv_padding_size_dtype_and_size():
    kw = base(actual_seq_lengths=[3, 4])
    for pad in (np.array([1.0], np.float16), np.array([1, 2], np.int64)):
        with pytest.raises(fakit.AclnnError) as info:
            _raw(kw=kw, kvPaddingSize=pad)
        assert info.value.status == 161002 and "kvPaddingSize" in info.value.log, info.value.log


@pytest.mark.parametrize("shape", [(1, 64), (2, 2, 64), (2, 1, 1, 63)])
def test_mask_shapes(shape):
    expect(161002, "attenMask", base(atten_mask=np.zeros(shape, np.bool_)))


def test_mask_dtype():
    expect(161002, "attenMask", base(atten_mask=np.zeros((2, 64), np.float16)))


def test_mask_may_be_shorter_than_s_when_lengths_are():
    out = fakit.run(OP, backend="cpu", **base(actual_seq_lengths=[10, 20], atten_mask=np.zeros((2, 20), np.bool_)))
    assert out.shape == (2, 4, 1, 32)


@pytest.mark.parametrize("shape", [(2, 4, 2, 64), (3, 4, 1, 64), (2, 2, 1, 64), (2, 4, 1, 60), (4, 1, 64)])
def test_pse_shapes(shape):
    expect(161002, "pseShift", base(pse_shift=np.zeros(shape, np.float16)))


def test_pse_dtype():
    expect(161002, "pseShift", base(pse_shift=np.zeros((2, 4, 1, 64), np.float32)))


# ------------------------------------------------------------------------ quantisation
@pytest.mark.parametrize("name", ["dequant_scale1", "quant_scale1", "dequant_scale2"])
def test_int8_query_quant_parameters_must_be_null(name):
    expect(
        161002,
        {"dequant_scale1": "dequantScale1", "quant_scale1": "quantScale1", "dequant_scale2": "dequantScale2"}[name],
        base(**{name: np.ones(1, np.uint64 if "dequant" in name else np.float32)}),
    )


def test_int8_output_needs_quant_scale2():
    kw = base()
    with pytest.raises(fakit.AclnnError) as info:
        relaxed = dataclasses.replace(
            BINDING, prepare=lambda x: x, make_outputs=lambda x: {"attentionOut": np.zeros((2, 4, 1, 32), np.int8)}
        )
        cpu.run_binding(relaxed, **BINDING.prepare(dict(kw)))
    assert info.value.status == 161002 and "quantScale2" in info.value.log


@pytest.mark.parametrize("shape", [(2,), (4, 16), (3, 32)])
def test_quant_scale2_shape(shape):
    expect(161002, "quantScale2", base(quant_scale2=np.ones(shape, np.float32)))


def test_quant_offset2_must_match_scale():
    expect(
        161002,
        "quantOffset2",
        base(quant_scale2=np.ones((4, 32), np.float32), quant_offset2=np.ones((128,), np.float32)),
    )
    expect(161002, "quantOffset2", base(quant_scale2=np.ones(1, np.float32), quant_offset2=np.ones(1, np.float16)))


def test_quant_scale2_dtypes():
    import ml_dtypes

    expect(161002, "quantScale2", base(quant_scale2=np.ones(1, np.float16)))
    # BFLOAT16 parameters need a BFLOAT16 query
    expect(161002, "quantScale2", base(quant_scale2=np.ones(1, ml_dtypes.bfloat16)))


def test_quant_offset_without_int8_output():
    expect(161002, "quantScale2", base(quant_offset2=np.ones(1, np.float32)))


# ------------------------------------------------------------------------ page attention
def paged(block=128, cache="BSH", lengths=(100, 200), **kw):
    return page(make_kwargs("fp16", "BNSD", b=2, n=4, nkv=2, s=256, d=32, **kw), list(lengths), block, cache)


def test_paged_requires_lengths():
    kw = paged()
    kw["actual_seq_lengths"] = None
    expect(161002, "actualSeqLengths", kw)


def test_paged_with_left_padding():
    expect(161002, "kvPaddingSize", dict(paged(), kv_padding_size=np.array([1], np.int64)))


@pytest.mark.parametrize("bs", [0, 520, 24])
def test_paged_block_size_rules(bs):
    expect(161002, "blockSize", dict(paged(), block_size=bs))


def test_paged_int8_block_size_needs_multiple_of_32():
    kw = make_kwargs("fp16", "BNSD", b=2, n=4, nkv=2, s=256, d=32)
    k8 = [np.zeros((2, 2, 256, 32), np.int8)]
    kw = page(dict(kw, key=k8, value=k8, antiquant_scale=np.ones(2, np.float16)), [100, 200], 48, "BSH")
    expect(161002, "blockSize", kw)


def test_paged_table_shape_and_dtype():
    kw = paged()
    expect(161002, "blocktable", dict(kw, block_table=kw["block_table"][:1]))
    with pytest.raises(fakit.AclnnError) as info:
        _raw(kw=kw, blocktable=kw["block_table"].astype(np.int64))
    assert info.value.status == 161002 and "blocktable" in info.value.log, info.value.log


def test_paged_table_too_narrow_for_lengths():
    kw = paged()
    expect(161002, "blocktable", dict(kw, block_table=kw["block_table"][:, :1], actual_seq_lengths=[100, 200]))


def test_paged_4d_cache_needs_bnsd():
    kw = page(make_kwargs("fp16", "BSH", b=2, n=4, nkv=2, s=256, d=32), [100, 200], 128, "BNSD")
    expect(161002, "key", kw)


def test_paged_too_few_cache_blocks():
    kw = paged()
    expect(161002, "key", dict(kw, key=[kw["key"][0][:2]], value=[kw["value"][0][:2]]))


def test_output_shape_and_dtype():
    kw = base()
    values = BINDING.prepare(dict(kw))
    wrong = dataclasses.replace(
        BINDING, prepare=lambda x: x, make_outputs=lambda x: {"attentionOut": np.zeros((2, 4, 1, 16), np.float16)}
    )
    with pytest.raises(fakit.AclnnError) as info:
        cpu.run_binding(wrong, **values)
    assert info.value.status == 161002 and "attentionOut" in info.value.log
    wrong = dataclasses.replace(
        BINDING, prepare=lambda x: x, make_outputs=lambda x: {"attentionOut": np.zeros((2, 4, 1, 32), np.float32)}
    )
    with pytest.raises(fakit.AclnnError) as info:
        cpu.run_binding(wrong, **values)
    assert info.value.status == 161002 and "attentionOut" in info.value.log
