"""aclnnSparseFlashAttentionGradGetWorkspaceSize rejects every violated constraint of spec 004
(Atlas A2) with the documented status — 161001 for null required arguments, 161002 for
dtype/format/shape/attribute violations — and a log line naming the parameter; the spec's edge
cases (empty query) and non-contiguous tensors (非连续Tensor √) succeed."""

import ctypes as C
import dataclasses

import ml_dtypes
import numpy as np
import pytest
from sfag_helpers import OP, make_kwargs

import fakit
from fakit import cases
from fakit.backends import cpu

ACL = {
    np.dtype(np.float16): 1,
    np.dtype(ml_dtypes.bfloat16): 27,
    np.dtype(np.float32): 0,
    np.dtype(np.int32): 3,
    np.dtype(np.int64): 9,
    np.dtype(np.int16): 6,
}
FORMAT_ND, FORMAT_NCHW = 2, 0
INPUTS = [
    "query",
    "key",
    "value",
    "sparseIndices",
    "dOut",
    "out",
    "softmaxMax",
    "softmaxSum",
    "actualSeqLengthsQueryOptional",
    "actualSeqLengthskvOptional",
    "queryRopeOptional",
    "keyRopeOptional",
]
OUTPUTS = ["dQueryOut", "dKeyOut", "dValueOut", "dQueryRopeOutOptional", "dKeyRopeOutOptional"]


class Desc:
    """A tensor argument described explicitly: shape, dtype, element strides (default
    contiguous; zeros let a huge shape sit on one element) and format."""

    def __init__(self, shape, dtype, strides=None, fmt=FORMAT_ND, data=None):
        self.shape, self.dtype, self.fmt, self.data = tuple(shape), np.dtype(dtype), fmt, data
        self.strides = (
            strides if strides is not None else [int(np.prod(self.shape[i + 1 :])) for i in range(len(self.shape))]
        )


def base_values(layout="BSND", rope=True):
    """aclnn argument values of a small valid call (tensors as Desc)."""
    kw = (
        make_kwargs(layout="TND", q_lens=(2, 1), kv_lens=(20, 30), heads=2, picks=4, rope=rope)
        if layout == "TND"
        else make_kwargs(batch=2, s1=2, s2=20, heads=2, picks=4, rope=rope)
    )
    from fakit import ops

    binding = ops.REGISTRY[OP]
    values = binding.prepare(dict(kw))
    values.update(binding.make_outputs(values))
    for name in INPUTS + OUTPUTS:
        if values.get(name) is not None:
            arr = np.asarray(values[name])
            # the actual lengths are read on the host: they keep their values
            values[name] = Desc(arr.shape, arr.dtype, data=arr if name.startswith("actualSeq") else None)
    return values


def call(values):
    """(status, log) of GetWorkspaceSize; tensors sit on zeroed device buffers."""
    rt = cpu.runtime()
    lib = rt.lib
    keep = []

    def tensor(d):
        if d is None:
            return None
        span = 1 + sum((n - 1) * s for n, s in zip(d.shape, d.strides)) if all(d.shape) else 1
        dev = rt.to_device(np.ascontiguousarray(d.data) if d.data is not None else np.zeros(max(span, 1), d.dtype))
        keep.append(dev)
        nd = len(d.shape)
        shape = (C.c_int64 * max(nd, 1))(*d.shape)
        st = (C.c_int64 * max(nd, 1))(*d.strides)
        storage = (C.c_int64 * 1)(max(span, 1))  # the storage the view spans, declared 1-D
        t = lib.aclCreateTensor(shape, nd, ACL[d.dtype], st, 0, d.fmt, storage, 1, dev)
        keep.append(("t", t))
        return t

    v = values
    args = [tensor(v.get(n)) for n in INPUTS]
    args += [
        C.c_double(v["scaleValue"]),
        C.c_int64(v["sparseBlockSize"]),
        None if v["layoutOptional"] is None else v["layoutOptional"].encode(),
        C.c_int64(v["sparseMode"]),
        C.c_int64(v["preTokens"]),
        C.c_int64(v["nextTokens"]),
        C.c_bool(v["deterministic"]),
    ]
    args += [tensor(v.get(n)) for n in OUTPUTS]
    fn = lib.aclnnSparseFlashAttentionGradGetWorkspaceSize
    fn.restype = C.c_int
    fn.argtypes = (
        [C.c_void_p] * 12
        + [C.c_double, C.c_int64, C.c_char_p, C.c_int64, C.c_int64, C.c_int64, C.c_bool]
        + [C.c_void_p] * 5
        + [C.POINTER(C.c_uint64), C.POINTER(C.c_void_p)]
    )
    lib.ascendc_emu_clear_last_messages()
    ws, exe = C.c_uint64(0), C.c_void_p()
    status = fn(*args, C.byref(ws), C.byref(exe))
    log = rt.last_error() if status else ""
    for item in keep:
        if isinstance(item, tuple):
            lib.aclDestroyTensor(item[1])
        else:
            lib.aclrtFree(item)
    return status, log


def expect(status, param, values):
    got, log = call(values)
    assert got == status, f"status {got}, log: {log}"
    assert param in log, log
    return log


def with_(values, **changes):
    out = dict(values)
    out.update(changes)
    return out


def test_valid_calls_succeed():
    for layout in ("BSND", "TND"):
        for rope in (True, False):
            assert call(base_values(layout, rope))[0] == 0


# ------------------------------------------------------------------ 161001: null pointers
@pytest.mark.parametrize(
    "name",
    [
        "query",
        "key",
        "value",
        "sparseIndices",
        "dOut",
        "out",
        "softmaxMax",
        "softmaxSum",
        "dQueryOut",
        "dKeyOut",
        "dValueOut",
        "keyRopeOptional",
        "dQueryRopeOutOptional",
        "dKeyRopeOutOptional",
    ],
)
def test_null_required_argument_is_161001(name):
    expect(161001, name, with_(base_values(), **{name: None}))


@pytest.mark.parametrize("name", ["actualSeqLengthsQueryOptional", "actualSeqLengthskvOptional"])
def test_tnd_needs_actual_lengths_161001(name):
    expect(161001, name, with_(base_values("TND"), **{name: None}))


# ------------------------------------------------------------- 161002: attributes
@pytest.mark.parametrize("layout", ["BNSD", "BSH", "bsnd", "PA_BSND"])
def test_unsupported_layout(layout):
    expect(161002, "layoutOptional", with_(base_values(), layoutOptional=layout))


def test_null_layout_means_bsnd():
    assert call(with_(base_values(), layoutOptional=None))[0] == 0


@pytest.mark.parametrize("bs", [0, 2, 4, 128, -1])
def test_sparse_block_size_values(bs):
    expect(161002, "sparseBlockSize", with_(base_values(), sparseBlockSize=bs))


@pytest.mark.parametrize("mode", [1, 2, 4, 5, 6, 7, 8, -1])
def test_sparse_modes_other_than_0_and_3(mode):
    expect(161002, "sparseMode", with_(base_values(), sparseMode=mode))


@pytest.mark.parametrize("name,value", [("preTokens", 100), ("preTokens", 0), ("nextTokens", 0), ("nextTokens", 2**31)])
def test_pre_next_tokens_only_the_default(name, value):
    expect(161002, name, with_(base_values(), **{name: value}))


# ------------------------------------------------------------- 161002: dtypes and formats
FP16, BF16 = np.float16, ml_dtypes.bfloat16


def retype(values, name, dtype=None, shape=None, **kw):
    d = values[name]
    return with_(values, **{name: Desc(shape or d.shape, dtype or d.dtype, **kw)})


def test_query_dtype_float32():
    v = base_values()
    for name in ["query", "key", "value", "dOut", "out", "queryRopeOptional", "keyRopeOptional"] + OUTPUTS:
        v = retype(v, name, np.float32)
    expect(161002, "query", v)


@pytest.mark.parametrize(
    "name",
    [
        "key",
        "value",
        "dOut",
        "out",
        "queryRopeOptional",
        "keyRopeOptional",
        "dQueryOut",
        "dKeyOut",
        "dValueOut",
        "dQueryRopeOutOptional",
        "dKeyRopeOutOptional",
    ],
)
def test_dtype_must_match_query(name):
    expect(161002, name, retype(base_values(), name, BF16))


@pytest.mark.parametrize("dtype", [np.int16, np.float32])
def test_sparse_indices_dtype(dtype):
    expect(161002, "sparseIndices", retype(base_values(), "sparseIndices", dtype))


@pytest.mark.parametrize("name", ["softmaxMax", "softmaxSum"])
def test_softmax_statistics_must_be_float32(name):
    expect(161002, name, retype(base_values(), name, FP16))


@pytest.mark.parametrize("name", ["actualSeqLengthsQueryOptional", "actualSeqLengthskvOptional"])
def test_actual_lengths_dtype(name):
    expect(161002, name, retype(base_values("TND"), name, np.float32))


def test_actual_lengths_same_dtype():
    expect(161002, "actualSeqLengthskvOptional", retype(base_values("TND"), "actualSeqLengthskvOptional", np.int32))


@pytest.mark.parametrize("name", ["query", "key", "sparseIndices", "softmaxMax", "dQueryOut"])
def test_format_must_be_nd(name):
    expect(161002, name, retype(base_values(), name, fmt=FORMAT_NCHW))


def test_non_contiguous_tensor_is_accepted():
    v = base_values()
    d = v["value"]
    strides = list(d.strides)
    strides[1] *= 2  # every other KV row
    assert call(with_(v, value=Desc(d.shape, d.dtype, strides=strides))) == (0, "")


# ------------------------------------------------------------- 161002: shapes
def reshape(values, name, shape):
    return with_(values, **{name: Desc(shape, values[name].dtype)})


def test_query_rank_must_fit_layout():
    expect(161002, "query", reshape(base_values(), "query", (4, 2, 512)))


@pytest.mark.parametrize("heads", [3, 6, 256])
def test_query_heads_powers_of_two_up_to_128(heads):
    v = base_values()
    expect(161002, "query", reshape(v, "query", (2, 2, heads, 512)))


@pytest.mark.parametrize("name,shape", [("query", (2, 2, 2, 256)), ("key", (2, 20, 1, 128))])
def test_head_dim_must_be_512(name, shape):
    expect(161002, name, reshape(base_values(), name, shape))


def test_key_heads_must_be_one():
    expect(161002, "key", reshape(base_values(), "key", (2, 20, 2, 512)))


def test_key_batch_must_match_query():
    expect(161002, "key", reshape(base_values(), "key", (3, 20, 1, 512)))


def test_batch_at_most_256():
    v = base_values()
    v = reshape(v, "query", (257, 1, 2, 512))
    expect(161002, "query", reshape(v, "key", (257, 20, 1, 512)))


@pytest.mark.parametrize(
    "name,shape,axis",
    [("query", (2, 131073, 2, 512), "S1"), ("key", (2, 131073, 1, 512), "S2"), ("key", (2, 0, 1, 512), "S2")],
)
def test_sequence_lengths_1_to_128k(name, shape, axis):
    v = base_values()
    d = v[name]
    huge = with_(v, **{name: Desc(shape, d.dtype, strides=[0] * 4)})
    assert axis in expect(161002, name, huge)


@pytest.mark.parametrize(
    "name,shape",
    [
        ("value", (2, 21, 1, 512)),
        ("dOut", (2, 2, 2, 64)),
        ("out", (2, 3, 2, 512)),
        ("sparseIndices", (2, 2, 1, 4096)),
        ("sparseIndices", (2, 2, 1, 512)),
        ("sparseIndices", (2, 2, 1, 0)),
        ("sparseIndices", (2, 2, 2, 2048)),
        ("sparseIndices", (2, 2, 2048)),
        ("sparseIndices", (2, 3, 1, 2048)),
        ("softmaxMax", (2, 2, 2)),
        ("softmaxMax", (2, 2, 1, 2)),
        ("softmaxSum", (2, 1, 2, 8)),
        ("queryRopeOptional", (2, 2, 2, 32)),
        ("keyRopeOptional", (2, 20, 2, 64)),
        ("keyRopeOptional", (2, 19, 1, 64)),
        ("dQueryOut", (2, 2, 2, 64)),
        ("dKeyOut", (2, 21, 1, 512)),
        ("dValueOut", (1, 20, 1, 512)),
        ("dQueryRopeOutOptional", (2, 2, 2, 32)),
        ("dKeyRopeOutOptional", (2, 20, 1, 32)),
    ],
)
def test_shapes_must_match_bsnd(name, shape):
    expect(161002, name, reshape(base_values(), name, shape))


@pytest.mark.parametrize(
    "name,shape",
    [
        ("softmaxMax", (2, 3, 1)),
        ("softmaxSum", (3, 2)),
        ("sparseIndices", (3, 1, 2048, 1)),
        ("actualSeqLengthsQueryOptional", (3,)),
        ("actualSeqLengthskvOptional", (257,)),
        ("actualSeqLengthsQueryOptional", (2, 1)),
    ],
)
def test_shapes_must_match_tnd(name, shape):
    expect(161002, name, reshape(base_values("TND"), name, shape))


def test_actual_lengths_one_per_batch_each():
    # TND: B comes from the lengths, so the two must agree.
    expect(161002, "actualSeqLengthskvOptional", reshape(base_values("TND"), "actualSeqLengthskvOptional", (3,)))


def test_bsnd_actual_lengths_one_per_batch():
    v = base_values()
    v["actualSeqLengthsQueryOptional"] = Desc((3,), np.int64)
    expect(161002, "actualSeqLengthsQueryOptional", v)


def test_key_rope_without_query_rope():
    v = base_values(rope=False)
    v["keyRopeOptional"] = Desc((2, 20, 1, 64), FP16)
    expect(161002, "keyRopeOptional", v)


def test_rope_outputs_without_rope_inputs():
    v = base_values(rope=False)
    v["dQueryRopeOutOptional"] = Desc((2, 2, 2, 64), FP16)
    expect(161002, "dQueryRopeOutOptional", v)


# ------------------------------------------------------------- edge cases that succeed
def test_empty_query_returns_zero_key_and_value_gradients():
    kw = make_kwargs(batch=1, s1=2, s2=16, heads=2, picks=4)
    for name in ("query", "d_out", "out", "query_rope"):
        kw[name] = kw[name][:, :0]
    kw["sparse_indices"] = kw["sparse_indices"][:, :0]
    kw["softmax_max"] = kw["softmax_max"][:, :, :0]
    kw["softmax_sum"] = kw["softmax_sum"][:, :, :0]
    out = fakit.run(OP, backend="cpu", **kw)
    assert out["d_query"].shape == (1, 0, 2, 512)
    assert not out["d_key"].astype(np.float32).any() and not out["d_value"].astype(np.float32).any()


def _sendable(forbidden):
    """The full suite's forbidden cases that are tensors at all (a BSND call with batches of
    different lengths has no array shape, so there is nothing to send)."""
    return [(c, r) for c, r in forbidden if not (c.layout == "BSND" and len(set(c.shapes["qlens"])) > 1)]


def _inputs(case):
    if case.attrs["sparse_mode"] not in (0, 3):
        # The forward golden has no such mode: build the tensors with mode 0, then ask for it.
        kw = dataclasses.replace(case, attrs=dict(case.attrs, sparse_mode=0)).inputs()
        kw["sparse_mode"] = case.attrs["sparse_mode"]
        return kw
    return case.inputs()


@pytest.mark.slow
@pytest.mark.parametrize("case,reason", _sendable(cases.sweep(OP, "full")[1]), ids=lambda x: getattr(x, "id", ""))
def test_full_suite_forbidden_cases_are_rejected(case, reason):
    with pytest.raises(fakit.AclnnError) as err:
        fakit.run(OP, backend="cpu", **_inputs(case))
    assert err.value.status == 161002, reason
