#!/bin/bash
# baddata.sh: generated programs under bad run-time data (docs/api.md,
# return codes). tests/e2e/baddata/gen.py writes small models and input
# files; each model is compiled with --main and built with the address and
# undefined-behaviour sanitizers (and gcc's float-cast-overflow, which
# `undefined` lacks), no recovery; each case runs it and expects, by its
# line in cases.txt: `ok` (exit 0, outputs equal to the expected ones
# exactly), `runs` (exit 0: outputs unspecified), `index` (the run returns
# PREFIX_ERR_INDEX and the program says so, exit non-zero) or `reject:...`
# (the program refuses the input file, naming it and the fault). Any
# sanitizer report fails the case.
#
#   tests/e2e/baddata.sh [FILTER]      (cases whose name matches FILTER)
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD FILTER=${1:-.}
PY=${PYTHON:-/usr/bin/python3}
CC=${CC:-gcc}
W=$(mktemp -d "${TMPDIR:-/tmp}/baddata.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
"$PY" tests/e2e/baddata/gen.py "$W" || { echo "baddata: gen.py failed"; exit 2; }
SAN="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all"
export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1
pass=0 fail=0
bad() { echo "FAIL $1: $2"; sed 's/^/    /' "$3" | head -n 12; fail=$((fail + 1)); }
while read -r name mdl expect files; do
	[[ $name =~ $FILTER ]] || continue
	m=$W/$mdl
	if [ ! -e "$m/built" ] && [ ! -e "$m/broken" ]; then
		if ! (cd "$m" && "$ROOT/onnxcc" model.onnx -o net.c --main) >"$m/build.log" 2>&1 ||
		   ! $CC -std=c11 -O1 -g $SAN -o "$m/net" "$m/net.c" "$m/net_main.c" "$m/net_weights.c" -lm \
			>>"$m/build.log" 2>&1; then
			touch "$m/broken"
		else
			touch "$m/built"
		fi
	fi
	if [ -e "$m/broken" ]; then
		bad "$name" "model $mdl does not compile" "$m/build.log"
		continue
	fi
	out=$W/out/$name log=$W/$name.log
	mkdir -p "$out"
	# shellcheck disable=SC2086
	"$m/net" $files -o "$out" >"$log" 2>&1
	rc=$?
	if grep -q "Sanitizer\|runtime error" "$log"; then
		bad "$name" "sanitizer report (exit $rc)" "$log"
		continue
	fi
	case $expect in
	ok | runs)
		if [ $rc -ne 0 ]; then
			bad "$name" "exit $rc, expected a successful run" "$log"
			continue
		fi
		ok=1
		for e in "$W"/files/"$name".exp*.npy; do
			[ "$expect" = ok ] && [ -e "$e" ] || continue
			k=${e##*.exp}; k=${k%.npy}
			if ! tests/e2e/oxcmp --rtol 0 --atol 0 "$out/output_$k.npy" "$e" >"$log.cmp" 2>&1; then
				bad "$name" "output $k differs" "$log.cmp"
				ok=0
			fi
		done
		[ $ok = 1 ] || continue ;;
	index)
		if [ $rc -eq 0 ] || ! grep -q "NET_ERR_INDEX" "$log"; then
			bad "$name" "exit $rc, expected NET_ERR_INDEX" "$log"
			continue
		fi ;;
	reject:*)
		words=${expect#reject:}; words=${words//\~/ }
		last=${files##* }
		if [ $rc -eq 0 ] || ! grep -qF "$last" "$log" || ! grep -qF "$words" "$log"; then
			bad "$name" "exit $rc, expected the file refused with '$words'" "$log"
			continue
		fi ;;
	esac
	pass=$((pass + 1))
done <"$W/cases.txt"
echo "baddata: $pass passed, $fail failed"
[ $fail -eq 0 ]
