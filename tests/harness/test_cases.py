"""fakit.cases: stable unique ids, deterministic inputs, spec rejections, suite limits."""

import dataclasses

import numpy as np
import pytest

from fakit import cases, golden
from fakit.cases import Case, Forbidden
from fakit.cases import flash_attention_unpadding_score_grad_v5 as fag
from fakit.cases import flash_attention_var_len_score as fav
from fakit.cases import incre_flash_attention_v4 as ifa
from fakit.cases import prompt_flash_attention as pfa
from fakit.cases import sparse_flash_attention_grad as sfag
from fakit.cases.core import DTYPES

OPS = cases.OPERATORS


def _arrays(kwargs):
    """Flatten the array inputs of a kwargs dict into name -> ndarray."""
    out = {}
    for k, v in kwargs.items():
        if isinstance(v, np.ndarray):
            out[k] = v
        elif isinstance(v, list) and v and isinstance(v[0], np.ndarray):
            out.update({f"{k}.{i}": a for i, a in enumerate(v)})
    return out


def test_case_id_is_pinned_and_readable():
    # A change of this id means every recorded case id changed: only do it on purpose.
    case = pfa.make("fp16", "BNSD", B=1, N=2, Sq=128, D=64, mask="causal")
    assert case.id == "pfa-51f73a49ba"
    assert case.features == "BNSD fp16 B1 N2/2 S128x128 D64 mask=causal[B1SS,bool]"


def test_case_id_depends_on_every_parameter():
    base = pfa.make()
    variants = [
        pfa.make(dtype="bf16"),
        pfa.make(layout="BSH"),
        pfa.make(Sq=65),
        pfa.make(mask="random"),
        pfa.make(seed=1),
        pfa.make(value_range=(-2, 2)),
        pfa.make(pre=5, nxt=1, mask="band"),
    ]
    ids = {v.id for v in variants}
    assert base.id not in ids and len(ids) == len(variants)
    assert pfa.make().id == base.id


@pytest.mark.parametrize("op", OPS)
def test_suite_ids_unique_and_get_round_trips(op):
    for name in cases.suite_names(op):
        suite = cases.suite(op, name)
        assert suite, f"{op}/{name} is empty"
        ids = [c.id for c in suite]
        assert len(ids) == len(set(ids)) == len(set(suite))  # Case hashes by id
    smoke = cases.suite(op, "smoke")
    assert cases.get(op, smoke[-1].id) == smoke[-1]
    assert cases.get(None, smoke[0].id) == smoke[0]


def test_unknown_op_suite_and_case_are_clear_errors():
    with pytest.raises(KeyError, match="unknown operator 'nope'"):
        cases.suite("nope", "smoke")
    with pytest.raises(KeyError, match="unknown suite 'huge'"):
        cases.suite("prompt_flash_attention", "huge")
    with pytest.raises(KeyError, match="no case 'pfa-0000000000'"):
        cases.get("prompt_flash_attention", "pfa-0000000000")
    with pytest.raises(KeyError, match="known operator prefix"):
        cases.get(None, "xyz-123")


def test_case_json_round_trip():
    for op in OPS:
        c = cases.suite(op, "smoke")[0]
        again = Case.from_json(c.to_json())
        assert again.id == c.id


@pytest.mark.parametrize(
    "op",
    [
        "prompt_flash_attention",
        "incre_flash_attention_v4",
        "flash_attention_var_len_score",
        "flash_attention_unpadding_score_grad_v5",
    ],
)
def test_inputs_are_deterministic_and_in_dtype(op):
    c = cases.suite(op, "smoke")[1]
    a, b = _arrays(c.inputs()), _arrays(c.inputs())
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k].view(np.uint8), b[k].view(np.uint8)), k
    assert a["query"].dtype == DTYPES[c.dtype]
    other = _arrays(dataclasses.replace(c, seed=c.seed + 1).inputs())
    assert not np.array_equal(other["query"], a["query"])


def test_values_respect_range_and_rounding():
    c = pfa.make("bf16", B=1, N=2, Sq=32, D=16, value_range=(-5, 5))
    q = c.inputs()["query"]
    f = q.astype(np.float32)
    assert f.min() >= -5 and f.max() <= 5
    assert np.array_equal(f.astype(DTYPES["bf16"]).astype(np.float32), f)


@pytest.mark.parametrize(
    "case, reason",
    [
        (pfa.make(N=6, Nkv=4), "not divisible"),
        (pfa.make(N=128, Nkv=1), "exceeds 64"),
        (pfa.make(dtype="fp32"), "FLOAT16 and BFLOAT16"),
        (pfa.make(layout="BSH", N=256, D=256), "N*D"),
        (pfa.make(B=200, D=72), "16-aligned"),
        (pfa.make(pse=True), "reserved"),
        (pfa.make(B=2, actual=[65, 3]), "actualSeqLengths"),
        (fav.make(sparse_mode=5), "sparse_mode=5"),
        (fav.make(qlens=[8, 8], kvlens=[8, 0]), "Skv = 0"),
        (fav.make(sparse_mode=7, pre=200, nxt=-16, pse="full"), "does not support pse"),
        (fav.make(qlens=[64, 64], kvlens=[32, 64], sparse_mode=6, prefix=[40, 10]), "prefix 40"),
        (fav.make(sparse_mode=4, pre=-20, nxt=10), "band is empty"),
        (fav.make(keep_prob=0.0, dropout=True), "keep_prob"),
        (ifa.make(paged=16), "needs actualSeqLengths"),
        (ifa.make(layout="BSH", actual=[128], paged=64, cache="bnsd"), "BNSD query"),
        (ifa.make(actual=[128], paged=16, kv_int8=True), "32 for int8"),
        (ifa.make(S=64, actual=[60], pad=10), "kvPaddingSize"),
        (fag.make(rope=True), "BFLOAT16 only"),
        (fag.make("bf16", rope=True, dropout=True, keep_prob=0.9), "not compatible with rope"),
        (fag.make(pse_type=0), "pse_type must be 1"),
        (fag.make(D=800), "768"),
        (sfag.make(N1=3), "N1"),
        (sfag.make(block=4), "sparse_block_size"),
        (sfag.make(sparse_mode=2), "only 0 and 3"),
        (sfag.make(K=512), "K = 2048"),
    ],
)
def test_forbidden_combinations_are_rejected_with_reason(case, reason):
    with pytest.raises(Forbidden, match=None) as info:
        case.check()
    assert reason in str(info.value)


@pytest.mark.parametrize("op", OPS)
def test_full_suite_keeps_only_allowed_cases_and_lists_rejections(op):
    accepted, rejected = cases.sweep(op, "full")
    assert len(accepted) >= 50
    assert rejected, "the full sweep should show what the spec forbids"
    for c in accepted:
        c.check()
    for c, why in rejected:
        assert why and c.id not in {a.id for a in accepted}


@pytest.mark.parametrize("op", OPS)
def test_smoke_cases_are_small(op):
    for c in cases.suite(op, "smoke"):
        c.check()
        s = c.shapes
        seqs = [s.get(k) for k in ("Sq", "Skv", "S")] + list(s.get("qlens", [])) + list(s.get("kvlens", []))
        assert max(x for x in seqs if x is not None) <= 256, c.features
        heads = s.get("N", s.get("N1"))
        batch = s.get("B", len(s.get("qlens", [1])))
        assert batch * heads <= 8, c.features
        if op != "sparse_flash_attention_grad":  # spec 004 fixes D = 512
            assert s["D"] <= 128, c.features


def test_smoke_covers_main_features():
    feats = " ".join(c.features for op in OPS for c in cases.suite(op, "smoke"))
    for word in (
        "BSH",
        "BSND",
        "BNSD_BSND",
        "bf16",
        "mask=",
        "paged[",
        "int8kv",
        "int8out",
        "leftpad",
        "sparse2",
        "sparse3",
        "sparse4",
        "sparse6",
        "dropout",
        "rope64",
        "sink",
        "type2",
        "blk64",
    ):
        assert word in feats, word


def test_backward_inputs_come_from_the_forward_golden():
    c = fag.make("fp16", qlens=[32, 20], kvlens=[40, 20], N=2, D=32, sparse_mode=3, stats="")
    kw = c.inputs()
    fwd_kw = {
        k: v for k, v in kw.items() if k not in ("dy", "softmax_max", "softmax_sum", "softmax_in", "attention_in")
    }
    fwd = golden.flash_attention_tnd_forward(**fwd_kw)
    assert kw["softmax_max"].shape == (2, 52, 8)  # NTD for softmax_in_layout ""
    np.testing.assert_array_equal(kw["softmax_max"], fwd["softmax_max"])
    np.testing.assert_array_equal(kw["attention_in"], fwd["attention_out"].astype(np.float16))


def test_sparse_grad_inputs_are_consistent():
    c = sfag.make("bf16", "TND", qlens=[6, 4], kvlens=[40, 24], N1=2, block=8, sparse_mode=3)
    kw = c.inputs()
    idx = kw["sparse_indices"]
    assert idx.shape == (10, 1, 2048) and idx.dtype == np.int32
    # right-down causal: a query row never selects a block that starts beyond its last visible key
    lens = [(6, 40), (4, 24)]
    row = 0
    for sq, sk in lens:
        for i in range(sq):
            valid = idx[row, 0][idx[row, 0] >= 0]
            assert valid.size and (valid * 8 < sk - sq + i + 1).all()
            row += 1
    assert kw["out"].shape == kw["query"].shape and kw["softmax_max"].dtype == np.float32
