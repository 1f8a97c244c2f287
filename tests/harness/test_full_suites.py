"""Every case of every full suite builds inputs the golden accepts, and `fakit run
--backend golden` passes on it (slow: run with -m slow)."""

import pytest

from fakit import cases
from fakit.commands.run import run_case


@pytest.mark.slow
@pytest.mark.parametrize("op", cases.OPERATORS)
def test_full_suite_runs_through_the_golden_backend(op):
    failures = []
    for case in cases.suite(op, "full"):
        try:
            result = run_case(case, "golden")
        except (ValueError, RuntimeError) as exc:
            failures.append(f"{case.id} {case.features}: {type(exc).__name__}: {exc}")
            continue
        if result["verdict"] != "PASS":
            failures.append(f"{case.id} {case.features}: {result.get('error') or result.get('summary')}")
    assert not failures, "\n".join(failures)
