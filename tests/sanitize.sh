#!/bin/bash
# sanitize.sh: onnxcc and the programs it writes under AddressSanitizer and
# UndefinedBehaviorSanitizer (with LeakSanitizer), over a fixed sample.
#
#   tests/sanitize.sh [EVERY]        (make sanitize: 18; EVERY default 4)
#
# 1. conformance: every EVERY-th test of tests/e2e/expected_pass.txt (its
#    tests 2, 2+EVERY, ...: with EVERY a multiple of 3, none of make test's
#    unsanitized sample, its tests 1, 4, 7, ...), compiled by $SAN_ONNXCC (default build/san/onnxcc:
#    make SANITIZE=1) and built with the sanitizers too;
# 2. onnxcc's own cases (tests/e2e/cases), all of them, the same way;
# 3. the optimizer's cases with the widest vector target this CPU runs, and
#    Winograd by the cost model, forced to F(2x2) and to F(4x4);
# 4. the zoo models in $SAN_ZOO, compiled by it and run with
#    sanitized network code, 1 and 3 threads; the other zoo models compiled.
# 5. the CUDA target (--target cuda --cuda-emu, compiled by $SAN_ONNXCC):
#    the kernels of $SAN_CUDA (lstm: the RNN kernels and the workspace;
#    unet_small: ConvTranspose, Resize; dynbatch in f16: tensor cores, the
#    typed kernels; tests/e2e/dynslice: run-time dims on the kernels;
#    tests/e2e/ctrl: If, Loop, Scan on the host: these two the run only)
#    run on the CPU with the sanitizers, the fibers
#    on ucontext (OX_EMU_UCONTEXT=1, which ASan follows: its one warning
#    about swapcontext is the only line allowed in their reports), outputs
#    against ONNX Runtime's at 1e-4 normwise (f16: the run only).
# Every report goes to a file under reports/ beside $SAN_ONNXCC (log_path);
# the layer passes when each step passes and that folder is empty: zero
# reports.
set -u
cd "$(dirname "$0")/.." || exit 2
EVERY=${1:-4}
SAN_ZOO=${SAN_ZOO:-'^(squeezenet1_1|transformer_encoder|lstm|gru|dynbatch|vit_patch|unet_small)$'}
ONNXCC=${SAN_ONNXCC:-build/san/onnxcc}   # build/san-clang/onnxcc: make SANITIZE=1 CC=clang
SD=$(dirname "$ONNXCC")
REP=$PWD/$SD/reports
[ -x "$ONNXCC" ] || { echo "sanitize: $ONNXCC not found (make SANITIZE=1 $ONNXCC)"; exit 2; }
rm -rf "$REP" && mkdir -p "$REP" || exit 2

# any report aborts (a signal: the runners count it as a failure, never as
# "unsupported") and is also written to $REP
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:log_path=$REP/asan:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$REP/ubsan"
export LSAN_OPTIONS="log_path=$REP/lsan"
# the generated programs: gcc's `undefined` lacks float-cast-overflow
SAN_CFLAGS="-g -fno-omit-frame-pointer -fsanitize=address,undefined -fsanitize=float-cast-overflow -fno-sanitize-recover=all"
export ONNXCC ONNXCC_CFLAGS="$SAN_CFLAGS" OX_CFLAGS="$SAN_CFLAGS"

# self-check: a planted heap overflow and a planted leak must each leave a
# report, or this layer could not fail
printf '#include <stdlib.h>\nint main(int c, char **v) { int *p = malloc(8); p[0] = 1; (void)v;\n  if (c > 1) return p[2]; p = 0; return 0; }\n' > "$REP/../planted.c"
cc $SAN_CFLAGS -o "$REP/../planted" "$REP/../planted.c" || exit 2
("$REP/../planted" x; "$REP/../planted"; true) >/dev/null 2>&1
n=$(find "$REP" -type f | wc -l)
grep -qs heap-buffer-overflow "$REP"/* && grep -qs "detected memory leaks" "$REP"/* ||
	{ echo "sanitize: the planted errors left no reports ($n files): sanitizers not working"; exit 2; }
rm -f "$REP"/*

fail=0
list=$SD/conformance_sample.txt
awk -v n="$EVERY" '/^[ \t]*(#|$)/ { next } { if (k++ % n == (n > 1)) print }' tests/e2e/expected_pass.txt > "$list"
echo "sanitize: conformance sample, $(wc -l < "$list") tests (every ${EVERY}th of tests/e2e/expected_pass.txt from its second)"
tests/e2e/conformance.sh --check "$list" | tail -n 3 || fail=1

out=$(ONNX_TESTS=tests/e2e/cases OXC_SUITES=local tests/e2e/conformance.sh . | tail -n 1)
echo "sanitize: cases: $out"
case "$out" in *" 0 failed, 0 unsupported") ;; *) fail=1 ;; esac

# the optimizer's cases, with the widest vector target this CPU runs and
# each Winograd variant forced (opt_cases.sh runs them in every target)
cpu=generic march=
grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && cpu=x86-64-v4 march=-march=x86-64-v4
# (forced Winograd: the cases with a 3x3 convolution it can compute,
# tests/e2e/opt_wino.ere as opt_cases.sh takes them; the others compile as
# with "on")
for w in on 2 4; do
	f=.; [ $w = on ] || f=$(cat tests/e2e/opt_wino.ere)
	out=$(ONNXCC_FLAGS="--cpu $cpu --winograd $w" OX_CFLAGS="$SAN_CFLAGS $march" ONNX_TESTS=tests/e2e/cases \
		OXC_SUITES=opt tests/e2e/conformance.sh "$f" | tail -n 1)
	echo "sanitize: opt cases --cpu $cpu --winograd $w: $out"
	case "$out" in *" 0 failed, 0 unsupported") ;; *) fail=1 ;; esac
done

echo "sanitize: zoo sample $SAN_ZOO"
tests/e2e/zoo.sh build/zoo "$SAN_ZOO" | tail -n 1 || fail=1
# the rest of the zoo compiled (not run) by the sanitized onnxcc
for m in build/zoo/*/model.onnx; do
	name=$(basename "$(dirname "$m")")
	[[ $name =~ $SAN_ZOO ]] && continue
	mkdir -p "$SD/zoo/$name"
	flags=$(awk -v n="$name" '$1 == n && $2 != "-" { for (i = 2; i < NF; i++) printf "%s ", $i }' tests/e2e/zoo.txt)
	# shellcheck disable=SC2086 # flags is a list of options
	if "$ONNXCC" "$m" -o "$SD/zoo/$name/net.c" --main $flags > "$SD/zoo/$name/log" 2>&1; then
		echo "sanitize: zoo $name compiled"
	else
		echo "sanitize: zoo $name: FAIL ($SD/zoo/$name/log)"
		fail=1
	fi
done

SAN_CUDA=${SAN_CUDA:-lstm unet_small dynbatch:f16 dynslice ctrl}
CREP=$PWD/$SD/reports-cuda
rm -rf "$CREP" && mkdir -p "$CREP" || exit 2
for mk in $SAN_CUDA; do
	m=${mk%:*} d=build/zoo/${mk%:*} o=$SD/cuda/${mk/:/-} x=build/zoo/${mk%:*}/input_0.npy
	rm -rf "$o" && mkdir -p "$o"
	src=$d/model.onnx st=ok
	if [ "$mk" != "$m" ]; then
		/usr/bin/python3 tools/to_half.py "$d/model.onnx" "$o/model.onnx" --input "$x" "$o/x.npy" > "$o/log" 2>&1 || st=CONVERT-FAIL
		src=$o/model.onnx x=$o/x.npy
	fi
	fl=; [ "$m" = dynbatch ] && fl="--shape input=2x3x32x32"
	if [ "$m" = dynslice ]; then # (its inputs: x, f, im; no reference)
		d=tests/e2e/dynslice src=$d/dynslice.onnx fl="--dim N=1..4 --dim H=4..12 --dim W=4..12"
		x="$d/dynslice_x.npy $d/dynslice_f.npy $d/dynslice_im.npy"
	fi
	if [ "$m" = ctrl ]; then # (If, Loop, Scan on the host; inputs x, n; no reference)
		d=tests/e2e/ctrl src=$d/ctrl.onnx fl="--dim T=2..8 --max s=80"
		x="$d/ctrl_x.npy $d/ctrl_n.npy"
	fi
	# shellcheck disable=SC2086 # fl, SAN_CFLAGS: lists of options
	if [ $st = ok ] && { ! "$ONNXCC" "$src" -o "$o/net.c" --target cuda --cuda-emu --main $fl >> "$o/log" 2>&1 ||
		! cc $SAN_CFLAGS -std=c11 -c "$o/net_weights.c" -o "$o/w.o" >> "$o/log" 2>&1 ||
		! cc $SAN_CFLAGS -std=c11 -c "$o/net_main.c" -o "$o/m.o" >> "$o/log" 2>&1 ||
		! ${CXX:-g++} $SAN_CFLAGS -std=c++17 -O1 -DOX_CUDA_EMU -I "$o" -x c++ "$o/net.cu" -x none "$o/w.o" "$o/m.o" \
			-o "$o/net" -lm -pthread >> "$o/log" 2>&1; }; then
		st=BUILD-FAIL
	elif [ $st = ok ] && ! ASAN_OPTIONS="${ASAN_OPTIONS/$REP/$CREP}" UBSAN_OPTIONS="${UBSAN_OPTIONS/$REP/$CREP}" \
		LSAN_OPTIONS="${LSAN_OPTIONS/$REP/$CREP}" OX_EMU_UCONTEXT=1 "$o/net" $x -o "$o/out" >> "$o/log" 2>&1; then
		st=RUN-FAIL
	elif [ $st = ok ] && [ "$mk" = "$m" ] && [ "$m" != dynslice ] && [ "$m" != ctrl ]; then
		k=0
		while read -r amax; do
			atol=$(awk -v a="$amax" 'BEGIN { printf "%.9g", 1e-4 * (a > 0 ? a : 1) }')
			tests/e2e/oxcmp --rtol 0 --atol "$atol" "$o/out/output_$k.npy" "$d/ref/output_$k.npy" >> "$o/log" 2>&1 || st=MISMATCH
			k=$((k + 1))
		done < <(tail -n +2 "$d/ref/info.txt")
	fi
	echo "sanitize: cuda-emu $mk: $st"
	[ $st = ok ] || { fail=1; tail -n 5 "$o/log"; }
done
# ASan's warning that it follows swapcontext only approximately is expected
for f in $(find "$CREP" -type f); do
	grep -v "WARNING: ASan doesn't fully support makecontext/swapcontext" "$f" | grep -q . && mv "$f" "$REP/" || rm -f "$f"
done

n=$(find "$REP" -type f | wc -l)
if [ "$n" -ne 0 ]; then
	echo "sanitize: $n report(s) in $REP:"
	for f in $(find "$REP" -type f | head -n 5); do echo "--- $f"; head -n 30 "$f"; done
	fail=1
fi
echo "sanitize: $n reports"
exit $fail
