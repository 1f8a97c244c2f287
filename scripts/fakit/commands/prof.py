"""fakit prof: profile one case on sim (msprof op simulator), npu (msprof op) or cpu (the
emulator's per-pipe counters), printed as one table."""
import json
from pathlib import Path

from .. import prof
from ..cases import op_of
from ._options import add_op, add_soc, apply_soc


def register(subparsers):
    p = subparsers.add_parser("prof", help="profile one case: kernel time, per-pipe utilisation, bandwidth")
    p.add_argument("--backend", choices=("sim", "npu", "cpu"), required=True)
    add_op(p, extra=" (default: the case id's prefix names it)", lenient=True)
    add_soc(p)
    p.add_argument("--case", required=True, dest="case_id", help="case id (fakit cases)")
    p.add_argument("--out", type=Path, default=Path("build/prof"), help="profiler output directory")
    p.add_argument("--analyze", action="store_true", help="npu: also run msprof-analyze advisor")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=main)


def main(args) -> int:
    args.op = args.op or op_of(args.case_id)   # like run and golden: the id names its operator
    apply_soc(args)
    if args.backend == "cpu":
        summary = prof.profile_cpu(args.op, args.case_id)
    else:
        summary = prof.profile_cann(args.backend, args.op, args.case_id, args.out / args.case_id, args.analyze)
    print(json.dumps(summary.to_json(), indent=1) if args.json else prof.format_table(summary))
    return 0
