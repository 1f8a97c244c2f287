"""Emulator throughput: Mmad GFLOP/s and vector elements/s on one emulated core thread, launch
overhead, and the cube_matmul proof kernel's wall time relative to numpy.matmul on the same
shape in the same run.

Prints FlashInfer-style [PERF] lines and a summary table; --csv / --json also write the rows.

    .venv/bin/python benchmarks/emulator_bench.py [--m 1024 --n 1024 --k 1024] [--csv out.csv] [--json out.json]
"""

import argparse
import math
import pathlib
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "emulator" / "kernel"))
from conftest import _build  # noqa: E402  (the tests' cached CMake build)

sys.path.insert(0, str(REPO / "benchmarks"))
from perf_report import PerfReport, description  # noqa: E402

STEPS = 4


def perf(rep, name, metric, value, unit, extra=""):
    # one column per (metric, unit): "throughput" in GFLOP/s and in Melem/s are different columns
    metric = f"{metric}_{unit.split('/')[0].lower()}"
    metrics = {metric: float(f"{value:.6g}")}
    if extra:
        metrics["note"] = extra
    rep.add(name, metrics, units={metric: unit})


def run_driver(build, kernel, cores, mode, in0, in1, tiling, out_bytes, ws_bytes=0):
    """Runs one proof kernel through the test driver; returns (seconds, output bytes)."""
    with tempfile.TemporaryDirectory() as d:
        d = pathlib.Path(d)
        in0.tofile(d / "in0.bin")
        in1.tofile(d / "in1.bin")
        (d / "tiling.bin").write_bytes(tiling)
        (d / "launch.txt").write_text(f"{kernel} {cores} {mode} 0 {out_bytes} {ws_bytes}\n")
        t0 = time.perf_counter()
        subprocess.run([str(build / "kernel_driver"), str(d)], check=True)
        return time.perf_counter() - t0, (d / "out.bin").read_bytes()


def main():
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--cores", type=int, default=24)
    ap.add_argument("--csv", help="write the rows as CSV")
    ap.add_argument("--json", help="write the rows as JSON")
    args = ap.parse_args()
    rep = PerfReport("emulator_bench", total=STEPS, weights=[50, 1, 1, 2])  # the first build dominates
    rep.start("build the proof kernels and the microbenchmark")
    build = _build()
    rep.start("microbenchmark")
    micro = subprocess.run([str(build / "emu_microbench")], capture_output=True, text=True, check=True).stdout
    vals = dict(line.split() for line in micro.splitlines())
    perf(rep, "emu_mmad_128x256x128_fp16", "throughput", float(vals["mmad_gflops"]), "GFLOP/s", "one AIC thread")
    perf(rep, "emu_vec_add_fp16_16k", "throughput", float(vals["vec_add_half_melems"]), "Melem/s", "one AIV thread")
    perf(rep, "emu_vec_exp_fp32_16k", "throughput", float(vals["vec_exp_float_melems"]), "Melem/s", "one AIV thread")
    perf(
        rep, "emu_launch_mix_24x3", "overhead", float(vals["launch_overhead_ms"]), "ms", "empty MIX kernel, 72 threads"
    )

    rep.start(f"cube_matmul {args.m}x{args.n}x{args.k}")
    m, n, k = args.m, args.n, args.k
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    base = (128, 128, 128)
    tiling = struct.pack("<8I", m, n, k, *base, math.ceil(m / base[0]), math.ceil(n / base[1]))
    emu_s, out = run_driver(build, "cube_matmul", args.cores, "aic", a, b, tiling, m * n * 2)
    c = np.frombuffer(out, dtype=np.float16).reshape(m, n)
    af, bf = a.astype(np.float32), b.astype(np.float32)
    t0 = time.perf_counter()
    ref = np.matmul(af, bf)
    np_s = time.perf_counter() - t0
    err = float(np.max(np.abs(c.astype(np.float32) - ref)))
    flops = 2.0 * m * n * k
    perf(
        rep,
        f"cube_matmul_{m}x{n}x{k}_fp16",
        "time",
        emu_s * 1e3,
        "ms",
        f"{flops / emu_s / 1e9:.2f} GFLOP/s incl. process start and I/O; numpy.matmul(fp32) {np_s * 1e3:.2f} ms; "
        f"ratio {emu_s / np_s:.1f}x; max abs err {err:.3g}",
    )

    # The score stage of attention B=1 N=8 S=2048 D=128 over 512-key blocks: S = Q K^T on the
    # cube, row softmax on the vector cores, 24 AI cores x 3 threads.
    rep.start("mix_softmax")
    rows_q, keys, d = 8 * 2048, 512, 128
    q = rng.uniform(-1, 1, (rows_q, d)).astype(np.float16)
    kt = rng.uniform(-1, 1, (keys, d)).astype(np.float16)
    base_m = 64
    tiling = struct.pack("<6I", rows_q, keys, d, base_m, keys, math.ceil(rows_q / base_m))
    mix_s, _ = run_driver(build, "mix_softmax", 24, "mix", q, kt, tiling, rows_q * keys * 4, 24 * 2 * base_m * keys * 4)
    full = mix_s * (2048 / keys) * 2  # 4 key blocks, and the P*V matmul doubles the cube work
    perf(
        rep,
        f"mix_softmax_{rows_q}x{keys}x{d}",
        "time",
        mix_s * 1e3,
        "ms",
        f"{2.0 * rows_q * keys * d / mix_s / 1e9:.2f} GFLOP/s cube + {rows_q * keys / mix_s / 1e6:.1f} M softmax elem/s; "
        f"projected attention B1 N8 S2048 D128 forward ~{full:.1f} s",
    )
    rep.finish(
        columns=[k for k in dict.fromkeys(k for r in rep.rows for k in r) if k not in ("name", "note")],
        csv_path=args.csv,
        json_path=args.json,
    )
    print("(the notes of each row: its [PERF] line above, or --csv/--json)")


if __name__ == "__main__":
    main()
