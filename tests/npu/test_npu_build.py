"""cmake/npu_build.sh and cmake/npu.cmake without CANN: the error paths, the command lines the
script runs, and the CMake configuration npu.cmake generates against a stub ASC package."""
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
NPU_BUILD = ROOT / "cmake" / "npu_build.sh"
TREE = FIXTURES / "tree"


def run_script(args, env, cwd=ROOT):
    return subprocess.run(["bash", str(NPU_BUILD), *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_without_cann_stops_at_once_with_exit_2_and_says_what_to_install(no_cann_env, tmp_path):
    build_dir = tmp_path / "b"
    proc = run_script(["--soc", "ascend910b2", "--pkg", "--build-dir", str(build_dir)], no_cann_env)
    assert proc.returncode == 2
    assert "ASCEND_HOME_PATH" in proc.stderr and "ASCEND_CANN_PACKAGE_PATH" in proc.stderr
    assert "Install the CANN toolkit" in proc.stderr and "set_env.sh" in proc.stderr
    assert not build_dir.exists()          # nothing was configured


def test_cann_path_that_does_not_exist_is_named(no_cann_env, tmp_path):
    env = dict(no_cann_env, ASCEND_CANN_PACKAGE_PATH=str(tmp_path / "missing"))
    proc = run_script([], env)
    assert proc.returncode == 2 and str(tmp_path / "missing") in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--soc", "ascend310p"], "unsupported --soc 'ascend310p'"),
    (["--vendor", "bad name"], "invalid --vendor"),
    (["--frobnicate"], "unknown argument '--frobnicate'"),
])
def test_bad_arguments_are_rejected_with_exit_2(no_cann_env, args, message):
    proc = run_script(args, no_cann_env)
    assert proc.returncode == 2 and message in proc.stderr


def test_toolkit_without_asc_cmake_modules_points_to_msopgen(no_cann_env, tmp_path):
    cann = tmp_path / "cann"
    shutil.copytree(FIXTURES / "fake_cann", cann, symlinks=True)
    shutil.rmtree(cann / "compiler")
    proc = run_script([], dict(no_cann_env, ASCEND_HOME_PATH=str(cann)))
    assert proc.returncode == 2
    assert "ASCConfig.cmake" in proc.stderr and "msopgen" in proc.stderr


def _recording_cmake(bin_dir: Path, log: Path) -> None:
    """A `cmake` that records each command line; its build step creates the .run a package
    build leaves in the build directory."""
    bin_dir.mkdir()
    script = bin_dir / "cmake"
    script.write_text(f"""#!/bin/sh
echo "$*" >> {log}
if [ "$1" = "--build" ]; then mkdir -p "$2"; case "$*" in *package*) touch "$2/custom_opp_ubuntu_x86_64.run";; esac; fi
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_script_configures_and_packages_with_the_cann_variables(no_cann_env, tmp_path):
    cann = tmp_path / "cann"
    shutil.copytree(FIXTURES / "fake_cann", cann, symlinks=True)
    log, tools_log = tmp_path / "cmake.log", tmp_path / "tools.jsonl"
    _recording_cmake(tmp_path / "bin", log)
    env = dict(no_cann_env, ASCEND_CANN_PACKAGE_PATH=str(cann), FAKE_CANN_LOG=str(tools_log),
               PATH=f"{tmp_path / 'bin'}:{no_cann_env['PATH']}")
    build_dir = tmp_path / "b"
    proc = run_script(["--target", "npu", "--soc", "ascend910b3", "--ops", "prompt_flash_attention,IncreFlashAttention",
                       "--pkg", "--vendor", "acme", "--build-dir", str(build_dir), "-j", "2"], env)
    assert proc.returncode == 0, proc.stderr
    configure, build = log.read_text().splitlines()
    assert configure.startswith(f"-S {ROOT} -B {build_dir} ")
    for flag in ("-DFA_TARGET=npu", f"-DASCEND_CANN_PACKAGE_PATH={cann}", "-DASCEND_COMPUTE_UNIT=ascend910b",
                 "-DFA_SOC_VERSION=Ascend910B3", "-DFA_NPU_OPS=prompt_flash_attention;IncreFlashAttention",
                 "-Dvendor_name=acme", "-DFA_NPU_PACKAGE=ON", "-DCMAKE_BUILD_TYPE=Release"):
        assert flag in configure.split(" ")
    assert build == f"--build {build_dir} --target binary package -j 2"
    assert f"package {build_dir}/custom_opp_ubuntu_x86_64.run" in proc.stdout
    assert "vendors/acme/bin/set_env.bash" in proc.stdout
    # Only ASCEND_CANN_PACKAGE_PATH was set: the toolkit's set_env.sh was sourced first.
    assert '"tool": "set_env.sh"' in tools_log.read_text()


def test_script_without_pkg_builds_libraries_and_kernels_only(no_cann_env, tmp_path):
    log = tmp_path / "cmake.log"
    _recording_cmake(tmp_path / "bin", log)
    env = dict(no_cann_env, ASCEND_HOME_PATH=str(FIXTURES / "fake_cann"),
               PATH=f"{tmp_path / 'bin'}:{no_cann_env['PATH']}")
    proc = run_script(["--build-dir", str(tmp_path / "b")], env)
    assert proc.returncode == 0, proc.stderr
    configure, build = log.read_text().splitlines()
    assert "-DFA_NPU_PACKAGE=OFF" in configure and "-DFA_SOC_VERSION=Ascend910B2" in configure
    assert build == f"--build {tmp_path / 'b'} --target all binary -j 2"


# ---------------------------------------------------------------- npu.cmake against a stub ASC

def configure(tmp_path, *defs, source_root=TREE, expect_ok=True):
    """Configure a project that includes cmake/npu.cmake against the fake toolkit."""
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.19)\nproject(npu_cmake_test LANGUAGES CXX)\n"
        f"include({ROOT / 'cmake' / 'npu.cmake'})\n")
    build = tmp_path / "build"
    cmd = ["cmake", "-S", str(src), "-B", str(build), f"-DASCEND_CANN_PACKAGE_PATH={FIXTURES / 'fake_cann'}",
           f"-DFA_NPU_SOURCE_ROOT={source_root}", *defs]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if expect_ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc, build


def recorded(build):
    calls = {}
    for line in (build / "asc_calls.log").read_text().splitlines():
        name, *args = line.split("|")
        calls.setdefault(name, []).append(args)
    return calls


def library(calls, name):
    return next(args[2:] for args in calls["npu_op_library"] if args[0] == name)


def test_npu_cmake_feeds_host_sources_to_code_gen_tiling_and_proto(tmp_path):
    _, build = configure(tmp_path)
    calls = recorded(build)
    host = {str(TREE / p) for p in ("op_host/common/attention_checks.cpp",
                                    "op_host/demo_attention/demo_attention_def.cpp",
                                    "op_host/demo_attention/demo_attention_tiling.cpp",
                                    "op_host/other_op/other_op_def.cpp")}
    gen = calls["npu_op_code_gen"][0]
    assert set(gen[gen.index("SRC") + 1:gen.index("PACKAGE")]) == host
    assert gen[gen.index("PACKAGE") + 1] == "fa" and gen[gen.index("OUT_DIR") + 1] == str(build / "autogen")
    assert set(library(calls, "cust_optiling")) == host
    assert set(library(calls, "cust_op_proto")) == host | {str(build / "autogen/op_proto.cc")}
    types = {args[0]: args[1] for args in calls["npu_op_library"]}
    assert types == {"cust_opapi": "ACLNN", "cust_op_proto": "GRAPH", "cust_optiling": "TILING",
                     "cust_tf_parsers": "TF_PLUGIN"}


def test_op_api_takes_npu_capable_hand_written_sources_and_generated_launchers(tmp_path):
    proc, build = configure(tmp_path)
    opapi = set(library(recorded(build), "cust_opapi"))
    # demo_attention: the hand-written API replaces the generated launcher of the same name;
    # other_op: its op_api source uses the emulator seam, so the generated launcher is the API.
    assert opapi == {str(TREE / "op_host/demo_attention/op_api/aclnn_demo_attention.cpp"),
                     str(build / "autogen/aclnn_other_op.cpp")}
    assert "CPU-target op_api sources left out" in proc.stdout
    # a header declaring an API nothing provides on the NPU is not shipped, and says why
    assert "nothing provides aclnnOtherOpV2GetWorkspaceSize" in proc.stderr
    # the spec's include layout "aclnnop/aclnn_<op>.h" exists in the build tree
    assert (build / "include/aclnnop/aclnn_demo_attention.h").read_text() == \
        (TREE / "op_host/demo_attention/op_api/aclnn_demo_attention.h").read_text()


def test_kernels_are_declared_per_operator_with_the_official_optype(tmp_path):
    _, build = configure(tmp_path, "-DASCEND_COMPUTE_UNIT=ascend910_93")
    calls = recorded(build)
    assert calls["npu_op_kernel_sources"] == [
        ["ascendc_kernels", "OP_TYPE", "DemoAttention", "KERNEL_DIR", "demo_attention",
         "COMPUTE_UNIT", "ascend910_93", "KERNEL_FILE", "demo_attention.cpp"],
        ["ascendc_kernels", "OP_TYPE", "OtherOp", "KERNEL_DIR", "other_op",
         "COMPUTE_UNIT", "ascend910_93", "KERNEL_FILE", "other_op.cpp"]]
    assert calls["npu_op_kernel_library"] == [
        ["ascendc_kernels", "SRC_BASE", f"{TREE}/op_kernel/", "TILING_LIBRARY", "cust_optiling"]]
    assert f"-I{TREE}/op_kernel/attention_core" in calls["npu_op_kernel_options"][0]


def test_package_carries_every_library_and_the_public_headers_under_the_vendor(tmp_path):
    _, build = configure(tmp_path, "-Dvendor_name=acme")
    calls = recorded(build)
    assert calls["npu_op_package"][0][:3] == ["acme", "TYPE", "RUN"]
    libs, files = calls["npu_op_package_add"]
    assert libs == ["acme", "LIBRARY", "cust_optiling", "cust_opapi", "cust_op_proto", "ascendc_kernels",
                    "cust_tf_parsers"]
    assert files == ["acme", "FILES", str(TREE / "op_host/demo_attention/op_api/aclnn_demo_attention.h"),
                     "PACKAGE_PATH", "op_api/include/aclnnop"]         # other_op's header is not complete
    proc = subprocess.run(["cmake", "--build", str(build), "--target", "binary", "package"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = list(build.glob("custom_opp_*_*.run"))
    assert len(runs) == 1 and runs[0].name.endswith(f"_{os.uname().machine}.run")


def test_ops_selects_by_directory_or_optype(tmp_path):
    _, build = configure(tmp_path, "-DFA_NPU_OPS=OtherOp")
    calls = recorded(build)
    assert [c[2] for c in calls["npu_op_kernel_sources"]] == ["OtherOp"]
    gen = calls["npu_op_code_gen"][0]
    assert str(TREE / "op_host/demo_attention/demo_attention_def.cpp") not in gen


def test_unknown_operator_fails_configure_naming_the_available_ones(tmp_path):
    proc, _ = configure(tmp_path, "-DFA_NPU_OPS=no_such_op", expect_ok=False)
    assert proc.returncode != 0
    assert "unknown operator 'no_such_op'" in proc.stderr and "demo_attention(DemoAttention)" in proc.stderr


def test_operator_without_op_add_fails_configure(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    (tree / "op_host/other_op/other_op_def.cpp").write_text("// no registration\n")
    proc, _ = configure(tmp_path, source_root=tree, expect_ok=False)
    assert proc.returncode != 0 and "no OP_ADD(<OpType>)" in proc.stderr


def test_missing_toolkit_fails_configure_with_the_variable_to_set(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.19)\nproject(t LANGUAGES CXX)\ninclude({ROOT / 'cmake' / 'npu.cmake'})\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND")}
    proc = subprocess.run(["cmake", "-S", str(src), "-B", str(tmp_path / "b")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "set ASCEND_CANN_PACKAGE_PATH" in proc.stderr


def test_the_real_tree_packages_prompt_flash_attention_through_its_generated_api(tmp_path):
    _, build = configure(tmp_path, source_root=ROOT)
    calls = recorded(build)
    kernels = {c[2]: c for c in calls["npu_op_kernel_sources"]}
    assert kernels["PromptFlashAttention"][3:] == [
        "KERNEL_DIR", "prompt_flash_attention", "COMPUTE_UNIT", "ascend910b", "KERNEL_FILE",
        "prompt_flash_attention.cpp"]
    # The OpDef mirrors the spec, so opbuild's aclnnPromptFlashAttention is the public API;
    # the hand-written op_api launches through the emulator and stays on the CPU target.
    assert str(build / "autogen/aclnn_prompt_flash_attention.cpp") in library(calls, "cust_opapi")
    assert str(ROOT / "op_host/prompt_flash_attention/op_api/aclnn_prompt_flash_attention.cpp") \
        not in library(calls, "cust_opapi")
    libs, headers = calls["npu_op_package_add"]
    assert str(ROOT / "op_host/prompt_flash_attention/op_api/aclnn_prompt_flash_attention.h") in headers
    # the framework plugins of framework/ join the package
    assert {"cust_tf_parsers", "cust_onnx_parsers"} <= set(libs)
    assert library(calls, "cust_tf_parsers") == [str(ROOT / "framework/tf_plugin/tensorflow_flash_attention_plugin.cc")]


# ---------------------------------------------------------------- through ./build.sh

def test_build_sh_target_npu_without_cann_exits_2(no_cann_env):
    proc = subprocess.run(["./build.sh", "--target", "npu"], cwd=ROOT, env=no_cann_env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "ASCEND_HOME_PATH" in proc.stderr and "Install the CANN toolkit" in proc.stderr


def test_build_sh_target_npu_drives_cmake_to_a_package_with_a_toolkit(no_cann_env, tmp_path):
    build = tmp_path / "npu"
    env = dict(no_cann_env, ASCEND_HOME_PATH=str(FIXTURES / "fake_cann"), FA_NPU_SOURCE_ROOT=str(TREE))
    proc = subprocess.run(["./build.sh", "--target", "npu", "--soc", "ascend910b2", "--pkg", "--vendor", "acme",
                           "--build-dir", str(build)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [run] = build.glob("custom_opp_*.run")
    assert f"npu_build: package {run}" in proc.stdout
    calls = recorded(build)
    assert calls["npu_op_package"][0][:3] == ["acme", "TYPE", "RUN"]
    assert (build / "CMakeCache.txt").read_text().count("FA_TARGET:STRING=npu") == 1
