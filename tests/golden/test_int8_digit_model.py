"""The int8 x int8 decode design's precision check (scripts/tools/int8_digit_model.py, the
arithmetic behind docs/performance.md "What bounds the int8-KV decode"): Q and P in two int8
digits, P's unit per row and block, pass the precision standard on every int8 case of the IFA
full suite, with the model's units and with the units as the kernel's vector code forms them
(variants/int8_digits.h: a reciprocal multiply and a clamp)."""

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "tools" / "int8_digit_model.py"


@pytest.mark.parametrize("arith", ["model", "kernel"])
def test_digit_split_passes_the_int8_cases_of_the_full_suite(arith):
    res = subprocess.run(
        [sys.executable, str(SCRIPT), "--suite", "full", "--arith", arith], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stdout + res.stderr
    last = res.stdout.strip().splitlines()[-1]
    passed, total = last.split()[0].split("/")
    assert passed == total and int(total) >= 20, last
