"""The fuzz campaign: fuzz_edges.py (the systematic edges) and fuzz_aclnn.py (random hostile
arguments and run-stage misuse) in one pytest process on the ASan/UBSan build (build/cpu-asan,
built on first use), with progress on the terminal and a summary at the end.

    python tests/fuzz/campaign.py --budget 5000            # by hand: 5,000 random examples + the edges
    python tests/fuzz/campaign.py --budget 200 --fixed     # what the default test command runs

`--budget N` is the number of random hostile-argument examples over the five aclnn entries (N/5
each; as many run-stage misuse examples as one entry gets); `--fixed` draws the same examples
each time (Hypothesis derandomized), otherwise every run draws new ones. The campaign fails on any
crash, hang, sanitizer report or property failure; the log's tail names the input that was
running (the whole log is kept next to the report, `<report>.log`). test_fuzz_sanitized.py runs the bounded campaign; docs/robustness.md records the last
long one.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _sanitizer_env(per_entry, report, fixed):
    libasan = subprocess.run(
        ["g++", "-print-file-name=libasan.so"], capture_output=True, text=True, check=True
    ).stdout.strip()
    env = dict(
        os.environ,
        FAKIT_CPU_SANITIZE="1",
        LD_PRELOAD=libasan,
        FAKIT_FUZZ_EXAMPLES=str(per_entry),
        FAKIT_FUZZ_REPORT=str(report),
        # CPython itself leaks at exit. An allocation above 4 GiB (the device copy of a broadcast
        # view the fuzzer describes) fails as a device allocation does, instead of aborting or
        # filling the shared host's memory: the emulator then answers 561103.
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allocator_may_return_null=1:max_allocation_size_mb=4096",
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1",
    )
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("FAKIT_FUZZ_RANDOM", None)
    if not fixed:
        env["FAKIT_FUZZ_RANDOM"] = "1"
    return env


def run(budget, report, fixed=False, echo=print, every=15.0):
    """Runs the campaign; returns (return code, log, outcome counts). `echo` gets a progress line
    every `every` seconds (inputs run so far, the last one) and the summary."""
    from fakit import build

    build.ensure_built("cpu", sanitize=True)
    per_entry = max(1, -(-budget // 5))
    report = Path(report)
    report.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-s",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-o",
        "addopts=",
        str(HERE / "fuzz_edges.py"),
        str(HERE / "fuzz_aclnn.py"),
    ]
    start = last_echo = time.monotonic()
    inputs, last, log = 0, "", []
    proc = subprocess.Popen(
        cmd,
        env=_sanitizer_env(per_entry, report, fixed),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    for line in proc.stdout:
        log.append(line)
        if "FUZZ " in line:  # pytest -q may have put a progress dot before it
            inputs += 1
            last = line.split("FUZZ ", 1)[1].strip()
        now = time.monotonic()
        if now - last_echo >= every:
            last_echo = now
            echo(f"fuzz: {inputs} inputs in {now - start:.0f} s; running {last[:110]}")
    code = proc.wait()
    report.with_suffix(".log").write_text("".join(log))  # the whole run, for a post-mortem
    counts = Counter()
    if report.exists():
        for row in map(json.loads, report.read_text().splitlines()):
            counts[(row["op"], row["outcome"])] += row["count"]
    echo(f"fuzz: {inputs} inputs in {time.monotonic() - start:.0f} s, exit code {code}")
    for line in summary(counts):
        echo(line)
    return code, "".join(log), counts


def summary(counts):
    """Table lines: per aclnn entry, the hostile-argument calls answered 161001 / 161002 / success
    (other: a tensor description aclCreateTensor itself refused) and the run-stage misuse calls."""
    ops = sorted({op for op, _ in counts if not op.startswith("_")})
    yield f"{'aclnn entry (fakit name)':42} {'161001':>7} {'161002':>7} {'success':>8} {'other':>6} {'misuse':>7}"
    for op in ops:
        row = {k: n for (o, k), n in counts.items() if o == op}
        misuse = sum(n for k, n in row.items() if k.startswith("misuse"))
        other = row.get("aclCreateTensor refused", 0)
        yield (
            f"{op:42} {row.get('161001', 0):7} {row.get('161002', 0):7} {row.get('success', 0):8} {other:6} {misuse:7}"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--budget",
        type=int,
        default=5000,
        help="random hostile-argument examples over the five aclnn entries (default 5000)",
    )
    parser.add_argument("--fixed", action="store_true", help="the same examples every run (derandomized)")
    parser.add_argument("--report", default=None, help="outcome counts as JSON lines (default: a temporary file)")
    args = parser.parse_args(argv)
    report = args.report or Path(tempfile.mkdtemp(prefix="fakit-fuzz-")) / "fuzz.jsonl"
    code, log, _ = run(args.budget, report, fixed=args.fixed, echo=lambda s: print(s, flush=True))
    failed = code != 0 or "AddressSanitizer" in log or "runtime error:" in log
    if failed:
        print(log[-8000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
