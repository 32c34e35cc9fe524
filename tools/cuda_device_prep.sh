#!/bin/bash
# cuda_device_prep.sh: build/dev, what bench/cuda_device.sh needs on a GPU
# machine lent through the device tool (make cuda-device-prep; carry
# build/dev, at most 64 MiB): a static onnxcc (the machine has no
# protobuf-c), the zoo's models with their large weights stripped
# (tools/strip_weights.py; drawn again there) and their inputs, and a
# sample of the node suite (every 6th expected pass of node/, listed in
# build/dev/sample.txt), and the int8 resnet18 of make cuda (whole: its
# weights are the 8-bit values) with its input; for the decoders' section,
# the sha256 of their weights and ONNX Runtime's ids (bench/cuda_decoders.sh
# prep: the models themselves are made again there).
set -eu
cd "$(dirname "$0")/.."
D=build/dev
SUITE=$(tests/onnx_tests.sh)
rm -rf "$D" && mkdir -p "$D/models" "$D/suite/node"
# shellcheck disable=SC2046
cc -static -o "$D/onnxcc" $(find build/obj -name '*.o' | sort) -lprotobuf-c -lm
for f in build/zoo/*/model.onnx; do
	m=$(basename "$(dirname "$f")")
	/usr/bin/python3 tools/strip_weights.py strip "$f" "$D/models/$m.onnx"
	cp "build/zoo/$m/input_0.npy" "$D/models/${m}_input_0.npy"
done
if [ -f build/zoo/int8/resnet18_int8.onnx ]; then
	mkdir -p "$D/int8"
	cp build/zoo/int8/resnet18_int8.onnx build/zoo/resnet18/input_0.npy "$D/int8/"
fi
grep '^node/' tests/e2e/expected_pass.txt | awk 'NR % 6 == 1' | sed 's|^node/||' > "$D/sample.txt"
while read -r t; do
	cp -r "$SUITE/node/$t" "$D/suite/node/"
done < "$D/sample.txt"
PY=/usr/bin/python3 bench/cuda_decoders.sh prep "$D"
du -sh "$D"
