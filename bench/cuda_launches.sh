#!/bin/bash
# cuda_launches.sh: what one run of a CUDA program asks of the GPU, counted
# without one: each model is compiled with --target cuda --cuda-emu, run
# under the emulation with OX_EMU_TRACE, and its last CUDA Graph replay is
# summed up: kernel launches, copies and fills (each a graph node: at batch
# 1 each costs the GPU a few microseconds whatever it does), and the
# launches with fewer blocks than the GPU has SMs (132 on an H100 SXM and
# on an H200: such a kernel leaves SMs idle), and the blocks and threads
# all the launches start.
#
#   bench/cuda_launches.sh [-v] [MODEL...]   (default: resnet18 mobilenet_v2 bert_encoder)
#
# MODEL is a zoo name (build/zoo/MODEL/model.onnx and input_0.npy, made by
# make zoo) or a path to an .onnx file with its inputs input_0.npy,
# input_1.npy, ... beside it. -v also lists the replay's launches (name,
# grid, block, dynamic shared memory). ONNXCC_FLAGS are added to each
# compilation (--dim ranges for a model of run-time dims). Work files go
# to build/launches/.
set -u
cd "$(dirname "$0")/.." || exit 2
verbose=0
[ "${1:-}" = -v ] && { verbose=1; shift; }
[ $# -gt 0 ] || set -- resnet18 mobilenet_v2 bert_encoder
SMS=${SMS:-132}
ONNXCC=${ONNXCC:-./onnxcc}
fails=0
printf '%-22s %8s %6s %6s %12s %8s %9s\n' model launches copies fills "<$SMS blocks" blocks threads
for m in "$@"; do
	case $m in
	*.onnx) onnx=$m name=$(basename "$(dirname "$m")")/$(basename "$m" .onnx) in=$(dirname "$m")/input_0.npy ;;
	*) onnx=build/zoo/$m/model.onnx name=$m in=build/zoo/$m/input_0.npy ;;
	esac
	ins=("$in")
	for k in 1 2 3 4 5 6 7; do
		[ -f "${in%_0.npy}_$k.npy" ] && ins+=("${in%_0.npy}_$k.npy")
	done
	d=build/launches/$name
	rm -rf "$d" && mkdir -p "$d"
	if [ ! -f "$onnx" ] || [ ! -f "$in" ]; then
		echo "$name: no $onnx or $in (make zoo makes the zoo's)"
		fails=$((fails + 1))
		continue
	fi
	# shellcheck disable=SC2086 # ONNXCC_FLAGS is a list of options
	if ! "$ONNXCC" "$onnx" -o "$d/net.c" --target cuda --cuda-emu --build ${ONNXCC_FLAGS:-} > "$d/build.log" 2>&1 ||
		! OX_EMU_TRACE="$d/trace.txt" "$d/net" --bench 1 "${ins[@]}" -o "$d/out" > "$d/run.log" 2>&1; then
		echo "$name: build or run failed (see $d)"
		fails=$((fails + 1))
		continue
	fi
	# the last replay: from the last "graph N" line to its "graph-end"
	awk -v sms="$SMS" -v name="$name" -v verbose="$verbose" '
		/^graph [0-9]/ { delete L; n = 0; inside = 1; next }
		/^graph-end/ { inside = 0; done = 1; next }
		inside { L[++n] = $0 }
		END {
			if (!done) { printf "%s: no CUDA Graph replay in the trace\n", name; exit 1 }
			for (i = 1; i <= n; i++) {
				split(L[i], f, " ")
				if (f[1] == "launch") {
					k++
					b = f[3] * f[4] * f[5]
					blocks += b
					threads += b * f[6] * f[7] * f[8]
					few += b < sms
					if (verbose) printf "    %-40s grid %s,%s,%s block %s,%s,%s smem %s\n", f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9]
				} else if (f[1] == "memcpy") c++
				else if (f[1] == "memset") s++
			}
			printf "%-22s %8d %6d %6d %12d %8d %9d\n", name, k, c, s, few, blocks, threads
		}' "$d/trace.txt" || fails=$((fails + 1))
done
exit $((fails > 0))
