"""Options several subcommands share: the operator name (through the one resolver,
fakit.opnames), the SoC and the peer suites' size cap."""
import argparse
import os

from .. import opnames

SUITES_HELP = "suite: smoke (seconds), full (minutes), peer (PFA/IFA only: the official ST cases)"


def operator(value: str) -> str:
    """argparse type: any operator name -> the harness name; an unknown one lists the choices."""
    if value == "all":
        return value
    try:
        return opnames.resolve(value)
    except opnames.UnknownOperator as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_op(parser, required: bool = False, allow_all: bool = False, extra: str = "") -> None:
    parser.add_argument("--op", type=operator, required=required, metavar="OP",
                        help="operator, by any of its names: pfa, prompt_flash_attention, "
                             "PromptFlashAttention, aclnnPromptFlashAttention, ..."
                             + (" or 'all'" if allow_all else "") + extra)


def add_max_seq(parser) -> None:
    parser.add_argument("--max-seq", type=int, default=None, metavar="N",
                        help="leave out peer cases with a sequence longer than N (small machines: "
                             "--max-seq 1025 keeps lengths up to 1025)")


def apply_max_seq(args) -> None:
    if getattr(args, "max_seq", None):
        os.environ["FAKIT_MAX_SEQ"] = str(args.max_seq)
