"""Binding of aclnnPromptFlashAttention (spec 000) for the aclnn backends.

fakit.run("prompt_flash_attention", backend="cpu", **kw) takes the keywords of
fakit.golden.prompt_flash_attention and returns attention_out in query's dtype (the BSND form
of query for input_layout BNSD_BSND).
"""

import numpy as np

from . import OpBinding, Param


def _out_shape(kw):
    q = np.asarray(kw["query"])
    if kw.get("inputLayout") == "BNSD_BSND" and q.ndim == 4:
        b, n, s, d = q.shape
        return (b, s, n, d)
    return q.shape


def _prepare(kw):
    lens = kw.get("actual_seq_lengths")
    return {
        "query": kw["query"],
        "key": kw["key"],
        "value": kw["value"],
        "pseShift": kw.get("pse_shift"),
        "attenMask": kw.get("atten_mask"),
        "actualSeqLengths": None if lens is None else [int(x) for x in np.asarray(lens).reshape(-1)],
        "numHeads": int(kw["num_heads"]),
        "scaleValue": float(kw.get("scale_value", 1.0)),
        "preTokens": int(kw.get("pre_tokens", 2147483647)),
        "nextTokens": int(kw.get("next_tokens", 0)),
        "inputLayout": str(kw.get("input_layout", "BSH")),
        "numKeyValueHeads": int(kw.get("num_key_value_heads", 0)),
    }


def _make_outputs(kw):
    q = np.asarray(kw["query"])
    return {"attentionOut": np.zeros(_out_shape(kw), q.dtype)}


BINDING = OpBinding(
    op="prompt_flash_attention",
    aclnn="aclnnPromptFlashAttention",
    params=[
        Param("query", "tensor"),
        Param("key", "tensor"),
        Param("value", "tensor"),
        Param("pseShift", "tensor", optional=True),
        Param("attenMask", "tensor", optional=True),
        Param("actualSeqLengths", "int_array", optional=True),
        Param("numHeads", "int64"),
        Param("scaleValue", "double"),
        Param("preTokens", "int64"),
        Param("nextTokens", "int64"),
        Param("inputLayout", "string"),
        Param("numKeyValueHeads", "int64"),
        Param("attentionOut", "out_tensor"),
    ],
    make_outputs=_make_outputs,
    result=lambda outs: outs["attentionOut"],
    prepare=_prepare,
    header="aclnnop/aclnn_prompt_flash_attention.h",
)
