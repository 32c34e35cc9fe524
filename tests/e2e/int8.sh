#!/bin/sh
# int8.sh: int8 QDQ models compile to integer kernels (make int8).
#
# For examples/digits/digits_int8.onnx, tests/e2e/quant/mix_int8.onnx and
# mix_uint8.onnx (uint8 activations; all written by
# examples/digits/quantize.py, mix by make_mix.py):
#  (a) compiles with --cpu generic, x86-64-v3 (when this CPU has AVX2 and
#      FMA) and native, builds with --main --build, runs 8 inputs and
#      compares with ONNX Runtime (tools/ort_run.js): every output element
#      within one quantization step of the output (|diff| <= its scale);
#  (b) the integer pass fired: in --dump-ir=plan no node computes in f32
#      but the QuantizeLinear of a graph input and the DequantizeLinear of
#      a graph output (tests/e2e/quant/check.py ir);
#      and its integer kernels name no float or double (check.py nofloat);
#  (c) prints arena and weight bytes (--report) against the fp32 model's
#      and fails if the int8 weights are more than 0.3x the fp32 weights.
# And (d) the 24 convolutions of tests/e2e/quant/make_convs.py (every
# shape the packed kernel, templates/qconv.c, takes): each on the packed
# kernel, within one step of ONNX Runtime on 2 inputs, and the same bytes
# with every --cpu above and with --threads 2; likewise the 6 unary ops of
# tests/e2e/quant/make_luts.py on their 256-byte tables (QLut), and the 5
# models of tests/e2e/quant/make_fused.py, whose DequantizeLinear, float
# ops and QuantizeLinear run as one fused loop (opt/ewfuse.c), also the
# same bytes as with --skip ewfuse. And (e) dynamic quantization
# as ONNX Runtime's quantize_dynamic writes it (tools/quantize_dynamic.py:
# DynamicQuantizeLinear -> MatMulInteger) of tests/e2e/quant/make_dynq.py's
# block, compiled for --dim batch=1..4 --dim seq=1..64 (run-time dims) for
# C (native, generic) and CUDA (--cuda-emu), run at 3 shapes: within 1% of
# the output's largest value from ONNX Runtime (an activation's
# quantization step or two), MatMulInteger on the packed integer GEMM.
set -eu
cd "$(dirname "$0")/../.."
B=${B:-build}/int8
CHECK="/usr/bin/python3 tests/e2e/quant/check.py"
NIN=8
rm -rf "$B"
mkdir -p "$B"
cpus="generic"
if grep -q ' avx2 ' /proc/cpuinfo && grep -q ' fma ' /proc/cpuinfo; then cpus="$cpus x86-64-v3"; fi
cpus="$cpus native"
fail=0
# report FIELD FILE: the number after FIELD in a --report
report() { awk -v f="$1" '$1 == f { print $2; exit }' "$2"; }
for pair in examples/digits/digits_int8.onnx:examples/digits/digits.onnx \
	    tests/e2e/quant/mix_int8.onnx:tests/e2e/quant/mix.onnx \
	    tests/e2e/quant/mix_uint8.onnx:tests/e2e/quant/mix.onnx; do
	q=${pair%%:*} f=${pair#*:}
	name=$(basename "$q" .onnx)
	d=$B/$name
	mkdir -p "$d/in"
	$CHECK inputs "$q" $NIN "$d/in"
	i=0
	while [ $i -lt $NIN ]; do
		node tools/ort_run.js "$q" "$d/in/in$i.npy" -o "$d/ref$i" >/dev/null
		i=$((i + 1))
	done
	# (b)
	./onnxcc "$q" -o "$d/ir.c" --dump-ir=plan > "$d/ir.txt"
	if ! $CHECK ir "$d/ir.txt"; then
		echo "int8: $name: FAIL: the integer pass left float arithmetic"
		fail=1
	fi
	# (a)
	for cpu in $cpus; do
		mkdir -p "$d/$cpu"
		./onnxcc "$q" -o "$d/$cpu/net.c" --cpu "$cpu" --main --build > "$d/$cpu/build.log" 2>&1 || {
			echo "int8: $name --cpu $cpu: FAIL: build"; cat "$d/$cpu/build.log"; fail=1; continue; }
		worst=0
		i=0
		while [ $i -lt $NIN ]; do
			"$d/$cpu/net" "$d/in/in$i.npy" -o "$d/$cpu/out$i" >/dev/null
			if ! r=$($CHECK cmp "$q" "$d/$cpu/out$i/output_0.npy" "$d/ref$i/output_0.npy"); then
				echo "int8: $name --cpu $cpu input $i: FAIL: $r steps from ONNX Runtime"
				fail=1
			fi
			worst=$(echo "$worst $r" | awk '{ print ($2 > $1) ? $2 : $1 }')
			i=$((i + 1))
		done
		echo "int8: $name --cpu $cpu: $NIN inputs, largest difference from ONNX Runtime $worst steps"
		if ! $CHECK nofloat "$d/$cpu/net.c"; then
			echo "int8: $name --cpu $cpu: FAIL: float in the integer kernels"
			fail=1
		fi
	done
	# (c)
	./onnxcc "$q" -o "$d/r8.c" --report > "$d/r8.txt"
	./onnxcc "$f" -o "$d/r32.c" --report > "$d/r32.txt"
	a8=$(report arena "$d/r8.txt") a32=$(report arena "$d/r32.txt")
	w8=$(report weights "$d/r8.txt") w32=$(report weights "$d/r32.txt")
	echo "int8: $name: arena $a8 bytes (fp32 $a32), weights $w8 bytes (fp32 $w32)"
	if [ $((w8 * 10)) -gt $((w32 * 3)) ]; then
		echo "int8: $name: FAIL: int8 weights are more than 0.3x the fp32 weights"
		fail=1
	fi
done
# (d)
C=$B/convs
/usr/bin/python3 tests/e2e/quant/make_convs.py "$C"
/usr/bin/python3 tests/e2e/quant/make_luts.py "$C"
/usr/bin/python3 tests/e2e/quant/make_fused.py "$C"
for q in "$C"/*.onnx; do
	name=$(basename "$q" .onnx)
	d=$C/$name
	mkdir -p "$d/in"
	$CHECK inputs "$q" 2 "$d/in"
	for cpu in $cpus; do
		mkdir -p "$d/$cpu"
		./onnxcc "$q" -o "$d/$cpu/net.c" --cpu "$cpu" --main --build > "$d/$cpu.log" 2>&1 || {
			echo "int8: $name --cpu $cpu: FAIL: build"; cat "$d/$cpu.log"; fail=1; continue; }
	done
	unfused= kernel="integer kernel"
	case $name in
	fused_*)
		# the dequantize, the float ops and the quantize in one loop;
		# the same bytes as their own kernels (--skip ewfuse)
		if ! grep -q 'ox_vf_quant(' "$d/native/net.c"; then
			echo "int8: $name: FAIL: the QuantizeLinear is not in a fused loop"
			fail=1
		fi
		mkdir -p "$d/unfused"
		./onnxcc "$q" -o "$d/unfused/net.c" --cpu native --skip ewfuse --main --build > "$d/unfused.log" 2>&1 || {
			echo "int8: $name --skip ewfuse: FAIL: build"; cat "$d/unfused.log"; fail=1; }
		unfused=" and --skip ewfuse" kernel="fused loop"
		;;
	*)
		if ! grep -q 'ox_qg_tile(&\|ox_qg_dw(&\|ox_qg_lut(' "$d/native/net.c"; then
			echo "int8: $name: FAIL: not on an integer kernel"
			fail=1
		fi
	esac
	worst=0
	for i in 0 1; do
		node tools/ort_run.js "$q" "$d/in/in$i.npy" -o "$d/ref$i" >/dev/null
		for cpu in $cpus; do
			"$d/$cpu/net" "$d/in/in$i.npy" -o "$d/$cpu/out$i" >/dev/null
		done
		for cpu in $cpus; do
			cmp -s "$d/$cpu/out$i/output_0.npy" "$d/native/out$i/output_0.npy" || {
				echo "int8: $name input $i: FAIL: --cpu $cpu and native differ"; fail=1; }
		done
		if [ -n "$unfused" ]; then
			"$d/unfused/net" "$d/in/in$i.npy" -o "$d/unfused/out$i" >/dev/null
			cmp -s "$d/unfused/out$i/output_0.npy" "$d/native/out$i/output_0.npy" || {
				echo "int8: $name input $i: FAIL: the fused loop and --skip ewfuse differ"; fail=1; }
		fi
		"$d/native/net" --threads 2 "$d/in/in$i.npy" -o "$d/t2out$i" >/dev/null
		cmp -s "$d/t2out$i/output_0.npy" "$d/native/out$i/output_0.npy" || {
			echo "int8: $name input $i: FAIL: --threads 2 differs"; fail=1; }
		if ! r=$($CHECK cmp "$q" "$d/native/out$i/output_0.npy" "$d/ref$i/output_0.npy"); then
			echo "int8: $name input $i: FAIL: $r steps from ONNX Runtime"
			fail=1
		fi
		worst=$(echo "$worst $r" | awk '{ print ($2 > $1) ? $2 : $1 }')
	done
	echo "int8: $name: $kernel, --cpu $(echo $cpus | tr ' ' ,), --threads 2$unfused the same bytes, $worst steps from ONNX Runtime"
done
# (e)
E=$B/dynq
mkdir -p "$E"
/usr/bin/python3 tests/e2e/quant/make_dynq.py "$E/f32.onnx"
/usr/bin/python3 tools/quantize_dynamic.py "$E/f32.onnx" "$E/q.onnx"
for tg in native generic cuda; do
	mkdir -p "$E/$tg"
	case $tg in
	cuda) opts="--target cuda --cuda-emu" ;;
	*) opts="--cpu $tg" ;;
	esac
	./onnxcc "$E/q.onnx" -o "$E/$tg/net.c" --dim batch=1..4 --dim seq=1..64 $opts --main --build > "$E/$tg.log" 2>&1 || {
		echo "int8: dynq $tg: FAIL: build"; cat "$E/$tg.log"; fail=1; continue; }
done
if ! grep -q 'ox_qg_mm(' "$E/native/net.c"; then
	echo "int8: dynq: FAIL: MatMulInteger not on the packed integer GEMM"
	fail=1
fi
for shp in 1x1 2x17 4x64; do
	/usr/bin/python3 -c "import numpy as np, sys; b, s = map(int, sys.argv[2].split('x'))
np.save(sys.argv[1], np.random.default_rng(b * 100 + s).standard_normal((b, s, 32)).astype(np.float32))" "$E/x$shp.npy" $shp
	node tools/ort_run.js "$E/q.onnx" "$E/x$shp.npy" -o "$E/ref$shp" >/dev/null
	for tg in native generic cuda; do
		[ -x "$E/$tg/net" ] || continue
		"$E/$tg/net" "$E/x$shp.npy" -o "$E/$tg/out$shp" >/dev/null
		r=$(/usr/bin/python3 -c "import numpy as np, sys
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
print('%.2e %s' % (abs(a - b).max() / abs(b).max(), 'ok' if a.shape == b.shape and abs(a - b).max() <= 0.01 * abs(b).max() else 'FAIL'))" \
			"$E/$tg/out$shp/output_0.npy" "$E/ref$shp/output_0.npy")
		echo "int8: dynq $tg ${shp}x32: largest difference from ONNX Runtime ${r% *} of the largest value"
		[ "${r#* }" = ok ] || { echo "int8: dynq $tg $shp: FAIL"; fail=1; }
	done
done
[ $fail = 0 ] && echo "int8: all passed"
exit $fail
