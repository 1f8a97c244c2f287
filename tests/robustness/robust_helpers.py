"""Helpers of the robustness tests: call an aclnn API with hand-made (possibly hostile) argument
values on top of a valid smoke case, and judge results with the precision standard.
(A plain module, not a conftest: see tests/ops/prompt_flash_attention/pfa_helpers.py.)"""

import dataclasses

import pytest

import fakit
from fakit import cases, compare, golden, ops
from fakit.backends import cpu

OPS = list(cases.OPERATORS)


def smoke(op, pick=lambda kw: True):
    """Golden keyword arguments of the first smoke case of `op` that `pick` accepts."""
    for case in cases.suite(op, "smoke"):
        kw = case.inputs()
        if pick(kw):
            return kw
    raise LookupError(f"no smoke case of {op} fits")


def call(op, kw, override=None, views=None):
    """Runs `op` on the cpu target from golden keywords `kw`, with aclnn parameter values in
    `override` (inputs or outputs: arrays, fakit.views.Described/Strided, None for a null pointer)
    replacing the prepared ones as given. Returns the outputs by aclnn name."""
    binding = ops.REGISTRY[op]
    values = binding.prepare(dict(kw))
    outputs = binding.make_outputs(values)
    override = dict(override or {})
    out_names = {p.name for p in binding.params if p.kind == "out_tensor"}
    for name, value in override.items():
        (outputs if name in out_names else values)[name] = value
    relaxed = dataclasses.replace(
        binding,
        params=[dataclasses.replace(p, optional=True) for p in binding.params],
        prepare=lambda v: v,
        make_outputs=lambda v: {k: o for k, o in outputs.items() if o is not None},
        result=lambda outs: outs,
    )
    return cpu.run_binding(relaxed, views=views, **values)


def expect_status(status, param, fn, *args, **kwargs):
    with pytest.raises(fakit.AclnnError) as info:
        fn(*args, **kwargs)
    assert info.value.status == status, info.value.log
    assert param in info.value.log, info.value.log
    return info.value.log


def run_and_judge(op, kw, views=None):
    """Runs `op` on the cpu target (tensors named in `views` placed as non-contiguous views) and
    judges every output against the golden and benchmark with the precision standard."""
    out = fakit.run(op, backend="cpu", views=views, **kw)
    gold = getattr(golden, op)(**kw)
    bench = golden.benchmark(op, **kw)
    report = compare.compare(op, out, gold, bench)
    assert report.passed, report.summary()
    return out
