#!/bin/bash
# int8_bench.sh: int8 models against onnxcc's own fp32 programs and ONNX
# Runtime's int8, interleaved on this machine (make bench-int8). A
# benchmark, not a test: it prints times and writes the table; it checks
# only that each int8 program runs and reports its largest difference from
# ONNX Runtime's int8 output.
#
#   bench/int8_bench.sh [-d DIR] [-r ROUNDS] [-n RUNS] [--cpu NAME] [--md FILE]
#
# Models (the zoo's, build/zoo/NAME/model.onnx and input_0.npy):
#   resnet18, mobilenet_v2, efficientnet_b0
#                           quantize_static's QDQ form (examples/digits/
#                           quantize.py: per-channel int8 weights, int8
#                           activations), calibrated on 8 copies of the
#                           input plus Gaussian noise of 0.1 (seed 0)
#   bert_encoder            quantize_dynamic's form (tools/quantize_dynamic.py:
#                           DynamicQuantizeLinear -> MatMulInteger)
# Each is compiled int8 and fp32 with --cpu NAME (default native) --build.
# For 1 and 2 threads (net --threads T, ORT's intra-op threads T), ROUNDS
# (default 5) rounds, each running every program once in turn (`--bench
# RUNS`, default 20: a warm-up, then RUNS timed runs, the median); the
# table gives the median of the rounds' medians, and the ratios the goals
# of issue 42 name: int8 / own fp32 <= 0.6, int8 / ORT int8 <= 0.8.
# --md FILE writes the table and the run's facts as FILE.
set -eu
cd "$(dirname "$0")/.."
D=build/int8-bench R=5 N=20 CPU=native MD=
while [ $# -gt 0 ]; do
	case $1 in
	-d) D=$2; shift 2 ;;
	-r) R=$2; shift 2 ;;
	-n) N=$2; shift 2 ;;
	--cpu) CPU=$2; shift 2 ;;
	--md) MD=$2; shift 2 ;;
	*) echo "usage: bench/int8_bench.sh [-d DIR] [-r ROUNDS] [-n RUNS] [--cpu NAME] [--md FILE]" >&2; exit 2 ;;
	esac
done
PY=/usr/bin/python3 Z=build/zoo
MODELS="resnet18 mobilenet_v2 efficientnet_b0 bert_encoder"
mkdir -p "$D"
med() { grep -o 'median_ms=[0-9.]*' | cut -d= -f2; }
for m in $MODELS; do
	o=$D/$m
	mkdir -p "$o/i8" "$o/f32"
	if [ $m = bert_encoder ]; then
		[ -f "$o/int8.onnx" ] || $PY tools/quantize_dynamic.py "$Z/$m/model.onnx" "$o/int8.onnx"
	elif [ ! -f "$o/int8.onnx" ]; then
		$PY - "$Z/$m/input_0.npy" "$o/calib.npy" <<'EOF'
import sys
import numpy as np
x = np.load(sys.argv[1])
r = np.random.default_rng(0)
np.save(sys.argv[2], np.concatenate([x + 0.1 * r.standard_normal(x.shape).astype(np.float32)
                                     for _ in range(8)]).astype(np.float32))
EOF
		$PY examples/digits/quantize.py "$Z/$m/model.onnx" "$o/int8.onnx" "$o/calib.npy" > "$o/quantize.log" 2>&1
	fi
	./onnxcc "$o/int8.onnx" -o "$o/i8/net.c" --cpu "$CPU" --build > "$o/i8/build.log" 2>&1
	./onnxcc "$Z/$m/model.onnx" -o "$o/f32/net.c" --cpu "$CPU" --build > "$o/f32/build.log" 2>&1
	"$o/i8/net" "$Z/$m/input_0.npy" -o "$o/i8/out" > /dev/null
	"$o/f32/net" "$Z/$m/input_0.npy" -o "$o/f32/out" > /dev/null
	node tools/ort_run.js "$o/int8.onnx" "$Z/$m/input_0.npy" -o "$o/ort" > /dev/null 2>&1
	# each int8 output against the fp32 one (max |d| / max |fp32|): the
	# quantization's error, onnxcc's and ONNX Runtime's side by side
	$PY -c "import numpy as np, sys
a, b, f = (np.load(p) for p in sys.argv[1:4])
e = lambda x: abs(x - f).max() / abs(f).max()
print('onnxcc %.3g, ONNX Runtime %.3g (the two int8 outputs differ by %.3g)' % (e(a), e(b), abs(a - b).max() / abs(f).max()))" \
		"$o/i8/out/output_0.npy" "$o/ort/output_0.npy" "$o/f32/out/output_0.npy" > "$o/diff.txt"
	echo "int8-bench: $m: compiled; int8 against fp32: $(cat "$o/diff.txt")"
done
: > "$D/times.txt"
for t in 1 2; do
	for r in $(seq 1 "$R"); do
		for m in $MODELS; do
			o=$D/$m
			a=$("$o/i8/net" --threads $t --bench "$N" "$Z/$m/input_0.npy" -o "$o/i8/out" 2>&1 | med)
			b=$("$o/f32/net" --threads $t --bench "$N" "$Z/$m/input_0.npy" -o "$o/f32/out" 2>&1 | med)
			c=$(node tools/ort_run.js "$o/int8.onnx" "$Z/$m/input_0.npy" -o "$o/ort" --bench "$N" --threads $t 2>/dev/null | med)
			echo "$m $t ${a:-nan} ${b:-nan} ${c:-nan}" >> "$D/times.txt"
			echo "round $r, $t thread(s): $m int8 ${a:-?} ms, fp32 ${b:-?} ms, ONNX Runtime int8 ${c:-?} ms"
		done
	done
done
# the medians of the rounds: model threads int8 fp32 ort
awk 'function md(s,   n, v, i, j, x) { n = split(s, v, " ");
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { x = v[i]; v[i] = v[j]; v[j] = x }
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
	{ k = $1 " " $2; a[k] = a[k] " " $3; b[k] = b[k] " " $4; c[k] = c[k] " " $5; if (!(k in seen)) { seen[k] = 1; order[++no] = k } }
	END { for (i = 1; i <= no; i++) { k = order[i]; printf "%s %.2f %.2f %.2f\n", k, md(a[k]), md(b[k]), md(c[k]) } }' \
	"$D/times.txt" > "$D/medians.txt"
table() {
	echo "| model | threads | onnxcc int8 ms | onnxcc fp32 ms | ONNX Runtime int8 ms | int8 / own fp32 (goal <= 0.6) | int8 / ORT int8 (goal <= 0.8) |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
	awk '{ r1 = $3 / $4; r2 = $3 / $5
		printf "| %s | %d | %.2f | %.2f | %.2f | %.2f %s | %.2f %s |\n", $1, $2, $3, $4, $5,
			r1, r1 <= 0.6 ? "(met)" : "(not met)", r2, r2 <= 0.8 ? "(met)" : "(not met)" }' "$D/medians.txt"
}
table
if [ -n "$MD" ]; then
	{
		echo "# int8 benchmarks"
		echo
		echo "Written by \`make bench-int8\` (bench/int8_bench.sh) on $(date -u +%Y-%m-%d), commit"
		echo "$(git rev-parse --short HEAD 2>/dev/null || echo unknown), on this machine ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
		echo "$(nproc) cores), \`--cpu $CPU\`. Do not edit by hand: rerun it."
		echo
		echo "- resnet18, mobilenet_v2 and efficientnet_b0: the zoo's models in quantize_static's QDQ form"
		echo "  (examples/digits/quantize.py: int8 weights per output channel, int8"
		echo "  activations); bert_encoder in quantize_dynamic's form"
		echo "  (tools/quantize_dynamic.py: DynamicQuantizeLinear -> MatMulInteger)."
		echo "- Each row: the median of $R interleaved rounds, each the median of $N runs"
		echo "  after a warm-up; the onnxcc programs with \`--threads T\`, ONNX Runtime"
		echo "  (npm, tools/ort_run.js) with T intra-op threads, in the same rounds."
		echo "- Goals (issue 42): int8 at most 0.6x onnxcc's own fp32 time and at most"
		echo "  0.8x ONNX Runtime's int8 time."
		echo
		table
		echo
		echo "Accuracy: each int8 program's output against onnxcc's fp32 output (largest"
		echo "difference over the largest fp32 value), onnxcc's and ONNX Runtime's: the"
		echo "quantization's error, which the two share; each integer kernel is within"
		echo "one quantization step of ONNX Runtime (\`make int8\`)."
		echo
		for m in $MODELS; do echo "- $m: $(cat "$D/$m/diff.txt")"; done
	} > "$MD"
	echo "int8-bench: wrote $MD"
fi
