"""The bounded fuzz run of the default test command: tests/fuzz/fuzz_aclnn.py in a
subprocess on the ASan/UBSan build (build/cpu-asan, built on first use), FAKIT_FUZZ_EXAMPLES
examples per aclnn entry (default here 40) plus the stage-2 misuse property. Any crash, hang,
sanitizer report or property failure fails this test with the log's tail, which names the
example that was running. The long run is documented in docs/robustness.md."""
import json
import os
import subprocess
import sys

from fakit import build

BOUNDED_EXAMPLES = os.environ.get("FAKIT_FUZZ_EXAMPLES", "40")


def test_fuzz_campaign_runs_clean_under_asan_and_ubsan(tmp_path):
    build.ensure_built("cpu", sanitize=True)
    libasan = subprocess.run(["g++", "-print-file-name=libasan.so"], capture_output=True, text=True,
                             check=True).stdout.strip()
    report = tmp_path / "fuzz.jsonl"
    env = dict(os.environ, FAKIT_CPU_SANITIZE="1", LD_PRELOAD=libasan, FAKIT_FUZZ_EXAMPLES=BOUNDED_EXAMPLES,
               FAKIT_FUZZ_REPORT=str(report),
               ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",  # CPython itself leaks at exit
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    env.pop("PYTEST_XDIST_WORKER", None)
    fuzz = build.ROOT / "tests" / "fuzz" / "fuzz_aclnn.py"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-o", "addopts=", str(fuzz)], env=env, capture_output=True, text=True, timeout=3600,
                          cwd=build.ROOT)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-8000:]
    assert "AddressSanitizer" not in log and "runtime error:" not in log, log[-8000:]
    counts = [json.loads(line) for line in report.read_text().splitlines()]
    assert {"op": "_process", "outcome": "sanitized library loaded", "count": 1} in counts, "not the ASan build"
    counts = [c for c in counts if c["op"] != "_process"]
    ops = {c["op"] for c in counts}
    assert len(ops) == 5, ops  # every aclnn entry ran
    assert sum(c["count"] for c in counts if c["outcome"] == "success") > 0
