"""The timeline model against published device measurements: CATLASS's matmul examples, built
with CATLASS's own CMake against the CPU prefix and run unchanged in timing-only mode (the host
golden skipped, benchmarks/peers/catlass_no_golden.h), against the msprof kernel times CATLASS
publishes for a 910B2 (fakit.calibrate.PUBLISHED, with its source).

    python benchmarks/peers/calibration.py --catlass DIR [--build-dir DIR] [--prefix DIR]
        [--costs FILE] [--only TEXT] [--json PATH]

Prints per point
    [CAL] <fit|held-out> <example> M,N,K :: measured_us X; modelled_us Y; error_pct Z
and last `calibration: fit max |err| A %, held-out max |err| B %`. The fit points are those
`fakit prof calibrate --catlass DIR` fits the assumed costs to (the default table's fitted
entries cite that fit); the held-out points are only reported. The split-K example's held-out
points run twice: as built at the pinned commit (B ColumnMajor) and as measured (B RowMajor:
`34_single_core_splitk_matmul/b_rowmajor`, the example's source with that one host line
switched, compiled with the example's own commands; fakit.calibrate.VARIANTS). --costs runs
under another cost file (env ASCEND_EMU_COSTS format). The largest point runs for minutes on a
CPU.
"""

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from fakit import calibrate  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--catlass", type=Path, required=True, help="a hicann/catlass checkout (read only)")
    ap.add_argument("--build-dir", type=Path, default=ROOT / "build" / "peers" / "catlass-timing")
    ap.add_argument("--prefix", type=Path, default=ROOT / "build" / "cpu" / "install")
    ap.add_argument("--costs", type=Path, help="a cost file to run under (default: the built-in table)")
    ap.add_argument("--only", help="run only points whose 'example m,n,k' contains this text")
    ap.add_argument("--json", type=Path, help="write the rows to this file")
    args = ap.parse_args(argv)
    costs = None
    if args.costs:
        costs = {k: float(v) for k, v in (line.split() for line in args.costs.read_text().splitlines() if line.strip())}
    rows = calibrate.catlass_points(
        args.catlass.resolve(),
        args.build_dir.resolve(),
        args.prefix.resolve(),
        costs=costs,
        only=args.only,
        progress=lambda r: print(calibrate.format_point(r), flush=True),
    )
    for example, note in dict((r["example"], r["note"]) for r in rows if r["note"]).items():
        print(f"note: {example}: {note}")
    print(calibrate.summary_line(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
