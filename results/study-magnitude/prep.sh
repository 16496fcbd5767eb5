#!/bin/bash
# Study-magnitude data prep: collect the three datasets, train the shared
# Koopman models (400-epoch cap). Resumable: rerun; a model's .ckpt resumes.
set -u
B=${KOOPQ_BIN:?set KOOPQ_BIN to a koopq built with make build at a clean commit}
cd "${STUDY_DATA:?set STUDY_DATA to the data root (data/, models/)}"
for ds in hopper walker2d halfcheetah; do
  [ -f data/$ds-medium-v2.hdf5 ] || $B collect $ds-medium-v2 --seed 0 --out data || exit 1
  m=models/$ds-medium-koopman-400.safetensors
  [ -f $m ] && continue
  r=""; [ -f $m.ckpt ] && r=--resume
  $B koopman train --data data/$ds-medium-v2.hdf5 --env $ds --seed 0 --max-epochs 400 --out $m $r >> models/$ds.log 2>&1 || exit 1
done
