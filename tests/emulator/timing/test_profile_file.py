"""ASCEND_EMU_PROFILE=<file> appends, per launch, the same modelled profile that last_profile()
returns: a program driven from C++ (a CATLASS example) reports exactly the numbers a Python run
of the same launch reports."""

import json

import fakit
from fakit.backends import cpu
from fakit.cases import prompt_flash_attention as pfa


def test_profile_file_lines_equal_last_profile(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCEND_EMU_TIMING_ONLY", "1")
    path = tmp_path / "profile.jsonl"
    monkeypatch.setenv("ASCEND_EMU_PROFILE", str(path))
    kwargs = pfa.make("fp16", "BNSD", B=1, N=2, Sq=256, D=128, mask="causal", mask_shape="SS").inputs()
    seen = []
    for _ in range(2):
        fakit.run(pfa.OP, backend="cpu", **kwargs)
        seen.append(cpu.last_profile())
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 2
    assert lines == seen
    assert lines[0]["task_duration_us"] > 0 and lines[0]["aic_mac_ratio"] > 0
