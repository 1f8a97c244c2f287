"""The emulator against kernels written the way CANN's samples write them (tests/emulator/genuine):
they compile and compute the right numbers, synchronised by explicit event ids (checked with the
pipe-hazard checker on); and the emulator's headers reject what CANN's headers reject, so a kernel
that compiles here compiles with CANN (which header declares what, const-ness)."""

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
INCLUDE = REPO / "emulator" / "include"


def test_genuine_kernels_compute_the_reference_with_the_race_checker_on(emu_build):
    res = subprocess.run(
        [str(emu_build / "genuine_kernels")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ASCEND_EMU_RACECHECK": "1"},
    )
    assert res.returncode == 0, res.stdout + res.stderr
    for kernel in (
        "events_vec_add",
        "events_mmad",
        "list_gather",
        "conv_unit_flag",
        "load3d_layouts",
        "vec_5hd",
        "int8_digit_block",
        "int8_digit_vector",
        "int8_digit_rows",
        "int8_digit_folds",
        "int8_query_digits",
        "int8_digit_cube",
        "int8_digit_chain",
        "int8_digit_unit",
        "ib_sync_ring",
        "ib_sync_mix",
    ):
        assert f"PASS {kernel}" in res.stdout, res.stdout


def _syntax_check(tmp_path, source):
    src = tmp_path / "k.cpp"
    src.write_text(source)
    return subprocess.run(
        ["g++", "-std=c++17", "-fsyntax-only", "-DASCENDC_CPU_DEBUG=1", f"-I{INCLUDE}", str(src)],
        capture_output=True,
        text=True,
    )


LIST_KERNEL = """
#include "kernel_operator.h"
{extra_include}
extern "C" __global__ __aicore__ void k(GM_ADDR list) {{
    {const}AscendC::ListTensorDesc d(reinterpret_cast<__gm__ void *>(list));
    (void)d.GetDataPtr<half>(0);
    (void)d.GetSize();
}}
"""


def test_list_tensor_desc_needs_its_own_header_as_on_cann(tmp_path):
    res = _syntax_check(tmp_path, LIST_KERNEL.format(extra_include="", const=""))
    assert res.returncode != 0 and "ListTensorDesc" in res.stderr, res.stderr
    ok = _syntax_check(
        tmp_path, LIST_KERNEL.format(extra_include='#include "kernel_operator_list_tensor_intf.h"', const="")
    )
    assert ok.returncode == 0, ok.stderr


def test_list_tensor_desc_accessors_are_non_const_as_on_cann(tmp_path):
    res = _syntax_check(
        tmp_path, LIST_KERNEL.format(extra_include='#include "kernel_operator_list_tensor_intf.h"', const="const ")
    )
    assert res.returncode != 0 and ("GetDataPtr" in res.stderr or "GetSize" in res.stderr), res.stderr


@pytest.mark.parametrize("event", [f"EVENT_ID{i}" for i in range(8)])
def test_event_ids_are_the_compiler_builtin_names(tmp_path, event):
    res = _syntax_check(
        tmp_path,
        f"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void k() {{
    event_t id = {event};
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(id);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>({event});
}}
""",
    )
    assert res.returncode == 0, res.stderr


def test_status_codes_come_from_op_errno_not_aclnn_base(tmp_path):
    base = _syntax_check(tmp_path, '#include "aclnn/aclnn_base.h"\nint f() { return ACLNN_SUCCESS; }\n')
    assert base.returncode != 0 and "ACLNN_SUCCESS" in base.stderr
    errno = _syntax_check(
        tmp_path,
        '#include "aclnn/opdev/op_errno.h"\n'
        'static_assert(ACLNN_ERR_PARAM_NULLPTR == 161001 && ACLNN_ERR_PARAM_INVALID == 161002);\n',
    )
    assert errno.returncode == 0, errno.stderr
