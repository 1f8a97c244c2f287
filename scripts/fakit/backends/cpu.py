"""The `cpu` backend: runs an operator through its aclnn C API in the CPU-target library.

    out = run("prompt_flash_attention", **golden_kwargs)

builds the library if needed (fakit.build.ensure_built), creates one aclTensor per array in
device memory (aclrtMalloc + aclrtMemcpy), calls aclnn<Op>GetWorkspaceSize and aclnn<Op>,
copies the outputs back and destroys everything. A non-zero aclnn status raises
fakit.AclnnError with the operator's last log line (not printed again on stderr).

The launch runs in a worker thread in the emulator's raise mode: a kernel fault or deadlock
raises fakit.EmulatorError with the emulator's message (the process and its memory stay
usable); Ctrl-C stops the launch within a fraction of a second and raises KeyboardInterrupt;
a launch longer than PROGRESS_AFTER_S seconds shows its blocks done and an ETA on a terminal.
`last_counters()` gives the emulator's per-core pipe counters and buffer peaks of the last
launch, `last_tiling()` its tiling key and data, `opdefs()` the registered OpDefs.

FAKIT_CPU_SANITIZE=1 selects the ASan/UBSan build (the process must preload libasan).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import ml_dtypes
import numpy as np

from .. import build
from ..errors import AclnnError, EmulatorError
from ..views import Described, Strided, ViewSpec
from ..views import make as make_view

# numpy dtype -> aclDataType value (acl/acl_base.h)
ACL_DTYPES = {
    np.dtype(np.float32): 0,
    np.dtype(np.float16): 1,
    np.dtype(np.int8): 2,
    np.dtype(np.int32): 3,
    np.dtype(np.uint8): 4,
    np.dtype(np.int16): 6,
    np.dtype(np.uint16): 7,
    np.dtype(np.uint32): 8,
    np.dtype(np.int64): 9,
    np.dtype(np.uint64): 10,
    np.dtype(np.float64): 11,
    np.dtype(np.bool_): 12,
    np.dtype(ml_dtypes.bfloat16): 27,
}
ACL_FORMAT_ND = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_ERROR_REPEAT_INITIALIZE = 100002
PROGRESS_AFTER_S = 3.0

_c = ctypes
_lock = threading.RLock()
_runtime: Optional["_Runtime"] = None
_handles: Dict[Path, ctypes.CDLL] = {}


def _sanitize() -> bool:
    return os.environ.get("FAKIT_CPU_SANITIZE", "") not in ("", "0")


class _Runtime:
    """The acl runtime of the loaded library: initialised once per process."""

    def __init__(self, lib: ctypes.CDLL):
        self.lib = lib
        sig = {
            "aclInit": (_c.c_int, [_c.c_char_p]),
            "aclrtSetDevice": (_c.c_int, [_c.c_int32]),
            "aclrtCreateStream": (_c.c_int, [_c.POINTER(_c.c_void_p)]),
            "aclrtSynchronizeStream": (_c.c_int, [_c.c_void_p]),
            "aclrtMalloc": (_c.c_int, [_c.POINTER(_c.c_void_p), _c.c_size_t, _c.c_int]),
            "aclrtFree": (_c.c_int, [_c.c_void_p]),
            "aclrtMemcpy": (_c.c_int, [_c.c_void_p, _c.c_size_t, _c.c_void_p, _c.c_size_t, _c.c_int]),
            "aclCreateTensor": (
                _c.c_void_p,
                [
                    _c.POINTER(_c.c_int64),
                    _c.c_uint64,
                    _c.c_int,
                    _c.POINTER(_c.c_int64),
                    _c.c_int64,
                    _c.c_int,
                    _c.POINTER(_c.c_int64),
                    _c.c_uint64,
                    _c.c_void_p,
                ],
            ),
            "aclCreateIntArray": (_c.c_void_p, [_c.POINTER(_c.c_int64), _c.c_uint64]),
            "aclCreateTensorList": (_c.c_void_p, [_c.POINTER(_c.c_void_p), _c.c_uint64]),
            "aclDestroyTensor": (_c.c_int, [_c.c_void_p]),
            "aclDestroyIntArray": (_c.c_int, [_c.c_void_p]),
            "aclDestroyTensorList": (_c.c_int, [_c.c_void_p]),
            "ascendc_emu_last_error_message": (_c.c_char_p, []),
            "ascendc_emu_clear_last_messages": (None, []),
            "ascendc_emu_opdefs_json": (_c.c_char_p, []),
            "ascendc_emu_set_fault_mode": (None, [_c.c_int]),
            "ascendc_emu_set_errors_to_stderr": (None, [_c.c_int]),
            "ascendc_emu_cancel_launches": (None, []),
            "ascendc_emu_last_fault_message": (_c.c_char_p, []),
            "ascendc_emu_launch_progress": (None, [_c.POINTER(_c.c_uint64), _c.POINTER(_c.c_uint64)]),
        }
        for name, (restype, argtypes) in sig.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        # A fault raises EmulatorError instead of ending the process; errors are raised, not printed.
        lib.ascendc_emu_set_fault_mode(1)
        lib.ascendc_emu_set_errors_to_stderr(0)
        status = lib.aclInit(None)
        if status not in (0, ACL_ERROR_REPEAT_INITIALIZE):
            raise RuntimeError(f"aclInit failed with {status}")
        self._check(lib.aclrtSetDevice(0), "aclrtSetDevice")
        self.stream = _c.c_void_p()
        self._check(lib.aclrtCreateStream(_c.byref(self.stream)), "aclrtCreateStream")

    def _check(self, status: int, what: str) -> None:
        if status != 0:
            raise RuntimeError(f"{what} failed with {status}: {self.last_error()}")

    def last_error(self) -> str:
        return (self.lib.ascendc_emu_last_error_message() or b"").decode(errors="replace")

    def last_fault(self) -> str:
        return (self.lib.ascendc_emu_last_fault_message() or b"").decode(errors="replace")

    def progress(self):
        done, total = _c.c_uint64(), _c.c_uint64()
        self.lib.ascendc_emu_launch_progress(_c.byref(done), _c.byref(total))
        return done.value, total.value

    def supervised(self, name: str, call):
        """call() (an aclnn run stage) in a worker thread, so that this thread stays responsive:
        Ctrl-C cancels the launch (the emulator stops every core thread at its next API call or
        blocking point) and re-raises KeyboardInterrupt once the worker has ended; a long launch
        shows its progress on a terminal."""
        box: Dict[str, Any] = {}

        def work():
            try:
                box["status"] = call()
            except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
                box["error"] = exc

        worker = threading.Thread(target=work, name=f"fakit {name}", daemon=True)
        bar = _LaunchProgress(self, name)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.1)
                bar.update()
        except KeyboardInterrupt:
            while worker.is_alive():  # repeated: the launch may not have started yet
                self.lib.ascendc_emu_cancel_launches()
                worker.join(0.05)
            raise
        finally:
            bar.close()
        if "error" in box:
            raise box["error"]
        return box["status"]

    # --- device memory and meta objects -------------------------------------------------
    def to_device(self, arr: np.ndarray) -> _c.c_void_p:
        dev = _c.c_void_p()
        if arr.nbytes:
            self._check(self.lib.aclrtMalloc(_c.byref(dev), arr.nbytes, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")
            self._check(
                self.lib.aclrtMemcpy(dev, arr.nbytes, arr.ctypes.data, arr.nbytes, ACL_MEMCPY_HOST_TO_DEVICE),
                "aclrtMemcpy",
            )
        return dev

    def from_device(self, dev: _c.c_void_p, template: np.ndarray) -> np.ndarray:
        out = np.empty(template.shape, template.dtype)
        if out.nbytes:
            self._check(
                self.lib.aclrtMemcpy(out.ctypes.data, out.nbytes, dev, out.nbytes, ACL_MEMCPY_DEVICE_TO_HOST),
                "aclrtMemcpy",
            )
        return out

    def tensor(self, arr: np.ndarray, dev: _c.c_void_p, strided: Optional[Strided] = None) -> int:
        """An aclTensor over `dev`: contiguous `arr`, or the view `strided` describes (its storage
        shape 1-D: the declared element count)."""
        try:
            dtype = ACL_DTYPES[arr.dtype]
        except KeyError:
            raise ValueError(f"dtype {arr.dtype} has no aclDataType") from None
        nd = arr.ndim
        shape = (_c.c_int64 * max(nd, 1))(*arr.shape)
        if strided is None:
            strides = (_c.c_int64 * max(nd, 1))(*[s // arr.itemsize for s in arr.strides])
            offset, storage, ns = 0, shape, nd
        else:
            strides = (_c.c_int64 * max(nd, 1))(*strided.strides)
            declared = strided.span() if strided.storage is None else strided.storage
            offset, storage, ns = strided.offset, (_c.c_int64 * 1)(declared), 1
        t = self.lib.aclCreateTensor(shape, nd, dtype, strides, offset, ACL_FORMAT_ND, storage, ns, dev)
        if not t:
            raise RuntimeError(f"aclCreateTensor failed: {self.last_error()}")
        return t

    def described_tensor(self, d: Described):
        dev = _c.c_void_p()
        self._check(
            self.lib.aclrtMalloc(_c.byref(dev), max(d.alloc_bytes, 1), ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc"
        )
        zeros = np.zeros(max(d.alloc_bytes, 1), np.uint8)
        self._check(
            self.lib.aclrtMemcpy(dev, zeros.nbytes, zeros.ctypes.data, zeros.nbytes, ACL_MEMCPY_HOST_TO_DEVICE),
            "aclrtMemcpy",
        )
        nd = len(d.shape)
        if d.strides is None:
            strides = [1] * nd
            for i in range(nd - 2, -1, -1):
                strides[i] = min(strides[i + 1] * max(d.shape[i + 1], 1), 2**63 - 1)
        else:
            strides = list(d.strides)
        storage = list(d.shape if d.storage is None else d.storage)
        arr = lambda v: (_c.c_int64 * max(len(v), 1))(*v)  # noqa: E731
        t = self.lib.aclCreateTensor(
            arr(d.shape),
            nd,
            ACL_DTYPES[np.dtype(d.dtype)],
            arr(strides),
            d.offset,
            ACL_FORMAT_ND,
            arr(storage),
            len(storage),
            dev,
        )
        if not t:
            self.lib.aclrtFree(dev)
            raise RuntimeError(f"aclCreateTensor failed: {self.last_error()}")
        return t, dev


class _LaunchProgress:
    """'<api>: 12/48 blocks, 6.1 s, ETA 18 s' on stderr, redrawn in place, for launches longer than
    PROGRESS_AFTER_S on a terminal; erased when the launch ends."""

    def __init__(self, rt: _Runtime, name: str):
        self.rt, self.name, self.start, self.shown = rt, name, time.monotonic(), False
        self.tty = sys.stderr.isatty()

    def update(self) -> None:
        elapsed = time.monotonic() - self.start
        if not self.tty or elapsed < PROGRESS_AFTER_S:
            return
        done, total = self.rt.progress()
        eta = f", ETA {elapsed * (total - done) / done:.0f} s" if 0 < done < total else ""
        sys.stderr.write(f"\r\033[K{self.name}: {done}/{total} blocks, {elapsed:.1f} s{eta}")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _library(path: Path) -> ctypes.CDLL:
    """Load `path` (once) and initialise the acl runtime it carries."""
    global _runtime
    with _lock:
        if path not in _handles:
            # The product library first: the proof library links against it, and both must see
            # the same runtime. RTLD_GLOBAL lets the proof library's dependency resolve to it.
            ops_lib = build.library_path("cpu", _sanitize())
            if path != ops_lib and ops_lib not in _handles:
                _library(ops_lib)
            _handles[path] = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        if _runtime is None:
            _runtime = _Runtime(_handles[path])
        return _handles[path]


def runtime() -> _Runtime:
    _library(build.ensure_built("cpu", sanitize=_sanitize()))
    assert _runtime is not None
    return _runtime


def run(op: str, **kwargs):
    """fakit.run(op, backend="cpu", **golden_kwargs)."""
    from .. import ops

    return run_binding(ops.lookup(op), **kwargs)


def run_binding(
    binding, library: Optional[Path] = None, views: Optional[Dict[str, ViewSpec]] = None, after_launch=None, **kwargs
):
    """Runs one call of `binding` (a fakit.ops.OpBinding) from the given library (default: the
    product library; the proof operators pass fakit.build.proof_library_path()). `views` maps
    aclnn parameter names (inputs or outputs) to a fakit.views layout ("padded", "transposed" or
    a function array -> Strided): those tensors are passed as non-contiguous views. `after_launch`
    (tests of the run stage's misuse handling) is called as after_launch(lib, executor, workspace,
    workspace_size, stream) after a successful second stage."""
    from ..ops import outputs_of, prepare

    values = prepare(binding, kwargs)  # keyword mistakes before any build
    outputs = outputs_of(binding, values)
    views = dict(views or {})
    ops_lib = build.ensure_built("cpu", sanitize=_sanitize())
    lib = _library(Path(library) if library is not None else ops_lib)
    rt = runtime()

    created: List[tuple] = []  # (destroy function, handle)
    device: List[_c.c_void_p] = []
    out_dev: Dict[str, tuple] = {}
    args: List[Any] = []
    argtypes: List[Any] = []

    def device_tensor(arr, name=None):
        if isinstance(arr, Described):
            t, dev = rt.described_tensor(arr)
            device.append(dev)
            return t, dev, np.zeros(0, arr.dtype)
        if name in views and not isinstance(arr, Strided):
            arr = make_view(arr, views[name])
        if isinstance(arr, Strided):
            store = arr.storage_array()
            dev = rt.to_device(store)
            if dev.value:
                device.append(dev)
            return rt.tensor(np.asarray(arr.array), dev, arr), dev, (arr, store)
        arr = np.ascontiguousarray(arr)
        dev = rt.to_device(arr)
        if dev.value:
            device.append(dev)
        return rt.tensor(arr, dev), dev, arr

    # A missing required argument goes to the C API as a null pointer: its status (161001) and
    # message are the answer, not a Python error (outputs_of passes their outputs as null too).
    pointer_kinds = ("tensor", "tensor_list", "int_array", "out_tensor")
    try:
        for p in binding.params:
            value = outputs.get(p.name) if p.kind == "out_tensor" else values.get(p.name)
            if value is None and p.kind in pointer_kinds:
                args.append(None)
                argtypes.append(_c.c_void_p)
                continue
            if p.kind in ("tensor", "out_tensor"):
                t, dev, arr = device_tensor(value, p.name)
                created.append((rt.lib.aclDestroyTensor, t))
                if p.kind == "out_tensor":
                    out_dev[p.name] = (dev, arr)
                args.append(t)
                argtypes.append(_c.c_void_p)
            elif p.kind == "tensor_list":
                handles = [device_tensor(item)[0] for item in value]
                arr_t = (_c.c_void_p * max(len(handles), 1))(*handles)
                lst = rt.lib.aclCreateTensorList(arr_t, len(handles))
                created.append((rt.lib.aclDestroyTensorList, lst))  # destroys its tensors too
                args.append(lst)
                argtypes.append(_c.c_void_p)
            elif p.kind == "int_array":
                ints = [int(v) for v in value]
                buf = (_c.c_int64 * max(len(ints), 1))(*ints)
                ia = rt.lib.aclCreateIntArray(buf, len(ints))
                created.append((rt.lib.aclDestroyIntArray, ia))
                args.append(ia)
                argtypes.append(_c.c_void_p)
            elif p.kind == "int64":
                args.append(int(value))
                argtypes.append(_c.c_int64)
            elif p.kind == "double":
                args.append(float(value))
                argtypes.append(_c.c_double)
            elif p.kind == "bool":
                args.append(bool(value))
                argtypes.append(_c.c_bool)
            elif p.kind == "string":
                args.append(None if value is None else str(value).encode())
                argtypes.append(_c.c_char_p)

        get_ws = getattr(lib, binding.aclnn + "GetWorkspaceSize")
        get_ws.restype = _c.c_int
        get_ws.argtypes = argtypes + [_c.POINTER(_c.c_uint64), _c.POINTER(_c.c_void_p)]
        launch = getattr(lib, binding.aclnn)
        launch.restype = _c.c_int
        launch.argtypes = [_c.c_void_p, _c.c_uint64, _c.c_void_p, _c.c_void_p]

        rt.lib.ascendc_emu_clear_last_messages()
        ws_size, executor = _c.c_uint64(0), _c.c_void_p()
        status = get_ws(*args, _c.byref(ws_size), _c.byref(executor))
        if status != 0:
            raise AclnnError(status, rt.last_error())
        workspace = _c.c_void_p()
        if ws_size.value:
            rt._check(
                rt.lib.aclrtMalloc(_c.byref(workspace), ws_size.value, ACL_MEM_MALLOC_HUGE_FIRST),
                "aclrtMalloc(workspace)",
            )
            device.append(workspace)
        status = rt.supervised(binding.aclnn, lambda: launch(workspace, ws_size.value, executor, rt.stream))
        if status != 0:
            fault = rt.last_fault()
            if fault:
                raise EmulatorError(fault)
            raise AclnnError(status, rt.last_error())
        if after_launch is not None:
            after_launch(lib, executor, workspace, ws_size.value, rt.stream)
        rt._check(rt.lib.aclrtSynchronizeStream(rt.stream), "aclrtSynchronizeStream")
        results = {name: _read_output(rt, name, dev, arr) for name, (dev, arr) in out_dev.items()}
    finally:
        for destroy, handle in created:
            destroy(handle)
        for dev in device:
            rt.lib.aclrtFree(dev)
    return binding.result(results)


def _read_output(rt: _Runtime, name: str, dev, placed) -> np.ndarray:
    """An output's values; for a strided output also checks the kernel left its storage outside
    the view untouched (a write there would corrupt a caller's neighbouring data)."""
    if not isinstance(placed, tuple):
        return rt.from_device(dev, placed)
    strided, before = placed
    after = rt.from_device(dev, before)
    outside = np.ones(before.shape, bool)
    if strided.array.size:
        strided.view_of(outside)[...] = False
    changed = (before.view(np.uint8).reshape(before.size, -1) != after.view(np.uint8).reshape(after.size, -1)).any(1)
    if (changed & outside).any():
        raise RuntimeError(f"output {name}: {(changed & outside).sum()} storage elements outside its view were written")
    return np.array(strided.view_of(after))


def last_counters() -> Dict[str, Any]:
    """Per-core, per-pipe counters of the last kernel launch (emu::LastLaunchCountersJson), and
    each core's and the launch's peak bytes in use per local buffer (``peak``: UB, L1, L0A, ...)."""
    rt = runtime()
    fn = rt.lib.ascendc_emu_last_counters_json
    fn.restype = _c.c_char_p
    return json.loads(fn().decode())


def last_tiling() -> Tuple[int, bytes]:
    """(tiling key, tiling data bytes) of the last operator launch (ascendc_emu_last_tiling)."""
    rt = runtime()
    fn = rt.lib.ascendc_emu_last_tiling
    fn.restype = _c.c_void_p
    fn.argtypes = [_c.POINTER(_c.c_uint64), _c.POINTER(_c.c_uint64)]
    size, key = _c.c_uint64(), _c.c_uint64()
    data = fn(_c.byref(size), _c.byref(key))
    return key.value, _c.string_at(data, size.value) if size.value else b""


def last_profile() -> Dict[str, Any]:
    """Modelled device time of the last kernel launch (the emulator's timeline model): task
    duration in µs, block dim, msprof PipeUtilization ratios averaged over blocks
    (aic_mac_ratio, ..., aiv_scalar_ratio), bound pipe, HBM/L2 bytes and per-core busy times.
    A model, not a measurement (docs/performance.md)."""
    rt = runtime()
    fn = rt.lib.ascendc_emu_last_profile_json
    fn.restype = _c.c_char_p
    return json.loads(fn().decode())


def cost_table() -> List[Dict[str, Any]]:
    """The timeline model's cost table: key, value, source, assumed (emulator/src/timing/cost_table.cpp)."""
    rt = runtime()
    fn = rt.lib.ascendc_emu_cost_table_json
    fn.restype = _c.c_char_p
    return json.loads(fn().decode())


def soc_info() -> Dict[str, Any]:
    """The emulated SoC: name, aic_cores, aiv_cores, clock_mhz."""
    fn = runtime().lib.ascendc_emu_soc_json
    fn.restype = _c.c_char_p
    return json.loads(fn().decode())


def set_trace_path(path: Optional[str]) -> None:
    """Write a Chrome-trace / Perfetto JSON timeline of every later launch to `path` (None: stop)."""
    rt = runtime()
    fn = rt.lib.ascendc_emu_set_trace_path
    fn.argtypes = [_c.c_char_p]
    fn(None if path is None else str(path).encode())


def opdefs() -> Dict[str, Any]:
    """The OpDefs registered in the product library: {"ops": [...]} (see emu/op_registry.h)."""
    lib = _library(build.ensure_built("cpu", sanitize=_sanitize()))
    fn = lib.ascendc_emu_opdefs_json
    fn.restype = _c.c_char_p
    return json.loads(fn().decode())


def last_error() -> str:
    return runtime().last_error()
