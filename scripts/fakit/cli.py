"""The `fakit` command line. Each subcommand lives in fakit/commands/<name>.py and exposes
`register(subparsers)`; the parser is assembled from whatever modules are present."""

import argparse
import importlib
import pkgutil
import sys

from . import commands
from .errors import AclnnError, BackendUnavailable, EmulatorError

DESCRIPTION = """\
fakit: the harness of five FlashAttention operators for Ascend NPUs (Ascend C). It generates
test cases, computes NumPy goldens, builds the operators for a target (cpu: the CPU emulator,
no CANN needed; sim/npu: a CANN toolkit), runs the cases there and compares the results with
the precision standard."""

EPILOG = """\
operators: any of their names works with --op (directory, OpType, aclnn API or alias):
  pfa  prompt_flash_attention                    ifa  incre_flash_attention_v4
  fav  flash_attention_var_len_score             fag  flash_attention_unpadding_score_grad_v5
  sfag sparse_flash_attention_grad

examples:
  fakit run --op pfa --suite smoke                 build the cpu target if needed, run, compare
  fakit cases --op ifa --suite full --csv -        list cases as CSV
  fakit run --case pfa-51f73a49ba --counters       one case with the emulator's counters
  fakit <command> --help                           the options of a command"""


class HelpFormatter(argparse.HelpFormatter):
    """Wraps descriptions and epilogs paragraph by paragraph, keeping indented lines (tables,
    examples) as written — argparse's default joins them into one block — and shows each
    option's default."""

    def _fill_text(self, text, width, indent):
        import textwrap

        out = []
        for para in text.split("\n\n"):
            if any(line.startswith(" ") for line in para.splitlines()[1:]) or para.rstrip().endswith(":"):
                out.append("\n".join(indent + line for line in para.splitlines()))
            else:
                out.append(
                    textwrap.fill(" ".join(para.split()), width, initial_indent=indent, subsequent_indent=indent)
                )
        return "\n\n".join(out)

    def _get_help_string(self, action):
        text = action.help or ""
        if "%(default)" in text or action.default in (None, False, argparse.SUPPRESS) or not action.option_strings:
            return text
        return text + " (default: %(default)s)"


def version() -> str:
    """The installed package's version (pyproject.toml), or the source tree's when not installed."""
    try:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        return dist_version("fakit")
    except (ImportError, PackageNotFoundError):
        return "unknown (not installed: pip install -e .)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fakit", description=DESCRIPTION, epilog=EPILOG, formatter_class=HelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"fakit {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    # Subcommands inherit the formatter: their defaults are shown too.
    sub.add_parser = _with_formatter(sub.add_parser)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):  # helpers shared by the commands
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def _with_formatter(add_parser):
    def wrapped(name, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        if "help" in kwargs and "description" not in kwargs:
            kwargs["description"] = kwargs["help"][0].upper() + kwargs["help"][1:] + "."
        return add_parser(name, **kwargs)

    return wrapped


def error_text(exc: BaseException) -> str:
    """The message of `exc` as a user should read it: KeyError's str() quotes its argument
    ("'unknown operator ...'"), which is noise on a terminal."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BackendUnavailable as exc:
        print(f"fakit: {exc}", file=sys.stderr)
        return 2
    except (AclnnError, EmulatorError) as exc:
        print(f"fakit: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # the launch has been stopped (fakit.backends.cpu)
        print("fakit: interrupted", file=sys.stderr)
        return 130
    except (KeyError, ValueError, FileNotFoundError) as exc:
        print(f"fakit: error: {error_text(exc)}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `fakit ... | head`: the reader has seen enough
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
