"""Modelled device time of the five operators at real-world shapes, from the emulator's
timeline model on the Ascend910B2 table. The numbers are a model, not a measurement: see
docs/performance.md for the model, its assumptions and its limits.

    python benchmarks/device_model.py [--quick] [--ops NAMES] [--csv PATH] [--plot PNG]
    python benchmarks/device_model.py --sweep [--only CLASSES|NAMES]

One line per shape:
    [PERF] <op>/<shape> :: modelled_us <t>; tflops <x>; cube_pct <p>; bound <pipe>; anchor_tflops <a>
(decode: tbps and hbm_pct instead of tflops / cube_pct), then a summary table.

--sweep runs the goal sweep instead (benchmarks/sweep.py: every class of the speed goals, ~40
shapes the table above does not list): per shape the modelled µs, % of peak (causal on useful
FLOPs, decode of HBM bandwidth), the shape's goal and the bound pipe, then a table per class
and the last line `sweep: P/T shapes at goal`. `--only` also takes class names there.

Every launch runs in the emulator's timing-only mode (env ASCEND_EMU_TIMING_ONLY=1): cube,
vector and Fixpipe arithmetic are skipped while control flow, addresses and every cost stay, so
S = 32K fits on a CPU. The outputs of these runs are not meaningful and are not compared.
FLOPs follow benchmarks/flops.py (useful pairs, causal at element level); % of cube peak is of
353.9 TFLOPS fp16 (910B2); decode bandwidth counts K and V once plus Q and O, over 1.6 TB/s.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import flops  # noqa: E402
import sweep  # noqa: E402
from perf_report import description, plot_bars  # noqa: E402

os.environ["ASCEND_EMU_TIMING_ONLY"] = "1"  # read by the emulator at every launch

import fakit  # noqa: E402
from fakit import build, golden, opnames  # noqa: E402
from fakit.backends import cpu  # noqa: E402
from fakit.cases import flash_attention_unpadding_score_grad_v5 as fag  # noqa: E402
from fakit.cases import flash_attention_var_len_score as fav  # noqa: E402
from fakit.cases import incre_flash_attention_v4 as ifa  # noqa: E402
from fakit.cases import prompt_flash_attention as pfa  # noqa: E402
from fakit.cases import sparse_flash_attention_grad as sfag  # noqa: E402

CUBE_PEAK_TFLOPS = 353.9  # 910B2 fp16 [MIG] (docs/sources.md)
HBM_TBPS = 1.6
# torch_npu FA forward B1 N1 D128 fp16 on 910B2 ([S11], docs/sources.md)
TORCH_NPU_FA = {8192: 97.3, 16384: 122.9, 32768: 150.8}


@contextlib.contextmanager
def random_forward_stats():
    """The backward cases build their softmax statistics with the NumPy forward, which at these
    sizes would take longer than the model; timing-only runs need only the right shapes."""

    def fa_fwd(query, **kw):
        t, n = query.shape[0], query.shape[1]
        return dict(
            softmax_max=np.zeros((t, n, 8), np.float32),
            softmax_sum=np.ones((t, n, 8), np.float32),
            attention_out=np.zeros(query.shape, np.float32),
        )

    def sfa_fwd(query, **kw):
        b, s1, n1 = query.shape[0], query.shape[1], query.shape[2]
        return dict(
            softmax_max=np.zeros((b, 1, s1, n1), np.float32),
            softmax_sum=np.ones((b, 1, s1, n1), np.float32),
            attention_out=np.zeros(query.shape, np.float32),
        )

    saved = golden.flash_attention_tnd_forward, golden.sparse_flash_attention
    golden.flash_attention_tnd_forward, golden.sparse_flash_attention = fa_fwd, sfa_fwd
    try:
        yield
    finally:
        golden.flash_attention_tnd_forward, golden.sparse_flash_attention = saved


def shapes(quick: bool):
    """(op, name, case factory, kind, work, anchor): work is FLOPs (compute) or bytes (decode)."""
    out = []

    def add(op, name, factory, kind, work, anchor=None, in_quick=False):
        if in_quick or not quick:
            out.append(dict(op=op, name=name, factory=factory, kind=kind, work=work, anchor=anchor))

    for s in (8192, 16384, 32768):
        add(
            pfa.OP,
            f"B1_N1_S{s // 1024}K_D128_fp16",
            lambda s=s: pfa.make("fp16", "BNSD", B=1, N=1, Sq=s, D=128),
            "compute",
            flops.forward_flops(flops.full_pairs(s, s), 1, 128),
            TORCH_NPU_FA[s],
            in_quick=s == 8192,
        )
    add(
        pfa.OP,
        "B1_N32_S4K_D128_fp16",
        lambda: pfa.make("fp16", "BNSD", B=1, N=32, Sq=4096, D=128),
        "compute",
        flops.forward_flops(flops.full_pairs(4096, 4096), 32, 128),
    )
    add(
        pfa.OP,
        "B1_N32_S4K_D128_causal_fp16",
        lambda: pfa.make("fp16", "BNSD", B=1, N=32, Sq=4096, D=128, mask="causal", mask_shape="SS"),
        "compute",
        flops.forward_flops(flops.causal_pairs(4096, 4096), 32, 128),
        in_quick=True,
    )
    add(
        pfa.OP,
        "B1_N32_S4K_D64_fp16",
        lambda: pfa.make("fp16", "BNSD", B=1, N=32, Sq=4096, D=64),
        "compute",
        flops.forward_flops(flops.full_pairs(4096, 4096), 32, 64),
    )

    ql = [4096] * 4
    add(
        fav.OP,
        "TND_4x4K_N8_D128_causal_fp16",
        lambda: fav.make("fp16", qlens=ql, N=8, D=128, sparse_mode=3),
        "compute",
        flops.forward_flops(flops.varlen_pairs(ql, ql, "causal_rd"), 8, 128),
    )
    qv = [512, 1024, 2048, 4096]
    add(
        fav.OP,
        "TND_varlen_7.5K_N8_D128_fp16",
        lambda: fav.make("fp16", qlens=qv, N=8, D=128),
        "compute",
        flops.forward_flops(flops.varlen_pairs(qv, qv), 8, 128),
        in_quick=True,
    )

    for b, s in ((16, 4096), (16, 32768), (64, 4096)):
        for int8 in (False, True):
            kv_bytes = b * 4 * s * 128 * 2 * (1 if int8 else 2)
            qo_bytes = 2 * b * 32 * 128 * 2
            tag = "int8kv" if int8 else "fp16"
            add(
                ifa.OP,
                f"B{b}_N32/4_S{s // 1024}K_D128_{tag}",
                lambda b=b, s=s, int8=int8: ifa.make(
                    "fp16", "BNSD", B=b, N=32, Nkv=4, S=s, D=128, kv_int8=int8, antiquant="channel"
                ),
                "memory",
                kv_bytes + qo_bytes,
                in_quick=(b, s) == (16, 4096),
            )

    for s in (4096, 8192):
        add(
            fag.OP,
            f"TND_1x{s // 1024}K_N8_D128_causal_fp16",
            lambda s=s: fag.make("fp16", qlens=[s], N=8, D=128, sparse_mode=3),
            "compute",
            flops.backward_flops(flops.causal_pairs(s, s), 8, 128),
            in_quick=s == 4096,
        )

    for h in (64, 128):
        tokens = 64 if quick else 256
        add(
            sfag.OP,
            f"BSND_S1_{tokens}_N{h}_K2048_rope_fp16",
            lambda h=h, tokens=tokens: sfag.make(
                "fp16", "BSND", qlens=[tokens], kvlens=[4096], N1=h, block=1, sparse_mode=0, rope=True, density=0.5
            ),
            "compute",
            flops.backward_flops(tokens * 2048, h, 576, 512),
            in_quick=h == 64,
        )
    return out


def measure(m):
    with random_forward_stats():
        kwargs = m["factory"]().inputs()
    t0 = time.time()
    fakit.run(m["op"], backend="cpu", **kwargs)
    wall = time.time() - t0
    p = cpu.last_profile()
    us = p["task_duration_us"]
    row = dict(
        op=m["op"],
        shape=m["name"],
        modelled_us=us,
        bound=p["bound_pipe"],
        block_dim=p["block_dim"],
        wall_s=wall,
        anchor_tflops=m["anchor"],
    )
    if m["kind"] == "compute":
        tf = m["work"] / us / 1e6
        row.update(tflops=tf, cube_pct=100 * tf / CUBE_PEAK_TFLOPS)
    else:
        tb = m["work"] / us / 1e6
        row.update(tbps=tb, hbm_pct=100 * tb / HBM_TBPS)
    for k in ("aic_mac_ratio", "aic_mte2_ratio", "aic_fixpipe_ratio", "aiv_vec_ratio", "aiv_mte2_ratio"):
        row[k] = p.get(k)
    return row


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def selected(m, ops) -> bool:
    """Whether shape m is asked for: each item of `ops` is an operator (any of its names) or text
    of '<op>/<shape>'."""
    if not ops:
        return True
    for item in (i.strip() for i in ops.split(",")):
        if item == m.get("cls"):
            return True
        try:
            if opnames.resolve(item) == m["op"]:
                return True
        except opnames.UnknownOperator:
            if item in f"{m['op']}/{m['name']}":
                return True
    return False


def run_sweep(todo, csv_path) -> int:
    t0 = time.time()
    rows = []
    for i, m in enumerate(todo, 1):
        print(f"[{i}/{len(todo)}] {m['cls']} {m['op']}/{m['name']}", file=sys.stderr, flush=True)
        r = measure(m)
        r.update(cls=m["cls"], goal_pct=m["goal"])
        r["pct"] = r.get("cube_pct", r.get("hbm_pct"))
        r["of_goal"] = r["pct"] / m["goal"]
        rows.append(r)
        unit = "HBM" if "hbm_pct" in r else "cube"
        verdict = "AT GOAL" if r["of_goal"] >= 1 else f"{r['of_goal']:.2f} of goal"
        print(
            f"[SWEEP] {m['cls']:<11} {r['op']}/{r['shape']} :: modelled_us {r['modelled_us']:.1f}; "
            f"pct {r['pct']:.1f} of {unit}; goal {m['goal']:.1f}; "
            f"{verdict}; bound {r['bound']}",
            flush=True,
        )
    print()
    print(f"{'class':<11} {'shape':<44} {'modelled µs':>11} {'%':>6} {'goal':>5} {'of goal':>7} {'bound':<9}")
    for r in rows:
        print(
            f"{r['cls']:<11} {r['shape']:<44} {r['modelled_us']:>11.1f} {r['pct']:>6.1f} {r['goal_pct']:>5.1f} "
            f"{r['of_goal']:>7.2f} {r['bound']:<9}"
        )
    print()
    print(f"{'class':<11} {'goal':<60} {'at goal':>7} {'worst':>6} {'median':>6}")
    for cls, (desc, goal, unit) in sweep.CLASSES.items():
        got = sorted(r["of_goal"] for r in rows if r["cls"] == cls)
        if got:
            text = f"{desc}: {goal:.0f} % of {unit}" if goal else desc
            at = sum(g >= 1 for g in got)
            print(f"{cls:<11} {text:<60} {at:>3}/{len(got):<3} {got[0]:>6.2f} {got[len(got) // 2]:>6.2f}")
    print(f"(modelled device time, Ascend910B2 cost table; sweep wall time {time.time() - t0:.0f} s)")
    if csv_path:
        keys = sorted({k for r in rows for k in r})
        with csv_path.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    print(f"sweep: {sum(r['of_goal'] >= 1 for r in rows)}/{len(rows)} shapes at goal")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=description(__doc__), epilog="Modelled device time, not a measurement (docs/performance.md)."
    )
    ap.add_argument("--quick", action="store_true", help="one or two shapes per operator (a few minutes)")
    ap.add_argument(
        "--ops",
        "--only",
        dest="ops",
        metavar="NAMES",
        help="comma-separated operators (any of their names) or text of '<op>/<shape>' to run "
        "(default: every shape); --only is the same option",
    )
    ap.add_argument("--csv", type=Path, help="write the rows to this CSV file")
    ap.add_argument(
        "--plot", type=Path, help="write a PNG bar chart of the modelled time per shape (pip install -e '.[plot]')"
    )
    ap.add_argument(
        "--sweep",
        action="store_true",
        help="run the goal sweep (benchmarks/sweep.py; --only also takes its classes: "
        + ", ".join(sweep.CLASSES)
        + ")",
    )
    args = ap.parse_args(argv)
    todo = [m for m in (sweep.shapes() if args.sweep else shapes(args.quick)) if selected(m, args.ops)]
    if not todo:
        print(
            f"device_model: no shape matches --ops {args.ops!r}; operators: {', '.join(opnames.NAMES)}", file=sys.stderr
        )
        return 2
    build.ensure_built("cpu", sanitize=cpu._sanitize(), quiet=False)  # a step of its own, not in row 1
    if args.sweep:
        return run_sweep(todo, args.csv)
    rows = []
    for i, m in enumerate(todo, 1):
        print(f"[{i}/{len(todo)}] {m['op']}/{m['name']}", file=sys.stderr, flush=True)
        r = measure(m)
        rows.append(r)
        metric = (
            f"tflops {r['tflops']:.1f}; cube_pct {r['cube_pct']:.1f}"
            if "tflops" in r
            else f"tbps {r['tbps']:.3f}; hbm_pct {r['hbm_pct']:.1f}"
        )
        anchor = f"; anchor_tflops {r['anchor_tflops']}" if r["anchor_tflops"] else ""
        print(
            f"[PERF] {r['op']}/{r['shape']} :: modelled_us {r['modelled_us']:.1f}; {metric}; bound {r['bound']}"
            f"{anchor}; emulator_wall_s {r['wall_s']:.1f}",
            flush=True,
        )
    print()
    print(
        f"{'operator':<42} {'shape':<34} {'modelled µs':>11} {'TFLOPS':>7} {'%cube':>6} {'TB/s':>6} {'%HBM':>5} "
        f"{'bound':<9} {'anchor TF':>9}"
    )
    for r in rows:
        print(
            f"{r['op']:<42} {r['shape']:<34} {r['modelled_us']:>11.1f} {fmt(r.get('tflops'), '.1f'):>7} "
            f"{fmt(r.get('cube_pct'), '.1f'):>6} {fmt(r.get('tbps'), '.3f'):>6} {fmt(r.get('hbm_pct'), '.1f'):>5} "
            f"{r['bound']:<9} {fmt(r['anchor_tflops'], '.1f'):>9}"
        )
    print("(modelled device time, Ascend910B2 cost table; context: torch_npu FA on 910B2, [S11] in docs/sources.md)")
    if args.plot:
        plot_bars(
            args.plot,
            [f"{r['op']}/{r['shape']}" for r in rows],
            {"modelled µs": [r["modelled_us"] for r in rows]},
            ylabel="modelled device time [µs] (log)",
            log_scale=True,
            title="Modelled device time (Ascend910B2 timeline model; not a measurement)",
        )
        print(f"plot: {args.plot}")
    if args.csv:
        keys = sorted({k for r in rows for k in r})
        with args.csv.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
