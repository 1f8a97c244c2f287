"""docs/README.md's "Where things are" map matches the tree: every folder it names exists, and
every folder of op_kernel/attention_core/ and op_host/common/ is named in it. <OpType> stands
for each operator folder: op_kernel/, op_host/, tests/ops/ and docs/ops/ use the same names."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPS = sorted(p.name for p in (ROOT / "op_kernel").iterdir() if p.is_dir() and p.name != "attention_core")


def mapped():
    text = (ROOT / "docs" / "README.md").read_text()
    block = text.split("## Where things are", 1)[1].split("```", 2)[1]
    paths, parent = [], None
    for line in block.splitlines():
        m = re.match(r"^( *)(\S+/)\s", line + " ")
        if not m:
            continue
        path = m.group(2)
        if m.group(1):
            path = parent + path
        else:
            parent = path
        paths.append(path)
    return paths


def test_every_mapped_folder_exists():
    paths = mapped()
    assert len(paths) > 10
    for path in paths:
        if path.startswith("build/"):
            continue  # made by ./build.sh
        for op in OPS if "<OpType>" in path else [None]:
            real = path.replace("<OpType>", op) if op else path
            assert (ROOT / real).is_dir(), f"docs/README.md names {real}, which does not exist"


def test_core_and_common_folders_are_mapped():
    paths = set(mapped())
    for top in ("op_kernel/attention_core", "op_host/common"):
        for sub in sorted(p for p in (ROOT / top).iterdir() if p.is_dir()):
            assert f"{top}/{sub.name}/" in paths, f"{top}/{sub.name}/ is missing from docs/README.md's map"


def test_one_folder_name_per_operator():
    assert sorted(p.name for p in (ROOT / "op_host").iterdir() if p.is_dir() and p.name != "common") == OPS
    assert sorted(p.name for p in (ROOT / "tests" / "ops").iterdir() if p.is_dir() and p.name in OPS) == OPS
    assert sorted(p.stem for p in (ROOT / "docs" / "ops").glob("*.md")) == OPS
