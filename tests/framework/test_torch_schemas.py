"""The ops' schemas against torch_npu's, as scripts/tools/extract_torch_npu_schemas.py extracted
them from the torch_npu wheel into tests/data/torch_npu_schemas.json."""

import copy
import importlib.util
import json
import zipfile
from pathlib import Path

import pytest
import torch
import yaml

import ascend_fa

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((ROOT / "tests" / "data" / "torch_npu_schemas.json").read_text())


def _arguments(schema):
    return [
        (a.name, str(a.type), repr(a.default_value) if a.has_default_value() else None, a.kwarg_only)
        for a in schema.arguments
    ]


def _returns(schema):
    return [str(r.type) for r in schema.returns]


def mismatches(data):
    """Every difference between the registered ops and the torch_npu schemas of `data`."""
    problems = []
    if set(ascend_fa.SCHEMAS) != set(data["schemas"]):
        problems.append(f"ops {sorted(ascend_fa.SCHEMAS)} vs torch_npu's {sorted(data['schemas'])}")
    for op, entry in sorted(data["schemas"].items()):
        if op not in ascend_fa.SCHEMAS:
            continue
        ours = getattr(torch.ops.ascend_fa, op).default._schema
        theirs = torch._C.parse_schema(entry["func"])
        a, b = _arguments(ours), _arguments(theirs)
        for i in range(max(len(a), len(b))):
            if a[i : i + 1] != b[i : i + 1]:
                problems.append(f"{op} argument {i}: ours {a[i : i + 1]} vs torch_npu {b[i : i + 1]}")
        if _returns(ours) != _returns(theirs):
            problems.append(f"{op} returns: ours {_returns(ours)} vs torch_npu {_returns(theirs)}")
    return problems


def test_every_registered_op_has_torch_npus_schema():
    assert DATA["torch_npu_version"] == "2.14.0" and len(DATA["wheel_sha256"]) == 64
    assert mismatches(DATA) == []


@pytest.mark.parametrize("tamper", ["drop_last_argument", "rename", "default", "kwarg_only", "returns", "extra_op"])
def test_a_tampered_data_file_fails(tamper):
    data = copy.deepcopy(DATA)
    entry = data["schemas"]["npu_fusion_attention_grad"]
    if tamper == "drop_last_argument":
        entry["func"] = entry["func"].replace(", Tensor? sink=None)", ")")
    elif tamper == "rename":
        entry["func"] = entry["func"].replace("Tensor dy", "Tensor grad")
    elif tamper == "default":
        entry["func"] = entry["func"].replace("float keep_prob=1.", "float keep_prob=0.5")
    elif tamper == "kwarg_only":
        entry["func"] = entry["func"].replace("str input_layout, *, ", "str input_layout, ")
    elif tamper == "returns":
        entry["func"] = entry["func"].replace(
            "-> (Tensor, Tensor, Tensor, Tensor, Tensor)", "-> (Tensor, Tensor, Tensor, Tensor)"
        )
    else:
        data["schemas"]["npu_mla_prolog"] = {"func": "npu_mla_prolog(Tensor x) -> Tensor"}
    assert entry["func"] != DATA["schemas"]["npu_fusion_attention_grad"]["func"] or tamper == "extra_op"
    assert mismatches(data)


def test_the_extraction_script_reads_a_wheel(tmp_path):
    """The script on a synthetic wheel: nested YAML sections, bare native names, the sha256."""
    spec = importlib.util.spec_from_file_location(
        "extract", ROOT / "scripts" / "tools" / "extract_torch_npu_schemas.py"
    )
    extract = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extract)
    funcs = {op: entry["func"] for op, entry in DATA["schemas"].items()}
    doc = {
        "backend": "NPU",
        "custom": [{"func": "clone"}, {"func": funcs.pop("npu_fusion_attention")}],
        "autograd": [{"func": f, "exposed": True} for f in funcs.values()],
    }
    wheel = tmp_path / "torch_npu-9.9.9-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml", yaml.safe_dump(doc))
    out = tmp_path / "schemas.json"
    assert extract.main(["--wheel", str(wheel), "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    assert got["torch_npu_version"] == "9.9.9" and got["wheel"] == wheel.name
    assert {op: e["func"] for op, e in got["schemas"].items()} == {op: e["func"] for op, e in DATA["schemas"].items()}
    assert mismatches(got) == []
