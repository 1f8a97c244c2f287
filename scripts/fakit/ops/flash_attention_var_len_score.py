"""Binding of aclnnFlashAttentionVarLenScore (spec 001) for the aclnn backends.

fakit.run("flash_attention_var_len_score", backend="cpu", **kw) takes the keywords of
fakit.golden.flash_attention_var_len_score and returns dict(softmax_max [T,N,8] float32,
softmax_sum [T,N,8] float32, attention_out [T,N,D] in query's dtype), as the golden does.
"""

import numpy as np

from . import OpBinding, Param

MAX_INT = 2147483647


def _ints(v):
    return None if v is None else [int(x) for x in np.asarray(v).reshape(-1)]


def _prepare(kw):
    return {
        "query": kw["query"],
        "key": kw["key"],
        "value": kw["value"],
        "realShiftOptional": kw.get("real_shift"),
        "dropMaskOptional": kw.get("drop_mask"),
        "paddingMaskOptional": kw.get("padding_mask"),
        "attenMaskOptional": kw.get("atten_mask"),
        "prefixOptional": _ints(kw.get("prefix")),
        "actualSeqQLenOptional": _ints(kw.get("actual_seq_qlen")),
        "actualSeqKvLenOptional": _ints(kw.get("actual_seq_kvlen")),
        "scaleValueOptional": float(kw.get("scale_value", 1.0)),
        "keepProbOptional": float(kw.get("keep_prob", 1.0)),
        "preTokensOptional": int(kw.get("pre_tokens", MAX_INT)),
        "nextTokensOptional": int(kw.get("next_tokens", MAX_INT)),
        "headNum": int(kw["head_num"]),
        "inputLayout": str(kw.get("input_layout", "TND")),
        "innerPreciseOptional": int(kw.get("inner_precise", 0)),
        "sparseModeOptional": int(kw.get("sparse_mode", 0)),
    }


def _make_outputs(kw):
    # Zero-filled: rows of T past the last cumulative length are not written (as in the golden).
    q = np.asarray(kw["query"])
    stat = (q.shape[0], q.shape[1], 8) if q.ndim == 3 else (0,)
    return {
        "softmaxMaxOut": np.zeros(stat, np.float32),
        "softmaxSumOut": np.zeros(stat, np.float32),
        "attentionOutOut": np.zeros(q.shape, q.dtype),
    }


BINDING = OpBinding(
    op="flash_attention_var_len_score",
    aclnn="aclnnFlashAttentionVarLenScore",
    params=[
        Param("query", "tensor"),
        Param("key", "tensor"),
        Param("value", "tensor"),
        Param("realShiftOptional", "tensor", optional=True),
        Param("dropMaskOptional", "tensor", optional=True),
        Param("paddingMaskOptional", "tensor", optional=True),
        Param("attenMaskOptional", "tensor", optional=True),
        Param("prefixOptional", "int_array", optional=True),
        Param("actualSeqQLenOptional", "int_array", optional=True),
        Param("actualSeqKvLenOptional", "int_array", optional=True),
        Param("scaleValueOptional", "double"),
        Param("keepProbOptional", "double"),
        Param("preTokensOptional", "int64"),
        Param("nextTokensOptional", "int64"),
        Param("headNum", "int64"),
        Param("inputLayout", "string"),
        Param("innerPreciseOptional", "int64"),
        Param("sparseModeOptional", "int64"),
        Param("softmaxMaxOut", "out_tensor"),
        Param("softmaxSumOut", "out_tensor"),
        Param("softmaxOutOut", "out_tensor", optional=True),
        Param("attentionOutOut", "out_tensor"),
    ],
    make_outputs=_make_outputs,
    result=lambda outs: {
        "softmax_max": outs["softmaxMaxOut"],
        "softmax_sum": outs["softmaxSumOut"],
        "attention_out": outs["attentionOutOut"],
    },
    prepare=_prepare,
    header="aclnnop/aclnn_flash_attention_score.h",
)
