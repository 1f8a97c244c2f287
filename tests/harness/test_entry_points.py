"""fakit.run and the bindings are strict: a misspelt keyword is the golden's TypeError with the
closest name, an unknown operator lists every name and alias, and a tensor given as None reaches
the C API as a null pointer (its 161001 names the argument), for every operator."""

import numpy as np
import pytest

import fakit
from fakit import cases, ops
from fakit.opnames import UnknownOperator

PFA = "prompt_flash_attention"


def _smallest(op):
    return min(cases.suite(op, "smoke"), key=lambda c: len(c.features)).inputs()


@pytest.mark.parametrize("backend", ["golden", "cpu", "sim", "npu"])
def test_misspelt_keyword_raises_with_the_closest_name(backend):
    kw = _smallest(PFA)
    kw["atten_msk"] = kw.pop("atten_mask", None)
    with pytest.raises(
        TypeError,
        match=r"prompt_flash_attention\(\) got an unexpected keyword argument "
        r"'atten_msk'\. Did you mean 'atten_mask'\?",
    ):
        fakit.run("pfa", backend=backend, **kw)


def test_the_message_is_the_goldens():
    kw = _smallest(PFA)
    kw["atten_msk"] = None
    with pytest.raises(TypeError) as golden:
        fakit.golden.prompt_flash_attention(**kw)
    with pytest.raises(TypeError) as run:
        fakit.run(PFA, backend="cpu", **kw)
    assert str(run.value).startswith(str(golden.value))


def test_every_binding_rejects_unknown_keywords():
    for binding in ops.REGISTRY.values():
        with pytest.raises(TypeError, match="unexpected keyword argument 'no_such'"):
            ops.prepare(binding, {"no_such": 1})


def test_missing_attribute_is_the_goldens_type_error():
    kw = _smallest(PFA)
    del kw["num_heads"]
    with pytest.raises(TypeError, match="missing required keyword argument.*'num_heads'"):
        fakit.run(PFA, backend="cpu", **kw)


@pytest.mark.parametrize("backend", ["golden", "cpu"])
def test_unknown_operator_suggests_and_lists_aliases(backend):
    with pytest.raises(UnknownOperator) as info:
        fakit.run("pfaa", backend=backend)
    text = str(info.value)
    assert "Did you mean 'prompt_flash_attention'?" in text
    assert "alias pfa" in text and "alias sfag" in text
    assert isinstance(info.value, ValueError)


def _required_tensors(op):
    """(golden keyword, aclnn parameter) of each required tensor input."""
    binding = ops.REGISTRY[op]
    kw = _smallest(op)
    full = binding.prepare(ops._Absent(kw))
    pairs = []
    for name in kw:
        try:
            values = binding.prepare(ops._Absent({**kw, name: None}))
        except TypeError:  # an attribute: None is not a value for it
            continue
        for p in binding.params:
            if (
                p.kind in ("tensor", "tensor_list")
                and not p.optional
                and full.get(p.name) is not None
                and values.get(p.name) is None
            ):
                pairs.append((name, p.name))
    return pairs


@pytest.mark.parametrize("op", sorted(ops.REGISTRY))
def test_none_for_a_required_tensor_is_the_c_apis_161001(op):
    pairs = _required_tensors(op)
    assert pairs, op
    for name, _param in pairs:
        kw = _smallest(op)
        kw[name] = None
        with pytest.raises(fakit.AclnnError) as info:
            fakit.run(op, backend="cpu", **kw)
        assert info.value.status == 161001, (name, info.value)
        assert "null" in info.value.log, (name, info.value.log)


def test_ifa_key_none_names_key():
    kw = _smallest("ifa")
    kw["key"] = None
    with pytest.raises(fakit.AclnnError) as info:
        fakit.run("ifa", backend="cpu", **kw)
    assert info.value.status == 161001 and "key" in info.value.log


def test_a_left_out_tensor_is_a_null_pointer_too():
    kw = _smallest(PFA)
    del kw["value"]
    with pytest.raises(fakit.AclnnError) as info:
        fakit.run(PFA, backend="cpu", **kw)
    assert info.value.status == 161001 and "value" in info.value.log


def test_optional_none_still_runs():
    kw = _smallest(PFA)
    kw["pse_shift"] = None
    out = fakit.run(PFA, backend="cpu", **kw)
    assert isinstance(out, np.ndarray) and np.isfinite(out.astype(np.float32)).all()
