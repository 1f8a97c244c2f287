"""fakit: the harness of the Ascend C FlashAttention operator family.

Public entry points:
  fakit.golden.<operator>(...)            NumPy goldens (float32 outputs)
  fakit.run(<operator>, backend=..., ...) the same call, executed by a backend (cpu/sim/npu)
  fakit.AclnnError                        raised when aclnn...GetWorkspaceSize rejects inputs
  fakit.EmulatorError                     raised when the emulated kernel faults (cpu backend)
"""

from .errors import AclnnError, BackendUnavailable, EmulatorError
from .runner import run

__all__ = ["AclnnError", "BackendUnavailable", "EmulatorError", "run", "golden"]


def __getattr__(name):
    # golden is imported lazily so that `import fakit` stays cheap for the CLI.
    if name == "golden":
        import importlib

        return importlib.import_module(".golden", __name__)
    raise AttributeError(name)
