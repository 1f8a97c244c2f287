"""`fakit cases`: list the cases of a suite (and, with --rejected, what the spec forbids)."""
import json

from .. import cases
from ..report import table


def register(sub):
    p = sub.add_parser("cases", help="list the test cases of an operator's suite")
    p.add_argument("--op", required=True, help=f"operator: {', '.join(cases.OPERATORS)} or 'all'")
    p.add_argument("--suite", default="smoke", help="suite name: smoke, full (PFA/IFA also: peer)")
    p.add_argument("--json", action="store_true", help="print the cases as JSON")
    p.add_argument("--rejected", action="store_true",
                   help="also list the swept combinations the spec forbids, with the reason")
    p.set_defaults(func=main)


def _ops(op):
    if op == "all":
        return list(cases.OPERATORS)
    if op not in cases.OPERATORS:
        raise KeyError(f"unknown operator {op!r}; expected one of {', '.join(cases.OPERATORS)} or 'all'")
    return [op]


def main(args) -> int:
    result = []
    for op in _ops(args.op):
        if args.op == "all" and args.suite not in cases.suite_names(op):
            continue
        accepted, rejected = cases.sweep(op, args.suite)
        result.append((op, accepted, rejected))
    if args.json:
        doc = [{"op": op, "suite": args.suite, "cases": [c.to_json() for c in acc],
                "rejected": [{"params": c.params(), "features": c.features, "reason": why} for c, why in rej]}
               for op, acc, rej in result]
        print(json.dumps(doc[0] if len(doc) == 1 else doc, indent=1))
        return 0
    for op, acc, rej in result:
        print(f"{op} / {args.suite}: {len(acc)} cases" + (f", {len(rej)} rejected" if rej else ""))
        print(table(("id", "features"), ((c.id, c.features) for c in acc), max_width=120))
        if args.rejected and rej:
            print(table(("rejected", "reason"), ((c.features, why) for c, why in rej), max_width=120))
        print()
    return 0
