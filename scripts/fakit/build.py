"""Build the CPU target on demand: `ensure_built()` returns the path of libfa_ops_cpu.so.

The build runs `build.sh` (one source of truth for the CMake flags) when the library is
missing, any source is newer than the last successful build or the operator selection changed;
a file lock keeps parallel pytest workers from building twice, and a failed build raises
BuildError with the output. Env FAKIT_CPU_OPS=a,b builds only those operators (build.sh --ops).
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterable, Tuple

ROOT = Path(__file__).resolve().parents[2]

# What the CPU build reads: a change under any of these triggers a rebuild.
SOURCE_DIRS = ("emulator", "op_host", "op_kernel", "tests/emulator/kernels", "cmake")
SOURCE_FILES = ("CMakeLists.txt", "build.sh")
SOURCE_SUFFIXES = (".cpp", ".h", ".hpp", ".cc", ".cmake", ".txt", ".sh")

OPS_LIBRARY = "libfa_ops_cpu.so"
PROOF_LIBRARY = "libfa_proof_ops.so"


class BuildError(RuntimeError):
    """The CPU build failed; the message ends with the build output."""


def build_dir(target: str = "cpu", sanitize: bool = False) -> Path:
    if target != "cpu":
        raise ValueError(
            f"fakit.build builds the cpu target only (got {target!r}); "
            "the npu target is built by ./build.sh --target npu"
        )
    return ROOT / "build" / ("cpu-asan" if sanitize else "cpu")


def library_path(target: str = "cpu", sanitize: bool = False) -> Path:
    return build_dir(target, sanitize) / OPS_LIBRARY


def proof_library_path(sanitize: bool = False) -> Path:
    return build_dir("cpu", sanitize) / PROOF_LIBRARY


def install_prefix(sanitize: bool = False) -> Path:
    """The CANN-shaped prefix (ASCEND_HOME_PATH for CANN's example CMakeLists.txt)."""
    return build_dir("cpu", sanitize) / "install"


def _sources() -> Iterable[Path]:
    for name in SOURCE_FILES:
        path = ROOT / name
        if path.exists():
            yield path
    for d in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(ROOT / d):
            dirnames[:] = [n for n in dirnames if not n.startswith((".", "__"))]
            for f in filenames:
                if f.endswith(SOURCE_SUFFIXES):
                    yield Path(dirpath) / f


def newest_source_mtime() -> float:
    return max((p.stat().st_mtime for p in _sources()), default=0.0)


def _stamp(target: str, sanitize: bool) -> Path:
    return build_dir(target, sanitize) / ".fakit-build-stamp"


def selected_ops() -> str:
    """The operators to build ("" = all), from env FAKIT_CPU_OPS."""
    return os.environ.get("FAKIT_CPU_OPS", "").strip()


def is_stale(target: str = "cpu", sanitize: bool = False) -> bool:
    stamp = _stamp(target, sanitize)
    if not stamp.exists() or not library_path(target, sanitize).exists():
        return True
    if stamp.read_text().strip() != selected_ops():
        return True
    return newest_source_mtime() > stamp.stat().st_mtime


_checked: Dict[Tuple[str, bool], Path] = {}


def ensure_built(
    target: str = "cpu", sanitize: bool = False, jobs: int = 2, force: bool = False, quiet: bool = True
) -> Path:
    """Path of the CPU library, building it first when missing or out of date. quiet=False shows
    the build as its own step on stderr: what runs, a progress bar over the compile steps and
    the time it took (so a first `fakit run` never sits silent at 0 cases)."""
    key = (target, sanitize)
    if key in _checked and not force:
        return _checked[key]
    bdir = build_dir(target, sanitize)
    bdir.parent.mkdir(parents=True, exist_ok=True)
    lock_path = bdir.parent / f".{bdir.name}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building: wait, then re-check
        if force or is_stale(target, sanitize):
            _run_build(sanitize, jobs, quiet)
    lib = library_path(target, sanitize)
    _checked[key] = lib
    return lib


def _run_build(sanitize: bool, jobs: int, quiet: bool) -> None:
    cmd = ["bash", str(ROOT / "build.sh"), "--target", "cpu", "-j", str(jobs)]
    if sanitize:
        cmd.append("--sanitize")
    if selected_ops():
        cmd += ["--ops", selected_ops()]
    # The stamp carries the build's start time: a source edited during the build is newer and
    # makes the next call rebuild.
    stamp = _stamp("cpu", sanitize)
    started = time.time()
    if quiet:
        proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        returncode, output = proc.returncode, proc.stdout
    else:
        print(f"fakit: building the CPU target (first run or sources changed): {' '.join(cmd)}", file=sys.stderr)
        returncode, output = _run_with_progress(cmd)
        print(f"fakit: build finished in {time.time() - started:.1f} s", file=sys.stderr)
    if returncode != 0:
        print(output, file=sys.stderr)
        raise BuildError(f"CPU build failed ({' '.join(cmd)} exited with {returncode}):\n{output[-8000:]}")
    stamp.write_text(selected_ops() + "\n")
    os.utime(stamp, (started, started))


# Progress lines of the two generators: ninja "[12/73] Building ...", make "[ 42%] Building ...".
_NINJA = re.compile(r"^\[(\d+)/(\d+)\]\s*(.*)")
_MAKE = re.compile(r"^\[\s*(\d+)%\]\s*(.*)")


def parse_progress(line: str):
    """(done, total, what) of one build output line, or None when it carries no progress."""
    m = _NINJA.match(line)
    if m:
        return int(m.group(1)), int(m.group(2)), m.group(3)
    m = _MAKE.match(line)
    if m:
        return int(m.group(1)), 100, m.group(2)
    return None


def _run_with_progress(cmd) -> Tuple[int, str]:
    """Runs the build, drawing a progress bar over its compile steps on stderr; returns
    (exit status, whole output)."""
    from tqdm import tqdm

    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    lines = []
    with tqdm(total=None, desc="build cpu", unit="step", file=sys.stderr, leave=True) as bar:
        for line in proc.stdout:
            lines.append(line)
            got = parse_progress(line)
            if line.startswith("-- ") and bar.total is None:  # CMake's configure step
                bar.set_postfix_str("configure", refresh=True)
            if got:
                done, total, what = got
                bar.total = total
                bar.n = done
                bar.set_postfix_str(os.path.basename(what.split()[-1]) if what.split() else "", refresh=False)
                bar.refresh()
    return proc.wait(), "".join(lines)
