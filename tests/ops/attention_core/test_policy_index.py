"""policies.h opens with the index of every seam policy (seam, tag, file). This keeps it true:
every specialisation of a seam template in op_kernel/attention_core is listed under its seam
with the file that defines it, every listed tag is defined there, and every policy inherits its
seam's base (the one place its defaults come from)."""

import re
from pathlib import Path

CORE = Path(__file__).resolve().parents[3] / "op_kernel" / "attention_core"
SEAMS = ("WorkSplit", "KvSource", "ScoreMod", "MaskMod", "SoftmaxMod")
# [template <...>] struct MaskMod<MaskDecode> : MaskModBase {   /   struct KvSource<KvDecodeInt8<T>> : public ...
SPECIALISATION = re.compile(
    r"^(?:template <[^>]*>\s*)?struct (" + "|".join(SEAMS) + r")<(\w+)(<\w+>)?>\s*(:[^{]*)?\{", re.M
)


def index():
    text = (CORE / "forward" / "policies.h").read_text()
    rows, seam = {}, None
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        m = re.match(r"//\s+(\w+)?\s+(\w+(?:<T>)?)\s+([\w/]+\.h)\s+\S", line)
        if not m:
            continue
        seam = m.group(1) or seam
        if seam in SEAMS:
            rows[(seam, m.group(2).replace("<T>", ""))] = m.group(3)
    return rows


def specialisations():
    found = {}
    for header in sorted(CORE.rglob("*.h")):
        for m in SPECIALISATION.finditer(header.read_text()):
            found[(m.group(1), m.group(2))] = (header.relative_to(CORE).as_posix(), m.group(4) or "")
    return found


def test_index_lists_every_policy_where_it_is_defined():
    listed, defined = index(), specialisations()
    assert len(listed) >= 10, "the index table of policies.h was not found"
    assert {k: f for k, (f, _) in defined.items()} == listed


# template <...> struct KvRingSource : public KvSource<KvDecode> {   (a shared implementation)
HELPER = re.compile(r"^(?:template <[^>]*>\s*)?(?:struct|class) (\w+)\s*:([^{]*)\{", re.M)


def test_every_policy_inherits_its_seam_base():
    helpers = {}
    for header in sorted(CORE.rglob("*.h")):
        helpers.update({m.group(1): m.group(2) for m in HELPER.finditer(header.read_text())})
    for (seam, tag), (_, bases) in specialisations().items():
        # KvDecode's ring sources derive from KvRingSource, which derives from KvSource<KvDecode>,
        # which inherits the base
        names = re.findall(r"(\w+)<", bases)
        bases += "".join(helpers.get(n, "") for n in names)
        assert f"{seam}Base" in bases or f"{seam}<" in bases, f"{seam}<{tag}> does not inherit {seam}Base"


def test_every_element_wise_policy_names_host_includable_params():
    """Score and mask policies (and softmax ones other than the plain default) name their POD
    Params, defined in the host-includable policy_params.h."""
    params_header = (CORE / "forward" / "policy_params.h").read_text()
    assert "kernel_operator.h" not in params_header
    for header in sorted(CORE.rglob("*.h")):
        text = header.read_text()
        for m in SPECIALISATION.finditer(text):
            seam, tag = m.group(1), m.group(2)
            if seam not in ("ScoreMod", "MaskMod", "SoftmaxMod") or tag == "SoftmaxPlain":
                continue
            body = text[m.end() : m.end() + 400]
            params = re.search(r"using Params = (\w+);", body)
            assert params, f"{seam}<{tag}> ({header.name}) names no Params"
            assert f"struct {params.group(1)} {{" in params_header, f"{params.group(1)} is not in policy_params.h"
