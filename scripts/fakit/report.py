"""Plain-text tables for the CLI (no dependency beyond the standard library)."""
from __future__ import annotations

from typing import Iterable, List, Sequence


def fmt(value, spec: str = ".3g") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return format(value, spec)
    return str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence], max_width: int = 60) -> str:
    """Left-aligned columns separated by two spaces; cells longer than max_width are cut."""
    cells: List[List[str]] = [[str(h) for h in headers]]
    for row in rows:
        cells.append([_cut(fmt(c), max_width) for c in row])
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
