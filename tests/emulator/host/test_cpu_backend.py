"""fakit.backends.cpu: argument handling around the aclnn calls."""

import numpy as np
import pytest

import fakit
from fakit import build
from fakit.backends import cpu
from fakit.ops import OpBinding, Param

AXPY = OpBinding(
    op="vector_axpy",
    aclnn="aclnnVectorAxpy",
    params=[
        Param("x", "tensor"),
        Param("y", "tensor"),
        Param("alpha", "double"),
        Param("tileLength", "int64"),
        Param("z", "out_tensor"),
    ],
    make_outputs=lambda kw: {"z": np.empty(kw["x"].shape, kw["x"].dtype)},
    result=lambda outs: outs["z"],
)


def test_unknown_operator_names_the_known_ones():
    with pytest.raises(ValueError, match="(?s)unknown operator 'no_such_operator'.*alias pfa"):
        fakit.run("no_such_operator", backend="cpu")


def test_missing_required_argument_is_the_c_apis_161001():
    # passed as a null pointer: the status and message are the C API's
    with pytest.raises(fakit.AclnnError) as info:
        cpu.run_binding(
            AXPY, library=build.proof_library_path(), x=np.ones(4, np.float32), y=None, alpha=1.0, tileLength=0
        )
    assert info.value.status == 161001 and "required input y is null" in info.value.log


def test_multidimensional_and_noncontiguous_numpy_inputs_are_packed():
    x = np.arange(64, dtype=np.float32).reshape(8, 8).T  # a transposed (non-contiguous) view
    y = np.ones((8, 8), np.float32)
    z = cpu.run_binding(AXPY, library=build.proof_library_path(), x=x, y=y, alpha=2.0, tileLength=0)
    np.testing.assert_array_equal(z, 2 * x + y)


def test_unknown_numpy_dtype_is_rejected():
    with pytest.raises(ValueError, match="has no aclDataType"):
        cpu.run_binding(
            AXPY,
            library=build.proof_library_path(),
            x=np.ones(4, np.complex64),
            y=np.ones(4, np.complex64),
            alpha=1.0,
            tileLength=0,
        )


def test_opdefs_is_the_parsed_registry():
    ops = cpu.opdefs()["ops"]
    assert isinstance(ops, list)
    assert all({"op_type", "inputs", "outputs", "attrs"} <= set(op) for op in ops)
