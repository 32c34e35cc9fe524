#!/bin/bash
# conformance.sh: run the ONNX backend tests through onnxcc, in parallel.
#
#   tests/e2e/conformance.sh [-j N] [-o RESULTS.tsv] [FILTER_REGEX]
#   tests/e2e/conformance.sh [-j N] [-o RESULTS.tsv] --check EXPECTED_LIST
#
# Per test folder (suites node, pytorch-converted, pytorch-operator, simple
# under $ONNX_TESTS, or the folders named in $OXC_SUITES, e.g. OXC_SUITES=local
# with ONNX_TESTS=tests/e2e/cases): onnxcc --main, cc, run on test_data_set_0, oxcmp each
# output with the tolerance from tests/e2e/tolerances.txt. onnxcc refusing
# with a message is "unsupported"; a crash, a build error, a run error, a
# timeout or a wrong value is "fail". Every test is compiled as the model
# is first; when onnxcc then names a graph input it needs at compile time
# (or as an example), the test is compiled again with --const/--like from
# its data, a second, labelled count: "only with hints" (OXC_HINTS=0 turns
# those retries off; --check always does, so the expected-pass list is of
# passes as the model is). Every test gets the same `--max-elems
# $OXC_MAX_ELEMS` (default 65536; 0: none): the bound a user gives for the
# sizes read from data that a model leaves unbounded (a Range to a limit
# given as an input), the same for all tests. The last line is always
# `conformance: N passed (S as the model is, H only with --const/--like
# hints), M failed, K unsupported` and the exit status 0,
# except in --check mode (1 when a listed test does not pass) and on setup
# errors (2). See tests/e2e/README.md.
set -u
# OXC_TARGET=cuda-emu|cuda: the CUDA target (docs/cuda.md), built by c++ against
# ox_cuda_emu.h or by nvcc. OXC_TARGET=aarch64|riscv64: the C target
# cross-built by $ARCH-linux-gnu-gcc and run under qemu-user
# (qemu-$ARCH -L /usr/$ARCH-linux-gnu, and -cpu $OXC_QEMU_CPU when set:
# a core of that ISA level, which faults on any later instruction;
# tests/arm64/run.sh); --cpu and its flags come from ONNXCC_FLAGS and
# OX_CFLAGS as for the host.
case ${OXC_TARGET:-c} in cuda-emu) export OXC_TFLAGS='--target cuda --cuda-emu' ;; cuda) export OXC_TFLAGS='--target cuda' ;; *) export OXC_TFLAGS= ;; esac
case ${OXC_TARGET:-c} in
aarch64 | riscv64) export OXC_XCC=$OXC_TARGET-linux-gnu-gcc OXC_QEMU=qemu-$OXC_TARGET OXC_SYSROOT=/usr/$OXC_TARGET-linux-gnu ;;
*) export OXC_XCC='' OXC_QEMU='' OXC_SYSROOT='' ;;
esac

# ---- worker: one test, called back through xargs as `conformance.sh --one SUITE/NAME` ----
one() {
	local id=$1 suite=${1%%/*} name=${1#*/}
	local dir=$OXC_TESTS/$id data=$OXC_TESTS/$id/test_data_set_0
	local tmp status=fail detail='' rc
	tmp=$(mktemp -d "$OXC_WORK/t.XXXXXX") || exit 1
	detail=$(check "$tmp")
	rc=$?
	case $rc in 0) status=pass ;; 3) status=unsupported ;; esac
	detail=${detail//$'\t'/ }
	detail=${detail//$'\r'/}
	detail=${detail//$OXC_TESTS\//}
	detail=${detail//$tmp\//}
	detail=${detail:0:400}
	printf '%s\t%s\t%s\t%s\n' "$name" "$status" "$suite" "$detail" >"$OXC_RES/${suite}__$name"
	[ "$status" = fail ] && printf 'FAIL %s: %s\n' "$id" "$detail"
	[ -n "${OX_KEEP:-}" ] || rm -rf "$tmp"
	return 0
}

# first line that says "error", else the first non-empty line
first_error() {
	local l
	l=$(grep -m1 -i 'error' "$1" 2>/dev/null) || l=$(grep -m1 . "$1" 2>/dev/null)
	printf '%s' "$l"
}

# onnxcc's hints count graph inputs still there: map #IDX past the inputs
# frozen so far (check's $frozen) to the test's input_K.pb number.
orig_index() {
	local orig=0 seen=-1
	while :; do
		[[ " ${frozen[*]} " == *" $orig "* ]] || seen=$((seen + 1))
		[ "$seen" = "$1" ] && break
		orig=$((orig + 1))
	done
	echo "$orig"
}

# Prints the detail; returns 0 pass, 1 fail, 3 unsupported. Uses one's locals.
check() {
	local t=$1 rc k n
	[ -f "$dir/model.onnx" ] || { echo "no model.onnx"; return 1; }
	[ -d "$data" ] || { echo "no test_data_set_0"; return 1; }

	# Shape-steering graph inputs (Reshape shape, Reduce axes, Resize sizes)
	# must be known at compile time: onnxcc names them in a hint, and the
	# test is then compiled for the test's value (--const) and run without
	# that input. Such passes are marked [const: NAME] in the results.
	local -a consts=() frozen=() maxel=()
	[ "${OXC_MAX_ELEMS:-65536}" = 0 ] || maxel=(--max-elems "${OXC_MAX_ELEMS:-65536}")
	local try hint idx nm orig line
	for try in 1 2 3 4 5 6 7 8; do
		(cd "$t" && timeout -k 5 "${OX_COMPILE_TIMEOUT:-300}" "$OXC_ONNXCC" "$dir/model.onnx" -o "$t/net.c" --main $ONNXCC_FLAGS $OXC_TFLAGS "${maxel[@]}" "${consts[@]}") >"$t/onnxcc.log" 2>&1
		rc=$?
		[ $rc = 1 ] && [ "${OXC_HINTS:-1}" = 1 ] || break
		# a sequence / optional input: compile for the structure of the test's value
		hint=$(grep -o "graph input #[0-9]* '[^']*' needs an example; to compile for the structure of one value pass --like" "$t/onnxcc.log")
		if [ -n "$hint" ]; then
			local -a likes=()
			while read -r line; do
				idx=$(echo "$line" | sed -E 's/graph input #([0-9]+) .*/\1/')
				nm=$(echo "$line" | sed -E "s/[^']*'([^']*)'.*/\1/")
				orig=$(orig_index "$idx")
				[ -f "$data/input_$orig.pb" ] || break 2
				likes+=(--like "$nm=$data/input_$orig.pb")
			done <<<"$hint"
			consts+=("${likes[@]}")
			continue
		fi
		hint=$(grep -o "graph input #[0-9]* '[^']*'; to compile for one value of it pass --const" "$t/onnxcc.log" | head -n 1)
		[ -n "$hint" ] || break
		idx=$(echo "$hint" | sed -E 's/graph input #([0-9]+) .*/\1/')
		idx=$(orig_index "$idx")
		nm=$(echo "$hint" | sed -E "s/[^']*'([^']*)'.*/\1/")
		[ -f "$data/input_$idx.pb" ] || break
		consts+=(--const "$nm=$data/input_$idx.pb")
		frozen+=("$idx")
	done
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "onnxcc: timed out after ${OX_COMPILE_TIMEOUT:-300} s"; return 1
	elif [ $rc -ge 128 ]; then
		echo "onnxcc: crashed (signal $((rc - 128)))$(grep -m1 . "$t/onnxcc.log" | sed 's/^/: /')"; return 1
	elif [ $rc = 126 ] || [ $rc = 127 ]; then
		echo "onnxcc could not be started: $(grep -m1 . "$t/onnxcc.log")"; return 1
	elif [ $rc != 0 ]; then
		local msg
		msg=$(grep -m1 . "$t/onnxcc.log")
		[ -n "$msg" ] || { echo "onnxcc: exit status $rc with no message"; return 1; }
		echo "$msg"; return 3
	fi

	# shellcheck disable=SC2086 # OX_CFLAGS is a list of flags
	case ${OXC_TARGET:-c} in
	cuda-emu) # the CUDA target's .cu by the host C++ compiler, kernels on the CPU
		{ ${CC:-cc} -std=c11 -O1 -c "$t/net_main.c" -o "$t/net_main.o" &&
			${CC:-cc} -std=c11 -O1 -c "$t/net_weights.c" -o "$t/net_weights.o" &&
			timeout -k 5 "${OX_BUILD_TIMEOUT:-600}" ${CXX:-c++} -std=c++17 -O1 -DOX_CUDA_EMU -I"$t" -o "$t/net" \
				-x c++ "$t/net.cu" -x none "$t/net_main.o" "$t/net_weights.o" -lm -pthread; } >"$t/build.log" 2>&1 ;;
	cuda) # nvcc, for the GPU of this machine ($OXC_ARCH, default sm_90)
		timeout -k 5 "${OX_BUILD_TIMEOUT:-600}" ${NVCC:-nvcc} -std=c++17 -O1 -arch="${OXC_ARCH:-sm_90}" -o "$t/net" \
			"$t/net.cu" "$t/net_main.c" "$t/net_weights.c" >"$t/build.log" 2>&1 ;;
	*) # the host's cc, or the cross compiler of OXC_TARGET=aarch64|riscv64
		timeout -k 5 "${OX_BUILD_TIMEOUT:-600}" ${OXC_XCC:-${CC:-cc}} -std=c11 -O1 ${OX_CFLAGS:-} -o "$t/net" \
			"$t/net.c" "$t/net_main.c" "$t/net_weights.c" -lm >"$t/build.log" 2>&1 ;;
	esac
	rc=$?
	[ $rc = 0 ] || { echo "build (exit $rc): $(first_error "$t/build.log")"; return 1; }

	local -a ins=()
	k=0
	while [ -f "$data/input_$k.pb" ]; do
		[[ " ${frozen[*]} " == *" $k "* ]] || ins+=("$data/input_$k.pb")
		k=$((k + 1))
	done
	n=$(find "$data" -maxdepth 1 -name 'input_*.pb' | wc -l)
	[ "$n" = "$k" ] || { echo "test data: input files are not input_0..input_$((n - 1)).pb"; return 1; }
	local -a emu=()
	[ -z "$OXC_QEMU" ] || emu=("$OXC_QEMU" -L "$OXC_SYSROOT" ${OXC_QEMU_CPU:+-cpu "$OXC_QEMU_CPU"})
	timeout -k 5 "${OX_RUN_TIMEOUT:-60}" "${emu[@]}" "$t/net" "${ins[@]}" -o "$t/out" >"$t/run.log" 2>&1
	rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "run: timed out after ${OX_RUN_TIMEOUT:-60} s"; return 1
	elif [ $rc -ge 128 ]; then
		echo "run: crashed (signal $((rc - 128)))"; return 1
	elif [ $rc != 0 ] && grep -q "_ERR_UNSUPPORTED:" "$t/run.log"; then
		# the program refused the data (a Dropout told to drop at random)
		echo "run refused: $(grep -m1 . "$t/run.log")"; return 3
	elif [ $rc != 0 ]; then
		echo "run (exit $rc): $(grep -m1 . "$t/run.log")"; return 1
	fi

	local -a tol
	read -r -a tol <<<"$(tolerance "$name" "$id")"
	local got nexp out lines=''
	nexp=$(find "$data" -maxdepth 1 -name 'output_*.pb' | wc -l)
	# a tensor output is output_K.npy; a sequence or optional output_K.list + output_K_J.npy
	got=$(find "$t/out" -maxdepth 1 \( -regex '.*/output_[0-9]*\.npy' -o -name 'output_*.list' \) | wc -l)
	[ "$got" = "$nexp" ] || { echo "run wrote $got outputs, the test has $nexp"; return 1; }
	for ((k = 0; k < nexp; k++)); do
		[ -f "$data/output_$k.pb" ] || { echo "test data: no output_$k.pb"; return 1; }
		local gotf=$t/out/output_$k.npy
		[ -f "$t/out/output_$k.list" ] && gotf=$t/out/output_$k.list
		out=$("$OXC_OXCMP" "${tol[@]}" "$gotf" "$data/output_$k.pb" 2>&1)
		rc=$?
		out=$(printf '%s' "$out" | head -n 1)
		[ $rc = 0 ] || { echo "output_$k: $out"; return 1; }
		[ "$nexp" = 1 ] && lines=$out || lines="$lines${lines:+; }output_$k: $out"
	done
	[ ${#frozen[@]} = 0 ] || lines="[const: ${frozen[*]}] $lines"
	[[ " ${consts[*]} " != *" --like "* ]] || lines="[like] $lines"
	echo "$lines"
	return 0
}

# "--rtol R --atol A" from the first tolerances.txt line whose regex matches
# the test name (or suite/name); nothing when none does (oxcmp's defaults).
tolerance() {
	local re r a rest
	[ -f "$OXC_TOL" ] || return 0
	while read -r re r a rest; do
		case $re in '' | '#'*) continue ;; esac
		if [[ $1 =~ $re || $2 =~ $re ]]; then
			echo "--rtol $r --atol $a"
			return 0
		fi
	done <"$OXC_TOL"
}

if [ "${1:-}" = --one ]; then
	one "$2"
	exit 0
fi

# ---- driver ----
die() { echo "conformance: $*" >&2; exit 2; }
usage() {
	sed -n '4,5s/^#   //p' "$0" >&2
	exit 2
}

SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
jobs=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
results='' filter='' checklist=''
while [ $# -gt 0 ]; do
	case $1 in
	-j) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
	-j*) jobs=${1#-j}; shift ;;
	-o) [ $# -ge 2 ] || usage; results=$2; shift 2 ;;
	--check) [ $# -ge 2 ] || usage; checklist=$2; shift 2 ;;
	-h | --help) usage ;;
	-*) usage ;;
	*) [ -z "$filter" ] || usage; filter=$1; shift ;;
	esac
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "-j needs a positive number, got '$jobs'"
[ -z "$checklist" ] || [ -z "$filter" ] || die "--check takes no FILTER"
[ -z "$checklist" ] || [ -f "$checklist" ] || die "$checklist: no such file"
# the expected-pass list holds passes of the models as they are: no hints
[ -z "$checklist" ] || OXC_HINTS=0
export OXC_HINTS=${OXC_HINTS:-1}
if [ -n "$filter" ]; then
	[[ x =~ $filter ]]
	[ $? != 2 ] || die "bad regex '$filter'"
fi

# paths given relative to where we were called from
if [ -n "$results" ]; then
	mkdir -p "$(dirname "$results")" || die "-o: cannot create the directory of $results"
	results=$(cd "$(dirname "$results")" && pwd)/$(basename "$results")
fi
[ -z "$checklist" ] || checklist=$(cd "$(dirname "$checklist")" && pwd)/$(basename "$checklist")
ROOT=$(cd "$(dirname "$SELF")/../.." && pwd)
# the data: $ONNX_TESTS, else where tests/onnx_tests.sh finds it. The lists
# name tests of ONNX v1.22's suite (../shared); a copy that an onnx package
# installed may be older, and a listed test it lacks is then counted and
# named as absent, not failed.
older=0
if [ -n "${ONNX_TESTS:-}" ]; then
	tests=$ONNX_TESTS
	[ -d "$tests" ] || die "no ONNX backend tests at $tests (ONNX_TESTS)"
else
	tests=$("$ROOT/tests/onnx_tests.sh") || exit 2
	[ "$tests" -ef "$ROOT/../shared/onnx-backend-tests" ] || older=1
fi
OXC_TESTS=$(cd "$tests" && pwd)
OXC_ONNXCC=${ONNXCC:-$ROOT/onnxcc}
[ -x "$OXC_ONNXCC" ] || die "$OXC_ONNXCC not found (run make)"
case $OXC_ONNXCC in /*) ;; *) OXC_ONNXCC=$(pwd)/$OXC_ONNXCC ;; esac
OXC_TOL=$ROOT/tests/e2e/tolerances.txt
command -v timeout >/dev/null || die "needs timeout(1) (coreutils)"
if [ -n "$OXC_XCC" ]; then
	command -v "$OXC_XCC" >/dev/null || die "OXC_TARGET=$OXC_TARGET needs $OXC_XCC (make deps-cross)"
	command -v "$OXC_QEMU" >/dev/null || die "OXC_TARGET=$OXC_TARGET needs $OXC_QEMU (make deps-cross)"
fi

OXC_WORK=$(mktemp -d "${TMPDIR:-/tmp}/oxconf.XXXXXX") || die "cannot make a temp dir"
if [ -n "${OX_KEEP:-}" ]; then
	echo "conformance: keeping work files in $OXC_WORK"
else
	trap 'rm -rf "$OXC_WORK"' EXIT
fi
trap 'exit 130' INT TERM
OXC_RES=$OXC_WORK/results
mkdir -p "$OXC_RES"

# oxcmp: the one `make` built, unless stale or missing; then our own copy
OXC_OXCMP=${OXCMP:-$ROOT/tests/e2e/oxcmp}
src1=$ROOT/tests/e2e/oxcmp.c src2=$ROOT/runtime_min/ox_main.c
if [ -z "${OXCMP:-}" ] && { [ ! -x "$OXC_OXCMP" ] || [ "$src1" -nt "$OXC_OXCMP" ] || [ "$src2" -nt "$OXC_OXCMP" ]; }; then
	OXC_OXCMP=$OXC_WORK/oxcmp
	${CC:-cc} -std=c11 -O1 -o "$OXC_OXCMP" "$src1" -lm || die "cannot build oxcmp"
fi
# extra onnxcc options for every test (e.g. ONNXCC_FLAGS='--cpu native' with
# OX_CFLAGS=-march=native); split into words on purpose
ONNXCC_FLAGS=${ONNXCC_FLAGS:-}
export OXC_TESTS OXC_ONNXCC OXC_OXCMP OXC_TOL OXC_WORK OXC_RES ONNXCC_FLAGS

# ---- select ----
suites=${OXC_SUITES:-"node pytorch-converted pytorch-operator simple"}
sel=()
if [ -n "$checklist" ]; then
	missing=()
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		line=$(printf '%s' "$line" | tr -d ' \t\r')
		[ -n "$line" ] || continue
		if [ -d "$OXC_TESTS/$line" ] && [[ $line == */* ]]; then
			sel+=("$line")
		else
			missing+=("$line")
		fi
	done <"$checklist"
else
	for s in $suites; do
		for d in "$OXC_TESTS/$s"/*/; do
			[ -d "$d" ] || continue
			n=$(basename "$d")
			if [ -z "$filter" ] || [[ $n =~ $filter || $s/$n =~ $filter ]]; then
				sel+=("$s/$n")
			fi
		done
	done
fi

# ---- run ----
if [ ${#sel[@]} -gt 0 ]; then
	printf '%s\0' "${sel[@]}" | xargs -0 -n 1 -P "$jobs" bash "$SELF" --one
fi

# ---- report ----
pass=0 hinted=0 fail=0 unsup=0
all=$OXC_WORK/all.tsv
: >"$all"
for id in "${sel[@]}"; do
	f=$OXC_RES/${id%%/*}__${id#*/}
	if [ -f "$f" ]; then
		cat "$f" >>"$all"
	else
		printf '%s\tfail\t%s\tno result (runner killed?)\n' "${id#*/}" "${id%%/*}" >>"$all"
	fi
done
while IFS=$'\t' read -r n st s d; do
	case $st in pass) pass=$((pass + 1)) ;; unsupported) unsup=$((unsup + 1)) ;; *) fail=$((fail + 1)) ;; esac
	# a pass that needed --const or --like (the detail says so) is not
	# a pass of the model as it is
	[ "$st" != pass ] || case $d in "[const:"* | "[like]"*) hinted=$((hinted + 1)) ;; esac
done <"$all"
if [ -n "$results" ]; then
	cp "$all" "$results" || die "cannot write $results"
fi

status=0
if [ -n "$checklist" ]; then
	bad=0 absent=0
	for m in "${missing[@]}"; do
		if [ $older = 1 ] && [[ $m == */* ]]; then
			absent=$((absent + 1))
			continue
		fi
		echo "check: FAIL $m (no such test; write it as SUITE/NAME, e.g. node/test_abs)"
		bad=$((bad + 1))
	done
	[ $absent = 0 ] || echo "check: $absent listed tests are not in $OXC_TESTS, an older copy of the suite" \
		"than the v1.22.0 the list was made on (../shared/onnx-backend-tests; tests/onnx_tests.sh)"
	while IFS=$'\t' read -r n st s d; do
		[ "$st" = pass ] && continue
		echo "check: FAIL $s/$n ($st: $d)"
		bad=$((bad + 1))
	done <"$all"
	echo "check: $((${#sel[@]} + ${#missing[@]})) listed, $bad not passing"
	[ $bad = 0 ] || status=1
fi
echo "conformance: $pass passed ($((pass - hinted)) as the model is, $hinted only with --const/--like hints), $fail failed, $unsup unsupported"
exit $status
