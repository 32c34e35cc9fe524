"""run.py: differential testing of onnxcc's configurations against ONNX
Runtime and against one another (docs/robustness.md, Differential testing).

    python3 tests/difftest/run.py --seeds 1-200 [-j 2] [--configs c-native,cuda-emu] [--out DIR]
    python3 tests/difftest/run.py --n 5000 --minutes 600 --first-seed 100000 --table docs.md
    python3 tests/difftest/run.py --replay tests/difftest/regress
    python3 tests/difftest/run.py --minimize DIR --config CONFIG

For each seed, gen.py makes a model (f32, f16, bf16 or int8 QDQ; some of
run-time batch, some with If/Loop), its f32 twin and inputs; ONNX Runtime
(tools/ort_run.js --serve, one Node.js per worker) runs the twin: the
reference. Each configuration compiles the model with onnxcc --main
--build and runs it on every input set (each size of the run-time dim,
each value of an If's condition or a Loop's count), and each output is
compared with the reference (the oracle rules below). Then:
  - a configuration whose generated files are byte for byte another's,
    built with the same flags, is that program: it takes that result
    (counted as tested, "same code");
  - c-native runs again with --threads 3: the outputs must be the same
    bits as with 1;
  - c-asan compiles with onnxcc built with ASan and UBSan (any report
    aborts it: a crash); its code is c-native's, so it is usually not
    built again.

Statuses: pass; mismatch (an output beyond its tolerance, or not finite
where the reference is); crash (onnxcc's internal error or a signal, the
program's crash or an error code it should not give); build (the C or C++
compiler rejected what onnxcc wrote); refused (onnxcc declined the model
with a message: a documented limit, counted by kind); invalid (the
reference is not finite, or ONNX Runtime refused the twin: the model is
not counted against onnxcc).

Oracle, per output, normwise: err = max|got - ref| / max(max|ref|, 1e-3),
against the configuration's tolerance for the model's dtype (TOL below).
f16 and bf16 models are compared with the f32 twin (same rounded weights
and inputs), so their tolerance is the rounding of every intermediate. An
int8 QDQ model's quantized outputs may differ by one quantization step
(its scale), as make int8 allows: round-half-even of a value an ulp from a
half step goes either way (under --tf32, whose float products feed the
quantizers, one step plus the normwise tf32 tolerance). The reference of an f16 or bf16
model is the twin with each node's output rounded to that dtype and back
(rounded_twin): what a model of that dtype computes, op by op; the
tolerance grows by 4 times the distance between that and the unrounded
twin (compare): a fused kernel rounds less often than op by op.
"""
import argparse
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import gen  # noqa: E402

ONNXCC = os.environ.get("ONNXCC") or os.path.join(ROOT, "onnxcc")
# c-asan's compiler: onnxcc built with ASan and UBSan (make SANITIZE=1): a
# pointer into g->vals kept across a call that grows them, say, reads
# freed memory there on every model that moves them
ONNXCC_SAN = os.environ.get("ONNXCC_SAN") or os.path.join(ROOT, "build", "san", "onnxcc")
SAN_ENV = {"ASAN_OPTIONS": "abort_on_error=1:detect_leaks=1", "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}

# name: (onnxcc flags, CPU features it needs)
CONFIGS = collections.OrderedDict([
    ("c-native", (["--cpu", "native"], [])),
    ("c-asan", (["--cpu", "native"], [])),
    ("c-v3", (["--cpu", "x86-64-v3"], ["avx2", "fma"])),
    ("c-generic", (["--cpu", "generic"], [])),
    ("c-opt0", (["--cpu", "native", "--opt", "0"], [])),
    ("c-nowino", (["--cpu", "native", "--winograd", "off"], [])),
    ("c-wino2", (["--cpu", "native", "--winograd", "2"], [])),
    ("c-wino4", (["--cpu", "native", "--winograd", "4"], [])),
    ("cuda-emu", (["--target", "cuda", "--cuda-emu"], [])),
    ("cuda-tf32", (["--target", "cuda", "--cuda-emu", "--tf32"], [])),
    ("cuda-nchw", (["--target", "cuda", "--cuda-emu", "--cuda-layout", "nchw"], [])),
])

# normwise tolerance by configuration family and dtype (see the module's
# docstring); tf32 rounds the products' inputs to 10-bit mantissas
TOL = {
    ("c", "f32"): 1e-4, ("cuda", "f32"): 1e-4, ("tf32", "f32"): 3e-2,
    ("c", "f16"): 3e-2, ("cuda", "f16"): 3e-2, ("tf32", "f16"): 3e-2,
    ("c", "bf16"): 1.5e-1, ("cuda", "bf16"): 1.5e-1, ("tf32", "bf16"): 1.5e-1,
    ("c", "qdq"): 1e-4, ("cuda", "qdq"): 1e-4, ("tf32", "qdq"): 3e-2,
}


def family(cfg):
    return "tf32" if cfg == "cuda-tf32" else cfg.split("-")[0]


def cpu_has(feats):
    try:
        flags = open("/proc/cpuinfo").read().split()
    except OSError:
        return False
    return all(f in flags for f in feats)


class Ort:
    """one ONNX Runtime server (tools/ort_run.js --serve)"""

    def __init__(self):
        # basic: the graph as the model gives it, ORT's extended fusions out
        # (they made an invalid graph of a valid generated model once)
        self.p = subprocess.Popen(["node", os.path.join(ROOT, "tools", "ort_run.js"), "--serve", "--opt", "basic"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def run(self, model, inputs, outdir):
        self.p.stdin.write(json.dumps({"model": model, "inputs": inputs, "outdir": outdir}) + "\n")
        self.p.stdin.flush()
        r = json.loads(self.p.stdout.readline())
        return r.get("error")

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def rounded_twin(d, dtype):
    """the twin with every node's output rounded to dtype (f16 or bf16)
    and back, as a model in that dtype rounds each op's result: the
    reference for f16 and bf16 models, so that an ill-conditioned op (x -
    mean over nearly equal values) compares like with like; its path"""
    import onnx
    from onnx import helper
    to = {"f16": onnx.TensorProto.FLOAT16, "bf16": onnx.TensorProto.BFLOAT16}[dtype]
    m = onnx.load(os.path.join(d, "twin.onnx"))

    def graph(g):
        nodes = []
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    graph(a.g)
            outs = list(n.output)
            casts = []
            for k, o in enumerate(outs):
                if not o or o.startswith("cond_out_"):  # (a Loop body's condition)
                    continue
                n.output[k] = o + "__raw"
                casts.append(helper.make_node("Cast", [o + "__raw"], [o + "__r"], to=to))
                casts.append(helper.make_node("Cast", [o + "__r"], [o], to=onnx.TensorProto.FLOAT))
            nodes.append(n)
            nodes.extend(casts)
        del g.node[:]
        g.node.extend(nodes)

    graph(m.graph)
    p = os.path.join(d, "twin_rounded.onnx")
    onnx.save(m, p)
    return p


def sh(cmd, cwd=None, timeout=300, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "timed out after %d s" % timeout


def load_outputs(d, n):
    return [np.load(os.path.join(d, "output_%d.npy" % k)) for k in range(n)]


def normwise(got, ref):
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    if got.shape != ref.shape:
        return float("inf"), "shape %s, expected %s" % (got.shape, ref.shape)
    if ref.size == 0:
        return 0.0, ""
    if not np.all(np.isfinite(got)):
        return float("inf"), "%d values not finite" % int((~np.isfinite(got)).sum())
    e = float(np.abs(got - ref).max())
    return e / max(float(np.abs(ref).max()), 1.0), ""


def as_float(a, dtype):
    """an output as f32: bf16 outputs come as their bits"""
    if dtype == "bf16" and a.dtype == np.uint16:  # (reshaped: a 0-d array has no view of another dtype)
        return (a.reshape(-1).astype(np.uint32) << 16).view(np.float32).reshape(a.shape)
    return a.astype(np.float32) if a.dtype.kind == "f" else a


def compare(meta, cfg, got, ref):
    """'' or what is wrong (the worst output). ref: the reference outputs
    and, per output, the rounding noise (f16, bf16: how far the twin
    without rounding between ops is from the rounded one); an output's
    tolerance is TOL's plus 4 times its noise: a model whose result
    rounding moves (an ill-conditioned op: x - mean over nearly equal
    values) is judged by how much rounding moves it, wherever the
    rounding happens (a fused kernel rounds less often)"""
    ref, noise = ref
    base = TOL[(family(cfg), meta["dtype"])]
    worst = 0.0
    for k, (g, r) in enumerate(zip(got, ref)):
        tol = base + 4 * noise[k]
        g = as_float(g, meta["dtype"])
        if r.dtype.kind != "f":
            if g.shape != r.shape or not np.array_equal(g, r):
                return "output %d: integers differ" % k, float("inf")
            continue
        if meta["dtype"] == "qdq" and meta.get("qdq_steps"):
            # one step; under --tf32 one step more than the float error the
            # products' rounding may leave before a quantizer
            step = max(meta["qdq_steps"])
            e = float(np.abs(g.astype(np.float64) - r).max()) if g.shape == r.shape else float("inf")
            extra = tol * max(float(np.abs(r).max()), 1.0) if family(cfg) == "tf32" else 0.0
            if not e <= 1.0001 * step + 1e-6 + extra:
                return "output %d: %.3g, more than one quantization step %.3g%s" % (
                    k, e, step, " and the tf32 error" if extra else ""), e / step
            continue
        e, why = normwise(g, r)
        worst = max(worst, e)
        if e > tol:
            return "output %d: normwise error %.3g > %.3g%s %s" % (k, e, tol, " (rounding noise %.3g)" % noise[k]
                                                                  if noise[k] else "", why), e
    return "", worst


class Result:
    def __init__(self, seed, meta, cfg, status, detail="", err=0.0):
        self.seed, self.meta, self.cfg, self.status, self.detail, self.err = seed, meta, cfg, status, detail, err

    def row(self):
        m = self.meta
        return "\t".join(str(x) for x in (self.seed, m["dtype"], int(m["dynamic"]), int(bool(
            [p for p in m["patterns"] if p in ("if", "loop")])), m["nodes"], self.cfg, self.status,
            "%.3g" % self.err if self.err else "", self.detail.replace("\t", " ").replace("\n", " ")[:300]))


def classify_onnxcc(rc, log):
    if rc == "timeout":
        return "crash", "onnxcc: " + log
    if "internal error" in log or (isinstance(rc, int) and rc < 0) or "Sanitizer" in log:
        return "crash", (first_line(log, "internal error") or first_line(log, "ERROR: AddressSanitizer") or
                         first_line(log, "runtime error") or "onnxcc signal %s" % rc)
    if "building" in log and "failed" in log:
        return "build", first_line(log, "error") or first_line(log, "building")
    return "refused", first_line(log, "") or "exit %s" % rc


def first_line(log, word):
    for line in log.splitlines():
        if word in line and line.strip():
            return line.strip()
    return ""


def run_case(d, meta, cfgs, ort, keep_dir=None, cflags="-O1"):
    """every configuration on the case in d; a list of Results"""
    seed = meta["seed"]
    res = []
    # the reference, per run
    nout = len(meta["outputs"])
    refs = []
    twin = rounded_twin(d, meta["dtype"]) if meta["dtype"] in ("f16", "bf16") else os.path.join(d, "twin.onnx")
    for k in range(meta["runs"]):
        rd = os.path.join(d, "run_%d" % k)
        ins = sorted(f for f in os.listdir(rd) if f.startswith("twin_"))
        ins = [os.path.join(rd, "twin_%d.npy" % j) for j in range(len(ins))]
        err = ort.run(twin, ins, os.path.join(rd, "ref"))
        if err:
            return [Result(seed, meta, c, "invalid", "ONNX Runtime: " + err[:200]) for c in cfgs]
        r = load_outputs(os.path.join(rd, "ref"), nout)
        if any(x.dtype.kind == "f" and not np.all(np.isfinite(x)) for x in r):
            return [Result(seed, meta, c, "invalid", "the reference is not finite") for c in cfgs]
        noise = [0.0] * nout
        if twin != os.path.join(d, "twin.onnx"):  # how much rounding between the ops moves each output
            ort.run(os.path.join(d, "twin.onnx"), ins, os.path.join(rd, "ref0"))
            for j, x0 in enumerate(load_outputs(os.path.join(rd, "ref0"), nout)):
                noise[j] = normwise(x0, r[j])[0] if x0.dtype.kind == "f" else 0.0
        refs.append((r, noise))
        if meta["dtype"] == "f16":
            big = f16_range(d, rd, ort)
            if big:
                return [Result(seed, meta, c, "invalid", big) for c in cfgs]
    done = {}  # (generated files' digest, flags) -> Result of the config that ran them
    env = dict(os.environ, ONNXCC_CFLAGS=cflags)
    for cfg in cfgs:
        flags = list(CONFIGS[cfg][0])
        for s, (lo, hi) in meta["dims"].items():
            flags += ["--dim", "%s=%d..%d" % (s, lo, hi)]
        cd = os.path.join(d, cfg)
        os.makedirs(cd, exist_ok=True)
        # the code first: the same code as a configuration already run is that program
        exe = ONNXCC
        if cfg == "c-asan":
            exe, env = ONNXCC_SAN, dict(env, **SAN_ENV)
        rc, log = sh([exe, os.path.join(d, "model.onnx"), "-o", os.path.join(cd, "net.c")] + flags, env=env)
        if rc != 0:
            st, why = classify_onnxcc(rc, log)
            res.append(Result(seed, meta, cfg, st, why))
            continue
        digest = code_digest(cd)
        build_flags = tuple(f for f in flags if f in ("--cpu", "native", "generic", "x86-64-v3", "--target", "cuda"))
        key = (digest, build_flags)
        if key in done:
            r0 = done[key]
            res.append(Result(seed, meta, cfg, r0.status, ("same code as %s; " % r0.cfg) + r0.detail, r0.err))
            continue
        rc, log = sh([exe, os.path.join(d, "model.onnx"), "-o", os.path.join(cd, "net.c"), "--main", "--build"]
                     + flags, env=env)
        if rc != 0:
            st, why = classify_onnxcc(rc, log)
            r = Result(seed, meta, cfg, st, why)
            res.append(r)
            done[key] = r
            continue
        r = run_config(d, cd, meta, cfg, refs, nout)
        res.append(r)
        done[key] = r
    if keep_dir and any(r.status in ("mismatch", "crash", "build") for r in res):
        dst = os.path.join(keep_dir, "seed_%d" % seed)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(d, dst, ignore=shutil.ignore_patterns("*.o"))
    return res


def all_outputs(m):
    """m with every top-level node's output a graph output too (untyped:
    ONNX Runtime infers them), in place; m"""
    from onnx import helper
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have:
                m.graph.output.append(helper.ValueInfoProto(name=o))
                have.add(o)
    m.graph.ClearField("value_info")
    return m


def f16_range(d, rd, ort):
    """'' or why an f16 model leaves f16's range: one of the twin's values
    (every node's output, by ONNX Runtime) past 30000 in magnitude (f16's
    largest is 65504). The generator keeps values near 1, but products can
    grow; such a model's f16 result is not the twin's, by definition"""
    import onnx
    twin = all_outputs(onnx.load(os.path.join(d, "twin.onnx")))
    p = os.path.join(rd, "all.onnx")
    onnx.save(twin, p)
    ins = [os.path.join(rd, "twin_%d.npy" % j) for j in range(len(twin.graph.input))]
    err = ort.run(p, ins, os.path.join(rd, "all"))
    if err:
        return ""
    for k, o in enumerate(twin.graph.output):
        a = np.load(os.path.join(rd, "all", "output_%d.npy" % k))
        if a.dtype.kind == "f" and a.size and float(np.abs(a).max()) > 30000:
            return "value %s reaches %.3g, past f16's range" % (o.name, float(np.abs(a).max()))
    return ""


def code_digest(cd):
    import hashlib
    h = hashlib.sha256()
    for f in sorted(os.listdir(cd)):
        if f.endswith((".c", ".cu", ".h", ".bin", ".inc")) and not f.endswith("_main.c"):
            h.update(f.encode())
            with open(os.path.join(cd, f), "rb") as fp:
                h.update(fp.read())
    return h.hexdigest()


def run_config(d, cd, meta, cfg, refs, nout):
    seed = meta["seed"]
    worst = 0.0
    for k in range(meta["runs"]):
        rd = os.path.join(d, "run_%d" % k)
        nin = len([f for f in os.listdir(rd) if f.startswith("in_")])
        ins = [os.path.join(rd, "in_%d.npy" % j) for j in range(nin)]
        out = os.path.join(cd, "out_%d" % k)
        rc, log = sh([os.path.join(cd, "net")] + ins + ["-o", out], timeout=120)
        if rc != 0:
            return Result(seed, meta, cfg, "crash", "run %d: %s" % (k, first_line(log, "") or "exit %s" % rc))
        got = load_outputs(out, nout)
        why, e = compare(meta, cfg, got, refs[k])
        worst = max(worst, e)
        if why:
            return Result(seed, meta, cfg, "mismatch", "run %d: %s" % (k, why), e)
        if cfg == "c-native":  # threads: the same bits
            out3 = os.path.join(cd, "out3_%d" % k)
            rc, log = sh([os.path.join(cd, "net"), "--threads", "3"] + ins + ["-o", out3], timeout=120)
            if rc != 0:
                return Result(seed, meta, cfg, "crash", "--threads 3, run %d: %s" % (k, first_line(log, "")))
            for j, (a, b) in enumerate(zip(got, load_outputs(out3, nout))):
                if a.tobytes() != b.tobytes():
                    return Result(seed, meta, cfg, "mismatch", "run %d: output %d with --threads 3 is not the same "
                                  "bits as with 1" % (k, j))
    return Result(seed, meta, cfg, "pass", "", worst)


# ---------------- the driver ----------------

def worker(args):
    """run seeds from the queue in this process; returns Results"""
    seeds, cfgs, work, keep, deadline, cflags, opts = args
    ort = Ort()
    out = []
    try:
        for seed in seeds:
            if deadline and time.time() > deadline:
                break
            d = tempfile.mkdtemp(prefix="s%d." % seed, dir=work)
            try:
                case = gen.generate(seed, **opts)
                if case is None:
                    continue
                meta = gen.write(case, d)
                out.extend(run_case(d, meta, cfgs, ort, keep, cflags))
            except Exception as e:  # a bug of the generator's or of this driver: counted, the run goes on
                out.append(Result(seed, {"dtype": "?", "dynamic": False, "patterns": [], "nodes": 0}, "gen",
                                  "generator", "%s: %s" % (type(e).__name__, e)))
            finally:
                shutil.rmtree(d, ignore_errors=True)
    finally:
        ort.close()
    return out


def parse_seeds(s):
    out = []
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += list(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


STATUSES = ["pass", "mismatch", "crash", "build", "refused", "invalid"]


def table(results, cfgs, seconds, ran=None):
    """the campaign's table (markdown): per configuration, models and each
    status, and the models a minute (of the ran models timed in seconds:
    all of them when None)"""
    by = collections.defaultdict(collections.Counter)
    same = collections.Counter()
    for r in results:
        by[r.cfg][r.status] += 1
        if r.detail.startswith("same code as"):
            same[r.cfg] += 1
    models = len({r.seed for r in results if r.cfg != "gen"})
    lines = ["| configuration | models | " + " | ".join(STATUSES) + " | same code as another |",
             "|---|---" + "|---" * len(STATUSES) + "|---|"]
    for c in cfgs:
        n = sum(by[c].values())
        lines.append("| %s | %d | %s | %d |" % (c, n, " | ".join(str(by[c][s]) for s in STATUSES), same[c]))
    gen_err = by["gen"]["generator"]
    lines.append("")
    if seconds and ran is not None and ran != models:  # (resumed: the rate is this run's)
        lines.append("%d models, %d of them in this run's %.0f s (%.1f a minute); generator errors: %d" % (
            models, ran, seconds, ran / seconds * 60, gen_err))
    elif seconds:
        lines.append("%d models in %.0f s (%.1f a minute); generator errors: %d" % (
            models, seconds, models / seconds * 60, gen_err))
    else:  # read back from results.tsv, which keeps no times
        lines.append("%d models; generator errors: %d" % (models, gen_err))
    dt = collections.Counter(r.meta["dtype"] for r in results if r.cfg == cfgs[0])
    lines.append("dtypes: " + ", ".join("%s %d" % (k, v) for k, v in sorted(dt.items())) +
                 "; run-time batch: %d; If/Loop: %d" % (
                     sum(1 for r in results if r.cfg == cfgs[0] and r.meta["dynamic"]),
                     sum(1 for r in results if r.cfg == cfgs[0] and any(p in ("if", "loop") for p in r.meta["patterns"]))))
    return "\n".join(lines)


def symptom(r):
    """a failure's group: status, configuration family, dtype, the message
    without names and numbers"""
    msg = re.sub(r"'[^']*'|\"[^\"]*\"", "'X'", r.detail)
    msg = re.sub(r"\d+(\.\d+)?(e-?\d+)?", "N", msg)
    msg = re.sub(r"/\S+", "PATH", msg)
    return "%s | %s | %s | %s" % (r.status, family(r.cfg) if r.cfg != "gen" else "gen", r.meta["dtype"], msg[:120])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", help="seeds: 1-200,5000")
    ap.add_argument("--n", type=int, help="models (with --first-seed)")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--minutes", type=float, default=0, help="stop after this long")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "difftest"))
    ap.add_argument("--table", help="also write the table (markdown) here")
    ap.add_argument("--cflags", default="-O1", help="$ONNXCC_CFLAGS for the builds (default -O1: quicker builds)")
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16", "qdq"])
    ap.add_argument("--replay", help="a folder of kept cases (tests/difftest/regress)")
    ap.add_argument("--minimize", help="a kept case's folder")
    ap.add_argument("--config", help="with --minimize: the failing configuration")
    ap.add_argument("--resume", action="store_true",
                    help="keep OUT/results.tsv and run only the seeds it has no row for (a campaign cut short, "
                    "continued); the table covers both")
    ap.add_argument("--summarize", help="results.tsv files, comma-separated (of a run cut short and its "
                    "rest, say): their table and symptoms; a later file's row for a seed and "
                    "configuration replaces an earlier one's")
    a = ap.parse_args()
    cfgs = [c for c in a.configs.split(",") if c]
    for c in cfgs:
        if c not in CONFIGS:
            ap.error("no configuration %r (%s)" % (c, ", ".join(CONFIGS)))
    if "c-asan" in cfgs and not os.access(ONNXCC_SAN, os.X_OK):
        ap.error("c-asan needs %s (make SANITIZE=1 build/san/onnxcc; make difftest builds it)" % ONNXCC_SAN)
    skipped = [c for c in cfgs if not cpu_has(CONFIGS[c][1])]
    for c in skipped:
        print("difftest: %s skipped (this machine: its CPU lacks %s)" % (c, " ".join(CONFIGS[c][1])))
    cfgs = [c for c in cfgs if c not in skipped]
    os.makedirs(a.out, exist_ok=True)
    if a.minimize:
        import minimize
        return minimize.main(a.minimize, a.config, a.cflags)
    if a.replay:
        return replay(a.replay, cfgs, a.out, a.cflags)
    if a.summarize:
        rows = {}
        for path in a.summarize.split(","):
            for r in read_tsv(path):
                rows[r.seed, r.cfg] = r
        ran = {seed for seed, cfg in rows if cfg != "gen"}  # a seed run again: its generator error is gone
        rows = [r for (seed, cfg), r in rows.items() if cfg != "gen" or seed not in ran]
        return report(rows, [c for c in CONFIGS if any(r.cfg == c for r in rows)], 0, a.table, a.summarize, "")
    seeds = parse_seeds(a.seeds) if a.seeds else list(range(a.first_seed, a.first_seed + (a.n or 100)))
    work = tempfile.mkdtemp(prefix="work.", dir=a.out)
    keep = os.path.join(a.out, "failures")
    deadline = time.time() + a.minutes * 60 if a.minutes else 0
    opts = {"dtype": a.dtype} if a.dtype else {}
    t0 = time.time()
    # chunks of 8 seeds to the workers; each chunk's rows appended to
    # results.tsv as it ends, and a line of progress (a long campaign cut
    # short keeps what it did)
    tsv = os.path.join(a.out, "results.tsv")
    results = []
    if a.resume and os.path.isfile(tsv):
        results = read_tsv(tsv)
        done = {r.seed for r in results if r.cfg != "gen"}
        seeds = [x for x in seeds if x not in done]
        results = [r for r in results if r.cfg != "gen" or r.seed in done]  # (a generator error: run again)
        print("difftest: resuming %s: %d models done, %d to run" % (tsv, len(done), len(seeds)), flush=True)
        with open(tsv, "w") as f:
            f.write("seed\tdtype\tdynamic\tcontrol\tnodes\tconfig\tstatus\terr\tdetail\n")
            for r in results:
                f.write(r.row() + "\n")
    else:
        with open(tsv, "w") as f:
            f.write("seed\tdtype\tdynamic\tcontrol\tnodes\tconfig\tstatus\terr\tdetail\n")
    before = len({r.seed for r in results})
    chunks = [seeds[k:k + 8] for k in range(0, len(seeds), 8)]
    jobs = [(c, cfgs, work, keep, deadline, a.cflags, opts) for c in chunks]

    def take(part):
        results.extend(part)
        with open(tsv, "a") as f:
            for r in part:
                f.write(r.row() + "\n")
        n = len({r.seed for r in results})
        bad = sum(r.status in ("mismatch", "crash", "build", "generator") for r in results)
        print("difftest: %d models, %d failing results, %.0f s" % (n, bad, time.time() - t0), flush=True)

    if a.j == 1:
        for job in jobs:
            take(worker(job))
    else:
        import multiprocessing
        with multiprocessing.Pool(a.j) as pool:
            for part in pool.imap_unordered(worker, jobs):
                take(part)
    shutil.rmtree(work, ignore_errors=True)
    secs = time.time() - t0
    return report(results, cfgs, secs, a.table, tsv, keep, len({r.seed for r in results}) - before)


def read_tsv(path):
    out = []
    with open(path) as f:
        next(f)
        for line in f:
            p = line.rstrip("\n").split("\t")
            meta = {"dtype": p[1], "dynamic": p[2] == "1", "patterns": ["if"] if p[3] == "1" else [],
                    "nodes": int(p[4])}
            out.append(Result(int(p[0]), meta, p[5], p[6], p[8] if len(p) > 8 else "", float(p[7] or 0)))
    return out


def report(results, cfgs, secs, table_path, tsv, keep, ran=None):
    """the table and the failures by symptom; 1 if any is a mismatch,
    crash, build failure or generator error. ran: the models this run
    timed in secs (all of them when None)"""
    results.sort(key=lambda r: (r.seed, list(CONFIGS).index(r.cfg) if r.cfg in CONFIGS else -1))
    t = table(results, cfgs, secs, ran)
    print(t)
    groups = collections.defaultdict(list)
    for r in results:
        if r.status not in ("pass",):
            groups[symptom(r)].append(r)
    bad = 0
    print("\nby symptom (status | configuration | dtype | message): count, seeds")
    for k, rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print("  %4d  %s  seeds %s" % (len(rs), k, ",".join(sorted({str(r.seed) for r in rs})[:8])))
        if rs[0].status in ("mismatch", "crash", "build", "generator"):
            bad += len(rs)
    if table_path:
        with open(table_path, "w") as f:
            f.write(t + "\n")
    print("\ndifftest: %d mismatches, crashes, build failures and generator errors (%s%s)"
          % (bad, tsv, "; failing cases in " + keep if keep else ""))
    return 1 if bad else 0


def replay(folder, cfgs, out, cflags):
    """each kept case (a folder with meta.json) on its configurations (meta
    "configs", else all): every one must pass"""
    ort = Ort()
    bad = n = 0
    try:
        for name in sorted(os.listdir(folder)):
            src = os.path.join(folder, name)
            if not os.path.isfile(os.path.join(src, "meta.json")):
                continue
            d = os.path.join(out, "replay", name)
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(src, d)
            meta = json.load(open(os.path.join(d, "meta.json")))
            use = [c for c in meta.get("configs", cfgs) if c in cfgs]
            for r in run_case(d, meta, use, ort, None, meta.get("cflags", cflags)):
                n += 1
                ok = r.status == "pass"
                bad += not ok
                print("regress %-28s %-10s %s%s" % (name, r.cfg, r.status, "" if ok else ": " + r.detail))
    finally:
        ort.close()
    print("difftest regress: %d runs, %d not passing" % (n, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(main())
