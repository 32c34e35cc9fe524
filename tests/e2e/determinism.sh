#!/bin/bash
# determinism.sh: compiling a model twice gives byte-identical files.
#
#   tests/e2e/determinism.sh            (make determinism)
#
# Each model below is compiled twice with `--main --report=json` into two
# folders, the second time from another working directory and with another
# TMPDIR (and, as always, other heap and stack addresses: ASLR). Every file
# written (net.c, net.h, the weights, net_main.c) and the report must be
# identical. Models: zoo models that exercise every optimizer pass (fusion,
# layouts, Winograd, attention, norms, RNNs), control flow and sequence
# tests of the backend suite, and --weights external / c.
set -u
cd "$(dirname "$0")/../.." || exit 2
ONNXCC=$PWD/${ONNXCC:-onnxcc}
ZOO=${ZOO:-build/zoo}
T=$(tests/onnx_tests.sh)/node || exit 2
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT

cases=()
for m in squeezenet1_1 mobilenet_v2 resnet18 transformer_encoder bert_encoder lstm gru unet_small vit_patch; do
	[ -f "$ZOO/$m/model.onnx" ] && cases+=("$ZOO/$m/model.onnx|")
done
for t in test_if test_scan9_sum test_layer_normalization_4d_axis0 test_attention_4d test_gru_batchwise \
	test_unique_sorted_with_axis; do
	[ -f "$T/$t/model.onnx" ] && cases+=("$T/$t/model.onnx|")
done
d=$T/test_loop11/test_data_set_0
[ -d "$d" ] && cases+=("$T/test_loop11/model.onnx|--const trip_count=$d/input_0.pb --const cond=$d/input_1.pb")
d=$T/test_sequence_map_add_2_sequences_expanded/test_data_set_0
[ -d "$d" ] && cases+=("$T/test_sequence_map_add_2_sequences_expanded/model.onnx|--like x0=$d/input_0.pb --like x1=$d/input_1.pb")
[ -f "$ZOO/lstm/model.onnx" ] && cases+=("$ZOO/lstm/model.onnx|--weights external" "$ZOO/gru/model.onnx|--weights c")
[ ${#cases[@]} -ge 10 ] || { echo "determinism: only ${#cases[@]} models found (make zoo first)"; exit 2; }

fail=0 n=0
for c in "${cases[@]}"; do
	model=${c%%|*} flags=${c#*|}
	model=$(cd "$(dirname "$model")" && pwd)/$(basename "$model")
	rm -rf "$work/a" "$work/b" "$work/t" && mkdir -p "$work/a" "$work/b" "$work/t"
	# shellcheck disable=SC2086 # flags is a list of options
	(cd "$work" && "$ONNXCC" "$model" -o a/net.c --main --report=json $flags > a/report.json 2> a/log) &&
	(cd "$work/b" && TMPDIR=$work/t "$ONNXCC" "$model" -o net.c --main --report=json $flags > report.json 2> log) || {
		echo "determinism: FAIL $model $flags: does not compile"; cat "$work/a/log"; fail=1; continue; }
	n=$((n + 1))
	if ! d=$(diff -rq "$work/a" "$work/b"); then
		echo "determinism: FAIL $model $flags:"
		printf '%s\n' "$d" | head -n 5
		fail=1
	fi
done
echo "determinism: $n models compiled twice, $([ $fail = 0 ] && echo "all identical" || echo "some differ")"
exit $fail
