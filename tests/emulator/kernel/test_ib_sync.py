"""IBSet / IBWait (kernel_operator_block_sync_intf.h): ib_sync_tests.cpp hands GM data from one
vector core to another through a GM slot. Ordered hand-overs compute and run clean under the
hazard checker; a read without the IBWait, or a slot reused without a "read" back, is reported;
a wait no core can end, a slot outside the workspace and a short ubWorkspace abort with a message
naming the call (in FaultMode kRaise the process survives)."""

import os
import subprocess

import pytest

CLEAN = [
    "handover_ordered",
    "handover_ping_pong",  # one slot each way, reused every round
    "host_preset_slot",  # a slot the host set to 1 passes an IBWait at once
    "aic_is_a_no_op",
    "mix_slots_of_every_vector_core",  # isAIVOnly = false: GetBlockNum() * 2 slots per event
    "across_waves",  # a block of the second wave waits for one of the first
    "plain_write_releases_wait",  # a plain kernel write of the slot, its writer then in SyncAll
]

RACES = {
    "handover_without_ibwait": [
        "of kernel ib_sync",
        "IBSet's a slot after that access that this core IBWait's before this access",
        "with no cross-core ordering in between",
        "aiv0.0",
        "aiv1.0",
    ],
    "reuse_without_ack": ["256-byte allocation", "with no cross-core ordering in between", "aiv0.0", "aiv1.0"],
    # the slot's earlier IBSet / IBWait pair orders nothing for a wait a plain write released
    "stale_handover_orders_nothing": ["aiv3.0", "which pipe MTE3 of aiv0.0 wrote", "with no cross-core ordering"],
}

MISUSES = {
    "wait_never_set": [
        "deadlock in kernel ib_sync",
        "aiv0.0 waits in IBWait(blockIdx 1, eventID 2) for its gmWorkspace slot",
        "to hold 1 (it holds 0: no IBSet of the slot)",
    ],
    "set_twice_never_waited": [
        "deadlock in kernel ib_sync",
        "aiv0.0 waits in IBSet(blockIdx 0, eventID 0)",
        "the slot's last IBSet was not IBWait-ed",
    ],
    "slot_outside_workspace": [
        "IBSet on aiv1.0 of kernel ib_sync",
        "the slot of blockIdx 1, eventID 1 is gmWorkspace[24, +8) (blockNum 2), outside gmWorkspace's 16 int32",
    ],
    "slot_outside_allocation": [
        "IBWait on aiv1.0 of kernel ib_sync",
        "gmWorkspace slot of blockIdx 1, eventID 1 GM address",
        "(+32 bytes) is not inside any device allocation",
    ],
    "ub_workspace_too_small": ["IBSet on aiv0.0", "ubWorkspace holds 4 int32; the poll copies a 32-byte block"],
    "ub_workspace_misaligned": ["IBSet on aiv0.0", "ubWorkspace address UB+4 is not 32-byte aligned"],
    "wait_on_later_wave": [
        "deadlock in kernel ib_sync",
        "(blocks from 48 on run in a later wave here",
        "aiv0.0 waits in IBWait(blockIdx 48, eventID 0)",
        "(it holds 0: no IBSet of the slot)",
    ],
}


def _run(emu_build, case, check, timeout=60):
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_EMU_RACECHECK"}
    if check:
        env["ASCEND_EMU_RACECHECK"] = "1"
    return subprocess.run(
        [str(emu_build / "ib_sync_tests"), case], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_every_case_is_listed(emu_build):
    res = subprocess.run([str(emu_build / "ib_sync_tests"), "--list"], capture_output=True, text=True)
    assert set(res.stdout.split()) == set(CLEAN) | set(RACES) | set(MISUSES) | {"deadlock_in_raise_mode_survives"}


@pytest.mark.parametrize("check", [False, True])
@pytest.mark.parametrize("case", CLEAN)
def test_ordered_handover_computes_and_is_clean(emu_build, case, check):
    res = _run(emu_build, case, check)
    assert res.returncode == 0 and f"DONE {case}" in res.stdout and "FAIL" not in res.stdout, res.stdout + res.stderr


@pytest.mark.parametrize("case", sorted(RACES))
def test_unordered_handover_is_reported(emu_build, case):
    ok = _run(emu_build, case, False)
    assert ok.returncode == 0, "without the checker the kernel runs: " + ok.stderr
    res = _run(emu_build, case, True)
    assert res.returncode != 0
    for fragment in RACES[case]:
        assert fragment in res.stderr, res.stderr


@pytest.mark.parametrize("case", sorted(MISUSES))
def test_misuse_aborts_with_message(emu_build, case):
    res = _run(emu_build, case, False, timeout=30)  # a wait no core ends is reported, never hangs
    assert res.returncode != 0
    for fragment in MISUSES[case]:
        assert fragment in res.stderr, res.stderr


def test_deadlock_in_raise_mode_ends_only_the_launch(emu_build):
    res = _run(emu_build, "deadlock_in_raise_mode_survives", True)
    assert res.returncode == 0 and "survived" in res.stdout and "FAIL" not in res.stdout, res.stdout + res.stderr
