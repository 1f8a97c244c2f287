"""The hazard checker on global memory (ASCEND_EMU_RACECHECK=1): race_gm_tests.cpp runs small
kernels that share GM between cores or between two pipes of one core. Every case computes
without the checker; with it, an unordered pair of accesses aborts the launch with the API, the
two cores and pipes, the place in the allocation and the ordering that is missing."""

import os
import subprocess

import pytest

CLEAN = [
    "war_cube_waits_consumed",  # the vector cores hand the slot back (flag set on MTE2, the reading pipe)
    "raw_flag_on_writing_pipe",
    "syncall_producer_consumer",
    "mode1_vector_pair_exchange",  # a group set publishes every member's writes
    "atomic_adds_concurrent",
    "same_core_write_read_synced",
    "neighbours_share_a_granule",  # disjoint bytes of one 32-byte granule
    "fifo_both_sets_consumed",  # two waits consume both pending group sets
    "transitive_order_across_three_cores",  # cube -> its vector cores -> mode-0 set -> other block
    "scalar_set_get_after_syncall",
    "split_page_rest_is_clean",  # a split page keeps the first (ordered) write elsewhere
    "strided_rows_interleave",  # interleaved rows of two cores: disjoint bytes
    "wait_mte2_passed_on_to_fix",  # a wait on MTE2, passed on to FIX by SetFlag/WaitFlag<MTE2_FIX>
    "wait_fix_then_fix_overwrites",
    "wait_mte2_then_mte2_reads",
    "wait_mte2_queued_to_mte3",  # the wait's row reaches MTE3 through TQue hand-overs MTE2 -> V -> MTE3
    "wait_mte3_then_mte3_overwrites",
    "ref_write_after_syncall",
    "ref_reads_concurrent",  # reads through GlobalTensor::operator() on two cores
]

RACES = {
    # The cube overwrites the slot without waiting for the vector cores' "consumed" flag: either
    # a vector core reads the second write it did not wait for, or the cube overwrites the read.
    "war_cube_overwrites_unconsumed_slot": [
        "of kernel race_gm: pipe ",
        "1024-byte allocation",
        "with no cross-core ordering in between",
        "aic0",
        "aiv0.",
    ],
    "raw_no_flag": ["GM 0x", "1024-byte allocation", "with no cross-core ordering in between", "aic0", "aiv0."],
    "raw_flag_on_wrong_pipe": [
        "DataCopy(GM->local) on aic0",
        "pipe MTE2 reads GM",
        "byte 0 of the 1024-byte allocation",
        "which pipe MTE3 of aiv0.0 wrote (DataCopy(local->GM))",
        "with no cross-core ordering in between",
        "CrossCoreSetFlag on a pipe that is ordered after that access (MTE3",
    ],
    # One wait consumes the first of two pending sets (FIFO): the write behind the second is unordered.
    "fifo_wait_consumes_first_set": ["byte 512 of the 1024-byte allocation", "aiv0.0", "aiv1.0"],
    # The middle cores set the mode-0 flag before they waited for the cube: no chain.
    "transitive_link_missing": ["1024-byte allocation", "aic0", "aiv1.", "with no cross-core ordering in between"],
    "scalar_set_get_unordered": ["byte 12 of the 256-byte allocation", "pipe S of aiv", "with no cross-core ordering"],
    # Blocks of different waves are not ordered on the hardware.
    "cross_wave_same_row": ["DataCopy(local->GM) on aiv129.0", "which pipe MTE3 of aiv0.0 wrote"],
    "neighbours_overlap_one_float": [
        "256-byte allocation",
        "pipe MTE3 overwrites GM",
        "with no cross-core ordering in between",
    ],
    "split_page_partial_write_races": ["8192-byte allocation", "aiv1.0", "aiv2.0"],
    "atomic_then_plain_write": [
        "byte 0 of the 256-byte allocation",
        "atomic",
        "with no cross-core ordering in between",
    ],
    "atomic_add_then_plain_read": ["256-byte allocation", "atomic", "with no cross-core ordering in between"],
    # A cross-core wait on MTE2 holds MTE2 only: FIX, MTE3 and the scalar unit are not ordered.
    "wait_mte2_then_fix_overwrites": [
        "Fixpipe",
        "on aic0",
        "pipe FIX overwrites GM",
        "which pipe MTE2 of aiv0.",
        "with no cross-core ordering in between",
    ],
    "wait_mte2_then_scalar_reads": ["on aic0", "pipe S reads GM", "which pipe MTE3 of aiv0.1 wrote"],
    "wait_mte2_then_mte3_overwrites": ["on aiv0.", "pipe MTE3 overwrites GM", "which pipe MTE2 of aic0 read"],
    "ref_write_unordered": [
        "byte 20 of the 256-byte allocation",
        "a write through its reference",
        "with no cross-core ordering in between",
    ],
    "local_flag_never_waited": [
        "end of kernel on aiv0.0 of kernel race_gm",
        "SetFlag<HardEvent::V_MTE3>(2) was never waited",
        "pipe MTE3 never ran WaitFlag<HardEvent::V_MTE3>(2) for pipe V",
    ],
    "cross_flag_never_waited": [
        "end of kernel race_gm: aiv0.0 never consumed 1 CrossCoreSetFlag(flagId 1)",
        "set by aic0 (CrossCoreSetFlag<2, PIPE_FIX>)",
    ],
    "group_set_incomplete": ["aiv0.0 made a group CrossCoreSetFlag<1, PIPE_MTE3>(flagId 1) in mode 1"],
    "same_core_write_read_unsynced": [
        "DataCopy(GM->local) on aiv0.0",
        "pipe MTE2 reads GM",
        "which pipe MTE3 wrote (DataCopy(local->GM)) without an ordering MTE3 -> MTE2",
        "HardEvent::MTE3_MTE2",
    ],
}


def _run(emu_build, case, check):
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_EMU_RACECHECK"}
    if check:
        env["ASCEND_EMU_RACECHECK"] = "1"
    return subprocess.run([str(emu_build / "race_gm_tests"), case], capture_output=True, text=True, timeout=60, env=env)


def test_every_case_is_listed(emu_build):
    res = subprocess.run([str(emu_build / "race_gm_tests"), "--list"], capture_output=True, text=True)
    assert set(res.stdout.split()) == set(CLEAN) | set(RACES) | {"raise_mode_survives"}


@pytest.mark.parametrize("case", CLEAN)
def test_ordered_gm_sharing_is_clean(emu_build, case):
    res = _run(emu_build, case, True)
    assert res.returncode == 0 and f"DONE {case}" in res.stdout and "FAIL" not in res.stdout, res.stdout + res.stderr


@pytest.mark.parametrize("case", sorted(RACES))
def test_unordered_gm_sharing_aborts(emu_build, case):
    ok = _run(emu_build, case, False)
    assert ok.returncode == 0, "without the checker the kernel runs: " + ok.stderr
    res = _run(emu_build, case, True)
    assert res.returncode != 0
    for fragment in RACES[case]:
        assert fragment in res.stderr, res.stderr


def test_race_in_raise_mode_ends_only_the_launch(emu_build):
    """FaultMode kRaise (the Python harness): the race ends the launch with LaunchFault; the
    process survives and its next launch runs."""
    res = _run(emu_build, "raise_mode_survives", True)
    assert res.returncode == 0 and "survived" in res.stdout and "FAIL" not in res.stdout, res.stdout + res.stderr
