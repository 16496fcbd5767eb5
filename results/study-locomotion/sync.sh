#!/bin/sh
# Copy the small files of a study sweep directory into this results
# directory (run from anywhere):
#   results/study-locomotion/sync.sh SWEEP_DIR [DEST]
# Finished runs (results.json present) go to DEST/runs/<slot>/ with
# sweep-run.json, config.json, results.json, history.json, metrics.csv and
# the final policy.safetensors (282 KB; `koopq eval` replays it),
# so DEST/runs is itself a sweep directory whose finished runs
# `koopq sweep run --out DEST/runs` skips. Unfinished runs' config.json,
# history.json and metrics.csv go to DEST/in-progress/<slot>/ (for
# `koopq report --in-progress` curves only; a sweep never resumes them).
# Checkpoints, models, datasets and logs are never copied.
set -eu
src=${1:?usage: sync.sh SWEEP_DIR [DEST]}
dest=${2:-$(dirname "$0")}
for slot in "$src"/*/; do
	slot=${slot%/}
	name=$(basename "$slot")
	[ -f "$slot/sweep-run.json" ] || continue
	for cfg in "$slot"/*/config.json; do
		[ -f "$cfg" ] || continue
		run=$(dirname "$cfg")
		if [ -f "$run/results.json" ]; then
			to="$dest/runs/$name"
			files="config.json results.json history.json metrics.csv policy.safetensors"
			rm -rf "$dest/in-progress/$name"
		else
			[ -f "$run/history.json" ] || continue
			to="$dest/in-progress/$name"
			files="config.json history.json metrics.csv"
		fi
		mkdir -p "$to/$(basename "$run")"
		cp "$slot/sweep-run.json" "$to/"
		for f in $files; do
			[ -f "$run/$f" ] && cp "$run/$f" "$to/$(basename "$run")/"
		done
		echo "$to/$(basename "$run")"
	done
done
