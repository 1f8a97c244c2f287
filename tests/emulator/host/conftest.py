"""Fixtures of the host-side tests: the CPU library loaded through fakit.backends.cpu."""

import ctypes

import pytest

from fakit.backends import cpu


@pytest.fixture(scope="session")
def acl():
    """The product library (acl runtime initialised, device 0 set) with the C signatures the
    tests call declared."""
    lib = cpu.runtime().lib
    c = ctypes
    sig = {
        "aclrtMalloc": (c.c_int, [c.POINTER(c.c_void_p), c.c_size_t, c.c_int]),
        "aclrtFree": (c.c_int, [c.c_void_p]),
        "aclrtMemcpy": (c.c_int, [c.c_void_p, c.c_size_t, c.c_void_p, c.c_size_t, c.c_int]),
        "aclrtMemset": (c.c_int, [c.c_void_p, c.c_size_t, c.c_int32, c.c_size_t]),
        "aclInit": (c.c_int, [c.c_char_p]),
        "aclrtSetDevice": (c.c_int, [c.c_int32]),
        "aclrtCreateStream": (c.c_int, [c.POINTER(c.c_void_p)]),
        "aclrtDestroyStream": (c.c_int, [c.c_void_p]),
        "aclrtSynchronizeStream": (c.c_int, [c.c_void_p]),
        "aclrtCreateContext": (c.c_int, [c.POINTER(c.c_void_p), c.c_int32]),
        "aclrtDestroyContext": (c.c_int, [c.c_void_p]),
        "aclrtGetSocName": (c.c_char_p, []),
        "aclCreateTensor": (
            c.c_void_p,
            [
                c.POINTER(c.c_int64),
                c.c_uint64,
                c.c_int,
                c.POINTER(c.c_int64),
                c.c_int64,
                c.c_int,
                c.POINTER(c.c_int64),
                c.c_uint64,
                c.c_void_p,
            ],
        ),
        "aclDestroyTensor": (c.c_int, [c.c_void_p]),
        "aclGetViewShape": (c.c_int, [c.c_void_p, c.POINTER(c.POINTER(c.c_int64)), c.POINTER(c.c_uint64)]),
        "aclGetViewStrides": (c.c_int, [c.c_void_p, c.POINTER(c.POINTER(c.c_int64)), c.POINTER(c.c_uint64)]),
        "aclGetStorageShape": (c.c_int, [c.c_void_p, c.POINTER(c.POINTER(c.c_int64)), c.POINTER(c.c_uint64)]),
        "aclGetViewOffset": (c.c_int, [c.c_void_p, c.POINTER(c.c_int64)]),
        "aclGetDataType": (c.c_int, [c.c_void_p, c.POINTER(c.c_int)]),
        "aclGetFormat": (c.c_int, [c.c_void_p, c.POINTER(c.c_int)]),
        "aclGetRawTensorAddr": (c.c_int, [c.c_void_p, c.POINTER(c.c_void_p)]),
        "aclCreateIntArray": (c.c_void_p, [c.POINTER(c.c_int64), c.c_uint64]),
        "aclGetIntArraySize": (c.c_int, [c.c_void_p, c.POINTER(c.c_uint64)]),
        "aclDestroyIntArray": (c.c_int, [c.c_void_p]),
        "aclCreateTensorList": (c.c_void_p, [c.POINTER(c.c_void_p), c.c_uint64]),
        "aclGetTensorListSize": (c.c_int, [c.c_void_p, c.POINTER(c.c_uint64)]),
        "aclDestroyTensorList": (c.c_int, [c.c_void_p]),
        "aclFloat16ToFloat": (c.c_float, [c.c_uint16]),
        "aclFloatToFloat16": (c.c_uint16, [c.c_float]),
        "aclDataTypeSize": (c.c_size_t, [c.c_int]),
        "ascendc_emu_last_error_message": (c.c_char_p, []),
        "ascendc_emu_last_warning_message": (c.c_char_p, []),
        "ascendc_emu_clear_last_messages": (None, []),
    }
    for name, (restype, argtypes) in sig.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return lib


@pytest.fixture
def messages(acl):
    """Clears the recorded log lines; returns a function giving (last error, last warning)."""
    acl.ascendc_emu_clear_last_messages()

    def last():
        return (acl.ascendc_emu_last_error_message().decode(), acl.ascendc_emu_last_warning_message().decode())

    return last
