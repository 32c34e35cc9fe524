#!/bin/bash
# run.sh: the firmware example, end to end (`make firmware`).
#
#   examples/firmware/run.sh [OUTDIR]     (default build/fw)
#
# For each model of MODELS below: compile it with `onnxcc --cpu generic
# --name net`, build app.c with it for the host (the reference) and, with
# arm-none-eabi-gcc, for a Cortex-M4 in two variants, `hard` (FPU,
# -mfloat-abi=hard -mfpu=fpv4-sp-d16) and `soft` (no FPU, -mfloat-abi=soft),
# run each ELF on QEMU's mps2-an386 board with semihosting and -icount
# shift=0, and require:
#   - QEMU exits by itself with status 0 within QEMU_TIMEOUT seconds;
#   - its output, less the board-only `clock:` and `stack:` lines, is byte
#     for byte the host's: every output float bit for bit (both builds are
#     IEEE binary32 with -ffp-contract=off, so no fused multiply-add on
#     either side; the soft variant's float arithmetic is libgcc's, also
#     correctly rounded), and the argmax;
#   - the ELF has no malloc, free or _sbrk, the weights are in flash and
#     the arena in RAM (nm), and a program that calls malloc does not link;
#   - at least 512 bytes of the stack were never written (startup.c paints it);
#   - the soft variant has no FPU instruction, the hard one no fused
#     multiply-add (objdump).
# Prints arm-none-eabi-size of each ELF and of the network's objects, and
# the instructions per inference that QEMU's icount gives. Exit status 1 if
# a check fails, 2 on setup errors.
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${1:-build/fw}
ONNXCC=${ONNXCC:-./onnxcc}
CC=${CC:-cc}
ARMCC=${ARMCC:-arm-none-eabi-gcc}
QEMU=${QEMU:-qemu-system-arm}
QEMU_TIMEOUT=${QEMU_TIMEOUT:-300}
F=examples/firmware

# name|model: the fp32 digits network and its int8 QDQ version, which the
# qdq pass compiles to integer kernels (docs/optimizer.md)
MODELS=(
	"digits|examples/digits/digits.onnx"
	"digits_int8|examples/digits/digits_int8.onnx"
)
# variant|compiler flags
VARIANTS=(
	"hard|-mfloat-abi=hard -mfpu=fpv4-sp-d16"
	"soft|-mfloat-abi=soft"
)
CFLAGS_COMMON="-std=c11 -O2 -Wall -Wextra -ffp-contract=off"
ARM_FLAGS="-mcpu=cortex-m4 -mthumb -ffunction-sections -fdata-sections"
# no start files (startup.c is ours), newlib-nano for memcpy/memset, libm
# for floorf; nothing defines _sbrk, so any malloc fails the link
ARM_LDFLAGS="-nostartfiles --specs=nano.specs -T $F/mps2_an386.ld -Wl,--gc-sections"

die() { echo "firmware: $*" >&2; exit 2; }
[ -x "$ONNXCC" ] || die "$ONNXCC not found (run make)"
for t in "$ARMCC" "${ARMCC%gcc}size" "${ARMCC%gcc}nm" "$QEMU"; do
	command -v "$t" >/dev/null || die "$t not found (make deps-firmware)"
done
SIZE=${ARMCC%gcc}size
NM=${ARMCC%gcc}nm
mkdir -p "$OUT" || exit 2
fails=0 passed=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
summary=()

# The link must refuse malloc: a program that calls it has no _sbrk.
cat > "$OUT/malloc_probe.c" <<'PROBE'
#include <stdlib.h>
int main(void) { return malloc(16) != 0; }
PROBE
if $ARMCC $ARM_FLAGS -mfloat-abi=soft -o "$OUT/malloc_probe.elf" "$OUT/malloc_probe.c" $F/startup.c $F/semihost.c \
	$ARM_LDFLAGS >"$OUT/malloc_probe.log" 2>&1; then
	fail "a program calling malloc linked ($OUT/malloc_probe.elf): the firmware could use a heap"
elif ! grep -q _sbrk "$OUT/malloc_probe.log"; then
	fail "the malloc probe failed to link, but not for want of _sbrk: $(head -n 3 "$OUT/malloc_probe.log")"
else
	echo "no heap: a program calling malloc does not link (undefined _sbrk)"
fi

for m in "${MODELS[@]}"; do
	name=${m%%|*} model=${m#*|}
	[ -f "$model" ] || die "$model not found"
	d=$OUT/$name
	rm -rf "$d" && mkdir -p "$d" || exit 2
	echo "== $name ($model)"
	if ! $ONNXCC "$model" -o "$d/net.c" --cpu generic --name net >"$d/onnxcc.log" 2>&1; then
		fail "$name: onnxcc: $(head -n 3 "$d/onnxcc.log")"
		continue
	fi
	if ! $CC $CFLAGS_COMMON -I"$d" -o "$d/host" $F/app.c $F/host.c "$d/net.c" "$d/net_weights.c" -lm \
		>"$d/host.log" 2>&1 || ! "$d/host" >"$d/host.out" 2>&1; then
		fail "$name: host build or run: $(cat "$d/host.log" "$d/host.out" 2>/dev/null | head -n 5)"
		continue
	fi
	tail -n 1 "$d/host.out" | sed 's/^/host:    /'
	for v in "${VARIANTS[@]}"; do
		var=${v%%|*} vflags=${v#*|}
		elf=$d/fw-$var.elf
		if ! $ARMCC $CFLAGS_COMMON $ARM_FLAGS $vflags -I"$d" -c -o "$d/net-$var.o" "$d/net.c" >"$d/arm-$var.log" 2>&1 ||
			! $ARMCC $CFLAGS_COMMON $ARM_FLAGS $vflags -I"$d" -c -o "$d/net_weights-$var.o" "$d/net_weights.c" \
				>>"$d/arm-$var.log" 2>&1 ||
			! $ARMCC $CFLAGS_COMMON $ARM_FLAGS $vflags -I"$d" -o "$elf" $F/app.c $F/startup.c $F/semihost.c \
				"$d/net-$var.o" "$d/net_weights-$var.o" $ARM_LDFLAGS -Wl,-Map="$d/fw-$var.map" -lm \
				>>"$d/arm-$var.log" 2>&1; then
			fail "$name/$var: cross build: $(head -n 5 "$d/arm-$var.log")"
			continue
		fi
		$NM "$elf" >"$d/fw-$var.nm"
		bad=$(awk '$3 ~ /^(_?malloc|_malloc_r|_?free|_free_r|_?calloc|_?realloc|_sbrk|_sbrk_r)$/ {print $3}' "$d/fw-$var.nm")
		[ -z "$bad" ] || fail "$name/$var: the ELF has $bad"
		addr() { awk -v s="$1" '$3 == s {print $1}' "$d/fw-$var.nm"; }
		w=$(addr net_weights) a=$(addr net_arena)
		[ -n "$w" ] && [ $((16#$w)) -lt $((0x20000000)) ] || fail "$name/$var: net_weights not in flash (${w:-absent})"
		[ -n "$a" ] && [ $((16#$a)) -ge $((0x20000000)) ] || fail "$name/$var: net_arena not in RAM (${a:-absent})"
		# soft: not one FPU instruction (Thumb-2 without NEON has no other
		# mnemonic that starts with v); hard: no fused multiply-add
		${ARMCC%gcc}objdump -d "$elf" | awk -F'\t' 'NF >= 3 {print $3}' >"$d/fw-$var.ops"
		case $var in
		soft) n=$(grep -c '^v' "$d/fw-$var.ops") && fail "$name/$var: $n FPU instructions in a soft-float build" ;;
		hard) n=$(grep -c '^vf[mn]' "$d/fw-$var.ops") && fail "$name/$var: $n fused multiply-adds (contraction is on)" ;;
		esac
		log=$d/qemu-$var.out
		rm -f "$log"
		timeout "$QEMU_TIMEOUT" $QEMU -M mps2-an386 -display none -monitor none -serial none \
			-chardev file,id=semi,path="$log" -semihosting-config enable=on,target=native,chardev=semi \
			-icount shift=0 -kernel "$elf" >"$d/qemu-$var.err" 2>&1
		rc=$?
		if [ $rc -ne 0 ]; then
			fail "$name/$var: QEMU exited with status $rc$([ $rc = 124 ] && echo " (timeout ${QEMU_TIMEOUT}s)"): $(cat "$log" "$d/qemu-$var.err" 2>/dev/null | tail -n 3)"
			continue
		fi
		grep -v '^clock: \|^stack: ' "$log" >"$d/qemu-$var.cmp"
		if ! cmp -s "$d/qemu-$var.cmp" "$d/host.out"; then
			fail "$name/$var: QEMU's output differs from the host's (diff $d/host.out $d/qemu-$var.cmp):"
			diff "$d/host.out" "$d/qemu-$var.cmp" | head -n 10
			continue
		fi
		nout=$(grep -c '^out ' "$log")
		ticks=$(sed -n 's/^clock: \([0-9]*\) Hz, per run min \([0-9]*\) mean \([0-9]*\) max \([0-9]*\) ticks$/\1 \2 \3 \4/p' "$log")
		stack=$(sed -n 's/^stack: \([0-9]*\) bytes never used$/\1/p' "$log")
		if [ -z "$ticks" ] || [ -z "$stack" ]; then
			fail "$name/$var: no clock or stack line in $log"
			continue
		fi
		set -- $ticks
		# -icount shift=0: virtual time advances 1 ns per instruction, so a
		# tick of the $1 Hz clock is 1e9/$1 instructions
		per=$((1000000000 / $1))
		stack_size=$((16#$(addr __stack_top) - 16#$(addr __stack_bottom)))
		if [ "$stack" -lt 512 ]; then
			fail "$name/$var: $stack bytes of the stack left unused (under 512): raise STACK_SIZE in $F/mps2_an386.ld"
			continue
		fi
		echo "$name/$var: $nout outputs identical to the host's, bit for bit; $(tail -n 1 "$d/host.out")"
		echo "  instructions per inference (QEMU icount, not Cortex-M4 cycles): $(($3 * per)) mean, $(($2 * per))..$(($4 * per)) (resolution $per)"
		echo "  stack used: $((stack_size - stack)) of $stack_size bytes"
		echo "  arm-none-eabi-size:"
		$SIZE "$elf" "$d/net-$var.o" "$d/net_weights-$var.o" | sed 's/^/    /'
		summary+=("$name/$var: passed, $(($3 * per)) instructions per inference")
		passed=$((passed + 1))
	done
done
echo "-- firmware summary"
for s in "${summary[@]}"; do echo "  $s"; done
echo "firmware: $passed passed, $fails failed"
[ $fails -eq 0 ] || exit 1
exit 0
