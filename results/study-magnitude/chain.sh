#!/bin/bash
# The study's background chain, resumable (rerun after any kill): prep.sh
# (datasets and the shared Koopman models, each model resuming from its
# .ckpt), then step 2's dose sweep, then step 3's main sweep once every dose
# run is done (both resume too). Set KOOPQ_BIN to the study binary (LOG.md:
# f4a5d7c) and STUDY_DATA to the data root; run from the repository root:
#   KOOPQ_BIN=... STUDY_DATA=... setsid nohup results/study-magnitude/chain.sh >> chain.out 2>&1 &
# Extra arguments go to both sweeps' 'sweep run', e.g. --jobs 2 --threads 1
# for two runs at once on two free cores (the numbers do not depend on the
# threads: LOG.md, 2026-12-05), or --time-limit 2h40m in a working session
# that ends: runs that could not finish in it are not started. With a
# --time-limit the chain stops after step 2, since the main sweep would
# start its clock afresh.
set -u
: "${KOOPQ_BIN:?set KOOPQ_BIN}" "${STUDY_DATA:?set STUDY_DATA}"
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/results/study-magnitude/prep.sh" || exit 1
cd "$root" || exit 1
"$KOOPQ_BIN" sweep run examples/study-magnitude-dose.yaml --out results/study-magnitude/dose/runs \
  --data-root "$STUDY_DATA" --order seeds "$@" || exit 1
for a in "$@"; do
  case "$a" in --time-limit | --time-limit=*) exit 0 ;; esac
done
# "21 runs: 21 done, 0 running, 0 failed, 0 pending": step 3 waits for all of step 2.
status=$("$KOOPQ_BIN" sweep status examples/study-magnitude-dose.yaml --out results/study-magnitude/dose/runs | tail -n 1)
if ! echo "$status" | awk '{ exit !($1 > 0 && $1 == $3 && $2 == "runs:") }'; then
  echo "chain: step 2 is not complete ($status); step 3 does not start"
  exit 1
fi
echo "chain: step 2 complete ($status); step 3 starts"
"$KOOPQ_BIN" sweep run examples/study-magnitude-main.yaml --out results/study-magnitude/main/runs \
  --data-root "$STUDY_DATA" --order seeds "$@"
