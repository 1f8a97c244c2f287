"""fakit package: build the custom-op package, or write msopgen's operator JSON (and project)."""

from pathlib import Path

from .. import cann, opnames, package


def register(subparsers):
    p = subparsers.add_parser(
        "package",
        help="build the custom-op .run package (CANN) or write msopgen operator JSON",
        description="Without options: ./build.sh --target npu --pkg. With --msopgen-json DIR: "
        "one msopgen operator JSON per registered OpDef (no CANN needed).",
    )
    p.add_argument("--msopgen-json", type=Path, metavar="DIR", help="write <op>.json files to DIR")
    p.add_argument(
        "--msopgen-project",
        type=Path,
        metavar="DIR",
        help="also run msopgen on them to generate a project in DIR (needs CANN)",
    )
    p.add_argument(
        "--opdefs",
        type=Path,
        metavar="FILE",
        help="OpDefs from a saved `fakit ops --json` file instead of the CPU build",
    )
    p.add_argument("--soc", default=cann.DEFAULT_SOC, help="SoC (default %(default)s)")
    p.add_argument("--vendor", default=cann.DEFAULT_VENDOR, help="vendor name (default %(default)s)")
    p.add_argument("--ops", help="comma-separated operators to package, by any of their names (default: all)")
    p.set_defaults(func=main)


def main(args) -> int:
    if args.msopgen_json is None and args.msopgen_project is None:
        return package.build_package(args.soc, args.vendor, args.ops)
    opdefs = package.load_opdefs(args.opdefs)
    if args.ops:
        wanted = set(opnames.resolve_list(args.ops, "op_type"))
        opdefs = [o for o in opdefs if o["op_type"] in wanted]
    out = args.msopgen_json or args.msopgen_project / "json"
    files = package.write_msopgen_json(opdefs, out)
    for f in files:
        print(f)
    if args.msopgen_project is not None:
        package.generate_msopgen_project(files, cann.soc_version(args.soc), args.msopgen_project)
        print(f"msopgen project: {args.msopgen_project}")
    return 0
