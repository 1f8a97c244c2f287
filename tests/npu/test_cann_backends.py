"""The sim / npu backends without CANN: error paths (BackendUnavailable with what to do), and the
whole write -> render -> build -> run -> read-back flow against the fake toolkit, checking the
compiler command line, the runner's environment (simulator LD_LIBRARY_PATH / LD_PRELOAD) and the
case files. The rendered runner sources compile with g++ against the emulator's acl headers."""

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

import fakit
from fakit.backends import aclnn_runner
from fakit.backends.aclnn_runner import Arg

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"

P = SimpleNamespace


def demo_binding():
    """An aclnn API with one argument of every kind (fixtures/include/aclnnop/aclnn_demo_all_kinds.h)."""
    params = [
        P(name="query", kind="tensor", optional=False),
        P(name="mask", kind="tensor", optional=True),
        P(name="key", kind="tensor_list", optional=False),
        P(name="seq_lens", kind="int_array", optional=True),
        P(name="absent_lens", kind="int_array", optional=True),
        P(name="num_heads", kind="int64", optional=False),
        P(name="scale_value", kind="double", optional=False),
        P(name="flag", kind="bool", optional=False),
        P(name="input_layout", kind="string", optional=False),
        P(name="out", kind="out_tensor", optional=False),
    ]
    return P(
        op="demo_all_kinds",
        aclnn="aclnnDemoAllKinds",
        header="aclnnop/aclnn_demo_all_kinds.h",
        params=params,
        prepare=None,
        result=None,
        make_outputs=lambda v: {"out": np.zeros(v["query"].shape, v["query"].dtype)},
    )


def demo_kwargs():
    rng = np.random.default_rng(0)
    return dict(
        query=rng.standard_normal((2, 3, 8)).astype(np.float16),
        key=[rng.standard_normal((2, 4, 8)).astype(ml_dtypes.bfloat16) for _ in range(2)],
        seq_lens=[3, 1],
        num_heads=1,
        scale_value=0.125,
        flag=True,
        input_layout="BSH",
    )


@pytest.fixture
def demo(monkeypatch):
    monkeypatch.setattr(aclnn_runner, "binding", lambda op: demo_binding())


@pytest.fixture
def sim_ready(fake_cann, monkeypatch, demo):
    """Fake toolkit + installed package + the stub compiler wrapper."""
    monkeypatch.setenv("FAKIT_CXX", str(fake_cann.root / "bin/fake-cxx"))
    fake_cann.vendor = fake_cann.install_package()
    return fake_cann


@pytest.mark.parametrize("backend", ["sim", "npu"])
def test_without_cann_the_backend_is_unavailable_and_says_what_to_install(no_cann, backend):
    with pytest.raises(fakit.BackendUnavailable, match="ASCEND_HOME_PATH nor ASCEND_CANN_PACKAGE_PATH") as e:
        fakit.run("prompt_flash_attention", backend=backend, query=np.zeros((1, 1, 16), np.float16))
    assert "Install the CANN toolkit" in str(e.value)


def test_sim_without_simulator_for_the_soc(fake_cann, monkeypatch, demo):
    monkeypatch.setenv("FAKIT_SOC", "ascend910b4")
    with pytest.raises(fakit.BackendUnavailable, match="no simulator for Ascend910B4"):
        fakit.run("demo_all_kinds", backend="sim", **demo_kwargs())


def test_sim_without_installed_package_says_how_to_build_and_install(fake_cann, demo):
    with pytest.raises(fakit.BackendUnavailable, match="no installed custom-op package of vendor 'fa'") as e:
        fakit.run("demo_all_kinds", backend="sim", **demo_kwargs())
    assert "./build.sh --target npu --soc ascend910b2 --pkg --vendor fa" in str(e.value)


def test_npu_without_device(sim_ready, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKIT_ASCEND_DEV", str(tmp_path))
    with pytest.raises(fakit.BackendUnavailable, match="no Ascend device"):
        fakit.run("demo_all_kinds", backend="npu", **demo_kwargs())


def test_sim_run_builds_against_the_package_and_runs_on_the_camodel_libs(sim_ready):
    kwargs = demo_kwargs()
    out = fakit.run("demo_all_kinds", backend="sim", **kwargs)
    assert out.shape == (2, 3, 8) and out.dtype == np.float16 and not out.any()  # the stub writes zeros
    cann, vendor = sim_ready.root, sim_ready.vendor
    [cc] = sim_ready.calls("fake-cxx")
    argv = cc["argv"]
    for flag in (
        f"-I{cann}/include",
        f"-I{vendor}/op_api/include",
        f"-L{vendor}/op_api/lib",
        f"-L{cann}/lib64",
        "-lcust_opapi",
        "-lnnopbase",
        "-lascendcl",
        f"-Wl,-rpath,{vendor}/op_api/lib",
    ):
        assert flag in argv
    [run] = sim_ready.calls("runner")
    sim_lib = f"{cann}/tools/simulator/Ascend910B2/lib"
    assert run["env"]["LD_LIBRARY_PATH"].split(":")[:3] == [sim_lib, f"{vendor}/op_api/lib", f"{cann}/lib64"]
    assert run["env"]["LD_PRELOAD"].split(":")[:2] == [
        f"{sim_lib}/libruntime_camodel.so",
        f"{sim_lib}/libnpu_drv_camodel.so",
    ]
    assert run["env"]["ASCEND_CUSTOM_OPP_PATH"].split(":")[0] == str(vendor)
    case_dir = Path(run["argv"][0])
    assert run["argv"][1] == "0"  # device id
    assert np.array_equal(np.fromfile(case_dir / "query.bin", np.float16).reshape(2, 3, 8), kwargs["query"])
    assert (case_dir / "key_1.bin").read_bytes() == kwargs["key"][1].tobytes()
    described = {a["name"]: a for a in json.loads((case_dir / "case.json").read_text())["args"]}
    assert described["mask"] == {"name": "mask", "kind": "tensor", "absent": True}
    assert described["out"]["shape"] == [2, 3, 8] and described["input_layout"]["value"] == "BSH"
    source = next(case_dir.parent.glob("runner_*.cpp")).read_text()
    assert '#include "aclnnop/aclnn_demo_all_kinds.h"' in source


def test_second_run_of_the_same_case_reuses_the_runner(sim_ready):
    fakit.run("demo_all_kinds", backend="sim", **demo_kwargs())
    fakit.run("demo_all_kinds", backend="sim", **demo_kwargs())
    assert len(sim_ready.calls("fake-cxx")) == 1 and len(sim_ready.calls("runner")) == 2


def test_package_from_set_env_bash_path_is_preferred(sim_ready, tmp_path, monkeypatch):
    own = sim_ready.install_package(where=tmp_path / "mine" / "vendors")
    monkeypatch.setenv("ASCEND_CUSTOM_OPP_PATH", f"{own}:")
    fakit.run("demo_all_kinds", backend="sim", **demo_kwargs())
    assert "-lcust_opapi" in sim_ready.calls("fake-cxx")[0]["argv"]
    assert f"-L{own}/op_api/lib" in sim_ready.calls("fake-cxx")[0]["argv"]


def test_npu_run_uses_the_device_without_simulator_libs(sim_ready, monkeypatch, tmp_path):
    (tmp_path / "davinci0").touch()
    monkeypatch.setenv("FAKIT_ASCEND_DEV", str(tmp_path))
    monkeypatch.setenv("FAKIT_DEVICE_ID", "3")
    fakit.run("demo_all_kinds", backend="npu", **demo_kwargs())
    [run] = sim_ready.calls("runner")
    assert "simulator" not in run["env"]["LD_LIBRARY_PATH"] and "LD_PRELOAD" not in run["env"]
    assert run["argv"][1] == "3"


def test_rejected_call_raises_aclnn_error_with_the_status(sim_ready, monkeypatch):
    monkeypatch.setenv("FAKE_RUNNER_STATUS", "0 161002")
    with pytest.raises(fakit.AclnnError) as e:
        fakit.run("demo_all_kinds", backend="sim", **demo_kwargs())
    assert e.value.status == 161002 and "aclnnDemoAllKinds GetWorkspaceSize" in e.value.log
    assert "query dtype DT_INT8" in e.value.log


def test_wrapped_sim_run_leaves_the_simulator_to_the_profiler(sim_ready, tmp_path):
    seen = {}

    def wrap(ctx, cmd):
        seen.update(ctx)
        return [str(sim_ready.root / "bin/msprof"), "op", "simulator", f"--output={tmp_path}", *cmd]

    aclnn_runner.run_cann("sim", "demo_all_kinds", demo_kwargs(), wrap=wrap)
    assert seen["soc"] == "ascend910b2" and seen["kernel"] == "demo_all_kinds"
    [prof] = sim_ready.calls("msprof")
    assert Path(prof["argv"][3]).name.startswith("runner_") and prof["argv"][5] == "0"
    assert f"{sim_ready.root}/tools/simulator/Ascend910B2/lib" in prof["env"]["LD_LIBRARY_PATH"]
    assert "LD_PRELOAD" not in prof["env"]  # msprof loads the simulator itself
    assert len(sim_ready.calls("runner")) == 1


def test_missing_required_argument_is_named(sim_ready):
    kwargs = demo_kwargs()
    del kwargs["num_heads"]
    with pytest.raises(ValueError, match="required argument 'num_heads' is missing"):
        fakit.run("demo_all_kinds", backend="sim", **kwargs)


# ------------------------------------------------------------------ rendered runner sources


def demo_args():
    kw = demo_kwargs()
    b = demo_binding()
    return [
        Arg(p.name, p.kind, kw.get(p.name) if p.kind != "out_tensor" else b.make_outputs(kw)["out"]) for p in b.params
    ]


def gxx_syntax(source: str, tmp_path: Path, *includes):
    src = tmp_path / "runner.cpp"
    src.write_text(source)
    cmd = [
        "g++",
        "-std=c++17",
        "-fsyntax-only",
        "-Wall",
        "-Wextra",
        "-Werror",
        f"-I{ROOT / 'emulator/include'}",
        *[f"-I{i}" for i in includes],
        str(src),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_rendered_runner_compiles_against_emulator_acl_headers(tmp_path):
    source = aclnn_runner.render("aclnnDemoAllKinds", "aclnnop/aclnn_demo_all_kinds.h", demo_args())
    proc = gxx_syntax(source, tmp_path, FIXTURES / "include")
    assert proc.returncode == 0, proc.stderr
    assert (
        "aclnnDemoAllKindsGetWorkspaceSize(arg_query, arg_mask, arg_key, arg_seq_lens, arg_absent_lens, "
        "arg_num_heads, arg_scale_value, arg_flag, arg_input_layout, arg_out, &workspaceSize, &executor)"
    ) in source
    assert 'MakeTensor("query.bin", ACL_FLOAT16, 2, {2, 3, 8})' in source
    assert 'MakeTensor("key_0.bin", ACL_BF16, 2, {2, 4, 8})' in source
    assert "aclTensor *arg_mask = nullptr;" in source and "aclIntArray *arg_absent_lens = nullptr;" in source
    assert 'char arg_input_layout[] = "BSH";' in source and "double arg_scale_value = 0.125;" in source
    assert 'SaveTensor(arg_outDev, "out_out.bin");' in source


def test_runner_with_wrong_argument_types_fails_to_compile(tmp_path):
    # The compile check is real: swapping two arguments of the API breaks the build.
    args = demo_args()
    args[0], args[2] = args[2], args[0]
    proc = gxx_syntax(
        aclnn_runner.render("aclnnDemoAllKinds", "aclnnop/aclnn_demo_all_kinds.h", args), tmp_path, FIXTURES / "include"
    )
    assert proc.returncode != 0 and "aclnnDemoAllKindsGetWorkspaceSize" in proc.stderr


def test_special_doubles_and_unsupported_dtypes(tmp_path):
    assert aclnn_runner.arg_context(Arg("x", "double", float("inf")))["literal"] == "HUGE_VAL"
    assert aclnn_runner.arg_context(Arg("x", "double", float("-inf")))["literal"] == "-HUGE_VAL"
    with pytest.raises(ValueError, match="argument 'c': dtype complex64 has no aclDataType"):
        aclnn_runner.arg_context(Arg("c", "tensor", np.zeros(2, np.complex64)))
    with pytest.raises(ValueError, match="scalar argument 'n' must have a value"):
        aclnn_runner.arg_context(Arg("n", "int64", None))
    with pytest.raises(ValueError, match="unknown kind"):
        Arg("z", "scalar", 1)


@pytest.mark.parametrize("backend", ["sim", "npu"])
def test_fakit_run_cli_without_cann_exits_2_with_the_message(no_cann_env, backend):
    import sys

    fakit_cli = Path(sys.executable).parent / "fakit"
    proc = subprocess.run(
        [
            str(fakit_cli),
            "run",
            "--op",
            "prompt_flash_attention",
            "--suite",
            "smoke",
            "--backend",
            backend,
            "--limit",
            "1",
        ],
        env=no_cann_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "neither ASCEND_HOME_PATH nor ASCEND_CANN_PACKAGE_PATH is set" in proc.stderr


def test_sim_run_under_msprof_op_simulator_on_request(sim_ready, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKIT_MSPROF_OUTPUT", str(tmp_path / "opprof"))
    out = fakit.run("demo_all_kinds", backend="sim", **demo_kwargs())
    assert out.shape == (2, 3, 8)
    [call] = sim_ready.calls("msprof")
    assert call["argv"][:4] == ["op", "simulator", "--soc-version=Ascend910B2", f"--output={tmp_path / 'opprof'}"]
    assert "LD_PRELOAD" not in call["env"]
