"""PyTorch custom ops for the FlashAttention operators, declared exactly like torch_npu's.

    import ascend_fa            # installed with the project: pip install -e ".[torch]"
    out = torch.ops.ascend_fa.npu_prompt_flash_attention(q, k, v, num_heads=8, input_layout="BNSD")

CPU tensors run on the project's `cpu` target (the Ascend C kernels on the emulator) through
fakit.run; FAKIT_TORCH_BACKEND=sim|npu|golden picks another fakit backend. NPU tensors
(PrivateUse1) go to torch_npu's own ops when torch_npu is importable. Fake/meta tensors get
torch_npu's output shapes, so the ops trace under torch.compile / FakeTensorMode.

Each call is routed inside the adapter to the aclnn API that computes it (docs/framework.md
has the table per op); an argument the routed API cannot honour raises NotImplementedError
naming it. npu_fusion_attention has autograd (its backward is npu_fusion_attention_grad); the
other ops raise on backward.
"""

from __future__ import annotations

try:
    import torch
except ImportError as exc:  # torch is an optional extra of the project
    raise ImportError(
        "ascend_fa registers PyTorch ops and needs PyTorch: pip install -e '.[torch]' (or pip install 'torch>=2.1')"
    ) from exc

from . import fusion_attention, infer_attention, sparse_attention
from .runtime import NAMESPACE, from_numpy, to_numpy
from .schemas import SCHEMAS

__all__ = ["NAMESPACE", "SCHEMAS", "IMPLS", "from_numpy", "to_numpy"]

_lib = torch.library.Library(NAMESPACE, "DEF")

IMPLS = {
    "npu_prompt_flash_attention": (infer_attention.pfa_cpu, infer_attention.pfa_fake),
    "npu_incre_flash_attention": (infer_attention.ifa_cpu, infer_attention.ifa_fake),
    "npu_fused_infer_attention_score": (infer_attention.fia_cpu, infer_attention.fia_fake),
    "npu_fusion_attention": (fusion_attention.fa_cpu, fusion_attention.fa_fake),
    "npu_fusion_attention_grad": (fusion_attention.fag_cpu, fusion_attention.fag_fake),
    "npu_sparse_flash_attention": (sparse_attention.sfa_cpu, sparse_attention.sfa_fake),
    "npu_sparse_flash_attention_grad": (sparse_attention.sfag_cpu, sparse_attention.sfag_fake),
}


class _NoBackward(torch.autograd.Function):
    """Connects an op's outputs to the inputs that require grad with a backward that raises."""

    @staticmethod
    def forward(ctx, name, n_out, *tensors):
        ctx.name = name
        outs = tuple(t.view_as(t) for t in tensors[:n_out])
        ctx.mark_non_differentiable(*[t for t in outs if not t.is_floating_point()])
        return outs

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError(
            f"{NAMESPACE}::{ctx.name} has no backward (torch_npu defines none either); "
            "for training use npu_fusion_attention, whose backward is "
            "npu_fusion_attention_grad"
        )


def _autograd_kernel(name):
    """Autograd kernel of an op without a backward: an output computed from inputs that require
    grad carries a grad_fn whose backward raises (never one that silently computes nothing)."""
    op = getattr(torch.ops.ascend_fa, name).default

    def kernel(*args, **kwargs):
        with torch._C._AutoDispatchBelowAutograd():
            out = op(*args, **kwargs)
        needs = [t for t in (*args, *kwargs.values()) if isinstance(t, torch.Tensor) and t.requires_grad]
        if not (needs and torch.is_grad_enabled()):
            return out
        outs = out if isinstance(out, tuple) else (out,)
        wrapped = _NoBackward.apply(name, len(outs), *outs, *needs)
        return tuple(wrapped) if isinstance(out, tuple) else wrapped[0]

    return kernel


def _register():
    try:
        import torch_npu  # noqa: F401  (device path)
    except ImportError:
        torch_npu = None
    for name, schema in SCHEMAS.items():
        cpu_impl, fake_impl = IMPLS[name]
        _lib.define(schema)
        _lib.impl(name, cpu_impl, "CPU")
        torch.library.register_fake(f"{NAMESPACE}::{name}", fake_impl, lib=_lib)
        if torch_npu is not None and hasattr(torch_npu, name):
            _lib.impl(name, getattr(torch_npu, name), "PrivateUse1")
        if name != "npu_fusion_attention":
            _lib.impl(name, _autograd_kernel(name), "Autograd")
    # One autograd formula for every device: on NPU tensors its backward reaches torch_npu's
    # npu_fusion_attention_grad through the PrivateUse1 kernel registered above.
    torch.library.register_autograd(
        f"{NAMESPACE}::npu_fusion_attention",
        fusion_attention.backward,
        setup_context=fusion_attention.setup_context,
        lib=_lib,
    )


_register()
