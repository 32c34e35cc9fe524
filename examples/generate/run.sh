#!/bin/sh
# run.sh: examples/generate end to end (make generate): make_decoder.py's
# decoder in three forms (f32 with com.microsoft Attention; 4-bit
# MatMulNBits with MultiHeadAttention; the Llama form of ONNX Runtime
# GenAI, 4-bit, GroupQueryAttention) compiled by onnxcc for a run-time
# sequence and past, generate.c built against each, greedy decoding of a
# fixed prompt by it (the C target on 1 and 2 threads: decoder_pool.h) and
# by ONNX Runtime (generate_ort.js): the ids must be the same. Prints both
# lines and the tokens a second.
#
#   examples/generate/run.sh [DIR] [N]     (default build/generate, 48 tokens)
#
# TARGET=cuda-emu: the decoders compiled with --target cuda --cuda-emu and
# generate.c built against them (its device path on the emulation's host
# memory), the kernels run on the CPU. FORMS: the forms to run, of f32,
# nbits4, llama (f32) and llama4.
set -eu
cd "$(dirname "$0")/../.."
D=${1:-build/generate} N=${2:-48} TARGET=${TARGET:-c}
PROMPT="5 17 42 8 3 91 64 23"
DIMS="--dim batch=1 --dim seq=1..64 --dim past=0..192 --dim total=1..256"
fail=0
for form in ${FORMS:-f32 nbits4 llama4}; do
	o=$D/$form
	mkdir -p "$o/c"
	case $form in
	f32) /usr/bin/python3 examples/generate/make_decoder.py "$o/decoder.onnx"; cache=2x1x4x0x16 ;;
	nbits4) /usr/bin/python3 examples/generate/make_decoder.py "$o/decoder.onnx" --nbits 4; cache=1x4x0x16 ;;
	llama) /usr/bin/python3 examples/generate/make_decoder.py "$o/decoder.onnx" --llama; cache=1x2x0x16 ;;
	llama4) /usr/bin/python3 examples/generate/make_decoder.py "$o/decoder.onnx" --llama --nbits 4; cache=1x2x0x16 ;;
	esac
	if [ "$TARGET" = cuda-emu ]; then
		# shellcheck disable=SC2086
		./onnxcc "$o/decoder.onnx" -o "$o/c/decoder.c" --name decoder --target cuda --cuda-emu $DIMS \
			> "$o/compile.log" 2>&1 || { cat "$o/compile.log"; exit 1; }
		${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -DOX_CUDA_EMU -I"$o/c" -c -o "$o/generate.o" examples/generate/generate.c
		${CC:-cc} -O2 -std=c11 -c -o "$o/weights.o" "$o/c/decoder_weights.c"
		${CXX:-c++} -O2 -std=c++17 -DOX_CUDA_EMU -I"$o/c" -o "$o/generate" -x c++ "$o/c/decoder.cu" -x none \
			"$o/generate.o" "$o/weights.o" -lm -pthread
	else
		# shellcheck disable=SC2086
		./onnxcc "$o/decoder.onnx" -o "$o/c/decoder.c" --name decoder --pool --cpu native $DIMS \
			> "$o/compile.log" 2>&1 || { cat "$o/compile.log"; exit 1; }
		${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L $(./onnxcc --cpu native --print-cflags) -I"$o/c" -o "$o/generate" \
			examples/generate/generate.c "$o/c/decoder.c" "$o/c/decoder_weights.c" -lm -lpthread
	fi
	"$o/generate" "$N" $PROMPT > "$o/onnxcc.txt" 2> "$o/onnxcc.log"
	T=2 # (the C target: its loops on 2 threads too)
	if [ "$TARGET" = cuda-emu ]; then
		T=1
		cp "$o/onnxcc.txt" "$o/onnxcc2.txt"
	else
		"$o/generate" --threads $T "$N" $PROMPT > "$o/onnxcc2.txt" 2> "$o/onnxcc2.log"
	fi
	node examples/generate/generate_ort.js --cache $cache "$o/decoder.onnx" "$N" $PROMPT > "$o/ort.txt" 2> "$o/ort.log"
	echo "generate $form: onnxcc:       $(cat "$o/onnxcc.txt")"
	echo "generate $form: ONNX Runtime: $(cat "$o/ort.txt")"
	cat "$o/onnxcc.log" "$o/ort.log"
	if cmp -s "$o/onnxcc.txt" "$o/ort.txt" && cmp -s "$o/onnxcc2.txt" "$o/ort.txt"; then
		echo "generate $form ($TARGET): the same $N ids$([ $T = 1 ] || echo " (onnxcc on 1 and $T threads)")"
	else
		echo "generate $form ($TARGET): FAIL: the ids differ ($T threads: $(cat "$o/onnxcc2.txt"))"
		fail=1
	fi
done
exit $fail
