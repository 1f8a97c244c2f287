"""The bounded fuzz campaign of the default test command: campaign.py (the systematic edges of
fuzz_edges.py plus FAKIT_FUZZ_EXAMPLES random examples per aclnn entry, default 40, fixed seed)
on the ASan/UBSan build, with its progress on the terminal. Any crash, hang, sanitizer report or
property failure fails this test with the log's tail, which names the input that was running.
The long campaign (`python tests/fuzz/campaign.py --budget 5000`) is recorded in
docs/robustness.md."""

import os

import campaign

BOUNDED_EXAMPLES = int(os.environ.get("FAKIT_FUZZ_EXAMPLES", "40"))


def test_fuzz_campaign_runs_clean_under_asan_and_ubsan(tmp_path, capsys):
    def echo(line):
        with capsys.disabled():
            print(line, flush=True)

    code, log, counts = campaign.run(5 * BOUNDED_EXAMPLES, tmp_path / "fuzz.jsonl", fixed=True, echo=echo)
    assert code == 0, log[-8000:]
    assert "AddressSanitizer" not in log and "runtime error:" not in log, log[-8000:]
    assert counts[("_process", "sanitized library loaded")] >= 1, "not the ASan build"
    ops = {op for op, _ in counts if not op.startswith("_")}
    assert len(ops) == 5, ops  # every aclnn entry ran
    assert sum(n for (op, outcome), n in counts.items() if outcome == "success") > 0
