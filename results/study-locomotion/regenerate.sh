#!/bin/sh
# Regenerate every committed report of the study from the committed runs:
#   results/study-locomotion/regenerate.sh           # rewrite them in place
#   results/study-locomotion/regenerate.sh --check   # write to a temporary
#                                                    # directory and compare
# Run from anywhere; koopq is $KOOPQ, else `koopq` on PATH, else built from
# this checkout. The eval100 table needs Debian's python3-scipy under
# /usr/bin/python3 (`make deps`). --check exits 1 when any file differs from
# its committed copy, byte for byte, and names it.
#
# Each line below is the exact command of one committed report directory
# (the settings its report.json records: inputs, --last, --compare,
# --reference, --in-progress). The 100-episode re-evaluations themselves
# (eval100/<slot>.json) are remade by `koopq eval --run <dir> --episodes 100
# --seed 7000`, which trains nothing but takes about 7 s a policy; see
# README.md "Reproduce".
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
study=results/study-locomotion

check=
case "${1:-}" in
--check) check=1 ;;
"") ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

koopq=${KOOPQ:-}
if [ -z "$koopq" ]; then
	if command -v koopq >/dev/null 2>&1; then
		koopq=koopq
	else
		koopq=$(mktemp -d)/koopq
		go build -o "$koopq" ./cmd/koopq
	fi
fi

if [ -n "$check" ]; then
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
else
	out=$study
fi

main_pairs="--compare KFC++:CQL --compare KFC++:S4RL-N --compare KFC++:S4RL-Adv
  --compare KFC++-residual:KFC++ --compare KFC++-residual:CQL
  --compare KFC++-contact:KFC++ --compare KFC++-contact:CQL
  --compare VAE-noise:KFC++ --compare VAE-noise:CQL
  --compare KFC++-prediction:KFC++ --compare KFC++-prediction:CQL
  --compare Fwd-prediction:KFC++ --compare Fwd-prediction:CQL --compare Fwd-prediction:KFC++-prediction"
w10_pairs="--compare KFC++:CQL --compare KFC++:S4RL-N --compare KFC++:S4RL-Adv"
clean_pairs="--compare KFC++-clean:KFC++ --compare KFC++-clean:CQL"
alpha_pairs="--compare KFC++-clean:KFC++ --compare KFC++:CQL --compare KFC++-w7.4:CQL-w7.4 --compare KFC++-w7.4:KFC++"
ref="--reference examples/kfc-paper-table1.yaml"

report() { # report OUT_SUBDIR ARGS...
	dir=$1
	shift
	echo "koopq report $* --out $study/$dir" >&2
	# shellcheck disable=SC2068
	"$koopq" report "$@" --out "$out/$dir" >/dev/null
}

# hopper-medium: the main grid and the ablations (Lagrange α′)
report report $study/runs $main_pairs $ref
report report-last5 $study/runs --last 5 $main_pairs $ref
# walker2d- and halfcheetah-medium under the fixed weight 10
report w10/report $study/w10/runs $w10_pairs $ref
report w10/report-last5 $study/w10/runs --last 5 $w10_pairs $ref
# KFC++-clean under the fixed weight 10, beside w10's runs
report w10-clean/report $study/w10/runs $study/w10-clean/runs $clean_pairs
report w10-clean/report-last5 $study/w10/runs $study/w10-clean/runs --last 5 $clean_pairs
# the α′ follow-up on hopper-medium, beside the main grid's runs
report alpha/report $study/runs $study/alpha/runs $alpha_pairs
report alpha/report-last5 $study/runs $study/alpha/runs --last 5 $alpha_pairs
# the horizon evidence run and the walker2d divergence diagnosis (curves)
report cql-curve/report $study/cql-curve/runs
report walker2d-diagnosis/curves $study/in-progress $study/walker2d-diagnosis/in-progress \
	$study/walker2d-diagnosis/runs --in-progress

# the Conclusion's 100-episode column (seed-level tests on w10/eval100)
echo "eval100_stats.py $study/w10/eval100 ... > $study/w10/eval100-stats.md" >&2
/usr/bin/python3 $study/eval100_stats.py $study/w10/eval100 \
	--compare kfcpp:cql --compare kfc:cql --compare kfcpp:s4rl-n --compare kfcpp:s4rl-adv \
	--compare s4rl-n:cql --compare s4rl-adv:cql >"$out/w10/eval100-stats.md"

[ -n "$check" ] || exit 0
status=0
for f in $(cd "$out" && find . -type f | sort); do
	f=${f#./}
	if ! cmp -s "$out/$f" "$study/$f"; then
		echo "differs: $study/$f" >&2
		status=1
	fi
done
for d in $(cd "$out" && find . -mindepth 1 -type d -name 'report*' -o -type d -name curves); do
	for f in "$study/${d#./}"/*; do
		[ -e "$out/${d#./}/$(basename "$f")" ] || { echo "committed but not regenerated: $f" >&2; status=1; }
	done
done
n=$(cd "$out" && find . -type f | wc -l)
[ $status = 0 ] && echo "all $n regenerated files identical to the committed ones" >&2
exit $status
