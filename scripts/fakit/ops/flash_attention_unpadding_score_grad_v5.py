"""Binding of aclnnFlashAttentionUnpaddingScoreGradV5 (spec 003) for the aclnn backends.

fakit.run("flash_attention_unpadding_score_grad_v5", backend="cpu", **kw) takes the keywords
of fakit.golden.flash_attention_unpadding_score_grad_v5 and returns the golden's dict
(dq, dq_rope, dk, dk_rope, dv, dpse, dsink): dq/dk/dv in the input dtype, rope gradients
when query_rope is given, dsink (float32 [head_num]) when sink is given, dpse None.
"""

import numpy as np

from . import OpBinding, Param, optional_outputs


def _ints(x):
    return None if x is None else [int(v) for v in np.asarray(x).reshape(-1)]


def _prepare(kw):
    return {
        "query": kw["query"],
        "queryRope": kw.get("query_rope"),
        "keyIn": kw["key"],
        "keyInRope": kw.get("key_rope"),
        "value": kw["value"],
        "dy": kw["dy"],
        "pseShiftOptional": kw.get("pse_shift"),
        "dropMaskOptional": kw.get("drop_mask"),
        "paddingMaskOptional": kw.get("padding_mask"),
        "attenMaskOptional": kw.get("atten_mask"),
        "softmaxMaxOptional": kw.get("softmax_max"),
        "softmaxSumOptional": kw.get("softmax_sum"),
        "softmaxInOptional": kw.get("softmax_in"),
        "attentionInOptional": kw.get("attention_in"),
        "sinkInOptional": kw.get("sink"),
        "prefixOptional": _ints(kw.get("prefix")),
        "actualSeqQLenOptional": _ints(kw.get("actual_seq_qlen")),
        "actualSeqKvLenOptional": _ints(kw.get("actual_seq_kvlen")),
        "qStartIdxOptional": _ints(kw.get("q_start_idx")),
        "kvStartIdxOptional": _ints(kw.get("kv_start_idx")),
        "scaleValue": float(kw.get("scale_value", 1.0)),
        "keepProb": float(kw.get("keep_prob", 1.0)),
        "preTokens": int(kw.get("pre_tokens", 2147483647)),
        "nextTokens": int(kw.get("next_tokens", 2147483647)),
        "headNum": int(kw["head_num"]),
        "inputLayout": str(kw.get("input_layout", "TND")),
        "innerPrecise": int(kw.get("inner_precise", 0)),
        "sparseMode": int(kw.get("sparse_mode", 0)),
        "pseType": int(kw.get("pse_type", 1)),
        "softmaxInLayout": str(kw.get("softmax_in_layout", "")),
    }


def _make_outputs(kw):
    """Outputs from the prepared (aclnn-named) values."""
    q, k, v = (np.asarray(kw[n]) for n in ("query", "keyIn", "value"))
    outs = {
        "dqOut": np.zeros(q.shape, q.dtype),
        "dkOut": np.zeros(k.shape, k.dtype),
        "dvOut": np.zeros(v.shape, v.dtype),
    }
    outs.update(
        optional_outputs(
            kw,
            [
                ("dqRopeOut", "queryRope", q.dtype),
                ("dkRopeOut", "keyInRope", k.dtype),
                ("dsinkOut", "sinkInOptional", np.float32),
            ],
        )
    )
    return outs


def _result(outs):
    return dict(
        dq=outs["dqOut"],
        dq_rope=outs.get("dqRopeOut"),
        dk=outs["dkOut"],
        dk_rope=outs.get("dkRopeOut"),
        dv=outs["dvOut"],
        dpse=None,
        dsink=outs.get("dsinkOut"),
    )


_T = lambda name: Param(name, "tensor", optional=True)  # noqa: E731
_A = lambda name: Param(name, "int_array", optional=True)  # noqa: E731
_O = lambda name: Param(name, "out_tensor", optional=True)  # noqa: E731

BINDING = OpBinding(
    op="flash_attention_unpadding_score_grad_v5",
    aclnn="aclnnFlashAttentionUnpaddingScoreGradV5",
    params=[
        Param("query", "tensor"),
        _T("queryRope"),
        Param("keyIn", "tensor"),
        _T("keyInRope"),
        Param("value", "tensor"),
        Param("dy", "tensor"),
        _T("pseShiftOptional"),
        _T("dropMaskOptional"),
        _T("paddingMaskOptional"),
        _T("attenMaskOptional"),
        _T("softmaxMaxOptional"),
        _T("softmaxSumOptional"),
        _T("softmaxInOptional"),
        _T("attentionInOptional"),
        _T("sinkInOptional"),
        _A("prefixOptional"),
        _A("actualSeqQLenOptional"),
        _A("actualSeqKvLenOptional"),
        _A("qStartIdxOptional"),
        _A("kvStartIdxOptional"),
        Param("scaleValue", "double"),
        Param("keepProb", "double"),
        Param("preTokens", "int64"),
        Param("nextTokens", "int64"),
        Param("headNum", "int64"),
        Param("inputLayout", "string"),
        Param("innerPrecise", "int64"),
        Param("sparseMode", "int64"),
        Param("pseType", "int64"),
        Param("softmaxInLayout", "string"),
        Param("dqOut", "out_tensor"),
        _O("dqRopeOut"),
        Param("dkOut", "out_tensor"),
        _O("dkRopeOut"),
        Param("dvOut", "out_tensor"),
        _O("dpseOut"),
        _O("dsinkOut"),
    ],
    make_outputs=_make_outputs,
    result=_result,
    prepare=_prepare,
    header="aclnnop/aclnn_flash_attention_score_grad.h",
)
