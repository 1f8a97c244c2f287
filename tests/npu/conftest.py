"""Fixtures of the CANN-path tests: a fake ASCEND_HOME_PATH tree whose stub tools (msopgen,
msprof, msprof-analyze, a compiler wrapper, set_env.sh, the ASC CMake package) record their
arguments in a JSON-lines log, and an environment with no real CANN in it."""

import json
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CANN_VARS = (
    "ASCEND_HOME_PATH",
    "ASCEND_CANN_PACKAGE_PATH",
    "ASCEND_OPP_PATH",
    "ASCEND_CUSTOM_OPP_PATH",
    "ASCEND_TOOLKIT_HOME",
    "LD_PRELOAD",
)


@pytest.fixture
def no_cann_env():
    """os.environ without any CANN variable (a copy: tests pass it to subprocesses)."""
    return {k: v for k, v in os.environ.items() if k not in CANN_VARS}


@pytest.fixture
def no_cann(monkeypatch):
    for var in CANN_VARS:
        monkeypatch.delenv(var, raising=False)


class FakeCann:
    def __init__(self, root: Path, log: Path):
        self.root, self.log = root, log

    def calls(self, tool=None):
        if not self.log.exists():
            return []
        entries = [json.loads(line) for line in self.log.read_text().splitlines() if line]
        return [e for e in entries if tool is None or e["tool"] == tool]

    def install_package(self, vendor="fa", where=None) -> Path:
        """A stand-in for an installed custom-op package: vendors/<vendor>/op_api/{include,lib}."""
        vendor_dir = (where or self.root / "opp" / "vendors") / vendor
        (vendor_dir / "op_api/lib").mkdir(parents=True, exist_ok=True)
        (vendor_dir / "op_api/include").mkdir(parents=True, exist_ok=True)
        (vendor_dir / "op_api/lib/libcust_opapi.so").write_bytes(b"")
        return vendor_dir


@pytest.fixture
def fake_cann(tmp_path, monkeypatch):
    """The fake toolkit copied to tmp, exported as ASCEND_HOME_PATH, logging to FAKE_CANN_LOG."""
    root = tmp_path / "cann"
    shutil.copytree(FIXTURES / "fake_cann", root, symlinks=True)
    log = tmp_path / "tools.jsonl"
    for var in CANN_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(root))
    monkeypatch.setenv("FAKE_CANN_LOG", str(log))
    monkeypatch.setenv("PATH", f"{root / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKIT_WORK_DIR", str(tmp_path / "work"))
    return FakeCann(root, log)
