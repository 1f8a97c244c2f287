"""CLI round trips: `fakit cases`, `fakit golden`, `fakit run` (with the real goldens)."""

import json

import numpy as np
import pytest

import fakit
from fakit import cases, golden
from fakit.cases.casedir import read_case_dir
from fakit.cli import main
from fakit.errors import AclnnError

PFA = "prompt_flash_attention"


def _fastest_smoke(op):
    """The smoke case with the fewest query tokens x KV tokens (keeps the tests quick)."""

    def cost(c):
        s = c.shapes
        q = s.get("Sq", 1) * s.get("B", 1) if "Sq" in s else sum(s.get("qlens", [1]))
        k = s.get("Skv", s.get("S", 0)) or max(s.get("kvlens", [1]))
        return q * k * max(1, c.attrs.get("sparse_block_size", 1))

    return min(cases.suite(op, "smoke"), key=cost)


def test_cases_lists_ids_and_json(capsys):
    assert main(["cases", "--op", PFA, "--suite", "smoke"]) == 0
    out = capsys.readouterr().out
    for c in cases.suite(PFA, "smoke"):
        assert c.id in out and c.features in out
    assert main(["cases", "--op", "flash_attention_var_len_score", "--suite", "full", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["cases"]) == len(cases.suite("flash_attention_var_len_score", "full"))
    assert all(r["reason"] for r in doc["rejected"])


@pytest.mark.parametrize("op", cases.OPERATORS)
def test_golden_writes_a_complete_case_directory(op, tmp_path, capsys):
    case = _fastest_smoke(op)
    assert main(["golden", "--op", op, "--case", case.id, "--out", str(tmp_path), "--benchmark"]) == 0
    meta, kwargs, gold, bench = read_case_dir(tmp_path)
    assert meta["op"] == op and meta["case_id"] == case.id
    expected = case.inputs()
    assert set(kwargs) == set(expected)
    for name, value in expected.items():
        got = kwargs[name]
        if isinstance(value, np.ndarray):
            assert got.dtype == value.dtype and got.shape == value.shape, name
            assert np.array_equal(got.view(np.uint8), value.view(np.uint8)), name
        elif isinstance(value, list) and value and isinstance(value[0], np.ndarray):
            assert all(np.array_equal(g, v) for g, v in zip(got, value)), name
        else:
            assert got == value, name
    ref = getattr(golden, op)(**expected)
    ref = ref if isinstance(ref, dict) else {"attention_out": ref}
    for name, arr in ref.items():
        if arr is None:
            assert name not in gold
        else:
            np.testing.assert_array_equal(gold[name], arr)
            assert name in bench
    for entry in meta["inputs"] + meta["outputs"]:
        for e in entry.get("list", [entry]):
            assert (tmp_path / e["file"]).stat().st_size == e["bytes"]
    # the directory is self-contained: the golden recomputed from it matches
    again = getattr(golden, op)(**kwargs)
    again = again if isinstance(again, dict) else {"attention_out": again}
    for name, arr in gold.items():
        np.testing.assert_array_equal(again[name], arr)


def test_golden_unknown_case_is_a_clear_error(tmp_path, capsys):
    assert main(["golden", "--case", "pfa-0000000000", "--out", str(tmp_path)]) == 1
    assert "no case 'pfa-0000000000'" in capsys.readouterr().err


def test_run_golden_backend_passes(tmp_path, capsys):
    path = tmp_path / "r.json"
    assert main(["run", "--op", PFA, "--suite", "smoke", "--backend", "golden", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{len(cases.suite(PFA, 'smoke'))}/{len(cases.suite(PFA, 'smoke'))} passed" in out
    doc = json.loads(path.read_text())
    assert doc["passed"] and all(r["verdict"] == "PASS" for r in doc["results"])


def test_run_wrong_backend_output_fails(monkeypatch, capsys):
    real = fakit.run

    def off_by_two_percent(op, backend="cpu", **kw):
        out = real(op, backend="golden", **kw)
        return (np.asarray(out) * 1.02).astype(np.float16)

    monkeypatch.setattr(fakit, "run", off_by_two_percent)
    ids = [c.id for c in cases.suite(PFA, "smoke")[:2]]
    assert main(["run", "--case", *ids, "--backend", "golden"]) == 1
    out = capsys.readouterr().out
    assert out.count("FAIL") >= 2 and "0/2 passed" in out


def test_run_device_like_backend_passes_and_counters_are_reported(monkeypatch, capsys):
    def like_a_device(op, backend="cpu", **kw):
        return np.asarray(golden.benchmark(op, **kw)).astype(np.float16)

    monkeypatch.setattr(fakit, "run", like_a_device)
    monkeypatch.setattr("fakit.commands.run._preflight", lambda backend: None)  # no CANN here
    case = cases.suite(PFA, "smoke")[0]
    assert main(["run", "--case", case.id, "--backend", "sim", "--counters"]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and f"[counters] {case.id}" in out


def test_run_rejection_of_a_valid_case_is_a_failure(monkeypatch, capsys):
    def rejects(op, backend="cpu", **kw):
        raise AclnnError(161002, "query: dtype not supported")

    monkeypatch.setattr(fakit, "run", rejects)
    case = cases.suite(PFA, "smoke")[0]
    assert main(["run", "--case", case.id, "--backend", "cpu"]) == 1
    assert "AclnnError 161002" in capsys.readouterr().out


def test_run_unknown_case_and_missing_op(capsys):
    assert main(["run", "--case", "ifa-0000000000", "--backend", "golden"]) == 1
    assert "no case" in capsys.readouterr().err
    assert main(["run", "--suite", "smoke", "--backend", "golden"]) == 1
    assert "--suite needs --op" in capsys.readouterr().err


def test_counters_are_summed_over_cores():
    from fakit.commands.run import summarise_counters

    counters = {
        "kernel": "k",
        "block_dim": 2,
        "cores": [
            {"core": 0, "sub": "aic", "M": {"macs": 10, "ops": 1}, "MTE2": {"bytes": 64, "ops": 2}},
            {"core": 1, "sub": "aiv0", "M": {"macs": 5, "ops": 1}, "MTE2": {"bytes": 32, "ops": 1}},
        ],
    }
    assert summarise_counters(counters) == {"block_dim": 2, "M.macs": 15, "M.ops": 2, "MTE2.bytes": 96, "MTE2.ops": 3}
