"""NumPy goldens of the five operators (semantics and sources: docs/golden.md,
docs/golden_decode_sparse.md).

Each operator has a golden `<op>(...)` (float32 arithmetic from inputs in the operator's
dtype) and a `<op>_benchmark(...)` with the same keywords and return structure, computed
the way a device would in the operator's dtype (DESIGN.md §5, the two-golden rule).
`benchmark(op, **kwargs)` dispatches to `<op>_benchmark`.
"""
import importlib

from .prompt_flash_attention import prompt_flash_attention, prompt_flash_attention_benchmark
from .flash_attention_score import (flash_attention_var_len_score,
                                    flash_attention_var_len_score_benchmark,
                                    flash_attention_tnd_forward,
                                    flash_attention_tnd_forward_benchmark)
from .flash_attention_score_grad import (flash_attention_unpadding_score_grad_v5,
                                         flash_attention_unpadding_score_grad_v5_benchmark)

__all__ = [
    "prompt_flash_attention", "prompt_flash_attention_benchmark",
    "flash_attention_var_len_score", "flash_attention_var_len_score_benchmark",
    "flash_attention_tnd_forward", "flash_attention_tnd_forward_benchmark",
    "flash_attention_unpadding_score_grad_v5", "flash_attention_unpadding_score_grad_v5_benchmark",
    "benchmark",
]

# The decode and sparse goldens live in their own modules (docs/golden_decode_sparse.md).
_OTHER_MODULES = {
    "incre_flash_attention": ("incre_flash_attention_v4", "incre_flash_attention_v4_benchmark"),
    "sparse_flash_attention": ("sparse_flash_attention", "sparse_flash_attention_benchmark",
                               "sparse_flash_attention_grad", "sparse_flash_attention_grad_benchmark"),
}
for _module, _names in _OTHER_MODULES.items():
    try:
        _mod = importlib.import_module(f".{_module}", __name__)
    except ModuleNotFoundError as _err:      # only tolerate the module itself being absent
        if _err.name != f"{__name__}.{_module}":
            raise
        continue
    for _name in _names:
        globals()[_name] = getattr(_mod, _name)
        __all__.append(_name)


def benchmark(op, **kwargs):
    """Run the same-dtype benchmark variant of operator `op` (e.g. "prompt_flash_attention")."""
    fn = globals().get(f"{op}_benchmark")
    if fn is None:
        known = sorted(n[:-len("_benchmark")] for n in globals() if n.endswith("_benchmark"))
        raise ValueError(f"unknown operator {op!r} for benchmark(); known: {', '.join(known)}")
    return fn(**kwargs)
