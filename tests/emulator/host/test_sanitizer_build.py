"""The ASan/UBSan build (./build.sh --sanitize, build/cpu-asan) runs the three proof kernels and
the acl/op-runner paths without a sanitizer report. Slow: the sanitized build compiles the whole
tree (several minutes on two cores) the first time."""

import os
import subprocess
import sys
import textwrap

import pytest

from fakit import build

SCRIPT = textwrap.dedent("""
    import numpy as np, ml_dtypes, sys
    sys.path.insert(0, {kernels!r})
    from conftest import PROOF_BINDINGS
    from fakit import build, AclnnError
    from fakit.backends import cpu
    lib = build.proof_library_path(True)
    run = lambda name, **kw: cpu.run_binding(PROOF_BINDINGS[name], library=lib, **kw)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(3001).astype(np.float16); y = rng.standard_normal(3001).astype(np.float16)
    assert np.array_equal(run("vector_axpy", x=x, y=y, alpha=0.5, tileLength=256),
                          (np.float16(0.5) * x).astype(np.float16) + y)
    for dt in (np.float16, ml_dtypes.bfloat16):
        a = rng.uniform(-1, 1, (37, 70)).astype(dt); b = rng.uniform(-1, 1, (70, 45)).astype(dt)
        c = run("cube_matmul", a=a, b=b).astype(np.float32)
        assert np.allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-2, atol=5e-2)
    a = rng.uniform(-1, 1, (100, 40)).astype(np.float16); b = rng.uniform(-1, 1, (77, 40)).astype(np.float16)
    s = a.astype(np.float32) @ b.astype(np.float32).T
    e = np.exp(s - s.max(1, keepdims=True)); ref = e / e.sum(1, keepdims=True)
    assert np.allclose(run("mix_softmax", a=a, b=b, maxCores=2), ref, rtol=2e-5, atol=1e-6)
    try:
        run("vector_axpy", x=np.ones(8, np.int32), y=np.ones(8, np.int32), alpha=1.0)
        raise SystemExit("expected a rejection")
    except AclnnError as err:
        assert err.status == 161002
    maps = open("/proc/self/maps").read()  # the sanitized library and runtime are really in use
    assert "cpu-asan/libfa_ops_cpu.so" in maps and "libasan" in maps, "not the sanitized build"
    print("SANITIZED RUN OK")
""")


@pytest.mark.slow
def test_proof_kernels_run_clean_under_asan_and_ubsan():
    build.ensure_built("cpu", sanitize=True)
    libasan = subprocess.run(
        ["g++", "-print-file-name=libasan.so"], capture_output=True, text=True, check=True
    ).stdout.strip()
    env = dict(
        os.environ,
        FAKIT_CPU_SANITIZE="1",
        LD_PRELOAD=libasan,
        ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",  # CPython itself leaks at exit
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1",
    )
    kernels = str(build.ROOT / "tests" / "emulator" / "kernels")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(kernels=kernels)], env=env, capture_output=True, text=True, timeout=1800
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report[-6000:]
    assert "SANITIZED RUN OK" in done.stdout
    assert "AddressSanitizer" not in report and "runtime error:" not in report, report[-6000:]


@pytest.mark.slow
def test_host_api_probe_runs_clean_under_asan_and_ubsan():
    source = build.ROOT / "tests" / "emulator" / "host" / "consumer"
    bdir = build.ROOT / "build" / "emulator-consumer-asan"
    flags = "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    subprocess.run(
        [
            "cmake",
            "-S",
            str(source),
            "-B",
            str(bdir),
            f"-DCMAKE_CXX_FLAGS={flags}",
            "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined",
        ],
        check=True,
        capture_output=True,
    )
    done = subprocess.run(["cmake", "--build", str(bdir), "-j", "2"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    run = subprocess.run(
        [str(bdir / "host_api_probe"), "tiling"],
        capture_output=True,
        text=True,
        env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1"),
    )
    report = run.stdout + run.stderr
    assert run.returncode == 0 and run.stdout.startswith("ok "), report[-6000:]
    assert "AddressSanitizer" not in report and "runtime error:" not in report, report[-6000:]
