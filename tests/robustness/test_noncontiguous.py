"""Non-contiguous tensors (spec column 非连续Tensor, read from
tests/data/spec_contract.json). Where a spec marks √, every such tensor of every smoke case —
inputs and outputs — passed as a padded or transposed view gives results that match the golden,
and the storage around an output view is left untouched. Where it marks ×, the API rejects a
non-contiguous tensor with 161002 naming it."""

import json
from pathlib import Path

import numpy as np
import pytest
from robust_helpers import call, expect_status, run_and_judge, smoke

from fakit import cases, ops

CONTRACT = json.loads((Path(__file__).resolve().parents[1] / "data" / "spec_contract.json").read_text())["operators"]
API_OF = {o["api"]: o for o in CONTRACT.values()}


def marks(op):
    """aclnn tensor parameter -> its 非连续Tensor mark for fakit operator `op`."""
    spec = API_OF[ops.REGISTRY[op].aclnn]
    return {p["name"]: p["noncontiguous"] for p in spec["parameters"] if "aclTensor *" in p["ctype"]}


def supported(op):
    return [name for name, mark in marks(op).items() if mark == "√"]


SUPPORTING = [op for op in cases.OPERATORS if supported(op)]
REJECTING = [(op, name) for op in cases.OPERATORS for name, mark in marks(op).items() if mark == "×"]


def test_the_contract_lists_the_spec_columns():
    assert set(SUPPORTING) == {"flash_attention_unpadding_score_grad_v5", "sparse_flash_attention_grad"}
    assert "sparseIndices" not in supported("sparse_flash_attention_grad")
    assert len(REJECTING) == 18  # PFA 5 + IFA 13 tensors (the IFA key/value lists are checked in the fuzz suite)


@pytest.mark.parametrize("view", ["padded", "transposed", "spaced"])
@pytest.mark.parametrize(
    "op_case", [(op, c.id) for op in SUPPORTING for c in cases.suite(op, "smoke")], ids=lambda oc: oc[1]
)
def test_supported_noncontiguous_tensors_match_the_golden(op_case, view):
    op, case_id = op_case
    case = next(c for c in cases.suite(op, "smoke") if c.id == case_id)
    run_and_judge(op, case.inputs(), views={name: view for name in supported(op)})


def _present_tensor(op, name, kw):
    """An argument value for `name` that is present in the prepared call of `kw`, or None."""
    binding = ops.REGISTRY[op]
    values = binding.prepare(dict(kw))
    values.update(binding.make_outputs(values))
    value = values.get(name)
    return value if isinstance(value, np.ndarray) and value.size > 1 else None


def _kwargs_with(op, name):
    """Golden keywords of a smoke (else full-suite) case in which `name` is a tensor of more than
    one element."""
    for suite in ("smoke", "full"):
        for case in cases.suite(op, suite):
            kw = case.inputs()
            if _present_tensor(op, name, kw) is not None:
                return kw
    raise LookupError(f"no {op} case passes {name}")


# × tensors no suite case passes with more than one element, and why they need no view test:
NO_VIEW_CASE = {
    ("prompt_flash_attention", "pseShift"): "reserved: forced to nullptr with a warning, never read",
    ("incre_flash_attention_v4", "kvPaddingSize"): "one element: every stride is contiguous",
    ("incre_flash_attention_v4", "dequantScale1"): "INT8 query only: rejected whenever given (test below)",
    ("incre_flash_attention_v4", "quantScale1"): "INT8 query only: rejected whenever given (test below)",
    ("incre_flash_attention_v4", "dequantScale2"): "INT8 query only: rejected whenever given (test below)",
}


@pytest.mark.parametrize("op,name", [x for x in REJECTING if x not in NO_VIEW_CASE], ids=lambda x: str(x))
def test_unsupported_noncontiguous_tensor_is_161002(op, name):
    log = expect_status(161002, name, call, op, _kwargs_with(op, name), views={name: "spaced"})
    assert "contiguous" in log


@pytest.mark.parametrize("name", ["dequantScale1", "quantScale1", "dequantScale2"])
def test_ifa_int8_query_scales_are_rejected_whenever_given(name):
    kw = smoke("incre_flash_attention_v4")
    expect_status(
        161002, name, call, "incre_flash_attention_v4", kw, {name: np.ones((2, 2), np.float32)}, views={name: "spaced"}
    )
