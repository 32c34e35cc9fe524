#!/bin/bash
# int8_bench.sh: int8 resnet18 (the zoo's, quantized by
# examples/digits/quantize.py) before and after a change to the integer
# kernels, against the fp32 model and ONNX Runtime, on one thread. A
# benchmark, not a test: it prints times and checks only that the two
# onnxcc builds of the int8 model give the same bytes.
#
#   bench/int8_bench.sh [-d DIR] [-r ROUNDS] [-n RUNS] [--cpu NAME] BEFORE_ONNXCC
#
# BEFORE_ONNXCC is another tree's onnxcc (e.g. the main branch's); this
# tree's ./onnxcc is "after" and also builds the fp32 model. DIR (default
# build/int8-bench) gets the calibration (8 copies of
# build/zoo/resnet18/input_0.npy plus Gaussian noise of 0.1, seed 0), the
# int8 model and the three builds (--cpu NAME, default native, --main
# --build). ROUNDS (default 5) interleaved rounds, each one process per
# side running `--bench RUNS` (default 10: a warm-up, then RUNS timed
# runs, the median printed); ONNX Runtime through tools/ort_run.js
# --bench RUNS. Prints each round and the median of the rounds' medians.
set -eu
cd "$(dirname "$0")/.."
D=build/int8-bench R=5 N=10 CPU=native
while [ $# -gt 1 ]; do
	case $1 in
	-d) D=$2; shift 2 ;;
	-r) R=$2; shift 2 ;;
	-n) N=$2; shift 2 ;;
	--cpu) CPU=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# = 1 ] || { echo "usage: bench/int8_bench.sh [-d DIR] [-r ROUNDS] [-n RUNS] [--cpu NAME] BEFORE_ONNXCC" >&2; exit 2; }
BEFORE=$1 PY=/usr/bin/python3 Z=build/zoo/resnet18
mkdir -p "$D"
$PY - "$Z/input_0.npy" "$D/calib.npy" <<'EOF'
import sys
import numpy as np
x = np.load(sys.argv[1])
r = np.random.default_rng(0)
np.save(sys.argv[2], np.concatenate([x + 0.1 * r.standard_normal(x.shape).astype(np.float32)
                                     for _ in range(8)]).astype(np.float32))
EOF
$PY examples/digits/quantize.py "$Z/model.onnx" "$D/r18_int8.onnx" "$D/calib.npy"
mkdir -p "$D/before" "$D/after" "$D/fp32"
"$BEFORE" "$D/r18_int8.onnx" -o "$D/before/net.c" --cpu "$CPU" --main --build > "$D/before/build.log" 2>&1
./onnxcc "$D/r18_int8.onnx" -o "$D/after/net.c" --cpu "$CPU" --main --build > "$D/after/build.log" 2>&1
./onnxcc "$Z/model.onnx" -o "$D/fp32/net.c" --cpu "$CPU" --main --build > "$D/fp32/build.log" 2>&1
for s in before after; do "$D/$s/net" "$Z/input_0.npy" -o "$D/$s/out" > /dev/null; done
if cmp "$D/before/out/output_0.npy" "$D/after/out/output_0.npy"; then
	echo "int8-bench: before and after give the same bytes"
else
	echo "int8-bench: FAIL: before and after differ"; exit 1
fi
med() { grep -o 'median_ms=[0-9.]*' | cut -d= -f2; }
: > "$D/times.txt"
for r in $(seq 1 "$R"); do
	for s in before after fp32 ort; do
		if [ $s = ort ]; then
			t=$(node tools/ort_run.js "$D/r18_int8.onnx" "$Z/input_0.npy" -o "$D/ort" --bench "$N" 2>&1 | med)
		else
			t=$("$D/$s/net" --bench "$N" "$Z/input_0.npy" -o "$D/$s/out" 2>&1 | med)
		fi
		echo "round $r $s ${t:-?} ms"
		echo "$s ${t:-nan}" >> "$D/times.txt"
	done
done
for s in before after fp32 ort; do
	awk -v s=$s '$1 == s { v[n++] = $2 } END {
		for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		printf "int8-bench: %-6s median of %d rounds %.1f ms (min %.1f, max %.1f)\n", s, n,
		       n % 2 ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1] }' "$D/times.txt"
done
