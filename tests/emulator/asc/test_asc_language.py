"""The CPU prefix as an ASCEND_HOME_PATH for Ascend C projects: find_package(ASC) and the ASC
language build a single-source .asc file (one compile pass per core kind, <<<>>> launches), the
launch picks the kernel type from the code each core kind has, and ASCEND_EMU_PROFILE gets one
JSON line per launch."""

import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fakit import build

HERE = Path(__file__).resolve().parent
DRIVER = HERE.parents[2] / "cmake" / "asc" / "asc_cc"


def _driver():
    loader = importlib.machinery.SourceFileLoader("asc_cc", str(DRIVER))
    spec = importlib.util.spec_from_loader("asc_cc", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "source, kernel, config, args",
    [
        (
            "Catlass::KernelAdapter<GemmKernel><<<blockDim, nullptr, stream>>>(params_);",
            "Catlass::KernelAdapter<GemmKernel>",
            "blockDim, nullptr, stream",
            "(params_);",
        ),
        (
            "ns::K<A<B<int>>, (3 > 2)>\n    <<<t.blockDim, nullptr, stream>>>(dA);",
            "ns::K<A<B<int>>, (3 > 2)>",
            "t.blockDim, nullptr, stream",
            "\n(dA);",
        ),
        ("::add<<<n>>>(x);", "::add", "n", "(x);"),
        ("int a = 1'000; k<<<f(a, b), l2, s>>>(z);", "k", "f(a, b), l2, s", "(z);"),
    ],
)
def test_launch_rewrite(source, kernel, config, args):
    text, count = _driver().rewrite_launches(source)
    assert count == 1
    assert "{ %s(static_cast" % kernel in text
    assert text.endswith('"%s", %s)%s' % (" ".join(kernel.split()), config, args))
    assert text.count("\n") == source.count("\n")  # diagnostics keep their line numbers


def test_launch_rewrite_leaves_strings_and_shifts_alone():
    source = 'printf("<<<a>>>"); x = y << 2; z = a >> b;'
    assert _driver().rewrite_launches(source) == (source, 0)


def test_execution_space_list_dropped_only_after_an_inline_specifier():
    text, _ = _driver().rewrite_launches(
        "inline __attribute__((always_inline))[host, aicore] int f(); int g(int *host) { return host[aicore]; }"
    )
    assert text == "inline __attribute__((always_inline)) int f(); int g(int *host) { return host[aicore]; }"


def test_core_kind_attribute_empties_the_kernel_in_the_other_pass():
    source = 'extern "C" __attribute__((aic)) void k(int a,\n int b) {\n  f("}");\n}\nvoid g() { h(); }'
    vector = _driver().apply_core_attributes(source, "vector")
    assert vector == 'extern "C"  void k(int a,\n int b) {\n\n}\nvoid g() { h(); }'
    assert _driver().apply_core_attributes(source, "cube") == source.replace("__attribute__((aic))", "")


def test_bisheng_options_dropped():
    args, arch = _driver().filter_args(
        [
            "-O2",
            "--npu-arch=dav-2201",
            "-mllvm",
            "-cce-aicore-record-overflow=true",
            "-Xhost-start",
            "-fstack-protector-strong",
            "-Xhost-end",
            "-Xaicore-start",
            "-fno-x",
            "-Xaicore-end",
            "--cce-enable-print",
            "-c",
            "a.asc",
        ]
    )
    assert (args, arch) == (["-O2", "-fstack-protector-strong", "-c", "a.asc"], "dav-2201")


needs_tools = pytest.mark.skipif(
    shutil.which("clang++") is None or shutil.which("cmake") is None or shutil.which("objcopy") is None,
    reason="the ASC driver needs clang++, objcopy and cmake",
)


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """tests/emulator/asc/project built with its own CMakeLists.txt after sourcing set_env.sh."""
    build.ensure_built("cpu")
    prefix = build.install_prefix()
    bdir = tmp_path_factory.mktemp("asc_probe")
    cmd = (
        f". {prefix}/set_env.sh && cmake -S {HERE / 'project'} -B {bdir} -DCMAKE_BUILD_TYPE=Release "
        f"&& cmake --build {bdir}"
    )
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return prefix, bdir / "asc_probe"


def _run(prefix, exe, **env):
    full = dict(os.environ, **env)
    full["LD_LIBRARY_PATH"] = f"{prefix}/lib64:" + full.get("LD_LIBRARY_PATH", "")
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=300, env=full)


@needs_tools
def test_single_source_kernels_run_with_the_kernel_type_of_their_code(probe, tmp_path):
    prefix, exe = probe
    profile = tmp_path / "profile.jsonl"
    proc = _run(prefix, exe, ASCEND_EMU_PROFILE=str(profile))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("ok ") == 7 and "FAIL" not in proc.stdout, proc.stdout
    lines = [json.loads(line) for line in profile.read_text().splitlines()]
    assert [(p["kernel"], p["block_dim"], p["aic_cores"], p["aiv_cores"]) for p in lines] == [
        ("vec_add", 6, 0, 6),
        ("cube_only<float>", 4, 4, 0),
        ("mix_kernel", 3, 3, 6),
        ("divide", 1, 0, 1),
        ("marked_cube", 2, 2, 0),
    ]
    assert "kernel divide divided an integer by zero" in proc.stderr, proc.stderr
    for p in lines:  # the modelled profile of last_profile(): duration and msprof ratios
        assert p["task_duration_us"] > 0 and "aiv_vec_ratio" in p and "aic_mac_ratio" in p


@needs_tools
def test_single_source_kernels_are_race_clean(probe):
    prefix, exe = probe
    proc = _run(prefix, exe, ASCEND_EMU_RACECHECK="1")
    assert proc.returncode == 0 and proc.stdout.count("ok ") == 7, proc.stdout + proc.stderr
