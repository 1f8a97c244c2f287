"""PyTorch custom ops for the FlashAttention operators, named and shaped like torch_npu's.

    import ascend_fa            # installed with the project: pip install -e ".[torch]"
    out = torch.ops.ascend_fa.npu_prompt_flash_attention(q, k, v, num_heads=8, input_layout="BNSD")

CPU tensors run on the project's `cpu` target (the Ascend C kernels on the emulator) through
fakit.run; FAKIT_TORCH_BACKEND=sim|npu|golden picks another fakit backend. NPU tensors
(PrivateUse1) go to torch_npu's own device path when torch_npu is importable. Fake/meta tensors
get the output shapes, so the ops trace under torch.compile / FakeTensorMode.

Operators: npu_prompt_flash_attention -> aclnnPromptFlashAttention, npu_incre_flash_attention ->
aclnnIncreFlashAttentionV4, npu_fusion_attention (TND varlen) -> aclnnFlashAttentionVarLenScore and
npu_fusion_attention_grad -> aclnnFlashAttentionUnpaddingScoreGradV5; npu_fusion_attention's
autograd backward calls npu_fusion_attention_grad with the saved statistics.

A torch_npu argument the aclnn API behind the op does not have (e.g. quantisation of
npu_prompt_flash_attention, which maps to aclnnPromptFlashAttention) raises NotImplementedError
naming it; so does an operator the cpu target does not implement yet.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Optional

import ml_dtypes
import numpy as np

try:
    import torch
except ImportError as exc:          # torch is an optional extra of the project
    raise ImportError("ascend_fa registers PyTorch ops and needs PyTorch: pip install -e '.[torch]' "
                      "(or pip install torch==2.13.0)") from exc

NAMESPACE = "ascend_fa"
_lib = torch.library.Library(NAMESPACE, "DEF")

# Schemas as torch_npu declares them (op-plugin's op_plugin_functions.yaml).
SCHEMAS = {
    "npu_prompt_flash_attention":
        "npu_prompt_flash_attention(Tensor query, Tensor key, Tensor value, *, Tensor? padding_mask=None, "
        "Tensor? atten_mask=None, Tensor? pse_shift=None, int[]? actual_seq_lengths=None, "
        "Tensor? deq_scale1=None, Tensor? quant_scale1=None, Tensor? deq_scale2=None, "
        "Tensor? quant_scale2=None, Tensor? quant_offset2=None, int num_heads=1, float scale_value=1., "
        "int pre_tokens=2147483647, int next_tokens=0, str input_layout=\"BSH\", int num_key_value_heads=0, "
        "int[]? actual_seq_lengths_kv=None, int sparse_mode=0) -> Tensor",
    "npu_incre_flash_attention":
        "npu_incre_flash_attention(Tensor query, Tensor key, Tensor value, *, Tensor? padding_mask=None, "
        "Tensor? atten_mask=None, Tensor? pse_shift=None, SymInt[]? actual_seq_lengths=None, "
        "Tensor? antiquant_scale=None, Tensor? antiquant_offset=None, Tensor? block_table=None, "
        "Tensor? dequant_scale1=None, Tensor? quant_scale1=None, Tensor? dequant_scale2=None, "
        "Tensor? quant_scale2=None, Tensor? quant_offset2=None, Tensor? kv_padding_size=None, "
        "int num_heads=1, float scale_value=1., str input_layout=\"BSH\", int num_key_value_heads=0, "
        "int block_size=0, int inner_precise=1) -> Tensor",
    "npu_fusion_attention":
        "npu_fusion_attention(Tensor query, Tensor key, Tensor value, int head_num, str input_layout, "
        "Tensor? pse=None, Tensor? padding_mask=None, Tensor? atten_mask=None, float scale=1., "
        "float keep_prob=1., int pre_tockens=2147483647, int next_tockens=2147483647, int inner_precise=0, "
        "int[]? prefix=None, int[]? actual_seq_qlen=None, int[]? actual_seq_kvlen=None, int sparse_mode=0, "
        "bool gen_mask_parallel=True, bool sync=False) -> (Tensor, Tensor, Tensor, Tensor, int, int, int)",
    "npu_fusion_attention_grad":
        "npu_fusion_attention_grad(Tensor query, Tensor key, Tensor value, Tensor dy, int head_num, "
        "str input_layout, *, Tensor? pse=None, Tensor? padding_mask=None, Tensor? atten_mask=None, "
        "Tensor? softmax_max=None, Tensor? softmax_sum=None, Tensor? softmax_in=None, "
        "Tensor? attention_in=None, float scale_value=1., float keep_prob=1., int pre_tockens=2147483647, "
        "int next_tockens=2147483647, int inner_precise=0, int seed=0, int offset=0, int numels=0, "
        "int[]? prefix=None, int[]? actual_seq_qlen=None, int[]? actual_seq_kvlen=None, int sparse_mode=0, "
        "bool gen_mask_parallel=True, bool sync=False) -> (Tensor, Tensor, Tensor, Tensor)",
}


# ------------------------------------------------------------------------------ conversions

def to_numpy(t: Optional[torch.Tensor]):
    if t is None:
        return None
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def from_numpy(a, dtype: torch.dtype) -> torch.Tensor:
    a = np.ascontiguousarray(a)
    if a.dtype == np.dtype(ml_dtypes.bfloat16):
        t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    else:
        t = torch.from_numpy(a)
    return t.to(dtype)


def _backend() -> str:
    return os.environ.get("FAKIT_TORCH_BACKEND", "cpu")


def _run(torch_op: str, fakit_op: str, kwargs: Dict[str, Any]):
    import fakit
    from fakit import ops
    if _backend() != "golden" and fakit_op not in ops.REGISTRY:
        raise NotImplementedError(f"{NAMESPACE}::{torch_op}: operator {fakit_op} is not implemented on the "
                                  f"{_backend()} target yet (implemented: {', '.join(sorted(ops.REGISTRY))})")
    try:
        return fakit.run(fakit_op, backend=_backend(), **kwargs)
    except fakit.BackendUnavailable as exc:
        raise NotImplementedError(f"{NAMESPACE}::{torch_op}: the {_backend()} target cannot run "
                                  f"{fakit_op}: {exc}") from exc
    except fakit.AclnnError as exc:
        raise RuntimeError(f"{NAMESPACE}::{torch_op}: {exc}") from exc


def _reject(torch_op: str, api: str, **given) -> None:
    """torch_npu arguments that the aclnn API behind the op does not take."""
    bad = [name for name, (value, neutral) in given.items() if value is not None and value != neutral]
    if bad:
        raise NotImplementedError(f"{NAMESPACE}::{torch_op} runs {api}, which has no "
                                  f"{', '.join(bad)}; leave {'it' if len(bad) == 1 else 'them'} at the default")


# ------------------------------------------------------------------- npu_prompt_flash_attention

def _pfa_out_shape(query, input_layout):
    if input_layout == "BNSD_BSND":                # input BNSD, output BSND
        b, n, s, d = query.shape
        return (b, s, n, d)
    return tuple(query.shape)


def pfa_cpu(query, key, value, *, padding_mask=None, atten_mask=None, pse_shift=None,
            actual_seq_lengths=None, deq_scale1=None, quant_scale1=None, deq_scale2=None,
            quant_scale2=None, quant_offset2=None, num_heads=1, scale_value=1.0,
            pre_tokens=2147483647, next_tokens=0, input_layout="BSH", num_key_value_heads=0,
            actual_seq_lengths_kv=None, sparse_mode=0):
    # padding_mask is a reserved, unused argument in torch_npu as well.
    _reject("npu_prompt_flash_attention", "aclnnPromptFlashAttention",
            deq_scale1=(deq_scale1, None), quant_scale1=(quant_scale1, None), deq_scale2=(deq_scale2, None),
            quant_scale2=(quant_scale2, None), quant_offset2=(quant_offset2, None),
            actual_seq_lengths_kv=(actual_seq_lengths_kv, None), sparse_mode=(sparse_mode, 0))
    out = _run("npu_prompt_flash_attention", "prompt_flash_attention", dict(
        query=to_numpy(query), key=to_numpy(key), value=to_numpy(value), pse_shift=to_numpy(pse_shift),
        atten_mask=to_numpy(atten_mask),
        actual_seq_lengths=None if actual_seq_lengths is None else [int(x) for x in actual_seq_lengths],
        num_heads=num_heads, scale_value=scale_value, pre_tokens=pre_tokens, next_tokens=next_tokens,
        input_layout=input_layout, num_key_value_heads=num_key_value_heads))
    return from_numpy(out, query.dtype).reshape(_pfa_out_shape(query, input_layout))


def pfa_fake(query, key, value, *, input_layout="BSH", **_):
    return query.new_empty(_pfa_out_shape(query, input_layout))


# -------------------------------------------------------------------- npu_incre_flash_attention

def ifa_cpu(query, key, value, *, padding_mask=None, atten_mask=None, pse_shift=None,
            actual_seq_lengths=None, antiquant_scale=None, antiquant_offset=None, block_table=None,
            dequant_scale1=None, quant_scale1=None, dequant_scale2=None, quant_scale2=None,
            quant_offset2=None, kv_padding_size=None, num_heads=1, scale_value=1.0,
            input_layout="BSH", num_key_value_heads=0, block_size=0, inner_precise=1):
    out = _run("npu_incre_flash_attention", "incre_flash_attention_v4", dict(
        query=to_numpy(query), key=[to_numpy(key)], value=[to_numpy(value)],
        pse_shift=to_numpy(pse_shift), atten_mask=to_numpy(atten_mask),
        actual_seq_lengths=None if actual_seq_lengths is None else [int(x) for x in actual_seq_lengths],
        dequant_scale1=to_numpy(dequant_scale1), quant_scale1=to_numpy(quant_scale1),
        dequant_scale2=to_numpy(dequant_scale2), quant_scale2=to_numpy(quant_scale2),
        quant_offset2=to_numpy(quant_offset2), antiquant_scale=to_numpy(antiquant_scale),
        antiquant_offset=to_numpy(antiquant_offset), block_table=to_numpy(block_table),
        kv_padding_size=to_numpy(kv_padding_size), num_heads=num_heads, scale_value=scale_value,
        input_layout=input_layout, num_key_value_heads=num_key_value_heads, block_size=block_size,
        inner_precise=inner_precise))
    out_dtype = torch.int8 if quant_scale2 is not None else query.dtype
    return from_numpy(out, out_dtype).reshape(query.shape)


def ifa_fake(query, key, value, *, quant_scale2=None, **_):
    return query.new_empty(query.shape, dtype=torch.int8 if quant_scale2 is not None else query.dtype)


# -------------------------------------------------------------- npu_fusion_attention (varlen TND)

def _need_varlen(torch_op, api, input_layout, actual_seq_qlen, actual_seq_kvlen):
    if input_layout != "TND" or actual_seq_qlen is None or actual_seq_kvlen is None:
        raise NotImplementedError(f"{NAMESPACE}::{torch_op} implements the variable-length form ({api}): "
                                  "input_layout='TND' with actual_seq_qlen and actual_seq_kvlen; got "
                                  f"input_layout={input_layout!r}, actual_seq_qlen={actual_seq_qlen}, "
                                  f"actual_seq_kvlen={actual_seq_kvlen}")


def _fa_shapes(query, value, head_num, input_layout):
    t = query.shape[0]
    return (t, head_num, 8), (*query.shape[:-1], value.shape[-1])


def fa_cpu(query, key, value, head_num, input_layout, pse=None, padding_mask=None, atten_mask=None,
           scale=1.0, keep_prob=1.0, pre_tockens=2147483647, next_tockens=2147483647, inner_precise=0,
           prefix=None, actual_seq_qlen=None, actual_seq_kvlen=None, sparse_mode=0,
           gen_mask_parallel=True, sync=False):
    _need_varlen("npu_fusion_attention", "aclnnFlashAttentionVarLenScore", input_layout,
                 actual_seq_qlen, actual_seq_kvlen)
    # torch_npu draws the dropout mask from its own generator; the cpu target has none.
    _reject("npu_fusion_attention", "aclnnFlashAttentionVarLenScore without a dropout generator",
            keep_prob=(keep_prob, 1.0))
    res = _run("npu_fusion_attention", "flash_attention_var_len_score", dict(
        query=to_numpy(query), key=to_numpy(key), value=to_numpy(value), real_shift=to_numpy(pse),
        padding_mask=to_numpy(padding_mask), atten_mask=to_numpy(atten_mask),
        prefix=None if prefix is None else list(prefix), actual_seq_qlen=list(actual_seq_qlen),
        actual_seq_kvlen=list(actual_seq_kvlen), scale_value=scale, keep_prob=keep_prob,
        pre_tokens=pre_tockens, next_tokens=next_tockens, head_num=head_num, input_layout=input_layout,
        inner_precise=inner_precise, sparse_mode=sparse_mode))
    stats_shape, out_shape = _fa_shapes(query, value, head_num, input_layout)
    out = from_numpy(res["attention_out"], query.dtype).reshape(out_shape)
    smax = from_numpy(res["softmax_max"], torch.float32).reshape(stats_shape)
    ssum = from_numpy(res["softmax_sum"], torch.float32).reshape(stats_shape)
    return out, smax, ssum, query.new_empty((0,)), 0, 0, 0


def fa_fake(query, key, value, head_num, input_layout, *args, **kwargs):
    stats_shape, out_shape = _fa_shapes(query, value, head_num, input_layout)
    f32 = torch.float32
    return (query.new_empty(out_shape), query.new_empty(stats_shape, dtype=f32),
            query.new_empty(stats_shape, dtype=f32), query.new_empty((0,)), 0, 0, 0)


def fag_cpu(query, key, value, dy, head_num, input_layout, *, pse=None, padding_mask=None, atten_mask=None,
            softmax_max=None, softmax_sum=None, softmax_in=None, attention_in=None, scale_value=1.0,
            keep_prob=1.0, pre_tockens=2147483647, next_tockens=2147483647, inner_precise=0, seed=0,
            offset=0, numels=0, prefix=None, actual_seq_qlen=None, actual_seq_kvlen=None, sparse_mode=0,
            gen_mask_parallel=True, sync=False):
    """(dq, dk, dv, dpse) from aclnnFlashAttentionUnpaddingScoreGradV5. dpse is an empty tensor:
    the API has no pse gradient (the spec marks dpseOut unused)."""
    _need_varlen("npu_fusion_attention_grad", "aclnnFlashAttentionUnpaddingScoreGradV5", input_layout,
                 actual_seq_qlen, actual_seq_kvlen)
    # seed/offset/numels address torch_npu's dropout generator, which the cpu target does not have.
    _reject("npu_fusion_attention_grad", "aclnnFlashAttentionUnpaddingScoreGradV5 without a dropout generator",
            keep_prob=(keep_prob, 1.0))
    unused = lambda t: None if t is None or t.numel() == 0 else to_numpy(t)   # noqa: E731 (reserved inputs)
    res = _run("npu_fusion_attention_grad", "flash_attention_unpadding_score_grad_v5", dict(
        query=to_numpy(query), key=to_numpy(key), value=to_numpy(value), dy=to_numpy(dy),
        pse_shift=to_numpy(pse), padding_mask=unused(padding_mask), atten_mask=to_numpy(atten_mask),
        softmax_max=to_numpy(softmax_max), softmax_sum=to_numpy(softmax_sum), softmax_in=unused(softmax_in),
        attention_in=to_numpy(attention_in), prefix=None if prefix is None else list(prefix),
        actual_seq_qlen=list(actual_seq_qlen), actual_seq_kvlen=list(actual_seq_kvlen),
        scale_value=scale_value, keep_prob=keep_prob, pre_tokens=pre_tockens, next_tokens=next_tockens,
        head_num=head_num, input_layout=input_layout, inner_precise=inner_precise, sparse_mode=sparse_mode,
        # pse is added before the scale (torch_npu's pse_type 1); the forward's statistics are [T, N, 8]
        pse_type=1, softmax_in_layout="same_as_input"))
    return (from_numpy(res["dq"], query.dtype).reshape(query.shape),
            from_numpy(res["dk"], key.dtype).reshape(key.shape),
            from_numpy(res["dv"], value.dtype).reshape(value.shape), query.new_empty((0,)))


def fag_fake(query, key, value, dy, head_num, input_layout, **_):
    return query.new_empty(query.shape), key.new_empty(key.shape), value.new_empty(value.shape), \
        query.new_empty((0,))


# ------------------------------------------------------------- autograd of npu_fusion_attention

_FA_ARGS = [a.name for a in torch._C.parse_schema(SCHEMAS["npu_fusion_attention"]).arguments]
_FA_ATTRS = ("head_num", "input_layout", "scale", "keep_prob", "pre_tockens", "next_tockens", "inner_precise",
             "prefix", "actual_seq_qlen", "actual_seq_kvlen", "sparse_mode", "gen_mask_parallel", "sync")


def _fa_setup_context(ctx, inputs, output):
    args = dict(zip(_FA_ARGS, inputs))
    out, softmax_max, softmax_sum = output[:3]
    ctx.save_for_backward(args["query"], args["key"], args["value"], args["pse"], args["atten_mask"],
                          out, softmax_max, softmax_sum)
    ctx.attrs = {name: args[name] for name in _FA_ATTRS}


def _fa_backward(ctx, d_out, *_unused_stat_grads):
    """Gradients of query/key/value through npu_fusion_attention_grad (the V5 operator), from the
    forward's saved statistics and output, as torch_npu's backward does. softmax_max/sum are
    auxiliary outputs without a gradient."""
    if ctx.needs_input_grad[_FA_ARGS.index("pse")]:
        raise NotImplementedError(f"{NAMESPACE}::npu_fusion_attention backward: "
                                  "aclnnFlashAttentionUnpaddingScoreGradV5 has no pse gradient (dpseOut is "
                                  "unused); detach pse")
    query, key, value, pse, atten_mask, out, softmax_max, softmax_sum = ctx.saved_tensors
    a = ctx.attrs
    dy = torch.zeros_like(out) if d_out is None else d_out.to(out.dtype).contiguous()
    dq, dk, dv, _ = torch.ops.ascend_fa.npu_fusion_attention_grad(
        query, key, value, dy, a["head_num"], a["input_layout"], pse=pse, atten_mask=atten_mask,
        softmax_max=softmax_max, softmax_sum=softmax_sum, attention_in=out, scale_value=a["scale"],
        keep_prob=a["keep_prob"], pre_tockens=a["pre_tockens"], next_tockens=a["next_tockens"],
        inner_precise=a["inner_precise"], prefix=a["prefix"], actual_seq_qlen=a["actual_seq_qlen"],
        actual_seq_kvlen=a["actual_seq_kvlen"], sparse_mode=a["sparse_mode"],
        gen_mask_parallel=a["gen_mask_parallel"], sync=a["sync"])
    return (dq, dk, dv) + (None,) * (len(_FA_ARGS) - 3)


# ---------------------------------------------------------------------------- registration

IMPLS = {"npu_prompt_flash_attention": (pfa_cpu, pfa_fake),
         "npu_incre_flash_attention": (ifa_cpu, ifa_fake),
         "npu_fusion_attention": (fa_cpu, fa_fake),
         "npu_fusion_attention_grad": (fag_cpu, fag_fake)}


def _register():
    try:
        import torch_npu                                   # noqa: F401  (device path)
    except ImportError:
        torch_npu = None
    for name, schema in SCHEMAS.items():
        cpu_impl, fake_impl = IMPLS[name]
        _lib.define(schema)
        _lib.impl(name, cpu_impl, "CPU")
        torch.library.register_fake(f"{NAMESPACE}::{name}", fake_impl, lib=_lib)
        if torch_npu is not None:
            _lib.impl(name, getattr(torch_npu, name), "PrivateUse1")
    # One autograd formula for every device: on NPU tensors its backward reaches torch_npu's
    # npu_fusion_attention_grad through the PrivateUse1 kernel registered above.
    torch.library.register_autograd(f"{NAMESPACE}::npu_fusion_attention", _fa_backward,
                                    setup_context=_fa_setup_context, lib=_lib)


_register()
