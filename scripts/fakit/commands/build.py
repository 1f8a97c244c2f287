"""`fakit build`: build the CPU target (or hand the NPU build to build.sh)."""

import os
import subprocess
import sys

from .. import build, opnames


def register(subparsers) -> None:
    p = subparsers.add_parser("build", help="build the operators for a target")
    p.add_argument("--target", choices=("cpu", "npu"), default="cpu")
    p.add_argument("--sanitize", action="store_true", help="ASan/UBSan build (build/cpu-asan)")
    p.add_argument(
        "--ops",
        default=None,
        metavar="A,B",
        help="build only these operators, by any of their names (env FAKIT_CPU_OPS)",
    )
    p.add_argument("--force", action="store_true", help="rebuild even when up to date")
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.target == "npu":
        cmd = ["bash", str(build.ROOT / "build.sh"), "--target", "npu", "-j", str(args.jobs)]
        return subprocess.call(cmd, cwd=build.ROOT)
    if args.ops is not None:
        os.environ["FAKIT_CPU_OPS"] = ",".join(opnames.resolve_list(args.ops, "directory"))
    try:
        lib = build.ensure_built("cpu", sanitize=args.sanitize, jobs=args.jobs, force=args.force, quiet=False)
    except build.BuildError as exc:
        print(f"fakit: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    print(lib)
    print(build.install_prefix(args.sanitize))
    return 0
