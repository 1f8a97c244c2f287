"""aclnnPromptFlashAttentionGetWorkspaceSize rejects every violated constraint of spec 000
(Atlas A2) with the documented status — 161001 for null required arguments, 161002 for
dtype/format/shape/attribute violations — and a log line naming the parameter."""

import ctypes as C
import math

import ml_dtypes
import numpy as np
import pytest

from fakit.backends import cpu

FP16, BF16 = np.float16, ml_dtypes.bfloat16
ACL = {
    np.dtype(np.float16): 1,
    np.dtype(ml_dtypes.bfloat16): 27,
    np.dtype(np.float32): 0,
    np.dtype(np.int8): 2,
    np.dtype(np.uint8): 4,
    np.dtype(np.bool_): 12,
    np.dtype(np.int64): 9,
}
NULL = object()  # marks an argument passed as a null pointer


class Strided:
    """A tensor described with explicit (non-contiguous) element strides."""

    def __init__(self, arr, strides):
        self.arr, self.strides = arr, strides


def call(
    query,
    key,
    value,
    *,
    mask=None,
    lens=None,
    num_heads=2,
    scale=0.25,
    pre=2147483647,
    nxt=0,
    layout="BNSD",
    kv_heads=0,
    out=None,
    pse=None,
):
    """Status and log line of GetWorkspaceSize for these arguments (out defaults to query's
    shape and dtype; NULL passes a null pointer)."""
    rt = cpu.runtime()
    lib = rt.lib
    keep = []

    def tensor(x):
        if x is None or x is NULL:
            return None
        arr, strides = (x.arr, x.strides) if isinstance(x, Strided) else (np.ascontiguousarray(x), None)
        dev = rt.to_device(arr)
        keep.append(dev)
        shape = (C.c_int64 * max(arr.ndim, 1))(*arr.shape)
        if strides is None:
            strides = [s // arr.itemsize for s in arr.strides] if arr.size else [0] * arr.ndim
        st = (C.c_int64 * max(arr.ndim, 1))(*strides)
        t = lib.aclCreateTensor(shape, arr.ndim, ACL[arr.dtype], st, 0, 2, shape, arr.ndim, dev)
        keep.append(("t", t))
        return t

    if out is None:
        ref = query.arr if isinstance(query, Strided) else np.asarray(query)
        out = np.zeros(ref.shape, ref.dtype)
    ia = None
    if lens is not None:
        buf = (C.c_int64 * max(len(lens), 1))(*lens)
        ia = lib.aclCreateIntArray(buf, len(lens))
    fn = lib.aclnnPromptFlashAttentionGetWorkspaceSize
    fn.restype = C.c_int
    fn.argtypes = [C.c_void_p] * 6 + [
        C.c_int64,
        C.c_double,
        C.c_int64,
        C.c_int64,
        C.c_char_p,
        C.c_int64,
        C.c_void_p,
        C.POINTER(C.c_uint64),
        C.POINTER(C.c_void_p),
    ]
    lib.ascendc_emu_clear_last_messages()
    ws, exe = C.c_uint64(0), C.c_void_p()
    status = fn(
        tensor(query),
        tensor(key),
        tensor(value),
        tensor(pse),
        tensor(mask),
        ia,
        num_heads,
        scale,
        pre,
        nxt,
        None if layout is NULL else layout.encode(),
        kv_heads,
        tensor(out),
        C.byref(ws),
        C.byref(exe),
    )
    log = rt.last_error()
    if status == 0:  # release the executor by running it on a workspace of the asked size
        wsp = C.c_void_p()
        if ws.value:
            lib.aclrtMalloc(C.byref(wsp), ws.value, 0)
        run = lib.aclnnPromptFlashAttention
        run.restype, run.argtypes = C.c_int, [C.c_void_p, C.c_uint64, C.c_void_p, C.c_void_p]
        run(wsp, ws.value, exe, rt.stream)
        if ws.value:
            lib.aclrtFree(wsp)
    for k in keep:
        if isinstance(k, tuple):
            lib.aclDestroyTensor(k[1])
        elif k.value:
            lib.aclrtFree(k)
    if ia:
        lib.aclDestroyIntArray(ia)
    return status, log


def bnsd(b=1, n=2, s=16, d=16, dtype=FP16):
    return np.zeros((b, n, s, d), dtype)


def q_k_v(**kw):
    return bnsd(**kw), bnsd(**kw), bnsd(**kw)


def test_valid_call_is_accepted():
    status, log = call(*q_k_v())
    assert status == 0, log


# (id, arguments for call(), expected status, words the log line must contain)
REJECTED = [
    ("null query", lambda: call(NULL, bnsd(), bnsd(), out=bnsd()), 161001, "query"),
    ("null key", lambda: call(bnsd(), NULL, bnsd()), 161001, "key"),
    ("null value", lambda: call(bnsd(), bnsd(), NULL), 161001, "value"),
    ("null inputLayout", lambda: call(*q_k_v(), layout=NULL), 161001, "inputLayout"),
    ("null attentionOut", lambda: call(*q_k_v(), out=NULL), 161001, "attentionOut"),
    ("fp32 query", lambda: call(*q_k_v(dtype=np.float32)), 161002, "query has dtype FLOAT"),
    ("key dtype differs", lambda: call(bnsd(), bnsd(dtype=BF16), bnsd()), 161002, "key has dtype BFLOAT16"),
    ("value dtype differs", lambda: call(bnsd(), bnsd(), bnsd(dtype=BF16)), 161002, "value has dtype"),
    ("unknown layout", lambda: call(*q_k_v(), layout="SBH"), 161002, "inputLayout"),
    ("TND cannot be expressed", lambda: call(*q_k_v(), layout="TND"), 161002, "actualSeqLengthsKv"),
    ("rank vs layout", lambda: call(*q_k_v(), layout="BSH"), 161002, "query has shape"),
    ("numHeads zero", lambda: call(*q_k_v(), num_heads=0), 161002, "numHeads"),
    (
        "numHeads above 256",
        lambda: call(*(np.zeros((1, 2, 257 * 16), FP16),) * 3, layout="BSH", num_heads=257),
        161002,
        "numHeads",
    ),
    ("numHeads vs query N", lambda: call(*q_k_v(), num_heads=4), 161002, "numHeads is 4"),
    ("numKeyValueHeads negative", lambda: call(*q_k_v(), kv_heads=-1), 161002, "numKeyValueHeads"),
    (
        "numHeads not divisible",
        lambda: call(bnsd(n=6), bnsd(n=4), bnsd(n=4), num_heads=6, kv_heads=4),
        161002,
        "not a multiple",
    ),
    (
        "GQA ratio above 64",
        lambda: call(bnsd(n=128), bnsd(n=1), bnsd(n=1), num_heads=128, kv_heads=1),
        161002,
        "exceeds 64",
    ),
    ("key N vs numKeyValueHeads", lambda: call(bnsd(n=2), bnsd(n=2), bnsd(n=2), kv_heads=1), 161002, "key has N = 2"),
    (
        "BSH key hidden size",
        lambda: call(np.zeros((1, 4, 32), FP16), np.zeros((1, 4, 48), FP16), np.zeros((1, 4, 48), FP16), layout="BSH"),
        161002,
        "key has H",
    ),
    ("value shape differs", lambda: call(bnsd(), bnsd(), bnsd(s=8)), 161002, "value has shape"),
    ("batch differs", lambda: call(bnsd(b=2), bnsd(), bnsd()), 161002, "key has batch"),
    ("head dim differs", lambda: call(bnsd(), bnsd(d=32), bnsd(d=32)), 161002, "key has head dim"),
    ("B above 65536", lambda: call(*q_k_v(b=65537, n=1, s=1, d=16), num_heads=1), 161002, "at most 65536"),
    (
        "B above 128 with unaligned D",
        lambda: call(*q_k_v(b=129, n=1, s=1, d=8), num_heads=1),
        161002,
        "not a multiple of 16",
    ),
    ("D above 512", lambda: call(*q_k_v(d=528)), 161002, "D = 528"),
    (
        "N*D for BSND",
        lambda: call(*(np.zeros((1, 1, 256, 256), FP16),) * 3, layout="BSND", num_heads=256),
        161002,
        "N x D",
    ),
    (
        "S above 20M",
        lambda: call(
            np.zeros((1, 20971521, 1), FP16),
            np.zeros((1, 1, 1), FP16),
            np.zeros((1, 1, 1), FP16),
            layout="BSH",
            num_heads=1,
        ),
        161002,
        "S = 20971521",
    ),
    ("mask dtype", lambda: call(*q_k_v(), mask=np.zeros((16, 16), FP16)), 161002, "attenMask has dtype"),
    ("mask rank", lambda: call(*q_k_v(), mask=np.zeros((16,), np.bool_)), 161002, "attenMask has shape"),
    ("mask too small", lambda: call(*q_k_v(), mask=np.zeros((16, 8), np.bool_)), 161002, "does not cover"),
    ("mask batch", lambda: call(*q_k_v(), mask=np.zeros((3, 1, 16, 16), np.bool_)), 161002, "leading dims"),
    ("mask heads", lambda: call(*q_k_v(), mask=np.zeros((1, 3, 16, 16), np.uint8)), 161002, "leading dims"),
    (
        "negative nextTokens not covered",
        lambda: call(*q_k_v(), mask=np.zeros((16, 16), np.bool_), pre=5, nxt=-10),
        161002,
        "nextTokens is -10",
    ),
    (
        "negative nextTokens beyond KV_S",
        lambda: call(*q_k_v(), mask=np.zeros((16, 16), np.bool_), pre=100, nxt=-16),
        161002,
        "nextTokens is -16",
    ),
    (
        "negative preTokens not covered",
        lambda: call(*q_k_v(), mask=np.zeros((16, 16), np.bool_), pre=-4, nxt=2),
        161002,
        "preTokens is -4",
    ),
    ("actualSeqLengths count", lambda: call(*q_k_v(b=2), lens=[16, 16, 16]), 161002, "actualSeqLengths"),
    ("actualSeqLengths above S", lambda: call(*q_k_v(), lens=[17]), 161002, "actualSeqLengths"),
    ("actualSeqLengths negative", lambda: call(*q_k_v(), lens=[-1]), 161002, "actualSeqLengths"),
    (
        "int8 output needs quant params",
        lambda: call(*q_k_v(), out=np.zeros((1, 2, 16, 16), np.int8)),
        161002,
        "quantScale2",
    ),
    ("output dtype differs", lambda: call(*q_k_v(), out=bnsd(dtype=BF16)), 161002, "attentionOut has dtype"),
    ("output shape", lambda: call(*q_k_v(), out=bnsd(s=8)), 161002, "attentionOut has shape"),
    ("BNSD_BSND output is BSND", lambda: call(*q_k_v(n=2, s=16), layout="BNSD_BSND", out=bnsd()), 161002, "BNSD_BSND"),
    (
        "non-contiguous query",
        lambda: call(Strided(bnsd(), [512, 16, 1, 16]), bnsd(), bnsd()),
        161002,
        "query is not contiguous",
    ),
    ("scaleValue NaN", lambda: call(*q_k_v(), scale=math.nan), 161002, "scaleValue"),
]


@pytest.mark.parametrize("what,invoke,status,words", REJECTED, ids=[r[0] for r in REJECTED])
def test_constraint_violation_returns_documented_status(what, invoke, status, words):
    got, log = invoke()
    assert got == status, f"{what}: status {got}, log {log!r}"
    assert "aclnnPromptFlashAttention" in log and words in log, f"{what}: log {log!r} lacks {words!r}"


def test_bnsd_bsnd_with_bsnd_output_is_accepted():
    q = bnsd(n=2, s=16)
    status, log = call(q, q, q, layout="BNSD_BSND", out=np.zeros((1, 16, 2, 16), FP16))
    assert status == 0, log


def test_mask_with_padded_key_axis_and_single_length_is_accepted():
    status, log = call(*q_k_v(), mask=np.zeros((1, 1, 16, 32), np.bool_), lens=[9])
    assert status == 0, log


def test_negative_band_bounds_without_mask_are_ignored():
    status, log = call(*q_k_v(), pre=5, nxt=-10)
    assert status == 0, log


def test_pse_shift_is_accepted_and_ignored_with_a_warning():
    status, log = call(*q_k_v(), pse=np.zeros((1, 2, 16, 16), FP16))
    assert status == 0, log
