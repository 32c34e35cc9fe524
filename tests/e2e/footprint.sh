#!/bin/bash
# footprint.sh: memory plan and footprint checks (`make footprint`).
#
#   tests/e2e/footprint.sh [DIR] [FILTER]   (DIR default build/zoo, as zoo.sh)
#
# 1. Every zoo model in tests/e2e/zoo.txt, which DIR must hold (zoo.sh exports
#    them; a missing one fails) and the digits example:
#    `onnxcc --report=json`; the arena must be at most 1.05 x the lower bound
#    (the most bytes live at one step of the chosen schedule). The table
#    (arena, lower bound, no reuse, onnx2c-style unions, weights, .text of
#    the network code at -O2) is what docs/footprint.md shows.
# 2. On the digits example and two zoo models: the network code compiles
#    with -ffreestanding -Werror, and its objects reference no symbol but
#    mem* and libm ones (no malloc, free, stdio).
# 3. Weights: the .incbin object and the C fallback hold the model's bytes
#    exactly, a blob of the wrong size stops the build, the three --weights
#    modes compute the same bytes; --weights external: PREFIX_init accepts
#    the blob and rejects each kind of bad one with its error code, and the
#    run functions refuse to run before a successful init.
# Exit status 1 if a check fails, 2 on setup errors.
set -u
cd "$(dirname "$0")/../.." || exit 2

DIR=${1:-build/zoo}
FILTER=${2:-}
ONNXCC=${ONNXCC:-./onnxcc}
CC=${CC:-cc}
LIST=tests/e2e/zoo.txt
MAX_RATIO=1.05
die() { echo "footprint: $*" >&2; exit 2; }
[ -x "$ONNXCC" ] || die "$ONNXCC not found (run make)"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/oxfoot.XXXXXX") || die "cannot make a temp dir"
trap 'rm -rf "$WORK"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# a number from the --report=json text in file $1: key $2
jnum() { sed -n "s/^  \"$2\": \\([0-9.]*\\),*\$/\\1/p" "$1" | head -n 1; }

# name|flags|model for every selected model
models="digits||examples/digits/digits.onnx"$'\n'
models+=$(awk -v f="$FILTER" '
	/^[ \t]*(#|$)/ { next }
	f != "" && $1 !~ f { next }
	{ fl = ""; for (i = 2; i < NF; i++) if ($i != "-") fl = fl (fl == "" ? "" : " ") $i
	  printf "%s|%s|\n", $1, fl }' "$LIST")

# ---- 1. the ratio, and the table ----
printf '| %-24s | %10s | %10s | %5s | %12s | %12s | %10s | %10s | %9s | %11s | %12s |\n' model arena lower_bound ratio \
	no_reuse slot_unions onnx_order weights .text "arena -O0" "arena native"
printf '|%s|\n' "--------------------------|------------|------------|-------|--------------|--------------|------------|------------|-----------|-------------|--------------"
while IFS="|" read -r -u 3 name flags model; do
	[ -n "$name" ] || continue
	[ -n "$model" ] || model=$DIR/$name/model.onnx
	if [ ! -f "$model" ]; then
		fail "$name: $model is not exported (make zoo-models)"
		continue
	fi
	d=$WORK/$name
	mkdir -p "$d" "$d/o0" "$d/nat"
	# shellcheck disable=SC2086 # $flags is a list of options
	if ! "$ONNXCC" "$model" -o "$d/net.c" $flags --report=json > "$d/report.json" 2> "$d/onnxcc.log"; then
		fail "$name: onnxcc: $(head -n 1 "$d/onnxcc.log")"
		continue
	fi
	# the same model without the optimizer (--opt 0), and for this machine's
	# vector width (--cpu native: channel blocks round C up to the width)
	# shellcheck disable=SC2086
	"$ONNXCC" "$model" -o "$d/o0/net.c" $flags --opt 0 --report=json > "$d/report0.json" 2>/dev/null ||
		fail "$name: onnxcc --opt 0 failed"
	# shellcheck disable=SC2086
	"$ONNXCC" "$model" -o "$d/nat/net.c" $flags --cpu native --report=json > "$d/reportn.json" 2>/dev/null ||
		fail "$name: onnxcc --cpu native failed"
	for r in report0 reportn; do
		a=$(jnum "$d/$r.json" arena_bytes) l=$(jnum "$d/$r.json" lower_bound_bytes)
		awk -v a="$a" -v b="$l" -v m="$MAX_RATIO" 'BEGIN { exit !(b > 0 && a / b > m) }' &&
			fail "$name ($r): arena $a is more than $MAX_RATIO x the lower bound $l"
	done
	arena=$(jnum "$d/report.json" arena_bytes)
	lb=$(jnum "$d/report.json" lower_bound_bytes)
	ratio=$(awk -v a="$arena" -v b="$lb" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 1) }')
	text='?'
	if $CC -std=c11 -O2 -c -o "$d/net.o" "$d/net.c" 2> "$d/cc.log"; then
		text=$(size "$d/net.o" | awk 'NR == 2 { print $1 }')
	else
		fail "$name: net.c does not compile: $(head -n 1 "$d/cc.log")"
	fi
	printf '| %-24s | %10s | %10s | %5s | %12s | %12s | %10s | %10s | %9s | %11s | %12s |\n' "$name" "$arena" "$lb" \
		"$ratio" "$(jnum "$d/report.json" no_reuse_bytes)" "$(jnum "$d/report.json" slot_unions_bytes)" \
		"$(sed -n 's/.*"imported_order": {"arena_bytes": \([0-9]*\).*/\1/p' "$d/report.json")" \
		"$(jnum "$d/report.json" weights_bytes)" "$text" "$(jnum "$d/report0.json" arena_bytes)" \
		"$(jnum "$d/reportn.json" arena_bytes)"
	awk -v r="$ratio" -v m="$MAX_RATIO" 'BEGIN { exit !(r > m) }' &&
		fail "$name: arena $arena is $ratio x the lower bound $lb (more than $MAX_RATIO)"
done 3<<< "$models"

# ---- 2. freestanding, and no malloc/free/stdio ----
libm=$($CC -print-file-name=libm.so.6)
allowed=$WORK/allowed.txt
{ printf '%s\n' memcpy memset memmove memcmp; nm -D --defined-only "$libm" 2>/dev/null | awk '{ print $NF }' | sed 's/@.*//'; } |
	sort -u > "$allowed"
[ "$(wc -l < "$allowed")" -gt 50 ] || die "cannot list libm's symbols from $libm"
for name in digits squeezenet1_1 transformer_encoder; do
	d=$WORK/$name
	[ -f "$d/net.c" ] || continue
	for f in net net_weights; do
		if ! $CC -std=c11 -O2 -ffreestanding -Wall -Wextra -Werror -c -o "$d/$f.free.o" "$d/$f.c" 2> "$d/free.log"; then
			fail "$name: $f.c does not build with -ffreestanding -Werror: $(head -n 1 "$d/free.log")"
			continue
		fi
		# the network's own symbols (net_weights) are fine too
		bad=$(nm -u "$d/$f.free.o" | awk '$NF !~ /^net_/ { print $NF }' | sort -u | comm -23 - "$allowed" | tr '\n' ' ')
		[ -z "$bad" ] || fail "$name: $f.o references $bad(only mem* and libm are allowed)"
	done
done

# ---- 3. weights (on the digits example: 15 kB, above the inline limit) ----
w=$WORK/weights
mkdir -p "$w/embed" "$w/array" "$w/c" "$w/ext"
wmodel=examples/digits/digits.onnx
"$ONNXCC" "$wmodel" -o "$w/embed/net.c" > /dev/null || fail "weights: onnxcc (embed) failed"
"$ONNXCC" "$wmodel" -o "$w/array/net.c" --weights array > /dev/null || fail "weights: onnxcc --weights array failed"
"$ONNXCC" "$wmodel" -o "$w/c/net.c" --weights c > /dev/null || fail "weights: onnxcc --weights c failed"
"$ONNXCC" "$wmodel" -o "$w/ext/net.c" --weights external > /dev/null || fail "weights: onnxcc --weights external failed"
[ -f "$w/embed/net_weights.c.bin" ] || fail "weights: no net_weights.c.bin written"
# the C-array text only when asked for (--weights array), and then no .bin
[ -e "$w/embed/net_weights.inc" ] && fail "weights: embed wrote net_weights.inc, which it does not use"
[ -f "$w/array/net_weights.inc" ] && [ ! -e "$w/array/net_weights.c.bin" ] ||
	fail "weights: --weights array should write net_weights.inc and no .bin"
# the object built with .incbin (from another directory), and the one from
# --weights array's C array, hold the blob byte for byte
(cd "$WORK" && $CC -std=c11 -O2 -c -o "$w/inc.o" "$w/embed/net_weights.c") || fail "weights: .incbin build failed"
objcopy -O binary --only-section=.rodata.net_weights "$w/inc.o" "$w/inc.bin" &&
	cmp -s "$w/inc.bin" "$w/embed/net_weights.c.bin" || fail "weights: the .incbin object differs from the blob"
$CC -std=c11 -O2 -c -o "$w/fb.o" "$w/array/net_weights.c" || fail "weights: --weights array build failed"
objcopy -O binary --only-section=.rodata "$w/fb.o" "$w/fb.bin" &&
	cmp -s "$w/fb.bin" "$w/embed/net_weights.c.bin" || fail "weights: --weights array's C array differs from the blob"
# a compiler with neither .incbin nor #embed (as GCC without ELF's .incbin
# here) stops at an #error that says what to do
$CC -std=c11 -DNET_WEIGHTS_NO_INCBIN -c -o "$w/no.o" "$w/embed/net_weights.c" 2> "$w/no.log" &&
	fail "weights: without .incbin and #embed the embed build did not stop"
grep -q -- "--weights array" "$w/no.log" || fail "weights: the #error does not name --weights array"
# a blob of the wrong size stops the build (GNU as checks it)
head -c 100 "$w/embed/net_weights.c.bin" > "$w/short.bin"
$CC -std=c11 -c -DNET_WEIGHTS_BIN='"'"$w/short.bin"'"' -o "$w/short.o" "$w/embed/net_weights.c" 2> /dev/null &&
	fail "weights: a truncated blob was accepted by the build"

# the three modes compute the same bytes on the same (patterned) inputs
cat > "$w/run.c" << 'EOF'
#include "net.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
	const void *ins[NET_NUM_INPUTS + 1] = {0};
	void *outs[NET_NUM_OUTPUTS + 1] = {0};
	(void)argc;
#ifdef NET_WEIGHTS_EXTERNAL
	static unsigned char blob[1 << 20];
	FILE *b = fopen(argv[2], "rb");
	size_t n = b ? fread(blob, 1, sizeof blob, b) : 0;
	if (!b || net_init(blob, n))
		return 3;
	fclose(b);
#endif
	for (int k = 0; k < NET_NUM_INPUTS; k++) {
		size_t es = net_inputs[k].bytes / (net_inputs[k].numel ? net_inputs[k].numel : 1);
		unsigned char *p = malloc(net_inputs[k].bytes + 1);
		for (size_t i = 0; i < net_inputs[k].numel; i++) {
			float x = (float)((i * 7919) % 1000) / 1000.0f;
			if (net_inputs[k].dtype == 1)
				memcpy(p + 4 * i, &x, 4);
			else
				memset(p + i * es, (int)(i % 3), es);
		}
		ins[k] = p;
	}
	for (int k = 0; k < NET_NUM_OUTPUTS; k++)
		outs[k] = malloc(net_outputs[k].bytes + 1);
	if (net_run(ins, outs))
		return 4;
	FILE *f = fopen(argv[1], "wb");
	for (int k = 0; f && k < NET_NUM_OUTPUTS; k++)
		fwrite(outs[k], 1, net_outputs[k].bytes, f);
	return !f || fclose(f);
}
EOF
for m in embed c ext; do
	$CC -std=c11 -O2 -I"$w/$m" -o "$w/$m/run" "$w/run.c" "$w/$m/net.c" "$w/$m/net_weights.c" -lm 2> "$w/$m/cc.log" &&
		"$w/$m/run" "$w/$m/out.bin" "$w/ext/net_weights.bin" ||
		fail "weights: the $m build does not run: $(head -n 1 "$w/$m/cc.log")"
done
cmp -s "$w/embed/out.bin" "$w/c/out.bin" || fail "weights: --weights c computes other outputs than embed"
cmp -s "$w/embed/out.bin" "$w/ext/out.bin" || fail "weights: --weights external computes other outputs than embed"

# the external blob's checks, through a small program against the header
cat > "$w/ext/check.c" << 'EOF'
#include "net.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static unsigned char *blob, *copy;
static long size;
static int try(const char *what, int want, const void *b, size_t n)
{
	int rc = net_init(b, n);
	if (rc != want)
		printf("FAIL external: %s: net_init returned %d, expected %d\n", what, rc, want);
	return rc != want;
}
int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 64 || fseek(f, 0, SEEK_SET))
		return 2;
	blob = malloc((size_t)size + 16), copy = malloc((size_t)size + 16);
	if (fread(blob, 1, (size_t)size, f) != (size_t)size)
		return 2;
	fclose(f);
	static float in[NET_NUM_INPUTS > 0 ? 1 << 22 : 1], out[1 << 22];
	const void *ins[NET_NUM_INPUTS + 1] = {in};
	void *outs[NET_NUM_OUTPUTS + 1] = {out};
	int bad = 0;
	if (net_outputs[0].bytes > sizeof out || (NET_NUM_INPUTS > 1))
		return 2;
	bad |= net_run(ins, outs) != NET_ERR_NO_WEIGHTS;
	bad |= try("NULL", NET_ERR_ARG, NULL, (size_t)size);
	memcpy(copy + 1, blob, (size_t)size);
	bad |= try("misaligned", NET_ERR_ALIGN, copy + 1, (size_t)size);
	bad |= try("truncated", NET_ERR_SIZE, blob, (size_t)size - 1);
	bad |= try("header only", NET_ERR_SIZE, blob, 10);
	memcpy(copy, blob, (size_t)size);
	copy[0] ^= 1;
	bad |= try("magic", NET_ERR_MAGIC, copy, (size_t)size);
	memcpy(copy, blob, (size_t)size);
	copy[8] = 9;
	bad |= try("version", NET_ERR_VERSION, copy, (size_t)size);
	memcpy(copy, blob, (size_t)size);
	copy[24] ^= 1; /* the recorded CRC: another model's */
	bad |= try("model", NET_ERR_MODEL, copy, (size_t)size);
	memcpy(copy, blob, (size_t)size);
	copy[size - 1] ^= 0x40; /* one flipped bit in the data */
	bad |= try("corrupt", NET_ERR_CHECKSUM, copy, (size_t)size);
	bad |= net_run(ins, outs) != NET_ERR_NO_WEIGHTS; /* a failed init leaves none */
	bad |= try("good", 0, blob, (size_t)size);
	bad |= net_run(ins, outs) != 0;
	printf("%s\n", bad ? "external: FAIL" : "external: ok");
	return bad;
}
EOF
if $CC -std=c11 -O2 -I"$w/ext" -o "$w/ext/check" "$w/ext/check.c" "$w/ext/net.c" "$w/ext/net_weights.c" -lm 2> "$w/ext/cc.log"; then
	"$w/ext/check" "$w/ext/net_weights.bin" > "$w/ext/check.log" 2>&1 || fail "$(grep -m1 FAIL "$w/ext/check.log")"
else
	fail "weights: the external-blob checker does not build: $(head -n 1 "$w/ext/cc.log")"
fi

echo "footprint: $fails failed"
[ "$fails" -eq 0 ]
