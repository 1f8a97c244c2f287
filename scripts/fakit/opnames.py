"""One name per operator everywhere: every spelling a user may type resolves to the harness name.

An operator is known by five names: the harness name (the fakit.golden function, the case
module), the source directory (op_host/<dir>, op_kernel/<dir>), the OpType (OP_ADD), the aclnn
API and a short alias (the case-id prefix). `resolve()` accepts any of them, case-insensitively,
with '-' for '_'; an unknown name raises UnknownOperator listing the choices (and the closest).

Standard library only: build.sh runs this file as a script before any package is installed:
    python3 scripts/fakit/opnames.py --dirs pfa,aclnnIncreFlashAttentionV4   -> prompt_flash_attention,incre_flash_attention
"""

from __future__ import annotations

import difflib
import sys
from typing import Dict, List, NamedTuple


class Operator(NamedTuple):
    name: str  # harness name: fakit.golden.<name>, fakit/cases/<name>.py
    directory: str  # op_host/<directory>, op_kernel/<directory>, build.sh --ops
    op_type: str  # OP_ADD(<op_type>), `fakit ops`
    aclnn: str  # the public API
    alias: str  # short name, the case-id prefix


OPERATORS: List[Operator] = [
    Operator(
        "prompt_flash_attention", "prompt_flash_attention", "PromptFlashAttention", "aclnnPromptFlashAttention", "pfa"
    ),
    Operator(
        "flash_attention_var_len_score",
        "flash_attention_score",
        "FlashAttentionScore",
        "aclnnFlashAttentionVarLenScore",
        "fav",
    ),
    Operator(
        "incre_flash_attention_v4", "incre_flash_attention", "IncreFlashAttention", "aclnnIncreFlashAttentionV4", "ifa"
    ),
    Operator(
        "flash_attention_unpadding_score_grad_v5",
        "flash_attention_score_grad",
        "FlashAttentionScoreGrad",
        "aclnnFlashAttentionUnpaddingScoreGradV5",
        "fag",
    ),
    Operator(
        "sparse_flash_attention_grad",
        "sparse_flash_attention_grad",
        "SparseFlashAttentionGrad",
        "aclnnSparseFlashAttentionGrad",
        "sfag",
    ),
]
NAMES = tuple(op.name for op in OPERATORS)


class UnknownOperator(KeyError, ValueError):
    """A name no operator has; the message lists every accepted spelling. A KeyError (a failed
    look-up) and a ValueError (a bad argument to fakit.run and the CLI)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def _key(text: str) -> str:
    return text.strip().lower().replace("-", "_")


def _index() -> Dict[str, Operator]:
    index: Dict[str, Operator] = {}
    for op in OPERATORS:
        for spelling in (op.name, op.directory, op.op_type, op.aclnn, op.alias):
            index[_key(spelling)] = op
    return index


_INDEX = _index()


def choices() -> str:
    """One line per operator: every accepted spelling."""
    return "\n".join(
        f"  {op.name} (dir {op.directory}, OpType {op.op_type}, {op.aclnn}, alias {op.alias})" for op in OPERATORS
    )


def lookup(name: str) -> Operator:
    """The Operator any of whose names is `name`; UnknownOperator otherwise."""
    op = _INDEX.get(_key(str(name)))
    if op is not None:
        return op
    close = difflib.get_close_matches(_key(str(name)), list(_INDEX), n=1, cutoff=0.6)
    hint = f" Did you mean {_INDEX[close[0]].name!r}?" if close else ""
    raise UnknownOperator(f"unknown operator {name!r}.{hint} Any of these names works:\n{choices()}")


def resolve(name: str) -> str:
    """The harness name of operator `name` (any spelling)."""
    return lookup(name).name


def resolve_list(names: str, attr: str = "name") -> List[str]:
    """'a,b' (any spellings) -> the given attribute of each operator, in order, without repeats;
    'all' or '' -> every operator."""
    parts = [n for n in (p.strip() for p in str(names).split(",")) if n]
    ops = OPERATORS if not parts or parts == ["all"] else [lookup(p) for p in parts]
    out: List[str] = []
    for op in ops:
        value = getattr(op, attr)
        if value not in out:
            out.append(value)
    return out


def main(argv=None) -> int:
    """`opnames.py --dirs a,b` prints the directory names (for build.sh); `--names` the harness names."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] not in ("--dirs", "--names"):
        print("usage: opnames.py --dirs|--names NAME[,NAME...]", file=sys.stderr)
        return 2
    try:
        print(",".join(resolve_list(argv[1], "directory" if argv[0] == "--dirs" else "name")))
    except UnknownOperator as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
