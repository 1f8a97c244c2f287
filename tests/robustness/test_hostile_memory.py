"""Tensors whose description would overflow int64 arithmetic, lie about their storage
or reach past it are rejected by every aclnn API with 161002 and a message naming the parameter,
never a sanitizer report, a crash or a silent read of foreign memory."""

import numpy as np
import pytest
from robust_helpers import OPS, call, expect_status, smoke

import fakit
from fakit.views import Described

HUGE = 2**62


def _query(op, kw):
    return np.asarray(kw["query"])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", [0, -1])
def test_dimension_of_2_62_is_161002(op, axis):
    kw = smoke(op)
    q = _query(op, kw)
    shape = list(q.shape)
    shape[axis] = HUGE
    log = expect_status(161002, "query", call, op, kw, {"query": Described(tuple(shape), q.dtype)})
    assert "elements" in log


@pytest.mark.parametrize("op", OPS)
def test_negative_storage_dimension_is_161002(op):
    kw = smoke(op)
    q = _query(op, kw)
    # aclCreateTensor itself refuses a negative view dim; a negative storage dim reaches the API
    expect_status(
        161002, "query", call, op, kw, {"query": Described(q.shape, q.dtype, storage=(-5,), alloc_bytes=q.nbytes + 64)}
    )


@pytest.mark.parametrize("op", OPS)
def test_storage_smaller_than_the_view_is_161002(op):
    kw = smoke(op)
    q = _query(op, kw)
    # the allocation is large enough (page rounding); the declared storage is one element short
    log = expect_status(
        161002,
        "query",
        call,
        op,
        kw,
        {"query": Described(q.shape, q.dtype, storage=(q.size - 1,), alloc_bytes=q.nbytes + 4096)},
    )
    assert "storage shape" in log


@pytest.mark.parametrize("op", OPS)
def test_storage_offset_past_the_storage_is_161002(op):
    kw = smoke(op)
    q = _query(op, kw)
    log = expect_status(
        161002,
        "query",
        call,
        op,
        kw,
        {"query": Described(q.shape, q.dtype, offset=q.size, storage=(q.size,), alloc_bytes=2 * q.nbytes + 4096)},
    )
    assert "storage shape" in log


@pytest.mark.parametrize("op", OPS)
def test_huge_stride_is_161002(op):
    kw = smoke(op)
    q = _query(op, kw)
    strides = [1] * q.ndim
    strides[0] = HUGE
    expect_status(
        161002,
        "query",
        call,
        op,
        kw,
        {"query": Described(q.shape, q.dtype, strides=tuple(strides), storage=q.shape, alloc_bytes=q.nbytes)},
    )


@pytest.mark.parametrize("op", OPS)
def test_huge_output_is_161002(op):
    kw = smoke(op)
    from fakit import ops

    out = next(p.name for p in ops.REGISTRY[op].params if p.kind == "out_tensor")
    q = _query(op, kw)
    expect_status(161002, out, call, op, kw, {out: Described((HUGE,) + q.shape[1:], q.dtype)})


@pytest.mark.parametrize("op", OPS)
def test_missing_query_is_aclnn_error_161001_with_the_c_message(op):
    kw = smoke(op)
    kw["query"] = None
    with pytest.raises(fakit.AclnnError) as info:
        fakit.run(op, backend="cpu", **kw)
    assert info.value.status == 161001
    assert "query is a null pointer" in info.value.log


# A broadcast view (zero strides) can describe far more elements than its storage holds. V5 and
# SFAG accept views, and CANN's aclnn layer makes them contiguous on the device first; when that
# copy cannot be allocated the call answers 561103 naming the tensor, never a crash.
BROADCAST_MASK = Described((2**20, 2**20), np.uint8, strides=(0, 0), storage=(1,), alloc_bytes=64)


def test_broadcast_view_too_large_to_copy_is_561103():
    op = "flash_attention_unpadding_score_grad_v5"
    kw = smoke(op, lambda kw: kw["sparse_mode"] == 0 and kw["atten_mask"] is not None)
    log = expect_status(561103, "atten_mask", call, op, kw, {"attenMaskOptional": BROADCAST_MASK})
    assert "does not fit in device memory" in log


@pytest.mark.parametrize("mode", [3, 4])
def test_broadcast_mask_in_a_compressed_mode_is_161002(mode):
    # the fuzz campaign's V5 input: a [16, 2^31] zero-stride mask in a generated-mask mode, which
    # the launch tried to copy (32 GiB); those modes take only the compressed mask
    op = "flash_attention_unpadding_score_grad_v5"
    kw = smoke(op, lambda kw: kw["sparse_mode"] == mode)
    mask = Described((16, 2**31), np.uint8, strides=(0, 0), storage=(1,), alloc_bytes=64)
    log = expect_status(161002, "attenMaskOptional", call, op, kw, {"attenMaskOptional": mask})
    assert "compressed" in log
