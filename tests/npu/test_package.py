"""fakit ops / fakit package: msopgen operator JSON from the OpDefs, the msopgen command lines,
and the error paths without CANN."""

import json
from pathlib import Path

import pytest

from fakit import cli, package

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SAMPLE = FIXTURES / "opdefs_sample.json"


@pytest.mark.parametrize(
    "op_type, snake",
    [
        ("PromptFlashAttention", "prompt_flash_attention"),
        ("GatherV2Custom", "gather_v2_custom"),
        ("Conv2DCustom", "conv2_d_custom"),
        ("IncreFlashAttentionV4", "incre_flash_attention_v4"),
        ("FlashAttentionUnpaddingScoreGradV5", "flash_attention_unpadding_score_grad_v5"),
    ],
)
def test_snake_case_follows_cann_naming_rule(op_type, snake):
    assert package.snake_case(op_type) == snake


def test_msopgen_json_carries_every_port_and_attribute(tmp_path):
    files = package.write_msopgen_json(package.load_opdefs(SAMPLE), tmp_path)
    assert [f.name for f in files] == ["incre_flash_attention.json", "prompt_flash_attention.json"]
    [op] = json.loads((tmp_path / "prompt_flash_attention.json").read_text())
    assert op["op"] == "PromptFlashAttention" and op["language"] == "cpp"
    assert [p["name"] for p in op["input_desc"]] == [
        "query",
        "key",
        "value",
        "pse_shift",
        "atten_mask",
        "actual_seq_lengths",
    ]
    assert op["input_desc"][0] == {
        "name": "query",
        "param_type": "required",
        "format": ["ND", "ND"],
        "type": ["float16", "bfloat16"],
    }
    # a single format applies to every dtype column
    assert op["input_desc"][4] == {
        "name": "atten_mask",
        "param_type": "optional",
        "format": ["ND", "ND"],
        "type": ["bool", "bool"],
    }
    assert op["output_desc"] == [
        {"name": "attention_out", "param_type": "required", "format": ["ND", "ND"], "type": ["float16", "bfloat16"]}
    ]
    attrs = {a["name"]: a for a in op["attr"]}
    assert attrs["num_heads"] == {"name": "num_heads", "param_type": "required", "type": "int"}
    assert attrs["scale_value"]["default_value"] == 1.0 and attrs["scale_value"]["param_type"] == "optional"
    assert attrs["input_layout"] == {
        "name": "input_layout",
        "param_type": "optional",
        "type": "str",
        "default_value": "BSH",
    }
    [ifa] = json.loads((tmp_path / "incre_flash_attention.json").read_text())
    assert ifa["input_desc"][1]["param_type"] == "dynamic"


def test_mismatched_dtype_and_format_lists_name_the_port():
    bad = {
        "op_type": "X",
        "inputs": [
            {
                "name": "q",
                "param_type": "required",
                "dtypes": ["DT_FLOAT16", "DT_BF16", "DT_FLOAT"],
                "formats": ["FORMAT_ND", "FORMAT_ND"],
            }
        ],
        "outputs": [],
        "attrs": [],
    }
    with pytest.raises(ValueError, match="X.q: 3 dtypes but 2 formats"):
        package.render_msopgen_json(bad)


def test_unknown_dtype_is_an_error():
    bad = {
        "op_type": "X",
        "inputs": [{"name": "q", "param_type": "required", "dtypes": ["DT_COMPLEX64"], "formats": ["FORMAT_ND"]}],
        "outputs": [],
        "attrs": [],
    }
    with pytest.raises(ValueError, match="X.q: no msopgen name"):
        package.render_msopgen_json(bad)


def test_cli_package_msopgen_json(tmp_path, capsys):
    assert (
        cli.main(
            ["package", "--msopgen-json", str(tmp_path), "--opdefs", str(SAMPLE), "--ops", "prompt_flash_attention"]
        )
        == 0
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prompt_flash_attention.json"]
    assert str(tmp_path / "prompt_flash_attention.json") in capsys.readouterr().out


def test_cli_ops_lists_and_exports(capsys):
    assert cli.main(["ops", "--opdefs", str(SAMPLE)]) == 0
    text = capsys.readouterr().out
    assert "PromptFlashAttention" in text and "atten_mask?[bool]" in text and "key*[float16]" in text
    assert "input_layout:string=\"BSH\"" in text
    assert cli.main(["ops", "--json", "--opdefs", str(SAMPLE)]) == 0
    exported = json.loads(capsys.readouterr().out)["ops"]
    assert sorted(exported, key=lambda o: o["op_type"]) == sorted(
        json.loads(SAMPLE.read_text())["ops"], key=lambda o: o["op_type"]
    )


def test_msopgen_project_runs_msopgen_once_per_operator(fake_cann, tmp_path):
    out = tmp_path / "project"
    assert cli.main(["package", "--msopgen-project", str(out), "--opdefs", str(SAMPLE), "--soc", "ascend910b3"]) == 0
    calls = fake_cann.calls("msopgen")
    assert [c["argv"] for c in calls] == [
        [
            "gen",
            "-i",
            str(out / "json/incre_flash_attention.json"),
            "-f",
            "aclnn",
            "-c",
            "ai_core-Ascend910B3",
            "-lan",
            "cpp",
            "-out",
            str(out),
            "-m",
            "0",
        ],
        [
            "gen",
            "-i",
            str(out / "json/prompt_flash_attention.json"),
            "-f",
            "aclnn",
            "-c",
            "ai_core-Ascend910B3",
            "-lan",
            "cpp",
            "-out",
            str(out),
            "-m",
            "1",
        ],
    ]


def test_msopgen_missing_exits_2(no_cann, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert cli.main(["package", "--msopgen-project", str(tmp_path / "p"), "--opdefs", str(SAMPLE)]) == 2
    assert "msopgen not found" in capsys.readouterr().err


def test_package_build_without_cann_exits_2_with_the_reason(no_cann, capfd):
    assert cli.main(["package", "--soc", "ascend910b2", "--vendor", "acme"]) == 2
    assert "ASCEND_CANN_PACKAGE_PATH" in capfd.readouterr().err
