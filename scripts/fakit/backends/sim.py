"""fakit.run(op, backend="sim"): the operator from the installed custom-op package, on the CANN
simulator (camodel libraries of FAKIT_SOC, default ascend910b2). Needs a CANN toolkit with its
simulator and the package installed (docs/npu.md); otherwise raises BackendUnavailable.
FAKIT_MSPROF_OUTPUT=DIR runs each call under `msprof op simulator --output=DIR`."""

from .aclnn_runner import run_cann


def run(op: str, **kwargs):
    return run_cann("sim", op, kwargs)
