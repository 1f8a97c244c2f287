"""fakit.run: execute an operator on a backend with the golden's calling convention."""
import importlib

BACKENDS = ("golden", "cpu", "sim", "npu")


def run(op: str, backend: str = "cpu", **kwargs):
    """Run operator `op` on `backend`; `op` is any of its names (fakit.opnames: the golden
    function name, the directory, the OpType, the aclnn API or the alias).

    Takes exactly the keyword arguments of ``fakit.golden.<op>`` and returns the same structure,
    with outputs in the operator's output dtype. Raises fakit.AclnnError when the aclnn API
    rejects the inputs and fakit.BackendUnavailable when the backend cannot run here.
    """
    op = _canonical(op, backend)
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if backend == "golden":
        from . import golden
        fn = getattr(golden, op, None)
        if fn is None:
            raise ValueError(f"unknown operator {op!r}")
        return fn(**kwargs)
    module = importlib.import_module(f".backends.{backend}", __package__)
    return module.run(op, **kwargs)


def _canonical(op: str, backend: str) -> str:
    """The harness name of one of the five operators (any spelling). Another name goes on
    unchanged to a device backend, which knows its own bindings (tests add operators there) and
    lists them when the name is not one; the golden backend has only the five."""
    from .opnames import UnknownOperator, resolve
    try:
        return resolve(op)
    except UnknownOperator:
        if backend == "golden":
            raise
        return op
