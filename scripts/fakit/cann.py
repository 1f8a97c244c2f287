"""Where the CANN toolkit, the simulator libraries, the installed custom-op package and the
device are, for the `sim` / `npu` backends and `fakit prof`. Every lookup that fails raises
fakit.BackendUnavailable with what to install or set (the CLI turns it into exit code 2).

Paths follow CANN's own conventions (the CANN installation guide and the set_env.sh a toolkit installs):
  <CANN>/tools/simulator/<SocVersion>/lib   libruntime_camodel.so, libnpu_drv_camodel.so
  <vendor dir>/op_api/{include,lib}         the package's aclnn headers and libcust_opapi.so
  vendor dirs: $ASCEND_CUSTOM_OPP_PATH (':'-list, set by the package's set_env.bash), then
               $ASCEND_OPP_PATH/vendors/<vendor>, <CANN>/opp/vendors/<vendor>
"""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path
from typing import Dict, List, Optional

from .errors import BackendUnavailable

DEFAULT_SOC = "ascend910b2"
DEFAULT_VENDOR = "fa"
CAMODEL_LIBS = ("libruntime_camodel.so", "libnpu_drv_camodel.so")

INSTALL_HINT = (
    "Install the CANN toolkit (8.5 or newer) and `source <CANN>/set_env.sh` (sets "
    "ASCEND_HOME_PATH), or export ASCEND_CANN_PACKAGE_PATH=<CANN>. See docs/npu.md."
)
PACKAGE_HINT = (
    "Build and install the operators' package: ./build.sh --target npu --soc {soc} --pkg "
    "--vendor {vendor}; build/npu/custom_opp_<os>_<arch>.run --install-path=<DIR>; "
    "source <DIR>/vendors/{vendor}/bin/set_env.bash. See docs/npu.md."
)


def soc_version(soc: str) -> str:
    """'ascend910b2' -> 'Ascend910B2' (the simulator directory / msprof --soc-version name)."""
    s = soc.lower()
    if s.startswith("ascend910b") and s[len("ascend910b") :] in ("", "1", "2", "2c", "3", "4"):
        return "Ascend910B" + (s[len("ascend910b") :] or "2").upper()
    if s.startswith("ascend910_93"):
        return "Ascend910_93" + s[len("ascend910_93") :]
    raise ValueError(
        f"unsupported SoC {soc!r}: these operators target Atlas A2/A3 (ascend910b1..ascend910b4, ascend910_93)"
    )


EMULATOR_MARKER = "fa_emulator_prefix.txt"


def is_emulator_prefix(path: Path) -> bool:
    """True for the CPU target's CANN-shaped prefix (build/cpu/install), by the marker file
    cmake/cpu_install_prefix.cmake writes. Its set_env.sh sets ASCEND_HOME_PATH like a
    toolkit's does, but it has no compiler, simulator or device runtime. (Only the marker
    counts: a test toolkit may borrow the prefix's libraries on purpose.)"""
    return (path / EMULATOR_MARKER).exists()


def find_cann() -> Path:
    """The CANN toolkit directory from ASCEND_HOME_PATH or ASCEND_CANN_PACKAGE_PATH (the CPU
    emulator's prefix is skipped: it is not a toolkit)."""
    emulator = None
    for var in ("ASCEND_HOME_PATH", "ASCEND_CANN_PACKAGE_PATH"):
        value = os.environ.get(var)
        if value:
            path = Path(value)
            if not path.is_dir():
                raise BackendUnavailable(f"{var}={value} is not a directory. {INSTALL_HINT}")
            if is_emulator_prefix(path):
                emulator = (var, value)
                continue
            return path
    if emulator:
        raise BackendUnavailable(
            f"{emulator[0]}={emulator[1]} is this project's CPU emulator prefix (set by build/cpu/install/"
            "set_env.sh), not a CANN toolkit: the sim and npu backends need a real toolkit. Use "
            f"--backend cpu for the emulator, or {INSTALL_HINT[0].lower() + INSTALL_HINT[1:]}"
        )
    raise BackendUnavailable(
        f"no CANN toolkit: neither ASCEND_HOME_PATH nor ASCEND_CANN_PACKAGE_PATH is set. {INSTALL_HINT}"
    )


def simulator_lib(cann: Path, soc: str) -> Path:
    """The camodel library directory of `soc` (CANN 8/9 SoC-named or arch-named layouts)."""
    version = soc_version(soc)
    candidates = [
        cann / "tools/simulator" / version / "lib",
        cann / "toolkit/tools/simulator" / version / "lib",
        cann / "tools/simulator/dav_2201/lib",
    ]
    for lib in candidates:
        if all((lib / name).exists() for name in CAMODEL_LIBS):
            return lib
    raise BackendUnavailable(
        f"the CANN toolkit at {cann} has no simulator for {version}: expected "
        f"{' and '.join(CAMODEL_LIBS)} in {candidates[0]}. Install the toolkit with its "
        "simulator (tools/simulator), or pick another --soc."
    )


def vendor_dirs(cann: Path, vendor: str) -> List[Path]:
    dirs = [Path(p) for p in os.environ.get("ASCEND_CUSTOM_OPP_PATH", "").split(":") if p]
    dirs = [d for d in dirs if d.name == vendor] + [d for d in dirs if d.name != vendor]
    opp = os.environ.get("ASCEND_OPP_PATH")
    if opp:
        dirs.append(Path(opp) / "vendors" / vendor)
    dirs.append(cann / "opp" / "vendors" / vendor)
    return dirs


def find_package(cann: Path, vendor: str, soc: str = DEFAULT_SOC) -> Path:
    """The installed vendor directory holding op_api/lib/libcust_opapi.so."""
    for d in vendor_dirs(cann, vendor):
        if (d / "op_api/lib/libcust_opapi.so").exists():
            return d
    searched = ", ".join(str(d) for d in vendor_dirs(cann, vendor))
    raise BackendUnavailable(
        f"no installed custom-op package of vendor {vendor!r} "
        f"(searched {searched}). " + PACKAGE_HINT.format(soc=soc, vendor=vendor)
    )


def device_present() -> bool:
    """An Ascend device is visible: the driver's /dev/davinciN nodes (FAKIT_ASCEND_DEV overrides /dev)."""
    dev = os.environ.get("FAKIT_ASCEND_DEV", "/dev")
    return bool(glob.glob(os.path.join(dev, "davinci[0-9]*")))


def require_device() -> None:
    if not device_present():
        raise BackendUnavailable(
            "no Ascend device: /dev/davinci* does not exist (driver not installed or no NPU in "
            "this machine). Run on a machine with an Atlas A2 device and its driver, or use "
            "--backend sim (CANN simulator) or --backend cpu."
        )


def compiler() -> str:
    cxx = os.environ.get("FAKIT_CXX") or os.environ.get("CXX") or "g++"
    if not shutil.which(cxx):
        raise BackendUnavailable(f"C++ compiler {cxx!r} not found: install g++ or set FAKIT_CXX")
    return cxx


def runtime_lib(cann: Path) -> str:
    """acl runtime library name: CANN 9 ships libacl_rt, CANN 8 libascendcl."""
    return (
        "acl_rt"
        if (cann / "lib64/libacl_rt.so").exists() and not (cann / "lib64/libascendcl.so").exists()
        else "ascendcl"
    )


def compile_command(src: Path, exe: Path, cann: Path, vendor_dir: Path) -> List[str]:
    """g++ command that builds an aclnn runner against the installed package (as
    ops-transformer's --run_example does: cust_opapi + nnopbase + the acl runtime)."""
    lib = vendor_dir / "op_api/lib"
    return [
        compiler(),
        "-std=c++17",
        "-O2",
        str(src),
        "-o",
        str(exe),
        f"-I{cann / 'include'}",
        f"-I{cann / 'include/aclnnop'}",
        f"-I{vendor_dir / 'op_api/include'}",
        f"-L{lib}",
        f"-L{cann / 'lib64'}",
        "-lcust_opapi",
        "-lnnopbase",
        f"-l{runtime_lib(cann)}",
        f"-Wl,-rpath,{lib}",
        f"-Wl,-rpath,{cann / 'lib64'}",
    ]


def _prepend(env: Dict[str, str], key: str, paths: List[str]) -> None:
    old = env.get(key, "")
    env[key] = ":".join(paths + ([old] if old else []))


def run_env(
    cann: Path,
    vendor_dir: Path,
    sim_lib: Optional[Path] = None,
    preload: bool = False,
    base: Optional[Dict[str, str]] = None,
) -> Dict[str, str]:
    """Environment of a runner: the package first on ASCEND_CUSTOM_OPP_PATH and
    LD_LIBRARY_PATH; for the simulator its camodel libraries ahead of everything (and, when the
    runner is started directly rather than by msprof, preloaded so they replace the driver)."""
    env = dict(os.environ if base is None else base)
    libs = [str(vendor_dir / "op_api/lib"), str(cann / "lib64")]
    if sim_lib is not None:
        libs.insert(0, str(sim_lib))
        if preload:
            _prepend(env, "LD_PRELOAD", [str(sim_lib / name) for name in CAMODEL_LIBS])
    _prepend(env, "LD_LIBRARY_PATH", libs)
    _prepend(env, "ASCEND_CUSTOM_OPP_PATH", [str(vendor_dir)])
    env.setdefault("ASCEND_HOME_PATH", str(cann))
    # aclnn parameter errors go to the CANN log; print them so the harness can report them.
    env.setdefault("ASCEND_SLOG_PRINT_TO_STDOUT", "1")
    env.setdefault("ASCEND_GLOBAL_LOG_LEVEL", "3")
    return env


def msprof(cann: Path) -> str:
    for candidate in (shutil.which("msprof"), cann / "tools/profiler/bin/msprof", cann / "bin/msprof"):
        if candidate and Path(candidate).exists():
            return str(candidate)
    raise BackendUnavailable(
        f"msprof not found on PATH or in {cann}/tools/profiler/bin: install "
        "the CANN toolkit's profiling tools and source set_env.sh"
    )
