"""A kernel built against another emulator's headers is refused at launch with a message, not run
into a crash: every `<<<>>>` entry registers the digest of the headers it was compiled with
(emu/abi_stamp.h, ASCEND_EMU_ABI_STAMP) and the runtime compares it with its own. A stand-in
program registers one launch site the way the ASC driver's code does, with the runtime's stamp,
another stamp, or through the unstamped registration of binaries built before the stamp existed.
A second one launches the way CPU-twin programs (ICPU_RUN_KF) and op_api code do, through
emu::Launch, which takes the caller's stamp the same way."""

import os
import re
import shutil
import subprocess

import pytest

from fakit import build

PROGRAM = r"""
#include <cstdio>
#include <cstring>
#include "emu/asc_launch.h"

namespace emu::asc {
bool RegisterEntry(const char *unit, const char *site, int pass, Entry entry);  // older headers
}

static void Body(void *) { std::printf("ran\n"); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "same";
    for (int pass = 0; pass < 2; ++pass) {
        if (std::strcmp(mode, "unstamped") == 0)
            emu::asc::RegisterEntry("unit.asc", "site", pass, &Body);
        else
            emu::asc::RegisterEntry("unit.asc", "site", pass, &Body,
                                    std::strcmp(mode, "same") == 0 ? ASCEND_EMU_ABI_STAMP : 0x1234ULL);
    }
    emu::asc::LaunchSite("unit.asc", "site", "probe_kernel", 1, nullptr, nullptr, nullptr);
    std::fflush(stdout);
    return 0;
}
"""


TWIN_PROGRAM = r"""
#include <cstdio>
#include <cstring>
#include <functional>
#include "tikicpulib.h"

namespace emu {
void Launch(const LaunchConfig &cfg, const std::function<void()> &body);  // older headers
}

extern "C" __global__ __aicore__ void probe_kernel(GM_ADDR) { std::printf("ran\n"); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "same";
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    uint8_t *x = static_cast<uint8_t *>(AscendC::GmAlloc(32));
    emu::LaunchConfig cfg;
    cfg.name = "probe_kernel";
    cfg.mix = emu::CoreMix::AIV_ONLY;
    const std::function<void()> body = [x] { probe_kernel(x); };
    if (std::strcmp(mode, "same") == 0) {
        ICPU_RUN_KF(probe_kernel, 1, x);
    } else if (std::strcmp(mode, "other") == 0) {
        emu::Launch(cfg, body, 0x1234ULL);
    } else {
        using Unstamped = void (*)(const emu::LaunchConfig &, const std::function<void()> &);
        static_cast<Unstamped>(&emu::Launch)(cfg, body);
    }
    std::fflush(stdout);
    AscendC::GmFree(x);
    return 0;
}
"""


def _compile(tmp_path_factory, source):
    if shutil.which("g++") is None:
        pytest.skip("needs g++")
    build.ensure_built("cpu")
    prefix = build.install_prefix()
    tmp = tmp_path_factory.mktemp("abi_stamp")
    (tmp / "main.cpp").write_text(source)
    exe = tmp / "probe"
    cmd = [
        "g++",
        "-std=c++17",
        "-O1",
        "-isystem",
        f"{prefix}/include",
        str(tmp / "main.cpp"),
        "-o",
        str(exe),
        f"-L{prefix}/lib64",
        "-lascendcl",
        f"-Wl,-rpath,{prefix}/lib64",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return prefix, exe


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return _compile(tmp_path_factory, PROGRAM)


@pytest.fixture(scope="module")
def twin_program(tmp_path_factory):
    return _compile(tmp_path_factory, TWIN_PROGRAM)


def _run(program, mode):
    prefix, exe = program
    env = dict(os.environ, LD_LIBRARY_PATH=f"{prefix}/lib64:" + os.environ.get("LD_LIBRARY_PATH", ""))
    return subprocess.run([str(exe), mode], capture_output=True, text=True, timeout=120, env=env)


def test_the_installed_stamp_is_a_digest(program):
    prefix, _ = program
    text = (prefix / "include" / "emu" / "abi_stamp.h").read_text()
    assert re.search(r"#define ASCEND_EMU_ABI_STAMP 0x[0-9a-f]{16}ULL", text), text


def test_a_kernel_built_against_these_headers_runs(program):
    proc = _run(program, "same")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("ran") == 3  # one cube and two vector cores


@pytest.mark.parametrize("mode, why", [("other", "other emulator headers"), ("unstamped", "carry no ABI stamp")])
def test_a_kernel_built_against_other_headers_is_refused(program, mode, why):
    proc = _run(program, mode)
    assert proc.returncode != 0
    assert "ran" not in proc.stdout
    assert "launch of probe_kernel<<<1>>> from unit.asc" in proc.stderr and why in proc.stderr, proc.stderr
    assert "rebuild it" in proc.stderr


def test_a_cpu_twin_launch_built_against_these_headers_runs(twin_program):
    proc = _run(twin_program, "same")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("ran") == 1


@pytest.mark.parametrize("mode, why", [("other", "other emulator headers"), ("unstamped", "carry no ABI stamp")])
def test_a_direct_launch_built_against_other_headers_is_refused(twin_program, mode, why):
    proc = _run(twin_program, mode)
    assert proc.returncode != 0
    assert "ran" not in proc.stdout
    assert "launch of probe_kernel: the calling code was built against" in proc.stderr and why in proc.stderr
    assert "rebuild it" in proc.stderr
