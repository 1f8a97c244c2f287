"""Packaging from the exported OpDefs: msopgen operator JSON (so a user can regenerate an
msopgen project from the same definitions), the msopgen command line, and the custom-op
package build (./build.sh --target npu --pkg).

The OpDefs come from the CPU build (`fakit.backends.cpu.opdefs()`, the JSON that
`ascendc_emu_opdefs_json()` exports from the op_host/ registrations) or from a saved
`fakit ops --json` file; schema:
  {"ops": [{"op_type", "inputs"/"outputs": [{"name", "param_type", "dtypes", "formats"}],
            "attrs": [{"name", "type", "required", "default"}]}]}
msopgen's JSON format: the msOpGen chapter of the public Ascend C operator development guide.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional

from .errors import BackendUnavailable

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = Path(__file__).resolve().parent / "templates"

# ge::DataType -> msopgen "type" names
MSOPGEN_DTYPES = {
    "DT_FLOAT16": "float16",
    "DT_BF16": "bfloat16",
    "DT_FLOAT": "float",
    "DT_DOUBLE": "double",
    "DT_INT8": "int8",
    "DT_UINT8": "uint8",
    "DT_INT16": "int16",
    "DT_UINT16": "uint16",
    "DT_INT32": "int32",
    "DT_UINT32": "uint32",
    "DT_INT64": "int64",
    "DT_UINT64": "uint64",
    "DT_BOOL": "bool",
}
# OpDef attribute types -> msopgen attr "type" names
MSOPGEN_ATTR_TYPES = {
    "int": "int",
    "float": "float",
    "bool": "bool",
    "string": "str",
    "list_int": "listInt",
    "list_float": "listFloat",
    "list_bool": "listBool",
}


def snake_case(op_type: str) -> str:
    """OpType -> file/kernel name by CANN's rule: '_' between a lower-case letter or digit and
    a capital, and before the last capital of a run followed by a lower-case letter
    (GatherV2Custom -> gather_v2_custom, Conv2DCustom -> conv2_d_custom)."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", op_type)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def load_opdefs(path: Optional[Path] = None) -> List[Dict[str, Any]]:
    """The registered OpDefs: from a saved JSON file, or exported by the CPU build."""
    if path is not None:
        data = json.loads(Path(path).read_text())
    else:
        from .backends import cpu

        data = cpu.opdefs()
    ops = data["ops"] if isinstance(data, dict) else data
    return sorted(ops, key=lambda op: op["op_type"])


def _port(p: Dict[str, Any], op_type: str) -> Dict[str, Any]:
    dtypes, formats = list(p["dtypes"]), list(p.get("formats") or ["FORMAT_ND"])
    if len(formats) == 1 and len(dtypes) > 1:
        formats *= len(dtypes)  # one format for every dtype
    if len(formats) != len(dtypes):
        raise ValueError(
            f"{op_type}.{p['name']}: {len(dtypes)} dtypes but {len(formats)} formats; "
            "msopgen pairs them position by position"
        )
    unknown = [d for d in dtypes if d not in MSOPGEN_DTYPES]
    if unknown:
        raise ValueError(f"{op_type}.{p['name']}: no msopgen name for dtype(s) {unknown}")
    if p["param_type"] not in ("required", "optional", "dynamic"):
        raise ValueError(f"{op_type}.{p['name']}: param_type {p['param_type']!r}")
    return {
        "name": p["name"],
        "param_type": p["param_type"],
        "type": [MSOPGEN_DTYPES[d] for d in dtypes],
        "format": [f[len("FORMAT_") :] if f.startswith("FORMAT_") else f for f in formats],
    }


def _attr(a: Dict[str, Any], op_type: str) -> Dict[str, Any]:
    if a["type"] not in MSOPGEN_ATTR_TYPES:
        raise ValueError(f"{op_type}.{a['name']}: attribute type {a['type']!r} has no msopgen name")
    required = bool(a.get("required"))
    return {
        "name": a["name"],
        "type": MSOPGEN_ATTR_TYPES[a["type"]],
        "param_type": "required" if required else "optional",
        "has_default": not required and a.get("default") is not None,
        "default_value": a.get("default"),
    }


def msopgen_op(opdef: Dict[str, Any]) -> Dict[str, Any]:
    t = opdef["op_type"]
    return {
        "op_type": t,
        "inputs": [_port(p, t) for p in opdef.get("inputs", [])],
        "outputs": [_port(p, t) for p in opdef.get("outputs", [])],
        "attrs": [_attr(a, t) for a in opdef.get("attrs", [])],
    }


def render_msopgen_json(opdef: Dict[str, Any]) -> str:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined, keep_trailing_newline=True
    )
    text = env.get_template("msopgen_op.json.j2").render(op=msopgen_op(opdef))
    json.loads(text)  # the template must always produce valid JSON
    return text


def write_msopgen_json(opdefs: List[Dict[str, Any]], out_dir: Path) -> List[Path]:
    """<out_dir>/<snake op type>.json per operator; returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for opdef in opdefs:
        path = out_dir / f"{snake_case(opdef['op_type'])}.json"
        path.write_text(render_msopgen_json(opdef))
        written.append(path)
    return written


def msopgen_command(
    json_path: Path, soc_version: str, out_dir: Path, append: bool, framework: str = "aclnn"
) -> List[str]:
    tool = shutil.which("msopgen")
    if tool is None:
        raise BackendUnavailable(
            "msopgen not found on PATH: install the CANN toolkit and source "
            "its set_env.sh (msopgen is in <CANN>/python/site-packages/bin)"
        )
    return [
        tool,
        "gen",
        "-i",
        str(json_path),
        "-f",
        framework,
        "-c",
        f"ai_core-{soc_version}",
        "-lan",
        "cpp",
        "-out",
        str(out_dir),
        "-m",
        "1" if append else "0",
    ]


def generate_msopgen_project(json_files: List[Path], soc_version: str, out_dir: Path) -> None:
    """Runs msopgen for each operator JSON: the first creates the project, the others append."""
    for i, path in enumerate(json_files):
        cmd = msopgen_command(path, soc_version, out_dir, append=i > 0)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")


def build_package(soc: str, vendor: str, ops: Optional[str]) -> int:
    """./build.sh --target npu --pkg (exit 2 with the reason when there is no CANN)."""
    cmd = ["bash", str(ROOT / "build.sh"), "--target", "npu", "--soc", soc, "--pkg", "--vendor", vendor]
    if ops:
        cmd += ["--ops", ops]
    return subprocess.call(cmd, cwd=ROOT)
