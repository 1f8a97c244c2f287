#!/usr/bin/env bash
# Build the operators.
#   ./build.sh [--target cpu|npu] [--soc ascend910b2] [--ops a,b] [--pkg] [--vendor NAME]
#              [--sanitize] [--test] [-j N]
# --ops takes any operator name fakit takes (directory, OpType, aclnn API, alias such as pfa).
# cpu (default): the emulator build into build/cpu (build/cpu-asan with --sanitize): the shared
#   library libfa_ops_cpu.so, the proof-operator library and the CANN-shaped prefix
#   build/cpu/install. --soc sets the emulated SoC (env ASCEND_EMU_SOC) for --test and in the
#   prefix's set_env.sh; without it the emulator's default (Ascend910B2) applies.
# npu: handed over to cmake/npu_build.sh with the same arguments.
set -euo pipefail
cd "$(dirname "$0")"

# Operator names: any spelling -> the source directory names (one resolver: scripts/fakit/opnames.py).
resolve_ops() {
    local python=python3
    [[ -x .venv/bin/python ]] && python=.venv/bin/python
    "$python" scripts/fakit/opnames.py --dirs "$1" || exit 2
}

target=cpu
args=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --target) target="${2:-}"; args+=("$1" "${2:-}"); shift 2 || shift ;;
        --target=*) target="${1#--target=}"; args+=("$1"); shift ;;
        --ops) args+=(--ops "$(resolve_ops "${2:-}")"); shift 2 || shift ;;
        --ops=*) args+=(--ops "$(resolve_ops "${1#--ops=}")"); shift ;;
        *) args+=("$1"); shift ;;
    esac
done
set -- "${args[@]+"${args[@]}"}"
case "$target" in
    npu) exec bash cmake/npu_build.sh "$@" ;;
    cpu) ;;
    *) echo "build.sh: unknown target '$target' (cpu or npu)" >&2; exit 2 ;;
esac

soc="" ops="" sanitize=0 run_tests=0 jobs=2
while [[ $# -gt 0 ]]; do
    case "$1" in
        --target) shift 2 ;;
        --target=*) shift ;;
        --soc) soc="$2"; shift 2 ;;
        --soc=*) soc="${1#--soc=}"; shift ;;
        --ops) ops="$2"; shift 2 ;;
        --ops=*) ops="${1#--ops=}"; shift ;;
        --sanitize) sanitize=1; shift ;;
        --test) run_tests=1; shift ;;
        -j) jobs="$2"; shift 2 ;;
        -j*) jobs="${1#-j}"; shift ;;
        --pkg|--vendor|--vendor=*)
            echo "build.sh: $1 packages for the NPU; use --target npu" >&2; exit 2 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "build.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done

build_dir=build/cpu
[[ $sanitize == 1 ]] && build_dir=build/cpu-asan
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [[ -f "$build_dir/CMakeCache.txt" ]] && ! grep -q "CMAKE_GENERATOR:INTERNAL=${generator[1]:-Unix Makefiles}" "$build_dir/CMakeCache.txt"; then
    generator=()  # keep the generator the directory was configured with
fi

sanitize_flag=OFF
[[ $sanitize == 1 ]] && sanitize_flag=ON
cmake -S . -B "$build_dir" "${generator[@]}" -DFA_TARGET=cpu -DFA_SANITIZE="$sanitize_flag" -DFA_OPS="$ops" \
    -DFA_SOC="$soc"
cmake --build "$build_dir" -j "$jobs"
echo "build.sh: built $build_dir/libfa_ops_cpu.so and the CANN-shaped prefix $build_dir/install"

if [[ $run_tests == 1 ]]; then
    [[ -n "$soc" ]] && export ASCEND_EMU_SOC="$soc"
    python=.venv/bin/python
    [[ -x $python ]] || python=python3
    "$python" -m pytest tests
fi
