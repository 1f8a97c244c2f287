"""What every op of the adapter shares: tensor conversion, the fakit call, argument refusal."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

import ml_dtypes
import numpy as np
import torch

NAMESPACE = "ascend_fa"


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


def ints(values) -> Optional[list]:
    """An int[]? / SymInt[]? / 1-D tensor argument as a list of Python ints."""
    if values is None:
        return None
    if isinstance(values, torch.Tensor):
        values = values.reshape(-1).tolist()
    return [int(x) for x in values]


def backend() -> str:
    return os.environ.get("FAKIT_TORCH_BACKEND", "cpu")


def run(torch_op: str, fakit_op: str, kwargs: Dict[str, Any]):
    """fakit.run on the selected backend; its failures as the errors a torch user expects."""
    import fakit
    from fakit import ops

    if backend() != "golden" and fakit_op not in ops.REGISTRY:
        raise NotImplementedError(
            f"{NAMESPACE}::{torch_op}: operator {fakit_op} is not implemented on the "
            f"{backend()} target yet (implemented: {', '.join(sorted(ops.REGISTRY))})"
        )
    emulator_error = getattr(fakit, "EmulatorError", None)
    try:
        return fakit.run(fakit_op, backend=backend(), **kwargs)
    except fakit.BackendUnavailable as exc:
        raise NotImplementedError(
            f"{NAMESPACE}::{torch_op}: the {backend()} target cannot run {fakit_op}: {exc}"
        ) from exc
    except fakit.AclnnError as exc:
        raise RuntimeError(f"{NAMESPACE}::{torch_op}: {exc}") from exc
    except Exception as exc:
        if emulator_error is not None and isinstance(exc, emulator_error):
            raise RuntimeError(f"{NAMESPACE}::{torch_op}: the emulator aborted {fakit_op}: {exc}") from exc
        raise


def refuse(torch_op: str, api: str, **given) -> None:
    """NotImplementedError naming the torch_npu arguments (name=(value, neutral value)) that
    the aclnn API the call is routed to cannot honour."""
    bad = [name for name, (value, neutral) in given.items() if value is not None and value != neutral]
    if bad:
        raise NotImplementedError(
            f"{NAMESPACE}::{torch_op} runs {api}, which has no "
            f"{', '.join(bad)}; leave {'it' if len(bad) == 1 else 'them'} at the default"
        )


def unsupported(torch_op: str, what: str) -> NotImplementedError:
    return NotImplementedError(f"{NAMESPACE}::{torch_op}: {what}")


def refuse_reserved(torch_op: str, **given) -> None:
    """Arguments torch_npu reserves (declared, unused): a non-empty tensor there would be ignored
    on an NPU as well, so it raises instead."""
    bad = [name for name, t in given.items() if t is not None and t.numel() > 0]
    if bad:
        raise NotImplementedError(
            f"{NAMESPACE}::{torch_op}: {', '.join(bad)} is reserved (unused) in torch_npu "
            "and in the aclnn API; pass None"
        )
