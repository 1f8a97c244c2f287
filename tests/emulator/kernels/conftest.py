"""The proof operators' aclnn bindings and a fixture running them on the CPU target.

They live in the test-only library libfa_proof_ops.so (tests/emulator/kernels/*), so they are
not part of fakit.ops.REGISTRY; the tests call fakit.backends.cpu.run_binding directly."""

import numpy as np
import pytest

from fakit import build
from fakit.backends import cpu
from fakit.ops import OpBinding, Param

PROOF_BINDINGS = {
    "vector_axpy": OpBinding(
        op="vector_axpy",
        aclnn="aclnnVectorAxpy",
        params=[
            Param("x", "tensor"),
            Param("y", "tensor"),
            Param("alpha", "double"),
            Param("tileLength", "int64"),
            Param("z", "out_tensor"),
        ],
        make_outputs=lambda kw: {"z": np.empty(np.shape(kw["x"]), np.asarray(kw["x"]).dtype)},
        result=lambda outs: outs["z"],
        prepare=lambda kw: {"tileLength": 0, **kw},
    ),
    "cube_matmul": OpBinding(
        op="cube_matmul",
        aclnn="aclnnCubeMatmul",
        params=[Param("a", "tensor"), Param("b", "tensor"), Param("c", "out_tensor")],
        make_outputs=lambda kw: {"c": np.empty((kw["a"].shape[0], kw["b"].shape[1]), kw["a"].dtype)},
        result=lambda outs: outs["c"],
    ),
    "mix_softmax": OpBinding(
        op="mix_softmax",
        aclnn="aclnnMixSoftmax",
        params=[Param("a", "tensor"), Param("b", "tensor"), Param("maxCores", "int64"), Param("y", "out_tensor")],
        make_outputs=lambda kw: {"y": np.empty((kw["a"].shape[0], kw["b"].shape[0]), np.float32)},
        result=lambda outs: outs["y"],
        prepare=lambda kw: {"maxCores": 0, **kw},
    ),
}


@pytest.fixture(scope="session")
def run_proof():
    """run_proof(name, **kwargs) -> output array, through the proof operator's aclnn API."""
    library = build.proof_library_path(cpu._sanitize())
    build.ensure_built("cpu", sanitize=cpu._sanitize())

    def run(name, **kwargs):
        return cpu.run_binding(PROOF_BINDINGS[name], library=library, **kwargs)

    return run


def pipe_totals(counters):
    """{pipe: {bytes, ops, ...}} summed over every sub-core of the last launch."""
    return counters["total"]
