#!/usr/bin/env bash
# The CANN build of the operators: ./build.sh --target npu execs this script with its arguments.
#
#   cmake/npu_build.sh --soc ascend910b2 [--ops a,b] [--pkg] [--vendor NAME] [--build-dir DIR] [-j N]
#
# FA_NPU_SOURCE_ROOT=<tree> builds the operators of another tree (op_host/, op_kernel/, framework/).
# Needs a CANN toolkit: ASCEND_HOME_PATH (set by CANN's set_env.sh) or ASCEND_CANN_PACKAGE_PATH.
# Without one it stops before doing anything (exit 2) and says what to install.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SOC="ascend910b2"
OPS=""
PKG=0
VENDOR="fa"
BUILD_DIR="${ROOT}/build/npu"
JOBS="${FA_JOBS:-2}"

usage() {
    cat <<'EOF'
usage: ./build.sh --target npu [--soc ascend910b2] [--ops a,b] [--pkg] [--vendor NAME]
                  [--build-dir DIR] [-j N]
  --soc       SoC to build kernels for: ascend910b1..ascend910b4 (Atlas A2), ascend910_93 (A3)
  --ops       comma-separated operator directories or OpTypes (default: every operator)
  --pkg       also produce the custom-op package custom_opp_<os>_<arch>.run
  --vendor    vendor name of the package: installs to vendors/<NAME> (default: fa)
  --build-dir build tree (default: build/npu)
Needs a CANN toolkit: source <CANN>/set_env.sh (sets ASCEND_HOME_PATH) or set
ASCEND_CANN_PACKAGE_PATH=<CANN install dir>.
EOF
}

die() { echo "npu_build: $*" >&2; exit 2; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --target) shift 2 ;;                     # build.sh passes its own --target npu through
        --target=*) shift ;;
        --soc) SOC="${2:?--soc needs a value}"; shift 2 ;;
        --soc=*) SOC="${1#*=}"; shift ;;
        --ops) OPS="${2:?--ops needs a value}"; shift 2 ;;
        --ops=*) OPS="${1#*=}"; shift ;;
        --pkg) PKG=1; shift ;;
        --vendor|--vendor_name) VENDOR="${2:?--vendor needs a value}"; shift 2 ;;
        --vendor=*|--vendor_name=*) VENDOR="${1#*=}"; shift ;;
        --build-dir) BUILD_DIR="${2:?--build-dir needs a value}"; shift 2 ;;
        --build-dir=*) BUILD_DIR="${1#*=}"; shift ;;
        -j) JOBS="${2:?-j needs a value}"; shift 2 ;;
        -j*) JOBS="${1#-j}"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument '$1'" ;;
    esac
done

# SoC name -> (compute unit used by OpDef AddConfig / ASCEND_COMPUTE_UNIT, SoC version used by
# the simulator directory tools/simulator/<SocVersion>). Atlas A2 = ascend910b family.
soc_lower="$(echo "${SOC}" | tr '[:upper:]' '[:lower:]')"
case "${soc_lower}" in
    ascend910b|ascend910b1|ascend910b2|ascend910b2c|ascend910b3|ascend910b4)
        COMPUTE_UNIT="ascend910b"
        [[ "${soc_lower}" == "ascend910b" ]] && soc_lower="ascend910b2"
        SOC_VERSION="Ascend910B${soc_lower#ascend910b}" ;;
    ascend910_93|ascend910_9391|ascend910_9392|ascend910_9381|ascend910_9382)
        COMPUTE_UNIT="ascend910_93"; SOC_VERSION="Ascend910_93${soc_lower#ascend910_93}" ;;
    *) die "unsupported --soc '${SOC}': these operators target Atlas A2/A3 (ascend910b1..ascend910b4, ascend910_93)" ;;
esac
[[ "${VENDOR}" =~ ^[A-Za-z0-9_]+$ ]] || die "invalid --vendor '${VENDOR}': use letters, digits and '_'"
[[ -z "${OPS}" || "${OPS}" =~ ^[A-Za-z0-9_,]+$ ]] || die "invalid --ops '${OPS}': a comma-separated list of operator names"

CANN="${ASCEND_HOME_PATH:-${ASCEND_CANN_PACKAGE_PATH:-}}"
if [[ -z "${CANN}" ]]; then
    die "no CANN toolkit found: neither ASCEND_HOME_PATH nor ASCEND_CANN_PACKAGE_PATH is set.
Install the CANN toolkit (Ascend-cann-toolkit, 8.5 or newer) and then either
  source /usr/local/Ascend/cann/set_env.sh        (CANN 9; 8.x: /usr/local/Ascend/ascend-toolkit/set_env.sh)
or
  export ASCEND_CANN_PACKAGE_PATH=/usr/local/Ascend/cann
See docs/npu.md. The cpu target needs no CANN: ./build.sh --target cpu"
fi
[[ -d "${CANN}" ]] || die "CANN directory '${CANN}' (from ASCEND_HOME_PATH / ASCEND_CANN_PACKAGE_PATH) does not exist"
if [[ -f "${CANN}/fa_emulator_prefix.txt" ]]; then
    die "ASCEND_HOME_PATH points at this project's CPU prefix (${CANN}), set by its set_env.sh: that
prefix emulates CANN for CPU builds; it cannot build the NPU target. Open a new shell (or unset
ASCEND_HOME_PATH) and source the CANN toolkit's set_env.sh instead (docs/npu.md)."
fi

# A package path set by hand has not been through set_env.sh yet: source it for the tools' PATH.
if [[ -z "${ASCEND_HOME_PATH:-}" ]]; then
    for env_script in "${CANN}/set_env.sh" "${CANN}/bin/setenv.bash" "${CANN}/../set_env.sh"; do
        if [[ -f "${env_script}" ]]; then
            set +u; source "${env_script}"; set -u
            break
        fi
    done
fi

ASC_DIR="${CANN}/compiler/tikcpp/ascendc_kernel_cmake"
if [[ ! -f "${ASC_DIR}/ASCConfig.cmake" && ! -f "${ASC_DIR}/asc-config.cmake" ]]; then
    die "the CANN toolkit at '${CANN}' has no ASC CMake modules (${ASC_DIR}/ASCConfig.cmake).
They ship with CANN 8.5 and newer; update the toolkit, or generate a msopgen project instead:
  fakit package --msopgen-json build/msopgen && msopgen gen -i build/msopgen/<op>.json ... (docs/npu.md)"
fi
command -v cmake >/dev/null || die "cmake (3.19 or newer) is not on PATH"
# opbuild names the OpTypes' generated launchers after OPS_PROJECT_NAME: aclnnInner<OpType>, the
# launch seam of the project's public APIs (cmake/npu.cmake sets it too; docs/npu.md).
export OPS_PROJECT_NAME=aclnnInner

OPS_LIST="${OPS//,/;}"
echo "npu_build: CANN=${CANN} soc=${SOC_VERSION} (compute unit ${COMPUTE_UNIT}) vendor=${VENDOR} ops=${OPS:-all} pkg=${PKG}"
cmake -S "${ROOT}" -B "${BUILD_DIR}" \
    -DFA_TARGET=npu \
    -DCMAKE_BUILD_TYPE="${FA_BUILD_TYPE:-Release}" \
    -DASCEND_CANN_PACKAGE_PATH="${CANN}" \
    -DASCEND_COMPUTE_UNIT="${COMPUTE_UNIT}" \
    -DFA_SOC_VERSION="${SOC_VERSION}" \
    -DFA_NPU_OPS="${OPS_LIST}" \
    -Dvendor_name="${VENDOR}" \
    -DFA_NPU_PACKAGE="$([[ ${PKG} == 1 ]] && echo ON || echo OFF)" \
    ${FA_NPU_SOURCE_ROOT:+-DFA_NPU_SOURCE_ROOT="${FA_NPU_SOURCE_ROOT}"}

if [[ ${PKG} == 1 ]]; then
    cmake --build "${BUILD_DIR}" --target binary package -j "${JOBS}"
    shopt -s nullglob
    runs=("${BUILD_DIR}"/custom_opp_*.run)
    [[ ${#runs[@]} -gt 0 ]] || die "the build finished but produced no custom_opp_*.run in ${BUILD_DIR}"
    echo "npu_build: package ${runs[0]}"
    echo "npu_build: install with: ${runs[0]} --install-path=<DIR>; then source <DIR>/vendors/${VENDOR}/bin/set_env.bash"
else
    cmake --build "${BUILD_DIR}" --target all binary -j "${JOBS}"
fi
