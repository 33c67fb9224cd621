#!/usr/bin/env bash
# The measurement campaign on one GPU, in steps that each fit one device call
# (<= 10 minutes) and resume where they stopped. Prepared without a GPU: every step
# only calls gpucast-bench, nvidia-smi and ncu; DRY_RUN=1 prints the commands instead.
#
#   campaign.sh STEP OUT [BENCH]
#
#   STEP   probe       provenance (nvidia-smi -q, driver, clocks, tools) + a smoke run
#                      (empty_kernel, stream_copy, fp32_fma_peak: the GPU path works)
#          calibrate   gpucast-bench calibrate -> calibration.toml
#          suite       the whole suite (reference-16 + extended), all sizes, 10 trials
#          repeat      the suite again into runs_repeat.csv (run-to-run variation)
#          partitions  the whole suite on SM partitions (green contexts): $SM_COUNTS
#          corun       $CORUN_SETS co-run sets of 2..6 kernels on disjoint partitions
#          ncu         Nsight Compute raw CSV per kernel (traffic, instructions, occupancy)
#          l2sweep     the L2-residency sweep (l2-sweep.toml) twice, and its Nsight Compute
#                      exports with the caches left warm
#          all         every step above, in that order
#   OUT    output root; files go to OUT/<gpu-slug>/ (the layout of datasets/measured/)
#   BENCH  the gpucast-bench binary (default: target/release/gpucast-bench)
#
# Never changes the card's settings: no clock locking (ncu runs with
# --clock-control none), no persistence or compute-mode changes, no resets.
set -euo pipefail

STEP=${1:?usage: campaign.sh STEP OUT [BENCH]  (STEP: probe|calibrate|suite|repeat|partitions|corun|ncu|l2sweep|all)}
OUT=${2:?usage: campaign.sh STEP OUT [BENCH]}
BENCH=${3:-target/release/gpucast-bench}
SM_COUNTS=${SM_COUNTS:-"16 32 64 96"}   # multiples of 8 (Hopper's granularity); with the whole GPU from the suite step: 5 counts
CORUN_SETS=${CORUN_SETS:-40}
TRIALS=${TRIALS:-10}
DRY_RUN=${DRY_RUN:-0}

# One command of the campaign. A failure (e.g. `run` exits 2 when some configurations
# wrote error rows) is reported and counted, and the campaign goes on; the script
# exits 1 at the end if any command failed.
FAILED=0
run() {
  if [ "$DRY_RUN" = 1 ]; then
    printf '%q ' "$@"
    echo
  else
    "$@" || { echo "campaign: exit $? from: $*" >&2; FAILED=$((FAILED + 1)); }
  fi
}

if [ "$DRY_RUN" = 1 ]; then
  GPU_NAME=${GPU_NAME:-"NVIDIA H100 80GB HBM3"}
  TOTAL_SMS=${TOTAL_SMS:-132}
else
  [ -x "$BENCH" ] || { echo "campaign: no gpucast-bench at $BENCH (build it: cargo build --release -p gpucast-bench)" >&2; exit 2; }
  command -v nvidia-smi > /dev/null || { echo "campaign: nvidia-smi not found: is there a GPU on this machine?" >&2; exit 2; }
  GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
fi
SLUG=$(echo "$GPU_NAME" | tr '[:upper:]' '[:lower:]' | sed -e 's/^nvidia //' -e 's/[^a-z0-9]\+/-/g' -e 's/-$//')
DIR="$OUT/$SLUG"
mkdir -p "$DIR/provenance" "$DIR/ncu"
export GPUCAST_COMMIT=${GPUCAST_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}

probe() {
  {
    echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "gpu: $GPU_NAME"
    echo "commit: $GPUCAST_COMMIT"
    echo "bench: $("$BENCH" --version 2>&1 || true)"
    echo "kernel: $(uname -r)"
    echo "ncu: $(command -v ncu || echo none) $(ncu --version 2>/dev/null | tail -1 || true)"
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,power.limit,persistence_mode,compute_mode --format=csv
  } > "$DIR/provenance/machine.txt" 2>&1 || true
  nvidia-smi -q > "$DIR/provenance/nvidia-smi-q.txt" 2>&1 || true
  run "$BENCH" run --kernels empty_kernel,stream_copy,fp32_fma_peak --trials "$TRIALS" \
    --out "$DIR/smoke.csv" --no-progress
}

calibrate() { run "$BENCH" calibrate --trials "$TRIALS" --out "$DIR/calibration.toml"; }

suite() { run "$BENCH" run --trials "$TRIALS" --out "$DIR/runs.csv" --resume --no-progress; }

# The suite once more, later, into its own file: run-to-run variation beside the
# within-run CV.
repeat() { run "$BENCH" run --trials "$TRIALS" --out "$DIR/runs_repeat.csv" --resume --no-progress; }

partitions() {
  for n in $SM_COUNTS; do
    run "$BENCH" run --trials "$TRIALS" --sm-count "$n" --out "$DIR/runs_partitions.csv" --resume --no-progress
  done
}

# The whole GPU's SM count, as `calibrate` recorded it (a line `sm_count = N`; the
# runs CSVs quote their config column, so a field split on commas cannot read them).
total_sms() {
  if [ -n "${TOTAL_SMS:-}" ]; then echo "$TOTAL_SMS"; return; fi
  local n
  n=$(sed -n 's/^sm_count = \([0-9][0-9]*\)$/\1/p' "$DIR/calibration.toml" 2> /dev/null | head -1)
  [ -n "$n" ] || { echo "campaign: run the calibrate step first (or set TOTAL_SMS)" >&2; exit 2; }
  echo "$n"
}

# Co-run sets: a fixed, seeded mix of memory-, compute-, cache- and atomic-bound
# kernels, 2..6 per set, each on its own partition of TOTAL_SMS / k SMs (rounded down
# to a multiple of 8, the partition granularity on Hopper).
corun() {
  local kernels=(stream_copy stream_read stream_write fp32_fma_peak fp64_fma_loop l2_stream
    l1_read smem_bandwidth atomic_distinct random_gather matmul_tiled conv2d_7x7
    tensor_gemm_f16 histogram stencil_5pt spmv_csr)
  local nk=${#kernels[@]} seed=12345 total seen="|"
  total=$(total_sms)
  for ((s = 0; s < CORUN_SETS; s++)); do
    local k=$((2 + s % 5)) set=() used="" key=""
    while [ ${#set[@]} -lt "$k" ]; do
      seed=$(((seed * 1103515245 + 12345) % 2147483648))
      local pick=${kernels[$(((seed >> 16) % nk))]}   # high bits: the low bits of a power-of-two LCG repeat every 16 draws
      case " $used " in *" $pick "*) continue ;; esac
      used="$used $pick"
      set+=("$pick")
      if [ ${#set[@]} = "$k" ]; then   # a set drawn before, in any order: draw another
        key=$(printf '%s\n' "${set[@]}" | sort | tr '\n' ' ')
        case "$seen" in *"|$key|"*) set=() used="" ;; esac
      fi
    done
    seen="$seen$key|"
    local sms=$(((total / k) / 8 * 8))
    [ "$sms" -ge 8 ] || sms=8
    run "$BENCH" corun --kernels "$(IFS=,; echo "${set[*]}")" --sm-count "$sms" --resume \
      --out "$DIR/corun.csv"
  done
}

# The kernel names of a manifest, in order (no binary needed).
manifest_kernels() {
  awk -F'"' '/^\[\[kernel\]\]/ { want = 1; next } want && /^name = / { print $2; want = 0 }' "$1"
}

# One Nsight Compute export of one kernel, every configuration, 1 trial of 1 launch
# (the counters do not need repeats), into OUTDIR/KERNEL.csv with its log beside it;
# skipped when that export is there (resume). METRICS and NCU_ARG... go to ncu,
# RUN_ARG... to `gpucast-bench run` (e.g. its manifest):
#   profile_kernel OUTDIR KERNEL METRICS NCU_ARG... -- RUN_ARG...
profile_kernel() {
  local out=$1 k=$2 metrics=$3 ncu_args=()
  shift 3
  while [ "$1" != -- ]; do ncu_args+=("$1"); shift; done
  shift
  [ -s "$out/$k.csv" ] && return 0
  local cmd=(ncu "${ncu_args[@]}" --csv --page raw --metrics "$metrics" "$BENCH" run "$@" --kernels "$k" --trials 1
    --warmup 0 --min-trial-ms 0.000001 --no-verify --no-progress --out "$out/$k.runs.csv")
  if [ "$DRY_RUN" = 1 ]; then
    run "${cmd[@]}"
    return 0
  fi
  "${cmd[@]}" > "$out/$k.csv.tmp" 2> "$out/$k.log" && mv "$out/$k.csv.tmp" "$out/$k.csv" \
    || { echo "campaign: ncu failed for $k (see $out/$k.log)" >&2; FAILED=$((FAILED + 1)); }
}

# Nsight Compute: one raw CSV per kernel of the suite (the timings come from the suite
# step).
NCU_METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,smsp__inst_executed_pipe_xu.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__registers_per_thread
ncu_step() {
  local names k
  if [ "$DRY_RUN" = 1 ]; then
    names=$(manifest_kernels "$(dirname "$0")/../suite.toml")
  else
    names=$("$BENCH" list | awk '{print $1}')
  fi
  for k in $names; do
    profile_kernel "$DIR/ncu" "$k" "$NCU_METRICS" --clock-control none --
  done
}

# The L2-residency sweep (l2-sweep.toml: five streaming kernels of the suite at 28
# working sets), twice (run-to-run), then one Nsight Compute export per kernel with the
# caches left as the previous launch left them (--cache-control none): where L2
# residency ends and what it buys. Files go to $DIR/l2-sweep/, the layout of
# datasets/own/*/l2-sweep/.
L2_SWEEP_MANIFEST="$(dirname "$0")/../l2-sweep.toml"
L2_SWEEP_METRICS=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum,gpu__time_duration.sum
l2sweep() {
  local out="$DIR/l2-sweep" k
  mkdir -p "$out/ncu"
  run "$BENCH" run --manifest "$L2_SWEEP_MANIFEST" --trials "$TRIALS" --out "$out/l2_sweep.csv" --resume --no-progress
  run "$BENCH" run --manifest "$L2_SWEEP_MANIFEST" --trials "$TRIALS" --out "$out/l2_sweep_repeat.csv" --resume --no-progress
  for k in $(manifest_kernels "$L2_SWEEP_MANIFEST"); do
    profile_kernel "$out/ncu" "$k" "$L2_SWEEP_METRICS" --clock-control none --cache-control none \
      -- --manifest "$L2_SWEEP_MANIFEST"
  done
}

case "$STEP" in
  probe) probe ;;
  calibrate) calibrate ;;
  suite) suite ;;
  repeat) repeat ;;
  partitions) partitions ;;
  corun) corun ;;
  ncu) ncu_step ;;
  l2sweep) l2sweep ;;
  all) probe; calibrate; suite; partitions; corun; ncu_step; repeat; l2sweep ;;
  *) echo "campaign: unknown step '$STEP' (probe|calibrate|suite|repeat|partitions|corun|ncu|l2sweep|all)" >&2; exit 2 ;;
esac
echo "campaign: $STEP done -> $DIR ($FAILED failed commands)"
[ "$FAILED" = 0 ]
