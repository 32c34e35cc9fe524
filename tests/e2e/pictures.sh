#!/bin/bash
# pictures.sh: the pictures draw (`make pictures`).
#
#   tests/e2e/pictures.sh [ZOO]   (ZOO default build/zoo, as zoo.sh)
#
# On the digits example, resnet18 and transformer_encoder (ZOO must hold
# them; a missing one is an error) and a tiny model whose names
# hold every character the writers must escape (quotes, <>&, backslashes,
# newlines, control bytes, an HTML tag, an entity, non-ASCII; written by
# tests/e2e/pictures.py with onnx.helper):
# 1. --graph x.dot: Graphviz's dot reads it (dot -Tsvg exits 0) into
#    well-formed SVG with one node box (titled nK) per node of the optimized
#    graph (--dump-ir's node lines); --graph x.svg draws through dot too;
#    with dot off PATH it writes x.dot instead, says so, and exits 0.
# 2. --report=html:FILE: its tables read back as --report=json says (one
#    row per node output, same id, name, place) and one timeline rect per
#    arena tensor; headless Chromium renders it: the screenshot (a PNG
#    decoded by pictures.py with zlib and numpy) is not blank and shows the
#    timeline's colours, and the DOM Chromium built (--dump-dom) has one
#    rect per arena tensor.
# 3. The hostile names come back exactly, escaped, in the SVG's texts and
#    in the page.
# PICTURES_KEEP=DIR keeps every file written (the screenshots DIR/*/shot.png)
# in DIR. Exit status 1 if a check fails, 2 on setup errors.
set -u
cd "$(dirname "$0")/../.." || exit 2
ZOO=${1:-build/zoo}
ONNXCC=$PWD/${ONNXCC:-onnxcc}
PY=${PYTHON:-/usr/bin/python3}
CHECK="$PY $PWD/tests/e2e/pictures.py"
CHROMIUM=${CHROMIUM:-chromium}
die() { echo "pictures: $*" >&2; exit 2; }
command -v dot >/dev/null || die "Graphviz's dot is not installed (make deps-pictures)"
command -v "$CHROMIUM" >/dev/null || die "$CHROMIUM is not installed (make deps-pictures)"
[ -x "$ONNXCC" ] || die "no $ONNXCC (make first)"
if [ -n "${PICTURES_KEEP:-}" ]; then  # keep the pictures there, to look at
	mkdir -p "$PICTURES_KEEP" && work=$(cd "$PICTURES_KEEP" && pwd) || exit 2
else
	work=$(mktemp -d) || exit 2
	trap 'rm -rf "$work"' EXIT
fi
# as root Chromium needs --no-sandbox; its own dbus and GPU complaints go to a log
chrome() { "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars "$@" 2>>"$work/chromium.log"; }

$CHECK model "$work/hostile.onnx" || die "cannot write the hostile-names model (python3-onnx?)"
models=("digits|examples/digits/digits.onnx" "hostile|$work/hostile.onnx")
for m in resnet18 transformer_encoder; do
	[ -f "$ZOO/$m/model.onnx" ] || die "$ZOO/$m/model.onnx is not exported (make zoo-models)"
	models+=("$m|$ZOO/$m/model.onnx")
done

fail=0
bad() { echo "pictures: FAIL $*"; fail=1; }
for c in "${models[@]}"; do
	name=${c%%|*} model=${c#*|} d=$work/$name
	mkdir -p "$d"
	echo "== $name"
	nodes=$("$ONNXCC" "$model" --dump-ir | grep -c '^%')
	if ! "$ONNXCC" "$model" -o "$d/net.c" --report=json --report=html:"$d/report.html" --graph "$d/g.dot" \
		>"$d/report.json" 2>"$d/log"; then
		bad "$name: onnxcc failed: $(cat "$d/log")"
		continue
	fi
	# 1. the graph
	dot -Tsvg "$d/g.dot" -o "$d/g.svg" 2>"$d/dot.log" || bad "$name: dot cannot read the DOT: $(head -3 "$d/dot.log")"
	$CHECK svg "$d/g.svg" "$nodes" || bad "$name: the SVG of the DOT"
	"$ONNXCC" "$model" --graph "$d/direct.svg" 2>"$d/direct.log" || bad "$name: --graph x.svg failed"
	[ -f "$d/direct.svg" ] && ! [ -e "$d/direct.svg.dot" ] || bad "$name: --graph x.svg wrote no SVG, or left its DOT"
	$CHECK svg "$d/direct.svg" "$nodes" || bad "$name: --graph x.svg"
	# 2. the page: read back, rendered, its DOM
	$CHECK html "$d/report.html" "$d/report.json" || bad "$name: the page's tables"
	chrome --screenshot="$d/shot.png" --window-size=1200,1600 "file://$d/report.html"
	[ -s "$d/shot.png" ] || bad "$name: Chromium wrote no screenshot ($(tail -2 "$work/chromium.log"))"
	[ -s "$d/shot.png" ] && { $CHECK png "$d/shot.png" || bad "$name: the screenshot"; }
	chrome --dump-dom "file://$d/report.html" >"$d/dom.html"
	$CHECK dom "$d/dom.html" "$d/report.json" || bad "$name: the rendered DOM"
done

# 3. every hostile name in the SVG; the node outputs' and node names in the page
d=$work/hostile
for k in x w b mm add relu soft y; do
	nm=$($CHECK names | $PY -c "import json, sys; print(json.dumps(json.load(sys.stdin)['$k']))")
	$CHECK svg "$d/g.svg" 2 "$nm" || bad "hostile: name $k in the SVG"
done
for k in mm add relu y; do
	nm=$($CHECK names | $PY -c "import json, sys; print(json.dumps(json.load(sys.stdin)['$k']))")
	$CHECK html "$d/report.html" "$d/report.json" "$nm" || bad "hostile: name $k in the page"
done

# without dot on PATH: the DOT beside, a word on stderr, exit 0
echo "== no dot on PATH"
mkdir -p "$work/nodot"
if ! PATH=/nonexistent "$ONNXCC" examples/digits/digits.onnx --graph "$work/nodot/g.svg" 2>"$work/nodot/log"; then
	bad "--graph x.svg without dot failed: $(cat "$work/nodot/log")"
elif [ -e "$work/nodot/g.svg" ] || ! [ -s "$work/nodot/g.dot" ] || ! grep -q "not on PATH" "$work/nodot/log"; then
	bad "--graph x.svg without dot: expected g.dot and a message, got: $(ls "$work/nodot"; cat "$work/nodot/log")"
else
	echo "  wrote g.dot and said: $(cat "$work/nodot/log")"
fi

[ $fail = 0 ] && echo "pictures: all passed (${#models[@]} models)"
exit $fail
