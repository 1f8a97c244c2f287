"""cmake/npu_build.sh and cmake/npu.cmake without CANN: the error paths, the command lines the
script runs, and the CMake configuration npu.cmake generates against a stub ASC package."""

import os
import pathlib
import re
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
    return subprocess.run(
        ["bash", str(NPU_BUILD), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_without_cann_stops_at_once_with_exit_2_and_says_what_to_install(no_cann_env, tmp_path):
    build_dir = tmp_path / "b"
    proc = run_script(["--soc", "ascend910b2", "--pkg", "--build-dir", str(build_dir)], no_cann_env)
    assert proc.returncode == 2
    assert "ASCEND_HOME_PATH" in proc.stderr and "ASCEND_CANN_PACKAGE_PATH" in proc.stderr
    assert "Install the CANN toolkit" in proc.stderr and "set_env.sh" in proc.stderr
    assert not build_dir.exists()  # nothing was configured


def test_cann_path_that_does_not_exist_is_named(no_cann_env, tmp_path):
    env = dict(no_cann_env, ASCEND_CANN_PACKAGE_PATH=str(tmp_path / "missing"))
    proc = run_script([], env)
    assert proc.returncode == 2 and str(tmp_path / "missing") in proc.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--soc", "ascend310p"], "unsupported --soc 'ascend310p'"),
        (["--vendor", "bad name"], "invalid --vendor"),
        (["--frobnicate"], "unknown argument '--frobnicate'"),
    ],
)
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


def test_the_cpu_prefix_is_named_not_called_an_old_cann(no_cann_env, tmp_path):
    # what `source build/cpu/install/set_env.sh` leaves in ASCEND_HOME_PATH, even once the
    # prefix carries ASC CMake modules of its own
    prefix = tmp_path / "install"
    shutil.copytree(FIXTURES / "fake_cann", prefix, symlinks=True)
    (prefix / "fa_emulator_prefix.txt").write_text("cpu prefix\n")
    proc = run_script([], dict(no_cann_env, ASCEND_HOME_PATH=str(prefix)))
    assert proc.returncode == 2
    assert "this project's CPU prefix" in proc.stderr and "ASCConfig.cmake" not in proc.stderr


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
    env = dict(
        no_cann_env,
        ASCEND_CANN_PACKAGE_PATH=str(cann),
        FAKE_CANN_LOG=str(tools_log),
        PATH=f"{tmp_path / 'bin'}:{no_cann_env['PATH']}",
    )
    build_dir = tmp_path / "b"
    proc = run_script(
        [
            "--target",
            "npu",
            "--soc",
            "ascend910b3",
            "--ops",
            "prompt_flash_attention,IncreFlashAttention",
            "--pkg",
            "--vendor",
            "acme",
            "--build-dir",
            str(build_dir),
            "-j",
            "2",
        ],
        env,
    )
    assert proc.returncode == 0, proc.stderr
    configure, build = log.read_text().splitlines()
    assert configure.startswith(f"-S {ROOT} -B {build_dir} ")
    for flag in (
        "-DFA_TARGET=npu",
        f"-DASCEND_CANN_PACKAGE_PATH={cann}",
        "-DASCEND_COMPUTE_UNIT=ascend910b",
        "-DFA_SOC_VERSION=Ascend910B3",
        "-DFA_NPU_OPS=prompt_flash_attention;IncreFlashAttention",
        "-Dvendor_name=acme",
        "-DFA_NPU_PACKAGE=ON",
        "-DCMAKE_BUILD_TYPE=Release",
    ):
        assert flag in configure.split(" ")
    assert build == f"--build {build_dir} --target binary package -j 2"
    assert f"package {build_dir}/custom_opp_ubuntu_x86_64.run" in proc.stdout
    assert "vendors/acme/bin/set_env.bash" in proc.stdout
    # Only ASCEND_CANN_PACKAGE_PATH was set: the toolkit's set_env.sh was sourced first.
    assert '"tool": "set_env.sh"' in tools_log.read_text()


def test_script_without_pkg_builds_libraries_and_kernels_only(no_cann_env, tmp_path):
    log = tmp_path / "cmake.log"
    _recording_cmake(tmp_path / "bin", log)
    env = dict(
        no_cann_env, ASCEND_HOME_PATH=str(FIXTURES / "fake_cann"), PATH=f"{tmp_path / 'bin'}:{no_cann_env['PATH']}"
    )
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
        f"include({ROOT / 'cmake' / 'npu.cmake'})\n"
    )
    build = tmp_path / "build"
    cmd = [
        "cmake",
        "-S",
        str(src),
        "-B",
        str(build),
        f"-DASCEND_CANN_PACKAGE_PATH={FIXTURES / 'fake_cann'}",
        f"-DFA_NPU_SOURCE_ROOT={source_root}",
        *defs,
    ]
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
    host = {
        str(TREE / p)
        for p in (
            "op_host/common/shared_tiling.cpp",
            "op_host/demo_attention/demo_attention_def.cpp",
            "op_host/demo_attention/demo_attention_tiling.cpp",
            "op_host/other_op/other_op_def.cpp",
        )
    }
    gen = calls["npu_op_code_gen"][0]
    assert set(gen[gen.index("SRC") + 1 : gen.index("PACKAGE")]) == host
    assert gen[gen.index("PACKAGE") + 1] == "fa" and gen[gen.index("OUT_DIR") + 1] == str(build / "autogen")
    assert set(library(calls, "cust_optiling")) == host
    assert set(library(calls, "cust_op_proto")) == host | {str(build / "autogen/op_proto.cc")}
    types = {args[0]: args[1] for args in calls["npu_op_library"]}
    assert types == {
        "cust_opapi": "ACLNN",
        "cust_op_proto": "GRAPH",
        "cust_optiling": "TILING",
        "cust_tf_parsers": "TF_PLUGIN",
    }


def test_op_api_takes_every_non_emulator_source_and_the_generated_launchers(tmp_path):
    proc, build = configure(tmp_path)
    opapi = set(library(recorded(build), "cust_opapi"))
    # the public API and its checks run on the NPU; the CPU launch seam (includes emu/) stays out;
    # opbuild's launchers are aclnnInner<OpType> (OPS_PROJECT_NAME=aclnnInner), the APIs' seam.
    assert opapi == {
        str(TREE / "op_host/demo_attention/op_api/aclnn_demo_attention.cpp"),
        str(TREE / "op_host/demo_attention/op_api/demo_attention_checks.cpp"),
        str(build / "autogen/aclnnInner_demo_attention.cpp"),
        str(build / "autogen/aclnnInner_other_op.cpp"),
    }
    assert "CPU-target launch seam left out" in proc.stdout and "demo_attention_launch_cpu.cpp" in proc.stdout
    assert "public aclnn APIs (project op_api, with their checks): aclnnDemoAttention" in proc.stdout
    # a header declaring an API no NPU op_api source defines is not shipped, and says why
    assert "no op_api source of the NPU build defines aclnnOtherOpGetWorkspaceSize" in " ".join(proc.stderr.split())
    # the spec's include layout "aclnnop/aclnn_<op>.h" exists in the build tree
    assert (build / "include/aclnnop/aclnn_demo_attention.h").read_text() == (
        TREE / "op_host/demo_attention/op_api/aclnn_demo_attention.h"
    ).read_text()


def test_code_gen_runs_with_the_aclnn_inner_project_name(tmp_path):
    _, build = configure(tmp_path)
    gen = recorded(build)["npu_op_code_gen"][0]
    assert gen[-1] == "OPS_PROJECT_NAME=aclnnInner"
    assert "OPS_PROJECT_NAME aclnnInner" in (ROOT / "cmake" / "npu.cmake").read_text()  # what hostheaders reads
    assert "export OPS_PROJECT_NAME=aclnnInner" in (ROOT / "cmake" / "npu_build.sh").read_text()


def test_a_public_api_named_like_a_generated_launcher_fails_configure(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    (tree / "op_host/demo_attention/op_api/aclnn_inner_clash.cpp").write_text(
        'extern "C" aclnnStatus aclnnInnerDemoAttentionGetWorkspaceSize(const aclTensor *q, uint64_t *w, '
        'aclOpExecutor **e)\n{\n    return 0;\n}\n'
    )
    proc, _ = configure(tmp_path, source_root=tree, expect_ok=False)
    assert proc.returncode != 0
    assert "the name of opbuild's generated launcher for DemoAttention" in " ".join(proc.stderr.split())


def test_kernels_are_declared_per_operator_with_the_official_optype(tmp_path):
    _, build = configure(tmp_path, "-DASCEND_COMPUTE_UNIT=ascend910_93")
    calls = recorded(build)
    assert calls["npu_op_kernel_sources"] == [
        [
            "ascendc_kernels",
            "OP_TYPE",
            "DemoAttention",
            "KERNEL_DIR",
            "demo_attention",
            "COMPUTE_UNIT",
            "ascend910_93",
            "KERNEL_FILE",
            "demo_attention.cpp",
        ],
        [
            "ascendc_kernels",
            "OP_TYPE",
            "OtherOp",
            "KERNEL_DIR",
            "other_op",
            "COMPUTE_UNIT",
            "ascend910_93",
            "KERNEL_FILE",
            "other_op.cpp",
        ],
    ]
    assert calls["npu_op_kernel_library"] == [
        ["ascendc_kernels", "SRC_BASE", f"{TREE}/op_kernel/", "TILING_LIBRARY", "cust_optiling"]
    ]
    assert f"-I{TREE}/op_kernel/attention_core" in calls["npu_op_kernel_options"][0]


def test_package_carries_every_library_and_the_public_headers_under_the_vendor(tmp_path):
    _, build = configure(tmp_path, "-Dvendor_name=acme")
    calls = recorded(build)
    assert calls["npu_op_package"][0][:3] == ["acme", "TYPE", "RUN"]
    libs, files = calls["npu_op_package_add"]
    assert libs == [
        "acme",
        "LIBRARY",
        "cust_optiling",
        "cust_opapi",
        "cust_op_proto",
        "ascendc_kernels",
        "cust_tf_parsers",
    ]
    assert files == [
        "acme",
        "FILES",
        str(TREE / "op_host/demo_attention/op_api/aclnn_demo_attention.h"),
        "PACKAGE_PATH",
        "op_api/include/aclnnop",
    ]  # nothing on the NPU defines other_op's
    proc = subprocess.run(
        ["cmake", "--build", str(build), "--target", "binary", "package"], capture_output=True, text=True, timeout=300
    )
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
        f"cmake_minimum_required(VERSION 3.19)\nproject(t LANGUAGES CXX)\ninclude({ROOT / 'cmake' / 'npu.cmake'})\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND")}
    proc = subprocess.run(
        ["cmake", "-S", str(src), "-B", str(tmp_path / "b")], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0 and "set ASCEND_CANN_PACKAGE_PATH" in proc.stderr


SPEC_APIS = {  # op directory -> (public header, aclnn API of the spec, its checks function)
    "prompt_flash_attention": (
        "aclnn_prompt_flash_attention.h",
        "aclnnPromptFlashAttention",
        "PromptFlashAttentionCheckParams",
    ),
    "flash_attention_score": (
        "aclnn_flash_attention_score.h",
        "aclnnFlashAttentionVarLenScore",
        "FlashAttentionVarLenScoreCheckParams",
    ),
    "incre_flash_attention": (
        "aclnn_incre_flash_attention_v4.h",
        "aclnnIncreFlashAttentionV4",
        "IncreFlashAttentionCheckParams",
    ),
    "flash_attention_score_grad": (
        "aclnn_flash_attention_score_grad.h",
        "aclnnFlashAttentionUnpaddingScoreGradV5",
        "FagV5CheckParams",
    ),
    "sparse_flash_attention_grad": (
        "aclnn_sparse_flash_attention_grad.h",
        "aclnnSparseFlashAttentionGrad",
        "SfagCheckParams",
    ),
}


def _project_includes(tu):
    """The project files `tu` includes on the NPU build, by the real preprocessor (g++ -MM -MG
    -DFA_NPU_BUILD with the NPU build's project include dirs; CANN headers, absent here, count
    as generated and are listed by their include name)."""
    dirs = [ROOT, ROOT / "op_host", ROOT / "op_kernel"] + [
        d for op in SPEC_APIS for d in (ROOT / "op_host" / op, ROOT / "op_host" / op / "op_api")
    ]
    res = subprocess.run(
        ["g++", "-std=c++17", "-MM", "-MG", "-DFA_NPU_BUILD", *[f"-I{d}" for d in dirs], str(tu)],
        capture_output=True,
        text=True,
        cwd=tu.parent,
    )
    assert res.returncode == 0, res.stderr
    deps = res.stdout.split(":", 1)[1].replace("\\\n", " ").split()
    return [pathlib.Path(d) if pathlib.Path(d).is_absolute() else tu.parent / d for d in deps[1:]]


def test_the_real_tree_packages_all_five_spec_apis_with_their_checks(tmp_path):
    proc, build = configure(tmp_path, source_root=ROOT)
    calls = recorded(build)
    kernels = {c[2]: c for c in calls["npu_op_kernel_sources"]}
    assert kernels["PromptFlashAttention"][3:] == [
        "KERNEL_DIR",
        "prompt_flash_attention",
        "COMPUTE_UNIT",
        "ascend910b",
        "KERNEL_FILE",
        "prompt_flash_attention.cpp",
    ]
    opapi = set(library(calls, "cust_opapi"))
    libs, headers = calls["npu_op_package_add"]
    for op, (header, api, checks) in SPEC_APIS.items():
        op_api = ROOT / "op_host" / op / "op_api"
        source = next(f for f in op_api.glob("aclnn_*.cpp") if f"aclnnStatus {api}GetWorkspaceSize(" in f.read_text())
        text = source.read_text()
        # the project's definition of the spec's API joins the package, with its checks source ...
        assert str(source) in opapi and str(op_api / header) in headers, op
        assert {str(f) for f in op_api.glob("*_checks.cpp")} <= opapi, op
        # ... and validates before it launches: checks, then the OpType's aclnnInner launcher
        optype = kernels and next(c[2] for c in calls["npu_op_kernel_sources"] if c[4] == op)
        assert text.index(checks + "(") < text.index(f"aclnnInner{optype}GetWorkspaceSize("), op
        assert f"{api}(void *workspace" in text and f"aclnnInner{optype}(workspace" in text, op
        snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", optype).lower()
        assert str(build / f"autogen/aclnnInner_{snake}.cpp") in opapi, op
        # the CPU launch seam is the only op_api source left out
        assert [f.name for f in op_api.glob("*.cpp") if str(f) not in opapi] == [f"{op}_launch_cpu.cpp"], op
    assert "public aclnn APIs (project op_api, with their checks): " in proc.stdout
    # the framework plugins of framework/ join the package
    assert {"cust_tf_parsers", "cust_onnx_parsers"} <= set(libs)
    assert library(calls, "cust_tf_parsers") == [str(ROOT / "framework/tf_plugin/tensorflow_flash_attention_plugin.cc")]


def test_no_shipped_host_source_reaches_an_emulator_header(tmp_path):
    _, build = configure(tmp_path, source_root=ROOT)
    calls = recorded(build)
    shipped = {
        f
        for lib in ("cust_opapi", "cust_optiling", "cust_op_proto")
        for f in library(calls, lib)
        if f.startswith(str(ROOT))
    }
    assert len(shipped) > 20
    for tu in map(pathlib.Path, shipped):
        for f in _project_includes(tu):
            assert "emu" not in f.parts and "emulator" not in f.parts, f"{tu} reaches {f}"


def test_the_tiling_libraries_reference_no_nnopbase_symbols(tmp_path):
    """op_tiling / op_proto link no libnnopbase: their sources (with every project header they
    include) call no aclnn tensor accessor; those checks are op_api-only."""
    _, build = configure(tmp_path, source_root=ROOT)
    calls = recorded(build)
    nnopbase = re.compile(
        r"\b(aclGetViewShape|aclGetViewStrides|aclGetDataType|aclGetFormat|aclGetStorageShape|"
        r"aclGetIntArraySize|aclGetViewOffset)\b|opdev/"
    )
    for lib in ("cust_optiling", "cust_op_proto"):
        for tu in map(pathlib.Path, (f for f in library(calls, lib) if f.startswith(str(ROOT)))):
            for f in [tu, *(d for d in _project_includes(tu) if d.is_file())]:
                code = re.sub(r"//[^\n]*", "", f.read_text())
                assert not nnopbase.search(code), f"{lib}: {tu} reaches {f}: {nnopbase.search(code).group(0)}"


# ---------------------------------------------------------------- through ./build.sh


def test_build_sh_target_npu_without_cann_exits_2(no_cann_env):
    proc = subprocess.run(
        ["./build.sh", "--target", "npu"], cwd=ROOT, env=no_cann_env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "ASCEND_HOME_PATH" in proc.stderr and "Install the CANN toolkit" in proc.stderr


def test_build_sh_target_npu_drives_cmake_to_a_package_with_a_toolkit(no_cann_env, tmp_path):
    build = tmp_path / "npu"
    env = dict(no_cann_env, ASCEND_HOME_PATH=str(FIXTURES / "fake_cann"), FA_NPU_SOURCE_ROOT=str(TREE))
    proc = subprocess.run(
        [
            "./build.sh",
            "--target",
            "npu",
            "--soc",
            "ascend910b2",
            "--pkg",
            "--vendor",
            "acme",
            "--build-dir",
            str(build),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [run] = build.glob("custom_opp_*.run")
    assert f"npu_build: package {run}" in proc.stdout
    calls = recorded(build)
    assert calls["npu_op_package"][0][:3] == ["acme", "TYPE", "RUN"]
    assert (build / "CMakeCache.txt").read_text().count("FA_TARGET:STRING=npu") == 1
