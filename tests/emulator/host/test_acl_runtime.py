"""The acl runtime of the CPU target: device memory with the device's page rounding, copies that
must never leave an allocation, lifecycle calls and error codes."""

import ctypes

import numpy as np
import pytest

ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_RT_INVALID_DEVICEID = 107001
H2D, D2H, D2D, H2H, DEFAULT = 1, 2, 3, 0, 4
HUGE_FIRST, HUGE_ONLY, NORMAL_ONLY = 0, 1, 2


def malloc(acl, size, policy=HUGE_FIRST):
    ptr = ctypes.c_void_p()
    assert acl.aclrtMalloc(ctypes.byref(ptr), size, policy) == ACL_SUCCESS
    return ptr


def test_roundtrip_host_device_host(acl):
    src = np.arange(1000, dtype=np.float32)
    dev = malloc(acl, src.nbytes)
    assert acl.aclrtMemcpy(dev, src.nbytes, src.ctypes.data, src.nbytes, H2D) == ACL_SUCCESS
    dev2 = malloc(acl, src.nbytes)
    assert acl.aclrtMemcpy(dev2, src.nbytes, dev, src.nbytes, D2D) == ACL_SUCCESS
    out = np.zeros_like(src)
    assert acl.aclrtMemcpy(out.ctypes.data, out.nbytes, dev2, out.nbytes, D2H) == ACL_SUCCESS
    np.testing.assert_array_equal(out, src)
    assert acl.aclrtFree(dev) == ACL_SUCCESS
    assert acl.aclrtFree(dev2) == ACL_SUCCESS


def test_copy_past_requested_size_within_page_warns_and_copies(acl, messages):
    # The spec examples copy an fp16 result into a double vector: twice the requested bytes.
    # Small requests own a 4 KiB normal page on the device, so the copy is legal there.
    dev = malloc(acl, 128)
    host = np.full(256, 7, dtype=np.uint8)
    assert acl.aclrtMemcpy(dev, 256, host.ctypes.data, 256, H2D) == ACL_SUCCESS
    back = np.zeros(256, dtype=np.uint8)
    assert acl.aclrtMemcpy(back.ctypes.data, 256, dev, 256, D2H) == ACL_SUCCESS
    np.testing.assert_array_equal(back, host)
    error, warning = messages()
    assert error == ""
    assert "256 bytes at offset 0 goes past the 128 bytes requested" in warning
    assert "4096 bytes" in warning
    acl.aclrtFree(dev)


def test_copy_past_rounded_allocation_is_an_error_and_copies_nothing(acl, messages):
    dev = malloc(acl, 100)  # usable: one 4 KiB page
    host = np.ones(4097, dtype=np.uint8)
    assert acl.aclrtMemcpy(dev, 4097, host.ctypes.data, 4097, H2D) == ACL_ERROR_INVALID_PARAM
    error, _ = messages()
    assert "runs past the device allocation" in error and "requested 100 bytes, usable 4096 bytes" in error
    back = np.full(4096, 9, dtype=np.uint8)
    assert acl.aclrtMemcpy(back.ctypes.data, 4096, dev, 4096, D2H) == ACL_SUCCESS
    assert not back.any(), "the rejected copy must not have written anything"
    # Reading past the end from an offset inside the allocation is rejected too.
    inside = ctypes.c_void_p(dev.value + 4000)
    assert acl.aclrtMemcpy(back.ctypes.data, 4096, inside, 200, D2H) == ACL_ERROR_INVALID_PARAM
    acl.aclrtFree(dev)


def test_huge_page_rounding_above_one_mib(acl, messages):
    size = (1 << 20) + 1  # HUGE_FIRST above 1 MiB: 2 MiB pages
    dev = malloc(acl, size)
    buf = np.zeros(2 << 20, dtype=np.uint8)
    assert acl.aclrtMemcpy(buf.ctypes.data, buf.nbytes, dev, 2 << 20, D2H) == ACL_SUCCESS
    assert acl.aclrtMemcpy(buf.ctypes.data, buf.nbytes + 1, dev, (2 << 20) + 1, D2H) == ACL_ERROR_INVALID_PARAM
    acl.aclrtFree(dev)
    dev = malloc(acl, 5000, NORMAL_ONLY)  # two normal pages
    assert acl.aclrtMemcpy(buf.ctypes.data, buf.nbytes, dev, 8192, D2H) == ACL_SUCCESS
    assert acl.aclrtMemcpy(buf.ctypes.data, buf.nbytes, dev, 8193, D2H) == ACL_ERROR_INVALID_PARAM
    acl.aclrtFree(dev)
    dev = malloc(acl, 10, HUGE_ONLY)  # huge pages even for small requests
    assert acl.aclrtMemcpy(buf.ctypes.data, buf.nbytes, dev, 2 << 20, D2H) == ACL_SUCCESS
    acl.aclrtFree(dev)


def test_memcpy_argument_errors(acl, messages):
    dev = malloc(acl, 64)
    host = np.zeros(64, dtype=np.uint8)
    assert acl.aclrtMemcpy(dev, 32, host.ctypes.data, 64, H2D) == ACL_ERROR_INVALID_PARAM
    assert "count 64 exceeds destMax 32" in messages()[0]
    # The kind must match the pointers: a host source declared as device memory is rejected.
    other = np.zeros(64, dtype=np.uint8)
    assert acl.aclrtMemcpy(other.ctypes.data, 64, host.ctypes.data, 64, D2H) == ACL_ERROR_INVALID_PARAM
    assert "expects a host destination and a device source" in messages()[0]
    assert acl.aclrtMemcpy(dev, 64, host.ctypes.data, 64, DEFAULT) == ACL_SUCCESS
    assert acl.aclrtMemcpy(other.ctypes.data, 64, host.ctypes.data, 64, H2H) == ACL_SUCCESS
    assert acl.aclrtMemcpy(None, 64, host.ctypes.data, 64, H2D) == ACL_ERROR_INVALID_PARAM
    acl.aclrtFree(dev)


def test_malloc_free_errors(acl, messages):
    ptr = ctypes.c_void_p()
    assert acl.aclrtMalloc(ctypes.byref(ptr), 0, HUGE_FIRST) == ACL_ERROR_INVALID_PARAM
    assert "size is 0" in messages()[0]
    dev = malloc(acl, 64)
    inner = ctypes.c_void_p(dev.value + 32)
    assert acl.aclrtFree(inner) == ACL_ERROR_INVALID_PARAM
    assert "is not the base of a live aclrtMalloc allocation" in messages()[0]
    assert acl.aclrtFree(dev) == ACL_SUCCESS
    assert acl.aclrtFree(dev) == ACL_ERROR_INVALID_PARAM  # double free


def test_memset_stays_inside_the_allocation(acl):
    dev = malloc(acl, 64)
    assert acl.aclrtMemset(dev, 64, 0x5A, 64) == ACL_SUCCESS
    out = np.zeros(64, dtype=np.uint8)
    acl.aclrtMemcpy(out.ctypes.data, 64, dev, 64, D2H)
    assert (out == 0x5A).all()
    assert acl.aclrtMemset(dev, 8192, 0, 8192) == ACL_ERROR_INVALID_PARAM
    acl.aclrtFree(dev)


def test_lifecycle_calls(acl):
    assert acl.aclInit(None) == 100002  # the backend initialised already: repeat init
    assert acl.aclrtSetDevice(0) == ACL_SUCCESS
    assert acl.aclrtSetDevice(1) == ACL_ERROR_RT_INVALID_DEVICEID
    stream = ctypes.c_void_p()
    assert acl.aclrtCreateStream(ctypes.byref(stream)) == ACL_SUCCESS
    assert acl.aclrtSynchronizeStream(stream) == ACL_SUCCESS
    assert acl.aclrtSynchronizeStream(None) == ACL_SUCCESS  # default stream
    assert acl.aclrtDestroyStream(stream) == ACL_SUCCESS
    assert acl.aclrtDestroyStream(stream) == ACL_ERROR_INVALID_PARAM
    ctx = ctypes.c_void_p()
    assert acl.aclrtCreateContext(ctypes.byref(ctx), 0) == ACL_SUCCESS
    assert acl.aclrtDestroyContext(ctx) == ACL_SUCCESS
    assert acl.aclrtGetSocName().decode() == "Ascend910B2"


@pytest.mark.parametrize("value", [0.0, 1.0, -2.5, 65504.0, 1e-7, 3.14159, float("inf")])
def test_float16_conversions_match_ieee_round_to_nearest_even(acl, value):
    bits = acl.aclFloatToFloat16(value)
    assert bits == int(np.array(value, dtype=np.float16).view(np.uint16))
    assert acl.aclFloat16ToFloat(bits) == float(np.float16(value))


def test_data_type_sizes(acl):
    sizes = {0: 4, 1: 2, 2: 1, 3: 4, 9: 8, 11: 8, 12: 1, 27: 2}  # FLOAT .. BF16
    assert {dt: acl.aclDataTypeSize(dt) for dt in sizes} == sizes
