#!/bin/sh
# llm_bench.sh: a decoder of about 100M parameters (examples/generate's
# make_decoder.py: 12 layers, hidden 768, 12 heads, vocabulary 8192) in f32
# (GPT-2's fused form) and 4-bit (the GenAI builder's Llama form:
# MatMulNBits, GroupQueryAttention with 6 KV heads), greedy decoding with
# examples/generate/generate.c against the same loop on ONNX Runtime
# (generate_ort.js), on 1 and on 2 threads each (generate --threads, ORT's
# intra-op threads), each the second of two runs of the loop in a process
# (-w 1), interleaved rounds: the prefill of 128 tokens and the decode
# steps after it (tokens a second), the decode's bytes a second (the
# weights each step reads, the embedding tables but one row not counted,
# plus the KV cache) against the machine's read bandwidth (bench/copybw.c,
# as many threads), and the weights' and arena's sizes. make bench-llm
# writes the table into docs/benchmarks-llm.md.
#
#   bench/llm_bench.sh [-d DIR] [-r ROUNDS] [-n TOKENS] [-t "THREADS..."] [--md FILE]
set -eu
cd "$(dirname "$0")/.."
D=build/llm-bench R=3 N=32 MD= T="1 2"
while [ $# -gt 0 ]; do
	case $1 in
	-d) D=$2; shift 2 ;;
	-r) R=$2; shift 2 ;;
	-n) N=$2; shift 2 ;;
	-t) T=$2; shift 2 ;;
	--md) MD=$2; shift 2 ;;
	*) echo "usage: bench/llm_bench.sh [-d DIR] [-r ROUNDS] [-n TOKENS] [-t \"THREADS...\"] [--md FILE]" >&2; exit 2 ;;
	esac
done
PY=/usr/bin/python3
CF=$(./onnxcc --cpu native --print-cflags)
mkdir -p "$D"
${CC:-cc} -O2 $CF -o "$D/copybw" bench/copybw.c -lpthread
BW=
for t in $T; do
	BW="$BW $t:$("$D/copybw" 512 "$t" | sed 's/.*read_gbs=\([0-9.]*\).*/\1/')"
done
PROMPT=$($PY -c "print(' '.join(str(i * 37 % 8192) for i in range(128)))")
for form in f32 nbits4; do
	o=$D/$form
	mkdir -p "$o/c"
	if [ ! -f "$o/decoder.onnx" ]; then
		$PY examples/generate/make_decoder.py "$o/decoder.onnx" --layers 12 --hidden 768 --heads 12 --vocab 8192 \
			--positions 512 $([ $form = nbits4 ] && echo --llama --nbits 4)
	fi
	# the bytes a decode step reads: every initializer but the embedding tables
	$PY -c "
import onnx, sys
m = onnx.load(sys.argv[1])
n = sum(len(t.raw_data) for t in m.graph.initializer if t.name not in ('wte', 'wpe'))
t = sum(len(t.raw_data) for t in m.graph.initializer)
# the same weights in f32: a 4-bit tensor's bytes x 8, its scales and zero points none
f = sum(len(t.raw_data) * (8 if t.name.endswith('_q') else 0 if t.name.endswith(('_s', '_z')) else 1) for t in m.graph.initializer)
print(n, t, f)" "$o/decoder.onnx" > "$o/bytes.txt"
	./onnxcc "$o/decoder.onnx" -o "$o/c/decoder.c" --name decoder --pool --cpu native --dim batch=1 --dim seq=1..128 \
		--dim past=0..255 --dim total=1..384 --report > "$o/compile.log" 2>&1 || { cat "$o/compile.log"; exit 1; }
	${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L $CF -I"$o/c" -o "$o/generate" examples/generate/generate.c \
		"$o/c/decoder.c" "$o/c/decoder_weights.c" -lm -lpthread
done
: > "$D/times.txt"
for r in $(seq 1 "$R"); do
	for form in f32 nbits4; do
	for t in $T; do
		o=$D/$form
		cache=$([ $form = f32 ] && echo 2x1x12x0x64 || echo 1x6x0x64)
		"$o/generate" -w 1 --threads "$t" "$N" $PROMPT > "$o/onnxcc.txt" 2> "$o/onnxcc.log"
		node examples/generate/generate_ort.js -w 1 --threads "$t" --cache $cache "$o/decoder.onnx" "$N" $PROMPT > "$o/ort.txt" 2> "$o/ort.log"
		same=$(cmp -s "$o/onnxcc.txt" "$o/ort.txt" && echo same || echo differ)
		echo "$form $t $(sed 's/.*prefill [0-9]* tokens in \([0-9.]*\) ms.*decode [0-9]* tokens in \([0-9.]*\) ms.*/\1 \2/' "$o/onnxcc.log") $(sed 's/.*prefill [0-9]* tokens in \([0-9.]*\) ms.*decode [0-9]* tokens in \([0-9.]*\) ms.*/\1 \2/' "$o/ort.log") $same" >> "$D/times.txt"
	done
	done
done
cat "$D/times.txt"
$PY - "$D" "$N" "$BW" "$MD" <<'PY'
import statistics, subprocess, sys, datetime, os, re
d, n, md = sys.argv[1], int(sys.argv[2]), sys.argv[4]
bws = dict((int(t), float(b)) for t, b in (x.split(":") for x in sys.argv[3].split()))
rows = [l.split() for l in open(d + "/times.txt")]
out = []
for form in ("f32", "nbits4"):
    for t in sorted(bws):
        rs = [r for r in rows if r[0] == form and int(r[1]) == t]
        med = lambda k: statistics.median(float(r[k]) for r in rs)
        pre_o, dec_o, pre_r, dec_r = med(2), med(3), med(4), med(5)
        steps = n - 1
        read, total, f32eq = (int(x) for x in open("%s/%s/bytes.txt" % (d, form)).read().split())
        # the cache a step reads, on average: 2 x layers x past x KV width x 4 bytes
        past = 128 + steps / 2
        cache = 2 * 12 * past * (768 if form == "f32" else 384) * 4
        tok_o, tok_r = dec_o / steps, dec_r / steps
        gbs = (read + cache) / (tok_o / 1e3) / 1e9
        log = open("%s/%s/compile.log" % (d, form)).read()
        arena = int(re.search(r"arena\s+(\d+) bytes", log).group(1))
        same = all(r[6] == "same" for r in rs)
        out.append("| %s | %d | %.1f | %.2f | %.2f | %.2f | %.2f | %.1f (%.0f%% of %.1f) | %.0f | %.0f | %.2f | %.1f (%.2fx) | %.1f | %s |" % (
            "f32, GPT-2 form (Attention)" if form == "f32" else "4-bit, Llama form (MatMulNBits, GroupQueryAttention)",
            t, read / 1e6, tok_o, tok_r, tok_o / tok_r, 1e3 / tok_o, gbs, 100 * gbs / bws[t], bws[t], pre_o, pre_r,
            pre_o / pre_r, total / 1e6, total / f32eq, arena / 1e6, "yes" if same else "NO"))
hdr = ["| model | threads | MB read a step | onnxcc ms/token | ORT ms/token | ratio (goal <= 1.0) | onnxcc tokens/s | onnxcc GB/s (share of read GB/s) | onnxcc prefill 128 ms | ORT prefill ms | ratio | weights MB (x its f32) | arena MB | same ids |",
       "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
print("\n".join(hdr + out))
if md:
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True, text=True).stdout.strip()
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    with open(md, "w") as f:
        f.write("""# Decoder benchmarks

Written by `make bench-llm` (bench/llm_bench.sh) on %s, commit %s, on
this machine (%s, %d cores), `--cpu native`. Do not edit by hand: rerun
it.

- The models: `examples/generate/make_decoder.py --layers 12 --hidden 768
  --heads 12 --vocab 8192` (seeded random weights): f32 in ONNX Runtime's
  fused GPT-2 form (about 98M parameters), and `--llama --nbits 4`, the
  GenAI builder's Llama form (about 118M: SwiGLU, GroupQueryAttention
  with 6 KV heads, MatMulNBits blocks of 32 with zero points, the LM head
  too).
- Each run: `examples/generate/generate.c` (onnxcc, `--threads T`:
  `decoder_pool.h`) and `generate_ort.js` (ONNX Runtime, npm, T intra-op
  threads): a prompt of 128 tokens (prefill), then %d steps of one token,
  the second of two runs of the whole loop in one process (the first,
  untimed, touches the weights: onnxcc's are pages of the program, read
  on first use, ONNX Runtime's read when the session is made); %d
  interleaved rounds, medians. "same ids": the two greedy decodings agree
  in every round.
- MB read a step: the weights a decode step reads (the embedding tables
  one row); GB/s: those bytes plus the KV cache's (2 x 12 layers x the
  past x 768 floats, 384 with 6 KV heads), over onnxcc's time a token,
  against the machine's read bandwidth on as many threads
  (`bench/copybw.c`: %s GB/s).
- Goals (issue 43): time a token and the prefill at most 1.0x ONNX
  Runtime's (aim 0.8x); at least 60%% of the read bandwidth.

""" % (datetime.date.today().isoformat(), rev, cpu, os.cpu_count(), n - 1, len(rows) // (2 * len(bws)),
       ", ".join("%.1f on %d" % (bws[t], t) for t in sorted(bws))))
        f.write("\n".join(hdr + out) + "\n")
    print("llm-bench: wrote " + md)
PY
