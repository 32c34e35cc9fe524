#!/bin/bash
# triage.sh: group a harness's findings by the place they fail.
#   tests/fuzz/triage.sh build/fuzz/fuzz_NAME [FILE_OR_DIR...]
# (default: build/fuzz/findings/NAME). One line per distinct place: how
# many inputs hit it, one of them, and the sanitizer's first line.
set -u
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
cd "$(dirname "$0")/../.." || exit 2
bin=$1
shift
[ $# -gt 0 ] || set -- "build/fuzz/findings/${bin##*/fuzz_}"
for f in $(find "$@" -type f); do
	out=$("$bin" -rss_limit_mb=2048 -timeout=30 "$f" 2>&1)
	where=$(printf '%s\n' "$out" | grep -m 1 -oE '(runtime error: .*|ERROR: [A-Za-z]+: [a-z-]+|internal error at [^:]*:[0-9]+|SUMMARY: .*)' | cut -c 1-110)
	at=$(printf '%s\n' "$out" | grep -m 1 -oE '(#[0-9]+ 0x[0-9a-f]+ in [a-z_0-9]+ [^ ]*(frontend|ir|opt|codegen|runtime_min)/[^ ]*|^[a-z_]+/[a-z_0-9]+\.c:[0-9]+)' | sed 's/.* in //')
	echo "${at:-?}|${where:-no failure}|$f"
done | sort | awk -F'|' '{ k = $1 "|" $2; n[k]++; if (!(k in ex)) ex[k] = $3 } END { for (k in n) printf "%4d  %s  %s\n", n[k], k, ex[k] }' | sort -k2
