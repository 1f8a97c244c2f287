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
    ("issue", "cost"),
    ("scalar_local", "cost"),
    ("scalar_gm", "cost"),
    ("mmad_head", "cost"),
    ("mte1_head", "cost"),
    ("fixp_head", "cost"),
    ("fixp_nocast_elems", "rate"),
    ("vec_head", "cost"),
    ("vec_block_reduce", "cost"),
    ("vec_compare_select", "cost"),
    ("vec_brcb", "cost"),
    ("dma_head", "cost"),
    ("local_copy_bytes", "rate"),
    ("atomic_factor", "cost"),
    ("launch_us", "cost"),
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
            f"are read as they are"
        )
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
        f"PipeUtilization.csv) or a system-profiler folder PROF_*/ (op_summary_*.csv)"
    )


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
        return np.concatenate(
            [
                _observables(p["task_duration_us"], {m: p.get(m) for m in TARGETS}, d)
                for p, (d, _) in zip(profs, targets)
            ]
        ), profs

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
        lines.append(
            f"{c.get('case', '-'):<18} {c['measured_us']:>10.2f} {c['model_before_us']:>13.2f} "
            f"{c['model_after_us']:>12.2f}"
        )
    lines.append(f"costs written to {r.get('costs_file', '-')}: export ASCEND_EMU_COSTS=<that file> to use them")
    return "\n".join(lines)


# ------------------------------------------------------- published CATLASS matmul measurements

REPO = Path(__file__).resolve().parents[2]
PUBLISHED_SOURCE = (
    "CATLASS examples/34_single_core_splitk_matmul/34_single_splitk_matmul.md (hicann/catlass "
    "0dfcf9df): msprof kernel time on a 910B2, CANN 8.2.RC1, fp16, A, B and C RowMajor"
)
# (role, example, (m, n, k), measured µs): the table's BasicMatmul column (耗时[标杆], the
# 00_basic_matmul kernel) is the fit set; its single-core split-K column (耗时) is held out. The
# table's last row gives a speed-up of 1.7499 although 57144 / 16850 = 3.39 (1.7499 x 16850 =
# 29486): one of its three figures is misprinted.
PUBLISHED = [
    ("fit", "00_basic_matmul", (2048, 4096, 4000), 445.0),
    ("fit", "00_basic_matmul", (4096, 4096, 8000), 1231.0),
    ("fit", "00_basic_matmul", (4096, 4096, 40000), 7775.0),
    ("fit", "00_basic_matmul", (2048, 4096, 80000), 57144.0),
    ("held-out", "34_single_core_splitk_matmul", (2048, 4096, 4000), 261.0),
    ("held-out", "34_single_core_splitk_matmul", (4096, 4096, 8000), 917.0),
    ("held-out", "34_single_core_splitk_matmul", (4096, 4096, 40000), 4669.0),
    ("held-out", "34_single_core_splitk_matmul", (2048, 4096, 80000), 16850.0),
    ("held-out", "34_single_core_splitk_matmul/b_rowmajor", (2048, 4096, 4000), 261.0),
    ("held-out", "34_single_core_splitk_matmul/b_rowmajor", (4096, 4096, 8000), 917.0),
    ("held-out", "34_single_core_splitk_matmul/b_rowmajor", (4096, 4096, 40000), 4669.0),
    ("held-out", "34_single_core_splitk_matmul/b_rowmajor", (2048, 4096, 80000), 16850.0),
]
# The example as built at 0dfcf9df differs from the measured one in B's layout.
PUBLISHED_NOTES = {
    "34_single_core_splitk_matmul": "built as at 0dfcf9df: B ColumnMajor (measured: RowMajor)",
    "34_single_core_splitk_matmul/b_rowmajor": "the example's host code with B RowMajor, as measured",
}
# Host-side variants of an example: "<example>/<variant>" -> (the example's source line, its
# replacement). The kernel is the example's; only the host's choice of a layout changes.
VARIANTS = {
    "34_single_core_splitk_matmul/b_rowmajor": (
        "using LayoutB = layout::ColumnMajor;",
        "using LayoutB = layout::RowMajor;",
    ),
}
# Assumed costs a CATLASS matmul exercises, all applied by the replay (ASCEND_EMU_COSTS_ALT).
CATLASS_FIT_KEYS = ["dma_head", "nd2nz_row_cycles"]


def prefix_env(prefix: Path) -> Dict[str, str]:
    """The environment after `. <prefix>/set_env.sh` (the CPU prefix as ASCEND_HOME_PATH)."""
    import subprocess

    out = subprocess.run(["bash", "-c", f". {prefix}/set_env.sh && env -0"], capture_output=True, check=True).stdout
    return dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)


def build_catlass(catlass: Path, build_dir: Path, examples: List[str], prefix: Path, jobs: int = 2) -> Dict[str, Path]:
    """Builds the examples with CATLASS's own CMake against the CPU prefix, each example's source
    unchanged; benchmarks/peers/catlass_no_golden.h is force-included to skip the host golden."""
    import shutil
    import subprocess

    if not (prefix / "set_env.sh").exists():
        raise MeasurementError(f"{prefix}/set_env.sh missing: build the CPU prefix first (./build.sh)")
    env = prefix_env(prefix)
    if not (build_dir / "CMakeCache.txt").exists():
        cmd = [
            "cmake",
            "-S",
            str(catlass),
            "-B",
            str(build_dir),
            "-DCATLASS_ARCH=2201",
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DCMAKE_ASC_FLAGS=-include {REPO / 'benchmarks' / 'peers' / 'catlass_no_golden.h'}",
        ]
        if shutil.which("ninja"):
            cmd += ["-G", "Ninja"]
        res = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if res.returncode != 0:
            raise MeasurementError(f"configuring {catlass} failed:\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
    exes = {}
    for name in examples:
        res = subprocess.run(
            ["cmake", "--build", str(build_dir), "--target", name, "-j", str(jobs)],
            env=env,
            capture_output=True,
            text=True,
        )
        if res.returncode != 0:
            raise MeasurementError(f"building {name} failed:\n{res.stdout[-3000:]}{res.stderr[-2000:]}")
        found = [p for p in build_dir.rglob(name) if p.is_file() and os.access(p, os.X_OK)]
        if not found:
            raise MeasurementError(f"no executable {name} under {build_dir}")
        exes[name] = found[0]
    return exes


def build_variant(build_dir: Path, name: str, prefix: Path) -> Path:
    """Builds a host-side variant of an example (VARIANTS): its source with one line replaced,
    compiled and linked with the example's own commands (CATLASS's compile_commands.json and
    the generator's link command)."""
    import json
    import shlex
    import subprocess

    example, variant = name.split("/")
    old, new = VARIANTS[name]
    entries = [e for e in json.loads((build_dir / "compile_commands.json").read_text()) if f"/{example}/" in e["file"]]
    if len(entries) != 1:
        raise MeasurementError(f"{build_dir}/compile_commands.json: expected one source of {example}")
    entry = entries[0]
    source = Path(entry["file"]).read_text()
    if source.count(old) != 1:
        raise MeasurementError(f"{entry['file']}: the line {old!r} is not there once; the {variant} variant needs it")
    out = build_dir / "variants" / variant
    out.mkdir(parents=True, exist_ok=True)
    src, obj, exe = out / Path(entry["file"]).name, out / f"{example}.o", out / example
    src.write_text(source.replace(old, new))
    args = shlex.split(entry["command"])
    i = args.index("-o")
    args[i + 1] = str(obj)
    args[-1] = str(src)
    args = [a for j, a in enumerate(args) if a not in ("-MD", "-MT", "-MF") and args[j - 1] not in ("-MT", "-MF")]
    link = subprocess.run(["ninja", "-C", str(build_dir), "-t", "commands", example], capture_output=True, text=True)
    if link.returncode != 0 or not link.stdout.strip():
        raise MeasurementError(f"{build_dir}: the link command of {example} (a Ninja build) is not found")
    link_args = shlex.split(link.stdout.strip().splitlines()[-1].strip(": &"))
    k = link_args.index("-o")
    objs = [j for j, a in enumerate(link_args) if a.endswith(".o")]
    link_args[objs[0]] = str(obj)
    link_args[k + 1] = str(exe)
    env = prefix_env(prefix)
    for cmd, cwd in ((args, entry["directory"]), (link_args, str(build_dir))):
        res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
        if res.returncode != 0:
            raise MeasurementError(f"building {name} failed:\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
    return exe


def run_catlass(
    exe: Path,
    mnk: Tuple[int, int, int],
    prefix: Path,
    costs: Optional[Dict[str, float]] = None,
    alternatives: Optional[List[Dict[str, float]]] = None,
) -> Tuple[float, List[float]]:
    """Modelled kernel time (µs, the sum over the example's launches, as msprof's kernel total) of
    one timing-only run, and the same under each alternative set of replayed costs."""
    import subprocess

    env = prefix_env(prefix)
    env = {k: v for k, v in env.items() if not k.startswith("ASCEND_EMU_")}
    env["ASCEND_EMU_TIMING_ONLY"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i, c in enumerate([costs or {}] + list(alternatives or [])):
            path = Path(tmp) / f"{i}.costs"
            write_costs(c, path)
            files.append(str(path))
        env["ASCEND_EMU_COSTS"] = files[0]
        if len(files) > 1:
            env["ASCEND_EMU_COSTS_ALT"] = ":".join(files[1:])
        env["ASCEND_EMU_PROFILE"] = str(Path(tmp) / "profile.jsonl")
        res = subprocess.run([str(exe), *map(str, mnk), "0"], env=env, cwd=tmp, capture_output=True, text=True)
        if res.returncode != 0:
            raise MeasurementError(f"{exe.name} {mnk} failed ({res.returncode}):\n{res.stderr[-3000:]}")
        import json

        lines = [json.loads(x) for x in Path(env["ASCEND_EMU_PROFILE"]).read_text().splitlines() if x.strip()]
    if not lines:
        raise MeasurementError(f"{exe.name} {mnk}: no launch was profiled")
    total = sum(p["task_duration_us"] for p in lines)
    alts = [sum(p["alt_task_duration_us"][i] for p in lines) for i in range(len(alternatives or []))]
    return total, alts


def catlass_points(
    catlass: Path,
    build_dir: Path,
    prefix: Path,
    roles=("fit", "held-out"),
    costs: Optional[Dict[str, float]] = None,
    only: Optional[str] = None,
    progress=None,
) -> List[Dict[str, Any]]:
    """Runs every published point of the given roles; one dict per point."""
    points = [p for p in PUBLISHED if p[0] in roles and (only is None or only in f"{p[1]} {','.join(map(str, p[2]))}")]
    exes = build_catlass(catlass, build_dir, sorted({p[1].split("/")[0] for p in points}), prefix)
    exes.update({v: build_variant(build_dir, v, prefix) for v in sorted({p[1] for p in points if p[1] in VARIANTS})})
    out = []
    for role, example, mnk, us in points:
        modelled, _ = run_catlass(exes[example], mnk, prefix, costs)
        row = dict(
            role=role,
            example=example,
            mnk=mnk,
            measured_us=us,
            modelled_us=modelled,
            error_pct=100.0 * (modelled - us) / us,
            note=PUBLISHED_NOTES.get(example, ""),
        )
        out.append(row)
        if progress:
            progress(row)
    return out


def fit_catlass(
    catlass: Path,
    build_dir: Path,
    prefix: Path,
    keys: List[str] = CATLASS_FIT_KEYS,
    iterations: int = 4,
    skip: Tuple[str, ...] = (),
    progress=None,
) -> Dict[str, Any]:
    """Fits `keys` to the fit points: least squares in log(modelled / measured), parameters in
    log space; each iteration runs every point once and gets the derivatives from replays of the
    same launches under perturbed costs (ASCEND_EMU_COSTS_ALT), so a point costs one emulator run
    per iteration. `skip` names points (\"m,n,k\") left out of the fit."""
    from .backends import cpu

    defaults = {c["key"]: c["value"] for c in cpu.cost_table()}
    points = [p for p in PUBLISHED if p[0] == "fit" and "%d,%d,%d" % p[2] not in skip]
    exes = build_catlass(catlass, build_dir, sorted({p[1] for p in points}), prefix)
    x = np.array([np.log(max(defaults[k], 1.0)) for k in keys])  # log of the cost (>= 1 cycle)
    step = np.log(1.25)
    history = []
    for it in range(iterations + 1):
        costs = {k: float(np.exp(v)) for k, v in zip(keys, x)}
        alts = []
        for i, k in enumerate(keys):
            alt = dict(costs)
            alt[k] = float(np.exp(x[i] + step))
            alts.append(alt)
        r, J = [], []
        for _, example, mnk, us in points:
            base, perturbed = run_catlass(exes[example], mnk, prefix, costs, alts if it < iterations else None)
            r.append(np.log(base / us))
            if it < iterations:
                J.append([(np.log(a / us) - r[-1]) / step for a in perturbed])
        history.append(dict(costs=costs, log_errors=[float(v) for v in r]))
        if progress:
            progress(history[-1])
        if it == iterations:
            break
        r, J = np.array(r), np.array(J)
        lam = 1e-3 * np.trace(J.T @ J) / max(len(keys), 1) + 1e-12
        d = np.linalg.solve(J.T @ J + lam * np.eye(len(keys)), -J.T @ r)
        x = x + np.clip(d, -np.log(4), np.log(4))
        x = np.maximum(x, 0.0)  # no cost below one cycle
    best = min(history, key=lambda h: float(np.sum(np.square(h["log_errors"]))))
    return dict(
        costs=best["costs"],
        defaults={k: defaults[k] for k in keys},
        history=history,
        points=[dict(example=p[1], mnk=p[2], measured_us=p[3]) for p in points],
    )


def calibrate_catlass(catlass: Path, build_dir: Path, prefix: Path, costs_out: Path) -> Dict[str, Any]:
    """Fits the CATLASS fit points, writes costs_out, then reports every point under the fit."""
    result = fit_catlass(catlass, build_dir, prefix)
    write_costs(result["costs"], Path(costs_out))
    result["costs_file"] = str(costs_out)
    result["report"] = catlass_points(catlass, build_dir, prefix, costs=result["costs"])
    return result


def format_point(row: Dict[str, Any]) -> str:
    return (
        f"[CAL] {row['role']} {row['example']} {','.join(map(str, row['mnk']))} :: measured_us "
        f"{row['measured_us']:.0f}; modelled_us {row['modelled_us']:.1f}; error_pct {row['error_pct']:+.1f}"
    )


def summary_line(rows: List[Dict[str, Any]]) -> str:
    def worst(role):
        errs = [abs(r["error_pct"]) for r in rows if r["role"] == role]
        return f"{max(errs):.1f}" if errs else "-"

    return f"calibration: fit max |err| {worst('fit')} %, held-out max |err| {worst('held-out')} %"


def format_catlass(r: Dict[str, Any]) -> str:
    lines = [f"{'cost':<20} {'default':>12} {'fitted':>12}"]
    for k, v in r["costs"].items():
        lines.append(f"{k:<20} {r['defaults'][k]:>12.4g} {v:>12.4g}")
    lines += [format_point(x) for x in r["report"]]
    lines.append(summary_line(r["report"]))
    lines.append(f"costs written to {r['costs_file']}: export ASCEND_EMU_COSTS=<that file> to use them")
    return "\n".join(lines)
