"""The OpDef registry's JSON export (ascendc_emu_opdefs_json): the schema another tool turns
into msopgen JSON, for the product library and, separately, for the proof operators."""

import ctypes
import json

from fakit import build
from fakit.backends import cpu


def _all_opdefs():
    lib = ctypes.CDLL(str(build.proof_library_path()), mode=ctypes.RTLD_GLOBAL)
    cpu.runtime()
    fn = lib.ascendc_emu_opdefs_json_all
    fn.restype = ctypes.c_char_p
    return {op["op_type"]: op for op in json.loads(fn().decode())["ops"]}


def test_product_opdefs_hold_only_product_operators():
    ops = {op["op_type"] for op in cpu.opdefs()["ops"]}
    assert not ops & {"VectorAxpy", "CubeMatmul", "MixSoftmax"}


def test_schema_of_every_entry():
    for op in _all_opdefs().values():
        assert set(op) == {"op_type", "inputs", "outputs", "attrs"}
        for p in op["inputs"] + op["outputs"]:
            assert set(p) == {"name", "param_type", "dtypes", "formats"}
            assert p["param_type"] in ("required", "optional", "dynamic")
            assert all(d.startswith("DT_") for d in p["dtypes"])
            assert all(f.startswith("FORMAT_") for f in p["formats"])
        for a in op["attrs"]:
            assert set(a) == {"name", "type", "required", "default"}
            assert a["type"] in (
                "int",
                "float",
                "bool",
                "string",
                "list_int",
                "list_float",
                "list_bool",
                "list_list_int",
            )


def test_proof_operator_declarations_are_exported_exactly():
    axpy = _all_opdefs()["VectorAxpy"]
    assert axpy["inputs"] == [
        {
            "name": "x",
            "param_type": "required",
            "dtypes": ["DT_FLOAT", "DT_FLOAT16"],
            "formats": ["FORMAT_ND", "FORMAT_ND"],
        },
        {
            "name": "y",
            "param_type": "required",
            "dtypes": ["DT_FLOAT", "DT_FLOAT16"],
            "formats": ["FORMAT_ND", "FORMAT_ND"],
        },
    ]
    assert axpy["outputs"][0]["name"] == "z"
    assert axpy["attrs"] == [
        {"name": "alpha", "type": "float", "required": True, "default": None},
        {"name": "tile_length", "type": "int", "required": False, "default": 0},
    ]
    mix = _all_opdefs()["MixSoftmax"]
    assert mix["outputs"] == [{"name": "y", "param_type": "required", "dtypes": ["DT_FLOAT"], "formats": ["FORMAT_ND"]}]
