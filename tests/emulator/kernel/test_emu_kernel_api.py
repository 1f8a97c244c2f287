"""Per-API semantics, misuse and synchronisation tests of the emulator kernel side.

Each case runs in its own process (api_tests <case>); misuse and deadlock cases must abort
with a message naming the API, the core and the offending values."""

import os
import subprocess

import pytest

SEMANTIC_CASES = [
    "vec_level0_mask_stride",
    "vec_accumulate_repstride0",
    "vec_counter_mode",
    "vec_all_ops",
    "half_rounding",
    "cast_round_modes",
    "compare_select",
    "reductions",
    "brcb_copy",
    "sort_extract",
    "data_copy_pad",
    "int4_copy_cast",
    "cube_fractal_layouts",
    "cross_core_pingpong",
    "sync_all",
    "identity",
    "soc_selection",
    "bitwise_axpy",
    "fused_mul_add",
    "shifts",
    "cube_int8_gemv_atomic",
    "list_tensor_desc",
    "cube_transpose_b32",
    "cube_transpose_b8",
    "cube_transpose_b4",
    "cube_sparse",
    "unit_flag_timing",
    "buffer_peaks",
]

MISUSE_CASES = {
    "misuse_gm_out_of_range": ["DataCopy(GM->local) on aiv0.0", "runs 64 bytes past the end of its allocation"],
    "misuse_initbuffer_overflow": ["TPipe::InitBuffer(queue) on aiv0.0", "2 x 102400 bytes at VECIN", "of 196608"],
    "misuse_unit_flag_fixpipe_unset": [
        "Fixpipe(L0C->GM) on aic0",
        "unitFlag 3: L0C+0 holds no result of a Mmad with unitFlag 3",
    ],
    "misuse_unit_flag_mmad_unread": [
        "Mmad on aic0",
        "L0C+0 still holds a Mmad result no Fixpipe with unitFlag 3 has read out",
    ],
    "misuse_int4_odd_offset": ["GlobalTensor::operator[] on aiv0.0", "int4b_t offset 3 is odd"],
    "misuse_sparse_load": ["LoadDataWithSparse on aic0", "dst must be in B2, src and idx in B1; got L0A, L1, L1"],
    "misuse_nd2nz_rows_without_stride": [
        "DataCopy(GM->L1, Nd2NzParams) on aic0",
        "srcDValue 0 and dstNzNStride 1 must be >= 1 when nValue 2 > 1",
    ],
    "misuse_initbuffer_fb": ["TPipe::InitBuffer(TBuf) on aic0", "1 x 7200 bytes at C2PIPE2GM", "of 7168"],
    # the A2 core's physical sizes (UB 192 KiB above): L1 512 KiB, L0A / L0B 64 KiB, L0C 128 KiB
    "misuse_initbuffer_l1": [
        "TPipe::InitBuffer(TBuf) on aic0",
        "32 bytes at A1 (physical L1)",
        "524288 already used of 524288",
    ],
    "misuse_initbuffer_l0a": ["TPipe::InitBuffer(TBuf) on aic0", "at A2 (physical L0A)", "65536 already used of 65536"],
    "misuse_initbuffer_l0b": ["TPipe::InitBuffer(TBuf) on aic0", "at B2 (physical L0B)", "65536 already used of 65536"],
    "misuse_initbuffer_l0c": [
        "TPipe::InitBuffer(TBuf) on aic0",
        "at CO1 (physical L0C)",
        "131072 already used of 131072",
    ],
    "misuse_tiling_key_not_a_literal": [
        "TILING_KEY_IS on aiv0.0",
        "the key 'key' does not expand to an integer literal",
    ],
    "misuse_local_out_of_range": ["Exp on aiv0.0", "dst: the instruction touches 1200 bytes but the tensor has 1024"],
    "misuse_misaligned": ["Add on aiv0.0", "UB+12 is not 32-byte aligned"],
    "misuse_deque_empty": ["TQue::DeQue on aiv0.0", "VECIN queue is empty"],
    "misuse_wrong_position": ["Mmad on aic0", "fm in L0A (A2)", "got L0C, L1, L1"],
    "misuse_sort_nan": ["Sort on aiv0.0", "score 7 is NaN"],
    "misuse_cast_mode": ["Cast on aiv0.0", "CAST_NONE is not supported for float -> bfloat16_t"],
    "misuse_shift_range": ["ShiftRight on aiv0.0", "shift 17 is outside [0, 16] for uint16_t"],
    "misuse_waitflag_unset": ["WaitFlag on aiv0.0", "event MTE2_V id 3 was never set"],
    "misuse_syncall_too_many_cores": [
        "SyncAll on aiv",
        "blockDim 60 exceeds the 48 cores that can run at once on Ascend910B2",
    ],
    "misuse_event_wrong_core": ["SetFlag on aic0", "event V_MTE3 does not exist on this core type"],
    "deadlock_missing_set": [
        "deadlock in kernel api_test",
        "aic0 waits in CrossCoreWaitFlag(flagId 5)",
        "aic1 waits in CrossCoreWaitFlag(flagId 5)",
    ],
    "deadlock_cycle": [
        "deadlock in kernel api_test",
        "aic0 waits in CrossCoreWaitFlag(flagId 1)",
        "aiv0.0 waits in CrossCoreWaitFlag(flagId 2)",
        "aiv0.1 waits in CrossCoreWaitFlag(flagId 2)",
    ],
    # a mode-1/2 group set needs one set from EACH vector core; one AIV setting twice is not enough
    "deadlock_mode2_one_aiv_sets_twice": ["deadlock in kernel api_test", "aic0 waits in CrossCoreWaitFlag(flagId 3)"],
    "deadlock_mode1_one_aiv_sets_twice": ["deadlock in kernel api_test", "aiv0.1 waits in CrossCoreWaitFlag(flagId 4)"],
}


def _run(emu_build, case, timeout=60, env=None):
    return subprocess.run(
        [str(emu_build / "api_tests"), case], capture_output=True, text=True, timeout=timeout, env=env
    )


RACE_CASES = {
    "race_vector_missing_sync": [
        "Adds on aiv0.0",
        "pipe V reads UB+0, which pipe MTE2 wrote without an ordering MTE2 -> V",
        "HardEvent::MTE2_V",
    ],
    "race_cube_missing_sync": [
        "Fixpipe(L0C->GM) on aic0",
        "pipe FIX reads L0C+0, which pipe M wrote",
        "HardEvent::M_FIX",
    ],
}


def test_every_case_is_listed(emu_build):
    listed = set(
        subprocess.run([str(emu_build / "api_tests"), "--list"], capture_output=True, text=True).stdout.split()
    )
    assert listed == set(SEMANTIC_CASES) | set(MISUSE_CASES) | set(RACE_CASES) | {"race_vector_synced"}


def test_race_checker_accepts_synchronised_code(emu_build):
    res = _run(emu_build, "race_vector_synced", env={**os.environ, "ASCEND_EMU_RACECHECK": "1"})
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("case", sorted(RACE_CASES))
def test_race_checker_reports_missing_sync(emu_build, case):
    ok = _run(emu_build, case, env={k: v for k, v in os.environ.items() if k != "ASCEND_EMU_RACECHECK"})
    assert ok.returncode == 0, "without the checker the immediate-execution model computes it: " + ok.stderr
    res = _run(emu_build, case, env={**os.environ, "ASCEND_EMU_RACECHECK": "1"})
    assert res.returncode != 0
    for fragment in RACE_CASES[case]:
        assert fragment in res.stderr, res.stderr


@pytest.mark.parametrize("case", SEMANTIC_CASES)
def test_api_semantics(emu_build, case):
    res = _run(emu_build, case)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"PASS {case}" in res.stdout


@pytest.mark.parametrize("case", sorted(MISUSE_CASES))
def test_misuse_aborts_with_message(emu_build, case):
    res = _run(emu_build, case, timeout=30)  # a deadlock must be reported, never hang
    assert res.returncode != 0
    for fragment in MISUSE_CASES[case]:
        assert fragment in res.stderr, res.stderr


@pytest.mark.parametrize(
    "soc,line",
    [
        (None, "soc Ascend910B2 aic 24 aiv 48 ub 196608 l1 524288"),
        ("Ascend910B4", "soc Ascend910B4 aic 20 aiv 40 ub 196608 l1 524288"),
    ],
)
def test_soc_table_selection(emu_build, soc, line):
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_EMU_SOC"}
    if soc:
        env["ASCEND_EMU_SOC"] = soc
    res = _run(emu_build, "soc_selection", env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert line in res.stdout


def test_unknown_soc_is_rejected(emu_build):
    res = _run(emu_build, "soc_selection", env={**os.environ, "ASCEND_EMU_SOC": "Ascend999"})
    assert res.returncode != 0
    assert "ASCEND_EMU_SOC=Ascend999 is not a known SoC" in res.stderr and "Ascend910_93" in res.stderr
