#!/bin/sh
# run.sh: examples/generate end to end (make generate): make_decoder.py's
# decoder compiled by onnxcc for a run-time sequence and past, generate.c
# built against it, greedy decoding of a fixed prompt by it and by ONNX
# Runtime (generate_ort.js): the two must give the same ids. Prints both
# lines and the tokens a second.
#
#   examples/generate/run.sh [DIR] [N]     (default build/generate, 48 tokens)
set -eu
cd "$(dirname "$0")/../.."
D=${1:-build/generate} N=${2:-48}
PROMPT="5 17 42 8 3 91 64 23"
mkdir -p "$D/c"
/usr/bin/python3 examples/generate/make_decoder.py "$D/decoder.onnx"
./onnxcc "$D/decoder.onnx" -o "$D/c/decoder.c" --name decoder --cpu native --dim batch=1 --dim seq=1..64 \
	--dim past=0..192 > "$D/compile.log" 2>&1 || { cat "$D/compile.log"; exit 1; }
${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L $(./onnxcc --cpu native --print-cflags) -I"$D/c" -o "$D/generate" \
	examples/generate/generate.c "$D/c/decoder.c" "$D/c/decoder_weights.c" -lm -lpthread
"$D/generate" "$N" $PROMPT > "$D/onnxcc.txt" 2> "$D/onnxcc.log"
node examples/generate/generate_ort.js "$D/decoder.onnx" "$N" $PROMPT > "$D/ort.txt" 2> "$D/ort.log"
echo "generate: onnxcc:       $(cat "$D/onnxcc.txt")"
echo "generate: ONNX Runtime: $(cat "$D/ort.txt")"
cat "$D/onnxcc.log" "$D/ort.log"
if cmp -s "$D/onnxcc.txt" "$D/ort.txt"; then
	echo "generate: the same $N ids"
else
	echo "generate: FAIL: the ids differ"
	exit 1
fi
