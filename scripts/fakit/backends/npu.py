"""fakit.run(op, backend="npu"): the operator from the installed custom-op package, on an
Ascend device (FAKIT_DEVICE_ID, default 0). Needs a CANN toolkit, the device driver and the
package installed (docs/npu.md); otherwise raises BackendUnavailable."""

from .aclnn_runner import run_cann


def run(op: str, **kwargs):
    return run_cann("npu", op, kwargs)
