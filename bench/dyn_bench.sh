#!/bin/bash
# dyn_bench.sh: a program compiled for a range of shapes against the static
# program, at the range's (bucket's) top and, for context, at a smaller size.
# A benchmark, not a test: it prints times and checks only that each range
# program computes what its static program does (normwise 1e-4).
#
#   bench/dyn_bench.sh [--cpu NAME] [-d DIR] [-r ROUNDS] [-t MS] [--threads N] [FILTER]
#
# The models are bench/dyn_export.py's (exported into DIR, default
# build/dyn-bench, when missing): zoo networks with dynamic axes. Per case
# (the table below; FILTER an ERE on its name) three programs, each
# `onnxcc --cpu NAME --main --build` (default native) with the case's flags:
# "static", all shapes fixed at the top size S; "range", the range (or
# buckets) whose top is S; "small", all shapes fixed at the smaller size.
# Inputs: tools/export_dyn.py --inputs (seed 1). Then ROUNDS (default 7)
# interleaved rounds, the order of the programs reversed every other round;
# in a round each program runs as one process, `net --bench K --threads N`
# (default 1 thread; a warm-up, then K timed runs, K sized by a probe so a
# run of K takes about MS ms, default 400), at S and, for the range
# program, at the smaller size too. Reported: the median over the rounds of
# each process's median, and range/static at S (the goal: at most 1.10) and
# range/small at the smaller size. Numbers are measured, never edited. The
# machine may be busy: interleaving lets the load hit both alike on
# average, the medians keep single slow rounds out.
set -u
cd "$(dirname "$0")/.." || exit 2

CPU=native DIR=build/dyn-bench ROUNDS=7 TARGET_MS=400 THREADS=1 FILTER=''
PY=/usr/bin/python3
ONNXCC=${ONNXCC:-./onnxcc}
OXCMP=tests/e2e/oxcmp
die() { echo "dyn_bench: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in --cpu | -d | -r | -t | --threads) [ $# -ge 2 ] || die "$1 needs a value" ;; esac
	case $1 in
	--cpu) CPU=$2; shift ;;
	-d) DIR=$2; shift ;;
	-r) ROUNDS=$2; shift ;;
	-t) TARGET_MS=$2; shift ;;
	--threads) THREADS=$2; shift ;;
	-h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) FILTER=$1 ;;
	esac
	shift
done
case $ROUNDS$TARGET_MS$THREADS in *[!0-9]*) die "-r, -t and --threads take whole numbers" ;; esac
[ -x "$ONNXCC" ] || die "$ONNXCC not found (run make)"
[ -x "$OXCMP" ] || die "$OXCMP not found (run make)"
$PY -c 'import torch, torchvision, onnx' 2>/dev/null || die "$PY lacks torch/torchvision/onnx (make deps-models)"

# case | model | static at S | range with top S | fixed at the small size | input at S | input small
CASES='
resnet18_batch   | resnet18     | --shape input=8x3x224x224 | --dim N=1..8 --dim H=224 --dim W=224 | --shape input=2x3x224x224 | 8x3x224x224 | 2x3x224x224
resnet18_image   | resnet18     | --shape input=1x3x224x224 | --dim N=1 --dim H=64..224 --dim W=64..224 | --shape input=1x3x128x128 | 1x3x224x224 | 1x3x128x128
mobilenet_batch  | mobilenet_v2 | --shape input=8x3x224x224 | --dim N=1..8 --dim H=224 --dim W=224 | --shape input=2x3x224x224 | 8x3x224x224 | 2x3x224x224
mobilenet_image  | mobilenet_v2 | --shape input=1x3x224x224 | --dim N=1 --dim H=64..224 --dim W=64..224 | --shape input=1x3x128x128 | 1x3x224x224 | 1x3x128x128
bert_seq         | bert         | --dim S=128 | --dim S=1..128:32,64 | --dim S=32 | 1x128x256;1x1x1x128 | 1x32x256;1x1x1x32
'
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }
cases=$(printf '%s\n' "$CASES" | awk -F'|' -v f="$FILTER" 'NF > 1 { n = $1; gsub(/ /, "", n); if (n ~ f) print }')
[ -n "$cases" ] || die "no case matches '$FILTER'"
mkdir -p "$DIR" || exit 2

# the models this run needs, exported in one Python start
need=$(printf '%s\n' "$cases" | awk -F'|' '{ m = $2; gsub(/ /, "", m); print m }' | sort -u)
missing=''
for m in $need; do [ -f "$DIR/$m/model.onnx" ] || missing="$missing${missing:+,}$m"; done
if [ -n "$missing" ]; then
	echo "dyn_bench: exporting $missing"
	$PY bench/dyn_export.py "$DIR" --only "$missing" > "$DIR/export.log" 2>&1 ||
		{ tail -n 20 "$DIR/export.log"; die "export failed (see $DIR/export.log)"; }
fi

med() { sed -n 's/^bench: .*median_ms=\([^ ]*\).*/\1/p' | tail -n 1; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
runs_for() { awk -v p="$1" -v t="$TARGET_MS" 'BEGIN { k = (p > 0) ? int(t / p + 0.5) : 100; print (k < 3 ? 3 : k > 2000 ? 2000 : k) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b <= 0) print "-"; else printf "%.3f", a / b }'; }
inputs() { # MODEL SPEC OUT: random inputs of the shapes SPEC (seed 1) into OUT
	[ -f "$3/input_0.npy" ] || $PY tools/export_dyn.py --inputs "$DIR/$1/model.onnx" "$3" "$2" 1 > /dev/null ||
		die "cannot make inputs $2 for $1"
}
files() { local k=0; while [ -f "$1/input_$k.npy" ]; do printf '%s\n' "$1/input_$k.npy"; k=$((k + 1)); done; }
run() { # PROG INPUTDIR K: the median of K runs
	# shellcheck disable=SC2046 # one input file a line
	"$1" --bench "$3" --threads "$THREADS" $(files "$2") < /dev/null 2>&1 | med
}

printf '%-17s %-20s %10s %10s %7s  %-18s %10s %10s %7s\n' case top "static_ms" "range_ms" "ratio" small \
	"range_ms" "fixed_ms" "ratio"
RES=$DIR/results-$CPU.tsv
: > "$RES"
while IFS='|' read -r -u 3 name model sflags rflags fflags top small; do
	name=$(trim "$name") model=$(trim "$model") top=$(trim "$top") small=$(trim "$small")
	c=$DIR/$name-$CPU
	mkdir -p "$c"
	bad=''
	for p in static range small; do
		case $p in static) fl=$sflags ;; range) fl=$rflags ;; small) fl=$fflags ;; esac
		rm -rf "$c/$p" && mkdir -p "$c/$p"
		# shellcheck disable=SC2086 # the flags are a list of options
		"$ONNXCC" "$DIR/$model/model.onnx" -o "$c/$p/net.c" --cpu "$CPU" --main --build $fl \
			> "$c/$p/compile.log" 2>&1 && [ -x "$c/$p/net" ] || { bad="$p: compile failed (see $c/$p/compile.log)"; break; }
	done
	if [ -z "$bad" ]; then
		inputs "$model" "$top" "$c/in-top"
		inputs "$model" "$small" "$c/in-small"
		# the range program computes what the fixed ones do
		for s in top small; do
			ref=static; [ $s = small ] && ref=small
			# shellcheck disable=SC2046
			"$c/range/net" $(files "$c/in-$s") -o "$c/out-range-$s" > /dev/null 2>&1 &&
				"$c/$ref/net" $(files "$c/in-$s") -o "$c/out-$ref-$s" > /dev/null 2>&1 ||
				{ bad="a run at $s failed"; break; }
			k=0
			while [ -f "$c/out-$ref-$s/output_$k.npy" ]; do
				amax=$($PY -c "import numpy as np, sys; print(float(abs(np.load(sys.argv[1])).max()) or 1.0)" \
					"$c/out-$ref-$s/output_$k.npy")
				atol=$(awk -v a="$amax" 'BEGIN { printf "%.9g", 1e-4 * a }')
				"$OXCMP" --rtol 0 --atol "$atol" "$c/out-range-$s/output_$k.npy" "$c/out-$ref-$s/output_$k.npy" \
					> "$c/cmp-$s-$k.log" 2>&1 || { bad="range and $ref differ at $s (see $c/cmp-$s-$k.log)"; break 2; }
				k=$((k + 1))
			done
		done
	fi
	if [ -n "$bad" ]; then
		printf '%-17s %s\n' "$name" "$bad"
		printf '%s\t%s\n' "$name" "$bad" >> "$RES"
		continue
	fi
	# K per program and size from a probe run each
	ks=$(runs_for "$(run "$c/static/net" "$c/in-top" 1)") kr=$(runs_for "$(run "$c/range/net" "$c/in-top" 1)")
	krs=$(runs_for "$(run "$c/range/net" "$c/in-small" 1)") kf=$(runs_for "$(run "$c/small/net" "$c/in-small" 1)")
	ts='' tr='' trs='' tf=''
	for r in $(seq 1 "$ROUNDS"); do
		if [ $((r % 2)) = 1 ]; then
			ts="$ts $(run "$c/static/net" "$c/in-top" "$ks")" tr="$tr $(run "$c/range/net" "$c/in-top" "$kr")"
			trs="$trs $(run "$c/range/net" "$c/in-small" "$krs")" tf="$tf $(run "$c/small/net" "$c/in-small" "$kf")"
		else
			tf="$tf $(run "$c/small/net" "$c/in-small" "$kf")" trs="$trs $(run "$c/range/net" "$c/in-small" "$krs")"
			tr="$tr $(run "$c/range/net" "$c/in-top" "$kr")" ts="$ts $(run "$c/static/net" "$c/in-top" "$ks")"
		fi
	done
	# shellcheck disable=SC2086 # lists of numbers
	ms=$(printf '%s\n' $ts | median) mr=$(printf '%s\n' $tr | median)
	# shellcheck disable=SC2086
	mrs=$(printf '%s\n' $trs | median) mf=$(printf '%s\n' $tf | median)
	printf '%-17s %-20s %10s %10s %7s  %-18s %10s %10s %7s\n' "$name" "$top" "$ms" "$mr" "$(ratio "$mr" "$ms")" \
		"$small" "$mrs" "$mf" "$(ratio "$mrs" "$mf")"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$top" "$ms" "$mr" "$(ratio "$mr" "$ms")" \
		"$small" "$mrs" "$mf" "$(ratio "$mrs" "$mf")" "$ts" "$tr" "$trs" "$tf" >> "$RES"
done 3<<< "$cases"
echo "dyn_bench: $ROUNDS rounds, $THREADS thread(s), --cpu $CPU; per-round medians in $RES"
