#!/bin/bash
# run.sh: templates/vmath.c's accuracy (tests/vmath/vmath_test.c) in every
# vector rendering this machine runs: the --cpu targets' widths and flags
# (generic 4 lanes, x86-64-v3 8, x86-64-v4 16, armv8-a 4) and the plain-C11
# struct rendering (-DOX_VF_PORTABLE), each with gcc and clang. A target
# whose instructions this CPU lacks is skipped, and says so ("skipped (this
# machine: ...)", the only skip tests/layers.sh allows).
#
#   tests/vmath/run.sh        (make vmath)   exit 1 if any build or bound fails
#   tests/vmath/run.sh --qemu (make arm64)   only armv8-a, built by
#       aarch64-linux-gnu-gcc and clang --target=aarch64-linux-gnu and run
#       under qemu-aarch64 -cpu cortex-a53 (on an AArch64 machine: natively,
#       as make vmath)
set -u
cd "$(dirname "$0")/../.." || exit 2
B=build/vmath
mkdir -p "$B" || exit 2
has() { grep -qw "$1" /proc/cpuinfo 2>/dev/null; }
arch=$(uname -m)
qemu=0
[ "${1:-}" = --qemu ] && qemu=1
command -v clang > /dev/null || { echo "vmath: clang is not installed (make deps-clang)"; exit 2; }
# the compilers (words: a command and its target) and what runs the program
ccs=("${CC:-cc}" clang) run=() cfgs=("generic|4||" "portable|4|-DOX_VF_PORTABLE|" \
	"x86-64-v3|8|-march=x86-64-v3|avx2 fma" "x86-64-v4|16|-march=x86-64-v4|avx512f avx512bw avx512dq avx512vl" \
	"armv8-a|4|-march=armv8-a|")
if [ $qemu = 1 ]; then
	cfgs=("armv8-a|4|-march=armv8-a|")
	if [ "$arch" != aarch64 ]; then
		for c in aarch64-linux-gnu-gcc qemu-aarch64; do
			command -v $c > /dev/null || { echo "vmath: $c is not installed (make deps-cross)"; exit 2; }
		done
		# an ARMv8.0-A core: nothing past armv8-a may run
		ccs=(aarch64-linux-gnu-gcc "clang --target=aarch64-linux-gnu") run=(qemu-aarch64 -cpu cortex-a53 -L /usr/aarch64-linux-gnu)
	fi
fi
fails=0 runs=0
for cfg in "${cfgs[@]}"; do
	IFS='|' read -r name vw flags feats <<< "$cfg"
	case $name in
	x86-64-*) [ "$arch" = x86_64 ] || { echo "vmath $name: skipped (this machine: not x86-64)"; continue; } ;;
	armv8-a) [ "$arch" = aarch64 ] || [ $qemu = 1 ] ||
		{ echo "vmath $name: skipped (this machine: not AArch64; make arm64 runs it under qemu-aarch64)"; continue; } ;;
	esac
	missing=''
	for f in $feats; do has "$f" || missing="$missing $f"; done
	if [ -n "$missing" ]; then
		echo "vmath $name: skipped (this machine: its CPU lacks$missing)"
		continue
	fi
	for cc in "${ccs[@]}"; do
		exe=$B/vmath_${name}_$(basename "${cc%% *}")
		# $cc and $flags are lists of words: split on purpose.
		# shellcheck disable=SC2086
		if ! $cc -std=c11 -O2 -Wall -Wextra -Werror $flags -DOX_VW="$vw" -o "$exe" tests/vmath/vmath_test.c -lm \
			> "$exe.log" 2>&1; then
			echo "vmath $name ($cc): build failed"
			cat "$exe.log"
			fails=$((fails + 1))
			continue
		fi
		out=$("${run[@]}" "$exe")
		rc=$?
		runs=$((runs + 1))
		echo "vmath $name ($cc${run:+, under ${run[*]}}):"
		printf '%s\n' "$out" | sed -n '2,$p'
		[ $rc = 0 ] || fails=$((fails + 1))
		# the NEON intrinsics were the ones taken
		case $name in armv8-a) printf '%s\n' "$out" | head -n 1 | grep -q '(NEON)$' ||
			{ echo "vmath $name ($cc): not the NEON rendering: $(printf '%s\n' "$out" | head -n 1)"; fails=$((fails + 1)); } ;;
		esac
	done
done
# The NEON rendering, built (not run) with clang's AArch64 target.
if [ "$arch" != aarch64 ] && [ $qemu = 0 ]; then
	if clang --target=aarch64-linux-gnu -march=armv8-a -ffreestanding -std=c11 -O2 -Wall -Wextra -Werror \
		-c -o "$B/neon_check.o" tests/vmath/neon_check.c > "$B/neon_check.log" 2>&1; then
		echo "vmath armv8-a: the NEON rendering builds (clang --target=aarch64-linux-gnu; not run here)"
	else
		echo "vmath armv8-a: the NEON rendering does not build:"
		cat "$B/neon_check.log"
		fails=$((fails + 1))
	fi
fi
echo "vmath: $runs builds run, $fails failed"
[ "$fails" = 0 ] && [ "$runs" -gt 0 ]
