#!/usr/bin/env bash
# Run every command of the ```sh blocks in README.md and docs/*.md, as written, from
# the root of a fresh copy of this checkout (tracked files, uncommitted edits included),
# and stop at the first that fails. `gpucast` is $GPUCAST, else target/release/gpucast,
# else the one on PATH. Skipped, and listed: cargo (builds: CI builds and tests), GPU
# commands (gpucast-bench, ncu), and unless CHECK_DOCS_ALL=1 the slow ones (bench, the
# second reproduce). CHECK_DOCS_SKIP='regex' skips more. Outputs stay in the copy or /tmp.
# Usage: scripts/check-docs.sh            (about 2-4 minutes on 2 cores)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${GPUCAST:-$root/target/release/gpucast}
[ -x "$bin" ] || bin=$(command -v gpucast) || { echo "no gpucast binary: build it or set GPUCAST" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# A fresh tree: the working tree's tracked files as they are now (a stash commit when
# there are uncommitted edits), nothing built, nothing ignored.
rev=$(cd "$root" && git stash create); rev=${rev:-HEAD}
(cd "$root" && git archive "$rev") | tar -x -C "$work"
gpucast() { "$bin" "$@"; }
skip_reason() {
  case "$1" in
    cargo\ *) echo "cargo: a build (CI builds and tests)" ;;
    gpucast-bench\ *|ncu\ *) echo "needs a GPU" ;;
    *) if [ "${CHECK_DOCS_ALL:-0}" != 1 ]; then case "$1" in
         "gpucast bench"*) echo "slow (timings only; CHECK_DOCS_ALL=1 runs it)" ;;
         *"reproduce --accuracy-page"*) echo "a second whole reproduce (CHECK_DOCS_ALL=1 runs it)" ;;
       esac; fi
       if [ -n "${CHECK_DOCS_SKIP:-}" ] && [[ $1 =~ $CHECK_DOCS_SKIP ]]; then echo "CHECK_DOCS_SKIP"; fi ;;
  esac
}
# One command a line: ```sh blocks only, `\` continuations joined, comments dropped.
extract() {
  awk '/^```/ { inblk = ($0 ~ /^```(sh|bash|console)[[:space:]]*$/); next }
       inblk { line = $0; sub(/^[[:space:]]+/, "", line)
               if (line ~ /^#/ || line == "") next
               sub(/[[:space:]]+#.*$/, "", line)
               if (line ~ /\\$/) { sub(/\\$/, "", line); cont = cont line; next }
               print FILENAME ": " cont line; cont = "" }' "$@"
}
ran=0; skipped=()
cd "$work"
while IFS= read -r entry; do
  cmd=${entry#*: }
  why=$(skip_reason "$cmd")
  if [ -n "$why" ]; then skipped+=("$entry  [$why]"); continue; fi
  echo "+ $cmd  (${entry%%: *})"
  start=$SECONDS
  if ! eval "$cmd" > "$work/.out" 2>&1 < /dev/null; then
    tail -20 "$work/.out"; echo "FAILED: $entry" >&2; exit 1
  fi
  echo "  ok, $((SECONDS - start)) s"; ran=$((ran + 1))
done < <(extract README.md docs/*.md)
echo "$ran commands ran; ${#skipped[@]} skipped:"
printf '  %s\n' "${skipped[@]}"
