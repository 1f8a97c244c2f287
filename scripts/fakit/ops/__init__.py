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
import difflib
import importlib
import inspect
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


class _Absent(dict):
    """The keywords a binding's prepare() reads: a tensor the caller left out reads as None, so
    that it reaches the C API as a null pointer (its 161001 names it), as a None does."""

    def __missing__(self, key):
        return None


def _golden(op: str):
    from .. import golden, opnames

    return getattr(golden, op) if op in opnames.NAMES else None


def _golden_of_api(aclnn: str):
    """The golden of the operator whose aclnn API is `aclnn` (a test's variant of a binding
    keeps its API, so it takes that operator's keywords too)."""
    from .. import opnames

    try:
        return _golden(opnames.lookup(aclnn).name)
    except opnames.UnknownOperator:
        return None


def keywords(binding: OpBinding) -> List[str]:
    """The keywords a call of `binding` takes: a registered binding of the five operators takes
    its golden's; a binding made in a test (a variant of one, or a test operator) also takes the
    aclnn parameter names of its inputs and attributes, which its prepare() may pass through."""
    fn = _golden(binding.op) or _golden_of_api(binding.aclnn)
    golden = list(inspect.signature(fn).parameters) if fn is not None else []
    if golden and REGISTRY.get(binding.op) is binding:
        return golden
    return golden + [p.name for p in binding.params if p.kind != "out_tensor"]


def check_keywords(op: str, accepted: List[str], kwargs: Dict[str, Any]) -> None:
    """TypeError, as the golden raises it, for a keyword `op` does not take, with the closest."""
    for name in kwargs:
        if name not in accepted:
            close = difflib.get_close_matches(name, accepted, n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise TypeError(f"{op}() got an unexpected keyword argument {name!r}.{hint}")


def prepare(binding: OpBinding, kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """The aclnn parameter values of one call: checks the keywords, then binding.prepare().
    Tensors may be None or left out (null pointers); a missing attribute is the golden's TypeError."""
    check_keywords(binding.op, keywords(binding), kwargs)
    try:
        return (binding.prepare or _identity)(_Absent(kwargs))
    except TypeError as exc:
        fn = _golden(binding.op)
        if fn is None:
            raise
        missing = [
            n
            for n, p in inspect.signature(fn).parameters.items()
            if p.kind == p.KEYWORD_ONLY and p.default is p.empty and kwargs.get(n) is None
        ]
        if not missing:
            raise
        raise TypeError(
            f"{binding.op}() missing required keyword argument(s): {', '.join(map(repr, missing))}"
        ) from exc


def outputs_of(binding: OpBinding, values: Dict[str, Any]) -> Dict[str, Any]:
    """binding.make_outputs(values); with a required input missing, the outputs whose shapes
    derive from it are None (null pointers): the C API rejects the missing input first."""
    missing = any(
        values.get(p.name) is None
        for p in binding.params
        if p.kind in ("tensor", "tensor_list", "int_array") and not p.optional
    )
    try:
        outputs = binding.make_outputs(values)
    except Exception:
        if not missing:
            raise
        return {}
    if missing:
        outputs = {k: (None if np.asarray(v).dtype == object else v) for k, v in outputs.items()}
    return outputs


def lookup(op: str) -> OpBinding:
    """The binding of `op`: any name of the five operators (fakit.opnames) or a registered test
    binding; an unknown name lists every operator name and alias and suggests the closest."""
    from .. import opnames

    if op in REGISTRY:
        return REGISTRY[op]
    try:
        name = opnames.resolve(op)
    except opnames.UnknownOperator as exc:
        extra = sorted(set(REGISTRY) - set(opnames.NAMES))
        more = f"\n  registered bindings: {', '.join(extra)}" if extra else ""
        raise opnames.UnknownOperator(f"{exc}{more}") from None
    if name not in REGISTRY:
        raise ValueError(f"operator {name!r} has no aclnn binding; known: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name]
