"""Builds and runs every Atlas A2 example of a CATLASS checkout on the CPU emulator, each with its
own check, after building it with CATLASS's own CMake against the CPU prefix (build/cpu/install,
sourced through its set_env.sh as CANN's set_env.sh is sourced):

    python benchmarks/peers/catlass_examples.py --catlass DIR [--only NAME[,NAME]] [--json PATH]
        [--build-dir DIR] [--prefix DIR] [-j N] [--run-only]

The examples are the EXAMPLE_ATLASA2 list of DIR/examples/CMakeLists.txt. Each runs with small
shapes (below); an example with a gen_data.py golden gets its data generated into a scratch copy
of the checkout's layout, never into the checkout. Prints `PASS|FAIL|SKIP <example> <reason>` per
example and last `catlass: P/T A2 examples pass`. Environment variables reach the examples, so
ASCEND_EMU_RACECHECK=1 runs them all under the race checker. --json writes one record per
example with its modelled launches (ASCEND_EMU_PROFILE lines: task_duration_us and the msprof
ratios, modelled, not measured).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

MM = ["256", "512", "1024", "0"]  # m n k device, the READMEs' shape
GROUPED = ["128", "512", "1024", "2048", "0"]  # groups m n k device
FAI = ["1", "177", "512", "1", "1", "128", "0", "1"]  # batch qSeq kvSeq heads kvHeads headSize varied mask

# name -> how to run it: args; gen = gen_data.py arguments (the script next to the example) and
# where it runs; cwd of the run: "bin" (output/bin of the scratch layout, as the READMEs run
# them), "root" (the layout's root) or "data" (the generator's directory).
RECIPES = {
    "01_batched_matmul": {"args": ["5", "256", "512", "1024", "0"]},
    "02_grouped_matmul_slice_m": {"args": GROUPED},
    "05_grouped_matmul_slice_k": {"args": GROUPED},
    "07_grouped_matmul_slice_m_per_token_dequant_moe": {"args": GROUPED},
    "08_grouped_matmul": {"args": GROUPED},
    "10_grouped_matmul_slice_m_per_token_dequant": {"args": GROUPED},
    "11_grouped_matmul_slice_k_per_token_dequant": {"args": GROUPED},
    "16_group_gemm": {"args": ["3", "128,256,512", "256,512,128", "512,256,128", "0"]},
    "17_gemv_aiv": {"args": ["256", "512", "0"]},
    "18_gemv_aic": {"args": ["256", "512", "0"]},
    "19_mla": {
        "gen": ["4", "1,2,3,4", "128,256,512,1024", "16", "64", "128", "half"],
        "args": ["4", "1,2,3,4", "128,256,512,1024", "16", "64", "128"],
    },
    "23_flash_attention_infer": {"gen": FAI + ["bf16", "1"], "args": FAI + ["--dtype", "bf16"]},
    "24_conv_bias": {
        "gen": [
            "32",
            "64",
            "1",
            "32",
            "48",
            "128",
            "1",
            "1",
            "1",
            "1",
            "1",
            "1",
            "1",
            "1",
            "1",
            "0",
            "0",
            "0",
            "float16",
        ],
        "gen_cwd": "bin",
        "args": [
            "32",
            "1",
            "4",
            "32",
            "48",
            "16",
            "128",
            "1",
            "1",
            "1",
            "1",
            "1",
            "1",
            "1",
            "1",
            "1",
            "0",
            "0",
            "0",
            "0",
        ],
    },
    "29_a2_fp8_e4m3_matmul": {"gen": ["256", "512", "1024", "0", "0"], "cwd": "root"},
    "31_small_matmul": {"args": ["256", "1024", "256", "0"]},
    "32_w4a8_matmul": {"gen": ["256", "512", "1024"], "args": ["256", "512", "1024", "0"]},
    "33_basic_conv2d": {"args": ["2", "33", "43", "112", "80", "3", "3", "2", "2", "2", "2", "1", "1", "1", "1", "0"]},
    "38_w4a4_matmul_per_token_per_channel_dequant": {"gen": ["256", "512", "1024"]},
    "40_flash_attention_infer_tla": {"gen": FAI + ["bf16", "1"], "args": FAI + ["--dtype", "bf16"]},
    "41_sparse_matmul_tla": {"gen": ["256", "512", "1024"], "gen_script": "sparse_gen_data.py", "cwd": "data"},
    "45_strided_batched_matmul_tla": {"args": ["5", "256", "512", "1024", "0"]},
    # CATLASS's scripts/build.sh configures these two with an option that generates their kernel
    # wrappers into the source tree first: the runner does the same in a copy of the checkout.
    "102_dynamic_optimized_matmul": {
        "args": ["256", "512", "1024", "0", "1", "0"],
        "option": "COMPILE_DYNAMIC_OPTIMIZED_MATMUL",
    },
    "103_dynamic_optimized_quant_matmul_per_token_basic": {
        "args": ["256", "512", "1024", "0", "1", "0"],
        "option": "COMPILE_DYNAMIC_QBMM_OPTIMIZED_MATMUL",
    },
}
# What an example prints when its own check passes / fails.
PASSED = re.compile(r"Compare success|compare success|Precision check passed|\bpassed\b", re.I)
FAILED = re.compile(r"Compare failed|compare failed|Error count|precision.*fail|\bfailed\b", re.I)


def a2_examples(catlass: Path):
    text = (catlass / "examples" / "CMakeLists.txt").read_text(encoding="utf-8")
    block = re.search(r"set\(EXAMPLE_ATLASA2\s+(.*?)\)", text, re.S)
    if not block:
        raise SystemExit(f"{catlass}/examples/CMakeLists.txt has no EXAMPLE_ATLASA2 list")
    return block.group(1).split()


def first_error(text: str) -> str:
    for line in text.splitlines():
        if re.search(r"error|\[ascendc-emu\]|Abort|Segmentation|undefined reference", line):
            return " ".join(line.split())[:300]
    lines = [line for line in text.splitlines() if line.strip()]
    return " ".join(lines[-1].split())[:300] if lines else "no output"


def shell(cmd, env, cwd=None, timeout=1800):
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, errors="replace")
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        return -1, f"timed out after {timeout} s: {e.cmd}"


def prefix_env(prefix: Path):
    """The environment after `. <prefix>/set_env.sh`."""
    out = subprocess.run(["bash", "-c", f". {prefix}/set_env.sh && env -0"], capture_output=True, check=True).stdout
    return dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)


def configure(catlass: Path, bdir: Path, env, options=()) -> str:
    if (bdir / "CMakeCache.txt").exists():
        return ""
    rc, out = shell(
        ["cmake", "-S", str(catlass), "-B", str(bdir), "-DCATLASS_ARCH=2201", "-DCMAKE_BUILD_TYPE=Release"]
        + [f"-D{option}=ON" for option in options]
        + (["-G", "Ninja"] if shutil.which("ninja") else []),
        env,
    )
    return "" if rc == 0 else "CMake configure failed: " + first_error(out)


def source_copy(catlass: Path, dst: Path) -> Path:
    """A copy of the checkout's tracked files, for the examples whose configure writes into the
    source tree (the checkout itself stays unchanged). Refreshed when the checkout's commit moves."""
    head = subprocess.run(["git", "-C", str(catlass), "rev-parse", "HEAD"], capture_output=True, text=True)
    stamp = (head.stdout.strip() or "untracked") + "\n"
    if (dst / ".catlass-commit").exists() and (dst / ".catlass-commit").read_text() == stamp:
        return dst
    shutil.rmtree(dst, ignore_errors=True)
    listed = subprocess.run(["git", "-C", str(catlass), "ls-files", "-z"], capture_output=True)
    files = [f for f in listed.stdout.decode().split("\0") if f] if listed.returncode == 0 else []
    if files:
        for rel in files:
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            if (catlass / rel).is_dir():  # a submodule
                shutil.copytree(catlass / rel, dst / rel, ignore=shutil.ignore_patterns(".git"), dirs_exist_ok=True)
            else:
                shutil.copy2(catlass / rel, dst / rel)
    else:
        shutil.copytree(catlass, dst, ignore=shutil.ignore_patterns(".git"))
    (dst / ".catlass-commit").write_text(stamp)
    return dst


def run_example(name, catlass, bdir, work, env, jobs, build=True):
    rec = {"example": name, "status": "FAIL", "reason": "", "launches": []}
    t0 = time.time()
    rc, out = shell(["cmake", "--build", str(bdir), "--target", name, "-j", str(jobs)], env) if build else (0, "")
    rec["build_s"] = round(time.time() - t0, 1)
    if rc != 0:
        rec["reason"] = "build: " + first_error(out)
        return rec
    recipe = RECIPES.get(name, {"args": MM})
    layout = work / name
    shutil.rmtree(layout, ignore_errors=True)
    bin_dir = layout / "output" / "bin"
    bin_dir.mkdir(parents=True)
    exe = next((p for p in bdir.rglob(name) if p.is_file() and os.access(p, os.X_OK)), None)
    if exe is None:
        rec["reason"] = f"build: no executable {name} under {bdir}"
        return rec
    # The example's own shared libraries (no RPATH in a Release build: the READMEs export
    # LD_LIBRARY_PATH, and so does the runner).
    libdirs = sorted({str(p.parent) for p in exe.parent.glob("lib*.so")})
    if libdirs:
        env = dict(env, LD_LIBRARY_PATH=":".join(libdirs + [env.get("LD_LIBRARY_PATH", "")]))
    data_dir = layout / "examples" / name
    data_dir.mkdir(parents=True)
    if "gen" in recipe:
        script = recipe.get("gen_script", "gen_data.py")
        shutil.copy(catlass / "examples" / name / script, data_dir / script)
        for sub in ("data", "input", "output"):
            (data_dir / sub).mkdir(exist_ok=True)
            (bin_dir / sub).mkdir(exist_ok=True)
        (layout / "data").mkdir(exist_ok=True)
        gen_cwd = bin_dir if recipe.get("gen_cwd") == "bin" else data_dir
        rc, out = shell([sys.executable, str(data_dir / script)] + recipe["gen"], env, cwd=gen_cwd, timeout=900)
        if rc != 0:
            missing = re.search(r"No module named '([^']+)'", out)
            rec["status"] = "SKIP" if missing else "FAIL"
            rec["reason"] = (
                f"{script} needs the Python module {missing.group(1)}" if missing else f"{script}: " + first_error(out)
            )
            return rec
    cwd = {"root": layout, "data": data_dir}.get(recipe.get("cwd"), bin_dir)
    profile = layout / "profile.jsonl"
    run_env = dict(env, ASCEND_EMU_PROFILE=str(profile))
    t0 = time.time()
    rc, out = shell(
        [str(exe)] + recipe.get("args", recipe["gen"][:3] + ["0"] if "gen" in recipe else MM),
        run_env,
        cwd=cwd,
        timeout=1800,
    )
    rec["run_s"] = round(time.time() - t0, 1)
    if profile.exists():
        rec["launches"] = [json.loads(line) for line in profile.read_text().splitlines() if line.strip()]
        for launch in rec["launches"]:
            launch.pop("cores", None)
    if rc != 0:
        rec["reason"] = f"run: exit {rc}: " + first_error(out)
    elif FAILED.search(out) or not PASSED.search(out):
        rec["reason"] = "check: " + first_error(out)
    else:
        rec["status"] = "PASS"
        modelled = sum(launch.get("task_duration_us", 0) for launch in rec["launches"])
        rec["reason"] = f"{len(rec['launches'])} launch(es), modelled {modelled:.1f} us"
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--catlass", required=True, type=Path, help="a CATLASS checkout (hicann/catlass)")
    ap.add_argument("--only", action="append", default=[], help="example name(s), comma-separated")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument(
        "--build-dir",
        type=Path,
        default=ROOT / "build" / "catlass",
        help="CATLASS build tree and scratch data (default build/catlass)",
    )
    ap.add_argument("--prefix", type=Path, help="the CPU prefix (default: build/cpu/install, built when stale)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument(
        "--run-only",
        action="store_true",
        help="run what an earlier invocation built, without building (e.g. again under ASCEND_EMU_RACECHECK=1)",
    )
    args = ap.parse_args(argv)
    catlass = args.catlass.resolve()
    examples = a2_examples(catlass)
    only = [n for item in args.only for n in item.split(",") if n]
    unknown = [n for n in only if n not in examples]
    if unknown:
        raise SystemExit(f"not Atlas A2 examples of {catlass}: {', '.join(unknown)}")
    selected = only or examples

    if args.prefix is None:
        from fakit import build  # the prefix: build/cpu/install, built when missing or stale

        build.ensure_built("cpu", quiet=False)
        args.prefix = build.install_prefix()
    env = prefix_env(args.prefix.resolve())
    bdir = args.build_dir.resolve() / "build"
    work = args.build_dir.resolve() / "run"
    work.mkdir(parents=True, exist_ok=True)
    plain = [n for n in selected if "option" not in RECIPES.get(n, {})]
    failure = configure(catlass, bdir, env) if plain else ""
    if len(plain) < len(selected):  # a second tree, configured from a copy with every such option on
        generated = source_copy(catlass, args.build_dir.resolve() / "src")
        gbdir = args.build_dir.resolve() / "build-generated"
        gfailure = configure(generated, gbdir, env, sorted(r["option"] for r in RECIPES.values() if "option" in r))
    results = []
    for name in selected:
        tree, why = (bdir, failure) if name in plain else (gbdir, gfailure)
        if why:
            rec = {"example": name, "status": "FAIL", "reason": why, "launches": []}
        else:
            rec = run_example(name, catlass, tree, work, env, args.jobs, build=not args.run_only)
        results.append(rec)
        print(f"{rec['status']} {name} {rec['reason']}", flush=True)
    passed = sum(r["status"] == "PASS" for r in results)
    print(f"catlass: {passed}/{len(results)} A2 examples pass")
    if args.json:
        args.json.write_text(json.dumps({"catlass": str(catlass), "results": results}, indent=1) + "\n")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
