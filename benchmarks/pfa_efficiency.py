"""Efficiency of aclnnPromptFlashAttention on the CPU target, from the emulator's counters
cube MACs issued vs the useful MACs of the unmasked region, GM traffic vs
the minimum, and the load balance over the AI cores.

    python benchmarks/pfa_efficiency.py [--quick] [--csv PATH] [--json PATH] [--plot PNG]

One line per measurement:
    [PERF] pfa/<shape> :: mac_ratio <x>; tensor_gm_ratio <x>; ...

How the numbers are derived (docs/performance.md has the discussion):
* useful MACs = pairs the mask/band leaves x (D + D) per head (benchmarks/flops.py);
  issued MACs = the M pipe's MAC counter summed over all cube cores.
* Each Mmad of a block of r query rows and c keys issues r*c*D MACs for Q.K^T and the same for
  P.V, so sum(r*c) = issued / (2 D): the bytes of the workspace hand-off follow from it
  (P loads by the cube: 2 bytes per score; mask loads: 1 byte per score).
* tensor GM bytes = what the cores move to/from Q, K, V, the mask and O
  = cube MTE2 - P loads + mask loads + output bytes; workspace bytes (S, P, P.V partials:
  the cube <-> vector hand-off, L2-resident on the device) = all GM bytes - tensor bytes.
* minimum per pass = Q + O once plus K and V once per q-block pass over its visible keys
  (the issue's "read once per needed pass"); one-pass minimum = Q, K, V, O once each.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import flops  # noqa: E402
from perf_report import PerfReport, description  # noqa: E402

import fakit  # noqa: E402
from fakit.backends import cpu  # noqa: E402

OP = "prompt_flash_attention"
INT_MAX = 2147483647


def measurement(name, s, d, causal, heads=1):
    return dict(name=name, s=s, d=d, causal=causal, heads=heads)


def shapes(quick: bool):
    if quick:
        return [measurement("causal_s1024_d128", 1024, 128, True), measurement("full_s1024_d128", 1024, 128, False)]
    return [
        measurement("causal_s2048_d128", 2048, 128, True),
        measurement("causal_s4096_d128", 4096, 128, True),
        measurement("causal_s2048_d64_h4", 2048, 64, True, heads=4),
        measurement("full_s4096_d128", 4096, 128, False),
    ]


def kwargs_for(m):
    s, d, n = m["s"], m["d"], m["heads"]
    rng = np.random.default_rng(0)
    kw = dict(
        query=rng.uniform(-1, 1, (1, n, s, d)).astype(np.float16),
        key=rng.uniform(-1, 1, (1, n, s, d)).astype(np.float16),
        value=rng.uniform(-1, 1, (1, n, s, d)).astype(np.float16),
        num_heads=n,
        input_layout="BNSD",
        scale_value=d**-0.5,
    )
    if m["causal"]:
        kw.update(atten_mask=np.triu(np.ones((s, s), np.bool_), 1), pre_tokens=INT_MAX, next_tokens=0)
    return kw


def pipe(core, name, key="bytes"):
    return core.get(name, {}).get(key, 0)


def measure(m):
    s, d, n = m["s"], m["d"], m["heads"]
    kw = kwargs_for(m)
    t0 = time.time()
    fakit.run(OP, backend="cpu", **kw)
    wall = time.time() - t0
    c = cpu.last_counters()
    cores = c["cores"]
    aic = [x for x in cores if x["sub"] == "aic"]
    issued = sum(pipe(x, "M", "macs") for x in aic)
    pairs = flops.causal_pairs(s, s) if m["causal"] else flops.full_pairs(s, s)
    useful = pairs * 2 * d * n
    scores = issued // (2 * d)  # sum of r*c over computed blocks
    out_bytes = n * s * d * 2
    mask_bytes = scores if m["causal"] else 0
    all_gm = sum(pipe(x, p) for x in cores for p in ("MTE2", "MTE3", "FIXP"))
    tensor = sum(pipe(x, "MTE2") for x in aic) - 2 * scores + mask_bytes + out_bytes
    workspace = all_gm - tensor

    # The tiling's q-block, read back from the counters: per unit the cube loads Q once, per
    # key block K, V and P; the K + V bytes are 2 x 2 B x D per key each q-block pass reads, which
    # only the real q-block size reproduces.
    def pass_keys(bq):
        return sum(min(s, q0 + bq) if m["causal"] else s for q0 in range(0, s, bq))

    kv_bytes = sum(pipe(x, "MTE2") for x in aic) - 2 * scores - 2 * n * s * d
    bq = min((192, 128, 64, 32, 16), key=lambda b: abs(2 * 2 * n * pass_keys(b) * d - kv_bytes))
    visible = pass_keys(bq)  # keys each q-block pass must read
    per_pass_min = 2 * (2 * n * s * d) + 2 * 2 * n * visible * d + mask_bytes
    one_pass_min = flops.attention_min_bytes(s, s, n, n, d, d, 2)
    per_core = [pipe(x, "M", "macs") for x in aic]
    return {
        "name": m["name"],
        "wall_s": round(wall, 2),
        "block_dim": c["block_dim"],
        "mac_issued": issued,
        "mac_useful": useful,
        "mac_ratio": issued / useful,
        "gm_bytes": all_gm,
        "tensor_gm_bytes": tensor,
        "workspace_bytes": workspace,
        "per_pass_min_bytes": per_pass_min,
        "tensor_gm_ratio": tensor / per_pass_min,
        "one_pass_min_bytes": one_pass_min,
        "kv_restream_factor": tensor / one_pass_min,
        "workspace_bytes_per_score": workspace / scores,
        "core_balance": max(per_core) / (sum(per_core) / len(per_core)),
        "block_q": bq,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--quick", action="store_true", help="small shapes (S=1024)")
    ap.add_argument("--csv", type=Path, help="also write the rows to this CSV file")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    ap.add_argument(
        "--plot", type=Path, help="write a PNG of the efficiency ratios per shape (pip install -e '.[plot]')"
    )
    args = ap.parse_args(argv)
    todo = shapes(args.quick)
    # cost ~ the score pairs the kernel computes (causal: about half)
    rep = PerfReport(
        "pfa_efficiency",
        total=len(todo),
        weights=[m["s"] ** 2 * m["d"] * m["heads"] / (2 if m["causal"] else 1) for m in todo],
    )
    for m in todo:
        rep.start(f"pfa/{m['name']}")
        r = measure(m)
        rep.add(
            f"pfa/{r.pop('name')}",
            r,
            units={
                "wall_s": "s",
                "gm_bytes": "B",
                "tensor_gm_bytes": "B",
                "workspace_bytes": "B",
                "per_pass_min_bytes": "B",
                "one_pass_min_bytes": "B",
                "workspace_bytes_per_score": "B",
            },
        )
    rep.finish(
        columns=["mac_ratio", "tensor_gm_ratio", "kv_restream_factor", "core_balance", "block_q", "wall_s"],
        csv_path=args.csv,
        json_path=args.json,
        plot_path=args.plot,
        plot_metrics=["mac_ratio", "tensor_gm_ratio", "core_balance"],
        plot_title="aclnnPromptFlashAttention on the CPU target: issued / minimum (1 = ideal)",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
