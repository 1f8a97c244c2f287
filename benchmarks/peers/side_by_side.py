"""Our attention operators and CATLASS's flash-attention inference kernel (examples/
23_flash_attention_infer, built unchanged with CATLASS's own CMake against the CPU prefix) on
the same shapes, dtype (fp16) and masks, under the same timeline model in one run: modelled
time, TFLOPS (decode: TB/s) and ours / peer. Both sides carry the same model biases, so the
ratio is the figure to read; the absolute times are modelled (see the calibration table in
docs/performance.md for the model's error against device measurements).

    python benchmarks/peers/side_by_side.py --catlass DIR [--csv PATH] [--plot PATH] [--quick]
        [--build-dir DIR] [--prefix DIR] [--only TEXT]

Every launch runs in timing-only mode (the arithmetic skipped, every cost kept). The peer reads
its inputs from files this script writes (random data, no golden: its comparison line is
ignored). The peer's causal mask is its compressed 1024 x 1024 upper-triangle mask (maskType 1);
ours is the operator's causal mask; both exclude the same keys.
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ["ASCEND_EMU_TIMING_ONLY"] = "1"

import flops  # noqa: E402

import fakit  # noqa: E402
from fakit import calibrate  # noqa: E402
from fakit.backends import cpu  # noqa: E402
from fakit.cases import incre_flash_attention_v4 as ifa  # noqa: E402
from fakit.cases import prompt_flash_attention as pfa  # noqa: E402

PEER = "23_flash_attention_infer"
BLOCK = 128  # the peer's paged-cache block size (its default)


def shapes(quick):
    """name, B, N, Nkv, Sq, Skv, D, causal, decode."""
    out = [("B1_N1_S8K_D128", 1, 1, 1, 8192, 8192, 128, False, False)]
    if not quick:
        out += [
            ("B1_N1_S16K_D128", 1, 1, 1, 16384, 16384, 128, False, False),
            ("B1_N1_S32K_D128", 1, 1, 1, 32768, 32768, 128, False, False),
        ]
    out += [
        ("B1_N32_S4K_D128", 1, 32, 32, 4096, 4096, 128, False, False),
        ("B1_N32_S4K_D128_causal", 1, 32, 32, 4096, 4096, 128, True, False),
        ("B1_N32_Nkv8_S4K_D128_GQA", 1, 32, 8, 4096, 4096, 128, False, False),
        ("B1_N32_S4K_D64", 1, 32, 32, 4096, 4096, 64, False, False),
        ("B16_N32_Nkv4_S4K_D128_paged_decode", 16, 32, 4, 1, 4096, 128, False, True),
    ]
    return out


def write_peer_inputs(d: Path, B, N, Nkv, Sq, Skv, D, causal):
    """The files the peer's main reads (its gen_data.py layout: paged K/V, per-batch lengths)."""
    rng = np.random.default_rng(0)
    blocks = B * (-(-Skv // BLOCK))
    np.array([B * Sq], np.int32).tofile(d / "q_ntokens.bin")
    np.full(B, Sq, np.int64).tofile(d / "q_seqlen.bin")
    np.full(B, Skv, np.int64).tofile(d / "kv_seqlen.bin")
    rng.uniform(-1, 1, (B * Sq, N, D)).astype(np.float16).tofile(d / "q.bin")
    for name in ("k", "v"):
        rng.uniform(-1, 1, (blocks, BLOCK, Nkv, D)).astype(np.float16).tofile(d / f"{name}.bin")
    np.arange(blocks, dtype=np.int32).tofile(d / "block_table.bin")
    if causal:
        np.triu(np.ones((1024, 1024)), 1).astype(np.float16).tofile(d / "mask.bin")


def run_peer(exe: Path, prefix: Path, B, N, Nkv, Sq, Skv, D, causal) -> float:
    env = calibrate.prefix_env(prefix)
    env = {k: v for k, v in env.items() if not k.startswith("ASCEND_EMU_")}
    env["ASCEND_EMU_TIMING_ONLY"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        write_peer_inputs(d, B, N, Nkv, Sq, Skv, D, causal)
        env["ASCEND_EMU_PROFILE"] = str(d / "profile.jsonl")
        args = [
            str(exe),
            str(B),
            str(Sq),
            str(Skv),
            str(N),
            str(Nkv),
            str(D),
            "0",
            "1" if causal else "0",
            "--datapath",
            str(d),
            "--dtype",
            "half",
        ]
        res = subprocess.run(args, env=env, cwd=tmp, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"{PEER} {args[1:8]} failed ({res.returncode}): {res.stderr[-2000:]}")
        import json

        lines = [json.loads(x) for x in (d / "profile.jsonl").read_text().splitlines() if x.strip()]
    return sum(p["task_duration_us"] for p in lines)


def run_ours(B, N, Nkv, Sq, Skv, D, causal, decode) -> float:
    if decode:
        case = ifa.make("fp16", "BNSD", B=B, N=N, Nkv=Nkv, S=Skv, D=D, paged=BLOCK, actual=[Skv] * B)
        fakit.run(ifa.OP, backend="cpu", **case.inputs())
    else:
        extra = dict(mask="causal", mask_shape="SS") if causal else {}
        case = pfa.make("fp16", "BNSD", B=B, N=N, Nkv=Nkv, Sq=Sq, Skv=Skv, D=D, **extra)
        fakit.run(pfa.OP, backend="cpu", **case.inputs())
    return cpu.last_profile()["task_duration_us"]


def work(B, N, Nkv, Sq, Skv, D, causal, decode):
    """(FLOPs or bytes, unit): useful FLOPs of attention; decode: K and V once plus Q and O."""
    if decode:
        return 2 * B * Nkv * Skv * D * 2 + 2 * B * N * D * 2, "TB/s"
    pairs = flops.causal_pairs(Sq, Skv) if causal else flops.full_pairs(Sq, Skv)
    return flops.forward_flops(B * pairs, N, D), "TFLOPS"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--catlass", type=Path, required=True)
    ap.add_argument("--build-dir", type=Path, default=ROOT / "build" / "peers" / "catlass-timing")
    ap.add_argument("--prefix", type=Path, default=ROOT / "build" / "cpu" / "install")
    ap.add_argument("--csv", type=Path)
    ap.add_argument("--plot", type=Path, help="write a bar chart (needs matplotlib)")
    ap.add_argument("--quick", action="store_true", help="leave out S = 16K and 32K")
    ap.add_argument("--only", help="run only shapes whose name contains this text")
    args = ap.parse_args(argv)
    exe = calibrate.build_catlass(args.catlass.resolve(), args.build_dir.resolve(), [PEER], args.prefix.resolve())[PEER]
    rows = []
    for name, B, N, Nkv, Sq, Skv, D, causal, decode in shapes(args.quick):
        if args.only and args.only not in name:
            continue
        peer = run_peer(exe, args.prefix.resolve(), B, N, Nkv, Sq, Skv, D, causal)
        ours = run_ours(B, N, Nkv, Sq, Skv, D, causal, decode)
        amount, unit = work(B, N, Nkv, Sq, Skv, D, causal, decode)
        row = dict(
            shape=name,
            ours_op=ifa.OP if decode else pfa.OP,
            ours_us=ours,
            peer_us=peer,
            unit=unit,
            ours_rate=amount / ours / 1e6,
            peer_rate=amount / peer / 1e6,
            ours_over_peer=ours / peer,
        )
        rows.append(row)
        print(
            f"[SBS] {name} :: ours_us {ours:.1f}; peer_us {peer:.1f}; ours_{unit} {row['ours_rate']:.3f}; "
            f"peer_{unit} {row['peer_rate']:.3f}; ours/peer {row['ours_over_peer']:.3f}",
            flush=True,
        )
    print()
    print(f"{'shape':<38} {'ours µs':>9} {'peer µs':>9} {'ours':>8} {'peer':>8} {'unit':<7} {'ours/peer':>9}")
    for r in rows:
        print(
            f"{r['shape']:<38} {r['ours_us']:>9.1f} {r['peer_us']:>9.1f} {r['ours_rate']:>8.3f} {r['peer_rate']:>8.3f} "
            f"{r['unit']:<7} {r['ours_over_peer']:>9.3f}"
        )
    print(
        f"(modelled device time, Ascend910B2 table; ours = {pfa.OP} / {ifa.OP}, peer = CATLASS {PEER}; "
        f"ours/peer < 1: ours models faster)"
    )
    if args.csv:
        with args.csv.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(10, 4))
        x = np.arange(len(rows))
        ax.bar(x - 0.2, [r["ours_us"] for r in rows], 0.4, label="ours")
        ax.bar(x + 0.2, [r["peer_us"] for r in rows], 0.4, label=f"CATLASS {PEER}")
        ax.set_xticks(x, [r["shape"] for r in rows], rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("modelled µs")
        ax.set_yscale("log")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
