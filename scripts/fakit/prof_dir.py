"""An msprof-shaped PROF_* directory of modelled cpu launches, for msprof's own tools.

msprof (the system profiler) writes

    PROF_<6 digits>_<17-digit time>_<16 letters>/
        device_0/info.json.0                               the device: AI cores, vector cores, clock
        mindstudio_profiler_output/op_summary_<ts>.csv     one row per kernel task
        mindstudio_profiler_output/msprof_<ts>.json        the timeline (Chrome trace, a bare array)

which msprof-analyze (advisor, cluster, compare) and MindStudio Insight read. `ProfDir` writes
the same from the emulator's timeline model: every op_summary column msprof has for an Atlas A2
PipeUtilization run is present, filled where the model gives the value (durations, block dims,
shapes, dtypes, the per-pipe times and ratios, cycle counts) and left empty where it models
nothing (instruction-cache miss rates). The timeline has the task on an "Ascend Hardware" stream
and, per AI core, one track per (sub-core, pipe) that did something, with the instructions as
slices and the cross-core flags (CrossCoreSetFlag -> CrossCoreWaitFlag) as flow arrows; the same
array is also written as trace_view.json (torch_npu's name for it). Launches are placed back to
back in modelled time, from 0 µs. Every number is MODELLED device time, not a measurement (the directory
says so in a README).
"""

from __future__ import annotations

import csv
import json
import os
import random
import string
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np

# The op_summary columns of an Atlas A2 run with --aic-metrics=PipeUtilization, in msprof's order.
COLUMNS = [
    "Device_id",
    "Model ID",
    "Task ID",
    "Stream ID",
    "Op Name",
    "OP Type",
    "OP State",
    "Task Type",
    "Task Start Time(us)",
    "Task Duration(us)",
    "Task Wait Time(us)",
    "Block Dim",
    "Mix Block Dim",
    "HF32 Eligible",
    "Input Shapes",
    "Input Data Types",
    "Input Formats",
    "Output Shapes",
    "Output Data Types",
    "Output Formats",
    "Context ID",
    "aicore_time(us)",
    "aic_total_cycles",
    "aic_mac_time(us)",
    "aic_mac_ratio",
    "aic_scalar_time(us)",
    "aic_scalar_ratio",
    "aic_mte1_time(us)",
    "aic_mte1_ratio",
    "aic_mte2_time(us)",
    "aic_mte2_ratio",
    "aic_fixpipe_time(us)",
    "aic_fixpipe_ratio",
    "aic_icache_miss_rate",
    "aiv_time(us)",
    "aiv_total_cycles",
    "aiv_vec_time(us)",
    "aiv_vec_ratio",
    "aiv_scalar_time(us)",
    "aiv_scalar_ratio",
    "aiv_mte2_time(us)",
    "aiv_mte2_ratio",
    "aiv_mte3_time(us)",
    "aiv_mte3_ratio",
    "aiv_icache_miss_rate",
    "cube_utilization( %)",
]
# msprof metric -> the model's pipe
PIPES = {
    "aic": {"mac": "M", "scalar": "S", "mte1": "MTE1", "mte2": "MTE2", "fixpipe": "FIXP"},
    "aiv": {"vec": "V", "scalar": "S", "mte2": "MTE2", "mte3": "MTE3"},
}
DTYPE_NAMES = {
    "float16": "FLOAT16",
    "bfloat16": "DT_BF16",
    "float32": "FLOAT",
    "float64": "DOUBLE",
    "int8": "INT8",
    "uint8": "UINT8",
    "int16": "INT16",
    "int32": "INT32",
    "int64": "INT64",
    "uint64": "UINT64",
    "bool": "BOOL",
}
STREAM_ID = 2
MODEL_ID = 4294967295  # msprof's value for a task outside any model (single operators)
HARDWARE_PID = 1  # the "Ascend Hardware" process; AI core b is process 2 + b
NOTE = "modelled device time (the emulator's timeline model), not a measurement"


def _number(x: Optional[float], spec: str = ".3f") -> str:
    return "" if x is None else format(x, spec)


def tensor_columns(tensors: Iterable[Any]) -> Tuple[str, str, str]:
    """(shapes, data types, formats) as msprof writes them: one entry per tensor, ';' between
    tensors, ',' between dimensions, the shapes in double quotes."""
    shapes, dtypes = [], []
    for t in tensors:
        arr = np.asarray(t)
        shapes.append(",".join(str(d) for d in arr.shape))
        dtypes.append(DTYPE_NAMES.get(arr.dtype.name, arr.dtype.name.upper()))
    # msprof quotes the shapes inside the cell (its readers strip the first and last character)
    return f'"{";".join(shapes)}"', ";".join(dtypes), ";".join("ND" for _ in shapes)


def summary_row(
    profile: Dict[str, Any],
    soc: Dict[str, Any],
    task_id: int,
    start_us: float,
    op_name: str,
    op_type: str,
    inputs: Iterable[Any],
    outputs: Iterable[Any],
) -> Dict[str, str]:
    """One op_summary row from the emulator's profile of a launch (backends.cpu.last_profile)."""
    cores = profile.get("cores", [])
    units = {"aic": [c for c in cores if c["sub"] == "aic"], "aiv": [c for c in cores if c["sub"] != "aic"]}
    duration = profile["task_duration_us"]
    mix = bool(units["aic"]) and bool(units["aiv"])
    task_type = "MIX_AIC" if mix else ("AI_CORE" if units["aic"] else "AI_VECTOR_CORE")
    in_shapes, in_types, in_formats = tensor_columns(inputs)
    out_shapes, out_types, out_formats = tensor_columns(outputs)
    row = {c: "" for c in COLUMNS}
    row.update(
        {
            "Device_id": "0",
            "Model ID": str(MODEL_ID),
            "Task ID": str(task_id),
            "Stream ID": str(STREAM_ID),
            "Op Name": op_name,
            "OP Type": op_type,
            "OP State": "dynamic",
            "Task Type": task_type,
            "Task Start Time(us)": _number(start_us),
            "Task Duration(us)": _number(duration),
            "Task Wait Time(us)": "0",
            "Block Dim": str(profile.get("block_dim", "")),
            "Mix Block Dim": str(len(units["aiv"])) if mix else "N/A",
            "HF32 Eligible": "NO",
            "Input Shapes": in_shapes,
            "Input Data Types": in_types,
            "Input Formats": in_formats,
            "Output Shapes": out_shapes,
            "Output Data Types": out_types,
            "Output Formats": out_formats,
            "Context ID": "N/A",
        }
    )
    mhz = float(profile.get("clock_mhz") or soc.get("clock_mhz") or 0)
    for unit, metrics in PIPES.items():
        members = units[unit]
        if not members:
            continue  # msprof leaves the other unit's columns empty too
        elapsed = [c["end_us"] - c["start_us"] for c in members]
        row["aicore_time(us)" if unit == "aic" else "aiv_time(us)"] = _number(sum(elapsed) / len(elapsed))
        row[f"{unit}_total_cycles"] = str(int(round(sum(elapsed) * mhz)))
        for metric, pipe in metrics.items():
            busy = [c["busy_us"][pipe] for c in members]
            row[f"{unit}_{metric}_time(us)"] = _number(sum(busy) / len(busy))
            ratio = profile.get(f"{unit}_{metric}_ratio")
            row[f"{unit}_{metric}_ratio"] = _number(ratio)
    if units["aic"] and soc.get("aic_cores") and duration > 0:
        mac = sum(c["busy_us"]["M"] for c in units["aic"])
        row["cube_utilization( %)"] = _number(100.0 * mac / (duration * soc["aic_cores"]))
    return row


class ProfDir:
    """PROF_* directory under `out`: add() each launch, then close(); `path` is the directory."""

    def __init__(self, out: Path, soc: Dict[str, Any]):
        now = time.time()
        stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(now))
        millis = f"{int(now * 1000) % 1000:03d}"
        tag = "".join(random.choice(string.ascii_uppercase) for _ in range(16))
        self.path = Path(out) / f"PROF_{os.getpid() % 1000000:06d}_{stamp}{millis}_{tag}"
        self.output = self.path / "mindstudio_profiler_output"
        self.output.mkdir(parents=True)
        (self.path / "device_0").mkdir()
        self.soc = soc
        self.stamp = stamp
        self.rows: List[Dict[str, str]] = []
        # Modelled µs from the start of the profile (not epoch µs: a double would lose the
        # nanoseconds of the instruction slices); the next launch starts here.
        self.clock_us = 0.0
        self.trace_path = self.output / f"msprof_{stamp}.json"
        self._trace = self.trace_path.open("w")
        self._trace.write("[")
        self._first = True
        self._tracks: set = set()
        self._flow_base = 0
        self._meta(HARDWARE_PID, None, "Ascend Hardware")
        self._meta(HARDWARE_PID, STREAM_ID, f"Stream {STREAM_ID}")

    # ------------------------------------------------------------------------- trace events
    def _event(self, event: Dict[str, Any]) -> None:
        self._trace.write(("\n" if self._first else ",\n") + json.dumps(event, separators=(",", ":")))
        self._first = False

    def _meta(self, pid: int, tid: Optional[int], name: str) -> None:
        key = (pid, tid)
        if key in self._tracks:
            return
        self._tracks.add(key)
        if tid is None:
            self._event({"name": "process_name", "pid": pid, "tid": 0, "ph": "M", "args": {"name": name}})
            self._event({"name": "process_labels", "pid": pid, "tid": 0, "ph": "M", "args": {"labels": NOTE}})
        else:
            self._event({"name": "thread_name", "pid": pid, "tid": tid, "ph": "M", "args": {"name": name}})

    def add(
        self,
        profile: Dict[str, Any],
        op_name: str,
        op_type: str,
        inputs: Iterable[Any],
        outputs: Iterable[Any],
        raw_trace: Optional[Dict[str, Any]] = None,
    ) -> None:
        """One launch: its profile (cpu.last_profile()), the operator's names, its input and
        output arrays, and the emulator's raw trace of it (cpu.set_trace_path) for the per-core
        tracks (None: the task only)."""
        task_id = len(self.rows) + 1
        start = self.clock_us
        row = summary_row(profile, self.soc, task_id, start, op_name, op_type, inputs, outputs)
        self.rows.append(row)
        duration = profile["task_duration_us"]
        self._event(
            {
                "name": op_name,
                "pid": HARDWARE_PID,
                "tid": STREAM_ID,
                "ts": start,
                "dur": duration,
                "ph": "X",
                "args": {
                    "Model Id": MODEL_ID,
                    "Task Type": row["Task Type"],
                    "Physic Stream Id": STREAM_ID,
                    "Stream Id": STREAM_ID,
                    "Task Id": task_id,
                    "Batch Id": 0,
                    "Subtask Id": 4294967295,
                    "connection_id": task_id,
                    "Block Dim": row["Block Dim"],
                    "Mix Block Dim": row["Mix Block Dim"],
                    "note": NOTE,
                },
            }
        )
        if raw_trace is not None:
            self._cores(raw_trace, start + profile.get("launch_us", 0.0), op_name)
        self.clock_us = start + duration

    def _cores(self, raw: Dict[str, Any], origin: float, op_name: str) -> None:
        """The emulator's per-core events, shifted to the task's place, with args; tracks named
        only when they have events; flow ids made unique across launches."""
        names: Dict[Tuple[int, int], str] = {}
        for e in raw.get("traceEvents", []):
            if e.get("ph") == "M" and e.get("name") == "thread_name":
                names[(e["pid"], e["tid"])] = e["args"]["name"]
        top = 0
        for e in raw.get("traceEvents", []):
            ph = e.get("ph")
            if ph == "M":
                continue
            core, tid = e["pid"], e["tid"]
            pid = 2 + core
            track = names.get((core, tid), f"track {tid}")
            self._meta(pid, None, f"AI Core {core} (modelled)")
            self._meta(pid, tid, track)
            out = {"name": e["name"], "pid": pid, "tid": tid, "ts": origin + e["ts"], "ph": ph}
            if ph == "X":
                sub, _, pipe = track.partition(" ")
                out["dur"] = e["dur"]
                out["args"] = {"Op Name": op_name, "Core": f"core {core} {sub}", "Pipe": pipe, **e.get("args", {})}
            else:  # a flow: s (at the set) / f (at the release)
                out.update(cat=e.get("cat", "CrossCoreFlag"), id=self._flow_base + int(e["id"]))
                if "bp" in e:
                    out["bp"] = e["bp"]
                top = max(top, int(e["id"]))
            self._event(out)
        self._flow_base += top

    # -------------------------------------------------------------------------------- files
    def close(self) -> Path:
        self._trace.write("\n]\n")
        self._trace.close()
        view = self.output / "trace_view.json"
        try:
            os.link(self.trace_path, view)
        except OSError:
            view.write_bytes(self.trace_path.read_bytes())
        with (self.output / f"op_summary_{self.stamp}.csv").open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(self.rows)
        info = {
            "DeviceInfo": [
                {
                    "id": 0,
                    "env_type": 3,
                    "ai_core_num": self.soc.get("aic_cores"),
                    "aiv_num": self.soc.get("aiv_cores"),
                    "aic_frequency": self.soc.get("clock_mhz"),
                    "aiv_frequency": self.soc.get("clock_mhz"),
                    "soc": self.soc.get("name"),
                }
            ],
            "platform_version": self.soc.get("name"),
            "note": NOTE,
        }
        (self.path / "device_0" / "info.json.0").write_text(json.dumps(info, indent=1))
        (self.path / "README.txt").write_text(
            f"Written by fakit from the cpu backend: {NOTE}.\nSoC {self.soc.get('name')}; "
            f"{len(self.rows)} task(s). Open with msprof-analyze or MindStudio Insight.\n"
        )
        return self.path
