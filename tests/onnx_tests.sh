#!/bin/bash
# onnx_tests.sh: print the folder of the ONNX backend test data (the one
# holding node/, pytorch-converted/, ...), or fail with one message saying
# how to get it.
#
#   tests/onnx_tests.sh            (the Makefile and the test scripts call it)
#
# Looks where users have it, in this order:
#   1. $ONNX_TESTS, when set (then it must be there);
#   2. ../shared/onnx-backend-tests beside the repository (ONNX v1.22.0, the
#      copy the expected-pass lists were made on);
#   3. onnx/backend/test/data inside the onnx Python package of
#      /usr/bin/python3 or the python3 on PATH (the wheels ship it; Debian's
#      libonnx-testdata links it there);
#   4. /usr/share/libonnx-testdata/data (Debian's libonnx-testdata: v1.12).
# The expected-pass lists name tests of v1.22; an older copy lacks some, which
# tests/e2e/conformance.sh counts and names as absent from the copy.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ok() { [ -d "$1/node" ]; }
if [ -n "${ONNX_TESTS:-}" ]; then
	ok "$ONNX_TESTS" && { (cd "$ONNX_TESTS" && pwd); exit 0; }
	echo "onnx_tests: ONNX_TESTS=$ONNX_TESTS holds no node/ folder of ONNX backend tests" >&2
	exit 2
fi
cands=("$ROOT/../shared/onnx-backend-tests")
for py in /usr/bin/python3 python3; do
	command -v "$py" > /dev/null || continue
	# find the package without importing it (no numpy or protobuf needed)
	d=$("$py" -c 'import importlib.util as u, os, sys
s = u.find_spec("onnx")
sys.exit(1) if not s or not s.origin else print(os.path.join(os.path.dirname(s.origin), "backend", "test", "data"))' \
		2> /dev/null) && cands+=("$d")
done
cands+=(/usr/share/libonnx-testdata/data)
for d in "${cands[@]}"; do
	ok "$d" && { (cd "$d" && pwd); exit 0; }
done
cat >&2 << 'EOF'
onnx_tests: no ONNX backend test data found (looked at $ONNX_TESTS, ../shared/onnx-backend-tests,
  the onnx Python package's onnx/backend/test/data, /usr/share/libonnx-testdata/data). Get it with one of:
    git clone --depth 1 --branch v1.22.0 https://github.com/onnx/onnx /tmp/onnx && export ONNX_TESTS=/tmp/onnx/onnx/backend/test/data
    pip install onnx==1.22.0          (the wheel ships onnx/backend/test/data)
    apt-get install libonnx-testdata  (Debian: the older v1.12 copy)
EOF
exit 2
