"""One source of truth: the OpDefs registered in op_host/ (exported by the CPU build) carry
every input, output and attribute of the spec's aclnn API, named in snake_case, with at least
the spec's dtypes — and `fakit package --msopgen-json` turns them into msopgen JSON.

The spec facts come from tests/data/spec_contract.json (scripts/tools/extract_spec_contract.py
extracts them from the specs, fakit.pack.specs_dir()), so these tests run without the spec pack;
test_contract_is_what_the_specs_say regenerates it when the specs are present."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fakit import cli, pack, package

ROOT = Path(__file__).resolve().parents[2]
CONTRACT_FILE = ROOT / "tests" / "data" / "spec_contract.json"
EXTRACTOR = ROOT / "scripts" / "tools" / "extract_spec_contract.py"
SPECS_DIR = pack.specs_dir()
CONTRACT = json.loads(CONTRACT_FILE.read_text(encoding="utf-8"))["operators"]
SPEC_DTYPES = {
    "FLOAT16": "DT_FLOAT16",
    "BFLOAT16": "DT_BF16",
    "FLOAT32": "DT_FLOAT",
    "FLOAT": "DT_FLOAT",
    "INT8": "DT_INT8",
    "UINT8": "DT_UINT8",
    "INT32": "DT_INT32",
    "INT64": "DT_INT64",
    "BOOL": "DT_BOOL",
}
ATTR_TYPES = {"int64_t": "int", "double": "float", "char": "string", "bool": "bool"}


def signature(op_type: str):
    """[(C base type, name, spec dtypes or None)] of the GetWorkspaceSize parameters of the
    operator's aclnn API, without workspaceSize/executor."""
    return [
        (p["ctype"].replace("const", "").replace("*", "").strip(), p["name"], p["dtypes"])
        for p in CONTRACT[op_type]["parameters"]
        if p["name"] not in ("workspaceSize", "executor")
    ]


def snake(name: str) -> str:
    return package.snake_case(name[0].upper() + name[1:])


# aclnn parameters whose port in CANN's official OpDef has a name no suffix rule derives
OPDEF_ALIASES = {
    "keyInRope": "key_rope",
    "actualSeqLengthsQueryOptional": "actual_seq_qlen",
    "actualSeqLengthskvOptional": "actual_seq_kvlen",
}


def spelling(name: str) -> str:
    """Name without underscores, "tockens" read as "tokens": CANN's official OpDefs write
    actual_seq_qlen, block_table, pre_tockens for actualSeqQLen, blocktable, preTokens."""
    return name.replace("_", "").replace("tockens", "tokens")


def candidates(name: str):
    """OpDef names a spec parameter may appear under: snake_case without the aclnn naming
    suffixes (Optional on optional inputs, then Out on outputs or In on inputs), or its alias."""
    names, base = {snake(name)}, name
    for suffix in ("Optional", "Out", "In"):
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
            names.add(snake(base))
    if name in OPDEF_ALIASES:
        names.add(OPDEF_ALIASES[name])
    return names


def opdef_names(name: str, declared) -> set:
    """The OpDef names among `declared` that spell one of the candidates of `name`."""
    wanted = {spelling(c) for c in candidates(name)}
    return {d for d in declared if spelling(d) in wanted}


@pytest.fixture(scope="module")
def opdefs():
    return {o["op_type"]: o for o in package.load_opdefs()}


def test_every_registered_operator_has_a_spec(opdefs):
    assert "PromptFlashAttention" in opdefs
    assert set(opdefs) <= set(CONTRACT), f"OpTypes without a spec mapping: {set(opdefs) - set(CONTRACT)}"


def test_opdefs_carry_every_spec_parameter_with_its_dtypes(opdefs):
    checked = dtype_checked = 0
    for op_type, opdef in opdefs.items():
        ports = {p["name"]: p for p in opdef["inputs"] + opdef["outputs"]}
        attrs = {a["name"]: a for a in opdef["attrs"]}
        for ctype, name, dtypes in signature(op_type):
            found = opdef_names(name, set(ports) | set(attrs))
            assert found, (
                f"{op_type}: spec parameter {name} ({ctype}) has no OpDef port/attr named {sorted(candidates(name))}"
            )
            key = found.pop()
            if ctype in ("aclTensor", "aclTensorList"):
                assert key in ports, f"{op_type}.{key} is a tensor in the spec but an attribute in the OpDef"
                want = {SPEC_DTYPES[t] for t in dtypes or ()}  # none for reserved parameters
                if want:
                    assert want <= set(ports[key]["dtypes"]), (
                        f"{op_type}.{key}: spec dtypes {sorted(want)} not all in OpDef {sorted(set(ports[key]['dtypes']))}"
                    )
                    dtype_checked += 1
            elif ctype in ATTR_TYPES:
                assert key in attrs and attrs[key]["type"] == ATTR_TYPES[ctype], (
                    f"{op_type}.{key}: spec type {ctype}, OpDef {attrs.get(key)}"
                )
            checked += 1
    assert checked >= 13 and dtype_checked >= 6  # aclnnPromptFlashAttention: 13 parameters, 6 tensors


def test_contract_holds_the_five_apis():
    assert {op: c["api"] for op, c in CONTRACT.items()} == {
        "PromptFlashAttention": "aclnnPromptFlashAttention",
        "FlashAttentionScore": "aclnnFlashAttentionVarLenScore",
        "IncreFlashAttention": "aclnnIncreFlashAttentionV4",
        "FlashAttentionScoreGrad": "aclnnFlashAttentionUnpaddingScoreGradV5",
        "SparseFlashAttentionGrad": "aclnnSparseFlashAttentionGrad",
    }
    pfa = CONTRACT["PromptFlashAttention"]["parameters"]
    assert [(p["ctype"], p["name"]) for p in pfa][:7] == [
        ("const aclTensor *", "query"),
        ("const aclTensor *", "key"),
        ("const aclTensor *", "value"),
        ("const aclTensor *", "pseShift"),
        ("const aclTensor *", "attenMask"),
        ("const aclIntArray *", "actualSeqLengths"),
        ("int64_t", "numHeads"),
    ]
    assert pfa[-1] == {"name": "executor", "ctype": "aclOpExecutor **", "dtypes": None, "noncontiguous": "-"}
    assert pfa[4]["dtypes"] == ["BOOL", "INT8", "UINT8"]
    for op, c in CONTRACT.items():
        for p in c["parameters"]:
            assert all(t in SPEC_DTYPES for t in p["dtypes"] or ()), (op, p)


@pytest.mark.skipif(not SPECS_DIR.is_dir(), reason=f"the specs ({SPECS_DIR}; env FA_SPECS_DIR) are not present")
def test_contract_is_what_the_specs_say(tmp_path):
    out = tmp_path / "spec_contract.json"
    proc = subprocess.run(
        [sys.executable, str(EXTRACTOR), "--out", str(out)],
        capture_output=True,
        text=True,
        env=dict(os.environ, FA_SPECS_DIR=str(SPECS_DIR)),
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8") == CONTRACT_FILE.read_text(encoding="utf-8"), (
        f"{CONTRACT_FILE} is stale: rerun {EXTRACTOR.relative_to(ROOT)}"
    )


def test_extractor_names_a_missing_specs_dir(tmp_path):
    missing = tmp_path / "no-specs"
    proc = subprocess.run(
        [sys.executable, str(EXTRACTOR), "--out", str(tmp_path / "x.json")],
        capture_output=True,
        text=True,
        env=dict(os.environ, FA_SPECS_DIR=str(missing)),
    )
    assert proc.returncode == 2 and str(missing) in proc.stderr and "FA_SPECS_DIR" in proc.stderr


def test_pfa_ports_and_attributes_in_spec_order(opdefs):
    pfa = opdefs["PromptFlashAttention"]
    assert [p["name"] for p in pfa["inputs"]] == [
        "query",
        "key",
        "value",
        "pse_shift",
        "atten_mask",
        "actual_seq_lengths",
    ]
    assert [p["name"] for p in pfa["outputs"]] == ["attention_out"]
    assert [a["name"] for a in pfa["attrs"]] == [
        "num_heads",
        "scale_value",
        "pre_tokens",
        "next_tokens",
        "input_layout",
        "num_key_value_heads",
    ]


def test_msopgen_json_from_the_real_export(tmp_path, capsys):
    assert cli.main(["package", "--msopgen-json", str(tmp_path)]) == 0
    [op] = json.loads((tmp_path / "prompt_flash_attention.json").read_text())
    assert op["op"] == "PromptFlashAttention"
    query = op["input_desc"][0]
    assert set(query["type"]) == {"float16", "bfloat16"} and len(query["type"]) == len(query["format"])
    # msopgen pairs the columns: every port lists the same number of dtype/format combinations
    assert len({len(p["type"]) for p in op["input_desc"] + op["output_desc"]}) == 1
    assert {"name": "num_heads", "param_type": "required", "type": "int"} in op["attr"]


def test_fakit_ops_lists_the_real_export(capsys):
    assert cli.main(["ops"]) == 0
    out = capsys.readouterr().out
    assert "PromptFlashAttention" in out and "atten_mask?[" in out
