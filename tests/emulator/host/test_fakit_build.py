"""fakit.build: the harness builds the CPU target when needed, once, under a file lock; build.sh
routes its options."""

import subprocess
import sys

from fakit import build, cli


def test_ensure_built_gives_the_library_and_prefix():
    lib = build.ensure_built("cpu")
    assert lib == build.ROOT / "build" / "cpu" / "libfa_ops_cpu.so" and lib.exists()
    prefix = build.install_prefix()
    for name in ("libascendcl.so", "libnnopbase.so", "libopapi.so", "libopapi_transformer.so"):
        assert (prefix / "lib64" / name).exists()
    assert (prefix / "include" / "acl" / "acl.h").exists()
    assert (prefix / "include" / "aclnn" / "aclnn_base.h").exists()
    assert (prefix / "opp" / "vendors" / "fa_emu_proof" / "op_api" / "lib" / "libcust_opapi.so").exists()


def test_staleness_follows_source_times(monkeypatch):
    build.ensure_built("cpu")
    stamp_time = (build.build_dir() / ".fakit-build-stamp").stat().st_mtime
    monkeypatch.setattr(build, "newest_source_mtime", lambda: stamp_time + 10)
    assert build.is_stale()
    monkeypatch.setattr(build, "newest_source_mtime", lambda: stamp_time - 10)
    assert not build.is_stale()
    # A different operator selection (FAKIT_CPU_OPS) needs a rebuild too.
    monkeypatch.setenv("FAKIT_CPU_OPS", build.selected_ops() + ",another_op")
    assert build.is_stale()


def test_parallel_workers_build_once():
    build.ensure_built("cpu")
    (build.build_dir() / ".fakit-build-stamp").unlink()  # force the next check to build
    code = "from fakit import build; build.ensure_built('cpu', quiet=False)"
    procs = [subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate()[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert sum("fakit: building the CPU target" in out for out in outputs) == 1, outputs


def test_fakit_build_command(capsys):
    assert cli.main(["build"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("build/cpu/libfa_ops_cpu.so")


def test_build_sh_rejects_npu_only_and_unknown_options():
    done = subprocess.run(["bash", str(build.ROOT / "build.sh"), "--pkg"], capture_output=True, text=True)
    assert done.returncode == 2 and "use --target npu" in done.stderr
    done = subprocess.run(["bash", str(build.ROOT / "build.sh"), "--frobnicate"], capture_output=True, text=True)
    assert done.returncode == 2 and "unknown option '--frobnicate'" in done.stderr
    done = subprocess.run(["bash", str(build.ROOT / "build.sh"), "--target", "gpu"], capture_output=True, text=True)
    assert done.returncode == 2 and "unknown target 'gpu'" in done.stderr


def test_unknown_operator_in_fa_ops_fails_configuration(tmp_path):
    done = subprocess.run(
        ["cmake", "-S", str(build.ROOT), "-B", str(tmp_path), "-DFA_OPS=no_such_op"], capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "FA_OPS: unknown operator 'no_such_op'" in done.stderr


def test_unknown_target_fails_configuration(tmp_path):
    done = subprocess.run(
        ["cmake", "-S", str(build.ROOT), "-B", str(tmp_path), "-DFA_TARGET=gpu"], capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "FA_TARGET must be cpu or npu, got 'gpu'" in done.stderr
