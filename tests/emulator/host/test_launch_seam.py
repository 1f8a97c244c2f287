"""The run stage of the aclnn seam (emu::LaunchKernel): workspace checks, the executor consumed
by the second call, tiling data handed to the kernel from device memory."""

import ctypes

import numpy as np
import pytest

from fakit import build

c = ctypes


@pytest.fixture(scope="module")
def proof(acl):
    lib = c.CDLL(str(build.proof_library_path()), mode=c.RTLD_GLOBAL)
    lib.aclnnMixSoftmaxGetWorkspaceSize.restype = c.c_int
    lib.aclnnMixSoftmaxGetWorkspaceSize.argtypes = [
        c.c_void_p,
        c.c_void_p,
        c.c_int64,
        c.c_void_p,
        c.POINTER(c.c_uint64),
        c.POINTER(c.c_void_p),
    ]
    lib.aclnnMixSoftmax.restype = c.c_int
    lib.aclnnMixSoftmax.argtypes = [c.c_void_p, c.c_uint64, c.c_void_p, c.c_void_p]
    return lib


def device_tensor(acl, arr):
    dev = c.c_void_p()
    assert acl.aclrtMalloc(c.byref(dev), arr.nbytes, 0) == 0
    assert acl.aclrtMemcpy(dev, arr.nbytes, arr.ctypes.data, arr.nbytes, 1) == 0
    dims = (c.c_int64 * arr.ndim)(*arr.shape)
    strides = (c.c_int64 * arr.ndim)(*[s // arr.itemsize for s in arr.strides])
    dtype = {np.dtype(np.float16): 1, np.dtype(np.float32): 0}[arr.dtype]
    return acl.aclCreateTensor(dims, arr.ndim, dtype, strides, 0, 2, dims, arr.ndim, dev), dev


@pytest.fixture
def softmax_call(acl, proof):
    a, da = device_tensor(acl, np.ones((64, 16), np.float16))
    b, db = device_tensor(acl, np.ones((16, 16), np.float16))
    y, dy = device_tensor(acl, np.zeros((64, 16), np.float32))

    def prepare():
        ws, exe = c.c_uint64(), c.c_void_p()
        assert proof.aclnnMixSoftmaxGetWorkspaceSize(a, b, 0, y, c.byref(ws), c.byref(exe)) == 0
        return ws.value, exe

    yield prepare, dy
    for t in (a, b, y):
        acl.aclDestroyTensor(t)
    for d in (da, db, dy):
        acl.aclrtFree(d)


def test_workspace_size_includes_the_system_workspace(softmax_call):
    prepare, _ = softmax_call
    ws, _ = prepare()
    blocks = 2  # 64 rows = 2 row blocks of 32
    assert ws == 16 * 1024 * 1024 + blocks * 2 * 32 * 16 * 4


def test_missing_or_small_workspace_is_rejected(acl, proof, softmax_call, messages):
    prepare, _ = softmax_call
    ws, exe = prepare()
    assert proof.aclnnMixSoftmax(None, ws, exe, None) == 161002
    assert "smaller than the" in messages()[0]
    ws, exe = prepare()
    small = c.c_void_p()
    acl.aclrtMalloc(c.byref(small), 1024, 0)
    assert proof.aclnnMixSoftmax(small, ws, exe, None) == 161002  # claims ws bytes, has 4 KiB
    assert "is not" in messages()[0] and "bytes of device memory" in messages()[0]
    acl.aclrtFree(small)


def test_null_executor_is_161001(proof, messages):
    assert proof.aclnnMixSoftmax(None, 0, None, None) == 161001
    assert "executor is null" in messages()[0]


def test_run_stage_computes_with_a_correct_workspace(acl, proof, softmax_call):
    prepare, dy = softmax_call
    ws, exe = prepare()
    work = c.c_void_p()
    assert acl.aclrtMalloc(c.byref(work), ws, 0) == 0
    assert proof.aclnnMixSoftmax(work, ws, exe, None) == 0
    out = np.empty((64, 16), np.float32)
    acl.aclrtMemcpy(out.ctypes.data, out.nbytes, dy, out.nbytes, 2)
    np.testing.assert_allclose(out, 1.0 / 16, rtol=1e-6)  # equal scores: uniform softmax
    acl.aclrtFree(work)


# ----------------------------------------------------- executor lifetime ----------
def _workspace(acl, ws):
    work = c.c_void_p()
    assert acl.aclrtMalloc(c.byref(work), ws, 0) == 0
    return work


def test_second_run_of_an_executor_is_161002_not_a_use_after_free(acl, proof, softmax_call, messages):
    prepare, _ = softmax_call
    ws, exe = prepare()
    work = _workspace(acl, ws)
    assert proof.aclnnMixSoftmax(work, ws, exe, None) == 0
    assert proof.aclnnMixSoftmax(work, ws, exe, None) == 161002
    assert "executor" in messages()[0] and "runs once" in messages()[0]
    acl.aclrtFree(work)


def test_foreign_executor_pointer_is_161002(acl, proof, messages):
    junk = (c.c_uint8 * 256)()  # never created by a GetWorkspaceSize
    assert proof.aclnnMixSoftmax(None, 0, c.cast(junk, c.c_void_p), None) == 161002
    assert "not live" in messages()[0]


def test_executor_of_another_operator_is_161002_and_stays_usable(acl, proof, softmax_call, messages):
    prepare, _ = softmax_call
    ws, exe = prepare()
    proof.aclnnCubeMatmul.restype = c.c_int
    proof.aclnnCubeMatmul.argtypes = [c.c_void_p, c.c_uint64, c.c_void_p, c.c_void_p]
    work = _workspace(acl, ws)
    assert proof.aclnnCubeMatmul(work, ws, exe, None) == 161002
    assert "MixSoftmax" in messages()[0]
    assert proof.aclnnMixSoftmax(work, ws, exe, None) == 0  # its own second stage still runs it
    acl.aclrtFree(work)


def test_destroying_a_consumed_executor_is_an_error_not_a_double_free(acl, proof, softmax_call, messages):
    prepare, _ = softmax_call
    ws, exe = prepare()
    acl.aclDestroyAclOpExecutor.restype = c.c_int
    acl.aclDestroyAclOpExecutor.argtypes = [c.c_void_p]
    assert acl.aclDestroyAclOpExecutor(exe) == 0
    assert acl.aclDestroyAclOpExecutor(exe) == 161002
    assert "not live" in messages()[0]
