"""Forward cores past the plan write nothing.

FAG V5's recompute launches the forward core with the larger of the forward's and the backward's
core counts, so the forward runs on cores its plan gave no units. ``wide_forward.cpp`` runs one
forward call (FlashAttentionVarLenScore or PromptFlashAttention) twice on the CPU target with the
outputs and the workspace (and a slack past its end that holds every extra core's per-core
region) filled with a canary byte: with the planned blockDim and with the SoC's full core count.
Every byte of the outputs and of the workspace must come out of both runs the same, and the
slack must keep its canary. The shapes cover the tiling keys of both operators (per-block and
lazy P.V, K/V staged in Nz order), masks, sparse modes, GQA and dropout.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fakit import build
from fakit.backends import cpu

ROOT = Path(__file__).resolve().parents[3]
MAX_INT = "2147483647"

# op, dtype, then (fav) N Nkv D qlens kvlens sparse_mode keep_prob pre next
#                 (pfa) B N Nkv S Skv D mask pre next
CASES = {
    "fav_lazy_no_mask": ["fav", "fp16", "1", "1", "64", "20", "300", "0", "1.0", MAX_INT, MAX_INT],
    "fav_per_block_d256": ["fav", "fp16", "1", "1", "256", "200", "700", "0", "1.0", MAX_INT, MAX_INT],
    "fav_gqa_mode3": ["fav", "fp16", "2", "1", "128", "100,50", "700,64", "3", "1.0", MAX_INT, MAX_INT],
    "fav_prefix_mode6_dropout": ["fav", "bf16", "1", "1", "64", "130,37", "130,200", "6", "0.8", MAX_INT, MAX_INT],
    "fav_kv_nz_band_dropout": ["fav", "fp16", "1", "1", "128", "500", "900", "4", "0.9", "300", "10"],
    "pfa_lazy_no_mask": ["pfa", "fp16", "1", "1", "1", "128", "1024", "128", "0", MAX_INT, "0"],
    "pfa_per_block_gqa": ["pfa", "fp16", "1", "4", "1", "128", "3000", "256", "1", MAX_INT, "0"],
    "pfa_kv_nz_causal": ["pfa", "bf16", "1", "2", "1", "200", "4096", "64", "1", MAX_INT, "0"],
    "pfa_band": ["pfa", "fp16", "1", "1", "1", "300", "2000", "64", "1", "100", "0"],
}


@pytest.fixture(scope="module")
def wide_forward(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.fail("g++ is required (the CPU target is built with it)")
    lib = Path(build.ensure_built("cpu"))
    exe = tmp_path_factory.mktemp("wide") / "wide_forward"
    source = Path(__file__).with_name("wide_forward.cpp")
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-O1",
            f"-I{lib.parent / 'install/include'}",  # the prefix holds the generated ABI stamp
            f"-I{ROOT / 'op_host'}",
            f"-I{ROOT / 'op_kernel'}",
            str(source),
            str(lib),
            f"-Wl,-rpath,{lib.parent}",
            "-o",
            str(exe),
        ],
        check=True,
    )
    return exe


@pytest.mark.parametrize("name", sorted(CASES))
def test_cores_past_the_plan_write_nothing(wide_forward, name):
    cores = cpu.soc_info()["aic_cores"]
    proc = subprocess.run(
        [str(wide_forward), *CASES[name], str(cores)], capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = json.loads(proc.stdout)
    assert res["used"] < res["wide"] == cores, res  # the shape leaves cores without units
    assert all(n == 0 for n in res["diff"].values()), f"the wide launch wrote other bytes: {res}"
    assert res["slack_canary"] == res["slack"], f"a write past the planned workspace: {res}"
