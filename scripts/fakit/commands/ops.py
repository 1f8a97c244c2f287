"""fakit ops: the registered OpDefs (inputs, outputs, attributes) exported by the CPU build."""

import json
from pathlib import Path

from .. import opnames, package


def register(subparsers):
    p = subparsers.add_parser("ops", help="list the registered operator definitions (OpDefs)")
    p.add_argument("--json", action="store_true", help="print the exported OpDef JSON")
    p.add_argument("--opdefs", type=Path, metavar="FILE", help="read OpDefs from FILE instead of the CPU build")
    p.set_defaults(func=main)


def _ports(ports):
    return ", ".join(
        f"{p['name']}{'?' if p['param_type'] == 'optional' else '*' if p['param_type'] == 'dynamic' else ''}"
        f"[{'|'.join(dict.fromkeys(d.replace('DT_', '').lower() for d in p['dtypes']))}]"
        for p in ports
    )


def _names(op_type: str) -> str:
    """The operator's other names (any of them works with --op), or '' for an OpType that is
    not one of the five (a fixture's)."""
    try:
        o = opnames.lookup(op_type)
    except opnames.UnknownOperator:
        return ""
    return f"  = {o.alias} = {o.name} = {o.aclnn} (dir {o.directory})"


def main(args) -> int:
    ops = package.load_opdefs(args.opdefs)
    if args.json:
        print(json.dumps({"ops": ops}, indent=1))
        return 0
    for op in ops:
        print(op["op_type"] + _names(op["op_type"]))
        print(f"  inputs : {_ports(op.get('inputs', []))}")
        print(f"  outputs: {_ports(op.get('outputs', []))}")
        attrs = ", ".join(
            f"{a['name']}:{a['type']}" + ("" if a.get("required") else f"={json.dumps(a.get('default'))}")
            for a in op.get("attrs", [])
        )
        print(f"  attrs  : {attrs}")
    print("(? optional, * dynamic; every name after '=' works with --op; --json for the full export)")
    return 0
