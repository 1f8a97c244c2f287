"""`fakit cases`: list the cases of a suite (and, with --rejected, what the spec forbids)."""

import json

from .. import cases
from ..report import table, to_csv, write_text
from ._options import SUITES_HELP, add_max_seq, add_op, apply_max_seq


def register(sub):
    p = sub.add_parser("cases", help="list the test cases of an operator's suite")
    add_op(p, required=True, allow_all=True)
    p.add_argument("--suite", default="smoke", help=SUITES_HELP)
    p.add_argument(
        "--json",
        dest="json_path",
        nargs="?",
        const="-",
        default=None,
        metavar="PATH",
        help="write the cases as JSON to PATH (no PATH or '-': stdout), as `fakit run --json`",
    )
    p.add_argument(
        "--csv", dest="csv_path", metavar="PATH", help="write id, operator, suite, features as CSV ('-': stdout)"
    )
    p.add_argument(
        "--rejected", action="store_true", help="also list the swept combinations the spec forbids, with the reason"
    )
    add_max_seq(p)
    p.set_defaults(func=main)


def _ops(op):
    return list(cases.OPERATORS) if op == "all" else [op]


def main(args) -> int:
    apply_max_seq(args)
    result = []
    for op in _ops(args.op):
        if args.op == "all" and args.suite not in cases.suite_names(op):
            continue
        accepted, rejected = cases.sweep(op, args.suite)
        result.append((op, accepted, rejected))
    if args.json_path:
        doc = [
            {
                "op": op,
                "suite": args.suite,
                "cases": [c.to_json() for c in acc],
                "rejected": [{"params": c.params(), "features": c.features, "reason": why} for c, why in rej],
            }
            for op, acc, rej in result
        ]
        write_text(args.json_path, json.dumps(doc[0] if len(doc) == 1 else doc, indent=1) + "\n")
        if args.json_path == "-":
            return 0
    if args.csv_path:
        rows = [(c.id, op, args.suite, "accepted", c.features, "") for op, acc, _ in result for c in acc]
        if args.rejected:
            rows += [("", op, args.suite, "rejected", c.features, why) for op, _, rej in result for c, why in rej]
        write_text(args.csv_path, to_csv(("id", "op", "suite", "status", "features", "reason"), rows))
        if args.csv_path == "-":
            return 0
    for op, acc, rej in result:
        print(f"{op} / {args.suite}: {len(acc)} cases" + (f", {len(rej)} rejected" if rej else ""))
        print(table(("id", "features"), ((c.id, c.features) for c in acc)))
        if args.rejected and rej:
            print(table(("rejected", "reason"), ((c.features, why) for c, why in rej), max_width=100))
        print()
    return 0
