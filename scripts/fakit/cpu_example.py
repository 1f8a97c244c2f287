"""Build and run an aclnn example program against the CPU target's CANN-shaped prefix, with the
CMakeLists.txt of CANN's documentation used unchanged apart from the names the page asks to
replace (the source file and, for custom operators, the executable).

    proc = build_and_run(Path("test_aclnn_x.cpp"), workdir, kind="builtin")   # spec examples
    proc = build_and_run(Path("test_aclnn_y.cpp"), workdir, kind="custom")     # proof operators

kind "builtin": ops-transformer docs/context/编译与运行样例.md (links libascendcl, libnnopbase,
  libopapi, libopapi_transformer from $ASCEND_HOME_PATH/lib64; C++11);
kind "custom": ops-transformer docs/invocation/op_invocation.md "编译与运行" (adds the custom-op
  vendor's op_api include and libcust_opapi.so found through LD_LIBRARY_PATH .../vendors/...).
The pages are read from the reference pack (fakit.pack.reference_dir(): env FA_REFERENCE_DIR,
default <repo>/.spec-pack/reference); without the pack, an equivalent CMakeLists.txt
written for this project is used and `official` in the result says so.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, Optional

from . import build, pack

DOCS = {
    "builtin": ("ops-transformer/docs/context/编译与运行样例.md", "test_flash_attention_score.cpp", "opapi_test"),
    "custom": (
        "ops-transformer/docs/invocation/op_invocation.md",
        "test_aclnn_add_example.cpp",
        "test_aclnn_add_example",
    ),
}
PROOF_VENDOR = "fa_emu_proof"

# Used only when the reference pack is absent: the same recipe, written for this project.
FALLBACK = {
    "builtin": """cmake_minimum_required(VERSION 3.14)
project(ACLNN_EXAMPLE)
add_compile_options(-std=c++11)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY "./bin")
add_executable(opapi_test test_flash_attention_score.cpp)
set(ASCEND_PATH $ENV{ASCEND_HOME_PATH})
include_directories(${ASCEND_PATH}/include ${ASCEND_PATH}/include/aclnn ${ASCEND_PATH}/include/aclnnop)
target_link_libraries(opapi_test PRIVATE ${ASCEND_PATH}/lib64/libascendcl.so ${ASCEND_PATH}/lib64/libnnopbase.so
                      ${ASCEND_PATH}/lib64/libopapi.so ${ASCEND_PATH}/lib64/libopapi_transformer.so)
""",
    "custom": """cmake_minimum_required(VERSION 3.14)
project(ACLNN_EXAMPLE)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY "./bin")
add_executable(test_aclnn_add_example test_aclnn_add_example.cpp)
set(ASCEND_PATH $ENV{ASCEND_HOME_PATH})
set(VENDOR_API ${ASCEND_PATH}/opp/vendors/"""
    + PROOF_VENDOR
    + """/op_api)
include_directories(${ASCEND_PATH}/include ${VENDOR_API}/include)
target_link_libraries(test_aclnn_add_example PRIVATE ${ASCEND_PATH}/lib64/libascendcl.so
                      ${ASCEND_PATH}/lib64/libnnopbase.so ${VENDOR_API}/lib/libcust_opapi.so)
""",
}


def spec_example_block(spec_text: str) -> str:
    """The first C++ code block (fenced ```c++ or ```cpp) of a spec's "调用示例" section: the
    example program that tests/data/spec_examples/ stores verbatim."""
    section = spec_text[spec_text.index("## 调用示例") :]
    return re.search(r"```(?:c\+\+|cpp)\n(.*?)```", section, re.S).group(1)


def reference_root() -> Path:
    return pack.reference_dir()


def official_cmakelists(kind: str) -> Optional[str]:
    """The CMakeLists.txt code block of the documentation page, or None without the pack."""
    page = reference_root() / DOCS[kind][0]
    if not page.exists():
        return None
    for block in re.findall(r"```[^\n]*\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S):
        if "cmake_minimum_required" in block:
            lines = block.splitlines()
            indent = min(len(l) - len(l.lstrip()) for l in lines if l.strip())
            return "\n".join(l[indent:] for l in lines) + "\n"
    raise ValueError(f"{page}: no CMakeLists.txt code block found")


@dataclasses.dataclass
class ExampleRun:
    official: bool  # the documentation's CMakeLists.txt was used
    build: subprocess.CompletedProcess
    run: Optional[subprocess.CompletedProcess]

    def failure(self) -> Optional[str]:
        """None when the program built and exited 0; otherwise what went wrong, with its output."""
        if self.run is None:
            return f"build failed:\n{self.build.stdout}\n{self.build.stderr}"
        if self.run.returncode != 0:
            return f"example exited with {self.run.returncode}:\n{self.run.stdout}\n{self.run.stderr}"
        return None


def environment(prefix: Path) -> Dict[str, str]:
    """ASCEND_HOME_PATH and LD_LIBRARY_PATH as the prefix's set_env.sh sets them."""
    ld = [str(prefix / "lib64")]
    vendor_lib = prefix / "opp" / "vendors" / PROOF_VENDOR / "op_api" / "lib"
    if vendor_lib.is_dir():
        ld.append(str(vendor_lib))
    old = os.environ.get("LD_LIBRARY_PATH")
    return dict(os.environ, ASCEND_HOME_PATH=str(prefix), LD_LIBRARY_PATH=":".join(ld + ([old] if old else [])))


def build_and_run(
    source: Path, workdir: Path, kind: str = "builtin", sanitize: bool = False, args=(), timeout: float = 900
) -> ExampleRun:
    """Copies `source` into workdir under the page's file name, builds it with the page's
    commands (cmake ../ -DCMAKE_CXX_COMPILER=g++ -DCMAKE_SKIP_RPATH=TRUE; make) and runs it."""
    build.ensure_built("cpu", sanitize=sanitize)
    prefix = build.install_prefix(sanitize)
    _, source_name, exe_name = DOCS[kind]
    text = official_cmakelists(kind)
    official = text is not None
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "CMakeLists.txt").write_text(text if official else FALLBACK[kind])
    shutil.copy(source, workdir / source_name)
    bdir = workdir / "build"
    shutil.rmtree(bdir, ignore_errors=True)
    bdir.mkdir()
    env = environment(prefix)
    steps = [["cmake", "../", "-DCMAKE_CXX_COMPILER=g++", "-DCMAKE_SKIP_RPATH=TRUE"], ["make"]]
    log = []
    for cmd in steps:
        proc = subprocess.run(cmd, cwd=bdir, env=env, capture_output=True, text=True, timeout=timeout)
        log.append(proc)
        if proc.returncode != 0:
            return ExampleRun(official, proc, None)
    run = subprocess.run(
        [str(bdir / "bin" / exe_name), *args],
        cwd=bdir / "bin",
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return ExampleRun(official, log[-1], run)
