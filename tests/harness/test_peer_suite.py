"""The peer suites (the official PFA V3 / IFA V4 ST case parameters) are the project's own data
(fakit/suites/peer/): they work in a clone with nothing beside it, match their source when the
reference pack is present, and --max-seq caps their size."""

import json
import os
import sys
from pathlib import Path

import pytest

from fakit import cases, cli, pack
from fakit.cases import incre_flash_attention_v4 as ifa
from fakit.cases import prompt_flash_attention as pfa
from fakit.cases.core import PEER_DIR

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "tools"))
import import_peer_cases  # noqa: E402

PACK = pack.reference_dir() / "peer-cases"


@pytest.fixture
def no_pack(tmp_path, monkeypatch):
    """A clone with nothing beside it: the reference pack is not where fakit would look."""
    monkeypatch.setenv("FA_REFERENCE_DIR", str(tmp_path / "no-pack"))
    monkeypatch.delenv("FAKIT_MAX_SEQ", raising=False)
    cases.sweep.cache_clear()
    yield
    cases.sweep.cache_clear()


def test_peer_suites_need_nothing_beside_the_clone(no_pack):
    p = cases.suite("prompt_flash_attention", "peer")
    i = cases.suite("incre_flash_attention_v4", "peer")
    assert len(p) == 181 and len(i) == 181  # 201 official cases minus 20 duplicate pairs
    assert {c.shapes["D"] for c in p} == {128} and {c.dtype for c in i} == {"fp16"}
    assert {c.layout for c in p} == {"BNSD", "BSH"}
    assert cases.get("pfa", p[5].id) == p[5]


def test_stored_records_name_their_source():
    for name in ("pfa_v3.json", "ifa_v4.json"):
        doc = json.loads((PEER_DIR / name).read_text())
        assert "ops-transformer" in doc["source"] and doc["source"].endswith(".json")
        assert [c["official_id"] for c in doc["cases"]] == list(range(201))


@pytest.mark.skipif(not PACK.is_dir(), reason=f"the reference pack ({PACK}) is absent: nothing to re-check against")
def test_stored_records_are_what_the_import_tool_derives_from_the_pack():
    for key in import_peer_cases.SOURCES:
        derived = import_peer_cases.dump(import_peer_cases.convert(pack.reference_dir(), key))
        assert (PEER_DIR / f"{key}.json").read_text() == derived, key


def test_max_seq_caps_the_peer_suites(no_pack, monkeypatch, capsys):
    full_p, full_i = cases.suite("pfa", "peer"), cases.suite("ifa", "peer")
    monkeypatch.setenv("FAKIT_MAX_SEQ", "513")
    small_p, small_i = cases.suite("pfa", "peer"), cases.suite("ifa", "peer")
    assert 0 < len(small_p) < len(full_p) and 0 < len(small_i) < len(full_i)
    assert all(max(c.shapes["Sq"], c.shapes["Skv"]) <= 513 for c in small_p)
    assert all(c.shapes["S"] <= 513 for c in small_i)
    assert set(c.id for c in small_p) <= set(c.id for c in full_p)
    monkeypatch.delenv("FAKIT_MAX_SEQ")
    # the CLI option sets the cap
    assert cli.main(["cases", "--op", "pfa", "--suite", "peer", "--max-seq", "257", "--csv", "-"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()[1:]
    assert 0 < len(rows) < len(small_p)
    os.environ.pop("FAKIT_MAX_SEQ", None)


def test_peer_case_runs_on_the_golden_backend_without_the_pack(no_pack, capsys):
    smallest = min(cases.suite("ifa", "peer"), key=lambda c: c.shapes["B"] * c.shapes["N"] * c.shapes["S"])
    assert cli.main(["run", "--case", smallest.id, "--backend", "golden", "--no-legend"]) == 0
    assert "1/1 passed on golden" in capsys.readouterr().out


@pytest.mark.parametrize("module", [pfa, ifa], ids=["pfa", "ifa"])
def test_peer_records_become_the_cases(module, no_pack):
    records = json.loads((PEER_DIR / module.PEER_FILE).read_text())["cases"]
    first = next(iter(module.peer()))
    assert first.layout == records[0]["layout"] == "BSH"
    assert first.value_range == tuple(records[0]["q_range"])


def test_peer_cases_show_the_official_ids(no_pack, capsys):
    for op, file in (("pfa", "pfa_v3.json"), ("ifa", "ifa_v4.json")):
        official = {r["official_id"] for r in json.loads((PEER_DIR / file).read_text())["cases"]}
        labels = [c.features.split()[0] for c in cases.suite(op, "peer")]
        assert all(lab.startswith("ST#") for lab in labels)
        assert {int(lab[3:]) for lab in labels} <= official and len(set(labels)) == len(labels)
    assert cli.main(["cases", "--op", "pfa", "--suite", "peer"]) == 0
    assert "ST#0 BSH fp16" in capsys.readouterr().out
    case = cases.suite("pfa", "peer")[0]
    assert case.label and case.id == type(case)(**{**case.__dict__, "label": ""}).id  # ids unchanged
