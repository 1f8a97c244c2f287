"""Systematic edges of the five aclnn entries, run with fuzz_aclnn.py by campaign.py under the
ASan/UBSan build (not collected by plain `pytest`: the name does not start with test_).
Where fuzz_aclnn.py draws examples at random, this file walks the classes a random draw is
unlikely to hit, each with the same property (fuzz_aclnn.judge: a documented status naming a
parameter, or a result the golden confirms):

* both extremes of every int64 attribute (INT64_MIN, INT64_MAX; pre/next tokens also as pairs)
  on a small valid case of every sparse mode of the API, and the extremes of the int-array
  values that enter the kernels' position arithmetic (prefix, q/kv start indices);
* every tensor whose spec column 非连续Tensor says x, passed as a non-contiguous view: it must
  be rejected with 161002 naming it (a judge that accepts a matching result would let a
  wrong accept through, so the expectation is stricter here);
* degenerate lengths, 0 and 1, in every per-batch length list;
* the dropout mask as the specs size it (dense bits, rows not padded) for odd and degenerate
  key lengths: such a call must be accepted and match the golden.
"""

import functools
import itertools

import numpy as np
import pytest
from fuzz_aclnn import COUNTS, SMOKE, call, cross_marked, judge, noncontiguous

import fakit
from fakit import cases
from fakit.cases import flash_attention_unpadding_score_grad_v5 as v5_cases
from fakit.cases import flash_attention_var_len_score as fav_cases
from fakit.views import Strided
from fakit.views import make as make_view

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
EXTREMES = (INT64_MIN, INT64_MAX)
# int64 attributes (golden keyword names) of each operator
INT64_ATTRS = {
    "prompt_flash_attention": ["num_heads", "pre_tokens", "next_tokens", "num_key_value_heads"],
    "flash_attention_var_len_score": ["pre_tokens", "next_tokens", "head_num", "inner_precise", "sparse_mode"],
    "incre_flash_attention_v4": ["num_heads", "num_key_value_heads", "block_size", "inner_precise"],
    "flash_attention_unpadding_score_grad_v5": [
        "pre_tokens",
        "next_tokens",
        "head_num",
        "inner_precise",
        "sparse_mode",
        "pse_type",
    ],
    "sparse_flash_attention_grad": ["sparse_block_size", "sparse_mode", "pre_tokens", "next_tokens"],
}
# (batch lengths q, kv) of the small TND cases, and the valid band of the modes that read one
TND_Q, TND_KV = (5, 20), (9, 24)
TND_MODES = {
    0: {},
    1: {},
    2: {},
    3: {},
    4: dict(pre=8, nxt=2),
    6: dict(prefix=[6, 10]),
    7: dict(pre=24, nxt=-4),
    8: dict(pre=9, nxt=0),
}


def _tnd_base(module, mode, **extra):
    opts = dict(TND_MODES[mode])
    if mode == 0:
        opts.update(mask="band", pre=12, nxt=3)
    opts.update(extra)
    return module.make("fp16", qlens=TND_Q, kvlens=TND_KV, N=2, D=16, sparse_mode=mode, **opts).inputs()


@functools.lru_cache(maxsize=None)
def _inputs(op):
    """Golden keywords of the smoke cases of `op`, and of its full suite where that is cheap to
    generate (the backward suites run a golden forward or a large sparse gather per case)."""
    suites = (
        ("smoke",)
        if op in ("flash_attention_unpadding_score_grad_v5", "sparse_flash_attention_grad")
        else ("smoke", "full")
    )
    return [c.inputs() for suite in suites for c in cases.suite(op, suite)]


def _smallest(op, pick):
    return min((kw for kw in _inputs(op) if pick(kw)), key=lambda kw: np.asarray(kw["query"]).size)


def bases(op):
    """(name, golden keywords) of small valid cases: one per sparse mode where the API has them."""
    if op == "flash_attention_var_len_score":
        return [(f"mode{m}", _tnd_base(fav_cases, m)) for m in TND_MODES]
    if op == "flash_attention_unpadding_score_grad_v5":
        return [(f"mode{m}", _tnd_base(v5_cases, m)) for m in TND_MODES]
    if op == "sparse_flash_attention_grad":
        return [(f"mode{m}", _smallest(op, lambda kw, m=m: kw["sparse_mode"] == m)) for m in (0, 3)]
    return [(f"mask{m}", _smallest(op, lambda kw, m=m: (kw.get("atten_mask") is not None) == m)) for m in (0, 1)]


def _extreme_changes(op):
    for attr in INT64_ATTRS[op]:
        for v in EXTREMES:
            yield [("attr", attr, v)]
    if "pre_tokens" in INT64_ATTRS[op]:
        for pre, nxt in itertools.product(EXTREMES, EXTREMES):
            yield [("attr", "pre_tokens", pre), ("attr", "next_tokens", nxt)]


BASES = {(op, name): kw for op in cases.OPERATORS for name, kw in bases(op)}
EXTREME_CASES = [(op, name, changes) for op, name in BASES for changes in _extreme_changes(op)]


@pytest.mark.parametrize("op,base,changes", EXTREME_CASES, ids=lambda x: str(x))
def test_int64_attribute_extremes(op, base, changes):
    judge(op, dict(BASES[(op, base)]), changes)


ARRAY_EXTREMES = [INT64_MIN, -1, 10**9, INT64_MAX]


def _array_cases():
    v5 = "flash_attention_unpadding_score_grad_v5"
    yield "flash_attention_var_len_score", _tnd_base(fav_cases, 6), "prefix"
    yield v5, _tnd_base(v5_cases, 6), "prefix"
    yield v5, _tnd_base(v5_cases, 0, mask="none"), "prefix"  # turned into mode 6 without a mask below
    alibi = v5_cases.make(
        "fp16", qlens=TND_Q, kvlens=TND_KV, N=2, D=16, sparse_mode=3, pse="slopes", pse_type=3, start=[1, 2]
    ).inputs()
    yield v5, alibi, "q_start_idx"
    yield v5, alibi, "kv_start_idx"


ARRAY_CASES = [(op, kw, name, v) for op, kw, name in _array_cases() for v in ARRAY_EXTREMES]


@pytest.mark.parametrize("case", range(len(ARRAY_CASES)))
def test_int_array_extremes(case):
    op, kw, name, v = ARRAY_CASES[case]
    kw = dict(kw)
    n = len(kw["actual_seq_qlen"])
    if name == "prefix" and kw["sparse_mode"] != 6:
        kw["sparse_mode"] = 6  # a prefix in mode 6 without a mask: checked all the same
        kw["atten_mask"] = None
    judge(op, kw, [("attr", name, [v] * (n if name == "prefix" else 1))])


# ---------------------------------------------------------------------------- non-contiguity


def _with_tensor(op, name):
    """Golden keywords of a case whose aclnn argument `name` has more than one element, and that value."""
    binding = fakit.ops.REGISTRY[op]
    for kw in _inputs(op):
        values = binding.prepare(dict(kw))
        values.update(binding.make_outputs(values))
        value = values.get(name)
        items = value if isinstance(value, list) else [value]
        if items and all(isinstance(v, np.ndarray) and v.size > 1 for v in items):
            return kw, value
    return None, None


def swapped(array):
    """The last two dims of more than one element stored swapped (a transpose that moves data;
    fakit.views.transposed swaps the last two dims even when one of them is 1)."""
    array = np.asarray(array)
    axes = [i for i, n in enumerate(array.shape) if n > 1][-2:]
    if len(axes) < 2:
        return Strided(array, tuple(int(x) for x in np.cumprod((array.shape + (1,))[:0:-1])[::-1]))
    perm = list(range(array.ndim))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    stored = np.ascontiguousarray(array.transpose(perm))
    strides = [0] * array.ndim
    for i, p in enumerate(perm):
        strides[p] = stored.strides[i] // stored.itemsize
    return Strided(array, tuple(strides))


# x-marked tensors no case passes because the API refuses them whenever given (an INT8 query's
# scales on IFA): a made-up value must be refused as a view too
REJECTED_WHENEVER_GIVEN = {"incre_flash_attention_v4": ("dequantScale1", "quantScale1", "dequantScale2")}
NO_VIEW_CASE = {
    "pseShift": "PFA: reserved by the spec, never read",
    "kvPaddingSize": "one element: contiguous in any view",
}
NONCONTIGUOUS = [
    (op, name, view) for op in cases.OPERATORS for name in cross_marked(op) for view in ("spaced", "swapped")
]


@pytest.mark.parametrize("op,name,view", NONCONTIGUOUS, ids=lambda x: str(x))
def test_cross_marked_tensor_as_a_view_is_161002(op, name, view):
    kw, value = _with_tensor(op, name)
    unsupported = kw is None and name in REJECTED_WHENEVER_GIVEN.get(op, ())
    if unsupported:
        kw, value = SMOKE[op][0], np.ones((2, 4), np.float32)
    if kw is None:
        pytest.skip(f"no case passes {name} with more than one element ({NO_VIEW_CASE[name]})")
    items = value if isinstance(value, list) else [value]
    layout = swapped if view == "swapped" else view
    if not all(noncontiguous(v, layout) for v in items):
        pytest.skip(f"{name} {items[0].shape} has a single dim of more than one element: nothing to swap")
    strided = [make_view(v, layout) for v in items]
    strided = strided if isinstance(value, list) else strided[0]
    print(f"FUZZ {op} non-contiguous {name} ({view})", flush=True)
    with pytest.raises(fakit.AclnnError) as info:
        call(op, kw, {name: strided})
    assert info.value.status == 161002 and name in info.value.log, info.value.log
    assert unsupported or "contiguous" in info.value.log, info.value.log
    COUNTS[(op, "161002")] += 1


# ---------------------------------------------------------------------------- degenerate lengths


def _cumulative(lengths):
    return [int(x) for x in np.cumsum(lengths)]


def _degenerate(lengths):
    """Per-batch length lists with a batch of 0 and of 1 in each position, same total."""
    total, n = sum(lengths), len(lengths)
    out = []
    for b in range(n):
        for v in (0, 1):
            rest = total - v
            if n == 1:
                out.append([v])
                continue
            other = [rest // (n - 1)] * (n - 1)
            other[-1] += rest - sum(other)
            out.append(other[:b] + [v] + other[b:])
    return out


def _length_cases():
    for op in ("flash_attention_var_len_score", "flash_attention_unpadding_score_grad_v5"):
        module = fav_cases if op == "flash_attention_var_len_score" else v5_cases
        for mode in (0, 3):
            kw = _tnd_base(module, mode)
            for key, lens in (("actual_seq_qlen", TND_Q), ("actual_seq_kvlen", TND_KV)):
                for lengths in _degenerate(list(lens)):
                    yield op, f"mode{mode}", key, _cumulative(lengths)
    for op, key in (
        ("prompt_flash_attention", "actual_seq_lengths"),
        ("incre_flash_attention_v4", "actual_seq_lengths"),
    ):
        kw = SMOKE[op][0]
        batch = np.asarray(kw["query"]).shape[0]
        for v in (0, 1):
            yield op, "smoke", key, [v] * batch
            if batch > 1:
                yield (
                    op,
                    "smoke",
                    key,
                    [v]
                    + [int(np.asarray(kw["query"]).shape[2] if op == "prompt_flash_attention" else 1)] * (batch - 1),
                )
    sfag = "sparse_flash_attention_grad"
    tnd = [kw for kw in _inputs(sfag) if kw["layout"] == "TND"]
    if tnd:
        kw = min(tnd, key=lambda k: np.asarray(k["query"]).size)
        for key, total in (
            ("actual_seq_lengths_query", np.asarray(kw["query"]).shape[0]),
            ("actual_seq_lengths_kv", np.asarray(kw["key"]).shape[0]),
        ):
            n = len(kw[key])
            for lengths in _degenerate([total // n] * (n - 1) + [total - total // n * (n - 1)]):
                yield sfag, "tnd", key, _cumulative(lengths)


LENGTH_CASES = list(_length_cases())


def _length_base(op, base):
    if base.startswith("mode"):
        return BASES[(op, base)] if (op, base) in BASES else None
    if base == "tnd":
        return _smallest(op, lambda kw: kw["layout"] == "TND")
    return SMOKE[op][0]


@pytest.mark.parametrize("op,base,key,lengths", LENGTH_CASES, ids=lambda x: str(x))
def test_degenerate_lengths(op, base, key, lengths):
    judge(op, dict(_length_base(op, base)), [("attr", key, lengths)])


# ---------------------------------------------------------------------------- spec-sized dropout mask

DROPOUT_LENGTHS = [((20, 33, 7), (50, 27, 13)), ((31, 31, 5), (1, 1, 1)), ((3, 0, 4), (5, 0, 1)), ((1,), (9,))]
DROPOUT_CASES = [
    (op, q, kv)
    for op in ("flash_attention_var_len_score", "flash_attention_unpadding_score_grad_v5")
    for q, kv in DROPOUT_LENGTHS
]


@pytest.mark.parametrize("op,qlens,kvlens", DROPOUT_CASES, ids=lambda x: str(x))
def test_spec_sized_dropout_mask_is_accepted(op, qlens, kvlens):
    module = fav_cases if op == "flash_attention_var_len_score" else v5_cases
    kw = module.make("fp16", qlens=qlens, kvlens=kvlens, N=2, D=16, dropout=True, keep_prob=0.8).inputs()
    assert kw["drop_mask"].size == -(-sum(2 * q * k for q, k in zip(qlens, kvlens)) // 8)
    judge(op, kw, [], valid=True)
