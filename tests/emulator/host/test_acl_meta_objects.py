"""aclCreateTensor / aclCreateIntArray / aclCreateTensorList and their queries."""

import ctypes

c = ctypes


def int64s(values):
    return (c.c_int64 * max(len(values), 1))(*values)


def read_dims(fn, handle):
    ptr, num = c.POINTER(c.c_int64)(), c.c_uint64()
    assert fn(handle, c.byref(ptr), c.byref(num)) == 0
    return [ptr[i] for i in range(num.value)]  # (the array is leaked: the test is short-lived)


def test_tensor_keeps_view_strides_offset_format_and_storage(acl):
    data = c.c_void_p(0x1000)
    view, strides, storage = [2, 3, 4], [1, 8, 2], [64]
    t = acl.aclCreateTensor(int64s(view), 3, 27, int64s(strides), 5, 0, int64s(storage), 1, data)  # BF16, NCHW
    assert t
    assert read_dims(acl.aclGetViewShape, t) == view
    assert read_dims(acl.aclGetViewStrides, t) == strides
    assert read_dims(acl.aclGetStorageShape, t) == storage
    offset, dtype, fmt, addr = c.c_int64(), c.c_int(), c.c_int(), c.c_void_p()
    assert acl.aclGetViewOffset(t, c.byref(offset)) == 0 and offset.value == 5
    assert acl.aclGetDataType(t, c.byref(dtype)) == 0 and dtype.value == 27
    assert acl.aclGetFormat(t, c.byref(fmt)) == 0 and fmt.value == 0
    assert acl.aclGetRawTensorAddr(t, c.byref(addr)) == 0 and addr.value == 0x1000
    assert acl.aclDestroyTensor(t) == 0


def test_tensor_creation_rejects_bad_arguments(acl, messages):
    assert not acl.aclCreateTensor(None, 2, 0, None, 0, 2, None, 0, None)
    assert "viewDims is null" in messages()[0]
    assert not acl.aclCreateTensor(int64s([2, -1]), 2, 0, None, 0, 2, None, 0, None)
    assert "negative dimension" in messages()[0]
    assert not acl.aclCreateTensor(int64s([2]), 1, 0, None, -1, 2, None, 0, None)


def test_queries_report_null_arguments_with_161001(acl, messages):
    dtype = c.c_int()
    assert acl.aclGetDataType(None, c.byref(dtype)) == 161001
    assert "tensor is null" in messages()[0]


def test_int_array_copies_its_values(acl):
    values = int64s([3, 1, 4, 1, 5])
    arr = acl.aclCreateIntArray(values, 5)
    values[0] = 99  # the array owns a copy
    size = c.c_uint64()
    assert acl.aclGetIntArraySize(arr, c.byref(size)) == 0 and size.value == 5
    assert acl.aclDestroyIntArray(arr) == 0
    assert not acl.aclCreateIntArray(None, 3)


def test_tensor_list_owns_its_tensors(acl):
    tensors = [acl.aclCreateTensor(int64s([4]), 1, 1, None, 0, 2, int64s([4]), 1, None) for _ in range(3)]
    lst = acl.aclCreateTensorList((c.c_void_p * 3)(*tensors), 3)
    size = c.c_uint64()
    assert acl.aclGetTensorListSize(lst, c.byref(size)) == 0 and size.value == 3
    assert acl.aclDestroyTensorList(lst) == 0  # destroys the three tensors as well (ASan checks)


def test_contiguous_strides_default_when_none_given(acl):
    t = acl.aclCreateTensor(int64s([2, 3, 5]), 3, 0, None, 0, 2, int64s([2, 3, 5]), 3, None)
    assert read_dims(acl.aclGetViewStrides, t) == [15, 5, 1]
    acl.aclDestroyTensor(t)
