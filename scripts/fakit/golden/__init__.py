"""NumPy goldens of the five operators (semantics and sources: docs/golden.md,
docs/golden_decode_sparse.md).

Each operator has a golden `<op>(...)` (float32 arithmetic from inputs in the operator's
dtype) and a `<op>_benchmark(...)` with the same keywords and return structure, computed
the way a device would in the operator's dtype (the two-golden rule of docs/precision.md).
`benchmark(op, **kwargs)` dispatches to `<op>_benchmark`.  Every name in the `__all__` of
the operator modules below is re-exported here.
"""

import importlib

_MODULES = (
    "prompt_flash_attention",
    "flash_attention_score",
    "flash_attention_score_grad",
    "incre_flash_attention",
    "sparse_flash_attention",
)

__all__ = ["benchmark"]
for _module in _MODULES:
    _mod = importlib.import_module(f".{_module}", __name__)
    for _name in _mod.__all__:
        globals()[_name] = getattr(_mod, _name)
        __all__.append(_name)


def benchmark(op, **kwargs):
    """Run the same-dtype benchmark variant of operator `op` (e.g. "prompt_flash_attention")."""
    fn = globals().get(f"{op}_benchmark")
    if fn is None:
        known = sorted(n[: -len("_benchmark")] for n in __all__ if n.endswith("_benchmark"))
        raise ValueError(f"unknown operator {op!r} for benchmark(); known: {', '.join(known)}")
    return fn(**kwargs)
