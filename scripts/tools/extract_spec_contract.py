#!/usr/bin/env python3
"""Extract the facts the tests check against the five operator specs into
tests/data/spec_contract.json, so the default tests run without the spec pack.

Per operator: the aclnn API, the ordered parameters of aclnn<API>GetWorkspaceSize (C type as
declared and name) and, per parameter, the dtypes the spec lists (spelled as in the spec,
e.g. FLOAT16; null when the spec lists none, as for reserved parameters) and its 非连续Tensor
column ("√" supported, "×" not, "-" not applicable; null when the spec has no such column).

    python scripts/tools/extract_spec_contract.py            # rewrite tests/data/spec_contract.json
    python scripts/tools/extract_spec_contract.py --out F    # write elsewhere (tests compare)

The specs are read from fakit.pack.specs_dir() ($FA_SPECS_DIR, default <repo>/.spec-pack/seeds).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "tests" / "data" / "spec_contract.json"
# OpType -> (spec file, aclnn API that runs on it)
SPECS = {
    "PromptFlashAttention": ("000_c6e29851992f4c4d.txt", "aclnnPromptFlashAttention"),
    "FlashAttentionScore": ("001_c25c18f39e768b0e.txt", "aclnnFlashAttentionVarLenScore"),
    "IncreFlashAttention": ("002_9f5b11f2b5cf9769.txt", "aclnnIncreFlashAttentionV4"),
    "FlashAttentionScoreGrad": ("003_4490468ed3bc9a33.txt", "aclnnFlashAttentionUnpaddingScoreGradV5"),
    "SparseFlashAttentionGrad": ("004_9b762d6b62fa1de6.txt", "aclnnSparseFlashAttentionGrad"),
}
DTYPE_WORDS = ("FLOAT16", "BFLOAT16", "FLOAT32", "FLOAT", "INT8", "UINT8", "INT32", "INT64", "BOOL")


def specs_dir() -> Path:
    sys.path.insert(0, str(ROOT / "scripts"))
    from fakit import pack

    return pack.specs_dir()


def signature(text: str, api: str):
    """[(declared C type, name)] of every parameter of <api>GetWorkspaceSize, in order."""
    m = re.search(rf"{api}GetWorkspaceSize\((.*?)\)", text, re.S)
    if not m:
        raise ValueError(f"no {api}GetWorkspaceSize declaration found")
    params = []
    # one declaration per comma or per line: spec 004 omits two commas in its multi-line form
    for part in filter(str.strip, re.split(r"[,\n]", m.group(1))):
        tokens = part.replace("*", " * ").split()
        ctype = " ".join(tokens[:-1]).replace("* *", "**")
        params.append((ctype, tokens[-1]))
    return params


def dtypes(text: str, name: str):
    """The dtypes the spec lists for parameter `name`, from its parameter-table row or its
    bullet ("- name（...）：... 数据类型支持A、B"); None when the spec lists none."""
    row = re.search(rf"<td>\s*{name}\s*</td>(.*?)</tr>", text, re.S)
    if row:
        for cell in re.findall(r"<td>(.*?)</td>", row.group(1), re.S):
            tokens = [t.strip() for t in re.split(r"[、,，]", cell)]
            if tokens and all(t in DTYPE_WORDS for t in tokens):
                return tokens
    bullet = re.search(rf"- {name}（[^）]*）：[^\n]*?数据类型支持([A-Z0-9、,，]+)", text)
    if bullet:
        tokens = [t for t in re.split(r"[、,，]", bullet.group(1)) if t in DTYPE_WORDS]
        return tokens or None
    return None


NONCONTIGUOUS_MARKS = ("√", "×", "-")


def noncontiguous(text: str, name: str):
    """The 非连续Tensor cell of parameter `name` (the last cell of its row; output rows may drop
    "Out", as spec 004's dQuery for dQueryOut); None without that column or row."""
    if "非连续" not in text:
        return None
    for candidate in (name, name.replace("Out", "", 1) if "Out" in name else None):
        row = candidate and re.search(rf"<td>\s*{candidate}\s*</td>(.*?)</tr>", text, re.S)
        if row:
            cells = [re.sub(r"<.*?>", "", c).strip() for c in re.findall(r"<td>(.*?)</td>", row.group(1), re.S)]
            if cells and cells[-1] in NONCONTIGUOUS_MARKS:
                return cells[-1]
    return None


def extract(seeds: Path) -> dict:
    operators = {}
    for op_type, (spec_file, api) in SPECS.items():
        text = (seeds / spec_file).read_text(encoding="utf-8")
        operators[op_type] = {
            "spec": spec_file,
            "api": api,
            "parameters": [
                {"name": name, "ctype": ctype, "dtypes": dtypes(text, name), "noncontiguous": noncontiguous(text, name)}
                for ctype, name in signature(text, api)
            ],
        }
    return {
        "generated_by": "scripts/tools/extract_spec_contract.py from the five operator specifications (fakit.pack.specs_dir())",
        "operators": operators,
    }


def render(contract: dict) -> str:
    return json.dumps(contract, indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=CONTRACT, help=f"output file (default {CONTRACT})")
    args = parser.parse_args(argv)
    seeds = specs_dir()
    if not seeds.is_dir():
        print(f"extract_spec_contract: specs directory {seeds} not found (set FA_SPECS_DIR)", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(extract(seeds)), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
