#!/bin/bash
# zoo.sh: compile real exported models with onnxcc and compare with ONNX Runtime.
#
#   tests/e2e/zoo.sh [DIR] [FILTER]     (DIR default build/zoo; FILTER an ERE on names)
#   tests/e2e/zoo.sh --export [DIR] [FILTER]   (make zoo-models: only the exports)
#   tests/e2e/zoo.sh --refs [DIR] [FILTER]     (make zoo-refs: the exports and
#                                              ONNX Runtime's reference outputs)
#
# Models and their onnxcc flags are listed in tests/e2e/zoo.txt. Per model:
# export with tools/export_zoo.py (skipped when DIR/NAME already has it),
# reference outputs from tools/ort_run.js (ONNX Runtime, skipped when present),
# `onnxcc --main --build`, run the program on the same inputs, compare;
# then run it with --threads 3, whose outputs must equal the first run's
# bit for bit.
# Error measure (normwise relative): err = max|got - ref| / max|ref| per
# output (the denominator is 1 when ref is all zeros); the model's error is
# the largest over its outputs and passes when err <= rtol from zoo.txt. oxcmp
# checks exactly that: --rtol 0 --atol rtol*max|ref|; the table shows
# oxcmp's max_abs / max|ref|. Exit status 1 if any model fails, 2 on setup errors.
set -u
cd "$(dirname "$0")/../.." || exit 2

EXPORT_ONLY=0
[ "${1:-}" = --export ] && { EXPORT_ONLY=1; shift; }
[ "${1:-}" = --refs ] && { EXPORT_ONLY=2; shift; }
DIR=${1:-build/zoo}
FILTER=${2:-}
PY=/usr/bin/python3                     # Debian's Python: torch, onnx, numpy
ONNXCC=${ONNXCC:-./onnxcc}
ONNXCC_FLAGS=${ONNXCC_FLAGS:-}            # e.g. '--cpu native' (then --build adds its flags)
OXCMP=${OXCMP:-tests/e2e/oxcmp}
LIST=tests/e2e/zoo.txt

die() { echo "zoo: $*" >&2; exit 2; }
[ -x "$ONNXCC" ] || die "$ONNXCC not found (run make)"
[ -x "$OXCMP" ] || die "$OXCMP not found (run make)"
[ -d tools/node_modules/onnxruntime-node ] ||
	die "no ONNX Runtime: run 'cd tools && ONNXRUNTIME_NODE_INSTALL=skip npm ci'"
$PY -c 'import torch, torchvision, onnx, numpy' 2>/dev/null ||
	die "$PY lacks torch/torchvision/onnx/numpy (make deps)"

# name|flags|rtol for every selected line of zoo.txt.
models=$(awk -v f="$FILTER" '
	/^[ \t]*(#|$)/ { next }
	f != "" && $1 !~ f { next }
	{ fl = ""; for (i = 2; i < NF; i++) if ($i != "-") fl = fl (fl == "" ? "" : " ") $i
	  printf "%s|%s|%s\n", $1, fl, $NF }' "$LIST")
[ -n "$models" ] || die "no model in $LIST matches '$FILTER'"
mkdir -p "$DIR" || exit 2

# Export what is missing, in one Python start (torch takes seconds to import).
missing=
while IFS="|" read -r -u 3 name _ _; do
	[ -f "$DIR/$name/model.onnx" ] && [ -f "$DIR/$name/input_0.npy" ] ||
		missing="$missing${missing:+,}$name"
done 3<<< "$models"
if [ -n "$missing" ]; then
	echo "zoo: exporting $missing"
	$PY tools/export_zoo.py "$DIR" --only "$missing" > "$DIR/export.log" 2>&1 ||
		{ tail -n 20 "$DIR/export.log"; die "export failed (see $DIR/export.log)"; }
fi
[ $EXPORT_ONLY = 1 ] && exit 0

# Node count and max|ref| per output, cached next to the references:
# line 1 the count of top-level graph nodes, then one line per output.
info() {
	$PY - "$1/model.onnx" "$1/ref" <<'EOF'
import glob, os, sys
import numpy as np, onnx
print(len(onnx.load(sys.argv[1]).graph.node))
k = 0
while os.path.exists(os.path.join(sys.argv[2], "output_%d.npy" % k)):
    r = np.load(os.path.join(sys.argv[2], "output_%d.npy" % k)).astype(np.float64)
    print(repr(float(np.abs(r).max())) if r.size else "0.0")
    k += 1
EOF
}

# maxerr OLD MAX_ABS DEN: the larger of OLD and MAX_ABS/DEN, 3 digits; a
# max_abs that is no number (nan, inf, missing) wins and shows as it is.
maxerr() {
	awk -v e="$1" -v m="$2" -v a="$3" 'BEGIN {
		if (m !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/) { print (m == "" ? "?" : m); exit }
		if (e !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ && e != "-") { print e; exit }
		x = m / a
		if (e == "-" || x > e + 0) printf "%.3g\n", x; else print e }'
}

row() { printf "%-26s %6s %12s  %s\n" "$@"; }
[ $EXPORT_ONLY = 2 ] || row model nodes max_rel_err status
pass=0 fail=0 details=''
# The model list comes in on fd 3 and the outputs' max|ref| on fd 4, so a
# command that reads stdin cannot swallow them.
while IFS="|" read -r -u 3 name flags rtol; do
	d=$DIR/$name
	inputs=()
	k=0
	while [ -f "$d/input_$k.npy" ]; do inputs+=("$d/input_$k.npy"); k=$((k + 1)); done

	status='' log='' err=-
	if [ ! -f "$d/ref/info.txt" ]; then
		rm -rf "$d/ref"
		if node tools/ort_run.js "$d/model.onnx" "${inputs[@]}" -o "$d/ref" > "$d/ort.log" 2>&1 &&
			info "$d" > "$d/ref/info.tmp"; then
			mv "$d/ref/info.tmp" "$d/ref/info.txt"
		else
			status=REF-FAIL log=$d/ort.log
		fi
	fi
	if [ $EXPORT_ONLY = 2 ]; then # (--refs: no more)
		if [ -z "$status" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "zoo: $name: $status ($log)"; fi
		continue
	fi
	nodes=$(head -n 1 "$d/ref/info.txt" 2>/dev/null || echo "?")

	if [ -z "$status" ]; then
		rm -rf "$d/c" && mkdir -p "$d/c"
		# $flags is split on purpose: it is a list of options.
		# shellcheck disable=SC2086
		if ! "$ONNXCC" "$d/model.onnx" -o "$d/c/net.c" --main --build $flags $ONNXCC_FLAGS > "$d/c/compile.log" 2>&1; then
			status=COMPILE-FAIL log=$d/c/compile.log
		elif [ ! -x "$d/c/net" ]; then
			status=BUILD-FAIL log=$d/c/compile.log
		elif ! timeout 600 "$d/c/net" "${inputs[@]}" -o "$d/c/out" > "$d/c/run.log" 2>&1; then
			status=RUN-FAIL log=$d/c/run.log
		fi
	fi

	if [ -z "$status" ]; then
		status=ok
		k=0
		while read -r -u 4 amax; do
			got=$d/c/out/output_$k.npy
			if [ ! -f "$got" ]; then
				status=RUN-FAIL log=$d/c/run.log
				echo "zoo: $got was not written" >> "$d/c/run.log"
				break
			fi
			den=$(awk -v a="$amax" 'BEGIN { print (a > 0 ? a : 1) }')
			atol=$(awk -v r="$rtol" -v a="$den" 'BEGIN { printf "%.9g", r * a }')
			out=$("$OXCMP" --rtol 0 --atol "$atol" "$got" "$d/ref/output_$k.npy" 2>&1)
			rc=$?
			echo "output_$k: max|ref|=$amax atol=$atol: $out" >> "$d/c/compare.log"
			mabs=$(printf '%s\n' "$out" | sed -n 's/.*max_abs=\([^ ]*\).*/\1/p' | head -n 1)
			err=$(maxerr "$err" "$mabs" "$den")
			if [ "$rc" -ne 0 ]; then
				status=MISMATCH log=$d/c/compare.log
			fi
			k=$((k + 1))
		done 4< <(tail -n +2 "$d/ref/info.txt")
	fi
	# The parallel-for hook: 3 threads (more than this machine's cores, so
	# chunks are taken from descheduled threads too) must give the 1-thread
	# outputs bit for bit: a task computes its indices alike on any thread.
	if [ "$status" = ok ]; then
		if ! timeout 600 "$d/c/net" --threads 3 "${inputs[@]}" -o "$d/c/out3" > "$d/c/run3.log" 2>&1; then
			status=THREADS-FAIL log=$d/c/run3.log
		else
			k=0
			while [ -f "$d/c/out/output_$k.npy" ]; do
				if ! "$OXCMP" --rtol 0 --atol 0 "$d/c/out3/output_$k.npy" "$d/c/out/output_$k.npy" \
					>> "$d/c/run3.log" 2>&1; then
					status=THREADS-DIFFER log=$d/c/run3.log
				fi
				k=$((k + 1))
			done
		fi
	fi

	row "$name" "$nodes" "$err" "$status"
	if [ "$status" = ok ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		details="$details--- $name: $status ($log)"$'\n'$(head -n 8 "$log" 2>/dev/null)$'\n'
	fi
done 3<<< "$models"

[ -z "$details" ] || printf '\n%s' "$details"
if [ $EXPORT_ONLY = 2 ]; then
	echo "zoo: references of $pass models, $fail failed"
else
	echo "zoo: $pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
