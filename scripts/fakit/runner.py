"""fakit.run: execute an operator on a backend with the golden's calling convention."""

import importlib

BACKENDS = ("golden", "cpu", "sim", "npu")


def run(op: str, backend: str = "cpu", **kwargs):
    """Run operator `op` on `backend`; `op` is any of its names (fakit.opnames: the golden
    function name, the directory, the OpType, the aclnn API or the alias).

    Takes exactly the keyword arguments of ``fakit.golden.<op>`` and returns the same structure,
    with outputs in the operator's output dtype; an unknown keyword is the golden's TypeError
    (with the closest name). A tensor given as None reaches the C API as a null pointer. Raises
    fakit.AclnnError when the aclnn API rejects the inputs, fakit.EmulatorError when the
    emulated kernel faults (cpu) and fakit.BackendUnavailable when the backend cannot run here.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    op = _canonical(op, backend)
    if backend == "golden":
        import inspect

        from . import golden
        from .ops import check_keywords

        fn = getattr(golden, op)
        check_keywords(op, list(inspect.signature(fn).parameters), kwargs)
        return fn(**kwargs)
    module = importlib.import_module(f".backends.{backend}", __package__)
    return module.run(op, **kwargs)


def _canonical(op: str, backend: str) -> str:
    """The harness name of one of the five operators (any spelling). Another name goes on
    unchanged to a device backend, whose binding look-up (fakit.ops.lookup: tests register
    operators there) raises fakit.opnames.UnknownOperator listing every name and alias, with the
    closest, as the golden backend does here."""
    from .opnames import UnknownOperator, resolve

    try:
        return resolve(op)
    except UnknownOperator:
        if backend == "golden":
            raise
        return op
