#!/bin/bash
# tutorial.sh: run every command of docs/tutorial.md (`make tutorial`), so
# the tutorial cannot go stale.
#
#   tests/e2e/tutorial.sh [docs/tutorial.md] [-k]     (-k: keep the work dir)
#
# The tutorial's fenced blocks become one bash script, in order:
#   ```sh              the block is run (bash -e -u -o pipefail: any failing
#                      command fails the tutorial)
#   ```LANG + first line "# file: NAME" or "// file: NAME"
#                      the block is written to NAME (then run by a later sh block)
#   anything else      (```text: shown output) is not run
# The script runs in a fresh temporary directory with ONNXCC_SRC set to this
# checkout and, first on PATH, a `python3` that has torch and onnx (Debian's;
# $TUTORIAL_PYTHON overrides). The last line is "tutorial: N blocks ran, ok"
# or the failing command with the log's tail; the exit status is 0 or 1.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
doc=$here/docs/tutorial.md
keep=0
for a in "$@"; do
	case $a in
	-k) keep=1 ;;
	*) doc=$(cd "$(dirname "$a")" && pwd)/$(basename "$a") ;;
	esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/onnxcc-tutorial.XXXXXX")
[ $keep = 1 ] || trap 'rm -rf "$work"' EXIT

# the python the tutorial calls python3
py=${TUTORIAL_PYTHON:-}
if [ -z "$py" ]; then
	for c in /usr/bin/python3 python3; do
		if "$c" -c 'import torch, onnx' 2>/dev/null; then py=$(command -v "$c"); break; fi
	done
fi
if [ -z "$py" ]; then
	echo "tutorial: no python3 with torch and onnx (make deps-models installs Debian's)" >&2
	exit 1
fi
mkdir -p "$work/.bin"
ln -s "$py" "$work/.bin/python3"

# markdown -> script
awk '
function q(s) { gsub(/\047/, "\047\\\047\047", s); return "\047" s "\047" }
/^```/ {
	if (!infence) {
		infence = 1; lang = substr($0, 4); first = 1; mode = "skip"
		if (lang == "sh") { mode = "run"; nblocks++; printf "echo %s\n", q("## block " nblocks " (line " NR ")") }
		next
	}
	infence = 0
	if (mode == "file") print "OX_TUTORIAL_EOF"
	next
}
infence {
	if (first && lang != "sh" && match($0, /^(#|\/\/) file: [^ ]+$/)) {
		name = $0; sub(/^(#|\/\/) file: /, "", name)
		mode = "file"; nfiles++
		printf "cat > %s <<\047OX_TUTORIAL_EOF\047\n", q(name)
		first = 0; next
	}
	first = 0
	if (mode != "skip") print
}
END { printf "echo %s\n", q("tutorial: " nblocks " blocks ran, ok") }
' "$doc" >"$work/.tutorial.sh"

cd "$work"
if ! ONNXCC_SRC=$here PATH="$work/.bin:$PATH" bash -euo pipefail -x .tutorial.sh >.log 2>&1; then
	tail -n 40 .log
	echo "tutorial: FAILED (the script is $work/.tutorial.sh, the log $work/.log; -k keeps them)"
	exit 1
fi
tail -n 1 .log
