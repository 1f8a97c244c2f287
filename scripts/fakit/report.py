"""Plain-text tables, legends and CSV for the CLI (no dependency beyond the standard library)."""

from __future__ import annotations

import csv
import io
import shutil
import sys
from typing import Dict, Iterable, List, Optional, Sequence


def fmt(value, spec: str = ".3g") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return format(value, spec)
    return str(value)


def terminal_width() -> Optional[int]:
    """Columns of the terminal stdout writes to, or None when it is not a terminal (a pipe or a
    file gets whole lines: nothing is cut where a program or a log reads it)."""
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size((120, 24)).columns


def table(headers: Sequence[str], rows: Iterable[Sequence], max_width: int = 60, width: Optional[int] = None) -> str:
    """Left-aligned columns separated by two spaces. Cells longer than max_width are cut, except
    in the last column, which is only cut to fit `width` (default: the terminal's; no limit when
    stdout is not a terminal). Put the long free-text column last."""
    cells: List[List[str]] = [[str(h) for h in headers]]
    for row in rows:
        r = [fmt(c) for c in row]
        cells.append([_cut(c, max_width) for c in r[:-1]] + r[-1:])
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    total = width if width is not None else terminal_width()
    if total is not None:
        room = max(12, total - sum(widths[:-1]) - 2 * (len(headers) - 1))
        for r in cells[1:]:
            r[-1] = _cut(r[-1], room)
        widths[-1] = max(len(r[-1]) for r in cells)
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def legend(explanations: Dict[str, str]) -> str:
    """'Columns: NAME what it is; ...' wrapped to the terminal (or 100 columns)."""
    import textwrap

    text = "; ".join(f"{k} {v}" for k, v in explanations.items())
    return textwrap.fill("Columns: " + text, width=min(terminal_width() or 100, 120), subsequent_indent="  ")


def to_csv(headers: Sequence[str], rows: Iterable[Sequence]) -> str:
    """CSV text with a header row; None cells are empty."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(headers)
    for row in rows:
        w.writerow(["" if c is None else c for c in row])
    return buf.getvalue()


def write_text(path: str, text: str) -> None:
    """Write `text` to `path`; '-' means stdout."""
    if path == "-":
        sys.stdout.write(text)
        return
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
