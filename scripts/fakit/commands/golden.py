"""`fakit golden`: write one case (inputs, attributes, golden outputs) as a case directory."""

from .. import cases
from ..cases.casedir import write_case_dir
from ._options import add_op


def register(sub):
    p = sub.add_parser("golden", help="write a case's inputs and golden outputs as .bin files + case.json")
    add_op(p, extra=" (default: the case id's prefix names it)")
    p.add_argument("--case", required=True, dest="case_id", help="case id (see `fakit cases`)")
    p.add_argument("--out", required=True, help="output directory (created if missing)")
    p.add_argument(
        "--benchmark", action="store_true", help="also write the same-dtype benchmark outputs (benchmark.<name>.bin)"
    )
    p.set_defaults(func=main)


def main(args) -> int:
    from .. import golden

    case = cases.get(args.op, args.case_id)
    kwargs = case.inputs()
    gold = getattr(golden, case.op)(**kwargs)
    bench = golden.benchmark(case.op, **kwargs) if args.benchmark else None
    out = write_case_dir(args.out, case, kwargs, gold, bench)
    print(f"wrote {case.op} case {case.id} ({case.features}) to {out}")
    return 0
