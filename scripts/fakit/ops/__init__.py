"""How each operator's aclnn API is called: the binding descriptions of the backends.

A binding names the aclnn API, lists its parameters in the C signature's order (without the
trailing workspaceSize/executor), builds the output arrays and turns them into the golden's
return structure:

    BINDING = OpBinding(
        op="prompt_flash_attention",              # the fakit.golden function name
        aclnn="aclnnPromptFlashAttention",        # the API (GetWorkspaceSize = aclnn + suffix)
        params=[Param("query", "tensor"), Param("pseShift", "tensor", optional=True), ...,
                Param("numHeads", "int64"), Param("attentionOut", "out_tensor")],
        make_outputs=lambda kw: {"attentionOut": np.empty(shape, np.float16)},
        result=lambda outs: outs["attentionOut"],
        prepare=lambda kw: {...},                 # golden keywords -> aclnn parameter values
    )

Every module fakit/ops/<op>.py defines BINDING; REGISTRY maps op -> binding.
"""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Any, Callable, Dict, List, Optional

import numpy as np

KINDS = ("tensor", "tensor_list", "int_array", "int64", "double", "bool", "string", "out_tensor")


@dataclasses.dataclass(frozen=True)
class Param:
    """One aclnn parameter. Values: ndarray (tensor), list of ndarrays (tensor_list), list of
    ints (int_array), int (int64), float (double), bool, str (string); out_tensor values come
    from make_outputs. None is allowed for optional parameters (passed as a null pointer)."""
    name: str
    kind: str
    optional: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"parameter {self.name!r}: unknown kind {self.kind!r}; expected one of {KINDS}")


def _identity(kwargs: Dict[str, Any]) -> Dict[str, Any]:
    return kwargs


@dataclasses.dataclass(frozen=True)
class OpBinding:
    op: str
    aclnn: str
    params: List[Param]
    make_outputs: Callable[[Dict[str, Any]], Dict[str, np.ndarray]]
    result: Callable[[Dict[str, np.ndarray]], Any]
    prepare: Callable[[Dict[str, Any]], Dict[str, Any]] = _identity
    header: Optional[str] = None  # public header, e.g. "aclnnop/aclnn_prompt_flash_attention.h"

    def __post_init__(self):
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.aclnn}: duplicate parameter names in {names}")


def optional_outputs(kw: Dict[str, Any], outputs) -> Dict[str, np.ndarray]:
    """Zero-filled outputs that exist only with an optional input: for each (output, input,
    dtype) of `outputs` whose input in `kw` is given (not None), output -> zeros of the input's
    shape and `dtype`; the others are left out (passed as null pointers)."""
    return {out: np.zeros(np.shape(kw[src]), dtype) for out, src, dtype in outputs if kw.get(src) is not None}


def _load() -> Dict[str, OpBinding]:
    registry: Dict[str, OpBinding] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        binding = getattr(module, "BINDING", None)
        if binding is None:
            continue
        if binding.op in registry:
            raise ValueError(f"two bindings for operator {binding.op!r}")
        registry[binding.op] = binding
    return registry


REGISTRY: Dict[str, OpBinding] = _load()
