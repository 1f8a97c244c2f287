"""PFA's unit finish (forward_vector_output.h StoreRows): where the O-slot rows hold the cast
output rows, a unit's output stores leave UB from there with no wait, and the next write of
those rows or the end of the core waits for them (VEC_EVT_FINISH). A band that leaves a head's
first q-blocks without any key makes units finished on the spot right after another head's
keyed unit on the same core: the one finish whose stores are not preceded by an O-slot load of
its own. Run with the hazard checker on (UB and GM), poisoned allocations, twice."""

import numpy as np
import pytest
from pfa_helpers import MAX_INT, band_mask, make_kwargs, run_and_judge


@pytest.fixture(autouse=True)
def race_checked(monkeypatch, capfd):
    monkeypatch.setenv("ASCEND_EMU_RACECHECK", "1")
    yield
    err = capfd.readouterr().err
    assert "never waited" not in err, err


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_units_without_keys_after_keyed_units(dtype):
    sq, skv, nxt = 640, 600, -400  # rows below 400 see no key
    kw = make_kwargs(
        dtype,
        "BNSD",
        b=3,
        n=8,
        sq=sq,
        skv=skv,
        d=64,
        mask=band_mask(sq, skv, nxt=nxt),
        pre_tokens=MAX_INT,
        next_tokens=nxt,
    )
    first, _ = run_and_judge(kw)
    second, _ = run_and_judge(kw)
    np.testing.assert_array_equal(first, second)
    assert not first[:, :, :-nxt].any()


@pytest.mark.parametrize(
    "dtype,d,sq,skv,causal",
    [
        ("fp16", 128, 176, 300, False),  # 176-row q-blocks: Q halves of 96 + 80 rows
        ("bf16", 72, 100, 400, False),  # unaligned D: the last P.V in 48 + 24 columns
        ("fp16", 128, 300, 300, True),  # under a band: units of one and of several key blocks
    ],
)
def test_unit_boundary_split_final_sum_and_q_halves(dtype, d, sq, skv, causal):
    # Several units per core, each with two key blocks or more: a unit's last P.V runs in two
    # head-dim halves with the first half's final-sum columns written under the second's Mmad,
    # and the next unit's Q block is copied in two row halves after the unit's first two S
    # (forward_cube.h).
    extra = dict(mask=band_mask(sq, skv), pre_tokens=MAX_INT, next_tokens=0) if causal else {}
    kw = make_kwargs(dtype, "BNSD", b=2, n=32, nkv=8, sq=sq, skv=skv, d=d, **extra)
    first, _ = run_and_judge(kw)
    second, _ = run_and_judge(kw)
    np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize(
    "sq,skv,d,pre,nxt",
    [
        (1024, 1024, 192, MAX_INT, -300),  # core 2: a keyed unit, two without keys, a keyed one
        (1024, 1024, 192, MAX_INT, -700),  # every unit from a core's fourth on without keys
        (2048, 512, 256, 128, 0),  # rows from 640 on see no key: empty units late in the order
    ],
)
def test_q_staged_per_core_beside_units_without_keys(sq, skv, d, pre, nxt):
    # D > 128 staged in K/V pairs with Q blocks staged per core from each core's fourth unit on
    # (kv_nz.h QStart): the cube's lookahead skips units without keys, so a staged block may be
    # loaded during a core's first unit (it must read the caller's rows there, not wait for the
    # vector cores' signal, which comes a unit later), and a core may load none at all (the
    # signal is then waited for at the cube's end, not left set past the launch).
    kw = make_kwargs(
        "fp16", "BNSD", b=1, n=8 if d == 192 else 4, sq=sq, skv=skv, d=d, mask=band_mask(sq, skv, pre, nxt)
    )
    run_and_judge(dict(kw, pre_tokens=pre, next_tokens=nxt))
