"""One aclnn call as a standalone C++ program: the shared machinery of the `sim` and `npu`
backends (and of `fakit prof`).

    args = plan(op, kwargs)              # the aclnn arguments, in order (from fakit.ops bindings)
    write_case(case_dir, args)           # <name>.bin inputs, outputs.txt, case.json
    source = render(aclnn, header, args) # templates/runner.cpp.j2
    build -> execute -> read_outputs     # against the installed custom-op package

The runner takes the case directory as argv[1], so one build serves every run of that
source; its status file tells a rejected call (aclnn status, raised as fakit.AclnnError) from
a crash.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

import ml_dtypes
import numpy as np

from ..errors import AclnnError

KINDS = ("tensor", "tensor_list", "int_array", "int64", "double", "bool", "string", "out_tensor")

# numpy dtype -> aclDataType enumerator (acl/acl_base.h)
ACL_DTYPES = {
    np.dtype(np.float16): "ACL_FLOAT16",
    np.dtype(ml_dtypes.bfloat16): "ACL_BF16",
    np.dtype(np.float32): "ACL_FLOAT",
    np.dtype(np.float64): "ACL_DOUBLE",
    np.dtype(np.int8): "ACL_INT8",
    np.dtype(np.uint8): "ACL_UINT8",
    np.dtype(np.int16): "ACL_INT16",
    np.dtype(np.int32): "ACL_INT32",
    np.dtype(np.int64): "ACL_INT64",
    np.dtype(np.bool_): "ACL_BOOL",
}

# Public headers, named as the specs' examples include them (aclnnop/aclnn_<op>.h, as CANN installs them).
HEADERS = {
    "aclnnPromptFlashAttention": "aclnnop/aclnn_prompt_flash_attention.h",
    "aclnnFlashAttentionVarLenScore": "aclnnop/aclnn_flash_attention_score.h",
    "aclnnIncreFlashAttentionV4": "aclnnop/aclnn_incre_flash_attention_v4.h",
    "aclnnFlashAttentionUnpaddingScoreGradV5": "aclnnop/aclnn_flash_attention_score_grad.h",
    "aclnnSparseFlashAttentionGrad": "aclnnop/aclnn_sparse_flash_attention_grad.h",
}

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


@dataclasses.dataclass
class Arg:
    """One aclnn argument: `value` is an ndarray (tensor; for out_tensor an array of the output's
    shape and dtype), a list of ndarrays (tensor_list), a list of ints (int_array), a scalar or a
    string — or None for an absent optional."""

    name: str
    kind: str
    value: Any

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"argument {self.name!r}: unknown kind {self.kind!r}; expected one of {KINDS}")


# ------------------------------------------------------------------ arguments from the bindings


def binding(op: str):
    """The fakit.ops binding of `op` (the aclnn name and argument order of its API)."""
    from .. import ops

    return ops.lookup(op)


def plan(op: str, kwargs: Dict[str, Any]):
    """(binding, [Arg]) for fakit.run(op, **kwargs): the binding's prepare() maps the golden's
    keywords to the aclnn parameters and make_outputs() gives the output arrays. A tensor given
    as None (or left out) is an absent argument: the runner passes a null pointer."""
    from ..ops import outputs_of, prepare

    b = binding(op)
    values = prepare(b, kwargs)
    outputs = outputs_of(b, values)
    args = []
    for p in b.params:
        value = outputs.get(p.name) if p.kind == "out_tensor" else values.get(p.name)
        if value is None and not p.optional and p.kind in ("int64", "double", "bool", "string"):
            raise ValueError(f"{b.aclnn}: required argument {p.name!r} is missing")
        args.append(Arg(p.name, p.kind, value))
    return b, args


def header_of(b) -> str:
    return getattr(b, "header", None) or HEADERS[b.aclnn]


# ------------------------------------------------------------------------------ case data


def _file(name: str) -> str:
    return f"{name}.bin"


def write_case(case_dir: Path, args: Sequence[Arg], meta: Optional[Dict[str, Any]] = None) -> None:
    """Inputs as raw little-endian <name>.bin (list items <name>_<i>.bin), outputs.txt
    ("<name> <bytes>" per output) and case.json describing every argument."""
    case_dir.mkdir(parents=True, exist_ok=True)
    described, outputs = [], []
    for a in args:
        d: Dict[str, Any] = {"name": a.name, "kind": a.kind}
        if a.value is None:
            d["absent"] = True
        elif a.kind == "tensor":
            arr = np.ascontiguousarray(a.value)
            arr.tofile(case_dir / _file(a.name))
            d.update(dtype=str(arr.dtype), shape=list(arr.shape), file=_file(a.name))
        elif a.kind == "tensor_list":
            d["items"] = []
            for i, item in enumerate(a.value):
                arr = np.ascontiguousarray(item)
                arr.tofile(case_dir / _file(f"{a.name}_{i}"))
                d["items"].append({"dtype": str(arr.dtype), "shape": list(arr.shape), "file": _file(f"{a.name}_{i}")})
        elif a.kind == "out_tensor":
            arr = np.asarray(a.value)
            d.update(dtype=str(arr.dtype), shape=list(arr.shape), file=_file(f"out_{a.name}"))
            outputs.append(f"{a.name} {arr.nbytes}")
        elif a.kind == "int_array":
            d["values"] = [int(v) for v in a.value]
        else:
            d["value"] = a.value if a.kind == "string" else np.asarray(a.value).item()
        described.append(d)
    (case_dir / "outputs.txt").write_text("".join(line + "\n" for line in outputs))
    (case_dir / "case.json").write_text(json.dumps({**(meta or {}), "args": described}, indent=1))


def read_outputs(case_dir: Path, args: Sequence[Arg]) -> Dict[str, np.ndarray]:
    out = {}
    for a in args:
        if a.kind != "out_tensor" or a.value is None:
            continue
        template = np.asarray(a.value)
        path = case_dir / _file(f"out_{a.name}")
        data = np.fromfile(path, dtype=template.dtype)
        if data.size != template.size:
            raise RuntimeError(f"{path}: {data.size} elements, expected {template.size} {template.shape}")
        out[a.name] = data.reshape(template.shape)
    return out


# ------------------------------------------------------------------------------ rendering


def _acl_dtype(arr: np.ndarray, name: str) -> str:
    try:
        return ACL_DTYPES[np.dtype(arr.dtype)]
    except KeyError:
        raise ValueError(f"argument {name!r}: dtype {arr.dtype} has no aclDataType mapping") from None


def _tensor_ctx(arr, name: str, file: str) -> Dict[str, Any]:
    arr = np.asarray(arr)
    return {
        "dtype": _acl_dtype(arr, name),
        "elem_bytes": arr.dtype.itemsize,
        "shape": [int(d) for d in arr.shape],
        "file": file,
    }


def _double_literal(x: float) -> str:
    x = float(x)
    if math.isnan(x):
        return "std::nan(\"\")"
    if math.isinf(x):
        return "HUGE_VAL" if x > 0 else "-HUGE_VAL"
    return repr(x)


def _c_string(s: str) -> str:
    return json.dumps(str(s))  # a JSON string of ASCII text is a valid C string literal


def arg_context(a: Arg) -> Dict[str, Any]:
    ctx: Dict[str, Any] = {"name": a.name, "kind": a.kind, "var": f"arg_{a.name}", "present": a.value is not None}
    if a.value is None:
        if a.kind in ("int64", "double", "bool", "string"):
            raise ValueError(f"scalar argument {a.name!r} must have a value")
        return ctx
    if a.kind == "tensor":
        ctx.update(_tensor_ctx(a.value, a.name, _file(a.name)))
    elif a.kind == "out_tensor":
        ctx.update(_tensor_ctx(a.value, a.name, _file(f"out_{a.name}")))
    elif a.kind == "tensor_list":
        ctx["tensors"] = [_tensor_ctx(t, a.name, _file(f"{a.name}_{i}")) for i, t in enumerate(a.value)]
    elif a.kind == "int_array":
        ctx["ints"] = [int(v) for v in a.value]
    elif a.kind == "int64":
        ctx["literal"] = f"INT64_C({int(a.value)})"
    elif a.kind == "double":
        ctx["literal"] = _double_literal(a.value)
    elif a.kind == "bool":
        ctx["literal"] = "true" if bool(a.value) else "false"
    elif a.kind == "string":
        ctx["literal"] = _c_string(a.value)
    return ctx


def render(aclnn: str, header: str, args: Sequence[Arg]) -> str:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined, keep_trailing_newline=True
    )
    return env.get_template("runner.cpp.j2").render(aclnn=aclnn, header=header, args=[arg_context(a) for a in args])


# ------------------------------------------------------------------------ build and execute


def build(source: str, work_dir: Path, compile_command: Callable[[Path, Path], List[str]]) -> Path:
    """Writes runner.cpp and builds it, reusing the binary when the source has not changed."""
    work_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    src, exe = work_dir / f"runner_{digest}.cpp", work_dir / f"runner_{digest}"
    if not exe.exists():
        src.write_text(source)
        cmd = compile_command(src, exe)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"building the aclnn runner failed ({' '.join(cmd)}):\n{proc.stderr[-4000:]}")
    return exe


def execute(cmd: List[str], env: Dict[str, str], case_dir: Path, aclnn: str) -> str:
    """Runs the runner (possibly under msprof); raises AclnnError when the API rejected the
    call, RuntimeError when the runner failed otherwise. Returns its stdout."""
    status_file = case_dir / "status.txt"
    if status_file.exists():
        status_file.unlink()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    log = (proc.stdout + proc.stderr)[-4000:]
    if status_file.exists():
        stage, status = (int(x) for x in status_file.read_text().split()[:2])
        if stage < 2:
            what = "GetWorkspaceSize" if stage == 0 else "run stage"
            raise AclnnError(status, f"{aclnn} {what} rejected the call; runner log:\n{log}")
    if proc.returncode != 0 or not status_file.exists():
        raise RuntimeError(f"aclnn runner failed (exit {proc.returncode}): {' '.join(cmd)}\n{log}")
    return proc.stdout


def work_dir(kind: str, op: str, args: Sequence[Arg]) -> Path:
    """build/fakit-<kind>/<op>/<digest of the arguments> (FAKIT_WORK_DIR overrides build/)."""
    root = Path(os.environ.get("FAKIT_WORK_DIR") or Path(__file__).resolve().parents[3] / "build")
    h = hashlib.sha1()
    for a in args:
        h.update(json.dumps(arg_context(a), sort_keys=True, default=str).encode())
        if a.kind in ("tensor", "tensor_list") and a.value is not None:
            for item in a.value if a.kind == "tensor_list" else [a.value]:
                h.update(np.ascontiguousarray(item).tobytes())
    return root / f"fakit-{kind}" / op / h.hexdigest()[:12]


# ------------------------------------------------------------------------ the sim / npu flow


def run_cann(kind: str, op: str, kwargs: Dict[str, Any], wrap: Optional[Callable] = None):
    """fakit.run(op, backend=kind) for kind "sim" (CANN simulator) or "npu" (device): checks
    the toolchain first (BackendUnavailable), then writes, renders, builds, runs, reads back.
    `wrap(ctx, cmd) -> cmd` puts the runner under a profiler (fakit.prof); ctx has toolkit,
    soc, kind, binding and case_dir. A wrapped runner starts under the profiler's control, so
    the simulator libraries are only put on LD_LIBRARY_PATH, not preloaded.
    FAKIT_MSPROF_OUTPUT=DIR runs every call under `msprof op [simulator] --output=DIR`."""
    from .. import cann
    from ..ops import check_keywords, keywords

    b = binding(op)
    check_keywords(b.op, keywords(b), kwargs)  # a misspelt keyword first, before the toolkit
    if wrap is None and os.environ.get("FAKIT_MSPROF_OUTPUT"):
        from ..prof import msprof_op_wrap

        wrap = msprof_op_wrap(kind, Path(os.environ["FAKIT_MSPROF_OUTPUT"]).resolve())
    toolkit = cann.find_cann()
    soc = os.environ.get("FAKIT_SOC", cann.DEFAULT_SOC)
    vendor = os.environ.get("FAKIT_VENDOR", cann.DEFAULT_VENDOR)
    sim_lib = cann.simulator_lib(toolkit, soc) if kind == "sim" else None
    if kind == "npu":
        cann.require_device()
    vendor_dir = cann.find_package(toolkit, vendor, soc)

    b, args = plan(op, kwargs)
    wd = work_dir(kind, op, args)
    case_dir = wd / "case"
    write_case(case_dir, args, {"op": op, "aclnn": b.aclnn, "backend": kind, "soc": soc})
    exe = build(
        render(b.aclnn, header_of(b), args), wd, lambda src, out: cann.compile_command(src, out, toolkit, vendor_dir)
    )
    cmd = [str(exe), str(case_dir), os.environ.get("FAKIT_DEVICE_ID", "0")]
    if wrap is not None:
        ctx = dict(toolkit=toolkit, soc=soc, kind=kind, binding=b, case_dir=case_dir, kernel=_kernel_prefix(b))
        cmd = wrap(ctx, cmd)
    env = cann.run_env(toolkit, vendor_dir, sim_lib, preload=kind == "sim" and wrap is None)
    execute(cmd, env, case_dir, b.aclnn)
    outputs = read_outputs(case_dir, args)
    return b.result(outputs) if getattr(b, "result", None) else _default_result(outputs)


def _kernel_prefix(b) -> str:
    """msprof --kernel-name filter: the kernel entries are named after the OpType's snake case,
    which every binding's op name starts with (prompt_flash_attention, flash_attention_...)."""
    return getattr(b, "kernel", None) or b.op


def _default_result(outputs: Dict[str, np.ndarray]):
    values = list(outputs.values())
    return values[0] if len(values) == 1 else tuple(values)
