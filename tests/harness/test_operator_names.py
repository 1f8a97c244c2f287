"""One name per operator everywhere (fakit/opnames.py): every spelling works in every entry
point, and an unknown name lists the choices."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fakit
from fakit import cases, opnames
from fakit.cli import main

ROOT = Path(__file__).resolve().parents[2]

SPELLINGS = {  # every name of the decode operator, as the README table, case ids and `fakit ops` show them
    "incre_flash_attention_v4": [
        "incre_flash_attention",
        "IncreFlashAttention",
        "aclnnIncreFlashAttentionV4",
        "ifa",
        "IFA",
        "incre-flash-attention",
        "incre_flash_attention_v4",
    ],
}


@pytest.mark.parametrize("spelling", SPELLINGS["incre_flash_attention_v4"])
def test_every_spelling_resolves(spelling):
    assert opnames.resolve(spelling) == "incre_flash_attention_v4"


def test_the_five_operators_have_distinct_names_of_every_kind():
    for field in opnames.Operator._fields:
        values = [getattr(op, field).lower() for op in opnames.OPERATORS]
        assert len(set(values)) == 5, field
    assert opnames.NAMES == cases.OPERATORS
    assert [cases.core.PREFIX[n] for n in opnames.NAMES] == [op.alias for op in opnames.OPERATORS]


def test_directories_and_op_types_match_the_sources():
    for op in opnames.OPERATORS:
        assert (ROOT / "op_host" / op.directory).is_dir() and (ROOT / "op_kernel" / op.directory).is_dir()
        defs = "".join(p.read_text() for p in (ROOT / "op_host" / op.directory).glob("*_def.cpp"))
        assert f"OP_ADD({op.op_type})" in defs
        headers = "".join(p.read_text() for p in (ROOT / "op_host" / op.directory / "op_api").glob("*.h"))
        assert f"{op.aclnn}GetWorkspaceSize" in headers


def test_unknown_name_lists_the_choices_and_suggests():
    with pytest.raises(opnames.UnknownOperator) as info:
        opnames.resolve("prompt_flash_atention")
    text = str(info.value)
    assert text.startswith("unknown operator 'prompt_flash_atention'")  # not wrapped in quotes
    assert "Did you mean 'prompt_flash_attention'?" in text
    for op in opnames.OPERATORS:
        assert op.name in text and op.aclnn in text and f"alias {op.alias}" in text


def test_resolve_list():
    assert opnames.resolve_list("pfa,FlashAttentionScoreGrad,pfa", "directory") == [
        "prompt_flash_attention",
        "flash_attention_score_grad",
    ]
    assert opnames.resolve_list("all") == list(opnames.NAMES)


def test_cli_commands_take_every_spelling(capsys):
    assert main(["cases", "--op", "incre_flash_attention", "--suite", "smoke"]) == 0
    ids = [c.id for c in cases.suite("incre_flash_attention_v4", "smoke")]
    out = capsys.readouterr().out
    assert ids and all(i in out for i in ids)
    assert main(["cases", "--op", "aclnnFlashAttentionVarLenScore", "--suite", "smoke", "--csv", "-"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 1 + len(cases.suite("fav", "smoke"))
    assert main(["run", "--op", "pfa", "--suite", "smoke", "--backend", "golden", "--limit", "1"]) == 0


def test_cli_unknown_operator_is_a_usage_error_listing_the_choices(capsys):
    with pytest.raises(SystemExit) as info:
        main(["cases", "--op", "flash", "--suite", "smoke"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown operator 'flash'" in err and "aclnnSparseFlashAttentionGrad" in err


def test_python_api_takes_every_spelling():
    case = min(cases.suite("PromptFlashAttention", "smoke"), key=lambda c: c.shapes["Sq"] * c.shapes["Skv"])
    kw = case.inputs()
    a = fakit.run("pfa", backend="golden", **kw)
    b = fakit.run("aclnnPromptFlashAttention", backend="golden", **kw)
    np.testing.assert_array_equal(a, b)
    assert cases.get("prompt_flash_attention", case.id) == case == cases.get("pfa", case.id)


def test_script_mode_for_build_sh():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts/fakit/opnames.py"), "--dirs", "ifa,fag"], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.strip() == "incre_flash_attention,flash_attention_score_grad"


def test_build_sh_rejects_an_unknown_operator_before_building():
    proc = subprocess.run(
        ["bash", str(ROOT / "build.sh"), "--ops", "pfa,nope"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "unknown operator 'nope'" in proc.stderr and "alias sfag" in proc.stderr
    assert "cmake" not in proc.stdout.lower()


def test_package_ops_filter_takes_every_spelling(tmp_path, capsys):
    fixture = ROOT / "tests/npu/fixtures/opdefs_sample.json"
    assert main(["package", "--msopgen-json", str(tmp_path), "--opdefs", str(fixture), "--ops", "ifa"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["incre_flash_attention.json"]


def test_run_all_operators(capsys):
    assert (
        main(
            [
                "run",
                "--op",
                "all",
                "--suite",
                "smoke",
                "--backend",
                "golden",
                "--filter",
                "fp16",
                "--no-legend",
                "--csv",
                "-",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    lines = captured.out.splitlines()  # stdout holds the CSV only
    assert lines[0].startswith("case,verdict,")
    assert {line.split(",")[0].split("-")[0] for line in lines[1:]} == {op.alias for op in opnames.OPERATORS}
    assert "passed on golden" in captured.err


def test_python_api_unknown_operator_lists_the_choices():
    with pytest.raises(opnames.UnknownOperator, match="alias pfa"):
        fakit.run("nope", backend="golden")
    with pytest.raises(ValueError, match="prompt_flash_attention"):  # the cpu backend's own bindings
        fakit.run("nope", backend="cpu")
