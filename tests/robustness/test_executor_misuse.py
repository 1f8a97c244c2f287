"""The second stage of a product API given an executor it must not run — one already
run, a null pointer, a pointer no GetWorkspaceSize returned, another operator's — returns an
error status with a message (CANN forbids reuse), never a use-after-free."""

import ctypes as c

import numpy as np
import pytest

from fakit.backends import cpu

PFA_SIG = [c.c_void_p] * 5 + [
    c.c_void_p,
    c.c_int64,
    c.c_double,
    c.c_int64,
    c.c_int64,
    c.c_char_p,
    c.c_int64,
    c.c_void_p,
    c.POINTER(c.c_uint64),
    c.POINTER(c.c_void_p),
]


@pytest.fixture
def pfa():
    rt = cpu.runtime()
    lib = rt.lib
    get = lib.aclnnPromptFlashAttentionGetWorkspaceSize
    get.restype, get.argtypes = c.c_int, PFA_SIG
    run = lib.aclnnPromptFlashAttention
    run.restype, run.argtypes = c.c_int, [c.c_void_p, c.c_uint64, c.c_void_p, c.c_void_p]
    q = np.random.default_rng(0).uniform(-1, 1, (1, 2, 32, 16)).astype(np.float16)
    devs = [rt.to_device(q) for _ in range(4)]
    tensors = [rt.tensor(q, d) for d in devs]

    def prepare():
        ws, exe = c.c_uint64(), c.c_void_p()
        status = get(
            tensors[0],
            tensors[1],
            tensors[2],
            None,
            None,
            None,
            2,
            0.25,
            2147483647,
            0,
            b"BNSD",
            0,
            tensors[3],
            c.byref(ws),
            c.byref(exe),
        )
        assert status == 0, rt.last_error()
        work = c.c_void_p()
        assert lib.aclrtMalloc(c.byref(work), ws.value, 0) == 0
        devs.append(work)
        return work, ws.value, exe

    yield prepare, run, rt
    for t in tensors:
        lib.aclDestroyTensor(t)
    for d in devs:
        lib.aclrtFree(d)


def test_running_an_executor_twice_is_161002(pfa):
    prepare, run, rt = pfa
    work, ws, exe = prepare()
    assert run(work, ws, exe, None) == 0
    assert run(work, ws, exe, None) == 161002
    assert "runs once" in rt.last_error()


def test_null_executor_is_161001(pfa):
    _, run, rt = pfa
    assert run(None, 0, None, None) == 161001
    assert "executor is null" in rt.last_error()


def test_pointer_not_from_get_workspace_size_is_161002(pfa):
    _, run, rt = pfa
    junk = (c.c_uint8 * 512)(*([0xAB] * 512))
    assert run(None, 0, c.cast(junk, c.c_void_p), None) == 161002
    assert "not live" in rt.last_error()


def test_executor_of_another_operator_is_161002(pfa):
    prepare, _, rt = pfa
    work, ws, exe = prepare()
    other = rt.lib.aclnnIncreFlashAttentionV4
    other.restype, other.argtypes = c.c_int, [c.c_void_p, c.c_uint64, c.c_void_p, c.c_void_p]
    assert other(work, ws, exe, None) == 161002
    assert "PromptFlashAttention" in rt.last_error()
    run = rt.lib.aclnnPromptFlashAttention
    assert run(work, ws, exe, None) == 0  # still its own operator's to run
