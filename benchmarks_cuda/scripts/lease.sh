#!/usr/bin/env bash
# One call of a lent GPU machine: campaign steps under one deadline, the results packed
# into a single archive after every step (a lent machine returns only a few files, and
# what a killed command left behind still comes back).
#
#   lease.sh DEADLINE_S STEP [STEP ...]
#
#   DEADLINE_S  wall-clock seconds for all steps together; each step gets what is left
#               (a step cut off by the deadline resumes on the next call: `run --resume`,
#               ncu per kernel)
#   STEP        campaign.sh steps: probe calibrate suite partitions corun ncu
#
# Environment: CAMPAIGN_DIR (default ./campaign: carry it to resume on a fresh machine),
# ARCHIVE (default $OUT/campaign.tar.gz), BENCH (default target/release/gpucast-bench),
# plus campaign.sh's own (SM_COUNTS, CORUN_SETS, TRIALS, GPUCAST_COMMIT).
#
# When the probe's smoke run measured nothing, the later steps are skipped: on a real
# GPU they would fail the same way, and device time is scarce.
set -uo pipefail

DEADLINE_S=${1:?usage: lease.sh DEADLINE_S STEP [STEP ...]}
shift
[ $# -gt 0 ] || { echo "lease: no steps given" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
CAMPAIGN_DIR=${CAMPAIGN_DIR:-campaign}
ARCHIVE=${ARCHIVE:-${OUT:?set OUT or ARCHIVE}/campaign.tar.gz}
BENCH=${BENCH:-target/release/gpucast-bench}
END=$(($(date +%s) + DEADLINE_S))
mkdir -p "$CAMPAIGN_DIR"
LOG="$CAMPAIGN_DIR/lease.log"

pack() {
  tar czf "$ARCHIVE.tmp" "$CAMPAIGN_DIR" && mv "$ARCHIVE.tmp" "$ARCHIVE"
}

# NVRTC: the runner searches the usual places; name the library when it is elsewhere.
if [ -z "${GPUCAST_CUDA_TOOLS:-}" ] && ! ls /usr/local/cuda/lib64/libnvrtc.so* > /dev/null 2>&1; then
  lib=$(find / -xdev -name 'libnvrtc.so.1[23]' 2> /dev/null | head -1)
  [ -n "$lib" ] && export GPUCAST_CUDA_TOOLS=$lib
fi
# Nsight Compute: often installed off the PATH.
if ! command -v ncu > /dev/null; then
  n=$(ls -d /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | tail -1)
  [ -n "$n" ] && export PATH="$(dirname "$n"):$PATH"
fi
{
  echo "lease: $(date -u +%Y-%m-%dT%H:%M:%SZ) steps: $* deadline ${DEADLINE_S}s"
  echo "lease: ncu: $(command -v ncu || echo none)"
  echo "lease: nvrtc: ${GPUCAST_CUDA_TOOLS:-$(ls /usr/local/cuda/lib64/libnvrtc.so* 2> /dev/null | tr '\n' ' ')}"
} | tee -a "$LOG"

status=0
for step in "$@"; do
  left=$((END - $(date +%s)))
  if [ "$left" -lt 15 ]; then
    echo "lease: no time left for $step" | tee -a "$LOG"
    status=1
    break
  fi
  echo "lease: $step (${left}s left)" | tee -a "$LOG"
  t0=$(date +%s)
  timeout --signal=TERM --kill-after=10 "$left" \
    bash "$HERE/campaign.sh" "$step" "$CAMPAIGN_DIR" "$BENCH" 2>&1 | tee -a "$LOG"
  rc=${PIPESTATUS[0]}
  echo "lease: $step exit $rc after $(($(date +%s) - t0))s" | tee -a "$LOG"
  [ "$rc" = 0 ] || status=1
  pack
  if [ "$step" = probe ] && ! grep -q ',ok,' "$CAMPAIGN_DIR"/*/smoke.csv 2> /dev/null; then
    echo "lease: the smoke run measured nothing; later steps skipped" | tee -a "$LOG"
    exit 1
  fi
done
pack
exit $status
