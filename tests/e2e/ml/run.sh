#!/bin/sh
# run.sh: end-to-end checks of the classical ML ops that the ONNX backend
# suite lacks (see check.py). Prints one summary line ("ml: N passed, M
# failed") after any FAIL lines; exits nonzero on a mismatch.
# Usage (from anywhere): tests/e2e/ml/run.sh [ONNXCC]
cd "$(dirname "$0")/../../.." || exit 2
exec /usr/bin/python3 tests/e2e/ml/check.py "${1:-./onnxcc}"
