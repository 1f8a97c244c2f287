"""The `fakit` command line. Each subcommand lives in fakit/commands/<name>.py and exposes
`register(subparsers)`; the parser is assembled from whatever modules are present."""
import argparse
import importlib
import pkgutil
import sys

from . import commands
from .errors import AclnnError, BackendUnavailable


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fakit", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BackendUnavailable as exc:
        print(f"fakit: {exc}", file=sys.stderr)
        return 2
    except AclnnError as exc:
        print(f"fakit: {exc}", file=sys.stderr)
        return 1
    except (KeyError, ValueError, FileNotFoundError) as exc:
        print(f"fakit: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
