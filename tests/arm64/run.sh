#!/bin/bash
# run.sh: generated code run for real on AArch64 and RISC-V (make arm64;
# docs/testing.md). Everything is cross-built by Debian's GCC 12
# (aarch64-linux-gnu-gcc, riscv64-linux-gnu-gcc) and run under qemu-user 7.2
# (qemu-ARCH -L /usr/ARCH-linux-gnu; on AArch64 a core of the --cpu
# target's ISA level, see qcpu below); every output is compared with ONNX
# Runtime's (or the backend test's) at the tolerance the x86 layers use:
#  1. vmath: the NEON rendering's accuracy, gcc and clang
#     (tests/vmath/run.sh --qemu);
#  2. --cpu armv8-a and --cpu armv8.2-a+dotprod:
#     - the ONNX backend tests: every 9th of tests/e2e/expected_pass.txt
#       from its 3rd (its tests 3, 12, 21, ...: 206 tests; conformance.sh
#       --check with OXC_TARGET=aarch64); the dotprod target every 27th from
#       the 3rd (a third of those);
#     - the optimizer's cases (tests/e2e/cases/opt, all of them; dotprod:
#       every second) against their float64 references;
#     - zoo models (ZOO below; dotprod: ZOO_DOT) against ONNX Runtime at
#       zoo.txt's rtol as tests/e2e/zoo.sh compares, and with --threads 3
#       the same bits as 1 thread;
#     - the int8 models (INT8, make cuda's: QDQ and QOperator, and make
#       int8's 24 convolutions of tests/e2e/quant/make_convs.py and 5
#       fused models of make_fused.py) on NIN
#       inputs: the same bits as the host's --cpu generic program, and
#       those of INT8_ORT and the convolutions within one quantization
#       step of ONNX Runtime (tests/e2e/quant/check.py cmp, as make int8);
#     - run-time shapes (--cpu armv8-a): make dyn's MatMulNBits and
#       one-batch GroupQueryAttention models (DYN: the prefill's panels on
#       the NEON micro-kernel, the decode's blocks) at their sizes against
#       ONNX Runtime (tests/e2e/dyn.sh with DYN_EMU);
#  3. riscv64, --cpu generic (vf.c's vector extensions, no vector unit):
#     the backend tests every 27th from the 3rd and two zoo models (ZOO_RV).
# Speed under qemu means nothing (bench/arm_insns.sh counts instructions).
#
#   tests/arm64/run.sh [ZOO_DIR]   (default build/zoo: the exports and ONNX
#                                   Runtime's references of make zoo-refs;
#                                   ZOO_DIR/int8/resnet18_int8.onnx is made
#                                   as make cuda makes it when absent)
#
# PARTS (default "vmath conformance zoo int8 dyn") runs some of them. Each part
# prints its seconds. Exit status 1 when anything fails, 2 on setup errors.
set -u
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-build/zoo}
B=build/arm64
ONNXCC=${ONNXCC:-./onnxcc}
OXCMP=${OXCMP:-tests/e2e/oxcmp}
PY=/usr/bin/python3
ZOO=${ZOO:-resnet18 mobilenet_v2 squeezenet1_1 efficientnet_b0 shufflenet_v2_x1_0 bert_encoder transformer_encoder transformer_encoder_op17 vit_patch unet_small lstm gru}
ZOO_DOT=${ZOO_DOT:-resnet18 mobilenet_v2 bert_encoder lstm}
ZOO_RV=${ZOO_RV:-squeezenet1_1 gru}
INT8=${INT8:-examples/digits/digits_int8.onnx tests/e2e/quant/mix_int8.onnx tests/e2e/quant/mix_uint8.onnx tests/e2e/quant/conv13_int8.onnx tests/e2e/quant/qop_int8.onnx $DIR/int8/resnet18_int8.onnx}
# compared with ONNX Runtime within one step: make int8's and conv13_int8
# (ONNX Runtime runs no QLinearMatMul for qop_int8; resnet18_int8 is 3 steps
# from it on x86 too)
INT8_ORT="digits_int8 mix_int8 mix_uint8 conv13_int8"
NIN=4
A64=armv8-a DOT=armv8.2-a+dotprod

die() { echo "arm64: $*" >&2; exit 2; }
[ -x "$ONNXCC" ] || die "$ONNXCC not found (run make)"
[ -x "$OXCMP" ] || die "$OXCMP not found (run make)"
for c in aarch64-linux-gnu-gcc riscv64-linux-gnu-gcc qemu-aarch64 qemu-riscv64; do
	command -v $c > /dev/null || die "$c is not installed (make deps-cross)"
done
mkdir -p "$B" || exit 2
fail=0
PARTS=${PARTS:-vmath conformance zoo int8 dyn}
part() { case " $PARTS " in *" $1 "*) SECONDS=0; return 0 ;; esac; return 1; }
took() { echo "arm64: $1 took $SECONDS s"; }

. tests/each.sh # (each FUNC ITEM...: $JOBS at a time, default the cores)
# The core qemu emulates for each --cpu: an ARMv8.0-A Cortex-A53 for
# armv8-a (no LSE atomics, no dot product: an instruction past armv8-a
# faults, and GCC's outline atomics take their load/store-exclusive
# path), a Cortex-A76 (ARMv8.2-A with the dot product) for dotprod;
# qemu-riscv64's default core for RISC-V (GCC's default code, RV64GC).
qcpu() { case $1 in "$A64") echo cortex-a53 ;; "$DOT") echo cortex-a76 ;; esac; }
# emu ARCH CPU: the words that run a program of ARCH built for --cpu CPU
emu() {
	local q
	q=$(qcpu "$2")
	echo "qemu-$1 -L /usr/$1-linux-gnu${q:+ -cpu $q}"
}

# ---- 1. vmath ----
if part vmath; then
	tests/vmath/run.sh --qemu || fail=1
	took vmath
fi

# ---- 2, 3. the backend tests and the optimizer's cases ----
# conf ARCH CPU EVERY: every EVERY-th test of the expected-pass list from
# its 3rd, compiled for CPU, run on ARCH
conf() {
	local list=$B/conformance_$1_$3.txt out last
	awk -v n="$3" '/^[ \t]*(#|$)/ { next } { if (k++ % n == 2) print }' tests/e2e/expected_pass.txt > "$list"
	out=$(OXC_TARGET=$1 OXC_QEMU_CPU=$(qcpu "$2") ONNXCC_FLAGS="--cpu $2" OX_CFLAGS="$("$ONNXCC" --cpu "$2" --print-cflags | sed 's/^-std=c11 -O2 *//')" \
		tests/e2e/conformance.sh --check "$list" 2>&1)
	printf '%s\n' "$out" | grep -E '^(FAIL|check: FAIL)' | sed "s/^/[$1 --cpu $2] /"
	last=$(printf '%s\n' "$out" | tail -n 1)
	echo "arm64: backend tests, every ${3}th, $1 --cpu $2: $last"
	case "$last" in *" 0 failed, 0 unsupported") ;; *) return 1 ;; esac
	printf '%s\n' "$out" | grep -q '^check: [0-9]* listed, 0 not passing$'
}
# cases CPU HALF: the optimizer's cases on aarch64 (HALF=1: every second)
cases() {
	local filter=. out last
	[ "$2" = 1 ] && filter="^($(find tests/e2e/cases/opt -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort |
		awk 'NR % 2' | paste -sd '|'))\$"
	out=$(OXC_TARGET=aarch64 OXC_QEMU_CPU=$(qcpu "$1") ONNXCC_FLAGS="--cpu $1" OX_CFLAGS="$("$ONNXCC" --cpu "$1" --print-cflags | sed 's/^-std=c11 -O2 *//')" \
		ONNX_TESTS=tests/e2e/cases OXC_SUITES=opt tests/e2e/conformance.sh "$filter" 2>&1)
	printf '%s\n' "$out" | grep '^FAIL' | sed "s/^/[aarch64 --cpu $1] /"
	last=$(printf '%s\n' "$out" | tail -n 1)
	echo "arm64: optimizer's cases$([ "$2" = 1 ] && echo ", every second"), aarch64 --cpu $1: $last"
	case "$last" in *" 0 failed, 0 unsupported") ;; *) return 1 ;; esac
}
if part conformance; then
	conf aarch64 $A64 9 || fail=1
	cases $A64 0 || fail=1
	conf aarch64 $DOT 27 || fail=1
	cases $DOT 1 || fail=1
	conf riscv64 generic 27 || fail=1
	took "the backend tests and the optimizer's cases"
fi

# ---- zoo models ----
# zoo_one ARCH:CPU:NAME: compile, cross-build, run under qemu, compare
# each output with ONNX Runtime's at rtol * max|ref| (zoo.txt's rtol);
# on AArch64 also --threads 3, which must give the same bits (the thread
# pool's atomics: load/store-exclusive loops for armv8-a, LSE for v8.2)
zoo_one() {
	local arch=${1%%:*} rest=${1#*:} cpu m d o st=ok err=0 k amax atol r line flags rtol
	cpu=${rest%%:*} m=${rest#*:}
	d=$DIR/$m o=$B/zoo/$arch-$cpu/$m
	line=$(awk -v m="$m" '$1 == m' tests/e2e/zoo.txt)
	[ -n "$line" ] || { echo "arm64 zoo $m: not in tests/e2e/zoo.txt"; return 1; }
	flags=$(echo "$line" | awk '{ for (i = 2; i < NF; i++) if ($i != "-") printf "%s ", $i }')
	rtol=$(echo "$line" | awk '{ print $NF }')
	local -a ins=()
	k=0
	while [ -f "$d/input_$k.npy" ]; do ins+=("$d/input_$k.npy"); k=$((k + 1)); done
	rm -rf "$o" && mkdir -p "$o"
	local -a qemu
	read -r -a qemu <<< "$(emu "$arch" "$cpu")"
	# $flags is a list: split on purpose
	# shellcheck disable=SC2086
	if ! CC=$arch-linux-gnu-gcc "$ONNXCC" "$d/model.onnx" -o "$o/net.c" --main --build --cpu "$cpu" $flags > "$o/log" 2>&1; then
		st=BUILD-FAIL
	elif ! echo "${qemu[*]} $o/net ${ins[*]} -o $o/out" >> "$o/log" ||
		! timeout 600 "${qemu[@]}" "$o/net" "${ins[@]}" -o "$o/out" >> "$o/log" 2>&1; then
		st=RUN-FAIL
	else
		k=0
		while read -r amax; do
			atol=$(awk -v r="$rtol" -v a="$amax" 'BEGIN { printf "%.9g", r * (a > 0 ? a : 1) }')
			r=$("$OXCMP" --rtol 0 --atol "$atol" "$o/out/output_$k.npy" "$d/ref/output_$k.npy" 2>&1) || st=MISMATCH
			echo "output_$k: max|ref|=$amax atol=$atol: $r" >> "$o/log"
			err=$(awk -v e="$err" -v r="$r" -v a="$amax" 'BEGIN { if (match(r, /max_abs=[^ ]*/)) {
				x = substr(r, RSTART + 8, RLENGTH - 8) / (a > 0 ? a : 1); if (x > e) e = x } printf "%.3g", e }')
			k=$((k + 1))
		done < <(tail -n +2 "$d/ref/info.txt")
		[ $k -gt 0 ] || st=NO-OUTPUTS
	fi
	if [ $st = ok ] && [ "$arch" = aarch64 ]; then
		if ! timeout 600 "${qemu[@]}" "$o/net" --threads 3 "${ins[@]}" -o "$o/out3" >> "$o/log" 2>&1; then
			st=THREADS-FAIL
		else
			for f in "$o/out"/output_*.npy; do
				cmp -s "$f" "$o/out3/${f##*/}" || st=THREADS-DIFFER
			done
		fi
	fi
	printf 'arm64 zoo %-8s %-18s %-25s max_rel_err %-9s rtol %-6s %s\n' "$arch" "$cpu" "$m" "$err" "$rtol" "$st"
	[ $st = ok ] || { tail -n 5 "$o/log" | sed 's/^/    /'; return 1; }
}
zoo=()
for m in $ZOO; do zoo+=("aarch64:$A64:$m"); done
for m in $ZOO_DOT; do zoo+=("aarch64:$DOT:$m"); done
for m in $ZOO_RV; do zoo+=("riscv64:generic:$m"); done
if part zoo; then
	for m in $ZOO $ZOO_DOT $ZOO_RV; do
		[ -f "$DIR/$m/ref/info.txt" ] || die "no ONNX Runtime reference for $DIR/$m (make zoo-refs)"
	done
	each zoo_one "${zoo[@]}" || fail=1
	took "the zoo"
fi

# ---- run-time shapes ----
DYN=${DYN:-contrib_nbits contrib_gqa1}
if part dyn; then
	CC=aarch64-linux-gnu-gcc ONNXCC_FLAGS="--cpu $A64" DYN_EMU="$(emu aarch64 $A64)" \
		tests/e2e/dyn.sh $B/dyn "^($(echo $DYN | tr ' ' '|'))\$" || fail=1
	took "the run-time shapes"
fi

# ---- int8 models ----
case " $PARTS $INT8 " in
*" int8 "*" $DIR/int8/resnet18_int8.onnx "*)
	[ -f "$DIR/int8/resnet18_int8.onnx" ] || tests/e2e/quant/resnet18_int8.sh "$DIR" ||
		die "quantizing resnet18 failed"
	;;
esac
# int8_host MODEL: its inputs (NIN; 2 for resnet18_int8, 6 s an inference
# under qemu), the host's --cpu generic program's outputs and ONNX
# Runtime's (the INT8_ORT models)
nin_of() { [ "$(basename "$1" .onnx)" = resnet18_int8 ] && echo 2 || echo $NIN; }
int8_host() {
	local q=$1 m o i nin
	m=$(basename "$q" .onnx) nin=$(nin_of "$q")
	o=$B/int8/$m
	rm -rf "$o" && mkdir -p "$o/in" "$o/host"
	if ! "$PY" tests/e2e/quant/check.py inputs "$q" "$nin" "$o/in" > "$o/log" 2>&1; then
		echo "arm64 int8 $m: INPUT-FAIL"; return 1
	fi
	if ! "$ONNXCC" "$q" -o "$o/host/net.c" --main --build >> "$o/log" 2>&1; then
		echo "arm64 int8 $m: host BUILD-FAIL"; tail -n 5 "$o/log"; return 1
	fi
	for ((i = 0; i < nin; i++)); do
		"$o/host/net" "$o/in/in$i.npy" -o "$o/host/out$i" >> "$o/log" 2>&1 || { echo "arm64 int8 $m: host RUN-FAIL"; return 1; }
		case " $INT8_ORT " in *" $m "*)
			node tools/ort_run.js "$q" "$o/in/in$i.npy" -o "$o/ref$i" >> "$o/log" 2>&1 ||
				{ echo "arm64 int8 $m: ONNX Runtime failed"; return 1; } ;;
		esac
	done
}
# int8_one CPU:MODEL: the program for CPU on those inputs, against the
# host's outputs and ONNX Runtime's
int8_one() {
	local cpu=${1%%:*} q=${1#*:} m o i st=ok r worst=- nin
	m=$(basename "$q" .onnx) nin=$(nin_of "$q")
	o=$B/int8/$m
	rm -rf "${o:?}/$cpu" && mkdir -p "$o/$cpu"
	local -a qemu
	read -r -a qemu <<< "$(emu aarch64 "$cpu")"
	if ! CC=aarch64-linux-gnu-gcc "$ONNXCC" "$q" -o "$o/$cpu/net.c" --main --build --cpu "$cpu" > "$o/$cpu/log" 2>&1; then
		st=BUILD-FAIL
	else
		for ((i = 0; i < nin; i++)); do
			if ! timeout 600 "${qemu[@]}" "$o/$cpu/net" "$o/in/in$i.npy" -o "$o/$cpu/out$i" >> "$o/$cpu/log" 2>&1; then
				st=RUN-FAIL
				break
			fi
			for f in "$o/host/out$i"/output_*.npy; do
				cmp -s "$f" "$o/$cpu/out$i/${f##*/}" ||
					{ st=NOT-AS-HOST; echo "input $i: ${f##*/} differs from the host's" >> "$o/$cpu/log"; }
			done
			case " $INT8_ORT " in *" $m "*)
				r=$("$PY" tests/e2e/quant/check.py cmp "$q" "$o/$cpu/out$i/output_0.npy" "$o/ref$i/output_0.npy") || st=MISMATCH
				worst=$(echo "$worst $r" | awk '{ print ($1 == "-" || $2 > $1) ? $2 : $1 }') ;;
			esac
		done
	fi
	printf 'arm64 int8 aarch64 %-18s %-14s %d inputs, the same bits as the host%s: %s\n' "$cpu" "$m" "$nin" \
		"$([ "$worst" = - ] || echo ", largest difference from ONNX Runtime $worst steps")" "$st"
	[ $st = ok ] || { tail -n 5 "$o/$cpu/log" | sed 's/^/    /'; return 1; }
}
if part int8; then
	# and make int8's 24 convolutions of every shape the packed kernels take
	# (SDOT on the dotprod target, smlal on armv8-a), each within one step
	"$PY" tests/e2e/quant/make_convs.py "$B/convs" || die "tests/e2e/quant/make_convs.py failed"
	# and its 5 models of DequantizeLinear, float ops and QuantizeLinear
	# in one fused loop (8-bit loads and stores, vf.c's NEON forms)
	"$PY" tests/e2e/quant/make_fused.py "$B/convs" || die "tests/e2e/quant/make_fused.py failed"
	for q in "$B"/convs/*.onnx; do
		INT8="$INT8 $q" INT8_ORT="$INT8_ORT $(basename "$q" .onnx)"
	done
	# shellcheck disable=SC2086
	if each int8_host $INT8; then
		int8=()
		for q in $INT8; do int8+=("$A64:$q" "$DOT:$q"); done
		each int8_one "${int8[@]}" || fail=1
	else
		fail=1
	fi
	took "the int8 models"
fi

echo "arm64: $([ $fail = 0 ] && echo "all passed" || echo "FAILED")"
exit $fail
