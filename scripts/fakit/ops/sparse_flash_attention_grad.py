"""Binding of aclnnSparseFlashAttentionGrad (spec 004) for the aclnn backends.

fakit.run("sparse_flash_attention_grad", backend="cpu", **kw) takes the keywords of
fakit.golden.sparse_flash_attention_grad and returns the golden's dict (d_query, d_key,
d_value, d_query_rope, d_key_rope) in the input dtype; the rope gradients are None without
query_rope. sparse_indices keep their integer dtype (INT32 or INT64); the actual sequence
lengths (cumulative with TND, per batch with BSND, as the golden takes them) are passed as
INT64 tensors unless given as an int32 array.
"""

import numpy as np

from . import OpBinding, Param, optional_outputs


def _lengths(x):
    if x is None:
        return None
    arr = np.asarray(x)
    return np.ascontiguousarray(arr.reshape(-1), dtype=np.int32 if arr.dtype == np.int32 else np.int64)


def _array(x, dtype=None):
    """None stays None: a missing argument is the C API's to judge (161001), not a NaN scalar."""
    return None if x is None else np.asarray(x, dtype)


def _prepare(kw):
    return {
        "query": _array(kw["query"]),
        "key": kw["key"],
        "value": kw["value"],
        "sparseIndices": _array(kw["sparse_indices"]),
        "dOut": kw["d_out"],
        "out": kw["out"],
        "softmaxMax": _array(kw["softmax_max"], np.float32),
        "softmaxSum": _array(kw["softmax_sum"], np.float32),
        "actualSeqLengthsQueryOptional": _lengths(kw.get("actual_seq_lengths_query")),
        "actualSeqLengthskvOptional": _lengths(kw.get("actual_seq_lengths_kv")),
        "queryRopeOptional": kw.get("query_rope"),
        "keyRopeOptional": kw.get("key_rope"),
        "scaleValue": float(kw["scale_value"]),
        "sparseBlockSize": int(kw.get("sparse_block_size", 1)),
        "layoutOptional": kw.get("layout", "BSND"),
        "sparseMode": int(kw.get("sparse_mode", 0)),
        "preTokens": int(kw.get("pre_tokens", 2147483647)),
        "nextTokens": int(kw.get("next_tokens", 2147483647)),
        "deterministic": bool(kw.get("deterministic", False)),
    }


def _make_outputs(kw):
    """Outputs from the prepared (aclnn-named) values."""
    q, k, v = (np.asarray(kw[n]) for n in ("query", "key", "value"))
    outs = {
        "dQueryOut": np.zeros(q.shape, q.dtype),
        "dKeyOut": np.zeros(k.shape, q.dtype),
        "dValueOut": np.zeros(v.shape, q.dtype),
    }
    outs.update(
        optional_outputs(
            kw,
            [
                ("dQueryRopeOutOptional", "queryRopeOptional", q.dtype),
                ("dKeyRopeOutOptional", "keyRopeOptional", q.dtype),
            ],
        )
    )
    return outs


def _result(outs):
    return dict(
        d_query=outs["dQueryOut"],
        d_key=outs["dKeyOut"],
        d_value=outs["dValueOut"],
        d_query_rope=outs.get("dQueryRopeOutOptional"),
        d_key_rope=outs.get("dKeyRopeOutOptional"),
    )


_T = lambda name: Param(name, "tensor", optional=True)  # noqa: E731
_O = lambda name: Param(name, "out_tensor", optional=True)  # noqa: E731

BINDING = OpBinding(
    op="sparse_flash_attention_grad",
    aclnn="aclnnSparseFlashAttentionGrad",
    params=[
        Param("query", "tensor"),
        Param("key", "tensor"),
        Param("value", "tensor"),
        Param("sparseIndices", "tensor"),
        Param("dOut", "tensor"),
        Param("out", "tensor"),
        Param("softmaxMax", "tensor"),
        Param("softmaxSum", "tensor"),
        _T("actualSeqLengthsQueryOptional"),
        _T("actualSeqLengthskvOptional"),
        _T("queryRopeOptional"),
        _T("keyRopeOptional"),
        Param("scaleValue", "double"),
        Param("sparseBlockSize", "int64"),
        Param("layoutOptional", "string"),
        Param("sparseMode", "int64"),
        Param("preTokens", "int64"),
        Param("nextTokens", "int64"),
        Param("deterministic", "bool"),
        Param("dQueryOut", "out_tensor"),
        Param("dKeyOut", "out_tensor"),
        Param("dValueOut", "out_tensor"),
        _O("dQueryRopeOutOptional"),
        _O("dKeyRopeOutOptional"),
    ],
    make_outputs=_make_outputs,
    result=_result,
    prepare=_prepare,
    header="aclnnop/aclnn_sparse_flash_attention_grad.h",
)
