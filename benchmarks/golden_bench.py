"""Benchmark of the NumPy goldens: wall time, peak memory and the ratio to a straightforward
torch float32 implementation measured in the same run, per operator on 3 realistic shapes.

    python benchmarks/golden_bench.py [--quick | --scale K] [--ops a,b] [--limit N] [--repeat N]
                                      [--csv PATH] [--json PATH] [--plot PNG]

Each measurement runs in its own subprocess (inputs are prepared once by the parent and
loaded by the worker), so peak memory is the worker's resident-set high-water mark during
the call minus its resident set just before it (Linux: /proc/self/clear_refs resets the mark).
Output, one line per measurement (before each, a progress line with an ETA on stderr):
    [PERF] <op>/<shape> :: time_s <s> s; peak_mib <MiB> MiB; ratio_vs_torch <x>; ...
then a summary table; --plot draws golden vs torch GFLOP/s per shape (needs the plot extra).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import flops  # noqa: E402  (benchmarks/flops.py: the FLOP formulas)
from perf_report import PerfReport, description  # noqa: E402

from fakit import opnames  # noqa: E402
from fakit.cases import flash_attention_unpadding_score_grad_v5 as fag  # noqa: E402
from fakit.cases import flash_attention_var_len_score as fav  # noqa: E402
from fakit.cases import incre_flash_attention_v4 as ifa  # noqa: E402
from fakit.cases import prompt_flash_attention as pfa  # noqa: E402
from fakit.cases import sparse_flash_attention_grad as sfag  # noqa: E402


def shapes(scale: int):
    """(op, shape name, case, useful GFLOP) for every measurement; lengths divided by `scale`
    (--quick: 4), never below 16."""
    k = max(1, scale)
    S = lambda n: max(16, n // k)  # noqa: E731
    out = []

    def add(op, name, case, gflop):
        out.append((op, name, case, gflop / 1e9))

    c = pfa.make("fp16", "BNSD", B=1, N=32, Sq=S(4096), D=128, mask="causal", mask_shape="SS")
    add(
        pfa.OP,
        f"B1_N32_S{S(4096)}_D128_causal_fp16",
        c,
        flops.forward_flops(flops.causal_pairs(S(4096), S(4096)), 32, 128),
    )
    c = pfa.make("bf16", "BSND", B=4, N=16, Nkv=2, Sq=S(2048), D=128)
    add(pfa.OP, f"B4_N16/2_S{S(2048)}_D128_gqa_bf16", c, flops.forward_flops(4 * S(2048) ** 2, 16, 128))
    c = pfa.make("fp16", "BSH", B=8, N=8, Sq=S(1024), D=64, mask="band", pre=256, nxt=0, mask_shape="B1SS")
    add(
        pfa.OP,
        f"B8_N8_S{S(1024)}_D64_band_fp16",
        c,
        flops.forward_flops(8 * flops.band_pairs(S(1024), S(1024), 256, 0), 8, 64),
    )

    kv = S(8192)
    c = ifa.make("fp16", "BNSD", B=16, N=32, Nkv=8, S=kv, D=128, actual=[kv] * 16, paged=128, cache="bnsd")
    add(ifa.OP, f"B16_N32/8_KV{kv}_D128_paged_fp16", c, flops.forward_flops(16 * kv, 32, 128))
    c = ifa.make("bf16", "BSH", B=16, N=32, S=S(4096), D=128)
    add(ifa.OP, f"B16_N32_KV{S(4096)}_D128_bf16", c, flops.forward_flops(16 * S(4096), 32, 128))
    c = ifa.make("fp16", "BNSD", B=8, N=32, Nkv=8, S=kv, D=128, kv_int8=True, antiquant="channel")
    add(ifa.OP, f"B8_N32/8_KV{kv}_D128_int8kv_fp16", c, flops.forward_flops(8 * kv, 32, 128))

    ql = [S(2048)] * 4
    c = fav.make("bf16", qlens=ql, N=16, D=128, sparse_mode=3)
    add(
        fav.OP,
        f"T{sum(ql)}_N16_D128_causal_bf16",
        c,
        flops.forward_flops(flops.varlen_pairs(ql, ql, "causal_rd"), 16, 128),
    )
    ql = [S(512), S(1024), S(2048), S(4096)]
    c = fav.make("fp16", qlens=ql, N=16, D=128)
    add(fav.OP, f"T{sum(ql)}_N16_D128_varlen_fp16", c, flops.forward_flops(flops.varlen_pairs(ql, ql), 16, 128))
    ql = [S(4096)] * 2
    c = fav.make("bf16", qlens=ql, N=8, Nkv=2, D=128, sparse_mode=2)
    add(
        fav.OP,
        f"T{sum(ql)}_N8/2_D128_gqa_causal_bf16",
        c,
        flops.forward_flops(flops.varlen_pairs(ql, ql, "causal"), 8, 128),
    )

    ql = [S(2048)] * 4
    c = fag.make("bf16", qlens=ql, N=16, D=128, sparse_mode=3)
    add(
        fag.OP,
        f"T{sum(ql)}_N16_D128_causal_bf16",
        c,
        flops.backward_flops(flops.varlen_pairs(ql, ql, "causal_rd"), 16, 128),
    )
    ql = [S(4096)] * 2
    c = fag.make("fp16", qlens=ql, N=16, Nkv=4, D=128)
    add(fag.OP, f"T{sum(ql)}_N16/4_D128_full_fp16", c, flops.backward_flops(flops.varlen_pairs(ql, ql), 16, 128))
    ql = [S(1024)] * 8
    c = fag.make("bf16", qlens=ql, N=16, D=128, sparse_mode=3, rope=True)
    add(
        fag.OP,
        f"T{sum(ql)}_N16_D128+64_rope_causal_bf16",
        c,
        flops.backward_flops(flops.varlen_pairs(ql, ql, "causal_rd"), 16, 192, 128),
    )

    s1, s2 = S(512), S(8192)
    c = sfag.make("bf16", "BSND", qlens=[s1], kvlens=[s2], N1=16, block=64, sparse_mode=3, rope=True)
    add(sfag.OP, f"S{s1}x{s2}_N16_blk64_rope_bf16", c, flops.backward_flops(s1 * s2 // 2, 16, 576, 512))
    s1, s2 = S(256), S(4096)
    c = sfag.make("bf16", "BSND", qlens=[s1], kvlens=[s2], N1=64, block=1, sparse_mode=0)
    add(sfag.OP, f"S{s1}x{s2}_N64_blk1_bf16", c, flops.backward_flops(s1 * s2 // 2, 64, 512))
    q, kvl = [S(256), S(256)], [S(2048), S(4096)]
    c = sfag.make("fp16", "TND", qlens=q, kvlens=kvl, N1=32, block=16, sparse_mode=3, rope=True)
    add(
        sfag.OP,
        f"T{sum(q)}_N32_blk16_rope_tnd_fp16",
        c,
        flops.backward_flops(sum(a * b for a, b in zip(q, kvl)) // 2, 32, 576, 512),
    )
    return out


# ------------------------------------------------------------------------------ workers


def _peak_reset() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def worker(impl: str, op: str, path: str) -> None:
    if impl == "torch":
        import torch_refs as ref

        fn = getattr(ref, op)
    else:
        from fakit import golden

        fn = getattr(golden, op)
    with open(path, "rb") as fh:
        kwargs = pickle.load(fh)
    import gc

    gc.collect()
    before = _status_kib("VmRSS")
    _peak_reset()
    t0 = time.perf_counter()
    fn(**kwargs)
    elapsed = time.perf_counter() - t0
    peak = _status_kib("VmHWM")
    print(json.dumps({"time": elapsed, "peak_mib": max(0, peak - before) / 1024.0}))


def measure(impl: str, op: str, path: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", impl, op, path], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{impl} {op} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--quick", action="store_true", help="4x shorter sequences (same as --scale 4)")
    ap.add_argument("--scale", type=int, default=1, help="divide every sequence length by K (default 1)")
    ap.add_argument("--ops", help="comma-separated operators, any of their names (default: all five)")
    ap.add_argument("--limit", type=int, help="at most N measurements")
    ap.add_argument("--csv", help="write the measurements as CSV")
    ap.add_argument("--json", help="write the measurements as JSON")
    ap.add_argument("--plot", help="write a PNG: golden vs torch GFLOP/s per shape (pip install -e '.[plot]')")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="measure golden and torch alternately N times; report the fastest of each (use 2-3 on a loaded machine)",
    )
    ap.add_argument("--worker", nargs=3, metavar=("IMPL", "OP", "INPUTS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return 0
    wanted = set(opnames.resolve_list(args.ops)) if args.ops else None
    todo = [s for s in shapes(4 if args.quick else args.scale) if not wanted or s[0] in wanted][: args.limit]
    rep = PerfReport("golden_bench", total=len(todo), weights=[g for *_, g in todo])
    with tempfile.TemporaryDirectory() as tmp:
        for op, name, case, gflop in todo:
            label = f"{op}/{name}"
            rep.start(label)
            path = os.path.join(tmp, "inputs.pkl")
            with open(path, "wb") as fh:
                pickle.dump(case.inputs(), fh, protocol=5)
            runs = [(measure("golden", op, path), measure("torch", op, path)) for _ in range(max(1, args.repeat))]
            g = min((r[0] for r in runs), key=lambda m: m["time"])
            t = min((r[1] for r in runs), key=lambda m: m["time"])
            rep.add(
                label,
                {
                    "time_s": g["time"],
                    "peak_mib": g["peak_mib"],
                    "ratio_vs_torch": g["time"] / t["time"],
                    "torch_time_s": t["time"],
                    "torch_peak_mib": t["peak_mib"],
                    "gflops": gflop / g["time"],
                    "torch_gflops": gflop / t["time"],
                    "useful_gflop": gflop,
                },
                units={
                    "time_s": "s",
                    "torch_time_s": "s",
                    "peak_mib": "MiB",
                    "torch_peak_mib": "MiB",
                    "gflops": "GFLOP/s",
                    "torch_gflops": "GFLOP/s",
                    "useful_gflop": "GFLOP",
                },
            )
    rep.finish(
        columns=["time_s", "torch_time_s", "ratio_vs_torch", "peak_mib", "gflops"],
        csv_path=args.csv,
        json_path=args.json,
        plot_path=args.plot,
        plot_metrics=["gflops", "torch_gflops"],
        plot_title="NumPy goldens vs a plain torch float32 implementation (higher is faster)",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
