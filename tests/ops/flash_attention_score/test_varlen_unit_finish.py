"""The forward vector's unit finish with the softmax statistics (forward_vector_output.h
StoreRows): a unit's cast output rows and its statistics leave UB from the O-slot rows (part_)
with no wait, and whatever writes part_ next (the next O-slot load, the next finish) or ends the
core waits for those stores first (VEC_EVT_FINISH). Launches of many short units per core reach
every such reuse: a finish right after a finish (one key block per unit), units whose second
vector core has no rows (one-row units), units with no key block (finished on the spot, between
two units in flight), rows without a visible key (invalid statistics) and the last unit of a
core. Each runs with the hazard checker on (UB and GM) and poisoned allocations, and twice: the
outputs must match the golden and each other bit for bit."""

import numpy as np
import pytest
from fa_varlen_helpers import make_kwargs, run_and_judge


@pytest.fixture(autouse=True)
def race_checked(monkeypatch, capfd):
    monkeypatch.setenv("ASCEND_EMU_RACECHECK", "1")
    yield
    # A core that ends with its last finish's EVT_FINISH set and never waited leaves stores in
    # flight past its end (the emulator warns on stderr).
    err = capfd.readouterr().err
    assert "never waited" not in err, err


def _twice(kw):
    first, _ = run_and_judge(kw)
    second, _ = run_and_judge(kw)
    for name in ("attention_out", "softmax_max", "softmax_sum"):
        np.testing.assert_array_equal(first[name], second[name], err_msg=name)
    return first


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_many_one_block_units_per_core(dtype):
    # 64 batches of 1-3 query rows and one key block each, 4 heads: 256 units on the cores,
    # each finished right after its only block; one-row units leave the second vector core
    # without rows.
    rng = np.random.default_rng(7)
    seq_q = tuple(int(x) for x in rng.integers(1, 4, 64))
    seq_kv = tuple(int(x) for x in rng.integers(1, 90, 64))
    _twice(make_kwargs(dtype, seq_q=seq_q, seq_kv=seq_kv, n=4, d=64))


def test_units_without_keys_between_units_in_flight():
    # Bottom-right causal (mode 3) with many more query rows than keys: a batch's first q-blocks
    # see no key at all, so their units are finished on the spot (zero output, invalid
    # statistics) right after the keyed unit before them (another head's last q-block) on the
    # same core, whose stores from part_ are then still in flight: the only finish that is not
    # preceded by an O-slot load of its own. Enough batches that every core takes several units.
    seq_q = tuple(300 + 40 * (i % 3) for i in range(60))
    seq_kv = tuple(3 + 11 * (i % 4) for i in range(60))
    out = _twice(make_kwargs(seq_q=seq_q, seq_kv=seq_kv, n=2, d=64, mode=3))
    starts = np.cumsum((0,) + seq_q)
    for i in range(60):
        blind = seq_q[i] - seq_kv[i]  # rows before the first visible key
        assert not out["attention_out"][starts[i] : starts[i] + blind].any()


def test_causal_rows_without_visible_keys_and_wide_heads():
    # Bottom-right causal (mode 3) with more query rows than keys: the first rows of a batch see
    # no key (invalid statistics); D = 256 fp32 needs the largest finish region in part_.
    seq_q = tuple(9 + i % 7 for i in range(20))
    seq_kv = tuple(3 + i % 4 for i in range(20))
    _twice(make_kwargs("fp32", seq_q=seq_q, seq_kv=seq_kv, n=2, d=256, mode=3))


def test_many_multi_block_units_with_partial_sub_blocks():
    # Units of up to a few key blocks and query lengths just past a vector core's rows (uneven
    # halves), GQA: finishes alternate with O-slot loads of the next unit.
    seq_q = tuple(17 + (i * 13) % 70 for i in range(24))
    seq_kv = tuple(100 + (i * 37) % 300 for i in range(24))
    _twice(make_kwargs("bf16", seq_q=seq_q, seq_kv=seq_kv, n=4, nkv=2, d=128))
