#!/usr/bin/env bash
# Install the CUDA compilers gpucast-bench `inspect` needs (NVRTC + ptxas, and a
# SASS disassembler when one can be had) from NVIDIA's Python wheels into a local
# virtual environment. No GPU, no driver and no system CUDA are needed.
#
#   bash benchmarks_cuda/scripts/install-cuda-tools.sh [VENV_DIR]
#
# VENV_DIR defaults to <repo>/.venv-cuda. Afterwards `gpucast-bench inspect` finds
# the tools there by default (or pass --cuda-tools VENV_DIR / GPUCAST_CUDA_TOOLS).
#
# CUDA 12.x is pinned on purpose: CUDA 13 dropped sm_50..sm_72 (Maxwell, Pascal,
# Volta), which the reference GPUs use. NVIDIA publishes nvdisasm only as CUDA 13
# wheels; nvdisasm is used for SASS opcode counts only and is optional (inspect
# reports registers/smem/spills without it).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${1:-$repo/.venv-cuda}"
py="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" "nvidia-cuda-nvrtc-cu12>=12.8,<13" "nvidia-cuda-nvcc-cu12>=12.8,<13"
# Optional disassembler (SASS instruction mix); failure is not fatal.
"${pip[@]}" "nvidia-cuda-nvdisasm>=13,<14" \
  || echo "install-cuda-tools: nvdisasm wheel not installed (SASS instruction mix will be skipped)" >&2

site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
nvrtc="$(find "$site/nvidia" -name 'libnvrtc.so.12*' -print -quit 2>/dev/null || true)"
ptxas="$(find "$site/nvidia" -path '*bin/ptxas' -print -quit 2>/dev/null || true)"
nvdisasm="$(find "$site/nvidia" -path '*bin/nvdisasm' -print -quit 2>/dev/null || true)"
for f in "$ptxas" "$nvdisasm"; do [ -n "$f" ] && chmod +x "$f" || true; done
echo "venv:     $venv"
echo "nvrtc:    ${nvrtc:-MISSING}"
echo "ptxas:    ${ptxas:-MISSING}"
echo "nvdisasm: ${nvdisasm:-not installed (optional)}"
[ -n "$nvrtc" ] && [ -n "$ptxas" ] || { echo "install-cuda-tools: NVRTC or ptxas missing after install" >&2; exit 1; }
