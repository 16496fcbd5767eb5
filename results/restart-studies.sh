#!/bin/bash
# Restart the two open studies (study-magnitude's chain.sh: the dose sweep, then the main sweep; study-manipulation's
# sweep) in the background, on this machine or a fresh one. Idempotent: what exists is kept, what runs is left
# running. Run from anywhere, as root:
#   results/restart-studies.sh [--dry-run]
# What it does, each step only where needed:
#   1. builds the study binaries from clean clones of this repository (each `make build` installs missing Debian packages):
#      f4a5d7c (magnitude), 71107bf (manipulation), 7a18de5 (collects hopper-medium's original bytes) into $STUDY_BIN;
#   2. makes the data roots: copies the committed Koopman models in; collects hopper-medium-v2 with 7a18de5 and
#      checks its sha256 against the runs' records (the dose sweep's prep.sh makes the rest; the manipulation sweep
#      collects its datasets itself and checks them against its runs' records);
#   3. moves aside (to $STUDY_WORK/lost-runs/) every untracked run directory that has neither results.json nor a
#      checkpoint: a run unfinished on another machine, whose resume by the study binaries (older than db415f4) would
#      fail at the first checkpoint;
#   4. starts chain.sh and the manipulation sweep with setsid, unless they are running; once the manipulation sweep is
#      complete, chain.sh gets both cores: two magnitude runs at once (--jobs 2 --threads 1) on a CPU with AVX-512
#      (oneDNN), one run of two threads (--jobs 1 --threads 2) on one without (OpenBLAS), where the two go equally fast
#      in all and the second lets a run finish within a working session (magnitude LOG, 2026-12-06).
# Every restart and every moved directory still gets its line in the study's LOG.md, by hand.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
W=${STUDY_WORK:-/work}
BIN=${STUDY_BIN:-$W/study-bin}
MAG=$W/study-magnitude MAN=$W/study-manipulation
# How to ask whether a process runs (pgrep -f PATTERN), and where the CPU's flags are: stand-ins here let
# results/scripts_test.go try each case.
PGREP=${STUDY_PGREP:-pgrep}
CPUINFO=${STUDY_CPUINFO:-/proc/cpuinfo}
hopper_sha=622aeb829a0ebaea3511d85b1f0b236d2b3082144c1e279164fa33f014b8aea5
dry=false
case "${1:-}" in
  --dry-run) dry=true ;;
  "") ;;
  *) echo "usage: $0 [--dry-run]" >&2; exit 2 ;;
esac
do_() { echo "+ $*"; $dry || "$@"; }

# 1. Binaries.
for c in f4a5d7c 71107bf 7a18de5; do
  [ -x "$BIN/koopq-$c" ] && continue
  tmp=$(mktemp -d)
  do_ git clone -q "$repo" "$tmp/k"
  do_ git -C "$tmp/k" checkout -q "$c"
  do_ make -C "$tmp/k" build
  do_ mkdir -p "$BIN"
  do_ cp "$tmp/k/bin/koopq" "$BIN/koopq-$c"
  rm -rf "$tmp"
done

# 2. Data roots.
for pair in "$MAG:$repo/results/study-magnitude/models" "$MAN:$repo/results/study-manipulation/models"; do
  root=${pair%%:*} models=${pair#*:}
  for f in "$models"/*.safetensors "$models"/*.safetensors.json; do
    [ -f "$root/models/$(basename "$f")" ] && continue
    do_ mkdir -p "$root/models" && do_ cp "$f" "$root/models/"
  done
done
h=$MAG/data/hopper-medium-v2.hdf5
if [ ! -f "$h" ]; then
  do_ mkdir -p "$MAG/data"
  do_ "$BIN/koopq-7a18de5" collect hopper-medium-v2 --seed 0 --out "$MAG/data"
fi
if ! $dry && [ "$(sha256sum "$h" | cut -d' ' -f1)" != "$hopper_sha" ]; then
  echo "error: $h is not the file the dose runs read (sha256 $hopper_sha); remove it and rerun" >&2
  exit 1
fi

# 3. Unfinished run directories without a checkpoint.
lost=$W/lost-runs/$(date +%Y%m%d-%H%M%S)
for slot in "$repo"/results/study-magnitude/*/runs/*/ "$repo"/results/study-manipulation/runs/*/; do
  [ -d "$slot" ] || continue
  compgen -G "$slot/run-*/results.json" >/dev/null && continue
  compgen -G "$slot/run-*/checkpoints/latest.safetensors" >/dev/null && continue
  compgen -G "$slot/run-*" >/dev/null || continue
  [ -n "$(git -C "$repo" ls-files -- "$slot")" ] && continue
  $PGREP -f "koopq-[0-9a-f]* .*$(basename "$slot")" >/dev/null && continue # a trainer before its first checkpoint
  do_ mkdir -p "$lost"
  do_ mv "$slot" "$lost/"
done

# 4. Start what is not running. Once all of the manipulation sweep's runs are done, its core goes to the magnitude
# study (the numbers do not depend on the threads: magnitude LOG, 2026-12-05 and 2026-12-06): two runs at once of one
# thread each where oneDNN runs on AVX-512, else one run of two threads (as fast in all, each run done sooner).
cd "$repo"
man_done=false mag_args=()
if [ -x "$BIN/koopq-71107bf" ] && "$BIN/koopq-71107bf" sweep status examples/study-manipulation.yaml \
  --out results/study-manipulation/runs 2>/dev/null | tail -n 1 | awk '{ exit !($1 > 0 && $1 == $3 && $2 == "runs:") }'; then
  man_done=true mag_args=(--jobs 1 --threads 2)
  grep -qw avx512f "$CPUINFO" 2>/dev/null && mag_args=(--jobs 2 --threads 1)
fi
if $PGREP -f "study-magnitude/chain.sh|koopq-f4a5d7c sweep run examples/study-magnitude-" >/dev/null; then
  echo "study-magnitude: running"
else
  echo "+ chain.sh${mag_args[*]:+ ${mag_args[*]}} (log $MAG/chain.out)"
  # The & must end a simple command: "$dry || cmd &" would background a subshell that keeps this script's
  # stdout open for as long as the study runs, so a caller reading that output never sees it end.
  if ! $dry; then
    KOOPQ_BIN=$BIN/koopq-f4a5d7c STUDY_DATA=$MAG setsid nohup results/study-magnitude/chain.sh "${mag_args[@]}" \
      >> "$MAG/chain.out" 2>&1 < /dev/null &
  fi
fi
if $man_done; then
  echo "study-manipulation: all runs done"
elif $PGREP -f "koopq-71107bf sweep run examples/study-manipulation.yaml" >/dev/null; then
  echo "study-manipulation: running"
else
  echo "+ manipulation sweep (log $MAN/sweep.out)"
  if ! $dry; then
    setsid nohup "$BIN/koopq-71107bf" sweep run examples/study-manipulation.yaml --out results/study-manipulation/runs \
      --data-root "$MAN" --order seeds >> "$MAN/sweep.out" 2>&1 < /dev/null &
  fi
fi
