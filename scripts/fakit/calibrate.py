"""`fakit prof calibrate`: fit the timeline model's assumed costs to device measurements.

Two kinds of measurement:
* Published kernel times of public Ascend C code that runs on the emulator unchanged
  (`--catlass DIR`): CATLASS's matmul examples, msprof kernel times on a 910B2 (PUBLISHED). The
  examples are built with CATLASS's own CMake against the CPU prefix and run in timing-only
  mode; the fit points move the assumed costs, the held-out points are only reported.
* msprof output of this project's cases (`--op OP --msprof DIR`, DIR/<case id>/...): `msprof op`
  OPPROF_* folders (OpBasicInfo.csv + PipeUtilization.csv) or system-profiler PROF_* folders
  (op_summary_*.csv; PipeUtilization columns when collected with --aic-metrics=PipeUtilization).
  The fit matches the Task Duration (relative) and the PipeUtilization ratios per unit and pipe.

The fit is least squares in the assumed costs (Levenberg-Marquardt with finite differences;
rates through their inverse), pulled gently towards the current values so costs the
measurements do not exercise stay put. Only entries marked "assumption" in the cost table move;
documented rates never do. Output: a costs file for env ASCEND_EMU_COSTS and a report.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import prof

# assumed entries the fit may move: (key, "cost" = cycles per use | "rate" = fitted as 1/value)
FIT_KEYS: List[Tuple[str, str]] = [
    ("issue", "cost"), ("scalar_local", "cost"), ("scalar_gm", "cost"), ("mmad_head", "cost"),
    ("mte1_head", "cost"), ("fixp_head", "cost"), ("fixp_nocast_elems", "rate"), ("vec_head", "cost"),
    ("vec_block_reduce", "cost"), ("vec_compare_select", "cost"), ("vec_brcb", "cost"), ("dma_head", "cost"),
    ("local_copy_bytes", "rate"), ("atomic_factor", "cost"), ("launch_us", "cost"),
]
TARGETS = [m for m in prof.PIPE_OF_METRIC if m != "aic_cube_ratio"]
RIDGE = 1e-3  # pull towards the current value, relative to the data's scale


def _observables(duration_us: float, ratios: Dict[str, Optional[float]], measured_us: float) -> np.ndarray:
    """What the fit matches per case: the msprof ratios and the duration relative to the measured one."""
    return np.array([(ratios.get(m) or 0.0) for m in TARGETS] + [duration_us / measured_us])


class MeasurementError(RuntimeError):
    """A measurement folder the calibration cannot read; the message says what it expected."""


def _ratios(row: Dict[str, str]) -> Dict[str, float]:
    out = {}
    for metric in TARGETS:
        try:
            out[metric] = float(row.get(metric, ""))
        except ValueError:
            continue
    return out


def _op_summary(prof_dir: Path) -> Tuple[float, Dict[str, float]]:
    """A system-profiler PROF_* folder: op_summary_*.csv, one row per task. The measured time is
    the sum over kernels of each kernel's mean Task Duration; ratios are means over its rows."""
    files = sorted(prof_dir.rglob("op_summary_*.csv"))
    if not files:
        raise MeasurementError(
            f"{prof_dir}: a PROF_* folder without op_summary_*.csv. Export it first "
            f"(msprof --export=on --output={prof_dir}) or profile with msprof op, whose OPPROF_* folders "
            f"are read as they are")
    rows = prof._rows(files[-1])
    durations: Dict[str, List[float]] = {}
    ratio_rows: List[Dict[str, str]] = []
    for r in rows:
        name = r.get("Op Name") or r.get("OP Name") or "?"
        try:
            durations.setdefault(name, []).append(float(r.get("Task Duration(us)", "")))
        except ValueError:
            continue
        ratio_rows.append(r)
    if not durations:
        raise MeasurementError(f"{files[-1]}: no row with a Task Duration(us)")
    total = sum(sum(v) / len(v) for v in durations.values())
    ratios: Dict[str, float] = {}
    for metric in TARGETS:
        vals = [x for x in (_ratios(r).get(metric) for r in ratio_rows) if x is not None]
        if vals:
            ratios[metric] = sum(vals) / len(vals)
    return total, ratios


def measured(case_dir: Path) -> Tuple[float, Dict[str, float]]:
    """(Task Duration µs, {msprof metric: mean ratio}) of one case's msprof output: an `msprof op`
    OPPROF_* folder or a system-profiler PROF_* folder, at case_dir or below it."""
    case_dir = Path(case_dir)
    opprof = [p for p in case_dir.rglob("OPPROF_*") if p.is_dir()]
    if case_dir.name.startswith("OPPROF_"):
        opprof.append(case_dir)
    if opprof:
        s = prof.summarise_opprof(max(opprof, key=lambda p: p.stat().st_mtime), "npu", "")
        if s.duration_us is None:
            raise MeasurementError(f"{s.source}: OpBasicInfo.csv has no Task Duration(us)")
        ratios = {}
        for r in s.pipes:
            for metric, key in prof.PIPE_OF_METRIC.items():
                if key == (r.unit, r.pipe) and metric in TARGETS:
                    ratios[metric] = r.ratio
        return s.duration_us, ratios
    profs = [p for p in case_dir.rglob("PROF_*") if p.is_dir()]
    if case_dir.name.startswith("PROF_"):
        profs.append(case_dir)
    if profs:
        return _op_summary(max(profs, key=lambda p: p.stat().st_mtime))
    raise MeasurementError(
        f"{case_dir}: no msprof output. Expected an `msprof op` folder OPPROF_*/ (OpBasicInfo.csv, "
        f"PipeUtilization.csv) or a system-profiler folder PROF_*/ (op_summary_*.csv)")


class Model:
    """Runs cases on the emulator under a given set of cost overrides."""

    def __init__(self, op: str, kwargs_list: List[Dict[str, Any]]):
        from .backends import cpu
        self.cpu, self.op, self.kwargs_list = cpu, op, kwargs_list
        self.defaults = {c["key"]: c["value"] for c in cpu.cost_table()}

    def run(self, costs: Dict[str, float]) -> List[Dict[str, Any]]:
        from . import run
        fd, path = tempfile.mkstemp(suffix=".costs")
        saved = os.environ.get("ASCEND_EMU_COSTS")
        try:
            with os.fdopen(fd, "w") as f:
                f.writelines(f"{k} {float(v)!r}\n" for k, v in costs.items())
            os.environ["ASCEND_EMU_COSTS"] = path
            out = []
            for kw in self.kwargs_list:
                run(self.op, backend="cpu", **kw)
                out.append(self.cpu.last_profile())
            return out
        finally:
            if saved is None:
                os.environ.pop("ASCEND_EMU_COSTS", None)
            else:
                os.environ["ASCEND_EMU_COSTS"] = saved
            os.unlink(path)


def _to_x(key_kind, value):
    return 1.0 / value if key_kind == "rate" else value


def _from_x(key_kind, x):
    return 1.0 / x if key_kind == "rate" else x


def fit(model: Model, targets: List[Tuple[float, Dict[str, float]]], iterations: int = 6) -> Dict[str, Any]:
    """Least-squares fit of FIT_KEYS to the measured (duration, ratios) of each case."""
    costs = {k: model.defaults[k] for k, _ in FIT_KEYS}
    kinds = dict(FIT_KEYS)
    y = np.concatenate([_observables(d, r, d) for d, r in targets])
    scale = 1.0  # the observables are ratios and relative durations

    def predict(c):
        profs = model.run(c)
        return np.concatenate([_observables(p["task_duration_us"], {m: p.get(m) for m in TARGETS}, d)
                               for p, (d, _) in zip(profs, targets)]), profs

    before_profiles = model.run(costs)
    base, _ = predict(costs)
    err = float(np.sum((y - base) ** 2))
    lam = 1e-2
    for _ in range(iterations):
        # Levenberg-Marquardt in relative units: parameter i moves by x0_i * d_i
        x0 = np.array([_to_x(kinds[k], costs[k]) for k, _ in FIT_KEYS])
        cols = []
        for i, (k, kind) in enumerate(FIT_KEYS):
            trial = dict(costs)
            trial[k] = _from_x(kind, x0[i] * 1.25)
            cols.append((predict(trial)[0] - base) / 0.25)
        J = np.stack(cols, axis=1)
        g, H = J.T @ (y - base), J.T @ J
        for _ in range(6):
            d = np.linalg.solve(H + lam * scale * np.diag(np.diag(H) + 1e-9) + lam * scale * 1e-6 * np.eye(len(x0)), g)
            d = np.clip(d, -0.75, 3.0)  # at most a factor 4 per step, never to zero
            trial = {k: float(_from_x(kind, x0[i] * (1 + d[i]))) for i, (k, kind) in enumerate(FIT_KEYS)}
            pred, _ = predict(trial)
            e = float(np.sum((y - pred) ** 2))
            if e < err:
                costs, base, err, lam = trial, pred, e, lam / 3
                break
            lam *= 10
        else:
            break  # no step improves the fit
    after_profiles = model.run(costs)
    cases = []
    for (d, _), b0, a1 in zip(targets, before_profiles, after_profiles):
        cases.append(dict(measured_us=d, model_before_us=b0["task_duration_us"], model_after_us=a1["task_duration_us"]))
    return dict(costs=costs, defaults={k: model.defaults[k] for k in costs}, cases=cases)


def write_costs(costs: Dict[str, float], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k} {float(v)!r}\n" for k, v in costs.items()))


def calibrate_dir(op: str, msprof_dir: Path, costs_out: Path) -> Dict[str, Any]:
    """Fits the assumed costs to every <case id>/ subdirectory of msprof_dir; writes costs_out."""
    from . import cases
    ids = sorted(p.name for p in Path(msprof_dir).iterdir() if p.is_dir())
    if not ids:
        raise RuntimeError(f"{msprof_dir}: no <case id> directories with msprof output")
    targets = [measured(Path(msprof_dir) / i) for i in ids]
    model = Model(op, [cases.get(op, i).inputs() for i in ids])
    result = fit(model, targets)
    for i, c in zip(ids, result["cases"]):
        c["case"] = i
    write_costs(result["costs"], Path(costs_out))
    result["costs_file"] = str(costs_out)
    return result


def format_result(r: Dict[str, Any]) -> str:
    lines = [f"{'cost':<20} {'default':>12} {'fitted':>12}"]
    for k, v in r["costs"].items():
        lines.append(f"{k:<20} {r['defaults'][k]:>12.4g} {v:>12.4g}")
    lines.append(f"{'case':<18} {'msprof us':>10} {'model before':>13} {'model after':>12}")
    for c in r["cases"]:
        lines.append(f"{c.get('case', '-'):<18} {c['measured_us']:>10.2f} {c['model_before_us']:>13.2f} "
                     f"{c['model_after_us']:>12.2f}")
    lines.append(f"costs written to {r.get('costs_file', '-')}: export ASCEND_EMU_COSTS=<that file> to use them")
    return "\n".join(lines)
