"""One source of truth: the OpDefs registered in op_host/ (exported by the CPU build) carry
every input, output and attribute of the spec's aclnn API, named in snake_case, with at least
the spec's dtypes — and `fakit package --msopgen-json` turns them into msopgen JSON."""
import json
import re
from pathlib import Path

import pytest

from fakit import cli, package

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"
# OpType -> (spec file, aclnn API) of the API that runs on it
SPECS = {
    "PromptFlashAttention": ("000_c6e29851992f4c4d.txt", "aclnnPromptFlashAttention"),
    "FlashAttentionScore": ("001_c25c18f39e768b0e.txt", "aclnnFlashAttentionVarLenScore"),
    "IncreFlashAttention": ("002_9f5b11f2b5cf9769.txt", "aclnnIncreFlashAttentionV4"),
    "FlashAttentionScoreGrad": ("003_4490468ed3bc9a33.txt", "aclnnFlashAttentionUnpaddingScoreGradV5"),
    "SparseFlashAttentionGrad": ("004_9b762d6b62fa1de6.txt", "aclnnSparseFlashAttentionGrad"),
}
SPEC_DTYPES = {"FLOAT16": "DT_FLOAT16", "BFLOAT16": "DT_BF16", "FLOAT32": "DT_FLOAT", "FLOAT": "DT_FLOAT",
               "INT8": "DT_INT8", "UINT8": "DT_UINT8", "INT32": "DT_INT32", "INT64": "DT_INT64", "BOOL": "DT_BOOL"}
ATTR_TYPES = {"int64_t": "int", "double": "float", "char": "string", "bool": "bool"}
ROOT_HINT = "../shared/seeds"


def signature(text: str, api: str):
    """[(c type, name)] of aclnn<API>GetWorkspaceSize without workspaceSize/executor."""
    m = re.search(rf"{api}GetWorkspaceSize\((.*?)\)", text, re.S)
    params = []
    for part in m.group(1).replace("\n", " ").split(","):
        tokens = part.replace("*", " * ").split()
        name = tokens[-1]
        if name in ("workspaceSize", "executor"):
            continue
        params.append((next(t for t in tokens if t not in ("const", "*")), name))
    return params


def spec_dtypes(text: str, name: str):
    """The dtypes the spec lists for parameter `name` (HTML table row or bullet list form)."""
    row = re.search(rf"<td>\s*{name}\s*</td>(.*?)</tr>", text, re.S)
    if row:
        for cell in re.findall(r"<td>(.*?)</td>", row.group(1), re.S):
            tokens = [t.strip() for t in re.split(r"[、,，]", cell)]
            if tokens and all(t in SPEC_DTYPES for t in tokens):
                return {SPEC_DTYPES[t] for t in tokens}
    bullet = re.search(rf"- {name}（[^）]*）：[^\n]*?数据类型支持([A-Z0-9、,，]+)", text)
    if bullet:
        return {SPEC_DTYPES[t] for t in re.split(r"[、,，]", bullet.group(1)) if t in SPEC_DTYPES}
    return None


def snake(name: str) -> str:
    return package.snake_case(name[0].upper() + name[1:])


def candidates(name: str):
    """OpDef names a spec parameter may appear under: snake_case without the aclnn naming
    suffixes (Optional on optional inputs, Out on outputs)."""
    names = {snake(name)}
    for suffix in ("Optional", "Out"):
        if name.endswith(suffix) and len(name) > len(suffix):
            names.add(snake(name[:-len(suffix)]))
    return names


@pytest.fixture(scope="module")
def opdefs():
    return {o["op_type"]: o for o in package.load_opdefs()}


def test_every_registered_operator_has_a_spec(opdefs):
    assert "PromptFlashAttention" in opdefs
    assert set(opdefs) <= set(SPECS), f"OpTypes without a spec mapping: {set(opdefs) - set(SPECS)}"


def test_opdefs_carry_every_spec_parameter_with_its_dtypes(opdefs):
    checked = dtype_checked = 0
    for op_type, opdef in opdefs.items():
        spec_file, api = SPECS[op_type]
        text = (SEEDS / spec_file).read_text()
        ports = {p["name"]: p for p in opdef["inputs"] + opdef["outputs"]}
        attrs = {a["name"]: a for a in opdef["attrs"]}
        for ctype, name in signature(text, api):
            found = candidates(name) & (set(ports) | set(attrs))
            assert found, f"{op_type}: spec parameter {name} ({ctype}) has no OpDef port/attr " \
                          f"named {sorted(candidates(name))}"
            key = found.pop()
            if ctype in ("aclTensor", "aclTensorList"):
                assert key in ports, f"{op_type}.{key} is a tensor in the spec but an attribute in the OpDef"
                want = spec_dtypes(text, name)     # None for reserved parameters without dtypes
                if want:
                    assert want <= set(ports[key]["dtypes"]), \
                        f"{op_type}.{key}: spec dtypes {sorted(want)} not all in OpDef {sorted(set(ports[key]['dtypes']))}"
                    dtype_checked += 1
            elif ctype in ATTR_TYPES:
                assert key in attrs and attrs[key]["type"] == ATTR_TYPES[ctype], \
                    f"{op_type}.{key}: spec type {ctype}, OpDef {attrs.get(key)}"
            checked += 1
    assert checked >= 13 and dtype_checked >= 6    # aclnnPromptFlashAttention: 13 parameters, 6 tensors


def test_pfa_ports_and_attributes_in_spec_order(opdefs):
    pfa = opdefs["PromptFlashAttention"]
    assert [p["name"] for p in pfa["inputs"]] == ["query", "key", "value", "pse_shift", "atten_mask",
                                                  "actual_seq_lengths"]
    assert [p["name"] for p in pfa["outputs"]] == ["attention_out"]
    assert [a["name"] for a in pfa["attrs"]] == ["num_heads", "scale_value", "pre_tokens", "next_tokens",
                                                 "input_layout", "num_key_value_heads"]


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
