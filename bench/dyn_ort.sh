#!/bin/bash
# dyn_ort.sh: make dyn's real exports with run-time dims (tests/e2e/dyn.txt),
# onnxcc's C against ONNX Runtime at each of their runs' sizes, and, with
# ONNXCC_B, against a second onnxcc (an older build: before and after).
#
#   bench/dyn_ort.sh [--cpu NAME] [-r ROUNDS] [-t MS] [FILTER]
#
# Needs make dyn's models and inputs (build/dyn/NAME/model.onnx and
# runK/in/input_*.npy: `make dyn` writes them) and ONNX Runtime for node
# (tools/package.json). Per model (FILTER an ERE on its name) each onnxcc is
# `--cpu NAME --main --build` (default native) with the model's flags from
# tests/e2e/dyn.txt, one program for all its runs. Per run (the sizes the
# list accepts, in its order) ROUNDS interleaved rounds (default 5; the
# order reversed every other round); in a round each side runs as one
# process, `--bench K --threads 1` (ORT with one intra-op thread), K sized by
# a probe so that a process takes about MS ms (default 300). Reported: the
# median over the rounds of each process's median, onnxcc/ORT (below 1:
# onnxcc is faster) and onnxcc/B. A benchmark, not a test: the machine may
# be busy; interleaving lets the load hit every side alike on average.
set -u
cd "$(dirname "$0")/.." || exit 2

CPU=native ROUNDS=5 TARGET_MS=300 FILTER=''
ONNXCC=${ONNXCC:-./onnxcc}
ONNXCC_B=${ONNXCC_B:-}
LIST=tests/e2e/dyn.txt
W=build/dyn-ort
die() { echo "dyn_ort: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in --cpu | -r | -t) [ $# -ge 2 ] || die "$1 needs a value" ;; esac
	case $1 in
	--cpu) CPU=$2; shift ;;
	-r) ROUNDS=$2; shift ;;
	-t) TARGET_MS=$2; shift ;;
	-h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) FILTER=$1 ;;
	esac
	shift
done
case $ROUNDS$TARGET_MS in *[!0-9]*) die "-r and -t take whole numbers" ;; esac
[ -x "$ONNXCC" ] || die "$ONNXCC not found (run make)"
[ -z "$ONNXCC_B" ] || [ -x "$ONNXCC_B" ] || die "ONNXCC_B=$ONNXCC_B not found"
node -e 'require("onnxruntime-node")' 2>/dev/null || (cd tools && node -e 'require("onnxruntime-node")') 2>/dev/null ||
	die "onnxruntime-node not installed (npm install in tools/)"

med() { sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | head -n 1; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
ox_run() { "$1" --bench "$2" --threads 1 "${ins[@]}" -o "$W/out" < /dev/null 2>&1 | med; }
ort_run() { node tools/ort_run.js "$d/model.onnx" "${ins[@]}" --bench "$1" --threads 1 < /dev/null 2>&1 | med; }
runs_for() { awk -v ms="$1" -v t="$TARGET_MS" 'BEGIN { k = (ms > 0) ? int(t / ms) : 5; if (k < 5) k = 5; print k }'; }

mkdir -p "$W"
printf '%-20s %-22s %10s %10s %10s %9s %9s\n' model run onnxcc_ms B_ms ort_ms ox/ort ox/B
grep -v -E '^[[:space:]]*(#|$)' "$LIST" | while IFS='|' read -r name flags runs _; do
	name=$(printf '%s' "$name" | xargs) flags=$(printf '%s' "$flags" | xargs)
	[ -z "$FILTER" ] || printf '%s\n' "$name" | grep -Eq "$FILTER" || continue
	d=build/dyn/$name
	[ -f "$d/model.onnx" ] || { echo "$name: no $d/model.onnx (make dyn)"; continue; }
	progs=()
	for s in A B; do
		cc=$ONNXCC
		[ $s = B ] && cc=$ONNXCC_B
		[ -n "$cc" ] || continue
		o=$W/$name/$s
		rm -rf "$o" && mkdir -p "$o"
		# shellcheck disable=SC2086
		"$cc" "$d/model.onnx" -o "$o/net.c" --cpu "$CPU" --main --build $flags > "$o/log" 2>&1 ||
			{ echo "$name: $cc failed ($o/log)"; continue 2; }
		progs+=("$o/net")
	done
	k=0
	IFS=',' read -r -a specs <<< "$(echo "$runs" | tr -d ' ')"
	for spec in "${specs[@]}"; do
		k=$((k + 1))
		case $spec in '!'*) continue ;; esac
		mapfile -t ins < <(ls "$d/run$k/in"/input_*.npy 2>/dev/null)
		[ "${#ins[@]}" -gt 0 ] || { echo "$name $spec: no inputs in $d/run$k/in (make dyn)"; continue; }
		kox=$(runs_for "$(ox_run "${progs[0]}" 3)")
		kort=$(runs_for "$(ort_run 3)")
		A='' B='' O=''
		for r in $(seq 1 "$ROUNDS"); do
			if [ $((r % 2)) = 1 ]; then
				a=$(ox_run "${progs[0]}" "$kox")
				[ "${#progs[@]}" = 2 ] && b=$(ox_run "${progs[1]}" "$kox")
				o=$(ort_run "$kort")
			else
				o=$(ort_run "$kort")
				[ "${#progs[@]}" = 2 ] && b=$(ox_run "${progs[1]}" "$kox")
				a=$(ox_run "${progs[0]}" "$kox")
			fi
			A="$A $a" O="$O $o"
			[ "${#progs[@]}" = 2 ] && B="$B $b"
		done
		# the lists are numbers: split on purpose
		# shellcheck disable=SC2086
		ma=$(printf '%s\n' $A | median) mo=$(printf '%s\n' $O | median) mb=-
		# shellcheck disable=SC2086
		[ -n "$B" ] && mb=$(printf '%s\n' $B | median)
		awk -v n="$name" -v s="$spec" -v a="$ma" -v b="$mb" -v o="$mo" 'BEGIN {
			bs = "-"; rb = "-"; ro = 0
			if (b != "-") bs = sprintf("%.4f", b)
			if (b != "-" && b > 0) rb = sprintf("%.3f", a / b)
			if (o > 0) ro = a / o
			printf "%-20s %-22s %10.4f %10s %10.4f %9.3f %9s\n", n, s, a, bs, o, ro, rb }'
	done
done
