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
        from .. import ops

        if value in ops.REGISTRY:  # an extra binding (tests, proof operators): its own name
            return value
        raise argparse.ArgumentTypeError(str(exc)) from None


def operator_or_binding(value: str) -> str:
    """argparse type of `prof`: like operator(), but a name the table does not know is passed on
    unchanged — the backend then looks it up among its bindings and lists them if it is absent."""
    try:
        return opnames.resolve(value)
    except opnames.UnknownOperator:
        return value


def add_op(parser, required: bool = False, allow_all: bool = False, extra: str = "", lenient: bool = False) -> None:
    parser.add_argument(
        "--op",
        type=operator_or_binding if lenient else operator,
        required=required,
        metavar="OP",
        help="operator, by any of its names: pfa, prompt_flash_attention, "
        "PromptFlashAttention, aclnnPromptFlashAttention, ..." + (" or 'all'" if allow_all else "") + extra,
    )


def add_max_seq(parser) -> None:
    parser.add_argument(
        "--max-seq",
        type=int,
        default=None,
        metavar="N",
        help="leave out peer cases with a sequence longer than N (small machines: "
        "--max-seq 1025 keeps lengths up to 1025)",
    )


def apply_max_seq(args) -> None:
    if getattr(args, "max_seq", None):
        os.environ["FAKIT_MAX_SEQ"] = str(args.max_seq)


def add_soc(parser) -> None:
    parser.add_argument(
        "--soc", default=None, help="SoC to emulate (cpu) or simulate (sim), e.g. ascend910b3; default: ascend910b2"
    )


def apply_soc(args) -> None:
    """--soc for every backend: the sim/npu runners read FAKIT_SOC, the emulator ASCEND_EMU_SOC.
    An unsupported SoC fails here, before any work."""
    if getattr(args, "soc", None):
        from .. import cann

        cann.soc_version(args.soc)
        os.environ["FAKIT_SOC"] = args.soc
        os.environ["ASCEND_EMU_SOC"] = args.soc
