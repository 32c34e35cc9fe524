#!/bin/bash
# arm_insns.sh: AArch64 instructions per inference of the zoo models,
# counted under qemu-aarch64 (make bench-arm; time under qemu means
# nothing, counts do). Each model of tests/e2e/zoo.txt (with its flags)
# and the int8 resnet18 (tests/e2e/quant/resnet18_int8.sh) is compiled
# with --cpu armv8-a and with --cpu generic, built by
# aarch64-linux-gnu-gcc as --build builds, and run twice under
# qemu-aarch64 -cpu cortex-a53 (ARMv8.0-A) with bench/qemu_insns.c (a TCG
# plugin: every executed block adds its instruction count): once plainly,
# once with --bench 1 (one more inference); the difference is one
# inference, without loading the weights and inputs or writing the
# outputs. Writes the table, dated,
# with the commit and the tools' versions, to MD (default
# docs/benchmarks-arm.md).
#
#   bench/arm_insns.sh [-d ZOO_DIR] [--md MD] [FILTER]
#       ZOO_DIR: make zoo-models' exports (default build/zoo); FILTER: an
#       ERE on the models' names (to try; the table then lists only those)
set -u
cd "$(dirname "$0")/.." || exit 2
DIR=build/zoo MD=docs/benchmarks-arm.md FILTER=.
while [ $# -gt 0 ]; do
	case $1 in
	-d) DIR=$2; shift 2 ;;
	--md) MD=$2; shift 2 ;;
	-*) echo "usage: bench/arm_insns.sh [-d ZOO_DIR] [--md MD] [FILTER]" >&2; exit 2 ;;
	*) FILTER=$1; shift ;;
	esac
done
B=build/arm64/insns
ONNXCC=./onnxcc
CPUS="armv8-a generic"
die() { echo "arm_insns: $*" >&2; exit 2; }
[ -x "$ONNXCC" ] || die "$ONNXCC not found (run make)"
for c in aarch64-linux-gnu-gcc qemu-aarch64; do
	command -v $c > /dev/null || die "$c is not installed (make deps-cross)"
done
mkdir -p "$B" || exit 2
PLUGIN=$B/qemu_insns.so
${CC:-cc} -std=c11 -O2 -Wall -Wextra -fPIC -shared -o "$PLUGIN" bench/qemu_insns.c || die "cannot build the plugin"
[ -f "$DIR/int8/resnet18_int8.onnx" ] || tests/e2e/quant/resnet18_int8.sh "$DIR" || die "quantizing resnet18 failed"

# count PROGRAM ARG...: the guest instructions of one run
count() {
	local f
	f=$(mktemp "$B/count.XXXXXX") || return 1
	qemu-aarch64 -cpu "${QCPU:-cortex-a53}" -L /usr/aarch64-linux-gnu -plugin "$PLUGIN,out=$f" "$@" > /dev/null 2>&1 || { rm -f "$f"; return 1; }
	sed -n 's/^insns //p' "$f"
	rm -f "$f"
}

# name|model|flags for every model
models=$(awk -v d="$DIR" '/^[ \t]*(#|$)/ { next }
	{ fl = ""; for (i = 2; i < NF; i++) if ($i != "-") fl = fl (fl == "" ? "" : " ") $i
	  printf "%s|%s/%s/model.onnx|%s|%s/%s/input_0.npy\n", $1, d, $1, fl, d, $1 }' tests/e2e/zoo.txt)
models=$(printf '%s\n%s\n' "$models" "resnet18_int8|$DIR/int8/resnet18_int8.onnx||$DIR/resnet18/input_0.npy" |
	awk -F'|' -v f="$FILTER" '$1 ~ f')
[ -n "$models" ] || die "no model matches '$FILTER'"
rows=''
while IFS='|' read -r -u 3 name model flags input; do
	[ -f "$model" ] || die "no $model (make zoo-models)"
	line="| $name"
	flops=''
	for cpu in $CPUS; do
		o=$B/$name/$cpu
		rm -rf "$o" && mkdir -p "$o"
		# shellcheck disable=SC2086 # flags: a list
		if ! CC=aarch64-linux-gnu-gcc "$ONNXCC" "$model" -o "$o/net.c" --main --build --report --cpu "$cpu" $flags > "$o/build.log" 2>&1; then
			echo "arm_insns: $name --cpu $cpu: build failed ($o/build.log)"
			line="$line | build failed"
			continue
		fi
		[ -n "$flops" ] || flops=$(sed -n 's/^ *flops *\([0-9]*\) per run.*/\1/p' "$o/build.log")
		a=$(count "$o/net" "$input" -o "$o/out") && b=$(count "$o/net" --bench 1 "$input" -o "$o/out1") && [ -n "$a" ] && [ -n "$b" ] || {
			echo "arm_insns: $name --cpu $cpu: run failed"; line="$line | run failed"; continue; }
		n=$((b - a))
		eval "n_$(echo "$cpu" | tr -c 'a-z0-9\n' '_')=$n"
		echo "arm_insns: $name --cpu $cpu: $n instructions per inference"
		line="$line | $(awk -v n="$n" 'BEGIN { printf "%.4g M", n / 1e6 }')"
	done
	# flops per armv8-a instruction, generic's count over armv8-a's
	line="$line | $(awk -v f="${flops:-0}" -v a="${n_armv8_a:-0}" -v g="${n_generic:-0}" 'BEGIN {
		printf "%s | %s | %s", (f > 0 ? sprintf("%.4g M", f / 1e6) : "-"),
			(f > 0 && a > 0 ? sprintf("%.2f", f / a) : "-"), (a > 0 && g > 0 ? sprintf("%.2f", g / a) : "-") }') |"
	rows="$rows$line"$'\n'
	unset n_armv8_a n_generic
done 3<<< "$models"

# the int8 model on the dot-product target too (SDOT: qemu's cortex-a76)
dot=''
if printf '%s\n' "$models" | grep -q '^resnet18_int8|'; then
	o=$B/resnet18_int8/dotprod
	rm -rf "$o" && mkdir -p "$o"
	if CC=aarch64-linux-gnu-gcc "$ONNXCC" "$DIR/int8/resnet18_int8.onnx" -o "$o/net.c" --main --build --cpu armv8.2-a+dotprod \
		> "$o/build.log" 2>&1 && a=$(QCPU=cortex-a76 count "$o/net" "$DIR/resnet18/input_0.npy" -o "$o/out") &&
		b=$(QCPU=cortex-a76 count "$o/net" --bench 1 "$DIR/resnet18/input_0.npy" -o "$o/out1") && [ -n "$a" ] && [ -n "$b" ]; then
		dot=$((b - a))
		echo "arm_insns: resnet18_int8 --cpu armv8.2-a+dotprod: $dot instructions per inference"
	else
		echo "arm_insns: resnet18_int8 --cpu armv8.2-a+dotprod: failed ($o/build.log)"
	fi
fi

commit=$(git describe --always --dirty --exclude='*' 2>/dev/null || echo unknown)
{
	echo "# AArch64: instructions per inference"
	echo
	echo "Generated by \`bench/arm_insns.sh\` (\`make bench-arm\`); do not edit by hand, rerun it."
	echo "Guest instructions of one inference of each zoo model (\`tests/e2e/zoo.txt\`,"
	echo "batch as listed, one thread) compiled by onnxcc for \`--cpu armv8-a\` (NEON,"
	echo "armv8-a's tiles) and for \`--cpu generic\` (the portable 4-lane vectors, the"
	echo "generic tiles), built by aarch64-linux-gnu-gcc as \`--build\` builds and counted"
	echo "under qemu-aarch64 (\`-cpu cortex-a53\`, ARMv8.0-A) by \`bench/qemu_insns.c\` (a TCG plugin adding each executed"
	echo "block's instruction count): a run with \`--bench 1\` less a plain run, so the"
	echo "loading of weights and inputs and the writing of outputs are not counted."
	echo "Instructions, not cycles: a count says what the code asks of the CPU, not how"
	echo "fast a core runs it (no cache, latency or pipeline model). \`make arm64\`"
	echo "checks these programs' outputs (docs/testing.md)."
	echo
	echo "- Date: $(date -u '+%Y-%m-%d'); onnxcc commit $commit."
	echo "- $(aarch64-linux-gnu-gcc --version | head -n 1); $(qemu-aarch64 --version | head -n 1)."
	echo "- FLOPs: \`--report\`'s (2 per multiply-add of Conv, Gemm, MatMul, Attention, RNN, GRU, LSTM)."
	echo
	echo "| model | armv8-a | generic | FLOPs | FLOPs per armv8-a instruction | generic / armv8-a |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: |"
	printf '%s' "$rows"
	if [ -n "$dot" ]; then
		echo
		echo "resnet18_int8 for \`--cpu armv8.2-a+dotprod\` (the packed int8 convolution on SDOT;"
		echo "counted under \`-cpu cortex-a76\`): $(awk -v n="$dot" 'BEGIN { printf "%.4g M", n / 1e6 }') instructions per inference."
	fi
} > "$MD.tmp" && mv "$MD.tmp" "$MD"
echo "arm_insns: wrote $MD"
