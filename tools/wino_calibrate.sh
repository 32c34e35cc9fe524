#!/bin/bash
# wino_calibrate.sh: the measurements behind the Winograd cost model
# (opt/winograd.c, opt/pack.c's ox_opt_conv_cycles, the wino_* fields of
# ir/target.c; docs/optimizer.md, Winograd).
#
#   tools/wino_calibrate.sh [-c CPU] [-r REPS] [-d DIR] [-k] ["C M H W"]...
#
# For each shape (default: ResNet's and unet_small's 3x3 layers and a few
# others): a model of a 1x1 Conv (so the 3x3 reads a blocked input), the
# 3x3 Conv (pads 1) + bias + Relu, and before them a MatMul with 40 MB of
# weights that pushes the 3x3's weights out of the caches between runs, as
# a network's other layers would. Compiled with --cpu CPU (default native)
# and --winograd off, 2 and 4; the 3x3's time from --profile (the median
# of REPS runs of 10, default 5), the cost model's cycles and choice from
# onnxcc -v. One line per shape:
#   C M HxW  direct MS  F2 MS  F4 MS  model direct F2 F4 Mcycles -> choice
# Run on an idle machine: the figures are what the model is fitted to.
# Each shape's model and builds (about 200 MB: the MatMul's weights) are
# removed once measured, unless -k keeps them in DIR (default
# build/wino_cal).
set -u
cd "$(dirname "$0")/.." || exit 2
CPU=native REPS=5 DIR=build/wino_cal KEEP=
while [ $# -gt 0 ]; do
	case $1 in
	-k) KEEP=1; shift ;;
	-c) CPU=${2:?-c needs a --cpu name}; shift 2 ;;
	-r) REPS=${2:?-r needs a count}; shift 2 ;;
	-d) DIR=${2:?-d needs a folder}; shift 2 ;;
	-h | --help) sed -n '2,21p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
[ -x ./onnxcc ] || { echo "wino_calibrate: ./onnxcc not built (make)" >&2; exit 2; }
if [ $# -eq 0 ]; then
	set -- "64 64 56 56" "128 128 28 28" "256 256 14 14" "512 512 7 7" "8 8 64 64" "16 16 32 32" \
		"32 32 16 16" "32 16 32 32" "16 8 64 64" "24 40 40 40" "96 96 20 20" "48 64 30 30" \
		"160 160 10 10" "320 320 12 12" "64 64 112 112" "4 4 32 32" "256 256 7 7" "1024 1024 4 4"
fi
mkdir -p "$DIR" || exit 2
for s in "$@"; do
	read -r C M H W <<< "$s"
	d=$DIR/c${C}_m${M}_${H}x${W}
	if [ ! -f "$d/model.onnx" ]; then
		/usr/bin/python3 - "$d" "$C" "$M" "$H" "$W" <<'EOF' || exit 2
import os, sys
import numpy as np, onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T
d, C, M, H, W = sys.argv[1], *map(int, sys.argv[2:6])
rng = np.random.default_rng(1)
f32 = lambda a: a.astype(np.float32)
x, z = f32(rng.standard_normal((1, C, H, W))), f32(rng.standard_normal((1, 3200)))
inits = [nh.from_array(f32(rng.standard_normal((3200, 3200)) * 0.01), "wz"),
         nh.from_array(np.zeros((1, 1, 1, 1), np.float32), "zero"),
         nh.from_array(f32(rng.standard_normal((C, C, 1, 1)) / np.sqrt(C)), "w0"),
         nh.from_array(f32(rng.standard_normal((M, C, 3, 3)) / np.sqrt(9 * C)), "w"),
         nh.from_array(f32(rng.standard_normal(M) * 0.1), "b")]
nodes = [h.make_node("MatMul", ["z", "wz"], ["z2"]),  # 40 MB of weights: the caches flushed
         h.make_node("ReduceMean", ["z2"], ["s"], keepdims=1),
         h.make_node("Mul", ["s", "zero"], ["s0"]),
         h.make_node("Add", ["x", "s0"], ["x1"]),  # x, after the MatMul
         h.make_node("Conv", ["x1", "w0"], ["a"], kernel_shape=[1, 1]),
         h.make_node("Conv", ["a", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="conv3"),
         h.make_node("Relu", ["c"], ["y"])]
g = h.make_graph(nodes, "cal", [h.make_tensor_value_info("x", T.FLOAT, x.shape),
                                h.make_tensor_value_info("z", T.FLOAT, z.shape)],
                 [h.make_tensor_value_info("y", T.FLOAT, (1, M, H, W))], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
os.makedirs(d, exist_ok=True)
onnx.save(m, d + "/model.onnx")
np.save(d + "/x.npy", x)
np.save(d + "/z.npy", z)
EOF
	fi
	line="$C $M ${H}x$W"
	for w in off 2 4; do
		mkdir -p "$d/$CPU-$w"
		if ! ./onnxcc "$d/model.onnx" -o "$d/$CPU-$w/net.c" --cpu "$CPU" --winograd $w --main --build >/dev/null 2>&1; then
			line="$line  $w -"
			continue
		fi
		ms=$(for r in $(seq "$REPS"); do
			"$d/$CPU-$w/net" --profile --bench 10 "$d/x.npy" "$d/z.npy" -o "$d/out" | awk '/conv3/ {print $1}'
		done | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
		line="$line  $w $ms"
	done
	model=$(./onnxcc "$d/model.onnx" -o "$d/model.c" --cpu "$CPU" -v 2>&1 | grep 'winograd:' |
		sed 's/.*direct \([0-9.-]*\), F(2x2) \([0-9.-]*\), F(4x4) \([0-9.-]*\): \(.*\)/\1 \2 \3 -> \4/')
	echo "$line  model $model"
	[ -n "$KEEP" ] || rm -rf "$d"
done
