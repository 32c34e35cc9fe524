#!/bin/sh
# resnet18_int8.sh: DIR/int8/resnet18_int8.onnx, the zoo's resnet18
# quantized by examples/digits/quantize.py (int8 QDQ), calibrated on 8
# copies of DIR/resnet18/input_0.npy with normal noise (sd 0.1, seed 0)
# added: DIR/int8/calib.npy. For make cuda and make arm64.
#
#   tests/e2e/quant/resnet18_int8.sh DIR     (exit 1 if quantizing fails)
set -u
cd "$(dirname "$0")/../../.." || exit 2
DIR=${1:-build/zoo}
PY=${PYTHON:-/usr/bin/python3}
mkdir -p "$DIR/int8" || exit 2
"$PY" - "$DIR/resnet18/input_0.npy" "$DIR/int8/calib.npy" <<'PYEOF' || exit 1
import sys
import numpy as np
x = np.load(sys.argv[1])
r = np.random.default_rng(0)
np.save(sys.argv[2], np.concatenate([x + 0.1 * r.standard_normal(x.shape).astype(np.float32)
                                     for _ in range(8)]).astype(np.float32))
PYEOF
"$PY" examples/digits/quantize.py "$DIR/resnet18/model.onnx" "$DIR/int8/resnet18_int8.onnx" \
	"$DIR/int8/calib.npy" > "$DIR/int8/quantize.log" 2>&1
