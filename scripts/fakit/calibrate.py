"""`fakit prof calibrate`: fit the timeline model's assumed costs to msprof results.

Input: one `msprof op` (or `msprof op simulator`) output directory per case, named by the case
id (DIR/<case id>/.../OPPROF_*/OpBasicInfo.csv + PipeUtilization.csv). For every case the
model runs the same inputs on the emulator; the fit matches the per-pipe busy times (msprof's
PipeUtilization ratio x Task Duration, per unit and pipe) by linearised least squares in the
assumed costs (Gauss-Newton with finite-difference derivatives; per-instruction costs enter
linearly, rates through their inverse), pulled gently towards the current values so costs the
cases do not exercise stay put; then the fixed launch cost absorbs the mean remaining duration
error. Only entries marked "assumption" in the cost table move; documented rates never do.
Output: a costs file for env ASCEND_EMU_COSTS and a before/after report.
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
    ("local_copy_bytes", "rate"), ("atomic_factor", "cost"),
]
TARGETS = [m for m in prof.PIPE_OF_METRIC if m != "aic_cube_ratio"]
RIDGE = 1e-3  # pull towards the current value, relative to the data's scale


def _busy(duration_us: float, ratios: Dict[str, Optional[float]]) -> np.ndarray:
    return np.array([(ratios.get(m) or 0.0) * duration_us for m in TARGETS])


def measured(opprof_dir: Path) -> Tuple[float, Dict[str, float]]:
    """(Task Duration µs, {msprof metric: mean ratio}) of one msprof op output."""
    s = prof.summarise_opprof(prof.latest_opprof(opprof_dir), "npu", "")
    if s.duration_us is None:
        raise RuntimeError(f"{opprof_dir}: OpBasicInfo.csv has no Task Duration(us)")
    ratios = {}
    for r in s.pipes:
        for metric, key in prof.PIPE_OF_METRIC.items():
            if key == (r.unit, r.pipe) and metric in TARGETS:
                ratios[metric] = r.ratio
    return s.duration_us, ratios


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
                f.writelines(f"{k} {v!r}\n" for k, v in costs.items())
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


def fit(model: Model, targets: List[Tuple[float, Dict[str, float]]], iterations: int = 3) -> Dict[str, Any]:
    """Least-squares fit of FIT_KEYS to the measured (duration, ratios) of each case."""
    costs = {k: model.defaults[k] for k, _ in FIT_KEYS}
    costs["launch_us"] = model.defaults["launch_us"]
    kinds = dict(FIT_KEYS)
    y = np.concatenate([_busy(d, r) for d, r in targets])
    scale = max(float(np.abs(y).max()), 1e-9)

    def predict(c):
        profs = model.run(c)
        return np.concatenate([_busy(p["task_duration_us"], {m: p.get(m) for m in TARGETS}) for p in profs]), profs

    before_profiles = model.run(costs)
    for _ in range(iterations):
        base, _ = predict(costs)
        x0 = np.array([_to_x(kinds[k], costs[k]) for k, _ in FIT_KEYS])
        cols = []
        for i, (k, kind) in enumerate(FIT_KEYS):
            step = max(abs(x0[i]) * 0.5, 1e-3)
            trial = dict(costs)
            trial[k] = _from_x(kind, x0[i] + step)
            cols.append((predict(trial)[0] - base) / step)
        J = np.stack(cols, axis=1)
        prior = np.maximum(np.abs(x0), 1e-6)
        # ridge towards the current values: || J dx - r ||^2 + (RIDGE * scale)^2 || dx / prior ||^2
        A = np.vstack([J, np.diag(RIDGE * scale / prior)])
        b = np.concatenate([y - base, np.zeros(len(FIT_KEYS))])
        dx = np.linalg.lstsq(A, b, rcond=None)[0]
        x = np.maximum(x0 + dx, prior * 1e-3)  # costs and inverse rates stay positive
        for i, (k, kind) in enumerate(FIT_KEYS):
            costs[k] = float(_from_x(kind, x[i]))
    # the fixed task cost takes the mean remaining duration error
    profs = model.run(costs)
    resid = [d - (p["task_duration_us"] - costs["launch_us"]) for (d, _), p in zip(targets, profs)]
    costs["launch_us"] = max(0.0, float(np.mean(resid)))
    after_profiles = model.run(costs)
    cases = []
    for (d, _), b0, a1 in zip(targets, before_profiles, after_profiles):
        cases.append(dict(measured_us=d, model_before_us=b0["task_duration_us"], model_after_us=a1["task_duration_us"]))
    return dict(costs=costs, defaults={k: model.defaults[k] for k in costs}, cases=cases)


def write_costs(costs: Dict[str, float], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k} {v!r}\n" for k, v in costs.items()))


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
