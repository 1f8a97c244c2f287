"""The TensorFlow / ONNX parser plugins register every operator type of the package."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OFFICIAL = {
    "PromptFlashAttention",
    "IncreFlashAttention",
    "FlashAttentionScore",
    "FlashAttentionScoreGrad",
    "SparseFlashAttentionGrad",
}


def registered(path: Path, macro: str):
    return re.findall(rf'^{macro}\("([A-Za-z0-9]+)"\);', path.read_text(), re.M)


def op_host_types():
    return {m for f in ROOT.glob("op_host/*/*_def.cpp") for m in re.findall(r"OP_ADD\((\w+)", f.read_text())}


def test_tf_plugin_maps_every_official_op_type_once():
    types = registered(ROOT / "framework/tf_plugin/tensorflow_flash_attention_plugin.cc", "FA_TF_OP")
    assert sorted(types) == sorted(OFFICIAL)


def test_onnx_plugin_maps_every_official_op_type_in_our_domain():
    path = ROOT / "framework/onnx_plugin/onnx_flash_attention_plugin.cc"
    assert sorted(registered(path, "FA_ONNX_OP")) == sorted(OFFICIAL)
    import ascend_fa

    assert f'"{ascend_fa.NAMESPACE}::1::" OP_TYPE' in path.read_text()


def test_every_registered_op_type_has_plugins():
    types = op_host_types()
    assert "PromptFlashAttention" in types and types <= OFFICIAL
