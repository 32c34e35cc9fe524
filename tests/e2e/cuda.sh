#!/bin/bash
# cuda.sh: the CUDA target (--target cuda) without a GPU.
#
#   tests/e2e/cuda.sh [DIR]          (DIR: the zoo, default build/zoo)
#
# 1. The zoo models of $CUDA_EMU_MODELS (a fixed sample, for time: the
#    models emulation runs in under a minute each) compiled with --target
#    cuda --cuda-emu --build: the same .cu built by the host C++ compiler
#    against runtime_min/ox_cuda_emu.h, run on the CPU, compared with ONNX
#    Runtime's outputs (the zoo's references) at 1e-4 normwise, as the C
#    target's zoo.
# 2. When nvcc is there ($NVCC, else /usr/local/cuda/bin/nvcc): every model
#    of $CUDA_NVCC_MODELS compiled for sm_80 and sm_90 with -Werror
#    all-warnings, and ptxas -v read: no spill in the kernels of
#    codegen/cuda/cuda_*.c (*_kernel), shared memory within 48 KiB. Without
#    nvcc the step says so and the rest runs.
# 3. --weights external through the --main program, C and CUDA (emulated).
# 4. Tensor cores under emulation (ox_mma_f16, ox_mma_bf16, ox_mma_tf32): the models of
#    $CUDA_HALF_MODELS (MODEL:f16 or MODEL:bf16) made f16 or bf16 by
#    tools/to_half.py (bf16 with float32 inputs and outputs: numpy has no
#    bf16), their CUDA program against the C target's on the same model at
#    1e-2 normwise for f16 (11 bits kept), 3e-2 for bf16 (8 bits; the
#    kernels compute in f32 and round once per fused node, the C target
#    once per node), with as many LayerNorm, RMSNorm and Attention kernels
#    as the f32 model's .cu (opt/norm.c and opt/attention.c fuse f16 and
#    bf16 on the GPU); and $CUDA_TF32_MODELS with --tf32 against ONNX Runtime
#    at 1e-2 normwise (TF32 products keep 11 bits).
# 5. int8 models ($CUDA_INT8_MODELS: examples/digits' and tests/e2e/quant's
#    QDQ ones (conv13_int8: 1-D and 3-D convolutions), qop_int8 (the
#    QOperator form: QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger;
#    make_qop.py), and the zoo's resnet18 quantized by
#    examples/digits/quantize.py on 8 noisy copies of its input as
#    bench/int8_bench.sh does), whose integer ops (opt/qdq.c's, QLinearConv
#    and QLinearMatMul among them, and ConvInteger, MatMulInteger) run on
#    the kernels of codegen/cuda/cuda_quant.c: the
#    emulated program's outputs, all of them, byte for byte the C target's
#    on 2 inputs (integer arithmetic, the same requantization); with nvcc,
#    compiled for sm_80 and sm_90 as in 2.
# 6. NHWC (opt/layout.c, codegen/cuda/cuda_nhwc.c): a model of every op the NHWC
#    kernels take, f32, f16, bf16 and with --cuda-layout nchw, against the C
#    target (below).
# 7. Attention (tests/e2e/attn/attn.onnx, attn_past.onnx, attn_mha.onnx):
#    the tiled kernel and the other, past K/V, present outputs, softcap,
#    nn.MultiheadAttention of a run-time batch read sequence first, against
#    the C target (below).
# 8. The API past the --main program (tests/e2e/cuda_api.c,
#    cuda_status.c): a caller's arena, a misaligned one refused; run-time
#    errors of native kernels through the status word (below).
# 9. Run-time dims on kernels (tests/e2e/dynslice, below).
# 10. --profile: per-function device times by CUDA events (below).
# 11. If, Loop, Scan on the host, their bodies on kernels (tests/e2e/ctrl).
# 12. A captured run per input shape (tests/e2e/cuda_graphs.c, below).
# 13. The Reduce, ArgMax/ArgMin, AveragePool, Split, CumSum, Trilu,
#     GatherElements, TopK, Einsum and middle-axis Softmax kernels (tests/e2e/kernels, below).
# 14. The scatters and GatherND (tests/e2e/scatter, below).
# 15. String ops on the host, in stream order (tests/e2e/strings, below).
# 16. Sibling MatMuls as one MatMulSplit (tests/e2e/siblings, below).
# 17. NonMaxSuppression's kernels (tests/e2e/nms, below).
# 18. DFT and STFT kernels (tests/e2e/signal, below).
# 19. A GEMM's norm of its rows in its kernel (opt/gemmnorm.c), a gated
#     MLP's gate and up projections as one product (opt/siblings.c), below.
# 20. A depthwise Conv computed by the pointwise Conv that reads it
#     (opt/dwpw.c, below).
# The models of each step run $JOBS at a time (default: the cores), their
# lines printed in list order. Every emulated model's --report must list no
# node without a parallel kernel (docs/cuda.md).
# Exit status 1 when anything fails.
set -u
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-build/zoo}
ONNXCC=${ONNXCC:-./onnxcc}
OXCMP=${OXCMP:-tests/e2e/oxcmp}
EMU=${CUDA_EMU_MODELS:-squeezenet1_1 mobilenet_v2 bert_encoder transformer_encoder transformer_encoder_op17 dynbatch vit_patch unet_small shufflenet_v2_x1_0 efficientnet_b0 lstm gru}
NV=${CUDA_NVCC_MODELS:-resnet18 resnet50 mobilenet_v2 squeezenet1_1 efficientnet_b0 shufflenet_v2_x1_0 transformer_encoder transformer_encoder_op17 lstm gru dynbatch vit_patch unet_small bert_encoder}
HALF=${CUDA_HALF_MODELS:-squeezenet1_1:f16 bert_encoder:f16 squeezenet1_1:bf16}
TF32=${CUDA_TF32_MODELS:-squeezenet1_1 bert_encoder}
INT8=${CUDA_INT8_MODELS:-examples/digits/digits_int8.onnx tests/e2e/quant/mix_int8.onnx tests/e2e/quant/mix_uint8.onnx tests/e2e/quant/conv13_int8.onnx tests/e2e/quant/qop_int8.onnx $DIR/int8/resnet18_int8.onnx}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
PY=${PYTHON:-/usr/bin/python3}
fail=0
flags_of() { [ "$1" = dynbatch ] && echo "--shape input=2x3x32x32"; }
. tests/each.sh # (each FUNC ITEM...: $JOBS at a time, default the cores)

emu_one() {
	local m=$1
	d=$DIR/$m
	o=$d/cuda-emu
	rm -rf "$o" && mkdir -p "$o"
	st=ok err=
	# shellcheck disable=SC2046
	if ! "$ONNXCC" "$d/model.onnx" -o "$o/net.c" --target cuda --cuda-emu --build --report $(flags_of "$m") > "$o/build.log" 2>&1; then
		st=BUILD-FAIL
	elif grep -Eq "cuda +[1-9][0-9]* nodes? without a parallel kernel" "$o/build.log"; then
		st=SERIAL-NODES
		grep -E "cuda +[1-9][0-9]* nodes? without a parallel kernel" "$o/build.log" | cut -c1-300
	elif ! timeout 600 "$o/net" "$d/input_0.npy" -o "$o/out" > "$o/run.log" 2>&1; then
		st=RUN-FAIL
	else
		k=0
		while read -r amax; do
			atol=$(awk -v a="$amax" 'BEGIN { printf "%.9g", 1e-4 * (a > 0 ? a : 1) }')
			r=$("$OXCMP" --rtol 0 --atol "$atol" "$o/out/output_$k.npy" "$d/ref/output_$k.npy" 2>&1) || st=MISMATCH
			err="$err $(echo "$r" | grep -o 'max_abs=[^ ]*')/$amax"
			k=$((k + 1))
		done < <(tail -n +2 "$d/ref/info.txt")
	fi
	printf 'cuda-emu %-26s %s%s\n' "$m" "$st" "$err"
	if [ "$st" != ok ]; then
		tail -n 5 "$o/build.log" "$o/run.log" 2>/dev/null | sed 's/^/    /'
		return 1
	fi
}
each emu_one $EMU || fail=1

# --weights external: the --main program loads the blob before its first
# run (the loader is shared by both targets), a corrupted blob is refused
d=$DIR/dynbatch
for tgt in c cuda; do
	o=$d/ext-$tgt
	rm -rf "$o" && mkdir -p "$o"
	fl=; [ $tgt = cuda ] && fl="--target cuda --cuda-emu"
	st=ok
	# shellcheck disable=SC2086
	if ! "$ONNXCC" "$d/model.onnx" -o "$o/net.c" --weights external --shape input=2x3x32x32 --build $fl > "$o/build.log" 2>&1; then
		st=BUILD-FAIL
	elif ! "$o/net" "$d/input_0.npy" -o "$o/out" > "$o/run.log" 2>&1 ||
		! "$OXCMP" --rtol 0 --atol 1e-4 "$o/out/output_0.npy" "$d/ref/output_0.npy" >> "$o/run.log" 2>&1; then
		st=RUN-FAIL
	else
		cp "$o/net_weights.bin" "$o/bad.bin" && printf 'X' | dd of="$o/bad.bin" bs=1 seek=100 conv=notrunc 2> /dev/null
		ONNXCC_WEIGHTS=$o/bad.bin "$o/net" "$d/input_0.npy" -o "$o/out2" > "$o/bad.log" 2>&1 && st=BAD-BLOB-ACCEPTED
	fi
	printf 'weights-external %-18s %s\n' "$tgt" "$st"
	[ "$st" = ok ] || { fail=1; tail -n 5 "$o/build.log" "$o/run.log" 2>/dev/null | sed 's/^/    /'; }
done

# normwise: |got - want| <= tol * max|want|
close() { # GOT WANT TOL
	"$PY" -c '
import sys
import numpy as np
g, w, tol = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64), float(sys.argv[3])
e, a = np.abs(g - w).max(), np.abs(w).max()
print(f"max_abs={e:.3g}/{a:.3g}")
sys.exit(0 if g.shape == w.shape and e <= tol * max(a, 1e-30) else 1)
' "$@"
}
have_nvcc=1
[ ! -x "$NVCC" ] && ! command -v "$NVCC" > /dev/null && have_nvcc=0
# nvcc_check CU LOG ARCH...: compile CU for each ARCH with -Werror
# all-warnings and read ptxas -v: no spill in the kernels of codegen/cuda/cuda_*.c
# (*_kernel), shared memory within 48 KiB; prints "" or what failed
nvcc_check() {
	local cu=$1 log=$2 arch bad
	shift 2
	for arch in "$@"; do
		"$NVCC" -std=c++17 -O3 -arch="$arch" -Werror all-warnings -Xptxas -v -c "$cu" -o "${cu%.cu}_$arch.o" \
			> "${log}_$arch.log" 2>&1 || { echo "NVCC-FAIL($arch)"; return; }
		# ptxas: "Compiling entry function 'NAME' for 'sm_90'" then its "spill stores" and "smem" lines
		bad=$(awk '/Compiling entry function/ { k = ($0 ~ /_kernel/) }
			k && /spill stores/ && ($5 + 0 > 0 || $9 + 0 > 0) { print "spill: " $0 }
			k && /smem/ { for (i = 1; i <= NF; i++) if ($i == "smem") { v = $(i - 1) + 0; if (v > 49152) print "smem: " $0 } }' "${log}_$arch.log")
		[ -z "$bad" ] || { echo "PTXAS($arch)"; echo "$bad" | head -3 | sed 's/^/    /' >&2; return; }
	done
}
half_one() {
	local mk=$1
	m=${mk%:*} k=${mk#*:}
	d=$DIR/$m
	o=$d/cuda-$k
	rm -rf "$o" && mkdir -p "$o/c" "$o/cu"
	st=ok r= fl= tol=1e-2
	[ "$k" = bf16 ] && fl="--bf16 --keep-io" tol=3e-2
	# shellcheck disable=SC2086
	if ! "$PY" tools/to_half.py "$d/model.onnx" "$o/model.onnx" $fl --input "$d/input_0.npy" "$o/x.npy" > "$o/log" 2>&1; then
		st=CONVERT-FAIL
	elif ! "$ONNXCC" "$o/model.onnx" -o "$o/c/net.c" --build >> "$o/log" 2>&1 || ! "$o/c/net" "$o/x.npy" -o "$o/c/out" >> "$o/log" 2>&1; then
		st=C-FAIL
	elif ! "$ONNXCC" "$o/model.onnx" -o "$o/cu/net.c" --target cuda --cuda-emu --build --report >> "$o/log" 2>&1 ||
		! timeout 600 "$o/cu/net" "$o/x.npy" -o "$o/cu/out" >> "$o/log" 2>&1; then
		st=CUDA-FAIL
	elif grep -Eq "cuda +[1-9][0-9]* nodes? without a parallel kernel" "$o/log"; then
		st=SERIAL-NODES
	elif ! grep -q "ox_mma_$k(&acc" "$o/cu/net.cu"; then
		st=NO-MMA
	elif ! "$ONNXCC" "$d/model.onnx" -o "$o/f32.c" --target cuda >> "$o/log" 2>&1 ||
		[ "$(grep -Ec '^/\* node[0-9]+_(LayerNormalization|RMSNormalization|Attention): ' "$o/cu/net.cu")" != \
		  "$(grep -Ec '^/\* node[0-9]+_(LayerNormalization|RMSNormalization|Attention): ' "$o/f32.cu")" ]; then
		st=NOT-FUSED-AS-F32
	else
		r=$(close "$o/cu/out/output_0.npy" "$o/c/out/output_0.npy" $tol) || st=MISMATCH
	fi
	if [ "$st" = ok ] && [ $have_nvcc = 1 ]; then
		"$ONNXCC" "$o/model.onnx" -o "$o/nv.c" --target cuda >> "$o/log" 2>&1 || st=COMPILE-FAIL
		[ "$st" = ok ] && b=$(nvcc_check "$o/nv.cu" "$o/nvcc" sm_90) && [ -n "$b" ] && st=$b
	fi
	printf 'cuda-emu %-4s %-22s %s %s\n' "$k" "$m" "$st" "$r"
	[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; return 1; }
}
each half_one $HALF || fail=1
tf32_one() {
	local m=$1
	d=$DIR/$m
	o=$d/cuda-tf32
	rm -rf "$o" && mkdir -p "$o"
	st=ok r=
	if ! "$ONNXCC" "$d/model.onnx" -o "$o/net.c" --target cuda --cuda-emu --tf32 --build > "$o/log" 2>&1 ||
		! timeout 600 "$o/net" "$d/input_0.npy" -o "$o/out" >> "$o/log" 2>&1; then
		st=FAIL
	elif ! grep -q "ox_mma_tf32(&acc" "$o/net.cu"; then
		st=NO-MMA
	else
		r=$(close "$o/out/output_0.npy" "$d/ref/output_0.npy" 1e-2) || st=MISMATCH
	fi
	printf 'cuda-emu tf32 %-21s %s %s\n' "$m" "$st" "$r"
	[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; return 1; }
}
each tf32_one $TF32 || fail=1

case " $INT8 " in
*" $DIR/int8/resnet18_int8.onnx "*)
	PYTHON=$PY tests/e2e/quant/resnet18_int8.sh "$DIR" || { echo "cuda: quantizing resnet18 failed"; fail=1; }
	;;
esac
int8_one() {
	local q=$1
	m=$(basename "$q" .onnx)
	o=$DIR/int8/$m
	rm -rf "$o" && mkdir -p "$o/in"
	st=ok
	if ! "$PY" tests/e2e/quant/check.py inputs "$q" 2 "$o/in" > "$o/log" 2>&1; then
		st=INPUT-FAIL
	elif ! "$ONNXCC" "$q" -o "$o/c.c" --build >> "$o/log" 2>&1 ||
		! "$ONNXCC" "$q" -o "$o/cu.c" --target cuda --cuda-emu --build --report >> "$o/log" 2>&1; then
		st=BUILD-FAIL
	elif grep -Eq "cuda +[1-9][0-9]* nodes? without a parallel kernel" "$o/log"; then
		st=SERIAL-NODES
	elif ! grep -q "integer tiles" "$o/cu.cu"; then
		st=NO-INTEGER-TILES
	else
		for i in 0 1; do
			if ! "$o/c" "$o/in/in$i.npy" -o "$o/c$i" >> "$o/log" 2>&1 ||
				! timeout 600 "$o/cu" "$o/in/in$i.npy" -o "$o/cu$i" >> "$o/log" 2>&1; then
				st=RUN-FAIL
			else
				for f in "$o/c$i"/output_*.npy; do
					cmp "$f" "$o/cu$i/${f##*/}" >> "$o/log" 2>&1 || st=DIFFERS
				done
			fi
		done
	fi
	if [ "$st" = ok ] && [ $have_nvcc = 1 ]; then
		"$ONNXCC" "$q" -o "$o/nv.c" --target cuda >> "$o/log" 2>&1 || st=COMPILE-FAIL
		[ "$st" = ok ] && b=$(nvcc_check "$o/nv.cu" "$o/nvcc" sm_80 sm_90) && [ -n "$b" ] && st=$b
	fi
	printf 'cuda-emu int8 %-21s %s\n' "$m" "$st"
	[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; return 1; }
}
each int8_one $INT8 || fail=1

# 6. NHWC: tests/e2e/nhwc/nhwc.onnx (make_nhwc.py: every op codegen/cuda/cuda_nhwc.c
#    takes) as f32, f16 and bf16 (tools/to_half.py), f16 with --skip dwpw
#    (its depthwise Conv a kernel of its own, not computed by the pointwise
#    Conv that reads it: opt/dwpw.c), and f32 with --cuda-layout nchw; each
#    CUDA program's outputs against the C target's on the same model,
#    normwise at 1e-4 (f32), 1e-2 (f16), 3e-2 (bf16); the NHWC kernels must
#    be in the .cu, the input's 3 planes read in place by its two Convs, a
#    6-channel value made NHWC for a Conv padded to 8,
#    the Reorders of a patch embedding's and a channels-last permute's Conv
#    views (opt/layout.c channels_last; none of it with nchw); with nvcc,
#    compiled for sm_80 and sm_90 as in 2.
nhwc_one() {
	local k=$1 n
	o=build/nhwc/$k
	rm -rf "$o" && mkdir -p "$o/c" "$o/cu"
	st=ok r= fl= tol=1e-4 lay= half=0
	case $k in
	f16) half=1 tol=1e-2 ;;
	f16-nodw) half=1 tol=1e-2 lay="--skip dwpw" ;;
	bf16) half=1 fl="--bf16 --keep-io" tol=3e-2 ;;
	nchw) lay="--cuda-layout nchw" ;;
	esac
	# NHWC kernels, of them depthwise Convs in a pointwise one (opt/dwpw.c)
	local nk=12 ndw=1
	[ $k = nchw ] && nk=0 ndw=0
	[ $k = f16-nodw ] && nk=13 ndw=0
	if [ $half = 1 ]; then
		# shellcheck disable=SC2086
		"$PY" tools/to_half.py tests/e2e/nhwc/nhwc.onnx "$o/model.onnx" $fl --input tests/e2e/nhwc/nhwc_input.npy \
			"$o/x.npy" > "$o/log" 2>&1 || st=CONVERT-FAIL
	else
		cp tests/e2e/nhwc/nhwc.onnx "$o/model.onnx" && cp tests/e2e/nhwc/nhwc_input.npy "$o/x.npy"
	fi
	# shellcheck disable=SC2086
	if [ $st != ok ]; then
		:
	elif ! "$ONNXCC" "$o/model.onnx" -o "$o/c/net.c" --build >> "$o/log" 2>&1 || ! "$o/c/net" "$o/x.npy" -o "$o/c/out" >> "$o/log" 2>&1; then
		st=C-FAIL
	elif ! "$ONNXCC" "$o/model.onnx" -o "$o/cu/net.c" --target cuda --cuda-emu --build --report $lay >> "$o/log" 2>&1 ||
		! timeout 600 "$o/cu/net" "$o/x.npy" -o "$o/cu/out" >> "$o/log" 2>&1; then
		st=CUDA-FAIL
	elif grep -Eq "cuda +[1-9][0-9]* nodes? without a parallel kernel" "$o/log"; then
		st=SERIAL-NODES
	elif [ "$(grep -c 'NHWC: \[' "$o/cu/net.cu")" != $nk ] ||
		[ "$(grep -c 'computed as loaded, NHWC' "$o/cu/net.cu")" != $ndw ] ||
		[ "$(grep -c 'NHWC: \[1,3,20,20\] (its planes read in place: NCHW)' "$o/cu/net.cu")" != "$([ $k = nchw ] && echo 0 || echo 2)" ] ||
		[ "$(grep -c 'NHWC: \[1,6,20,20\] (channels padded to 8)' "$o/cu/net.cu")" != "$([ $k = nchw ] && echo 0 || echo 1)" ] ||
		[ "$(grep -Ec 'Reorder "(pe|cl)@plain" is a view' "$o/cu/net.cu")" != "$([ $k = nchw ] && echo 0 || echo 2)" ]; then
		st=LAYOUT # its 10 Conv (9 and the depthwise in c3's), MaxPool and 2 global pools in NHWC (none with nchw), x read in place by its 2 Convs, x6 padded, y4's and y5's Reorders views
	else
		for n in 0 1 2 3 4 5 6; do
			r="$r $(close "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" $tol)" || st=MISMATCH
		done
	fi
	if [ "$st" = ok ] && [ $have_nvcc = 1 ] && [ $k != bf16 ]; then
		# shellcheck disable=SC2086
		"$ONNXCC" "$o/model.onnx" -o "$o/nv.c" --target cuda $lay >> "$o/log" 2>&1 || st=COMPILE-FAIL
		[ "$st" = ok ] && b=$(nvcc_check "$o/nv.cu" "$o/nvcc" sm_80 sm_90) && [ -n "$b" ] && st=$b
	fi
	printf 'cuda-emu nhwc %-21s %s%s\n' "$k" "$st" "$r"
	[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; return 1; }
}
each nhwc_one f32 f16 bf16 f16-nodw nchw || fail=1
# (the depthwise in the pointwise Conv: the outputs of its own kernel, bit
# for bit, its value rounded to f16 as the stored one was)
st=ok
for n in 0 1 2 3 4 5 6; do
	cmp -s build/nhwc/f16/cu/out/output_$n.npy build/nhwc/f16-nodw/cu/out/output_$n.npy || st=DIFFER
done
printf 'cuda-emu nhwc %-21s %s\n' "f16 = f16-nodw" "$st"
[ "$st" = ok ] || fail=1

# vs_c O MODEL INPUT...: MODEL's C program and its emulated CUDA program
# (--report) built in O/c and O/cu (onnxcc options $vsflags too) and run
# on the INPUTs, their outputs in O/c/out and O/cu/out, the log O/log;
# sets o=O and st to ok, C-FAIL, CUDA-FAIL or SERIAL-NODES (a node without
# a parallel kernel)
vsflags=
vs_c() {
	o=$1
	local model=$2
	shift 2
	rm -rf "$o" && mkdir -p "$o/c" "$o/cu"
	st=ok
	# shellcheck disable=SC2086
	if ! "$ONNXCC" "$model" -o "$o/c/net.c" --build $vsflags > "$o/log" 2>&1 ||
		! "$o/c/net" "$@" -o "$o/c/out" >> "$o/log" 2>&1; then
		st=C-FAIL
	# shellcheck disable=SC2086
	elif ! "$ONNXCC" "$model" -o "$o/cu/net.c" --target cuda --cuda-emu --build --report $vsflags >> "$o/log" 2>&1 ||
		! timeout 600 "$o/cu/net" "$@" -o "$o/cu/out" >> "$o/log" 2>&1; then
		st=CUDA-FAIL
	elif ! grep -Eq "cuda +0 nodes without a parallel kernel" "$o/log"; then
		st=SERIAL-NODES
	fi
}
# nv_after MODEL: when st is ok and nvcc is there, MODEL's .cu (in $o/nv.cu)
# through nvcc_check for sm_80 and sm_90
nv_after() {
	[ "$st" = ok ] && [ $have_nvcc = 1 ] || return 0
	# shellcheck disable=SC2086
	"$ONNXCC" "$1" -o "$o/nv.c" --target cuda $vsflags >> "$o/log" 2>&1 || { st=COMPILE-FAIL; return 0; }
	b=$(nvcc_check "$o/nv.cu" "$o/nvcc" sm_80 sm_90)
	[ -z "$b" ] || st=$b
}

# 7. Attention: tests/e2e/attn/attn.onnx (make_attn.py: the tiled kernel with
#    grouped heads, partial tiles, Dv not a multiple of 8, a key mask with
#    -inf, 3-D causal; heads wider than 128 on the kernel of a block per
#    query row), the CUDA program's outputs against the C target's at 1e-4
#    normwise, the .cu checked for 2 tiled kernels, both with the keys split
#    over blocks (few blocks: the parts combined by the last to arrive), and
#    1 other; with nvcc, compiled for sm_80 and sm_90 as in 2.
r=
vs_c build/attn tests/e2e/attn/attn.onnx tests/e2e/attn/attn_input_*.npy
if [ "$st" != ok ]; then
	:
elif [ "$(grep -c 'Attention B.*, tiled \*/' "$o/cu/net.cu")" != 2 ] || [ "$(grep -c 'Attention B' "$o/cu/net.cu")" != 3 ] ||
	[ "$(grep -c "this block's part of the keys" "$o/cu/net.cu")" != 2 ]; then
	st=KERNELS
else
	for n in 0 1 2; do
		r="$r $(close "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" 1e-4)" || st=MISMATCH
	done
fi
nv_after tests/e2e/attn/attn.onnx
printf 'cuda-emu attention %-16s %s%s\n' attn "$st" "$r"
[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; fail=1; }
# ... and tests/e2e/attn/attn_past.onnx (make_attn_past.py): past K/V
#    with present outputs, causal with a constant past and with one of P
#    keys given when the program runs (the CUDA program for P = 1..40, the
#    C program for P = 9, both run at 9), softcap, padding lengths
#    (nonpad_kv_seqlen) with and without causal; present K/V byte for
#    byte, the outputs at 1e-4 normwise, no serial node, the .cu holding
#    two tiled kernels with present K/V (one of a run-time past, its keys
#    split over two blocks: at P = 9 the second part is empty), two
#    reading the padding lengths and four present copies; with nvcc as in 2.
r=
o=build/attn_past
rm -rf "$o" && mkdir -p "$o/c" "$o/cu"
st=ok
pin=
for k in $(seq 0 13); do pin="$pin tests/e2e/attn/attn_past_input_$k.npy"; done
# shellcheck disable=SC2086
if ! "$ONNXCC" tests/e2e/attn/attn_past.onnx -o "$o/c/net.c" --build --dim P=9 > "$o/log" 2>&1 ||
	! "$o/c/net" $pin -o "$o/c/out" >> "$o/log" 2>&1; then
	st=C-FAIL
# shellcheck disable=SC2086
elif ! "$ONNXCC" tests/e2e/attn/attn_past.onnx -o "$o/cu/net.c" --target cuda --cuda-emu --build --report --dim P=1..40 \
	>> "$o/log" 2>&1 || ! "$o/cu/net" $pin -o "$o/cu/out" >> "$o/log" 2>&1; then
	st=CUDA-FAIL
elif ! grep -Eq "cuda +0 nodes without a parallel kernel" "$o/log"; then
	st=SERIAL-NODES
elif [ "$(grep -c 'Attention B.*, present K/V, tiled \*/' "$o/cu/net.cu")" != 2 ] ||
	[ "$(grep -c 'SKV, const int64_t \*__restrict__ NP)' "$o/cu/net.cu")" != 2 ] ||
	! grep -q 'Attention B.*past 40 at most.*tiled \*/' "$o/cu/net.cu" ||
	[ "$(grep -c '_present[01]: present_.*: a thread per element \*/' "$o/cu/net.cu")" != 4 ] ||
	[ "$(grep -c "this block's part of the keys" "$o/cu/net.cu")" != 1 ]; then
	st=KERNELS
else
	for n in 1 2 4 5; do
		cmp -s "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" || st=DIFFER
	done
	for n in 0 3 6 7; do
		r="$r $(close "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" 1e-4)" || st=MISMATCH
	done
fi
vsflags="--dim P=1..40"
nv_after tests/e2e/attn/attn_past.onnx
vsflags=
printf 'cuda-emu attention %-16s %s%s\n' attn_past "$st" "$r"
[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; fail=1; }

# ... and tests/e2e/attn/attn_mha.onnx (make_attn_mha.py): torch 1.13's
#    nn.MultiheadAttention, self and cross (a key padding mask), of a
#    run-time batch: the sequence-first Attention reading the projections
#    [S, B, E] in place (ox_seq_first), the cross attention's keys split
#    over 8 blocks; at B 2, S 5, M 300, f32 and f16 (tools/to_half.py
#    --keep-io), against the C target's at 1e-4 and 1e-2 normwise, the .cu
#    holding 2 Attention kernels with sequence-first rows (one split) and
#    no Transpose, nor an Expand (the key padding mask read per batch
#    entry, not copied over the heads); with nvcc as in 2. attn_mha_bf.onnx is the same with
#    batch_first=True: the exporter's Transposes of x, mem and the result
#    removed (opt/rows.c), so its 2 Attention kernels read batch first.
mha_one() {
	local k=$1 m=${2:-attn_mha} tol=1e-4 model=tests/e2e/attn/${2:-attn_mha}.onnx seqrows=2
	r=
	vsflags="--dim B=1..2 --dim S=1..16 --dim M=1..512"
	[ "$m" = attn_mha_bf ] && seqrows=0
	if [ "$k" = f16 ]; then
		tol=1e-2 model=build/${m}_f16.onnx
		"$PY" tools/to_half.py "tests/e2e/attn/$m.onnx" "$model" --keep-io > /dev/null 2>&1 ||
			{ printf 'cuda-emu attention %-16s CONVERT-FAIL\n' "$m $k"; return 1; }
	fi
	vs_c "build/${m}_$k" "$model" tests/e2e/attn/${m}_input_*.npy
	if [ "$st" != ok ]; then
		:
	elif [ "$(grep -c 'Attention B.*, tiled \*/' "$o/cu/net.cu")" != 2 ] ||
		[ "$(grep -Ec 'Q\[\(s \* \(+(int|long)\)gridDim.z' "$o/cu/net.cu")" != $seqrows ] ||
		[ "$(grep -c "this block's part of the keys" "$o/cu/net.cu")" != 1 ] || grep -Eq '_(Transpose|Expand)_kernel' "$o/cu/net.cu"; then
		st=KERNELS
	else
		r=" $(close "$o/cu/out/output_0.npy" "$o/c/out/output_0.npy" $tol)" || st=MISMATCH
	fi
	nv_after "$model"
	vsflags=
	printf 'cuda-emu attention %-16s %s%s\n' "$m $k" "$st" "$r"
	[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; return 1; }
}
mha_one f32 || fail=1
mha_one f16 || fail=1
mha_one f32 attn_mha_bf || fail=1
mha_one f16 attn_mha_bf || fail=1

# 8. The API past the --main program, emulated: tests/e2e/cuda_api.c linked
#    with nhwc.onnx's network (run_with_arena on an aligned arena as
#    net_run, a misaligned one refused with NET_ERR_ARENA), and
#    tests/e2e/cuda_status.c with tests/e2e/gather/gather.onnx's (Gathers
#    of indices read at run time on kernels that set the status word: an
#    index out of range gives NET_ERR_INDEX from net_run and from a
#    replayed net_run_device + net_sync, then in range again the first
#    outputs). gather.onnx also through the --main programs: the CUDA
#    outputs equal to the C target's, both refusing make_gather.py's bad
#    inputs with NET_ERR_INDEX, no node on one device thread; with nvcc,
#    compiled for sm_80 and sm_90 as in 2.
api_one() {
	local app=$1 model=$2 st=ok o=build/cuda_api/$1
	rm -rf "$o" && mkdir -p "$o"
	# shellcheck disable=SC2086
	if ! "$ONNXCC" "$model" -o "$o/net.c" --target cuda --cuda-emu ${3:-} > "$o/log" 2>&1 ||
		! "${CC:-cc}" -std=c11 -O2 -I "$o" -c "tests/e2e/$app.c" -o "$o/app.o" >> "$o/log" 2>&1 ||
		! "${CC:-cc}" -std=c11 -O2 -c "$o/net_weights.c" -o "$o/weights.o" >> "$o/log" 2>&1 ||
		! "${CXX:-c++}" -std=c++17 -O2 -DOX_CUDA_EMU -I "$o" -x c++ "$o/net.cu" -x none "$o/app.o" "$o/weights.o" \
			-o "$o/app" -lm -pthread >> "$o/log" 2>&1; then
		st=BUILD-FAIL
	elif ! OX_EMU_TRACE=$o/trace.txt "$o/app" >> "$o/log" 2>&1; then
		st=FAIL
	fi
	printf 'cuda-emu api %-22s %s\n' "$app" "$st"
	[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; return 1; }
}
api_one cuda_api tests/e2e/nhwc/nhwc.onnx || fail=1
api_one cuda_status tests/e2e/gather/gather.onnx || fail=1
vs_c build/cuda_api/gather tests/e2e/gather/gather.onnx tests/e2e/gather/gather_input_*.npy
if [ "$st" = ok ]; then
	for n in 0 1; do
		cmp -s "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" || st=DIFFER
	done
	for t in c cu; do
		"$o/$t/net" tests/e2e/gather/gather_bad_*.npy -o "$o/$t/bad" > "$o/$t/bad.log" 2>&1 && st=BAD-ACCEPTED
		grep -q "NET_ERR_INDEX" "$o/$t/bad.log" || st=NO-ERR-INDEX
	done
fi
nv_after tests/e2e/gather/gather.onnx
printf 'cuda-emu api %-22s %s\n' "gather (--main)" "$st"
[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; fail=1; }

# 9. Run-time dims: tests/e2e/dynslice/dynslice.onnx (make_dynslice.py)
#    with --dim N=1..4 --dim H=4..12 --dim W=4..12, run at N = 3, H = 7,
#    W = 9: an integer Mul(x, x) and Add (maps with N a kernel parameter;
#    x read twice), a fused f32 chain and a
#    Transpose to [6, N], a depthwise Conv with its Relu, a MaxPool, a Conv
#    with its Relu and a GlobalAveragePool with the image size the kernels'
#    parameters (ox_cu_rt); the integer outputs byte for byte the C
#    target's, the f32 ones at 1e-6 normwise, no node without a parallel
#    kernel; with nvcc, compiled for sm_80 and sm_90 as in 2.
vsflags="--dim N=1..4 --dim H=4..12 --dim W=4..12"
vs_c build/cuda_api/dynslice tests/e2e/dynslice/dynslice.onnx tests/e2e/dynslice/dynslice_x.npy \
	tests/e2e/dynslice/dynslice_f.npy tests/e2e/dynslice/dynslice_im.npy
r=
if [ "$st" = ok ]; then
	for n in 0 1; do
		cmp -s "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" || st=DIFFER
	done
	for n in 2 3 4; do
		r="$r $(close "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" 1e-6)" || st=MISMATCH
	done
fi
nv_after tests/e2e/dynslice/dynslice.onnx
vsflags=
printf 'cuda-emu dyn %-22s %s%s\n' dynslice "$st" "$r"
[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; fail=1; }

#    And a long dim expression: tests/e2e/dynslice/longdim.onnx
#    (make_longdim.py), a Concat of six inputs of run-time lengths into a
#    MatMul, whose GEMM launcher's rows are an expression of about 90
#    characters (once cut at 63 in a fixed buffer: a .cu that did not
#    compile); the output at 1e-5 normwise of the C target's.
vsflags="--dim A0=1..4 --dim A1=1..4 --dim A2=1..4 --dim A3=1..4 --dim A4=1..4 --dim A5=1..4 --dim S=1..8"
vs_c build/cuda_api/longdim tests/e2e/dynslice/longdim.onnx tests/e2e/dynslice/longdim_{0,1,2,3,4,5}.npy
r=
if [ "$st" = ok ]; then
	r=" $(close "$o/cu/out/output_0.npy" "$o/c/out/output_0.npy" 1e-5)" || st=MISMATCH
fi
nv_after tests/e2e/dynslice/longdim.onnx
vsflags=
printf 'cuda-emu dyn %-22s %s%s\n' longdim "$st" "$r"
[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; fail=1; }

# 10. --profile (PREFIX_profile: CUDA events around each function's
#    launches, no graph): dynslice again with N in two buckets (1..2, 3..4),
#    run at N = 3: a row for each of the NUM_FUNCS functions, the called
#    bucket's (b1_) timed above 0, the other's (b0_) at 0.
o=build/cuda_api/profile
rm -rf "$o" && mkdir -p "$o"
st=ok
if ! "$ONNXCC" tests/e2e/dynslice/dynslice.onnx -o "$o/net.c" --target cuda --cuda-emu --build \
	--dim N=1..4:2 --dim H=4..12 --dim W=4..12 > "$o/log" 2>&1 ||
	! "$o/net" --bench 2 --profile tests/e2e/dynslice/dynslice_{x,f,im}.npy > "$o/profile.txt" 2>> "$o/log"; then
	st=CUDA-FAIL
else
	nf=$(sed -n 's/^#define NET_NUM_FUNCS //p' "$o/net.h")
	rows=$(grep -cE '^ +[0-9.]+ +[0-9.]+% .* b[01]_node' "$o/profile.txt")
	on=$(awk '$4 ~ /^b1_/ && $1 > 0' "$o/profile.txt" | wc -l)
	off=$(awk '$4 ~ /^b0_/ && $1 == 0' "$o/profile.txt" | wc -l)
	[ "$rows" = "$nf" ] && [ "$on" = $((nf / 2)) ] && [ "$off" = $((nf / 2)) ] || st="PROFILE(rows=$rows of $nf, b1>0: $on, b0=0: $off)"
fi
printf 'cuda-emu %-26s %s\n' "--profile" "$st"
[ "$st" = ok ] || { tail -n 5 "$o/log" "$o/profile.txt" | sed 's/^/    /'; fail=1; }

# 11. Control flow on the host (codegen/c/emit_ctrl.c, ox_cu_emit_ctrl): tests/e2e/ctrl/ctrl.onnx
#    (make_ctrl.py: a Scan over axis 1 in reverse with a run-time length, a
#    Loop with a trip count from the data that its condition ends early, an
#    If nested in its body, a stacked output whose first dim the Loop sets),
#    no node without a parallel kernel (the bodies' nodes included), the
#    outputs against the C target's at 1e-5 normwise; the If's branches and
#    a second Loop's body (carried values only) CUDA Graphs (4 made, 12
#    replayed: the emulation's trace), the same bytes as without graphs;
#    with nvcc, compiled for sm_80 and sm_90 as in 2.
vsflags="--dim T=2..8 --max s=80"
vs_c build/cuda_api/ctrl tests/e2e/ctrl/ctrl.onnx tests/e2e/ctrl/ctrl_x.npy tests/e2e/ctrl/ctrl_n.npy
r=
if [ "$st" = ok ]; then
	for n in 0 1 2 3 4; do
		r="$r $(close "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" 1e-5)" || st=MISMATCH
	done
	grep -q 'static int node[0-9]*_Loop(' "$o/cu/net.cu" && grep -q 'static int node[0-9]*_Scan(' "$o/cu/net.cu" &&
		grep -q '_body_node[0-9]*_If(' "$o/cu/net.cu" || st=NOT-ON-THE-HOST
	# bodies without a host wait as CUDA Graphs: the If's branches, one
	# made each and replayed in each of the 5 iterations; the second Loop's
	# body (no scan output), one made for each order of its two buffers and
	# replayed in each of the 7; the same bytes as the launches without
	# graphs (OX_CUDA_GRAPHS=0)
	rm -f "$o/trace.txt"
	OX_EMU_TRACE=$o/trace.txt "$o/cu/net" tests/e2e/ctrl/ctrl_{x,n}.npy -o "$o/cu/g" >> "$o/log" 2>&1 &&
		OX_CUDA_GRAPHS=0 "$o/cu/net" tests/e2e/ctrl/ctrl_{x,n}.npy -o "$o/cu/nog" >> "$o/log" 2>&1 || st=CUDA-FAIL
	for n in 0 1 2 3 4; do
		cmp -s "$o/cu/out/output_$n.npy" "$o/cu/nog/output_$n.npy" || st=GRAPH-BYTES
	done
	made=$(grep -c '^instantiate ' "$o/trace.txt") replayed=$(grep -c '^graph [0-9]' "$o/trace.txt")
	[ "$made" = 4 ] && [ "$replayed" = 12 ] || st="BODY-GRAPHS(made $made, replayed $replayed; want 4, 12)"
fi
nv_after tests/e2e/ctrl/ctrl.onnx
vsflags=
printf 'cuda-emu ctrl %-21s %s%s\n' ctrl "$st" "$r"
[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; fail=1; }

# 12. Captured runs (codegen/cuda/cuda.c, OX_GRAPHS of them): tests/e2e/cuda_graphs.c
#    linked with dynslice's network (--dim N=1..4 --dim H=4..12 --dim
#    W=4..12) runs it over 6 shapes, 3 distinct, each without graphs
#    (OX_CUDA_GRAPHS=0) and with: the same bytes; the emulation's trace
#    shows 3 graphs made and 6 replayed (a single kept graph: 6 made).
if api_one cuda_graphs tests/e2e/dynslice/dynslice.onnx "--dim N=1..4 --dim H=4..12 --dim W=4..12"; then
	t=build/cuda_api/cuda_graphs/trace.txt
	made=$(grep -c '^instantiate ' "$t") replayed=$(grep -c '^graph [0-9]' "$t")
	st=ok
	[ "$made" = 3 ] && [ "$replayed" = 6 ] || st="GRAPHS(made $made, replayed $replayed; want 3, 6)"
	printf 'cuda-emu api %-22s %s\n' "graphs per shape" "$st"
	[ "$st" = ok ] || fail=1
else
	fail=1
fi

# 13. Reduces, ArgMax/ArgMin, AveragePool, Split, CumSum, Trilu,
#    GatherElements, (Log)Softmax over a middle axis (codegen/cuda/cuda_rows.c, cuda_index.c
#    cu_reduce, emit_split, emit_gather_elements;
#    CumSum, Trilu, Einsum, ArgMax/ArgMin and the middle-axis
#    LogSoftmax: their C emitters' maps, codegen/map.c and cuda_map.c; codegen/cuda/cuda_nn.c emit_avgpool):
#    tests/e2e/kernels/kernels.onnx (make_kernels.py) with --dim N=1..4
#    --dim H=8..40 --dim W=8..40, run at N = 2, H = 40, W = 33 with a NaN:
#    Max over the channels and Min over a middle block (a thread per output,
#    run-time dims its parameters), Mean over H, W (a warp per row of
#    run-time length), 8 rows of 9215 and one of 73720 (blocks of a row
#    combined by its last to arrive), a Mean over a sequence axis, ArgMax
#    over the channels and ArgMin along W with ties, two AveragePools with
#    ceil_mode (pads counted or not), a Split of the channels, a reversed
#    exclusive CumSum, a lower Trilu, a GatherElements, a LogSoftmax over
#    the channels (run-time H, W), a CumSum along W and a Trilu over H, W
#    (run-time), an AveragePool of a run-time batch, a TopK with many ties
#    (values and indices), an Einsum, a GatherElements and a TopK along W
#    with N, H, W run-time, two Gemms of a computed B and C (per row, and
#    of the output's shape), a ReduceL2 over the channels and of a long
#    row, a ReduceSumSquare, a ReduceL1; against the
#    C target by oxcmp (rtol 1e-5, NaN where NaN; indices exact; the Gemms
#    1e-5 normwise), no serial
#    node, the .cu holding each kernel kind; with nvcc as in 2.
vsflags="--dim N=1..4 --dim H=8..40 --dim W=8..40"
vs_c build/cuda_api/kernels tests/e2e/kernels/kernels.onnx tests/e2e/kernels/kernels_x.npy tests/e2e/kernels/kernels_big.npy \
	tests/e2e/kernels/kernels_z.npy
if [ "$st" = ok ]; then
	for n in $(seq 0 24) $(seq 27 30); do
		"$OXCMP" "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" >> "$o/log" 2>&1 || st=MISMATCH
	done
	# (the Gemms' sums in another order: normwise, as the zoo's)
	for n in 25 26; do
		close "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" 1e-5 >> "$o/log" 2>&1 || st=MISMATCH
	done
	k=$o/cu/net.cu
	[ "$(grep -c '_Reduce[A-Za-z0-9]*: .* a thread per output \*/' "$k")" = 4 ] &&
		[ "$(grep -c 'a warp each \*/' "$k")" = 4 ] &&
		[ "$(grep -c 'blocks a row, each' "$k")" = 3 ] && [ "$(grep -cE '_Arg(Max|Min): Arg(Max|Min), a thread per element \*/' "$k")" = 3 ] &&
		[ "$(grep -c '_AveragePool: .* a thread per output \*/' "$k")" = 3 ] &&
		[ "$(grep -c ' of the Split along axis 1 \*/' "$k")" = 2 ] && [ "$(grep -c '_CumSum: CumSum, a thread per element \*/' "$k")" = 2 ] &&
		[ "$(grep -c '_Trilu: .* a thread per element \*/' "$k")" = 2 ] && grep -q '_GatherElements: .* a thread per element \*/' "$k" &&
		grep -q '_TopK: TopK 7 of 97 along axis 2 (smallest): a thread per run \*/' "$k" &&
		grep -q '_TopK: TopK 3 of 40 at most along axis 3 (largest): a thread per run (run-time dims) \*/' "$k" &&
		grep -q '_GatherElements: GatherElements along axis 3 of 40 at most, .* (run-time dims) \*/' "$k" &&
		grep -q '_Einsum: Einsum, a thread per element \*/' "$k" &&
		grep -q '_LogSoftmax: LogSoftmax, a thread per element \*/' "$k" ||
		st=KERNELS
fi
nv_after tests/e2e/kernels/kernels.onnx
vsflags=
printf 'cuda-emu kernels %-18s %s\n' kernels "$st"
[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; fail=1; }

# 14. ScatterND, ScatterElements, TensorScatter and GatherND
#    (codegen/cuda/cuda_index.c): tests/e2e/scatter/scatter.onnx
#    (make_scatter.py): slices and single elements, reductions none, add,
#    mul, max, min over repeated indices, f16, int32 indices, batch dims,
#    linear and circular cache writes; every output equal to the C
#    target's byte for byte (the reductions apply their updates in its
#    order), no serial node, the .cu holding each kernel kind; each
#    scatter_bad_K.npy in place of input K (an index out of range in a
#    ScatterND, a ScatterElements, a GatherND, a TensorScatter, a
#    GatherElements) refused
#    with NET_ERR_INDEX by both programs; with nvcc as in 2.
sin=
for k in $(seq 0 24); do sin="$sin tests/e2e/scatter/scatter_input_$k.npy"; done
# shellcheck disable=SC2086
vs_c build/cuda_api/scatter tests/e2e/scatter/scatter.onnx $sin
if [ "$st" = ok ]; then
	for n in $(seq 0 10); do
		cmp -s "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" || st=DIFFER
	done
	k=$o/cu/net.cu
	[ "$(grep -c '_ScatterND: .*: a thread per slice position, the updates in order \*/' "$k")" = 3 ] &&
		grep -q '_ScatterND: .*: a thread per element \*/' "$k" && grep -q '_GatherND: .*: a thread per element \*/' "$k" &&
		[ "$(grep -c '_ScatterElements: .*: a thread per line along the axis, the updates in order \*/' "$k")" = 2 ] &&
		grep -q '_ScatterElements: .*: a thread per update \*/' "$k" &&
		[ "$(grep -c '_TensorScatter: .*: a thread per update element \*/' "$k")" = 2 ] || st=KERNELS
	for bad in 1 15 18 21 24; do
		for t in c cu; do
			# shellcheck disable=SC2086
			"$o/$t/net" $(echo $sin | sed "s|scatter_input_$bad\.npy|scatter_bad_$bad.npy|") -o "$o/$t/bad" \
				> "$o/$t/bad.log" 2>&1 && st=BAD-ACCEPTED
			grep -q "NET_ERR_INDEX" "$o/$t/bad.log" || st=NO-ERR-INDEX
		done
	done
fi
nv_after tests/e2e/scatter/scatter.onnx
printf 'cuda-emu kernels %-18s %s\n' scatter "$st"
[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; fail=1; }

# 15. Host nodes (codegen/c.c, emit_host_node): tests/e2e/strings/strings.onnx
#    (make_strings.py): StringConcat chained, Equal, LabelEncoder of a
#    Gather kernel's output, RegexFullMatch, a Not kernel of a host node's
#    output, StringNormalizer with a length from the data; every output
#    equal to the C target's byte for byte, --report listing the six string
#    nodes on the host and nothing else; the Gather's index out of range
#    (strings_bad_5.npy) refused with NET_ERR_INDEX, a string past the
#    capacity (strings_long_0.npy) with NET_ERR_CAPACITY, by both programs
#    (the second StringConcat, whose input the first did not write, must
#    not run); with nvcc as in 2.
sin=
for k in $(seq 0 5); do sin="$sin tests/e2e/strings/strings_input_$k.npy"; done
# shellcheck disable=SC2086
vs_c build/cuda_api/strings tests/e2e/strings/strings.onnx $sin
[ "$st" = SERIAL-NODES ] && grep -Eq "cuda +6 nodes without a parallel kernel of their own \(0 on one device thread, 0 a thread per task, 6 on the host\)" "$o/log" && st=ok
if [ "$st" = ok ]; then
	for n in $(seq 0 4); do
		cmp -s "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" || st=DIFFER
	done
	for bad in bad_5:INDEX long_0:CAPACITY; do
		b=${bad%:*} code=${bad#*:}
		for t in c cu; do
			# shellcheck disable=SC2086
			"$o/$t/net" $(echo $sin | sed "s|strings_input_${b#*_}\.npy|strings_$b.npy|") -o "$o/$t/bad" \
				> "$o/$t/bad.log" 2>&1 && st=BAD-ACCEPTED
			grep -q "NET_ERR_$code" "$o/$t/bad.log" || st=NO-ERR-$code
		done
	done
fi
nv_after tests/e2e/strings/strings.onnx
printf 'cuda-emu host nodes %-15s %s\n' strings "$st"
[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; fail=1; }

# 16. Sibling MatMuls (opt/siblings.c, emit_gemm): tests/e2e/siblings/
#    siblings.onnx (make_siblings.py): Q/K/V projections of unequal widths
#    (a tile straddling two outputs), Relu epilogues, scalar operands that
#    differ (spread over the columns) and that are equal (one scalar), no
#    epilogue; a residual and a computed B left alone; A's rows a run-time
#    dim (--dim B=1..4, run at 3); the .cu holding five MatMulSplit kernels,
#    every output against the C target's at 1e-4 normwise; with nvcc as in 2.
r=
vsflags="--dim B=1..4"
vs_c build/cuda_api/siblings tests/e2e/siblings/siblings.onnx tests/e2e/siblings/siblings_x.npy \
	tests/e2e/siblings/siblings_w.npy
if [ "$st" = ok ]; then
	[ "$(grep -c '_MatMulSplit: MatMulSplit .*, its columns split into the outputs \*/' "$o/cu/net.cu")" = 5 ] &&
		[ "$(grep -c '_MatMul: MatMul ' "$o/cu/net.cu")" = 2 ] || st=KERNELS
	for n in $(seq 0 12); do
		r="$r $(close "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" 1e-4)" || st=MISMATCH
	done
fi
nv_after tests/e2e/siblings/siblings.onnx
vsflags=
printf 'cuda-emu siblings %-17s %s%s\n' siblings "$st" "$r"
[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; fail=1; }

# 17. NonMaxSuppression (codegen/cuda/cuda_index.c emit_nms): tests/e2e/nms/nms.onnx
#    (make_nms.py): 2 batches, 3 classes, 600 boxes in clusters, duplicates,
#    flipped corners, zero areas, tied scores, 0.0 and -0.0, NaNs; corner
#    and center boxes, a score threshold or none, at most 40, 300 (read when
#    the program runs) or 600 a class, over several chunks of 256
#    candidates and of kept boxes; every output equal to the C target's
#    byte for byte, no serial node, and the C target's y0 and y2 (no NaN
#    among their candidates) equal to ONNX Runtime's; nms_f16.onnx the same
#    on float16 boxes and scores (against the C target); with nvcc as in 2.
nms_one() {
	local m=$1
	local nin="tests/e2e/nms/nms_boxes.npy tests/e2e/nms/nms_scores.npy tests/e2e/nms/nms_per.npy"
	# shellcheck disable=SC2086
	vs_c build/cuda_api/$m tests/e2e/nms/$m.onnx $nin
	if [ "$st" = ok ]; then
		for n in 0 1 2; do
			cmp -s "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" || st=DIFFER
		done
		[ "$(grep -c '_NonMaxSuppression: NonMaxSuppression of boxes .*, a block$' "$o/cu/net.cu")" = 3 ] || st=KERNELS
		# shellcheck disable=SC2086
		if [ "$st" != ok ] || [ "$m" != nms ]; then
			:
		elif node tools/ort_run.js tests/e2e/nms/nms.onnx $nin -o "$o/ort" >> "$o/log" 2>&1; then
			cmp -s "$o/c/out/output_0.npy" "$o/ort/output_0.npy" && cmp -s "$o/c/out/output_2.npy" "$o/ort/output_2.npy" ||
				st=C-VS-ORT
		else
			st=ORT-FAIL
		fi
	fi
	nv_after tests/e2e/nms/$m.onnx
	printf 'cuda-emu kernels %-18s %s\n' "$m" "$st"
	[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; return 1; }
}
nms_one nms || fail=1
nms_one nms_f16 || fail=1

# 18. DFT and STFT (codegen/cuda/cuda_signal.c): tests/e2e/signal/signal.onnx
#    (make_signal.py): a complex DFT of length 40 and its inverse over a
#    middle axis, real one-sided and zero-padded DFTs, a windowed one-sided
#    STFT and a two-sided one of a given frame length; every output equal to
#    the C target's byte for byte (under the emulation the device's cos and
#    sin are the host's), no serial node, the .cu holding 4 DFT and 2 STFT
#    kernels; with nvcc as in 2.
sgin="tests/e2e/signal/signal_z.npy tests/e2e/signal/signal_a.npy tests/e2e/signal/signal_s.npy"
# shellcheck disable=SC2086
vs_c build/cuda_api/signal tests/e2e/signal/signal.onnx $sgin
if [ "$st" = ok ]; then
	for n in 0 1 2 3 4 5; do
		cmp -s "$o/cu/out/output_$n.npy" "$o/c/out/output_$n.npy" || st=DIFFER
	done
	[ "$(grep -Ec '_DFT: (inverse )?DFT over axis .*: a thread per output bin' "$o/cu/net.cu")" = 4 ] &&
		[ "$(grep -c '_STFT: STFT, .*: a thread per bin of a$' "$o/cu/net.cu")" = 2 ] || st=KERNELS
fi
nv_after tests/e2e/signal/signal.onnx
printf 'cuda-emu kernels %-18s %s\n' signal "$st"
[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; fail=1; }

# 19. A GEMM's norm of its rows (opt/gemmnorm.c, emit_gemm): the optimizer
#    cases norm_layernorm_13 (MatMul + residual -> LayerNorm, rows of 37)
#    and norm_prenorm_rms (the RMSNorm of a residual stream that the next
#    MatMul reads again) normalized in the GEMM kernel's tail,
#    norm_layernorm_wide (a Gemm, rows of 1024) by the node's second kernel;
#    each against the C target at 1e-4 normwise, its .cu holding no norm
#    node's kernel; bert_encoder's .cu of step 1 (when it ran) 8 tails and no
#    LayerNormalization kernel; with nvcc as in 2.
gn_one() { # CASE TAILS NORM-KERNELS
	local c=tests/e2e/cases/opt/test_opt_$1 r=
	vs_c "build/cuda_api/$1" "$c/model.onnx" "$c/test_data_set_0/input_0.pb"
	if [ "$st" = ok ]; then
		r=$(close "$o/cu/out/output_0.npy" "$o/c/out/output_0.npy" 1e-4) || st=MISMATCH
		[ "$(grep -c 'Normalization of the rows: the last of a band' "$o/cu/net.cu")" = "$2" ] &&
			[ "$(grep -c '__global__ .*_norm_kernel(' "$o/cu/net.cu")" = "$3" ] &&
			! grep -Eq '__global__ .*_(LayerNormalization|RMSNormalization)_kernel\(' "$o/cu/net.cu" || st=KERNELS
	fi
	nv_after "$c/model.onnx"
	printf 'cuda-emu gemm+norm %-16s %s %s\n' "$1" "$st" "$r"
	[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; return 1; }
}
gn_one norm_layernorm_13 1 0 || fail=1
gn_one norm_prenorm_rms 1 0 || fail=1
gn_one norm_layernorm_wide 0 1 || fail=1
# ... and a gated MLP's gate and up projections as one product of
#    interleaved columns (opt/siblings.c): the optimizer cases glu_mlp
#    (split-K: the pairs summed over the parts) and glu_mlp_rows, each
#    against the C target at 1e-4 normwise, its .cu holding 2 GEMM kernels
#    (gate and up, down), the first with the pairs; with nvcc as in 2.
glu_one() { # CASE PAIRS-PATTERN
	local c=tests/e2e/cases/opt/test_opt_$1 r=
	vs_c "build/cuda_api/$1" "$c/model.onnx" "$c/test_data_set_0/input_0.pb"
	if [ "$st" = ok ]; then
		r=$(close "$o/cu/out/output_0.npy" "$o/c/out/output_0.npy" 1e-4) || st=MISMATCH
		[ "$(grep -c '^__global__ void node[0-9]*_MatMul_kernel(' "$o/cu/net.cu")" = 2 ] &&
			[ "$(grep -c "$2" "$o/cu/net.cu")" = 1 ] || st=KERNELS
	fi
	nv_after "$c/model.onnx"
	printf 'cuda-emu gated MLP %-16s %s %s\n' "$1" "$st" "$r"
	[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; return 1; }
}
glu_one glu_mlp 'u += ox_ldcg(&ws' || fail=1
glu_one glu_mlp_rows 'float v = acc\[e\], u = acc\[e + 1\];' || fail=1
b=$DIR/bert_encoder/cuda-emu/net.cu
if [ -f "$b" ]; then
	st=ok
	[ "$(grep -c 'LayerNormalization of the rows: the last of a band' "$b")" = 8 ] &&
		! grep -q '__global__ .*LayerNormalization_kernel(' "$b" || st=KERNELS
	printf 'cuda-emu gemm+norm %-16s %s\n' bert_encoder "$st"
	[ "$st" = ok ] || fail=1
fi

# 20. A depthwise Conv computed by the pointwise Conv that reads it
#    (opt/dwpw.c; cuda_nhwc.c dw_load): the optimizer cases
#    dwpw_inverted_residual (MobileNetV2's block: Relu6's bounds as the
#    depthwise epilogue's operands, the block's residual in the
#    pointwise's), dwpw_s2_hswish (stride 2, asymmetric pads, 18 channels:
#    one a load; two images), dwpw_dil_prelu_resid (dilation 2, a
#    per-channel operand and the depthwise's own input as a residual in its
#    epilogue) and dwpw_shared_resid (one residual in both epilogues: the
#    output must not be stored over it), each against the C target at 1e-4
#    normwise, its .cu holding one such Conv and no depthwise kernel, its
#    outputs byte for byte those of the build with --skip dwpw (the two
#    kernels); mobilenet_v2's .cu of step 1 (when it ran) 17 such Convs and
#    no depthwise kernel; with nvcc as in 2.
dw_one() { # CASE
	local c=tests/e2e/cases/opt/test_opt_$1 r=
	vs_c "build/cuda_api/$1" "$c/model.onnx" "$c/test_data_set_0/input_0.pb"
	if [ "$st" = ok ]; then
		r=$(close "$o/cu/out/output_0.npy" "$o/c/out/output_0.npy" 1e-4) || st=MISMATCH
		[ "$(grep -c 'of a depthwise .*, computed as loaded' "$o/cu/net.cu")" = 1 ] &&
			! grep -q ': depthwise Conv ' "$o/cu/net.cu" || st=KERNELS
		if [ "$st" = ok ]; then
			if ! mkdir -p "$o/sk" || ! "$ONNXCC" "$c/model.onnx" -o "$o/sk/net.c" --target cuda --cuda-emu --build --skip dwpw >> "$o/log" 2>&1 ||
				! "$o/sk/net" "$c/test_data_set_0/input_0.pb" -o "$o/sk/out" >> "$o/log" 2>&1; then
				st=SKIP-FAIL
			elif ! grep -q ': depthwise Conv ' "$o/sk/net.cu" || ! cmp -s "$o/sk/out/output_0.npy" "$o/cu/out/output_0.npy"; then
				st=NOT-THE-UNFUSED
			fi
		fi
	fi
	nv_after "$c/model.onnx"
	printf 'cuda-emu dw+pw %-22s %s %s\n' "$1" "$st" "$r"
	[ "$st" = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; return 1; }
}
each dw_one dwpw_inverted_residual dwpw_s2_hswish dwpw_dil_prelu_resid dwpw_shared_resid || fail=1
# (--skip of a pass the code needs, plan: refused, naming the ones it takes)
st=ok
mkdir -p build/cuda_api/skip
if "$ONNXCC" tests/e2e/cases/opt/test_opt_dwpw_s2_hswish/model.onnx -o build/cuda_api/skip/net.c --target cuda \
	--skip plan > build/cuda_api/skip/log 2>&1 || ! grep -q "skip 'plan': not a pass that may be skipped (attention" build/cuda_api/skip/log; then
	st=NOT-REFUSED
fi
printf 'cuda-emu dw+pw %-22s %s\n' "--skip plan" "$st"
[ "$st" = ok ] || fail=1
b=$DIR/mobilenet_v2/cuda-emu/net.cu
if [ -f "$b" ]; then
	st=ok
	[ "$(grep -c 'of a depthwise .*, computed as loaded' "$b")" = 17 ] && ! grep -q ': depthwise Conv ' "$b" || st=KERNELS
	printf 'cuda-emu dw+pw %-22s %s\n' mobilenet_v2 "$st"
	[ "$st" = ok ] || fail=1
fi

# 21. Reduce* on the two targets, the same bits (codegen/reduction.h: one
#    description of a reduction, so float sums and products accumulate in
#    double on both): tests/e2e/reduce/agree.py, thirteen models over the
#    CUDA kernel shapes (a thread per output, a warp per row, a row split
#    over blocks, LogSumExp's two passes, run-time lengths) in f32, f16
#    and bf16, each a kernel of its own, equal bit for bit to the C
#    target's output and within 1e-6 (f32) of numpy's float64.
#    With nvcc, each .cu through it for sm_80 and sm_90 as well.
if [ $have_nvcc = 1 ]; then
	"$PY" tests/e2e/reduce/agree.py "$ONNXCC" build/cuda_api/reduce --nvcc "$NVCC" || fail=1
else
	"$PY" tests/e2e/reduce/agree.py "$ONNXCC" build/cuda_api/reduce || fail=1
fi

# 22. A node of the map family whose emitter prints C instead of describing
#    a map (BitCast: a memcpy) runs as its C function on the device, and
#    that C is printed once: none of it is left in the host code (the
#    BitCast's memcpy was printed twice when cuda_map.c took the text the
#    emitter printed while asked for a map).
bc=$(tests/onnx_tests.sh)/node/test_bitcast_float32_to_int32/model.onnx
if [ -f "$bc" ]; then
	o=build/cuda_api/bitcast
	rm -rf "$o" && mkdir -p "$o"
	st=ok
	"$ONNXCC" "$bc" -o "$o/net.c" --target cuda > "$o/compile.log" 2>&1 || st=COMPILE-FAIL
	[ "$st" = ok ] && [ "$(grep -c 'memcpy(out0, in0' "$o/net.cu")" != 1 ] && st=TWICE
	printf 'cuda map declined %-18s %s\n' bitcast "$st"
	[ "$st" = ok ] || fail=1
else
	echo "cuda map declined: $bc missing"; fail=1
fi

nv_one() {
	local m=$1
	d=$DIR/$m
	o=$d/cuda-nvcc
	rm -rf "$o" && mkdir -p "$o"
	st=ok
	# shellcheck disable=SC2046
	"$ONNXCC" "$d/model.onnx" -o "$o/net.c" --target cuda $(flags_of "$m") > "$o/compile.log" 2>&1 || st=COMPILE-FAIL
	[ "$st" = ok ] && b=$(nvcc_check "$o/net.cu" "$o/nvcc" sm_80 sm_90) && [ -n "$b" ] && st=$b
	printf 'cuda-nvcc %-25s %s\n' "$m" "$st"
	[ "$st" = ok ] || { tail -n 5 "$o/compile.log" "$o"/nvcc_*.log 2>/dev/null | sed 's/^/    /'; return 1; }
}
if [ $have_nvcc = 0 ]; then
	echo "cuda: the sm_80/sm_90 compile checks skipped (this machine: no CUDA toolkit at $NVCC; NVIDIA's, not in Debian's main archive)"
else
	each nv_one $NV || fail=1
fi
[ "$fail" = 0 ] && echo "cuda: passed" || echo "cuda: FAILED"
exit $fail
