"""Efficiency properties read from the emulator's counters: blocks outside the causal band
are skipped, Q is read once per unit and K/V at most once per pass, the work spreads over the cores.
(The full-size figures come from benchmarks/pfa_efficiency.py and live in docs/performance.md.)"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import pfa_efficiency as eff  # noqa: E402


@pytest.fixture(scope="module")
def causal():
    return eff.measure(eff.measurement("causal_s1024_d64", 1024, 64, True))


@pytest.fixture(scope="module")
def causal_tall():
    # 32 heads: q-blocks of 192 rows, so the key blocks of a diagonal tile start below some rows
    return eff.measure(eff.measurement("causal_s1024_d128_h32", 1024, 128, True, heads=32))


@pytest.fixture(scope="module")
def full():
    return eff.measure(eff.measurement("full_s1024_d64_h4", 1024, 64, False, heads=4))


def test_causal_blocks_outside_the_band_are_skipped(causal):
    # Computing every block would issue ~2x the useful MACs.
    assert causal["mac_ratio"] <= 1.15, causal


def test_causal_rows_before_the_band_get_no_scores(causal_tall):
    # Q.K^T of every row of the diagonal tiles would issue 1.17x the useful MACs here.
    assert causal_tall["mac_ratio"] <= 1.15, causal_tall


def test_non_causal_issues_exactly_the_useful_macs(full):
    assert full["mac_ratio"] == pytest.approx(1.0), full


@pytest.mark.parametrize("which", ["causal", "full"])
def test_tensor_traffic_is_at_most_one_read_per_pass(which, request):
    # At most: a causal head's later q-block takes the key blocks the cube's K/V cache still
    # holds from the q-block before it on the core without loading them again.
    r = request.getfixturevalue(which)
    assert 0.5 <= r["tensor_gm_ratio"] <= 1.01, r


@pytest.mark.parametrize("which", ["causal", "full"])
def test_work_uses_every_core_with_balanced_load(which, request):
    r = request.getfixturevalue(which)
    assert r["block_dim"] >= 20, r  # every AI core of an Atlas A2 (20 or 24)
    assert r["core_balance"] <= 1.5, r
