#!/usr/bin/env bash
# Kernel Tuner (PyPI, in the git-ignored venv .venv-kt) replays a cache written by
# `gpucast tune --write-cache` in simulation mode, with no GPU, and the check passes
# when the best configuration it finds is the one `gpucast tune` ranks first.
# Usage: scripts/kt-simulate.sh [CACHE [TARGET]]   (default: the shipped xgemm fixture
# of an RTX 3090, predicted for an RTX A4000). GPUCAST names the binary to use.
set -euo pipefail
cd "$(dirname "$0")/.."
GPUCAST=${GPUCAST:-${CARGO_TARGET_DIR:-$PWD/target}/release/gpucast}
CACHE=${1:-tests/fixtures/kernel_tuner/xgemm_RTX_3090_subset.json.gz}
TARGET=${2:-RTX A4000}
VENV=.venv-kt
if ! "$VENV/bin/python" -c "import kernel_tuner" 2> /dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "kernel_tuner==1.5.0"
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$GPUCAST" tune --runs "$CACHE" --target "$TARGET" --top 1 --no-check --format json \
  --write-cache "$WORK/predicted.json" > "$WORK/first.json"
"$VENV/bin/python" scripts/kt_simulate.py "$WORK/predicted.json" "$WORK/first.json"
