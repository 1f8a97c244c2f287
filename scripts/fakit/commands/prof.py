"""fakit prof: profile one case on sim (msprof op simulator), npu (msprof op) or cpu (the
emulator's timeline model: modelled device time), printed as one table; `fakit prof calibrate`
fits the model's assumed costs to device measurements: msprof results of the same cases
(--op, --msprof) or the published msprof times of CATLASS's matmul examples (--catlass)."""

import json
import sys
from pathlib import Path

from .. import prof
from ..cases import op_of
from ._options import add_op, add_soc, apply_soc


def register(subparsers):
    p = subparsers.add_parser(
        "prof",
        help="profile one case: kernel time, per-pipe utilisation, bandwidth; "
        "'prof calibrate' fits the cpu model to msprof results",
    )
    p.add_argument(
        "action",
        nargs="?",
        choices=("calibrate",),
        help="calibrate: fit the timeline model's assumed "
        "costs to msprof output (--msprof DIR holding <case id>/OPPROF_* or PROF_* per case) or to "
        "the published CATLASS matmul times (--catlass DIR)",
    )
    p.add_argument("--backend", choices=("sim", "npu", "cpu"))
    add_op(p, extra=" (default: the case id's prefix names it)", lenient=True)
    add_soc(p)
    p.add_argument("--case", dest="case_id", help="case id (fakit cases)")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="profiler output directory (sim/npu default: build/prof); cpu: write an msprof-shaped "
        "PROF_* directory of the modelled launch there, which msprof-analyze and MindStudio "
        "Insight open",
    )
    p.add_argument(
        "--analyze",
        action="store_true",
        help="also run msprof-analyze's advisor on the PROF_* directory (cpu, npu; pip install "
        "-e '.[prof]'); cpu writes it to --out (default build/prof)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument(
        "--trace",
        type=Path,
        help="cpu: write the modelled timeline to this file in msprof's trace "
        "format (a JSON array; flow arrows for cross-core flags)",
    )
    p.add_argument("--msprof", type=Path, help="calibrate: directory with one msprof op output per case id")
    p.add_argument(
        "--catlass",
        type=Path,
        help="calibrate: a CATLASS checkout (hicann/catlass) whose matmul "
        "examples are fitted to their published 910B2 times",
    )
    p.add_argument(
        "--catlass-build",
        type=Path,
        default=Path("build/peers/catlass-timing"),
        help="calibrate: build directory of the CATLASS examples",
    )
    p.add_argument("--prefix", type=Path, default=Path("build/cpu/install"), help="calibrate: the CPU prefix")
    p.add_argument(
        "--costs-out",
        type=Path,
        default=Path("build/prof/costs.txt"),
        help="calibrate: where to write the fitted costs (use with env ASCEND_EMU_COSTS)",
    )
    p.set_defaults(func=main)


def main(args) -> int:
    if args.action == "calibrate":
        from .. import calibrate

        try:
            if args.catlass is not None:
                result = calibrate.calibrate_catlass(
                    args.catlass, args.catlass_build.resolve(), args.prefix.resolve(), args.costs_out
                )
                print(json.dumps(result, indent=1) if args.json else calibrate.format_catlass(result))
                return 0
            if args.op is None or args.msprof is None:
                print("fakit prof calibrate needs --op and --msprof DIR, or --catlass DIR", file=sys.stderr)
                return 2
            result = calibrate.calibrate_dir(args.op, args.msprof, args.costs_out)
        except calibrate.MeasurementError as e:
            print(f"fakit prof calibrate: {e}", file=sys.stderr)
            return 2
        print(json.dumps(result, indent=1) if args.json else calibrate.format_result(result))
        return 0
    if args.backend is None or args.case_id is None:
        print("fakit prof needs --backend and --case (and --op when the case id does not name it)", file=sys.stderr)
        return 2
    args.op = args.op or op_of(args.case_id)  # like run and golden: the id names its operator
    apply_soc(args)
    if args.backend == "cpu":
        out = args.out if args.out is not None or not args.analyze else Path("build/prof")
        summary = prof.profile_cpu(args.op, args.case_id, args.trace, out, args.analyze)
    else:
        if args.trace is not None:
            print(
                f"fakit prof: --trace is for the cpu backend; on {args.backend} msprof writes the timeline under --out",
                file=sys.stderr,
            )
            return 2
        if args.analyze and args.backend == "sim":
            print(
                "fakit prof: --analyze needs a device run (npu) or the cpu model; msprof-analyze does not "
                "read the simulator's OPPROF_* output",
                file=sys.stderr,
            )
            return 2
        out = args.out if args.out is not None else Path("build/prof")
        summary = prof.profile_cann(args.backend, args.op, args.case_id, out / args.case_id, args.analyze)
    print(json.dumps(summary.to_json(), indent=1) if args.json else prof.format_table(summary))
    return 0
