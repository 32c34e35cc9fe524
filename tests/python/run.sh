#!/bin/bash
# run.sh: the Python package (make python; docs/python.md).
#
#   tests/python/run.sh
#
# 1. python/pyproject.toml's version is VERSION's.
# 2. `make install` into a temporary prefix; tests/python/test_onnxcc.py runs
#    on that installed copy (the package found under the prefix, onnxcc found
#    beside it: $ONNXCC unset, no onnxcc on PATH): torch modules (a CNN, a
#    transformer encoder of dynamic sequence, a scripted If/Loop), a saved
#    .onnx, numpy in and out, shapes out of range, the cache, an int8 QDQ
#    model against ONNX Runtime, --cuda-emu.
# 3. `pip install --no-build-isolation --no-index ./python` (offline) into a
#    venv with Debian's packages: the package imports from the venv and
#    compiles and runs a model.
# 4. The README's "From Python" lines, pasted into bash at the checkout.
# Exit status 0, or 1 at the first part that fails.
set -u
cd "$(dirname "$0")/../.." || exit 2
SRC=$PWD
PY=${PYTHON:-/usr/bin/python3}
W=$(mktemp -d "${TMPDIR:-/tmp}/onnxcc-python.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT
fail() { echo "python: FAIL $*"; exit 1; }

# 1
v=$(sed -n 's/^version = "\(.*\)"$/\1/p' python/pyproject.toml)
[ "$v" = "$(cat VERSION)" ] || fail "python/pyproject.toml says version $v, VERSION $(cat VERSION)"

# 2
make --no-print-directory -s install PREFIX="$W/prefix" > "$W/install.log" 2>&1 ||
	{ cat "$W/install.log"; fail "make install"; }
site=$(echo "$W"/prefix/lib/python3*/site-packages)
[ -f "$site/onnxcc/__init__.py" ] || fail "make install put no package in $site"
got=$(env -u ONNXCC PATH=/usr/bin:/bin PYTHONPATH="$site" "$PY" -c 'import onnxcc; print(onnxcc.__file__, onnxcc.binary())')
[ "$got" = "$site/onnxcc/__init__.py $W/prefix/bin/onnxcc" ] ||
	fail "the installed package is not the one imported, or finds another onnxcc: $got"
env -u ONNXCC PATH="/usr/bin:/bin" PYTHONPATH="$site" ONNXCC_SRC="$SRC" ONNXCC_CACHE_DIR="$W/cache" \
	"$PY" -W ignore tests/python/test_onnxcc.py > "$W/test.log" 2>&1
rc=$?
grep -E '(ok|ERROR|FAIL)$|^Ran |^OK|^FAILED' "$W/test.log"
[ $rc = 0 ] || { sed -n '/^=====/,$p' "$W/test.log" | head -n 60; fail "tests/python/test_onnxcc.py"; }
n=$(find "$W/cache" -mindepth 1 -maxdepth 1 -type d -not -name '.*' | wc -l)
echo "python: the tests from the installed copy passed; $n models in the cache"

# 3
cp -r python "$W/src"
"$PY" -m venv --system-site-packages "$W/venv" > "$W/venv.log" 2>&1 || { cat "$W/venv.log"; fail "python3 -m venv"; }
"$W/venv/bin/pip" install --no-build-isolation --no-index "$W/src" > "$W/pip.log" 2>&1 ||
	{ tail -n 20 "$W/pip.log"; fail "pip install --no-build-isolation --no-index ./python"; }
ONNXCC=$SRC/onnxcc ONNXCC_CACHE_DIR="$W/cache" "$W/venv/bin/python" -c '
import sys, numpy as np, onnxcc
assert onnxcc.__file__.startswith(sys.prefix), onnxcc.__file__
net = onnxcc.compile(sys.argv[1], cpu="generic", opt=0)
x = np.zeros((1, 1, 16, 16), np.float32)
assert net(x).shape == (1, 10)
print("python: pip install into a venv:", onnxcc.__file__)
' "$SRC/examples/digits/digits.onnx" || fail "the pip-installed package"

# 4
awk '/^## From Python/ { on = 1; next } on && /^```sh/ { code = 1; next } code && /^```/ { exit } code' README.md \
	> "$W/readme.sh"
[ "$(wc -l < "$W/readme.sh")" -ge 3 ] || fail "no sh block under README.md's '## From Python'"
# (Debian's python3 first on PATH, as on a user's machine)
(cd "$SRC" && env -u ONNXCC -u PYTHONPATH PATH="/usr/bin:/bin:$PATH" ONNXCC_CACHE_DIR="$W/cache" \
	bash -e "$W/readme.sh") > "$W/readme.log" 2>&1 ||
	{ cat "$W/readme.log"; fail "README.md's From Python lines"; }
echo "python: README.md's From Python lines: $(tail -n 1 "$W/readme.log")"
echo "python: passed"
