#!/usr/bin/env python3
"""Extract torch_npu's schemas of the ops ascend_fa registers into tests/data/torch_npu_schemas.json.

torch_npu declares its operators in YAML files inside the wheel
(torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml, generated from op-plugin's
op_plugin_functions.yaml). The test suite compares every op ascend_fa registers with the
schema recorded here, argument for argument and return for return, so a new torch_npu release
is one command away:

    python scripts/tools/extract_torch_npu_schemas.py                    # pip download torch-npu==2.14.0
    python scripts/tools/extract_torch_npu_schemas.py --version 2.15.0
    python scripts/tools/extract_torch_npu_schemas.py --wheel torch_npu-2.14.0-cp311-....whl
    python scripts/tools/extract_torch_npu_schemas.py --out F            # write elsewhere

The wheel is downloaded with `pip download --no-deps` for this interpreter and platform (the
YAML files are the same in every platform's wheel of a release). The data file records the
torch_npu version, the wheel's file name and sha256, and the YAML file each schema came from.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "torch_npu_schemas.json"
DEFAULT_VERSION = "2.14.0"
YAML_DIR = "torch_npu/csrc/aten/"


def registered_ops():
    """The op names ascend_fa registers (its SCHEMAS table)."""
    sys.path.insert(0, str(ROOT / "framework" / "pytorch"))
    import ascend_fa

    return sorted(ascend_fa.SCHEMAS)


def download(version: str, into: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(into), f"torch-npu=={version}"],
        check=True,
    )
    wheels = sorted(into.glob("torch_npu-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one torch_npu wheel in {into}, found {[w.name for w in wheels]}")
    return wheels[0]


def _funcs(node):
    """Every `func:` string of a torch_npu functions YAML, wherever it is nested."""
    if isinstance(node, dict):
        if isinstance(node.get("func"), str):
            yield node["func"]
        for value in node.values():
            yield from _funcs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _funcs(value)


def extract(wheel: Path, ops):
    """{op: (func string, yaml path)} for the overload-free name of each op in `ops`."""
    found = {}
    with zipfile.ZipFile(wheel) as zf:
        for member in sorted(zf.namelist()):
            if not (member.startswith(YAML_DIR) and member.endswith(".yaml")):
                continue
            for func in _funcs(yaml.safe_load(zf.read(member))):
                name = re.match(r"[\w.]+", func).group(0)  # bare names list native ops
                if name not in ops:
                    continue
                if name in found and found[name][0] != func:
                    raise SystemExit(f"{name}: two different schemas in the wheel:\n  {found[name][0]}\n  {func}")
                found.setdefault(name, (func, member))
    missing = sorted(set(ops) - set(found))
    if missing:
        raise SystemExit(f"{wheel.name} declares no {', '.join(missing)}")
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", default=DEFAULT_VERSION, help="torch_npu version to download")
    ap.add_argument("--wheel", type=Path, help="a torch_npu wheel already on disk (skips the download)")
    ap.add_argument("--out", type=Path, default=DATA)
    args = ap.parse_args(argv)
    ops = registered_ops()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or download(args.version, Path(tmp))
        version = wheel.name.split("-")[1]
        sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
        found = extract(wheel, ops)
    data = {
        "torch_npu_version": version,
        "wheel": wheel.name,
        "wheel_sha256": sha256,
        "schemas": {op: {"func": func, "source": src} for op, (func, src) in sorted(found.items())},
    }
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{args.out}: {len(found)} schemas from {wheel.name} (sha256 {sha256[:12]}...)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
