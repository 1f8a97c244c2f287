"""Binding of aclnnIncreFlashAttentionV4 (spec 002) for the aclnn backends.

fakit.run("incre_flash_attention_v4", backend="cpu", **kw) takes the keywords of
fakit.golden.incre_flash_attention_v4 (key/value are lists of arrays: the aclTensorList) and
returns attention_out in the query's dtype (int8 when a non-empty quant_scale2 is given).
"""

import numpy as np

from . import OpBinding, Param


def _opt(kw, name, dtype=None):
    v = kw.get(name)
    if v is None:
        return None
    return np.asarray(v) if dtype is None else np.asarray(v, dtype=dtype)


def _list(items):
    """The aclTensorList; None stays None (a null pointer the C API rejects with 161001)."""
    return None if items is None else [np.asarray(t) for t in items]


def _prepare(kw):
    lens = kw.get("actual_seq_lengths")
    pad = kw.get("kv_padding_size")
    return {
        "query": kw["query"],
        "key": _list(kw["key"]),
        "value": _list(kw["value"]),
        "pseShift": _opt(kw, "pse_shift"),
        "attenMask": _opt(kw, "atten_mask"),
        "actualSeqLengths": None if lens is None else [int(x) for x in np.asarray(lens).reshape(-1)],
        "dequantScale1": _opt(kw, "dequant_scale1"),
        "quantScale1": _opt(kw, "quant_scale1"),
        "dequantScale2": _opt(kw, "dequant_scale2"),
        "quantScale2": _opt(kw, "quant_scale2"),
        "quantOffset2": _opt(kw, "quant_offset2"),
        "antiquantScale": _opt(kw, "antiquant_scale"),
        "antiquantOffset": _opt(kw, "antiquant_offset"),
        "blocktable": _opt(kw, "block_table", np.int32),
        "kvPaddingSize": None if pad is None else np.asarray(pad, dtype=np.int64).reshape(-1),
        "numHeads": int(kw["num_heads"]),
        "scaleValue": float(kw.get("scale_value", 1.0)),
        "inputLayout": str(kw.get("input_layout", "BSH")),
        "numKeyValueHeads": int(kw.get("num_key_value_heads", 0)),
        "blockSize": int(kw.get("block_size", 0)),
        "innerPrecise": int(kw.get("inner_precise", 1)),
    }


def _make_outputs(kw):
    q = np.asarray(kw["query"])
    scale = kw.get("quantScale2")
    dtype = np.int8 if scale is not None and np.size(scale) else q.dtype
    return {"attentionOut": np.zeros(q.shape, dtype)}


BINDING = OpBinding(
    op="incre_flash_attention_v4",
    aclnn="aclnnIncreFlashAttentionV4",
    params=[
        Param("query", "tensor"),
        Param("key", "tensor_list"),
        Param("value", "tensor_list"),
        Param("pseShift", "tensor", optional=True),
        Param("attenMask", "tensor", optional=True),
        Param("actualSeqLengths", "int_array", optional=True),
        Param("dequantScale1", "tensor", optional=True),
        Param("quantScale1", "tensor", optional=True),
        Param("dequantScale2", "tensor", optional=True),
        Param("quantScale2", "tensor", optional=True),
        Param("quantOffset2", "tensor", optional=True),
        Param("antiquantScale", "tensor", optional=True),
        Param("antiquantOffset", "tensor", optional=True),
        Param("blocktable", "tensor", optional=True),
        Param("kvPaddingSize", "tensor", optional=True),
        Param("numHeads", "int64"),
        Param("scaleValue", "double"),
        Param("inputLayout", "string"),
        Param("numKeyValueHeads", "int64"),
        Param("blockSize", "int64"),
        Param("innerPrecise", "int64"),
        Param("attentionOut", "out_tensor"),
    ],
    make_outputs=_make_outputs,
    result=lambda outs: outs["attentionOut"],
    prepare=_prepare,
    header="aclnnop/aclnn_incre_flash_attention_v4.h",
)
