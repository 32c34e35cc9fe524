#!/bin/bash
# opt_cases.sh: the optimizer's own end-to-end cases (tests/e2e/cases/opt,
# made by cases/make_opt_cases.py with float64 references) for every --cpu
# target this machine runs, generic code in vf.c's plain-C11 rendering
# (-DOX_VF_PORTABLE), x86-64-v4 built by clang too, and with the optimizer
# off (--opt 0). Then the cases with 3x3 convolutions Winograd can compute,
# for every target again with each algorithm forced (--winograd 2,
# --winograd 4: the cost model may leave a small case direct) and with it
# off.
#
#   tests/e2e/opt_cases.sh [FILTER]
#
# OPT_CASES_HALF=1 (make test's sample; make opt-cases runs them all):
# every configuration runs every second case of those it would run, the
# two halves alternating between configurations (in the order below), so
# each case still runs in half of them and each configuration on half the
# cases.
#
# Each run is tests/e2e/conformance.sh over the cases with ONNXCC_FLAGS set
# to the target and OX_CFLAGS to its compiler flags; a target whose
# instructions this CPU lacks is skipped, and says so. Exit 1 if any case
# fails anywhere.
set -u
cd "$(dirname "$0")/../.." || exit 2
FILTER=${1:-.}
fails=0 runs=0
has() { grep -qw "$1" /proc/cpuinfo 2>/dev/null; }
# the cases with a 3x3 stride-1 convolution on a blocked input (an ERE;
# tests/sanitize.sh reads it too)
WINO=$(cat tests/e2e/opt_wino.ere)
[ "$FILTER" = . ] || WINO=$FILTER
# cpu|cflags|CPU features|extra onnxcc flags|compiler (default cc)
V3="x86-64-v3|-march=x86-64-v3|avx2 fma" V4="x86-64-v4|-march=x86-64-v4|avx512f avx512bw avx512dq avx512vl"
cfgs=("generic|" "portable|-DOX_VF_PORTABLE" "$V3" "$V4" "$V4||clang" "opt0|")
for w in 2 4 off; do
	for t in "generic||" "portable|-DOX_VF_PORTABLE|" "$V3" "$V4"; do
		cfgs+=("$t|--winograd $w")
	done
done
for cfg in "${cfgs[@]}"; do
	IFS='|' read -r cpu cflags feats extra cc <<< "$cfg"
	missing=''
	for f in $feats; do has "$f" || missing="$missing $f"; done
	if [ -n "$missing" ]; then
		echo "opt-cases $cpu: skipped (this machine: its CPU lacks$missing)"
		continue
	fi
	if [ -n "$cc" ] && ! command -v "$cc" > /dev/null; then
		echo "opt-cases $cpu: $cc is not installed (make deps-clang)"
		exit 2
	fi
	flags="--cpu $cpu"
	[ "$cpu" = opt0 ] && flags="--opt 0"
	# generic code built as a compiler without vector extensions would
	# (templates/vf.c's plain-C11 struct rendering)
	[ "$cpu" = portable ] && flags="--cpu generic"
	filter=$FILTER
	[ -n "$extra" ] && flags="$flags $extra" filter=$WINO
	if [ "${OPT_CASES_HALF:-0}" = 1 ]; then
		# the names the filter takes, every second from offset runs % 2
		filter="^($(find tests/e2e/cases/opt -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort |
			grep -E -- "$filter" | awk -v o=$((runs % 2)) 'NR % 2 == o' | paste -sd '|'))\$"
	fi
	out=$(CC=${cc:-${CC:-cc}} ONNXCC_FLAGS="$flags" OX_CFLAGS="$cflags" ONNX_TESTS=tests/e2e/cases OXC_SUITES=opt \
		tests/e2e/conformance.sh "$filter" 2>&1)
	last=$(printf '%s\n' "$out" | tail -n 1)
	printf '%s\n' "$out" | grep '^FAIL' | sed "s/^/[$flags] /"
	echo "opt-cases $flags${cflags:+ $cflags}${cc:+ ($cc)}: $last"
	runs=$((runs + 1))
	case "$last" in *" 0 failed, 0 unsupported") ;; *) fails=$((fails + 1)) ;; esac
done
echo "opt-cases: $runs configurations, $fails with failures"
[ "$fails" = 0 ]
