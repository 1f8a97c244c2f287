#!/usr/bin/env bash
# Runs the development environment's real-header kernel check (../shared/tools/realheaders) on
# this repository with four more bisheng builtins in its stub list: load_cbuf_to_ca_transpose
# and load_cbuf_to_cb_transpose, which asc-devkit's LoadDataWithTranspose (the FLOAT32 cube
# path, op_kernel/attention_core/cube_tiles.h) calls inside <asc-devkit>/impl, and vbitsort and
# vmrgsort4, which its Sort (Sort32 + MrgSort; the sparse grad's selection sort,
# op_kernel/attention_core/sparse_backward_vector.h) calls there. The check's own list lacks
# them, so without this the FA-score, FAG and SFAG kernels fail on "undeclared identifier"
# errors located in asc-devkit, not in project code (see the check's README: new intrinsic
# names go into stubs/bisheng_intrinsics.inc).
#   usage: scripts/tools/realheaders_check.sh [path/to/shared/tools/realheaders]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
src="${1:-$repo/../shared/tools/realheaders}"
[ -f "$src/check.sh" ] || { echo "realheaders_check: no check.sh under $src" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp -r "$src" "$tmp/realheaders"
inc="$tmp/realheaders/stubs/bisheng_intrinsics.inc"
for name in load_cbuf_to_ca_transpose load_cbuf_to_cb_transpose vbitsort vmrgsort4; do
    grep -q "REALHEADERS_VOID($name)" "$inc" || echo "REALHEADERS_VOID($name)" >> "$inc"
done
bash "$tmp/realheaders/check.sh" "$repo"
