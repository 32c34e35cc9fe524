#!/bin/bash
# cuda_device.sh: the CUDA target on a real GPU, in one run (the device
# tool lends one for minutes): the zoo against ONNX Runtime, a sample of the
# node suite, compute-sanitizer, and batch-1 latency against PyTorch eager
# and torch.compile. Prepared here (make cuda-device-prep: build/dev holds a
# static onnxcc, the zoo's models with their large weights stripped by
# tools/strip_weights.py, their inputs, a node-suite sample), run there:
#
#   bench/cuda_device.sh OUTDIR
#
# On the GPU machine the stripped weights are drawn again (same scale) and
# ONNX Runtime (CPU) gives the references. Writes OUTDIR/*.txt, *.json.
# ONLY="resnet18 mobilenet_v2 bert_encoder": those models, the zoo check and
# the latency only (no sanitizer, no suite). First, tests/cuda_emu/test_emu.cu
# built by nvcc runs on the GPU: its tensor-core checks prove ox_mma_tf32's
# fragment layout (the one the emulation assumes) on the hardware. Then the
# benchmarked models also as --tf32 and as f16 (tools/to_half.py), each
# against ONNX Runtime's f32 outputs at 1e-2 normwise, with --cuda-layout
# nchw (the NCHW kernels, against the default NHWC) at 1e-4, mobilenet_v2
# with --skip dwpw (mobilenet_v2+nodw: its depthwise Convs as kernels of
# their own, against the default, which computes them in the pointwise
# Convs) at 1e-4, and the int8
# resnet18 (build/dev/int8) against the C target's program built there:
# the same bytes (integer arithmetic).
# Then net --profile of each benchmarked program: where its time goes. And
# tests/e2e/dynslice (run-time dims on kernels), tests/e2e/ctrl (If, Loop,
# Scan on the host; the If's branches CUDA Graphs) and tests/e2e/nms
# (NonMaxSuppression's kernels, f32 and f16) against the C target, under
# memcheck, with ctrl's and nms's device times. Then the decoders
# (bench/cuda_decoders.sh: make_decoder.py's ~100M ones, greedy decoding
# by examples/generate/generate.c against their PyTorch twins, eager and
# torch.compile; OUT/decoders.txt). ONLY=decoders: that section alone.
set -u
cd "$(dirname "$0")/.." || exit 2
export ONLY=${ONLY:-}
OUT=${1:-build/dev/out}
D=build/dev
W=/tmp/oxdev
mkdir -p "$OUT" "$W"
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
export NVCC
log() { echo "== $(date +%T) $*"; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; "$NVCC" --version | tail -1; } | tee "$OUT/gpu.txt"
cc -O2 -o "$D/oxcmp" tests/e2e/oxcmp.c -lm && cp "$D/oxcmp" tests/e2e/oxcmp || exit 2
if [ "$ONLY" = decoders ]; then
	W=$W bench/cuda_decoders.sh run "$OUT" "$D"
	log "done"
	exit 0
fi

# ---- the emulation's checks, for real: mma fragments, TF32 rounding ----
log "test_emu"
"$NVCC" -std=c++17 -arch=sm_90 -I runtime_min -o "$W/test_emu" tests/cuda_emu/test_emu.cu > "$OUT/test_emu.txt" 2>&1 &&
	"$W/test_emu" >> "$OUT/test_emu.txt" 2>&1
echo "test_emu rc=$?" >> "$OUT/test_emu.txt"
grep -v '^ok ' "$OUT/test_emu.txt"

# ---- models: weights drawn, references by ONNX Runtime ----
log "models"
python3 - "$D" "$W" <<'PY' > "$OUT/refs.txt" 2>&1
import os, subprocess, sys
import numpy as np, onnxruntime as ort
D, W = sys.argv[1], sys.argv[2]
only = os.environ.get("ONLY", "").split()
for f in sorted(os.listdir(D + "/models")):
    if not f.endswith(".onnx"):
        continue
    m = f[:-5]
    if only and m not in only:
        continue
    os.makedirs(f"{W}/{m}/ref", exist_ok=True)
    subprocess.check_call(["python3", "tools/strip_weights.py", "fill", f"{D}/models/{f}", f"{W}/{m}/model.onnx"])
    x = np.load(f"{D}/models/{m}_input_0.npy")
    s = ort.InferenceSession(f"{W}/{m}/model.onnx", providers=["CPUExecutionProvider"])
    outs = s.run(None, {s.get_inputs()[0].name: x})
    with open(f"{W}/{m}/ref/amax.txt", "w") as fh:
        for k, o in enumerate(outs):
            np.save(f"{W}/{m}/ref/output_{k}.npy", o)
            fh.write("%r\n" % float(np.abs(o).max() if o.size else 0.0))
    print(m, "ok", [o.shape for o in outs])
PY
tail -n 3 "$OUT/refs.txt"

# ---- the zoo: onnxcc --target cuda, nvcc for this GPU, run, compare (1e-4 normwise) ----
log "zoo build"
build() {
	m=$1
	fl=; [ "$m" = dynbatch ] && fl="--shape input=2x3x32x32"
	# shellcheck disable=SC2086
	$D/onnxcc $W/$m/model.onnx -o $W/$m/net.c --target cuda --main $fl > $W/$m/compile.log 2>&1 &&
		"$NVCC" -std=c++17 -O3 -arch=sm_90 -o $W/$m/net $W/$m/net.cu $W/$m/net_weights.c $W/$m/net_main.c >> $W/$m/compile.log 2>&1
	echo "$m build rc=$?"
}
export -f build; export D W
models=${ONLY:-$(ls $D/models/*.onnx | xargs -n1 basename | sed 's/.onnx$//')}
export ONLY
# the benchmarked models also with tensor cores: m+tf32 (--tf32), m+f16;
# m+nchw (--cuda-layout nchw: NCHW throughout, against the default NHWC);
# mobilenet_v2+nodw (--skip dwpw)
variant() {
	v=$1 m=${1%+*} k=${1#*+}
	mkdir -p $W/$v
	if [ $k = f16 ]; then
		python3 tools/to_half.py $W/$m/model.onnx $W/$v/model.onnx --input $D/models/${m}_input_0.npy $W/$v/x.npy &&
			$D/onnxcc $W/$v/model.onnx -o $W/$v/net.c --target cuda --main > $W/$v/compile.log 2>&1
	else
		cp $D/models/${m}_input_0.npy $W/$v/x.npy
		fl=--tf32; [ $k = nchw ] && fl="--cuda-layout nchw"; [ $k = nodw ] && fl="--skip dwpw"
		$D/onnxcc $W/$m/model.onnx -o $W/$v/net.c --target cuda --main $fl > $W/$v/compile.log 2>&1
	fi && "$NVCC" -std=c++17 -O3 -arch=sm_90 -o $W/$v/net $W/$v/net.cu $W/$v/net_weights.c $W/$v/net_main.c >> $W/$v/compile.log 2>&1
	echo "$v build rc=$?"
}
export -f variant
BENCH=${BENCH_MODELS:-resnet18 mobilenet_v2 bert_encoder}
variants=$(for m in $BENCH; do echo $m+tf32 $m+f16 $m+nchw; [ $m = mobilenet_v2 ] && echo $m+nodw; done)
{ echo $models | tr ' ' '\n' | xargs -P 12 -I{} bash -c 'build {}'
  echo $variants | tr ' ' '\n' | xargs -P 6 -I{} bash -c 'variant {}'; } > "$OUT/zoo_build.txt" 2>&1
cat "$OUT/zoo_build.txt"
log "zoo run"
for m in $models; do
	st=ok err=
	if [ ! -x $W/$m/net ]; then st=BUILD-FAIL
	elif ! timeout 120 $W/$m/net $D/models/${m}_input_0.npy -o $W/$m/out > $W/$m/run.log 2>&1; then st=RUN-FAIL
	else
		k=0
		while read -r amax; do
			atol=$(awk -v a="$amax" 'BEGIN { printf "%.9g", 1e-4 * (a > 0 ? a : 1) }')
			r=$($D/oxcmp --rtol 0 --atol "$atol" $W/$m/out/output_$k.npy $W/$m/ref/output_$k.npy 2>&1) || st=MISMATCH
			err="$err $(echo "$r" | grep -o 'max_abs=[^ ]*') amax=$amax;"
			k=$((k + 1))
		done < $W/$m/ref/amax.txt
	fi
	echo "$m $st$err"
	[ "$st" = ok ] || tail -n 5 $W/$m/compile.log $W/$m/run.log 2>/dev/null | sed 's/^/    /'
done | tee "$OUT/zoo.txt"
for v in $variants; do
	m=${v%+*} st=ok
	if [ ! -x $W/$v/net ]; then st=BUILD-FAIL
	elif ! timeout 120 $W/$v/net $W/$v/x.npy -o $W/$v/out > $W/$v/run.log 2>&1; then st=RUN-FAIL
	else
		st=$(python3 -c '
import sys, numpy as np
g, w = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64)
e, a = np.abs(g - w).max(), np.abs(w).max()
print(("ok" if e <= float(sys.argv[3]) * a else "MISMATCH") + f" max_abs={e:.3g} amax={a:.3g}")' $W/$v/out/output_0.npy \
			$W/$m/ref/output_0.npy "$(case ${v#*+} in nchw | nodw) echo 1e-4 ;; *) echo 1e-2 ;; esac)")
	fi
	echo "$v $st"
done | tee -a "$OUT/zoo.txt"

# ---- int8: the CUDA program's output is the C target's, byte for byte ----
if [ -f $D/int8/resnet18_int8.onnx ]; then
	q=$W/int8 && mkdir -p $q/c $q/cu
	st=ok
	if ! $D/onnxcc $D/int8/resnet18_int8.onnx -o $q/c/net.c --build > $q/build.log 2>&1 ||
		! { $D/onnxcc $D/int8/resnet18_int8.onnx -o $q/cu/net.c --target cuda --main &&
		"$NVCC" -std=c++17 -O3 -arch=sm_90 -o $q/cu/net $q/cu/net.cu $q/cu/net_weights.c $q/cu/net_main.c; } >> $q/build.log 2>&1; then
		st=BUILD-FAIL
	elif ! $q/c/net $D/int8/input_0.npy -o $q/c/out > /dev/null 2>&1 || ! $q/cu/net $D/int8/input_0.npy -o $q/cu/out > /dev/null 2>&1; then
		st=RUN-FAIL
	elif ! cmp -s $q/c/out/output_0.npy $q/cu/out/output_0.npy; then
		st=DIFFERS
	fi
	echo "resnet18_int8 $st"
fi | tee -a "$OUT/zoo.txt"

# ---- run-time dims and control flow (tests/e2e/dynslice, tests/e2e/ctrl):
# the CUDA program against the C target's built here, 1e-5 normwise, and
# under compute-sanitizer memcheck ----
vs_c_dev() { # NAME MODEL FLAGS INPUT...
	local nm=$1 mdl=$2 fl=$3 st=ok
	shift 3
	local q=$W/vs_$nm && rm -rf $q && mkdir -p $q/c $q/cu
	# shellcheck disable=SC2086
	if ! $D/onnxcc $mdl -o $q/c/net.c --build $fl > $q/build.log 2>&1 ||
		! { $D/onnxcc $mdl -o $q/cu/net.c --target cuda --main $fl &&
		"$NVCC" -std=c++17 -O3 -arch=sm_90 -o $q/cu/net $q/cu/net.cu $q/cu/net_weights.c $q/cu/net_main.c; } >> $q/build.log 2>&1; then
		st=BUILD-FAIL
	elif ! $q/c/net "$@" -o $q/c/out > /dev/null 2>&1 || ! $q/cu/net "$@" -o $q/cu/out > $q/run.log 2>&1; then
		st=RUN-FAIL
	else
		for f in $q/c/out/output_*.npy; do
			$D/oxcmp --rtol 1e-5 --atol 1e-5 $q/cu/out/$(basename $f) $f > /dev/null 2>&1 || st=MISMATCH
		done
		timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $q/cu/net "$@" -o $q/cu/san > $q/memcheck.txt 2>&1 ||
			st="$st memcheck-rc=$?"
	fi
	echo "$nm $st"
}
log "dyn and ctrl"
{ vs_c_dev dynslice tests/e2e/dynslice/dynslice.onnx "--dim N=1..4 --dim H=4..12 --dim W=4..12" \
	tests/e2e/dynslice/dynslice_x.npy tests/e2e/dynslice/dynslice_f.npy tests/e2e/dynslice/dynslice_im.npy
  vs_c_dev ctrl tests/e2e/ctrl/ctrl.onnx "--dim T=2..8 --max s=80" tests/e2e/ctrl/ctrl_x.npy tests/e2e/ctrl/ctrl_n.npy
  for m in nms nms_f16; do
	vs_c_dev $m tests/e2e/nms/$m.onnx "" tests/e2e/nms/nms_boxes.npy tests/e2e/nms/nms_scores.npy tests/e2e/nms/nms_per.npy
  done
  # their device times (the If's branches and NonMaxSuppression's kernels)
  for m in ctrl nms; do
	echo "$m $($W/vs_$m/cu/net --bench 50 $( [ $m = ctrl ] && echo tests/e2e/ctrl/ctrl_x.npy tests/e2e/ctrl/ctrl_n.npy ||
		echo tests/e2e/nms/nms_boxes.npy tests/e2e/nms/nms_scores.npy tests/e2e/nms/nms_per.npy) -o $W/vs_$m/b 2>&1 | grep bench)"
  done
} | tee "$OUT/dyn_ctrl.txt"

# ---- batch-1 latency: onnxcc (CUDA events, graphs) and PyTorch, interleaved ----
log "bench"
for r in 1 2; do
	for m in $BENCH; do
		[ -x $W/$m/net ] && echo "onnxcc $m round $r $($W/$m/net --bench 200 $D/models/${m}_input_0.npy | grep bench)"
		for k in tf32 f16 nchw nodw; do
			[ -x $W/$m+$k/net ] && echo "onnxcc $m+$k round $r $($W/$m+$k/net --bench 200 $W/$m+$k/x.npy | grep bench)"
		done
		[ $m = resnet18 ] && [ -x $W/int8/cu/net ] &&
			echo "onnxcc resnet18+int8 round $r $($W/int8/cu/net --bench 200 $D/int8/input_0.npy | grep bench)"
	done
	[ $r = 1 ] && timeout 240 python3 bench/cuda_torch.py --models resnet18,mobilenet_v2,bert_encoder --dtypes fp32 \
		--modes eager,compile --iters 100 --warmup 20 --rounds 3 --json "$OUT/torch.json" 2>&1 | grep -v Warning
	[ $r = 2 ] && [ -z "${SKIP_FP16:-}" ] && timeout 60 python3 bench/cuda_torch.py --models resnet18,mobilenet_v2,bert_encoder --dtypes fp16 \
		--modes eager --iters 100 --warmup 20 --rounds 3 --json "$OUT/torch_fp16.json" 2>&1 | grep -v Warning
done | tee "$OUT/bench.txt"
# per-function device times (net --profile: CUDA events around each
# function's launches, no graph), the slowest ten of each benchmarked program
log "profile"
for v in $(for m in $BENCH; do echo $m $m+f16 $m+nchw; [ $m = mobilenet_v2 ] && echo $m+nodw; done); do
	x=$D/models/${v}_input_0.npy; [ "$v" = "${v%+*}" ] || x=$W/$v/x.npy
	[ -x $W/$v/net ] && $W/$v/net --bench 20 --profile $x > "$OUT/profile_$v.txt" 2>&1
	echo "== $v"; sed -n 2,13p "$OUT/profile_$v.txt"
done | tee "$OUT/profile.txt"

[ -n "$ONLY" ] && { log "done"; exit 0; }
# ---- decoders: greedy decoding against the PyTorch twins (3 to 4 minutes) ----
W=$W bench/cuda_decoders.sh run "$OUT" "$D"
SAN_MODELS=${SAN_MODELS:-squeezenet1_1 resnet18 mobilenet_v2 bert_encoder}
# ---- compute-sanitizer on the zoo's CNNs and the encoder ----
log "sanitize"
for m in $SAN_MODELS; do
	[ -x $W/$m/net ] || continue
	timeout 45 compute-sanitizer --tool memcheck --error-exitcode 9 $W/$m/net $D/models/${m}_input_0.npy -o $W/$m/san \
		> $OUT/memcheck_$m.txt 2>&1; echo "memcheck $m rc=$? $(grep -c 'ERROR SUMMARY: 0' $OUT/memcheck_$m.txt)"
done | tee "$OUT/sanitize.txt"
for m in squeezenet1_1; do
	timeout 45 compute-sanitizer --tool racecheck --error-exitcode 9 $W/$m/net $D/models/${m}_input_0.npy -o $W/$m/san2 \
		> $OUT/racecheck_$m.txt 2>&1; echo "racecheck $m rc=$? $(grep 'RACECHECK SUMMARY\|ERROR SUMMARY' $OUT/racecheck_$m.txt | head -2)"
done | tee -a "$OUT/sanitize.txt"

# ---- a sample of the node suite (every 6th expected pass) ----
log "suite"
ONNX_TESTS=$D/suite OXC_SUITES=node OXC_TARGET=cuda OXC_ONNXCC=$D/onnxcc OXC_HINTS=0 ONNXCC=$D/onnxcc \
	timeout ${SUITE_TIMEOUT:-100} tests/e2e/conformance.sh -j 16 -o "$OUT/suite.tsv" > "$OUT/suite.txt" 2>&1
tail -n 30 "$OUT/suite.txt"
log "done"
