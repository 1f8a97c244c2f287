"""Case directories: the on-disk form of one case that a simulator or device runner consumes
(format documented in docs/harness.md).

    DIR/case.json           op, case id, features, case parameters, tensors, attributes, outputs
    DIR/<input>.bin         each input tensor, raw little-endian, C order
    DIR/<input>.<i>.bin     element i of a tensor-list input (IFA key/value)
    DIR/golden.<out>.bin    each golden output (float32)
    DIR/benchmark.<out>.bin each same-dtype benchmark output (float32), when written
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple

import ml_dtypes
import numpy as np

FORMAT_VERSION = 1
_NAMES = {
    np.dtype(np.float16): "float16",
    np.dtype(ml_dtypes.bfloat16): "bfloat16",
    np.dtype(np.float32): "float32",
    np.dtype(np.float64): "float64",
    np.dtype(np.int8): "int8",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64",
    np.dtype(np.uint64): "uint64",
    np.dtype(bool): "bool",
}
_BY_NAME = {v: k for k, v in _NAMES.items()}


def dtype_name(dt) -> str:
    dt = np.dtype(dt)
    if dt not in _NAMES:
        raise ValueError(f"dtype {dt} has no case-directory name")
    return _NAMES[dt]


def _write_tensor(out: Path, stem: str, arr: np.ndarray) -> Dict[str, Any]:
    arr = np.ascontiguousarray(arr)
    fname = f"{stem}.bin"
    # raw bytes, little-endian (bf16 as its 16-bit pattern, bool as one byte 0/1)
    arr.astype(arr.dtype.newbyteorder("<"), copy=False).tofile(out / fname)
    return {"dtype": dtype_name(arr.dtype), "shape": list(arr.shape), "file": fname, "bytes": int(arr.nbytes)}


def _read_tensor(root: Path, entry: Mapping[str, Any]) -> np.ndarray:
    dt = np.dtype(_BY_NAME[entry["dtype"]]).newbyteorder("<")
    data = np.fromfile(root / entry["file"], dtype=dt)
    return data.reshape(entry["shape"]).astype(dt.newbyteorder("="), copy=False)


def _outputs_dict(result) -> Dict[str, Any]:
    return dict(result) if isinstance(result, Mapping) else {"attention_out": result}


def write_case_dir(out_dir, case, inputs: Mapping[str, Any], golden, benchmark=None) -> Path:
    """Write `case` with its input kwargs and golden (and benchmark) outputs into out_dir."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tensors, attributes, absent = [], {}, []
    for name, value in inputs.items():
        if value is None:
            absent.append(name)
        elif isinstance(value, np.ndarray):
            tensors.append({"name": name, **_write_tensor(out, name, value)})
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, np.ndarray) for v in value):
            tensors.append({"name": name, "list": [_write_tensor(out, f"{name}.{i}", v) for i, v in enumerate(value)]})
        else:
            attributes[name] = value.item() if isinstance(value, np.generic) else value
    dtypes = case.output_dtypes()
    outputs, absent_outputs = [], sorted(n for n, a in _outputs_dict(golden).items() if a is None)
    for kind, result in (("golden", golden), ("benchmark", benchmark)):
        if result is None:
            continue
        for name, arr in _outputs_dict(result).items():
            if arr is None:
                continue
            entry = {
                "name": name,
                "kind": kind,
                "output_dtype": dtypes.get(name),
                **_write_tensor(out, f"{kind}.{name}", np.asarray(arr, np.float32)),
            }
            outputs.append(entry)
    meta = {
        "format_version": FORMAT_VERSION,
        "op": case.op,
        "case_id": case.id,
        "features": case.features,
        "case": case.params(),
        "inputs": tensors,
        "attributes": attributes,
        "absent_inputs": absent,
        "outputs": outputs,
        "absent_outputs": absent_outputs,
        "output_dtypes": dtypes,
    }
    (out / "case.json").write_text(json.dumps(meta, indent=2) + "\n")
    return out


def read_case_dir(
    path,
) -> Tuple[Dict[str, Any], Dict[str, Any], Dict[str, np.ndarray], Optional[Dict[str, np.ndarray]]]:
    """(meta, kwargs for fakit.golden.<op>, golden outputs, benchmark outputs or None)."""
    root = Path(path)
    meta = json.loads((root / "case.json").read_text())
    kwargs: Dict[str, Any] = {name: None for name in meta["absent_inputs"]}
    for t in meta["inputs"]:
        kwargs[t["name"]] = [_read_tensor(root, e) for e in t["list"]] if "list" in t else _read_tensor(root, t)
    kwargs.update(meta["attributes"])
    golden: Dict[str, np.ndarray] = {}
    bench: Dict[str, np.ndarray] = {}
    for o in meta["outputs"]:
        (golden if o["kind"] == "golden" else bench)[o["name"]] = _read_tensor(root, o)
    return meta, kwargs, golden, (bench or None)
