"""The rendered aclnn runner, built with g++ against the CPU target's CANN-shaped prefix
(build/cpu/install: acl headers, libascendcl/libnnopbase/libopapi) and run on real cases: the
same program the sim/npu backends build against a CANN toolkit, checked end to end here —
case files in, outputs back, compared with the goldens and with the cpu backend."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fakit
from fakit import build, cases, compare
from fakit.backends import aclnn_runner

OP = "prompt_flash_attention"


@pytest.fixture(scope="module")
def prefix():
    build.ensure_built("cpu")
    return build.install_prefix()


def compile_on_prefix(prefix: Path):
    lib = prefix / "lib64"

    def command(src, exe):
        return [
            "g++",
            "-std=c++17",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Werror",
            str(src),
            "-o",
            str(exe),
            f"-I{prefix / 'include'}",
            f"-L{lib}",
            "-lopapi",
            "-lnnopbase",
            "-lascendcl",
            f"-Wl,-rpath,{lib}",
        ]

    return command


def run_runner(prefix, tmp_path, kwargs):
    b, args = aclnn_runner.plan(OP, kwargs)
    case_dir = tmp_path / "case"
    aclnn_runner.write_case(case_dir, args)
    exe = aclnn_runner.build(
        aclnn_runner.render(b.aclnn, aclnn_runner.header_of(b), args), tmp_path, compile_on_prefix(prefix)
    )
    env = dict(os.environ, LD_LIBRARY_PATH=str(prefix / "lib64"))
    aclnn_runner.execute([str(exe), str(case_dir), "0"], env, case_dir, b.aclnn)
    return b.result(aclnn_runner.read_outputs(case_dir, args))


@pytest.mark.parametrize("index", [0, 1])
def test_runner_output_matches_golden_and_cpu_backend(prefix, tmp_path, index):
    case = cases.suite(OP, "smoke")[index]
    kwargs = case.inputs()
    out = run_runner(prefix, tmp_path, kwargs)
    golden = fakit.golden.prompt_flash_attention(**kwargs)
    report = compare.compare(OP, out, golden, fakit.golden.benchmark(OP, **kwargs))
    assert report.passed, report.summary()
    # The same library through ctypes gives bit-identical outputs.
    np.testing.assert_array_equal(out, fakit.run(OP, backend="cpu", **kwargs))


def test_runner_reports_the_aclnn_status_of_a_rejected_call(prefix, tmp_path):
    kwargs = cases.suite(OP, "smoke")[0].inputs()
    kwargs["num_heads"] = 3  # query's head count is not 3
    with pytest.raises(fakit.AclnnError) as e:
        run_runner(prefix, tmp_path, kwargs)
    assert e.value.status == 161002
    assert "aclnnPromptFlashAttention GetWorkspaceSize" in e.value.log


def test_every_bound_operator_renders_a_runner_that_compiles(prefix, tmp_path):
    """One runner per binding, from its first smoke case, compiled against the prefix headers."""
    from fakit import ops

    assert OP in ops.REGISTRY
    for op, b in sorted(ops.REGISTRY.items()):
        kwargs = cases.suite(op, "smoke")[0].inputs()
        _, args = aclnn_runner.plan(op, kwargs)
        src = tmp_path / f"{op}.cpp"
        src.write_text(aclnn_runner.render(b.aclnn, aclnn_runner.header_of(b), args))
        proc = subprocess.run(
            ["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", f"-I{prefix / 'include'}", str(src)],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, f"{op}: {proc.stderr}"


CAMODEL_STUB = r'''
#include <cstdio>
#include <cstdlib>
// Stand-in for a camodel library: records that the runner process loaded it.
__attribute__((constructor)) static void Loaded() {
    if (const char *log = std::getenv("FAKE_CAMODEL_LOG")) {
        if (FILE *f = std::fopen(log, "a")) { std::fprintf(f, "%s\n", LIBNAME); std::fclose(f); }
    }
}
'''


@pytest.fixture
def cpu_as_toolkit(prefix, tmp_path, monkeypatch):
    """A toolkit tree whose acl runtime, headers and installed package are the CPU target's,
    with stand-in camodel libraries: `--backend sim` then runs the real kernels on the emulator."""
    root = tmp_path / "toolkit"
    root.mkdir()
    (root / "include").symlink_to(prefix / "include")
    (root / "lib64").symlink_to(prefix / "lib64")
    sim = root / "tools/simulator/Ascend910B2/lib"
    sim.mkdir(parents=True)
    (tmp_path / "camodel.cpp").write_text(CAMODEL_STUB)
    for name in ("libruntime_camodel.so", "libnpu_drv_camodel.so"):
        subprocess.run(
            ["g++", "-shared", "-fPIC", f'-DLIBNAME="{name}"', "-o", str(sim / name), str(tmp_path / "camodel.cpp")],
            check=True,
        )
    api = root / "opp/vendors/fa/op_api"
    (api / "lib").mkdir(parents=True)
    (api / "include").mkdir()
    (api / "lib/libcust_opapi.so").symlink_to(prefix / "lib64/libfa_ops_cpu.so")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND")}
    env.update(
        ASCEND_HOME_PATH=str(root),
        FAKIT_WORK_DIR=str(tmp_path / "work"),
        FAKE_CAMODEL_LOG=str(tmp_path / "camodel.log"),
    )
    return env, tmp_path / "camodel.log"


def test_fakit_run_backend_sim_end_to_end_with_the_cpu_target_as_toolkit(cpu_as_toolkit, tmp_path):
    env, camodel_log = cpu_as_toolkit
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [
            str(Path(sys.executable).parent / "fakit"),
            "run",
            "--op",
            OP,
            "--suite",
            "smoke",
            "--backend",
            "sim",
            "--limit",
            "2",
            "--json",
            str(report),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(report.read_text())
    results = results if isinstance(results, list) else results.get("results", results.get("cases"))
    assert [r["verdict"] for r in results] == ["PASS", "PASS"]
    # each runner process preloaded both simulator libraries
    assert camodel_log.read_text().split().count("libruntime_camodel.so") == 2
    assert camodel_log.read_text().split().count("libnpu_drv_camodel.so") == 2
