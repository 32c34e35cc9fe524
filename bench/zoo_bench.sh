#!/bin/bash
# zoo_bench.sh: latency of onnxcc's compiled zoo models against ONNX Runtime on
# this machine, at one or more thread counts, with effective GFLOP/s against
# the machine's measured peak; optionally written up as docs (`make bench`).
#
#   bench/zoo_bench.sh [--cpu NAME] [--threads LIST] [-d DIR] [-r ROUNDS]
#                      [-t MS] [--no-zoo] [--md FILE] [--zoo-md FILE] [FILTER]
#
# --cpu NAME (default native) is onnxcc's target; --threads LIST (default
# "1 2") the thread counts, each run by both sides (ORT with as many
# intra-op threads); -r 6 rounds and -t 1000 ms per side a round by default
# (the whole zoo: about 10 minutes on 2 CPUs); -d DIR (default build/zoo)
# holds the models and what the run writes. Steps: bench/peak.c built with the target's flags and
# run at every thread count (again at the end; the larger counts); then
# tests/e2e/zoo.sh DIR FILTER with ONNXCC_FLAGS="--cpu NAME" for accuracy
# (--no-zoo skips it); then per model: `onnxcc --cpu NAME --main --report`
# (plus its flags from tests/e2e/zoo.txt) into DIR/MODEL/bench-NAME/, built
# with $CC and the target's flags, and per thread count ROUNDS interleaved
# rounds (odd rounds onnxcc first, even rounds ORT first). A round is one
# process per side running `--bench K --threads N` (a warm-up, then K timed
# runs; K sized from a probe run so a side spends about MS ms a round).
# Reported: median of the round medians, min of all runs, ratio of the
# medians onnxcc/ORT (below 1: onnxcc is faster), GFLOP/s = --report's
# flops / median, onnxcc's share of the peak, geometric means, the checks
# of issue 9, and resnet50's and resnet18's convolutions from `net
# --profile` at one thread. Numbers are measured, never edited.
# Environment: CC (default cc), BENCH_CFLAGS (replaces `onnxcc --cpu NAME
# --print-cflags` for the models and peak.c), BENCH_NOTE (a sentence for the
# docs' conditions).
set -u
cd "$(dirname "$0")/.." || exit 2

CPU=native THREADS='1 2' DIR=build/zoo ROUNDS=6 TARGET_MS=1000 RUN_ZOO=1 MD='' ZOO_MD='' FILTER=''
CC=${CC:-cc}
BENCH_NOTE=${BENCH_NOTE:-}  # free text for the docs' Conditions
ONNXCC=./onnxcc
PY=/usr/bin/python3         # Debian's Python: onnx, numpy
LIST=tests/e2e/zoo.txt
LAYER_MODELS=(resnet50 resnet18) # the layer table's models
ENCODERS=(transformer_encoder transformer_encoder_op17 bert_encoder)
RNNS=(lstm gru)

die() { echo "zoo_bench: $*" >&2; exit 2; }
# The command line as given, for the docs (arguments with blanks or shell
# characters in single quotes).
cmdline=bench/zoo_bench.sh
for a in "$@"; do
	case $a in *[!A-Za-z0-9_./=,:-]*) cmdline="$cmdline '$a'" ;; *) cmdline="$cmdline $a" ;; esac
done
while [ $# -gt 0 ]; do
	case $1 in --cpu | --threads | -d | -r | -t | --md | --zoo-md)
		[ $# -ge 2 ] || die "$1 needs a value (see --help)" ;;
	esac
	case $1 in
	--cpu) CPU=$2; shift ;;
	--threads) THREADS=${2//,/ }; shift ;;
	-d) DIR=$2; shift ;;
	-r) ROUNDS=$2; shift ;;
	-t) TARGET_MS=$2; shift ;;
	--no-zoo) RUN_ZOO=0 ;;
	--md) MD=$2; shift ;;
	--zoo-md) ZOO_MD=$2; shift ;;
	-h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) FILTER=$1 ;;
	esac
	shift
done
case $ROUNDS$TARGET_MS in *[!0-9]*) die "-r and -t take whole numbers" ;; esac
[ "$ROUNDS" -ge 1 ] || die "-r needs at least 1 round"
for n in $THREADS; do
	case $n in '' | *[!0-9]* | 0) die "--threads takes a list of positive counts, got '$THREADS'" ;; esac
done
[ -n "${THREADS// /}" ] || die "--threads needs at least one count"
[ -x "$ONNXCC" ] || die "$ONNXCC not found (run make)"
CFLAGS=$("$ONNXCC" --cpu "$CPU" --print-cflags) || die "onnxcc does not know --cpu $CPU"
CFLAGS=${BENCH_CFLAGS:-$CFLAGS}
[ -d tools/node_modules/onnxruntime-node ] ||
	die "no ONNX Runtime: run 'make deps-models' (or 'cd tools && ONNXRUNTIME_NODE_INSTALL=skip npm ci')"

# name|flags for every selected line of zoo.txt (flags as tests/e2e/zoo.sh reads them)
models=$(awk -v f="$FILTER" '
	/^[ \t]*(#|$)/ { next }
	f != "" && $1 !~ f { next }
	{ fl = ""; for (i = 2; i < NF; i++) if ($i != "-") fl = fl (fl == "" ? "" : " ") $i
	  printf "%s|%s\n", $1, fl }' "$LIST")
[ -n "$models" ] || die "no model in $LIST matches '$FILTER'"
names=$(printf '%s\n' "$models" | cut -d'|' -f1)
# The peak at one thread is the layer table's denominator: always measured.
PEAK_THREADS=$THREADS
case " $THREADS " in *" 1 "*) ;; *) PEAK_THREADS="1 $THREADS" ;; esac

# /proc/stat's cpu line as "busy total steal" jiffies, to report how busy
# the whole machine was (all processes, not just ours) while we measured.
cpustat() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i
	print t - $5 - $6, t, $9; exit }' /proc/stat; }
# CPU seconds (user + system) of this script's finished children, our
# share: `times` in this shell (in $(...) it would count a subshell's).
TIMES=$DIR/bench-$CPU.times
ourcpu() { awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m")
	s += a[1] * 60 + a[2] } print s }' "$1"; }
mkdir -p "$DIR" || exit 2
times > "$TIMES.0"
stat0=$(cpustat) load0=$(cut -d' ' -f1-3 /proc/loadavg)
date0=$(date -u '+%Y-%m-%d %H:%M UTC') t0=$(date +%s)

# 1. The peak: bench/peak.c with the target's flags, at every thread count.
PEAK=$DIR/peak-$CPU
# CFLAGS is a list of options: split on purpose (here and below).
# shellcheck disable=SC2086
"$CC" -O2 $CFLAGS -pthread -o "$PEAK" bench/peak.c || die "cannot build bench/peak.c with $CFLAGS"
declare -A peak0 peak1
peak_run() { "$PEAK" "$1" | tee -a "$PEAK.log" | sed -n 's/.*gflops=\([0-9.]*\).*/\1/p'; }
: > "$PEAK.log"
for n in $PEAK_THREADS; do peak0[$n]=$(peak_run "$n"); done
peakdesc=$(sed -n 's/^peak: vw=\([0-9]*\) fma=\([01]\).*/\1 \2/p' "$PEAK.log" | head -n 1)
for n in $PEAK_THREADS; do echo "zoo_bench: peak at the start, $n thread(s): ${peak0[$n]} GFLOP/s"; done

# 2. Accuracy from the zoo run (which also exports what is missing); its
# table is kept in DIR/zoo-CPU.out: "model nodes max_rel_err status" rows.
ZOO_OUT=$DIR/zoo-$CPU.out
if [ "$RUN_ZOO" = 1 ]; then
	echo "zoo_bench: ONNXCC_FLAGS='--cpu $CPU' tests/e2e/zoo.sh $DIR $FILTER"
	ONNXCC_FLAGS="--cpu $CPU" tests/e2e/zoo.sh "$DIR" "$FILTER" | tee "$ZOO_OUT"
	[ "${PIPESTATUS[0]}" -le 1 ] || die "zoo.sh could not run (see above)"
	echo
fi
zoo_field() { # NAME COLUMN: a field of NAME's row in DIR/zoo-CPU.out, or '-'
	awk -v n="$1" -v c="$2" '$1 == n && NF == 4 { v = $c } END { print (v == "" ? "-" : v) }' \
		"$ZOO_OUT" 2>/dev/null || echo -
}

# 3. Speed.
med() { sed -n 's/^bench: .*median_ms=\([^ ]*\).*/\1/p' | tail -n 1; }
mins() { sed -n 's/^bench: .*min_ms=\([^ ]*\).*/\1/p' | tail -n 1; }
runs_for() { # PROBE_MS: timed runs that take about TARGET_MS ms, 3..20000
	awk -v p="$1" -v t="$TARGET_MS" 'BEGIN { k = (p > 0) ? int(t / p + 0.5) : 20000
		print (k < 3 ? 3 : k > 20000 ? 20000 : k) }'
}
stats() { # "median min max" of the numbers on stdin
	sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "- - -"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR] }'
}
inputs_of() { # MODEL: its input files, DIR/MODEL/input_K.npy, into the array inputs
	local k=0
	inputs=()
	while [ -f "$DIR/$1/input_$k.npy" ]; do inputs+=("$DIR/$1/input_$k.npy"); k=$((k + 1)); done
}
row() { printf "%-26s %3s %6s %6s %11s %11s %7s %9s %9s\n" "$@"; }
# One process of either side with K timed runs: ox_run K, ort_run K (the
# model in d and o, its inputs and the thread count n are the loop's below).
ox_run() { "$o/net" --bench "$1" --threads "$n" "${inputs[@]}" < /dev/null 2>&1; }
ort_run() { node tools/ort_run.js "$d/model.onnx" "${inputs[@]}" --bench "$1" --threads "$n" < /dev/null 2>&1; }
gf() { awk -v f="$flops" -v ms="$1" 'BEGIN { if (f > 0 && ms > 0) printf "%.1f", f / ms * 1e-6; else print "-" }'; }

MODELS=$DIR/bench-$CPU.models # model, status, flops per run
RES=$DIR/bench-$CPU.tsv       # model, threads, status, ox med, ort med, ratio, ox min, ort min,
                              # ox runs, ort runs, ox lo-hi, ort lo-hi (ms)
: > "$MODELS"
: > "$RES"
row model thr ox_k ort_k onnxcc_ms ort_ms ratio ox_GF/s ort_GF/s
while IFS='|' read -r -u 3 name flags; do
	d=$DIR/$name o=$DIR/$name/bench-$CPU
	inputs_of "$name"
	bad='' flops=0
	rm -rf "$o" && mkdir -p "$o"
	# $flags and CFLAGS are lists of options: split on purpose.
	# shellcheck disable=SC2086
	if [ ! -f "$d/model.onnx" ] || [ "${#inputs[@]}" = 0 ]; then
		bad='not exported'
	elif ! "$ONNXCC" "$d/model.onnx" -o "$o/net.c" --cpu "$CPU" --main --report $flags \
		> "$o/report.txt" 2> "$o/compile.log"; then
		bad='compile failed'
	elif ! "$CC" $CFLAGS -o "$o/net" "$o/net.c" "$o/net_weights.c" "$o/net_main.c" -lm -pthread \
		> "$o/build.log" 2>&1; then
		bad='build failed'
	else
		flops=$(sed -n 's/^ *flops *\([0-9]*\) per run.*/\1/p' "$o/report.txt")
	fi
	printf '%s\t%s\t%s\n' "$name" "${bad:-ok}" "${flops:-0}" >> "$MODELS"
	if [ -n "$bad" ]; then
		row "$name" - - - "$bad" - - - -
		continue
	fi
	for n in $THREADS; do
		kox=$(runs_for "$(ox_run 1 | med)")
		kort=$(runs_for "$(ort_run 1 | med)")
		oxm='' ortm='' oxmin='' ortmin='' failed=''
		for r in $(seq 1 "$ROUNDS"); do
			if [ $((r % 2)) = 1 ]; then
				a=$(ox_run "$kox") b=$(ort_run "$kort")
			else
				b=$(ort_run "$kort") a=$(ox_run "$kox")
			fi
			x=$(printf '%s\n' "$a" | med) y=$(printf '%s\n' "$b" | med)
			[ -n "$x" ] || { failed="onnxcc run failed: $(printf '%s\n' "$a" | head -n 1)"; break; }
			[ -n "$y" ] || { failed="ORT run failed: $(printf '%s\n' "$b" | head -n 1)"; break; }
			oxm="$oxm $x" ortm="$ortm $y"
			oxmin="$oxmin $(printf '%s\n' "$a" | mins)" ortmin="$ortmin $(printf '%s\n' "$b" | mins)"
		done
		if [ -n "$failed" ]; then
			row "$name" "$n" - - "${failed%%:*}" - - - -
			printf '%s\t%s\t%s\n' "$name" "$n" "${failed//|//}" >> "$RES"
			continue
		fi
		# The lists are split on purpose (numbers only).
		# shellcheck disable=SC2086
		read -r oxmed oxlo oxhi <<< "$(printf '%s\n' $oxm | stats)"
		# shellcheck disable=SC2086
		read -r ortmed ortlo orthi <<< "$(printf '%s\n' $ortm | stats)"
		# shellcheck disable=SC2086
		read -r _ oxbest _ <<< "$(printf '%s\n' $oxmin | stats)"
		# shellcheck disable=SC2086
		read -r _ ortbest _ <<< "$(printf '%s\n' $ortmin | stats)"
		ratio=$(awk -v a="$oxmed" -v b="$ortmed" 'BEGIN { printf "%.4f", a / b }')
		row "$name" "$n" "$kox" "$kort" "$oxmed" "$ortmed" "$(printf '%.2f' "$ratio")" "$(gf "$oxmed")" "$(gf "$ortmed")"
		printf '%s\t%s\tok\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s-%s\t%s-%s\n' "$name" "$n" "$oxmed" "$ortmed" \
			"$ratio" "$oxbest" "$ortbest" "$kox" "$kort" "$oxlo" "$oxhi" "$ortlo" "$orthi" >> "$RES"
	done
done 3<<< "$models"

selected() { # MODEL...: those in this run
	for m in "$@"; do printf '%s\n' "$names" | grep -qx "$m" && echo "$m"; done
}
commas() { local IFS=,; printf '%s' "$*" | sed 's/,/, /g'; }

# 4. ResNet's layers: the one-thread program's --profile, 3 times (a
# function's time is the median of the three: a busy machine stretches single
# functions), each Conv function looked up in the model (kernel, stride,
# output shape, FLOPs) and in the generated code (its algorithm: direct, or
# Winograd F(m x m, 3 x 3), whose FLOPs are still counted as the direct
# ones). Twice: the programs as benchmarked, and the same models compiled
# with --winograd off, so the direct kernels' share of the peak is measured.
LAYERS=$DIR/layers-$CPU.tsv # model, function, ONNX node, kernel, stride, output, flops, ms, algorithm, build
: > "$LAYERS"
profile_layers() { # NAME DIR BUILD: the layer rows of DIR/net, labelled BUILD
	local name=$1 o=$2 build=$3 r m1 k bad=''
	m1=$(awk -F'\t' -v n="$name" '$1 == n && $2 == 1 && $3 == "ok" { print $4 }' "$RES")
	k=$(runs_for "${m1:-0}")
	[ "$k" -le 50 ] || k=50
	inputs_of "$name"
	for r in 1 2 3; do
		"$o/net" --bench "$k" --threads 1 --profile "${inputs[@]}" > "$o/profile$r.txt" 2>&1 < /dev/null ||
			{ bad="$o/profile$r.txt"; break; }
	done
	[ -z "$bad" ] || { echo "zoo_bench: $name --profile failed (see $bad)" >&2; return; }
	$PY - "$DIR/$name/model.onnx" "$name" "$o/net.c" "$build" "$o"/profile[123].txt >> "$LAYERS" <<'EOF' ||
import re, statistics, sys
import onnx
from onnx import shape_inference
model = onnx.load(sys.argv[1])
g = shape_inference.infer_shapes(model).graph
shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
          for v in list(g.value_info) + list(g.output) + list(g.input)}
inits = {t.name: list(t.dims) for t in g.initializer}
nodes = {n.name: (i, n) for i, n in enumerate(g.node)}
# each node function's algorithm, from its comment in the generated code
algo, cur = {}, None
for line in open(sys.argv[3]):
    m = re.match(r"static void (node\d+_\w+)\(", line)
    if m:
        cur = m.group(1)
    m = re.search(r"by Winograd F\((\d+x\d+), 3x3\)", line)
    if m and cur:
        algo[cur] = "Winograd F(%s)" % m.group(1)
times, first_node = {}, {}  # per function: its ms/run in each profile; its first ONNX node
for path in sys.argv[5:]:
    started = False
    for line in open(path):
        f = line.split(None, 4)
        if len(f) == 5 and f[0] == "ms/run":
            started = True
        elif started and len(f) == 5:
            times.setdefault(f[3], []).append(float(f[0]))
            first_node[f[3]] = f[4].split(" + ")[0].strip()
rows = []
for func, ts in times.items():
    ms, first = statistics.median(ts), first_node[func]
    i, n = nodes.get(first, (0, None))
    if n is None or n.op_type != "Conv":
        continue
    a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
    w = inits.get(n.input[1])
    out = shapes.get(n.output[0])
    if not w or not out or 0 in out:
        continue
    ks = list(a.get("kernel_shape", w[2:]))
    st = list(a.get("strides", [1] * len(ks)))
    kernel = "x".join(map(str, ks)) + (" groups %d" % a["group"] if a.get("group", 1) > 1 else "")
    stride = str(st[0]) if len(set(st)) == 1 else "x".join(map(str, st))
    flops = 2  # per multiply-add: output elements x (input channels / groups) x kernel
    for x in out + w[1:]:
        flops *= x
    rows.append((i, [sys.argv[2], func, first, kernel, stride, "x".join(map(str, out)), str(flops), "%.6g" % ms,
                     algo.get(func, "direct"), sys.argv[4]]))
for _, r in sorted(rows):  # in the model's order
    print("\t".join(r))
EOF
		echo "zoo_bench: $name: cannot read the layers (/usr/bin/python3 with onnx)" >&2
}
for name in $(selected "${LAYER_MODELS[@]}"); do
	o=$DIR/$name/bench-$CPU
	[ -x "$o/net" ] || continue
	profile_layers "$name" "$o" default
	od=$o-direct
	rm -rf "$od" && mkdir -p "$od"
	# CFLAGS is a list of options: split on purpose.
	# shellcheck disable=SC2086
	if "$ONNXCC" "$DIR/$name/model.onnx" -o "$od/net.c" --cpu "$CPU" --main --winograd off > "$od/compile.log" 2>&1 &&
		"$CC" $CFLAGS -o "$od/net" "$od/net.c" "$od/net_weights.c" "$od/net_main.c" -lm -pthread > "$od/build.log" 2>&1; then
		profile_layers "$name" "$od" direct
	else
		echo "zoo_bench: $name --winograd off: compile or build failed (see $od)" >&2
	fi
done

# The end of the measurements: the peak again, the load.
for n in $PEAK_THREADS; do peak1[$n]=$(peak_run "$n"); done
times > "$TIMES.1"
stat1=$(cpustat) load1=$(cut -d' ' -f1-3 /proc/loadavg) t1=$(date +%s)
cpu0=$(ourcpu "$TIMES.0") cpu1=$(ourcpu "$TIMES.1")

# Model facts from the ONNX files (one Python start): opset, nodes, params, inputs.
# shellcheck disable=SC2086
facts=$($PY - "$DIR" $names <<'EOF' 2>/dev/null
import os, sys
import numpy as np
import onnx
from onnx import numpy_helper
d = sys.argv[1]
for name in sys.argv[2:]:
    p = os.path.join(d, name, "model.onnx")
    if not os.path.exists(p):
        continue
    m = onnx.load(p)
    opset = max((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), default=0)
    params = sum(numpy_helper.to_array(t).size for t in m.graph.initializer)
    # The shapes benchmarked: the input files' (dynbatch's model says N).
    shapes, k = [], 0
    while os.path.exists(os.path.join(d, name, "input_%d.npy" % k)):
        a = np.load(os.path.join(d, name, "input_%d.npy" % k), mmap_mode="r")
        shapes.append("x".join(str(x) for x in a.shape))
        k += 1
    print("%s\t%d\t%d\t%d\t%s" % (name, opset, len(m.graph.node), params, " ".join(shapes)))
EOF
)
fact() { printf '%s\n' "$facts" | awk -F'\t' -v n="$1" -v c="$2" '$1 == n { print $c }'; }

# 5. Summary: peaks, geometric means, the checks, the layers, all computed
# from the tables above.
peak() { awk -v a="${peak0[$1]:-0}" -v b="${peak1[$1]:-0}" 'BEGIN { print (a > b ? a : b) }'; }
field() { awk -F'\t' -v n="$1" -v t="$2" -v c="$3" '$1 == n && $2 == t { print $c }' "$RES"; }
mfield() { awk -F'\t' -v n="$1" -v c="$2" '$1 == n { print $c }' "$MODELS"; }
gflops() { # MODEL MS: effective GFLOP/s, or '-' where --report counts no FLOPs
	awk -v f="$(mfield "$1" 3)" -v ms="$2" 'BEGIN { if (f > 0 && ms > 0) printf "%.1f", f / ms * 1e-6; else print "-" }'
}
pct() { # GFLOP/s THREADS: its share of that peak in percent, or '-'
	awk -v g="$1" -v p="$(peak "$2")" 'BEGIN { if (g ~ /^[0-9.]+$/ && p > 0) printf "%.0f", 100 * g / p; else print "-" }'
}
geomean() { # THREADS: "G M": the geometric mean of onnxcc/ORT over M measured models ("- 0")
	awk -F'\t' -v t="$1" '$2 == t && $3 == "ok" { s += log($6); m++ }
		END { if (m) printf "%.3f %d\n", exp(s / m), m; else print "- 0" }' "$RES"
}
cnns() { # the models whose input is a batch of 224x224 images
	for m in $names; do
		case $(fact "$m" 5) in *x3x224x224) echo "$m" ;; esac
	done
}
# bound OP LIMIT MODEL...: "pass|fail|not measured" and the largest one-thread
# ratio of MODELs against LIMIT (OP le or lt); an unmeasured model fails.
bound() {
	local op=$1 lim=$2 m x worst='' wr=0 miss=''
	shift 2
	for m in "$@"; do
		x=$(field "$m" 1 6)
		if [ -z "$x" ] || [ "$(field "$m" 1 3)" != ok ]; then miss="$miss $m"; continue; fi
		if awk -v a="$x" -v b="$wr" 'BEGIN { exit !(a > b) }'; then worst=$m wr=$x; fi
	done
	if [ $# = 0 ]; then echo "not measured|none in this run"; return; fi
	if [ -n "$miss" ]; then echo "**fail**|not measured:$miss"; return; fi
	awk -v a="$wr" -v b="$lim" -v op="$op" -v w="$worst" 'BEGIN {
		ok = op == "lt" ? a < b : a <= b; printf "%s|largest %s %.3f\n", ok ? "pass" : "**fail**", w, a }'
}
conv_kind() { # KERNEL BUILD: "GFLOP/s N" of the layer table's convolutions of that kernel (total FLOPs / time)
	awk -F'\t' -v k="$1" -v b="$2" '$4 == k && $10 == b { f += $7; t += $8; n++ }
		END { if (t > 0) printf "%.1f %d\n", f / t * 1e-6, n; else print "- 0" }' "$LAYERS"
}
lowest_conv() { # BUILD: "PCT FUNCTION MODEL KERNEL" of the slowest 3x3 or 1x1 convolution
	awk -F'\t' -v p="$(peak 1)" -v b="$1" '($4 == "3x3" || $4 == "1x1") && $10 == b && $8 > 0 && p > 0 {
		x = 100 * $7 / $8 * 1e-6 / p; if (!n++ || x < lo) { lo = x; s = sprintf("%.0f %s %s %s", x, $2, $1, $4) } }
		END { print (n ? s : "-") }' "$LAYERS"
}
# shellcheck disable=SC2046 # a list of names
layer_names=$(commas $(selected "${LAYER_MODELS[@]}"))
checks() { # "what|measured|result" lines: issue 9's "Done when", at one thread
	local g m r gf n which
	read -r g m <<< "$(geomean 1)"
	r=$(awk -v g="$g" 'BEGIN { if (g == "-") print "not measured"; else print ((g <= 1.0) ? "pass" : "**fail**") }')
	printf 'geometric mean of onnxcc/ORT over the zoo (%s models) <= 1.0|%s|%s\n' "$m" "$g" "$r"
	# shellcheck disable=SC2046 # lists of names
	IFS='|' read -r r g <<< "$(bound le 1.25 $(cnns))"
	# shellcheck disable=SC2046
	printf 'every 224x224 CNN%s <= 1.25|%s|%s\n' "$(commas $(cnns) | sed 's/..*/ (&)/')" "$g" "$r"
	# shellcheck disable=SC2046
	IFS='|' read -r r g <<< "$(bound le 1.0 $(selected "${ENCODERS[@]}"))"
	printf 'transformer encoders (%s) <= 1.0|%s|%s\n' "$(commas "${ENCODERS[@]}")" "$g" "$r"
	# shellcheck disable=SC2046
	IFS='|' read -r r g <<< "$(bound lt 1.0 $(selected "${RNNS[@]}"))"
	printf 'RNNs (%s) < 1.0|%s|%s\n' "$(commas "${RNNS[@]}")" "$g" "$r"
	for b in direct default; do
		for k in 3x3 1x1; do
			read -r gf n <<< "$(conv_kind "$k" "$b")"
			r=$(awk -v p="$(pct "$gf" 1)" 'BEGIN { if (p == "-") print "not measured"; else print ((p >= 75) ? "pass" : "**fail**") }')
			if [ -n "$layer_names" ]; then which="$n in $layer_names, total FLOPs / total time"
			else which="$(commas "${LAYER_MODELS[@]}") not in this run"; fi
			# shellcheck disable=SC2016 # backquotes for Markdown
			if [ "$b" = direct ]; then how='by the direct kernels (`--winograd off`)'
			else how='as compiled (Winograd counted by the direct FLOPs)'; fi
			printf "ResNet's %s convolutions %s (%s) >= 75%% of the peak|%s GFLOP/s, %s%%|%s\n" \
				"$k" "$how" "$which" "$gf" "$(pct "$gf" 1)" "$r"
		done
	done
}

echo
echo "zoo_bench: results in $RES, layers in $LAYERS"
for n in $THREADS; do
	read -r g m <<< "$(geomean "$n")"
	echo "zoo_bench: $n thread(s): peak $(peak "$n") GFLOP/s (start ${peak0[$n]}, end ${peak1[$n]}); geometric mean onnxcc/ORT $g over $m models"
done
case " $THREADS " in *" 1 "*) checks | awk -F'|' '{ printf "zoo_bench: check: %s: %s: %s\n", $1, $2, $3 }' ;; esac
[ ! -s "$LAYERS" ] || for b in direct default; do echo "zoo_bench: slowest 3x3/1x1 convolution ($b): $(lowest_conv "$b" | sed 's/ /% of the peak: /')"; done

[ -n "$MD$ZOO_MD" ] || exit 0

# 6. The docs. Everything below is read from this run and this machine.
cpu=$(sed -n 's/^model name[ \t]*: *//p' /proc/cpuinfo | head -n 1)
ncpu=$(nproc)
vm=''
grep -qw hypervisor /proc/cpuinfo && vm=', a virtual machine (cpuinfo has the hypervisor flag)'
mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
ccver=$("$CC" --version 2>/dev/null | head -n 1)
# What -march=native means to this compiler (GCC answers; others leave it out).
# shellcheck disable=SC2086
march=$("$CC" $CFLAGS -Q --help=target 2>/dev/null | awk '$1 == "-march=" { print $2; exit }')
case " $CFLAGS " in *" -march=native "*) [ -z "$march" ] || march="; \`-march=native\` is $march to it" ;; *) march='' ;; esac
target='' # --report's words for the target, from the first model compiled
for name in $names; do
	f=$DIR/$name/bench-$CPU/report.txt
	[ "$(mfield "$name" 2)" = ok ] && target=$(sed -n 's/^ *target *--cpu [^ ]* *//p' "$f") && break
done
ortver=$(node -p "require('./tools/node_modules/onnxruntime-node/package.json').version" 2>/dev/null)
nodever=$(node --version 2>/dev/null)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit + uncommitted changes"
# Share of all CPU time that was busy (any process), ours (this script's
# children) and stolen by the host; "loaded" when the others used more than
# a tenth of the machine.
read -r busy others <<< "$(awk -v a="$stat0" -v b="$stat1" -v c0="$cpu0" -v c1="$cpu1" -v hz="$(getconf CLK_TCK)" '
	BEGIN { split(a, x, " "); split(b, y, " "); t = y[2] - x[2]; if (t <= 0) { print "? 0"; exit }
	o = (y[1] - x[1]) / t - (c1 - c0) * hz / t; if (o < 0) o = 0
	printf "%.0f%%_busy_(this_benchmark_%.0f%%,_other_processes_%.0f%%),_%.1f%%_stolen_by_the_hypervisor %.3f\n",
		100 * (y[1] - x[1]) / t, 100 * (c1 - c0) * hz / t, 100 * o, 100 * (y[3] - x[3]) / t, o }')"
busy=${busy//_/ }
took=$(( (t1 - t0 + 30) / 60 )) took_unit=minutes
[ $((t1 - t0)) -ge 120 ] || took=$((t1 - t0)) took_unit=seconds
loaded=$(awk -v o="$others" 'BEGIN { print ((o > 0.1) ? 1 : 0) }')
read -r vw fma <<< "$peakdesc"
[ "$fma" = 1 ] && peakop='fused multiply-adds' || peakop='multiplies and adds'

fmt() { # milliseconds, 3 significant digits without exponents
	awk -v x="$1" 'BEGIN { if (x !~ /^[0-9.]+$/) { print x; exit }
		if (x >= 100) printf "%.0f", x; else if (x >= 10) printf "%.1f", x
		else if (x >= 1) printf "%.2f", x; else printf "%.3g", x }'
}
r2() { awk -v x="$1" 'BEGIN { if (x ~ /^[0-9.]+$/) printf "%.2f", x; else print x }'; }
params_h() { awk -v p="$1" 'BEGIN { if (p == "") print "?"; else if (p >= 1e6) printf "%.1fM", p / 1e6
	else if (p >= 1e3) printf "%.0fk", p / 1e3; else print p }'; }
gflop_h() { awk -v f="$1" 'BEGIN { if (f <= 0) print "-"; else if (f >= 1e8) printf "%.2f", f * 1e-9; else printf "%.3g", f * 1e-9 }'; }
thr() { [ "$1" = 1 ] && echo "1 thread" || echo "$1 threads"; }
thr_list() { # "1 and 2 threads" for THREADS
	local IFS=' '
	# shellcheck disable=SC2086 # a list of numbers
	set -- $THREADS
	if [ $# = 1 ]; then thr "$1"; return; fi
	printf '%s' "$1"
	shift
	while [ $# -gt 1 ]; do printf ', %s' "$1"; shift; done
	printf ' and %s threads' "$1"
}
status_of() { # MODEL THREADS: ok or why not
	local st
	st=$(mfield "$1" 2)
	[ "$st" = ok ] || { echo "${st:-not run}"; return; }
	st=$(field "$1" "$2" 3)
	echo "${st:-not run}"
}
# the one-thread figures docs/zoo.md shows (the first thread count listed)
T1=${THREADS%% *}
rounds_word=rounds
[ "$ROUNDS" != 1 ] || rounds_word=round
zoo_when='in this run'
# the models' own onnxcc flags, as "name: `flags`"
extras=$(printf '%s\n' "$models" | awk -F'|' '$2 != "" { printf "%s%s `%s`", (n++ ? ", " : ""), $1, $2 }')
[ "$RUN_ZOO" = 1 ] || zoo_when="in an earlier run (this one had \`--no-zoo\`; '-' where none)"

conditions() {
	cat <<EOF
- Machine: $cpu, $ncpu CPUs (nproc), $mem RAM$vm.
- Load: 1/5/15-minute load average $load0 at the start, $load1 at the end;
  over the $took $took_unit of the run the machine's CPUs were $busy
  (/proc/stat for all processes, \`times\` for this script's own).
- onnxcc: commit $commit, \`--cpu $CPU\`${target:+ $target}; each model compiled with
  \`onnxcc model.onnx -o net.c --cpu $CPU --main\` (plus its flags from
  \`tests/e2e/zoo.txt\`${extras:+: $extras}) and built with
  \`$CC $CFLAGS -o net net.c net_weights.c net_main.c -lm -pthread\`
  ($ccver$march).
- Peak: \`bench/peak.c\` built with \`$CC -O2 $CFLAGS -pthread\`
  ($vw-lane $peakop), run at the start and the end; the larger counts:
EOF
	for n in $PEAK_THREADS; do
		printf '  %s %s GFLOP/s (start %s, end %s).\n' "$(thr "$n")" "$(peak "$n")" "${peak0[$n]}" "${peak1[$n]}"
	done
	cat <<EOF
- ONNX Runtime $ortver (onnxruntime-node, Node $nodever) through
  \`tools/ort_run.js\`: as many intra-op threads as onnxcc's run, 1
  inter-op thread, sequential execution, all graph optimizations.
- Date: $date0; $ROUNDS interleaved $rounds_word per model and thread count,
  about $TARGET_MS ms per side a round.
EOF
	[ "$loaded" = 0 ] || printf -- '- Other processes used more than a tenth of the machine while this ran:\n  the figures are noisy (those on more than one thread most, since a\n  descheduled thread stalls the others), see how far the mins sit below the medians\n  and the round ranges. Both sides ran in the same rounds, so the load\n  hit them alike on average, not run for run.\n'
	# shellcheck disable=SC2016 # backquotes for Markdown
	[ -z "$FILTER" ] || printf -- '- Models: only those matching `%s`.\n' "$FILTER"
	[ -z "$BENCH_NOTE" ] || printf -- '- Note: %s\n' "$BENCH_NOTE"
}

results_table() { # THREADS: the detail table of that thread count
	local n=$1 name st ox ort
	printf '| model | onnxcc ms | ORT ms | onnxcc/ORT | onnxcc GFLOP/s | %% of peak | ORT GFLOP/s | onnxcc min ms | ORT min ms | runs/round onnxcc, ORT |\n'
	printf '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n'
	for name in $names; do
		st=$(status_of "$name" "$n")
		if [ "$st" != ok ]; then
			printf '| %s | %s | | | | | | | | |\n' "$name" "$st"
			continue
		fi
		ox=$(field "$name" "$n" 4) ort=$(field "$name" "$n" 5)
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s, %s |\n' "$name" "$(fmt "$ox")" "$(fmt "$ort")" \
			"$(r2 "$(field "$name" "$n" 6)")" "$(gflops "$name" "$ox")" "$(pct "$(gflops "$name" "$ox")" "$n")" \
			"$(gflops "$name" "$ort")" "$(fmt "$(field "$name" "$n" 7)")" "$(fmt "$(field "$name" "$n" 8)")" \
			"$(field "$name" "$n" 9)" "$(field "$name" "$n" 10)"
	done
	read -r g m <<< "$(geomean "$n")"
	printf '| geometric mean (%s models) | | | %s | | | | | | |\n' "$m" "$(r2 "$g")"
}

layers_table() { # BUILD
	local p
	p=$(peak 1)
	printf '| model | function | ONNX node (first) | kernel | stride | output | algorithm | MFLOP | ms | GFLOP/s | %% of peak |\n'
	printf '| --- | --- | --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: |\n'
	awk -F'\t' -v p="$p" -v b="$1" '$10 == b { g = $8 > 0 ? $7 / $8 * 1e-6 : 0
		printf "| %s | %s | %s | %s | %s | %s | %s | %.0f | %.3f | %.1f | %.0f |\n", $1, $2, $3, $4, $5, $6, $9,
			$7 * 1e-6, $8, g, (p > 0 ? 100 * g / p : 0) }' "$LAYERS"
}

# shellcheck disable=SC2016 # backquotes for Markdown
case $CPU in
native) via=' (`make bench`)' ;;
generic) via=' (`make bench-generic`)' ;;
*) via='' ;;
esac
if [ -n "$MD" ]; then
	# shellcheck disable=SC2016 # backquotes for Markdown
	{
		cat <<EOF
# Benchmarks: onnxcc vs ONNX Runtime, \`--cpu $CPU\`

Generated by \`$cmdline\`$via; do not edit by
hand, rerun it. Latency of one inference of each zoo model
(\`tests/e2e/zoo.txt\`, exported by \`tools/export_zoo.py\`), batch as
listed, at $(thr_list): onnxcc's generated C (\`--main\` program,
\`--bench K --threads N\`) against ONNX Runtime with as many threads, on the
same input and machine; effective GFLOP/s (onnxcc \`--report\`'s FLOPs per
run over the median time) against the peak that \`bench/peak.c\` measures
for this target.

## Conditions

EOF
		conditions
		printf '\n## Summary\n\n'
		printf '| model | input | GFLOP per run | max rel err | status'
		for n in $THREADS; do printf ' | onnxcc/ORT %s' "$(thr "$n")"; done
		printf ' |\n| --- | --- | ---: | ---: | ---'
		for n in $THREADS; do printf ' | ---:'; done
		printf ' |\n'
		for name in $names; do
			printf '| %s | %s | %s | %s | %s' "$name" "$(fact "$name" 5)" "$(gflop_h "$(mfield "$name" 3)")" \
				"$(zoo_field "$name" 3)" "$(zoo_field "$name" 4)"
			for n in $THREADS; do
				st=$(status_of "$name" "$n")
				[ "$st" = ok ] && printf ' | %s' "$(r2 "$(field "$name" "$n" 6)")" || printf ' | %s' "$st"
			done
			printf ' |\n'
		done
		printf '| geometric mean | | | |'
		for n in $THREADS; do printf ' | %s' "$(r2 "$(geomean "$n" | cut -d' ' -f1)")"; done
		printf ' |\n'
		cat <<EOF

onnxcc/ORT is the ratio of the medians: below 1 onnxcc is faster, above 1
ONNX Runtime is. Error and status: \`tests/e2e/zoo.sh\` with
\`ONNXCC_FLAGS="--cpu $CPU"\` $zoo_when: max|onnxcc - ORT| / max|ORT|
over all outputs. GFLOP per run: onnxcc \`--report\`'s count, 2 per
multiply-add of Conv (a Winograd one by the direct algorithm's count),
Gemm, MatMul, Attention, RNN, GRU and LSTM (\`ir/cost.c\`) and nothing for
other ops.
EOF
		if case " $THREADS " in *" 1 "*) true ;; *) false ;; esac; then
			printf '\n## Checks\n\n'
			if [ "$CPU" = native ]; then
				printf 'Issue 9'"'"'s "Done when", at one thread, computed from the figures of this run:\n'
			else
				printf 'Issue 9'"'"'s "Done when" holds `--cpu native` to these; here they are\n'
				printf 'computed for `--cpu %s`, at one thread, to compare:\n' "$CPU"
			fi
			cat <<'EOF'

| check | measured | result |
| --- | --- | --- |
EOF
			checks | awk -F'|' '{ printf "| %s | %s | %s |\n", $1, $2, $3 }'
		fi
		for n in $THREADS; do
			printf '\n## %s\n\n' "$(thr "$n")"
			results_table "$n"
		done
		cat <<'EOF'

"median" is the median of the per-round medians, "min" the fastest single
run of all rounds; % of peak is onnxcc's GFLOP/s over the peak at that
thread count (ONNX Runtime's GFLOP/s use the same FLOP count, but its
kernels are not held to this target).
EOF
		if [ -s "$LAYERS" ]; then
			cat <<EOF

## ResNet's convolutions, one thread

Each generated Conv function of $layer_names from
\`net --profile --threads 1\` (per function: its time per run and the
ONNX nodes it computes, the Conv first; fused Add and Relu count no FLOPs),
with the Conv's kernel, stride and output shape from the model and its
algorithm from the generated code. A
function's time is the median of 3 profile runs (each of as many network
runs as fill about $TARGET_MS ms, at most 50); % of the one-thread peak,
$(peak 1) GFLOP/s.

EOF
			for b in default direct; do
				if [ "$b" = default ]; then
					printf '### As benchmarked\n\n'
					printf 'The programs of the tables above. A Winograd convolution is counted by the\n'
					printf "direct algorithm's FLOPs (2 x 9 x C per output), so its GFLOP/s and share\n"
					printf 'of the peak are effective ones and may pass 100%%.\n\n'
				else
					printf '\n### The direct kernels (`--winograd off`)\n\n'
					printf 'The same models compiled with `--winograd off`: every convolution by the\n'
					printf 'register-blocked direct kernels, whose share of the peak is a true one.\n\n'
				fi
				layers_table "$b"
				read -r g3 n3 <<< "$(conv_kind 3x3 "$b")"
				read -r g1 n1 <<< "$(conv_kind 1x1 "$b")"
				read -r lp lf lm lk <<< "$(lowest_conv "$b")"
				cat <<EOF

Together (total FLOPs over total time): the $n3 3x3 convolutions
$g3 GFLOP/s, $(pct "$g3" 1)% of the peak; the $n1 1x1 convolutions $g1 GFLOP/s,
$(pct "$g1" 1)% of the peak. The slowest of them: $lf of $lm ($lk), $lp%.
EOF
			done
		fi
		cat <<EOF

## Method

Each round runs one process per side, \`net --bench K --threads N\` and
\`node tools/ort_run.js model.onnx ... --bench K --threads N\`, back to back,
alternating which goes first; both do a warm-up run before the K timed ones,
and the time of one run excludes reading inputs and writing outputs. K is
chosen from a probe run so that each side spends about $TARGET_MS ms a round.
ORT's figure includes the cost of calling it from Node (a few microseconds
a run, which matters only for the smallest models). The models have random
weights (torchvision \`weights=None\`, no downloads); speed does not depend
on them.

On a shared or virtual machine the figures move from run to run, and they
drift with whatever else is running: compare numbers from one table, not
across tables. The per-round medians ranged (ms, low-high):

EOF
		printf '| model'
		for n in $THREADS; do printf ' | onnxcc, %s | ORT, %s' "$(thr "$n")" "$(thr "$n")"; done
		printf ' |\n| ---'
		for n in $THREADS; do printf ' | ---: | ---:'; done
		printf ' |\n'
		lohi() { printf '%s-%s' "$(fmt "${1%-*}")" "$(fmt "${1#*-}")"; }
		for name in $names; do
			[ "$(mfield "$name" 2)" = ok ] || continue
			printf '| %s' "$name"
			for n in $THREADS; do
				if [ "$(field "$name" "$n" 3)" = ok ]; then
					printf ' | %s | %s' "$(lohi "$(field "$name" "$n" 11)")" "$(lohi "$(field "$name" "$n" 12)")"
				else
					printf ' | | '
				fi
			done
			printf ' |\n'
		done
		cat <<EOF

Reproduce: \`make bench\` (\`--cpu native\`: this file and docs/zoo.md) or
\`make bench-generic\` (\`--cpu generic\`: docs/benchmarks-generic.md); both
export the zoo into \`$DIR\` if needed, check accuracy, measure the peak,
time, and rewrite the docs. A subset without the docs:
\`bench/zoo_bench.sh --cpu native 'resnet|mobilenet'\`; other options:
\`bench/zoo_bench.sh --help\`, other build flags: \`BENCH_CFLAGS='-std=c11
-O3 -march=native'\`.
EOF
	} > "$MD.tmp" && mv "$MD.tmp" "$MD" && echo "zoo_bench: wrote $MD"
fi

if [ -n "$ZOO_MD" ]; then
	[ -f "$ZOO_OUT" ] || echo "zoo_bench: no $ZOO_OUT (zoo.sh not run): accuracy shows as '-'" >&2
	{
		cat <<EOF
# The model zoo

Generated by \`$cmdline\`$via; do not edit by hand. Real networks exported from PyTorch by
\`tools/export_zoo.py\` (torchvision models are built with \`weights=None\`:
random weights, BatchNorm statistics calibrated on random batches so
activations stay O(1)), compiled by onnxcc (\`--cpu $CPU\`) and checked
against ONNX Runtime by \`tests/e2e/zoo.sh\` (\`make zoo\`). Error:
max|onnxcc - ORT| / max|ORT| over all outputs; the bound is
\`tests/e2e/zoo.txt\`'s rtol. Latency: $(thr "$T1"), median ms; details and
conditions in [benchmarks.md](benchmarks.md).

| model | opset | nodes | params | input | max rel err | status | onnxcc ms | ORT ms | onnxcc/ORT |
| --- | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: |
EOF
		for name in $names; do
			st=$(status_of "$name" "$T1")
			if [ "$st" = ok ]; then
				lat="$(fmt "$(field "$name" "$T1" 4)") | $(fmt "$(field "$name" "$T1" 5)") | $(r2 "$(field "$name" "$T1" 6)")"
			else
				lat="$st | |"
			fi
			nodes=$(fact "$name" 3)
			printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$(fact "$name" 2)" \
				"${nodes:-$(zoo_field "$name" 2)}" "$(params_h "$(fact "$name" 4)")" "$(fact "$name" 5)" \
				"$(zoo_field "$name" 3)" "$(zoo_field "$name" 4)" "$lat"
		done
		printf '\nConditions of this run:\n\n'
		conditions
	} > "$ZOO_MD.tmp" && mv "$ZOO_MD.tmp" "$ZOO_MD" && echo "zoo_bench: wrote $ZOO_MD"
fi
