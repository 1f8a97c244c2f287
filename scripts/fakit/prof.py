"""Profiling one case: `msprof op` (device) or `msprof op simulator` (CANN simulator) around the
aclnn runner, summarised as kernel time, per-pipe utilisation and bandwidth; msprof-analyze's
advisor on a system-profiler run (it reads msprof's PROF_* output, not the OPPROF_*
directories of msprof op). On the cpu backend the emulator's timeline model fills the same
table with modelled device time and the per-pipe counters (docs/performance.md), and writes
the same PROF_* directory msprof would (fakit.prof_dir), which the advisor reads too.

msprof op output (the msProf `op` mode of the public CANN profiling guide): OPPROF_<ts>_XXX/
OpBasicInfo.csv (Op Name, Task Duration(us), Block Dim), PipeUtilization.csv (per block:
aic_cube_ratio / aic_mac_ratio, aic_mte1/mte2/fixpipe/scalar_ratio, aiv_vec/mte2/mte3/
scalar_ratio), Memory.csv (bandwidths in GB/s).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional

# msprof metric -> (unit, pipe) in the emulator's pipe names (M = cube, V = vector, S = scalar)
PIPE_OF_METRIC = {
    "aic_cube_ratio": ("aic", "M"),
    "aic_mac_ratio": ("aic", "M"),
    "aic_mte1_ratio": ("aic", "MTE1"),
    "aic_mte2_ratio": ("aic", "MTE2"),
    "aic_fixpipe_ratio": ("aic", "FIXP"),
    "aic_scalar_ratio": ("aic", "S"),
    "aiv_vec_ratio": ("aiv", "V"),
    "aiv_mte2_ratio": ("aiv", "MTE2"),
    "aiv_mte3_ratio": ("aiv", "MTE3"),
    "aiv_scalar_ratio": ("aiv", "S"),
}
PIPE_ORDER = [
    ("aic", "MTE2"),
    ("aic", "MTE1"),
    ("aic", "M"),
    ("aic", "FIXP"),
    ("aic", "S"),
    ("aiv", "MTE2"),
    ("aiv", "V"),
    ("aiv", "MTE3"),
    ("aiv", "S"),
]


@dataclasses.dataclass
class PipeRow:
    unit: str  # aic (cube core) | aiv (vector core)
    pipe: str  # MTE2, MTE1, M, FIXP, V, MTE3, S
    metric: str = "-"  # the profiler's column it came from
    ratio: Optional[float] = None  # busy fraction of the kernel time (mean over blocks)
    bytes: Optional[int] = None  # emulator counters only
    ops: Optional[int] = None


@dataclasses.dataclass
class Summary:
    backend: str
    kernel: str
    duration_us: Optional[float] = None
    block_dim: Optional[int] = None
    pipes: List[PipeRow] = dataclasses.field(default_factory=list)
    bandwidth_gbps: Dict[str, float] = dataclasses.field(default_factory=dict)
    notes: List[str] = dataclasses.field(default_factory=list)
    source: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


def _fmt(x, spec=""):
    return "-" if x is None else format(x, spec)


def format_table(s: Summary) -> str:
    what = "modelled time" if s.backend == "cpu" and s.duration_us is not None else "time"
    lines = [
        f"kernel {s.kernel}  backend {s.backend}  {what} {_fmt(s.duration_us, '.2f')} us  block dim {_fmt(s.block_dim)}"
    ]
    lines.append(f"{'pipe':<10} {'metric':<18} {'ratio':>7} {'bytes':>14} {'ops':>12}")
    for r in s.pipes:
        lines.append(
            f"{r.unit + '.' + r.pipe:<10} {r.metric:<18} {_fmt(r.ratio, '.3f'):>7} "
            f"{_fmt(r.bytes):>14} {_fmt(r.ops):>12}"
        )
    for name, value in s.bandwidth_gbps.items():
        lines.append(f"bandwidth {name}: {value:.1f} GB/s")
    lines += [f"note: {n}" for n in s.notes]
    if s.source:
        lines.append(f"data: {s.source}")
    return "\n".join(lines)


# ------------------------------------------------------------------------ msprof op output


def _rows(path: Path) -> List[Dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return [{k.strip(): (v or "").strip() for k, v in row.items() if k} for row in csv.DictReader(f)]


def _mean(values: List[str]) -> Optional[float]:
    nums = []
    for v in values:
        try:
            nums.append(float(v))
        except ValueError:
            continue
    return sum(nums) / len(nums) if nums else None


def latest_opprof(out_dir: Path) -> Path:
    found = sorted(Path(out_dir).rglob("OPPROF_*"), key=lambda p: p.stat().st_mtime)
    found = [p for p in found if p.is_dir()]
    if not found:
        raise RuntimeError(f"msprof op wrote no OPPROF_* directory under {out_dir}")
    return found[-1]


def summarise_opprof(opprof: Path, backend: str, kernel: str) -> Summary:
    s = Summary(backend=backend, kernel=kernel, source=str(opprof))
    basic = _rows(opprof / "OpBasicInfo.csv")
    if basic:
        row = basic[0]
        s.kernel = row.get("Op Name", kernel) or kernel
        s.duration_us = _mean([row.get("Task Duration(us)", "")])
        block = _mean([row.get("Block Dim", "")])
        s.block_dim = None if block is None else int(block)
    pipe = _rows(opprof / "PipeUtilization.csv")
    by_pipe: Dict[tuple, PipeRow] = {}
    for metric, (unit, name) in PIPE_OF_METRIC.items():
        ratio = _mean([r.get(metric, "") for r in pipe])
        if ratio is not None and (unit, name) not in by_pipe:
            by_pipe[(unit, name)] = PipeRow(unit, name, metric, ratio)
    s.pipes = [by_pipe[k] for k in PIPE_ORDER if k in by_pipe]
    for r in _rows(opprof / "Memory.csv")[:1]:
        for col in r:
            if col.endswith("(GB/s)"):
                value = _mean([m.get(col, "") for m in _rows(opprof / "Memory.csv")])
                if value is not None:
                    s.bandwidth_gbps[col[: -len("(GB/s)")]] = value
    if not pipe:
        s.notes.append("no PipeUtilization.csv: rerun with --aic-metrics=PipeUtilization")
    return s


# ------------------------------------------------------------------------------ backends


def _case_kwargs(op: str, case_id: str) -> Dict[str, Any]:
    from . import cases

    return cases.get(op, case_id).inputs()


def msprof_op_wrap(kind: str, out_dir: Path, state: Optional[Dict[str, Any]] = None):
    """aclnn_runner.run_cann `wrap`: the runner under `msprof op [simulator]` writing to out_dir."""
    from . import cann

    def wrap(ctx, cmd):
        if state is not None:
            state.update(ctx)
        mode = ["op", "simulator", f"--soc-version={cann.soc_version(ctx['soc'])}"] if kind == "sim" else ["op"]
        return [
            cann.msprof(ctx["toolkit"]),
            *mode,
            f"--output={out_dir}",
            "--aic-metrics=PipeUtilization",
            f"--kernel-name={ctx['kernel']}",
            *cmd,
        ]

    return wrap


def profile_cann(kind: str, op: str, case_id: str, out_dir: Path, analyze: bool = False) -> Summary:
    """Runs the case under `msprof op [simulator]` and summarises the OPPROF output."""
    from .backends import aclnn_runner

    kwargs = _case_kwargs(op, case_id)
    out_dir = Path(out_dir).resolve()
    state: Dict[str, Any] = {}
    aclnn_runner.run_cann(kind, op, kwargs, wrap=msprof_op_wrap(kind, out_dir / "msprof_op", state))
    s = summarise_opprof(latest_opprof(out_dir / "msprof_op"), kind, state["kernel"])
    if kind == "sim":
        s.notes.append("simulator timing is cycle-model time; msprof-analyze applies to device runs only")
    elif analyze:
        s.notes.extend(_advisor(op, kwargs, out_dir))
    return s


def _advisor(op: str, kwargs: Dict[str, Any], out_dir: Path) -> List[str]:
    """msprof --application (system profiler, PipeUtilization metrics) then
    `msprof-analyze advisor computation` on its PROF_* directory."""
    import shutil

    from . import cann
    from .backends import aclnn_runner

    def system_prof(ctx, cmd):
        return [
            cann.msprof(ctx["toolkit"]),
            f"--application={' '.join(cmd)}",
            f"--output={out_dir / 'msprof'}",
            "--ai-core=on",
            "--aic-metrics=PipeUtilization",
        ]

    aclnn_runner.run_cann("npu", op, kwargs, wrap=system_prof)
    tool = shutil.which("msprof-analyze")
    if tool is None:
        return ["msprof-analyze not installed (pip install msprof-analyze): advisor skipped"]
    profs = sorted((out_dir / "msprof").glob("PROF_*"))
    if not profs:
        return [f"msprof wrote no PROF_* directory under {out_dir / 'msprof'}: advisor skipped"]
    cmd = [tool, "advisor", "computation", "-d", str(profs[-1]), "-o", str(out_dir / "advisor")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return [f"{' '.join(cmd)} failed: {proc.stderr.strip()[-500:]}"]
    return [f"msprof-analyze advisor report: {out_dir / 'advisor'}"]


def counters_summary(counters: Any, kernel: str) -> Summary:
    """The emulator's counters (emu::LastLaunchCountersJson) in the profiler's table shape."""
    if isinstance(counters, str):
        counters = json.loads(counters)
    s = Summary(backend="cpu", kernel=counters.get("kernel", kernel), block_dim=counters.get("block_dim"))
    totals: Dict[tuple, Dict[str, int]] = {}
    for core in counters.get("cores", []):
        unit = "aic" if core.get("sub") == "aic" else "aiv"
        for pipe, c in core.items():
            if isinstance(c, dict):
                t = totals.setdefault((unit, pipe), {"bytes": 0, "ops": 0})
                t["bytes"] += int(c.get("bytes", 0))
                t["ops"] += int(c.get("ops", 0))
    # the hardware's pipes of each unit always, any other pipe only when it did something
    extra = sorted(k for k, t in totals.items() if k not in PIPE_ORDER and (t["bytes"] or t["ops"]))
    s.pipes = [
        PipeRow(u, p, "emulator counters", None, totals[(u, p)]["bytes"], totals[(u, p)]["ops"])
        for (u, p) in PIPE_ORDER + extra
        if (u, p) in totals
    ]
    s.notes.append("the emulator counts work per pipe; it does not time it (ratios need sim or npu)")
    return s


MSPROF_METRIC = {(u, p): m for m, (u, p) in PIPE_OF_METRIC.items() if m != "aic_cube_ratio"}


def model_summary(profile: Dict[str, Any], counters: Any, kernel: str) -> Summary:
    """The emulator's modelled profile (cpu.last_profile) and counters in the profiler's table:
    task duration, block dim, the msprof PipeUtilization ratios (mean over blocks), bytes/ops."""
    s = counters_summary(counters, kernel)
    s.notes = []
    if profile.get("model") in (None, "off"):
        s.notes.append("the timeline model is off (ASCEND_EMU_TIMING=0): counters only")
        return s
    s.duration_us = profile["task_duration_us"]
    s.block_dim = profile.get("block_dim", s.block_dim)
    for r in s.pipes:
        metric = MSPROF_METRIC.get((r.unit, r.pipe))
        if metric is not None and profile.get(metric) is not None:
            r.metric, r.ratio = metric, profile[metric]
    dur_s = s.duration_us * 1e-6
    s.bandwidth_gbps = {
        "HBM read": profile["hbm_bytes"] / dur_s / 1e9,
        "L2 read": profile["l2_read_bytes"] / dur_s / 1e9,
        "L2 write": profile["l2_write_bytes"] / dur_s / 1e9,
    }
    s.notes.append(
        f"modelled device time ({profile['model']} model, {profile.get('soc')} cost table), not a "
        f"measurement; bound: {profile['bound_pipe']}; critical path {profile['critical_path_us']:.2f} us, "
        f"HBM floor {profile['hbm_floor_us']:.2f} us, launch {profile['launch_us']:.2f} us"
    )
    return s


def launch_tensors(op: str, kwargs: Dict[str, Any]):
    """(inputs, outputs): the arrays the aclnn call of fakit.run(op, **kwargs) passes, in the
    API's order (tensor lists flattened; absent optionals left out), for op_summary's columns."""
    from . import ops

    binding = ops.lookup(op)
    values = ops.prepare(binding, kwargs)
    outputs = ops.outputs_of(binding, values)
    inputs: List[Any] = []
    for p in binding.params:
        v = values.get(p.name)
        if v is not None and p.kind == "tensor":
            inputs.append(v)
        elif v is not None and p.kind == "tensor_list":
            inputs.extend(v)
    return inputs, [
        outputs[p.name] for p in binding.params if p.kind == "out_tensor" and outputs.get(p.name) is not None
    ]


def run_recorded(op: str, kwargs: Dict[str, Any], prof_dir=None, trace: bool = False):
    """fakit.run(op, backend="cpu", **kwargs), adding the launch to `prof_dir` (a
    fakit.prof_dir.ProfDir; with its per-core tracks when `trace`). Returns the outputs."""
    import tempfile

    from . import opnames, run
    from .backends import cpu

    raw = None
    with tempfile.TemporaryDirectory(prefix="fakit-trace-") as tmp:
        if prof_dir is not None and trace:
            cpu.set_trace_path(str(Path(tmp) / "trace.json"))
        try:
            out = run(op, backend="cpu", **kwargs)
        finally:
            if prof_dir is not None and trace:
                cpu.set_trace_path(None)
        if prof_dir is not None and trace and (Path(tmp) / "trace.json").exists():
            raw = json.loads((Path(tmp) / "trace.json").read_text())
    if prof_dir is not None:
        profile = cpu.last_profile()
        if profile.get("task_duration_us") is None:
            raise RuntimeError("the timeline model is off (ASCEND_EMU_TIMING=0): no modelled time to write")
        name = opnames.lookup(op)
        inputs, outputs = launch_tensors(op, kwargs)
        prof_dir.add(profile, name.op_type, name.op_type, inputs, outputs, raw)
    return out


def profile_cpu(
    op: str, case_id: str, trace: Optional[Path] = None, out: Optional[Path] = None, analyze: bool = False
) -> Summary:
    """Runs the case on the emulator; the timeline model gives the time and ratios. With `out`,
    writes an msprof-shaped PROF_* directory there (fakit.prof_dir); with `trace`, the
    timeline alone (msprof's trace format: a bare JSON array with flow arrows) to that file;
    with `analyze`, runs msprof-analyze's advisor on the PROF_* directory."""
    import shutil
    import tempfile

    from .backends import cpu
    from .prof_dir import ProfDir

    kwargs = _case_kwargs(op, case_id)
    with tempfile.TemporaryDirectory(prefix="fakit-prof-") as tmp:
        pdir = (
            ProfDir(Path(out) if out is not None else Path(tmp), cpu.soc_info())
            if (out is not None or trace is not None)
            else None
        )
        run_recorded(op, kwargs, pdir, trace=True)
        path = pdir.close() if pdir is not None else None
        if trace is not None:
            shutil.copyfile(path / "mindstudio_profiler_output" / "trace_view.json", trace)
    s = model_summary(cpu.last_profile(), cpu.last_counters(), op)
    if trace is not None:
        s.notes.append(f"timeline: {trace} (msprof's trace format; open in MindStudio Insight or ui.perfetto.dev)")
    if out is not None:
        s.source = str(path)
        s.notes.append(f"msprof-shaped profile (modelled): {path}")
        if analyze:
            s.notes.extend(advise(path, Path(out) / "advisor"))
    return s


def advise(prof: Path, out_dir: Path) -> List[str]:
    """msprof-analyze's advisor (computation analysis) on a PROF_* directory; notes saying what
    it wrote, or why it did not run."""
    import shutil

    tool = shutil.which("msprof-analyze")
    if tool is None:
        return ["msprof-analyze is not installed (pip install -e '.[prof]'): --analyze skipped"]
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = [tool, "advisor", "computation", "-d", str(prof), "-o", str(out_dir)]
    proc = subprocess.run(cmd, capture_output=True, text=True, input="")
    if proc.returncode != 0:
        return [f"{' '.join(cmd)} failed: {(proc.stderr or proc.stdout).strip()[-500:]}"]
    return [f"msprof-analyze advisor report: {out_dir}"]
