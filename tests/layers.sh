#!/bin/bash
# layers.sh: make test's layers one after another, each timed.
#
#   tests/layers.sh LAYER...        (make test; MAKE: the make to call)
#
# Runs `$MAKE LAYER` for each in order and stops at the first that fails
# (exit 1, as make would). Prints a line per layer as it ends and, at the
# end or at the failure, the table of seconds per layer: the record of
# where make test's time goes (docs/testing.md, CI time).
set -u
cd "$(dirname "$0")/.." || exit 2
MAKE=${MAKE:-make}
t0=$(date +%s) table='' rc=0
for l in "$@"; do
	s=$(date +%s)
	$MAKE --no-print-directory "$l" || rc=1
	e=$(date +%s)
	table="$table$(printf '  %-20s %5d s%s' "$l" $((e - s)) "$([ $rc = 0 ] || echo '  FAILED')")
"
	echo "== layer $l: $((e - s)) s$([ $rc = 0 ] || echo ', FAILED')"
	[ $rc = 0 ] || break
done
printf 'make test: seconds per layer\n%s  %-20s %5d s\n' "$table" total $(($(date +%s) - t0))
exit $rc
