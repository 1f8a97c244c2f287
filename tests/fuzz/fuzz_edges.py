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
* degenerate lengths, 0 and 1, and the int64 extremes in every per-batch length list;
* the tensors with a rule of their own: PFA's reserved pseShift (ignored whatever it is) and
  IFA's kvPaddingSize (values around the padding window's edges and the int64 extremes, with
  and without a mask and pse; dtype, size, empty);
* the dropout mask as the specs size it (dense bits, rows not padded) for odd and degenerate
  key lengths: such a call must be accepted and match the golden.
"""

import functools
import itertools
import re

import numpy as np
import pytest
from fuzz_aclnn import COUNTS, SMOKE, call, cross_marked, judge, noncontiguous

import fakit
from fakit import cases, compare, golden, ops
from fakit.cases import flash_attention_unpadding_score_grad_v5 as v5_cases
from fakit.cases import flash_attention_var_len_score as fav_cases
from fakit.views import Described, Strided
from fakit.views import make as make_view

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
EXTREMES = (INT64_MIN, INT64_MAX)


def _keyword(aclnn_name):
    """The golden keyword of an aclnn attribute: preTokensOptional -> pre_tokens."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", aclnn_name.removesuffix("Optional")).lower()


# every int64 attribute of each operator (golden keyword names), from its aclnn signature
INT64_ATTRS = {op: [_keyword(p.name) for p in ops.REGISTRY[op].params if p.kind == "int64"] for op in cases.OPERATORS}
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


@functools.lru_cache(maxsize=None)
def _ifa_smoke(option):
    """The IFA smoke case with `option` set (paged KV, left padding)."""
    suite = cases.suite("incre_flash_attention_v4", "smoke")
    return next(SMOKE["incre_flash_attention_v4"][i] for i, c in enumerate(suite) if c.options[option])


def _length_base(op, base):
    if base.startswith("mode"):
        return BASES[(op, base)] if (op, base) in BASES else None
    if base in ("tnd", "bsnd"):
        return _smallest(op, lambda kw: kw["layout"] == base.upper())
    if base == "lengths":
        return next(kw for kw in SMOKE[op] if kw.get("actual_seq_lengths") is not None)
    if base in ("paged", "padded"):
        return _ifa_smoke("paged" if base == "paged" else "pad")
    return SMOKE[op][0]


def _with_lengths(op, base, key):
    kw = dict(_length_base(op, base))
    if kw.get(key) is None:  # BSND SFAG: one full length per batch
        tensor = "query" if key.endswith("query") else "key"
        shape = np.asarray(kw[tensor]).shape
        kw[key] = [shape[1]] * shape[0]
    return kw


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


# the per-batch length lists (cumulative for TND): INT64_MIN, -1 and INT64_MAX in the first and
# the last batch (SFAG's lengths are INT64 tensors, the others aclIntArrays)
LENGTH_EXTREMES = [INT64_MIN, -1, INT64_MAX]


def _length_lists():
    """(op, base name, length keyword) of every per-batch length list."""
    for op in ("flash_attention_var_len_score", "flash_attention_unpadding_score_grad_v5"):
        for mode in (0, 3):
            for key in ("actual_seq_qlen", "actual_seq_kvlen"):
                yield op, f"mode{mode}", key
    yield "prompt_flash_attention", "lengths", "actual_seq_lengths"
    for base in ("smoke", "paged", "padded"):
        yield "incre_flash_attention_v4", base, "actual_seq_lengths"
    for base in ("tnd", "bsnd"):
        for key in ("actual_seq_lengths_query", "actual_seq_lengths_kv"):
            yield "sparse_flash_attention_grad", base, key


LENGTH_EXTREME_CASES = [
    (op, base, key, position, v) for op, base, key in _length_lists() for position in (0, -1) for v in LENGTH_EXTREMES
]


@pytest.mark.parametrize("op,base,key,position,value", LENGTH_EXTREME_CASES, ids=lambda x: str(x))
def test_length_list_extremes(op, base, key, position, value):
    kw = _with_lengths(op, base, key)
    lengths = [int(x) for x in np.asarray(kw[key]).reshape(-1)]
    lengths[position] = value
    judge(op, kw, [("attr", key, lengths)])


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
    "pseShift": "PFA: reserved by the spec, never read (test_pfa_reserved_pse_shift_is_ignored)",
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


# ---------------------------------------------------------------------------- reserved and one-value tensors

# PFA pseShift: reserved by spec 000 and forced to null, so whatever is passed (shape, dtype,
# strides, storage) is never read and the result is the one without it.
PSE_SHIFTS = {
    "valid": lambda q, k: np.ones((q[0], q[1], q[2], k[2]), np.float16),
    "spaced": lambda q, k: make_view(np.ones((q[0], q[1], q[2], k[2]), np.float16), "spaced"),
    "swapped": lambda q, k: swapped(np.ones((q[0], q[1], q[2], k[2]), np.float16)),
    "int8": lambda q, k: np.ones((q[0], q[1], q[2], k[2]), np.int8),
    "rank 1": lambda q, k: np.ones((3,), np.float16),
    "huge dims": lambda q, k: Described((2**40, 2**20), np.float16, strides=(0, 0), storage=(1,), alloc_bytes=64),
    "short storage": lambda q, k: Described((q[0], q[1], q[2], k[2]), np.float16, storage=(1,), alloc_bytes=64),
}


@pytest.mark.parametrize("how", list(PSE_SHIFTS))
def test_pfa_reserved_pse_shift_is_ignored(how):
    op = "prompt_flash_attention"
    kw = dict(_smallest(op, lambda kw: kw["input_layout"] == "BNSD"))
    print(f"FUZZ {op} pseShift {how}", flush=True)
    out = call(op, kw, {"pseShift": PSE_SHIFTS[how](np.shape(kw["query"]), np.shape(kw["key"]))})
    report = compare.compare(
        op, ops.REGISTRY[op].result(out), golden.prompt_flash_attention(**kw), golden.benchmark(op, **kw)
    )
    assert report.passed, report.summary()
    COUNTS[(op, "success")] += 1


# IFA kvPaddingSize (spec 002: KV left padding, one INT64 value): the valid window of batch b is
# [S - pad - L_b, S - pad); values that put it outside the cache give that batch zeros, a
# negative pad counts as 0, and without actualSeqLengths the value is not used. The values
# around those edges and at both int64 extremes, with and without a mask and pse (indexed by the
# absolute KV position), must compute what the golden computes.
PAD_S, PAD_LENGTHS = 64, [40, 7]
PAD_VALUES = [INT64_MIN, -1, 0, 1, PAD_S - 40, PAD_S - 40 + 1, PAD_S - 7, PAD_S, PAD_S + 1, 10**9, 2**40, INT64_MAX]


@functools.lru_cache(maxsize=None)
def _padded_base(extras):
    from fakit.cases import incre_flash_attention_v4 as ifa_cases

    options = dict(mask="random", mask_shape="B11S", pse="BN1S") if extras else {}
    return ifa_cases.make("fp16", "BNSD", B=2, N=2, S=PAD_S, D=32, actual=PAD_LENGTHS, pad=0, **options).inputs()


PAD_CASES = [(extras, pad) for extras in (False, True) for pad in PAD_VALUES]


@pytest.mark.parametrize("extras,pad", PAD_CASES, ids=lambda x: str(x))
def test_ifa_kv_padding_size_values(extras, pad):
    judge("incre_flash_attention_v4", dict(_padded_base(extras)), [("attr", "kv_padding_size", [pad])])


@pytest.mark.parametrize("pad", [INT64_MIN, INT64_MAX])
def test_ifa_kv_padding_size_without_lengths_is_unused(pad):
    kw = dict(_padded_base(False), actual_seq_lengths=None)
    judge("incre_flash_attention_v4", kw, [("attr", "kv_padding_size", [pad])], valid=True)


PAD_TENSORS = [("dtype", np.int32), ("dtype", np.float32), ("shape", [2]), ("shape", [1, 1])]


@pytest.mark.parametrize("kind,arg", PAD_TENSORS, ids=lambda x: str(x))
def test_ifa_kv_padding_size_tensor(kind, arg):
    judge("incre_flash_attention_v4", dict(_padded_base(False), kv_padding_size=[3]), [(kind, "kvPaddingSize", arg)])


@pytest.mark.parametrize("base", ["padded", "paged"])
def test_ifa_empty_kv_padding_size_pads_nothing(base):
    """Spec 002 allows kvPaddingSize as an empty tensor: no padding, with or without page attention."""
    kw = _padded_base(False) if base == "padded" else _ifa_smoke("paged")
    judge("incre_flash_attention_v4", dict(kw), [("attr", "kv_padding_size", np.zeros(0, np.int64))], valid=True)


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
    per_batch = [("prompt_flash_attention", "lengths", "actual_seq_lengths")]
    per_batch += [("incre_flash_attention_v4", base, "actual_seq_lengths") for base in ("smoke", "paged", "padded")]
    per_batch += [
        ("sparse_flash_attention_grad", "bsnd", key) for key in ("actual_seq_lengths_query", "actual_seq_lengths_kv")
    ]
    for op, base, key in per_batch:
        full = [int(x) for x in _with_lengths(op, base, key)[key]]
        for v in (0, 1):
            yield op, base, key, [v] * len(full)
            if len(full) > 1:
                yield op, base, key, [v] + full[1:]
                yield op, base, key, full[:-1] + [v]
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


@pytest.mark.parametrize("op,base,key,lengths", LENGTH_CASES, ids=lambda x: str(x))
def test_degenerate_lengths(op, base, key, lengths):
    judge(op, _with_lengths(op, base, key), [("attr", key, lengths)])


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
