"""Every tiling key a kernel entry tests is one CANN's kernel compiler can collect.

The compiler finds an entry's keys by matching ``g_tilingKey == (<integer>`` in the
preprocessed source (``TILING_KEY_IS(k)`` is ``(g_tilingKey == (k))``; asc-devkit
``tools/build/asc_op_compile_base/asc_op_compiler/kernel_info_infer.py``, ``find_tilingkey``),
and rejects a key spelled as a constexpr name or a call. So every argument must be an integer
literal or a macro defined as one.
"""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
KEY_IS = re.compile(r"TILING_KEY_IS\(([^()]*(?:\([^()]*\))?[^()]*)\)")
DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+(\S+)\s*$", re.M)
INTEGER = re.compile(r"-?\d+[uUlL]*")


def _macros():
    found = {}
    for path in list((REPO / "op_kernel").rglob("*.h")) + list((REPO / "tests/emulator/kernels").rglob("*.h")):
        for name, value in DEFINE.findall(path.read_text()):
            found[name] = value
    return found


def _entries():
    return sorted(
        list((REPO / "op_kernel").glob("*/*.cpp")) + list((REPO / "tests/emulator/kernels").glob("*/*_kernel.cpp"))
    )


def test_every_tiling_key_expands_to_an_integer_literal():
    macros = _macros()
    checked, bad = 0, []
    for path in _entries():
        for arg in KEY_IS.findall(path.read_text()):
            text = arg.strip()
            seen = set()
            while text in macros and text not in seen:  # object-like macros expand to their value
                seen.add(text)
                text = macros[text]
            checked += 1
            if not INTEGER.fullmatch(text):
                bad.append(f"{path.relative_to(REPO)}: TILING_KEY_IS({arg.strip()}) expands to '{text}'")
    assert checked >= 20, f"only {checked} TILING_KEY_IS found: did the entries move?"
    assert not bad, "tiling keys CANN's kernel compiler cannot collect:\n" + "\n".join(bad)


def test_the_check_rejects_a_constexpr_key():
    assert not INTEGER.fullmatch("ForwardTilingKey(PFA_TILING_KEY_FP16, true)")
    assert not INTEGER.fullmatch("(0)")
    assert INTEGER.fullmatch("110") and INTEGER.fullmatch("2UL")
