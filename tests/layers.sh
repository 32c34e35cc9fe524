#!/bin/bash
# layers.sh: make test's layers one after another, each timed.
#
#   tests/layers.sh LAYER...        (make test; MAKE: the make to call)
#
# Runs `$MAKE LAYER` for each in order and stops at the first that fails
# (exit 1, as make would). Prints a line per layer as it ends and, at the
# end or at the failure, the table of seconds per layer: the record of
# where make test's time goes (docs/testing.md).
#
# A layer also fails when it leaves part of itself out: each layer's output
# goes to build/layers/LAYER.log as well, and a line there that says
# "skipped" fails the layer unless it gives the one reason allowed,
# "skipped (this machine: ...)": instructions this CPU lacks, another
# architecture, NVIDIA's CUDA toolkit (not in Debian's main archive).
# A missing Debian or npm package is never a reason: the layer's deps-*
# target installs it (Makefile).
set -u
cd "$(dirname "$0")/.." || exit 2
MAKE=${MAKE:-make}
LOGS=build/layers
mkdir -p "$LOGS" || exit 2
t0=$(date +%s) table='' rc=0
for l in "$@"; do
	s=$(date +%s)
	$MAKE --no-print-directory "$l" 2>&1 | tee "$LOGS/$l.log"
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	skips=$(grep -i 'skipped' "$LOGS/$l.log" | grep -v 'skipped (this machine: ')
	if [ -n "$skips" ]; then
		printf '%s\n' "layers: $l left part of itself out (a layer installs what it needs; docs/testing.md):" \
			"$skips" | sed '2,$s/^/    /'
		rc=1
	fi
	e=$(date +%s)
	table="$table$(printf '  %-20s %5d s%s' "$l" $((e - s)) "$([ $rc = 0 ] || echo '  FAILED')")
"
	echo "== layer $l: $((e - s)) s$([ $rc = 0 ] || echo ', FAILED')"
	[ $rc = 0 ] || break
done
printf 'make test: seconds per layer\n%s  %-20s %5d s\n' "$table" total $(($(date +%s) - t0))
exit $rc
