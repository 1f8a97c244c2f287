"""A kernel fault inside fakit.run is a Python exception and the process goes on: the misuse of
the fault proof operator (a CrossCoreWaitFlag nobody sets, a GM read past its buffer) raises
fakit.EmulatorError with the emulator's message, leaves no thread behind, and the next launch in
the same process passes. Ctrl-C stops a long launch within a second; on a terminal a long launch
shows its progress."""

import os
import pty
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import fakit
from fakit import build, cases, compare, ops
from fakit.backends import cpu
from fakit.ops import OpBinding, Param

ROOT = Path(__file__).resolve().parents[4]

FAULT = OpBinding(
    op="emu_fault",
    aclnn="aclnnEmuFault",
    params=[Param("x", "tensor"), Param("mode", "int64"), Param("iterations", "int64"), Param("y", "out_tensor")],
    make_outputs=lambda kw: {"y": np.zeros(np.shape(kw["x"]), np.float32)},
    result=lambda outs: outs["y"],
    prepare=lambda kw: {"mode": kw["mode"] or 0, "iterations": kw["iterations"] or 0, "x": kw["x"]},
)


@pytest.fixture
def run_fault(monkeypatch):
    monkeypatch.setitem(ops.REGISTRY, "emu_fault", FAULT)
    library = build.proof_library_path(cpu._sanitize())
    build.ensure_built("cpu", sanitize=cpu._sanitize())
    return lambda **kw: fakit.run("emu_fault", backend="cpu", library=library, **kw)


def _threads():
    return len(os.listdir("/proc/self/task"))


X = np.arange(1024, dtype=np.float32)  # one 4 KiB page of device memory: the overrun leaves it


def test_clean_launch(run_fault):
    np.testing.assert_array_equal(run_fault(x=X), X)


def test_unset_flag_raises_and_the_next_launch_passes(run_fault):
    with pytest.raises(fakit.EmulatorError) as info:
        run_fault(x=X, mode=1)
    text = str(info.value)
    assert "deadlock in kernel emu_fault" in text and "aic0 waits in CrossCoreWaitFlag(flagId 0)" in text
    assert isinstance(info.value, RuntimeError)
    np.testing.assert_array_equal(run_fault(x=X), X)
    case = min(cases.suite("pfa", "smoke"), key=lambda c: c.shapes["Sq"] * c.shapes["Skv"])
    kw = case.inputs()
    out = fakit.run("pfa", backend="cpu", **kw)
    report = compare.compare(
        "prompt_flash_attention",
        out,
        fakit.golden.prompt_flash_attention(**kw),
        fakit.golden.benchmark("prompt_flash_attention", **kw),
        dtype=case.output_dtypes(),
    )
    assert report.passed, report.summary()


def test_gm_overrun_raises_with_the_emulators_message(run_fault):
    with pytest.raises(
        fakit.EmulatorError, match=r"DataCopy\(GM->local\) on aiv0\.0 of kernel emu_fault: .*256 bytes past the end"
    ):
        run_fault(x=X, mode=2)
    np.testing.assert_array_equal(run_fault(x=X), X)


def test_faults_leave_no_threads_behind(run_fault):
    run_fault(x=X)
    before = _threads()
    for mode in (1, 2) * 5:
        with pytest.raises(fakit.EmulatorError):
            run_fault(x=X, mode=mode)
    # a leak would leave the 3 sub-core threads of every faulted launch (30 here); allow for an
    # unrelated helper thread (tqdm's monitor, ...) starting meanwhile
    assert _threads() - before < 3


CHILD = textwrap.dedent("""
    import signal, sys, time
    # Python's Ctrl-C handler even where SIGINT came in ignored (a background job of a
    # non-interactive shell starts with it ignored, and the test's SIGINT would then never land)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    sys.path.insert(0, {tests!r})
    from test_emu_fault import FAULT
    import fakit
    from fakit import build, ops
    from fakit.backends import cpu
    cpu.PROGRESS_AFTER_S = 0.3
    ops.REGISTRY["emu_fault"] = FAULT
    lib = build.proof_library_path(cpu._sanitize())
    x = np.arange(1024, dtype=np.float32)
    fakit.run("emu_fault", backend="cpu", library=lib, x=x)       # loads and initialises first
    print("started", flush=True)
    try:
        fakit.run("emu_fault", backend="cpu", library=lib, x=x, iterations=10 ** 9)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", time.monotonic(), flush=True)
    y = fakit.run("emu_fault", backend="cpu", library=lib, x=x)
    print("next", bool((y == x).all()), flush=True)
""")


def _child(**popen):
    build.ensure_built("cpu", sanitize=cpu._sanitize())
    script = CHILD.format(tests=str(Path(__file__).parent))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "scripts"), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env, **popen)


def test_sigint_stops_a_long_launch_within_a_second():
    proc = _child(stderr=subprocess.PIPE)
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(1.5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        line = proc.stdout.readline().split()
        assert line and line[0] == "interrupted", (line, proc.stderr.read() if proc.poll() is not None else "")
        assert float(line[1]) - sent < 1.0
        assert proc.stdout.readline().strip() == "next True"
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_long_launch_shows_progress_on_a_terminal():
    master, slave = pty.openpty()
    proc = _child(stderr=slave)
    os.close(slave)
    try:
        assert proc.stdout.readline().strip() == "started"
        seen, deadline = b"", time.monotonic() + 30
        while b"blocks" not in seen and time.monotonic() < deadline:
            if select.select([master], [], [], 0.5)[0]:
                seen += os.read(master, 4096)
        assert b"aclnnEmuFault: 0/1 blocks" in seen, seen
        proc.send_signal(signal.SIGINT)
        assert proc.stdout.readline().startswith("interrupted")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
