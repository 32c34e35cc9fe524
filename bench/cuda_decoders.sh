#!/bin/bash
# cuda_decoders.sh: the decoders on a GPU (bench/cuda_device.sh's decoder
# section): examples/generate/make_decoder.py's decoders of about 100M
# parameters (12 layers, hidden 768, 12 heads, vocabulary 8192, as
# bench/llm_bench.sh's) in three forms, f32 (GPT-2's, com.microsoft
# Attention), llama4 (the GenAI Llama form, 4-bit) and llama (the same in
# f32), compiled with --target cuda; examples/generate/generate.c's greedy
# loop (the prefill of a 128-token prompt, then 31 decode steps) with CUDA
# Graphs (the default: a decode step's past is a new shape, so each step
# is captured) and without (OX_CUDA_GRAPHS=0), three runs of each after a
# warm-up loop; the same loop on the PyTorch twins (bench/decoder_torch.py:
# eager f32, torch.compile f32, eager f16; for llama, whose twin is
# llama4's network on other values, eager f32) on the very weights, 4-bit
# ones dequantized. The ids of onnxcc's program must equal the f32 twin's and
# ONNX Runtime's (computed at prep, node is not on the GPU machine).
#
#   bench/cuda_decoders.sh prep DIR      (make cuda-device-prep: DIR/decoders)
#   bench/cuda_decoders.sh run OUT [DIR] (on the GPU, DIR build/dev)
#
# The models (400 MB in f32) are too large to carry: run makes them again
# from make_decoder.py's seed; prep writes the sha256 of their weights and
# ONNX Runtime's ids, which apply when the sums agree. Writes
# OUT/decoders.txt (the table), OUT/decoders.json, OUT/decoder_torch_FORM.json.
# EMU=1: onnxcc's programs built with --cuda-emu and the twins on the CPU
# (a dry run without a GPU; with the DEC_ sizes below made small).
# DEC_FORMS, DEC_LAYERS, DEC_HIDDEN, DEC_HEADS, DEC_VOCAB, DEC_N (tokens),
# DEC_TORCH (decoder_torch.py's --configs), ARCH (sm_90), PY (python3),
# ONNXCC (DIR/onnxcc).
set -u
cd "$(dirname "$0")/.." || exit 2
MODE=${1:-} OUT=${2:-}
[ "$MODE" = prep ] || [ "$MODE" = run ] && [ -n "$OUT" ] || { echo "usage: $0 prep DIR | run OUT [DIR]" >&2; exit 2; }
PY=${PY:-python3} EMU=${EMU:-} ARCH=${ARCH:-sm_90}
FORMS=${DEC_FORMS:-f32 llama4 llama} N=${DEC_N:-32}
L=${DEC_LAYERS:-12} H=${DEC_HIDDEN:-768} NH=${DEC_HEADS:-12} V=${DEC_VOCAB:-8192}
PROMPT=$(awk -v v="$V" 'BEGIN { for (i = 0; i < 128; i++) printf "%s%d", i ? " " : "", i * 37 % v }')
DIMS="--dim batch=1 --dim seq=1..128 --dim past=0..255 --dim total=1..384"

make_form() { # FORM OUT.onnx
	local fl=
	case $1 in llama) fl=--llama ;; llama4) fl="--llama --nbits 4" ;; esac
	# shellcheck disable=SC2086
	$PY examples/generate/make_decoder.py "$2" --layers "$L" --hidden "$H" --heads "$NH" --vocab "$V" --positions 512 $fl
}
weights_sum() { # the sha256 of an ONNX file's initializers
	$PY -c 'import hashlib, onnx, sys
print(hashlib.sha256(b"".join(t.raw_data for t in onnx.load(sys.argv[1]).graph.initializer)).hexdigest())' "$1"
}

if [ "$MODE" = prep ]; then
	P=$OUT/decoders && mkdir -p "$P" || exit 1
	for f in $FORMS; do
		make_form $f "$P/$f.onnx" || exit 1
		cache=2x1x$NH; [ $f = f32 ] || cache=1x$((NH / 2)); cache=${cache}x0x$((H / NH))
		weights_sum "$P/$f.onnx" > "$P/$f.sum" &&
			node examples/generate/generate_ort.js --cache $cache "$P/$f.onnx" "$N" $PROMPT > "$P/$f.ort.txt" 2> "$P/$f.ort.log" ||
			{ cat "$P/$f.ort.log"; exit 1; }
		rm "$P/$f.onnx"
		echo "decoder $f: ONNX Runtime's $N ids ($(cat "$P/$f.sum"))"
	done
	exit 0
fi

D=${3:-build/dev} ONNXCC=${ONNXCC:-${3:-build/dev}/onnxcc}
W=${W:-/tmp/oxdev}/dec
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$OUT" "$W"
echo "== $(date +%T) decoders build"
for f in $FORMS; do
	(
		o=$W/$f && rm -rf "$o" && mkdir -p "$o"
		make_form $f "$o/decoder.onnx" > "$o/build.log" 2>&1 && weights_sum "$o/decoder.onnx" > "$o/sum" &&
		if [ -n "$EMU" ]; then
			# shellcheck disable=SC2086
			"$ONNXCC" "$o/decoder.onnx" -o "$o/decoder.c" --name decoder --target cuda --cuda-emu $DIMS >> "$o/build.log" 2>&1 &&
				${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -DOX_CUDA_EMU -I"$o" -c -o "$o/generate.o" examples/generate/generate.c &&
				${CC:-cc} -O2 -std=c11 -c -o "$o/weights.o" "$o/decoder_weights.c" &&
				${CXX:-c++} -O2 -std=c++17 -DOX_CUDA_EMU -I"$o" -o "$o/generate" -x c++ "$o/decoder.cu" -x none "$o/generate.o" \
					"$o/weights.o" -lm -pthread >> "$o/build.log" 2>&1
		else
			# shellcheck disable=SC2086
			"$ONNXCC" "$o/decoder.onnx" -o "$o/decoder.c" --name decoder --target cuda $DIMS >> "$o/build.log" 2>&1 &&
				"$NVCC" -std=c++17 -O3 -arch="$ARCH" -I"$o" -o "$o/generate" examples/generate/generate.c "$o/decoder.cu" \
					"$o/decoder_weights.c" >> "$o/build.log" 2>&1
		fi
		rc=$?
		echo "decoder $f build rc=$rc"
		[ $rc = 0 ] || tail -n 5 "$o/build.log" | sed 's/^/    /'
	) &
done
wait
echo "== $(date +%T) decoders: onnxcc"
for r in 1 2 3; do
	for f in $FORMS; do
		o=$W/$f
		[ -x "$o/generate" ] || continue
		"$o/generate" -w 1 "$N" $PROMPT > "$o/ids_graphs.txt" 2> "$o/graphs_$r.log" || cat "$o/graphs_$r.log"
		OX_CUDA_GRAPHS=0 "$o/generate" -w 1 "$N" $PROMPT > "$o/ids_nographs.txt" 2> "$o/nographs_$r.log" || cat "$o/nographs_$r.log"
	done
done
echo "== $(date +%T) decoders: PyTorch"
dev=cuda; [ -n "$EMU" ] && dev=cpu
for f in $FORMS; do
	o=$W/$f
	[ -f "$o/decoder.onnx" ] || continue
	# (llama's twin is llama4's network on other values: its f32 ids only)
	conf=eager:fp32,compile:fp32,eager:fp16
	[ $f = llama ] || [ -n "$EMU" ] && conf=eager:fp32
	conf=${DEC_TORCH:-$conf}
	# shellcheck disable=SC2086
	timeout 300 $PY bench/decoder_torch.py "$o/decoder.onnx" "$N" $PROMPT --device $dev --configs "$conf" --warmup 2 \
		--rounds 3 --json "$OUT/decoder_torch_$f.json" 2>&1 | grep -v Warning | tee "$o/torch.log"
done
$PY - "$W" "$D/decoders" "$OUT" "$N" $FORMS <<'PY' | tee "$OUT/decoders.txt"
import json, os, re, statistics, sys
w, prep, out, n, forms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]

def read(p):
    """a file's words, None when it is missing or empty (a run that failed)"""
    return (open(p).read().split() or None) if os.path.exists(p) else None

def times(f, k):
    """medians of generate's prefill and decode ms over its runs"""
    t = []
    for r in (1, 2, 3):
        p = "%s/%s/%s_%d.log" % (w, f, k, r)
        m = re.search(r"prefill \d+ tokens in ([\d.]+) ms.*decode \d+ tokens in ([\d.]+) ms", open(p).read()) if os.path.exists(p) else None
        if m:
            t.append((float(m[1]), float(m[2])))
    return (statistics.median(x[0] for x in t), statistics.median(x[1] for x in t)) if t else None

def agree(a, b):
    if a is None or b is None:
        return "n/a"
    k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return "same" if a == b else "differ from token %d" % k

res = {}
print("decoders: prefill 128 tokens, then %d decode steps; onnxcc: median of 3 runs of generate -w 1; "
      "PyTorch: median of 3 rounds after 2 warm-up loops" % (n - 1))
print("%-7s %-26s %11s %9s %9s" % ("form", "what", "prefill ms", "ms/token", "tokens/s"))
for f in forms:
    rows, ids = [], {}
    for k, what in (("graphs", "onnxcc cuda"), ("nographs", "onnxcc cuda, no graphs")):
        t = times(f, k)
        ids[what] = read("%s/%s/ids_%s.txt" % (w, f, k))
        if t:
            rows.append((what, t[0], t[1] / (n - 1)))
    tj = "%s/decoder_torch_%s.json" % (out, f)
    for r in json.load(open(tj))["runs"] if os.path.exists(tj) else []:
        what = "torch %s %s" % (r["mode"], r["dtype"])
        rows.append((what, r["prefill_ms"], r["ms_per_token"]))
        ids[what] = [str(x) for x in r["ids"]]
    sums = read("%s/%s/sum" % (w, f)), read("%s/%s.sum" % (prep, f))
    ids["ONNX Runtime"] = read("%s/%s.ort.txt" % (prep, f)) if sums[0] and sums[0] == sums[1] else None
    for what, pre, tok in rows:
        print("%-7s %-26s %11.3f %9.4f %9.0f" % (f, what, pre, tok, 1e3 / tok if tok else 0))
    base = ids.get("onnxcc cuda")
    checks = {k: agree(base, ids.get(k)) for k in ("onnxcc cuda, no graphs", "torch eager fp32", "torch compile fp32", "ONNX Runtime")}
    print("%-7s ids of onnxcc cuda against: %s%s" % (f, ", ".join("%s %s" % kv for kv in checks.items()),
          "" if ids["ONNX Runtime"] or not sums[1] else " (ONNX Runtime's were for other weights)"))
    res[f] = {"rows": [{"what": r[0], "prefill_ms": r[1], "ms_per_token": r[2]} for r in rows], "ids": checks}
json.dump(res, open(out + "/decoders.json", "w"), indent=1)
PY
echo "== $(date +%T) decoders done"
