"""The modelled time depends on the program only: the same launch, repeated while another process
hogs a CPU and with this process's threads confined to one CPU or spread over all of them, gives
the same profile to the last digit (the replay takes the cores' L2 accesses in modelled-time
order, not in the order the host runs the threads). A MIX flash-attention launch (cross-core
flags, shared K/V in L2) and a multi-core matmul (B shared by every core) are checked."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fakit
from fakit.backends import cpu
from fakit.cases import prompt_flash_attention as pfa

RUNS = 10


@pytest.fixture
def cpu_hog():
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        hog.kill()
        hog.wait()


def profiles(launch):
    """The profile JSON of RUNS launches, alternating one CPU and every CPU for this process."""
    every = os.sched_getaffinity(0)
    out = []
    try:
        for i in range(RUNS):
            os.sched_setaffinity(0, {min(every)} if i % 2 else every)
            launch()
            out.append(json.dumps(cpu.last_profile(), sort_keys=True))
    finally:
        os.sched_setaffinity(0, every)
    return out


def test_flash_attention_launch_models_the_same_time_every_run(cpu_hog, monkeypatch):
    monkeypatch.setenv("ASCEND_EMU_TIMING_ONLY", "1")
    kwargs = pfa.make("fp16", "BNSD", B=1, N=4, Sq=1024, D=128, mask="causal", mask_shape="SS").inputs()
    runs = profiles(lambda: fakit.run(pfa.OP, backend="cpu", **kwargs))
    assert json.loads(runs[0])["hbm_bytes"] > 0
    assert runs == [runs[0]] * RUNS


def test_multi_core_matmul_models_the_same_time_every_run(cpu_hog, run_proof):
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (1024, 512)).astype(np.float16)
    b = rng.uniform(-1, 1, (512, 1024)).astype(np.float16)
    runs = profiles(lambda: run_proof("cube_matmul", a=a, b=b))
    profile = json.loads(runs[0])
    assert profile["block_dim"] > 1 and profile["l2_read_bytes"] > profile["hbm_bytes"]  # B is shared in L2
    assert runs == [runs[0]] * RUNS
