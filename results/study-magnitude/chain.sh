#!/bin/bash
# The study's background chain, resumable (rerun after any kill): prep.sh
# (datasets and the shared Koopman models, each model resuming from its
# .ckpt), then step 2's dose sweep (resumes too). Set KOOPQ_BIN to the study
# binary (LOG.md: f4a5d7c) and STUDY_DATA to the data root; run from the
# repository root:
#   KOOPQ_BIN=... STUDY_DATA=... setsid nohup results/study-magnitude/chain.sh >> chain.out 2>&1 &
# Extra arguments go to 'sweep run', e.g. --time-limit 2h40m in a working
# session that ends: runs that could not finish in it are not started.
set -u
: "${KOOPQ_BIN:?set KOOPQ_BIN}" "${STUDY_DATA:?set STUDY_DATA}"
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/results/study-magnitude/prep.sh" || exit 1
cd "$root" && "$KOOPQ_BIN" sweep run examples/study-magnitude-dose.yaml --out results/study-magnitude/dose/runs \
  --data-root "$STUDY_DATA" --order seeds "$@"
