"""aclnnFlashAttentionVarLenScoreGetWorkspaceSize rejects every violated constraint of spec 001
(Atlas A2) with the documented status — 161001 for null required arguments, 161002 for
dtype/format/shape/attribute violations and for features not implemented yet — and a log
line naming the parameter."""

import dataclasses

import numpy as np
import pytest
from fa_varlen_helpers import OP, make_kwargs

import fakit
from fakit import ops
from fakit.ops import Param

NULLPTR, INVALID = 161001, 161002


def base(**over):
    kw = make_kwargs(seq_q=(8, 4), seq_kv=(8, 6), n=2, d=16)
    kw.update(over)
    return kw


def expect(kw, status, param):
    with pytest.raises(fakit.AclnnError) as err:
        fakit.run(OP, backend="cpu", **kw)
    assert err.value.status == status, err.value.log
    assert param in err.value.log, err.value.log


def q(kw, dtype):
    return kw["query"].astype(dtype)


CASES = {
    "query_int8": (lambda kw: kw.update(query=q(kw, np.int8)), "query"),
    "key_dtype_differs": (lambda kw: kw.update(key=kw["key"].astype(np.float32)), "key"),
    "layout_not_tnd": (lambda kw: kw.update(input_layout="BSND"), "inputLayout"),
    "query_rank_4": (lambda kw: kw.update(query=kw["query"][None]), "query"),
    "head_num_mismatch": (lambda kw: kw.update(head_num=3), "headNum"),
    "head_num_zero": (lambda kw: kw.update(head_num=0), "headNum"),
    "heads_not_multiple_of_kv_heads": (
        lambda kw: kw.update(key=np.zeros((14, 3, 16), np.float16), value=np.zeros((14, 3, 16), np.float16)),
        "key",
    ),
    "value_shape_differs": (lambda kw: kw.update(value=kw["value"][:, :, :8].copy()), "value"),
    "head_dim_differs": (
        lambda kw: kw.update(key=kw["key"][:, :, :8].copy(), value=kw["value"][:, :, :8].copy()),
        "key",
    ),
    "head_dim_above_512": (
        lambda kw: kw.update(
            query=np.zeros((12, 1, 520), np.float16),
            key=np.zeros((14, 1, 520), np.float16),
            value=np.zeros((14, 1, 520), np.float16),
            head_num=1,
        ),
        "query",
    ),
    "seq_qlen_decreasing": (lambda kw: kw.update(actual_seq_qlen=[8, 4]), "actualSeqQLenOptional"),
    "seq_qlen_beyond_t": (lambda kw: kw.update(actual_seq_qlen=[8, 13]), "actualSeqQLenOptional"),
    "seq_kvlen_beyond_t": (lambda kw: kw.update(actual_seq_kvlen=[8, 15]), "actualSeqKvLenOptional"),
    "batch_counts_differ": (lambda kw: kw.update(actual_seq_kvlen=[14]), "actualSeqKvLenOptional"),
    "queries_without_keys": (lambda kw: kw.update(actual_seq_kvlen=[14, 14]), "actualSeqKvLenOptional"),
    "sparse_mode_5": (lambda kw: kw.update(sparse_mode=5), "sparseModeOptional"),
    "sparse_mode_9": (lambda kw: kw.update(sparse_mode=9), "sparseModeOptional"),
    "inner_precise_3": (lambda kw: kw.update(inner_precise=3), "innerPreciseOptional"),
    "keep_prob_zero": (lambda kw: kw.update(keep_prob=0.0), "keepProbOptional"),
    "keep_prob_above_one": (lambda kw: kw.update(keep_prob=1.5), "keepProbOptional"),
    "scale_nan": (lambda kw: kw.update(scale_value=float("nan")), "scaleValueOptional"),
    "band_without_intersection": (
        lambda kw: kw.update(atten_mask=np.zeros((8, 8), np.bool_), pre_tokens=-3, next_tokens=1),
        "nextTokensOptional",
    ),
    "mask_float": (lambda kw: kw.update(atten_mask=np.zeros((8, 8), np.float16)), "attenMaskOptional"),
    "mask_rank_3": (lambda kw: kw.update(atten_mask=np.zeros((1, 8, 8), np.bool_)), "attenMaskOptional"),
    "mask_too_small": (lambda kw: kw.update(atten_mask=np.zeros((8, 7), np.bool_)), "attenMaskOptional"),
    "prefix_missing_in_mode6": (
        lambda kw: kw.update(atten_mask=np.zeros((8, 8), np.bool_), sparse_mode=6),
        "prefixOptional",
    ),
    "prefix_count": (
        lambda kw: kw.update(atten_mask=np.zeros((8, 8), np.bool_), sparse_mode=6, prefix=[8]),
        "prefixOptional",
    ),
    "prefix_below_skv_minus_sq": (
        lambda kw: kw.update(atten_mask=np.zeros((8, 8), np.bool_), sparse_mode=6, prefix=[8, 1]),
        "prefixOptional",
    ),
    "pse_dtype": (lambda kw: kw.update(real_shift=np.zeros((1, 2, 8, 8), np.float32)), "realShiftOptional"),
    "pse_rank": (lambda kw: kw.update(real_shift=np.zeros((2, 8, 8), np.float16)), "realShiftOptional"),
    "pse_too_few_columns": (lambda kw: kw.update(real_shift=np.zeros((1, 2, 8, 7), np.float16)), "realShiftOptional"),
    "pse_too_few_rows": (lambda kw: kw.update(real_shift=np.zeros((1, 2, 7, 8), np.float16)), "realShiftOptional"),
    "pse_with_mode7": (
        lambda kw: kw.update(
            real_shift=np.zeros((1, 2, 8, 8), np.float16), atten_mask=np.zeros((8, 8), np.bool_), sparse_mode=7
        ),
        "realShiftOptional",
    ),
    "pse_with_empty_batch": (
        lambda kw: kw.update(real_shift=np.zeros((1, 2, 8, 8), np.float16), actual_seq_qlen=[8, 8]),
        "realShiftOptional",
    ),
    "head_num_above_256": (
        lambda kw: kw.update(
            query=np.zeros((12, 257, 16), np.float16),
            key=np.zeros((14, 257, 16), np.float16),
            value=np.zeros((14, 257, 16), np.float16),
            head_num=257,
        ),
        "headNum",
    ),
    "query_t_above_1m": (
        lambda kw: kw.update(
            query=np.zeros((1048577, 2, 1), np.float16),
            key=np.zeros((14, 2, 1), np.float16),
            value=np.zeros((14, 2, 1), np.float16),
        ),
        "query",
    ),
    "batch_above_2k": (
        lambda kw: kw.update(actual_seq_qlen=[0] * 2048 + [12], actual_seq_kvlen=[0] * 2048 + [14]),
        "actualSeqQLenOptional",
    ),
    "batch_above_1k_with_prefix": (
        lambda kw: kw.update(
            actual_seq_qlen=[0] * 1024 + [12],
            actual_seq_kvlen=[0] * 1024 + [14],
            sparse_mode=6,
            atten_mask=np.zeros((12, 14), np.bool_),
            prefix=[0] * 1024 + [2],
        ),
        "prefixOptional",
    ),
    "drop_mask_dtype": (lambda kw: kw.update(drop_mask=np.zeros(16, np.int8), keep_prob=0.5), "dropMaskOptional"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_invalid_argument_returns_161002_naming_the_parameter(name):
    kw = base()
    mutate, param = CASES[name]
    mutate(kw)
    expect(kw, INVALID, param)


def test_drop_mask_shorter_than_the_keep_bits_returns_161002():
    # dense, as spec 001 sizes it: 2 heads x (8 x 8 + 4 x 6) bits = 176 bits = 22 bytes
    expect(base(drop_mask=np.zeros(21, np.uint8), keep_prob=0.5), INVALID, "dropMaskOptional")


def test_dropout_mask_with_keep_prob_one_is_not_read():
    out = fakit.run(OP, backend="cpu", **base(drop_mask=np.zeros(64, np.uint8), keep_prob=1.0))
    assert np.isfinite(out["attention_out"].astype(np.float32)).all()


def _with_optional(monkeypatch, drop=()):
    """A copy of the binding in which every argument may be null and `drop` are omitted."""
    b = ops.REGISTRY[OP]
    params = [Param(p.name, p.kind, True) for p in b.params]

    def prepare(kw):
        vals = b.prepare(kw)
        for name in drop:
            vals.pop(name, None)
        return vals

    def outputs(kw):
        outs = b.make_outputs(b.prepare(base()))  # shapes from the full arguments
        return {k: v for k, v in outs.items() if k not in drop}

    nb = dataclasses.replace(
        b, op="fa_varlen_nulls", params=params, prepare=prepare, make_outputs=outputs, result=lambda outs: outs
    )
    monkeypatch.setitem(ops.REGISTRY, "fa_varlen_nulls", nb)


@pytest.mark.parametrize(
    "name",
    [
        "query",
        "key",
        "value",
        "softmaxMaxOut",
        "softmaxSumOut",
        "attentionOutOut",
        "actualSeqQLenOptional",
        "actualSeqKvLenOptional",
    ],
)
def test_null_required_argument_returns_161001(monkeypatch, name):
    _with_optional(monkeypatch, drop=(name,))
    with pytest.raises(fakit.AclnnError) as err:
        fakit.run("fa_varlen_nulls", backend="cpu", **base())
    assert err.value.status == NULLPTR, err.value.log
    assert name in err.value.log, err.value.log


def test_softmax_out_may_be_null(monkeypatch):
    _with_optional(monkeypatch, drop=("softmaxOutOut",))
    outs = fakit.run("fa_varlen_nulls", backend="cpu", **base())
    assert outs["attentionOutOut"].any()


@pytest.mark.parametrize(
    "name,shape", [("softmaxMaxOut", (12, 2, 1)), ("softmaxSumOut", (12, 2, 8, 1)), ("attentionOutOut", (12, 2, 8))]
)
def test_output_shapes_are_checked(monkeypatch, name, shape):
    b = ops.REGISTRY[OP]

    def outputs(kw):
        outs = b.make_outputs(kw)
        outs[name] = np.zeros(shape, outs[name].dtype)
        return outs

    monkeypatch.setitem(
        ops.REGISTRY, "fa_varlen_shapes", dataclasses.replace(b, op="fa_varlen_shapes", make_outputs=outputs)
    )
    with pytest.raises(fakit.AclnnError) as err:
        fakit.run("fa_varlen_shapes", backend="cpu", **base())
    assert err.value.status == INVALID and name in err.value.log, err.value.log


def test_softmax_stats_must_be_float32(monkeypatch):
    b = ops.REGISTRY[OP]

    def outputs(kw):
        outs = b.make_outputs(kw)
        outs["softmaxMaxOut"] = outs["softmaxMaxOut"].astype(np.float16)
        return outs

    monkeypatch.setitem(
        ops.REGISTRY, "fa_varlen_stats", dataclasses.replace(b, op="fa_varlen_stats", make_outputs=outputs)
    )
    with pytest.raises(fakit.AclnnError) as err:
        fakit.run("fa_varlen_stats", backend="cpu", **base())
    assert err.value.status == INVALID and "softmaxMaxOut" in err.value.log, err.value.log
