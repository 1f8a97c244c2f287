"""Property-based fuzzing of the five aclnn entries, run with fuzz_edges.py by campaign.py
(test_fuzz_sanitized.py in the default test command; `python tests/fuzz/campaign.py --budget N`
by hand) under the ASan/UBSan build; not collected by plain `pytest` (the file name does not
start with test_). Every example starts from a valid smoke case and applies a few hostile or
careless changes around the documented limits; the property is

    the call returns 161001 / 161002 with a message naming one of the API's parameters, or it
    succeeds and every floating-point output is finite (and, when the changes only re-lay the
    same values out in memory, matches the golden by the precision standard);

never a crash, a hang or a sanitizer report (those kill the process: the example being run is
printed before it runs, so the log names it). Example counts: FAKIT_FUZZ_EXAMPLES per entry
(default 30); outcome counts are appended as JSON lines to $FAKIT_FUZZ_REPORT when set.
"""

import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fakit
from fakit import cases, compare, golden, ops
from fakit.views import Described
from fakit.views import make as make_view

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "robustness"))
from robust_helpers import call  # noqa: E402

EXAMPLES = int(os.environ.get("FAKIT_FUZZ_EXAMPLES", "30"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("FAKIT_FUZZ_RANDOM") is None,
    suppress_health_check=list(HealthCheck),
    database=None,
    print_blob=True,
)

INTS = [0, 1, -1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 64, 128, 1024, 2**31 - 1, -(2**31), 2**32, 2**62, 2**63 - 1, -(2**63)]
DOUBLES = [0.0, -1.0, 1e-3, 0.5, 1.0, 2.0, float("nan"), float("inf"), float("-inf"), 1e300, -0.0]
STRINGS = ["BSH", "BSND", "BNSD", "TND", "BNSD_BSND", "NTD", "same_as_input", "", "xyz"]  # null: a "null" change
DIMS = [0, 1, 2, 3, 7, 16, 64, 2**31, 2**40, 2**62]
DTYPES = [np.float16, ml_dtypes.bfloat16, np.float32, np.int8, np.uint8, np.int32, np.int64, np.bool_, np.float64]
COUNTS = Counter()


def _smoke(op):
    return [c.inputs() for c in cases.suite(op, "smoke")]


SMOKE = {op: _smoke(op) for op in cases.OPERATORS}


def _params(op, *kinds):
    return [p.name for p in ops.REGISTRY[op].params if p.kind in kinds]


# Attributes changed at the golden's level, so that an accepted call can be judged by the golden.
GOLDEN_ATTRS = {
    "scale_value": DOUBLES,
    "keep_prob": DOUBLES,
    "pre_tokens": INTS,
    "next_tokens": INTS,
    "sparse_mode": INTS,
    "num_heads": INTS,
    "head_num": INTS,
    "num_key_value_heads": INTS,
    "inner_precise": INTS,
    "block_size": INTS,
    "pse_type": INTS,
    "sparse_block_size": INTS,
    "input_layout": STRINGS,
    "layout": STRINGS,
    "softmax_in_layout": STRINGS,
    "deterministic": [True, False],
}


def _attrs(op):
    keys = set().union(*(kw.keys() for kw in SMOKE[op]))
    return sorted(k for k in GOLDEN_ATTRS if k in keys)


def attribute(op):
    return st.sampled_from(_attrs(op)).flatmap(lambda k: st.tuples(st.just(k), st.sampled_from(GOLDEN_ATTRS[k])))


def mutation(op):
    """One change of an aclnn argument: (kind, parameter, value-or-spec)."""
    pointer = _params(op, "tensor", "out_tensor", "int_array", "tensor_list", "string")
    tensors = _params(op, "tensor", "out_tensor")
    return st.one_of(
        attribute(op).map(lambda kv: ("attr", kv[0], kv[1])),
        st.tuples(st.just("null"), st.sampled_from(pointer), st.none()),
        st.tuples(st.just("dtype"), st.sampled_from(tensors), st.sampled_from(DTYPES)),
        st.tuples(st.just("shape"), st.sampled_from(tensors), st.lists(st.sampled_from(DIMS), max_size=6)),
        st.tuples(st.just("view"), st.sampled_from(tensors), st.sampled_from(["padded", "transposed", "spaced"])),
        st.tuples(
            st.just("storage"),
            st.sampled_from(tensors),
            st.sampled_from(["short", "offset_past", "huge_stride", "negative_stride", "zero_stride"]),
        ),
        st.tuples(
            st.just("array"),
            st.sampled_from(_params(op, "int_array") or ["-"]),
            st.lists(st.sampled_from(INTS), max_size=5),
        ),
        st.tuples(
            st.just("element"), st.sampled_from(tensors), st.tuples(st.integers(0, 2**20), st.sampled_from(INTS))
        ),
    )


def _storage(arr, how):
    arr = np.asarray(arr)
    n = max(arr.size, 1)
    contiguous = [int(np.prod(arr.shape[i + 1 :])) for i in range(arr.ndim)]
    if how == "short":
        return Described(arr.shape, arr.dtype, storage=(n - 1,), alloc_bytes=arr.nbytes + 64)
    if how == "offset_past":
        return Described(arr.shape, arr.dtype, offset=n, storage=(n,), alloc_bytes=2 * arr.nbytes + 64)
    strides = list(contiguous)
    if strides:
        strides[0] = {"huge_stride": 2**62, "negative_stride": -1, "zero_stride": 0}[how]
    return Described(arr.shape, arr.dtype, strides=tuple(strides), storage=arr.shape, alloc_bytes=arr.nbytes + 64)


_SAME = object()


def _changed(kind, current, arg):
    """The new value of an argument under one change, or _SAME when the change does not apply."""
    arr = isinstance(current, np.ndarray)
    if kind == "null":
        return None
    if kind == "dtype" and arr:
        return current.astype(arg)
    if kind == "shape" and arr:
        return Described(tuple(arg), current.dtype, strides=tuple([0] * len(arg)), storage=(1,), alloc_bytes=64)
    if kind == "storage" and arr and current.size:
        return _storage(current, arg)
    if kind == "array":
        return list(arg)
    if kind == "element" and arr and current.size and current.dtype.kind in "iu":
        changed = current.copy()
        info = np.iinfo(changed.dtype)
        changed.reshape(-1)[arg[0] % changed.size] = min(max(arg[1], info.min), info.max)
        return changed
    return _SAME


def apply(op, kw, changes):
    """(override, views, layout_only): the aclnn-level call the changes describe (attribute
    changes are applied to `kw` in place first)."""
    for kind, name, arg in changes:
        if kind == "attr":
            kw[name] = arg
    binding = ops.REGISTRY[op]
    values = binding.prepare(dict(kw))
    values.update(binding.make_outputs(values))
    override, views, layout_only = {}, {}, True
    for kind, name, arg in changes:
        if name == "-":
            continue
        if kind == "attr":
            continue
        current = override.get(name, values.get(name))
        new = _changed(kind, current, arg)
        if kind == "view":
            if isinstance(current, np.ndarray):
                views[name] = arg
        elif new is not _SAME:
            override[name] = new
            layout_only = False
    return override, views, layout_only


def _names(op):
    """The API's parameter names, and the operator's input / output names (snake case) that the
    launch names."""
    names = [p.name for p in ops.REGISTRY[op].params]
    return names + [re.sub(r"(?<!^)(?=[A-Z])", "_", n.removesuffix("Optional")).lower() for n in names]


CONTRACT = json.loads((Path(__file__).resolve().parents[1] / "data" / "spec_contract.json").read_text())["operators"]


def cross_marked(op):
    """aclnn names of the tensors (and tensor lists) whose spec column 非连续Tensor says x."""
    spec = next(o for o in CONTRACT.values() if o["api"] == ops.REGISTRY[op].aclnn)
    return [p["name"] for p in spec["parameters"] if "aclTensor" in p["ctype"] and p["noncontiguous"] == "×"]


def _strided(shape, strides):
    """Whether a view of `shape` with element `strides` is non-contiguous (size-1 dims take any stride)."""
    expect = 1
    for n, stride in zip(reversed(shape), reversed(strides)):
        if n > 1 and stride != expect:
            return True
        expect *= n
    return False


def noncontiguous(arr, view):
    """Whether fakit.views places `arr` as a non-contiguous view."""
    strided = make_view(arr, view)
    return _strided(strided.array.shape, strided.strides)


def _wrongly_accepted(op, kw, changes):
    """The x-marked tensors passed as non-contiguous views (each must be rejected): judged on
    what reached the API (the last view of a tensor; a storage or shape change replaces views)."""
    override, views, _ = apply(op, dict(kw), [c for c in changes if c[0] != "attr"])
    binding = ops.REGISTRY[op]
    values = binding.prepare(dict(kw))
    values.update(binding.make_outputs(values))
    crossed = []
    for name in cross_marked(op):
        if name in override:
            arg = override[name]
            if isinstance(arg, Described) and arg.strides is not None and _strided(arg.shape, arg.strides):
                crossed.append(name)
        elif name in views and isinstance(values.get(name), np.ndarray) and noncontiguous(values[name], views[name]):
            crossed.append(name)
    return crossed


def judge(op, kw, changes, valid=False):
    """Runs one example and asserts the property; `valid`: the call is one the spec allows, so a
    rejection fails too."""
    override, views, layout_only = apply(op, kw, changes)
    print(f"FUZZ {op} {changes!r}", flush=True)
    try:
        out = call(op, kw, override, views={k: v for k, v in views.items() if k not in override})
    except fakit.AclnnError as err:
        COUNTS[(op, str(err.status))] += 1
        assert not valid, f"rejected a call the spec allows ({err.status}): {err.log}"
        # 561103: the device copy of a non-contiguous view does not fit (as CANN's Contiguous fails)
        staging = err.status == 561103 and "does not fit in device memory" in err.log
        assert err.status in (161001, 161002) or staging, f"undocumented status {err.status}: {err.log}"
        assert any(name.lower() in err.log.lower() for name in _names(op)), f"message names no parameter: {err.log}"
        return
    except RuntimeError as err:
        if str(err).startswith("aclCreateTensor failed"):  # the runtime refused the description itself
            COUNTS[(op, "aclCreateTensor refused")] += 1
            return
        raise
    COUNTS[(op, "success")] += 1
    crossed = _wrongly_accepted(op, kw, changes)
    assert not crossed, f"accepted non-contiguous {crossed} (the spec marks them x) after {changes!r}"
    if layout_only:  # the same values as some golden call: judged by the precision standard
        try:
            gold = getattr(golden, op)(**kw)
        except ValueError as err:
            raise AssertionError(f"the API accepted what the golden rejects ({err}) after {changes!r}") from None
        if _overflows(gold, kw):
            # inconsistent inputs (e.g. a scale the given statistics were not computed with) drive
            # the exact result past the output dtype: where it overflows depends on summation
            # order, so only "no crash, a documented answer" is judged
            COUNTS[(op, "success, golden overflows")] += 1
            return
        result = ops.REGISTRY[op].result(out)
        report = compare.compare(op, result, gold, golden.benchmark(op, **kw))
        assert report.passed, report.summary()
        return
    if any(kind not in ("null", "dtype", "element", "view") for kind, _, _ in changes):
        # changed attributes together with memory, or tensors described over zero-filled memory
        # (a zero softmax sum legitimately divides by zero): no golden, any value is legal
        return
    for name, arr in out.items():
        a = np.asarray(arr)
        if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16:
            assert np.isfinite(a.astype(np.float32)).all(), f"{name} has non-finite values after {changes!r}"


def _overflows(gold, kw):
    limit = (
        float(np.finfo(np.asarray(kw["query"]).dtype).max)
        if np.asarray(kw["query"]).dtype.kind == "f"
        else float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    )
    values = gold.values() if isinstance(gold, dict) else [gold]
    for v in values:
        if v is None:
            continue
        a = np.asarray(v, np.float64)
        if a.size and (not np.isfinite(a).all() or np.abs(a).max() > limit / 4):
            return True
    return False


def case_and_changes(op):
    return st.tuples(st.sampled_from(range(len(SMOKE[op]))), st.lists(mutation(op), min_size=0, max_size=3))


@pytest.mark.parametrize("op", list(cases.OPERATORS))
def test_hostile_arguments(op):
    @FUZZ
    @given(case_and_changes(op))
    def run(example):
        index, changes = example
        judge(op, dict(SMOKE[op][index]), changes)

    run()


MISUSE = ["again", "foreign", "other_op", "destroy_then_run", "null"]


@FUZZ
@given(st.sampled_from(list(cases.OPERATORS)), st.lists(st.sampled_from(MISUSE), min_size=1, max_size=4))
def test_second_stage_misuse(op, misuses):
    import ctypes as c

    print(f"FUZZ misuse {op} {misuses!r}", flush=True)
    statuses = []

    def after(lib, executor, workspace, size, stream):
        for how in misuses:
            if how == "null":
                exe = None
            elif how == "foreign":
                junk = (c.c_uint8 * 256)(*([0x5A] * 256))
                exe = c.cast(junk, c.c_void_p)
            else:
                exe = executor
            name = ops.REGISTRY[op].aclnn
            if how == "other_op":
                name = ops.REGISTRY[[o for o in cases.OPERATORS if o != op][0]].aclnn
            if how == "destroy_then_run":
                lib.aclDestroyAclOpExecutor.restype = c.c_int
                lib.aclDestroyAclOpExecutor.argtypes = [c.c_void_p]
                statuses.append(("destroy", lib.aclDestroyAclOpExecutor(executor)))
            fn = getattr(lib, name)
            fn.restype = c.c_int
            fn.argtypes = [c.c_void_p, c.c_uint64, c.c_void_p, c.c_void_p]
            statuses.append((how, fn(workspace, size, exe, stream)))

    call_kw = dict(SMOKE[op][0])
    binding = ops.REGISTRY[op]
    from fakit.backends import cpu

    cpu.run_binding(binding, after_launch=after, **call_kw)
    for how, status in statuses:
        COUNTS[(op, f"misuse {how} -> {status}")] += 1
        assert status == (161001 if how == "null" else 161002), (how, status)


def teardown_module():
    path = os.environ.get("FAKIT_FUZZ_REPORT")
    if path:
        maps = Path("/proc/self/maps").read_text()
        with open(path, "a") as f:
            f.write(
                json.dumps(
                    {
                        "op": "_process",
                        "outcome": "sanitized library loaded",
                        "count": int("cpu-asan/libfa_ops_cpu.so" in maps and "libasan" in maps),
                    }
                )
                + "\n"
            )
            for (op, outcome), n in sorted(COUNTS.items()):
                f.write(json.dumps({"op": op, "outcome": outcome, "count": n}) + "\n")
