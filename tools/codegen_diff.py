#!/usr/bin/python3
"""codegen_diff.py: which generated files a change of onnxcc changes.

    make codegen-diff BASE=rev [NEW=rev] [SETS=node,difftest,zoo] [J=2]
    tools/codegen_diff.py BASE [--new REV] [--sets ...] [-j N] [--out DIR]

Builds onnxcc at BASE (a git revision, built once in
build/codegen-diff/onnxcc-SHA) and takes NEW's (another revision, or by
default the working tree's ./onnxcc), then compiles one fixed set of models
with both, for each configuration, and compares every file each writes
(net.c or net.cu, net.h, the weights, net_main.c) and its --report=json
output byte for byte. A model that both refuse is the same when the first
line of the message is.

The set (stated in the summary with its counts):
  node      every ONNX backend node test's model as given
            (tests/onnx_tests.sh finds the data), 1765 in onnx 1.17's
  difftest  tests/difftest/gen.py's models of seeds 1-200: f32, f16, bf16
            and int8 QDQ, run-time batches, If and Loop, the patterns the
            passes rewrite (--dim from the generator)
  zoo       the exported zoo models (build/zoo, make zoo-models) with
            their flags in tests/e2e/zoo.txt
  dyn       make dyn's models of run-time dims (build/dyn, or
            $CODEGEN_DIFF_DYN; silero_vad from npm) with their --dim and
            --shape ranges in tests/e2e/dyn.txt (not in the default sets:
            make dyn exports them)
Configurations: c (the default target and --cpu) and cuda (--target cuda).

The report (OUT/report.txt) lists each model and configuration whose files
differ, with the head of each file's unified diff; the summary counts
identical, differing, refused by both and newly refused or accepted
compiles. Exit status 0 when nothing differs, 1 when something does, 2 on
an error of this script's (a build that fails, a set with no models).
"""
import argparse
import concurrent.futures
import difflib
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = [("c", []), ("cuda", ["--target", "cuda"])]
SEEDS = range(1, 201)


def die(msg):
    print("codegen-diff: " + msg, file=sys.stderr)
    sys.exit(2)


def git(*args):
    return subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True, check=True).stdout.strip()


def build_rev(rev, out):
    """onnxcc built at rev (a commit), once: its path"""
    try:
        sha = git("rev-parse", "--verify", rev + "^{commit}")
    except subprocess.CalledProcessError:
        die("no revision %r" % rev)
    d = os.path.join(out, "onnxcc-" + sha[:12])
    exe = os.path.join(d, "onnxcc")
    if os.access(exe, os.X_OK):
        return exe, sha[:12]
    src = d + ".src"
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    arch = subprocess.Popen(["git", "-C", ROOT, "archive", sha], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", src], stdin=arch.stdout, check=True)
    arch.wait()
    print("codegen-diff: building onnxcc at %s (%s)" % (rev, sha[:12]), flush=True)
    p = subprocess.run(["make", "-C", src, "-j%d" % (os.cpu_count() or 2), "all"], capture_output=True, text=True)
    if p.returncode != 0:
        die("onnxcc at %s did not build:\n%s" % (rev, (p.stdout + p.stderr)[-2000:]))
    os.makedirs(d, exist_ok=True)
    shutil.copy2(os.path.join(src, "onnxcc"), exe)
    shutil.rmtree(src, ignore_errors=True)
    return exe, sha[:12]


def cases(sets, out):
    """[(set, name, model path, flags)]"""
    res = []
    if "node" in sets:
        p = subprocess.run([os.path.join(ROOT, "tests", "onnx_tests.sh")], capture_output=True, text=True)
        if p.returncode != 0:
            die("no ONNX backend test data: " + p.stderr.strip())
        node = os.path.join(p.stdout.strip(), "node")
        for t in sorted(os.listdir(node)):
            m = os.path.join(node, t, "model.onnx")
            if os.path.isfile(m):
                res.append(("node", t, m, []))
    if "difftest" in sets:
        sys.path.insert(0, os.path.join(ROOT, "tests", "difftest"))
        import gen
        for seed in SEEDS:
            d = os.path.join(out, "models", "seed_%d" % seed)
            meta_path = os.path.join(d, "meta.json")
            if not os.path.isfile(meta_path):
                case = gen.generate(seed)
                if case is None:
                    continue
                os.makedirs(d, exist_ok=True)
                gen.write(case, d)
            meta = json.load(open(meta_path))
            flags = []
            for s, (lo, hi) in sorted(meta["dims"].items()):
                flags += ["--dim", "%s=%d..%d" % (s, lo, hi)]
            res.append(("difftest", "seed_%d" % seed, os.path.join(d, "model.onnx"), flags))
    if "zoo" in sets:
        zoo = os.path.join(ROOT, "build", "zoo")
        names = sorted(n for n in os.listdir(zoo) if os.path.isfile(os.path.join(zoo, n, "model.onnx"))) \
            if os.path.isdir(zoo) else []
        if not names:
            die("no zoo models in %s (make zoo-models)" % zoo)
        flags = {}  # tests/e2e/zoo.txt: name, flags ('-': none), rtol
        for line in open(os.path.join(ROOT, "tests", "e2e", "zoo.txt")):
            w = line.split()
            if len(w) >= 3 and not w[0].startswith("#"):
                flags[w[0]] = [] if w[1] == "-" else " ".join(w[1:-1]).split()
        for n in names:
            res.append(("zoo", n, os.path.join(zoo, n, "model.onnx"), flags.get(n, [])))
    if "dyn" in sets:
        dyn = os.environ.get("CODEGEN_DIFF_DYN", os.path.join(ROOT, "build", "dyn"))
        n0 = len(res)
        for line in open(os.path.join(ROOT, "tests", "e2e", "dyn.txt")):
            f = [x.strip() for x in line.split(" | ")]
            if len(f) < 4 or line.startswith("#"):
                continue
            m = os.path.join(dyn, f[0], "model.onnx")
            if f[0] == "silero_vad":  # (npm's, not exported)
                m = os.path.join(ROOT, "tools", "node_modules", "@jjhbw", "silero-vad", "weights", "silero_vad.onnx")
            if os.path.isfile(m):
                res.append(("dyn", f[0], m, f[1].split()))
        if len(res) == n0:
            die("no exported models of make dyn in %s (make dyn)" % dyn)
    return res


def compile_one(exe, model, flags, d):
    """(rc, first line of the message) of onnxcc on model into d"""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    try:
        p = subprocess.run([exe, model, "-o", "net.c", "--main", "--report=json"] + flags, cwd=d,
                           capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return -1, "timed out"
    with open(os.path.join(d, "report.json"), "w") as f:
        f.write(p.stdout)
    msg = next((line for line in p.stderr.splitlines() if line.strip()), "")
    return p.returncode, msg


def files_of(d):
    return sorted(f for f in os.listdir(d))


def compare(job):
    """one model and configuration with both builds: (job, verdict, detail)"""
    (set_, name, model, flags), (cfg, cflags), base, new, out = job
    da = os.path.join(out, "work", set_, name, cfg, "base")
    db = os.path.join(out, "work", set_, name, cfg, "new")
    ra, ma = compile_one(base, model, flags + cflags, da)
    rb, mb = compile_one(new, model, flags + cflags, db)
    try:
        if ra != 0 or rb != 0:
            if ra != 0 and rb != 0:
                return job, ("refused" if ma == mb else "message"), (ma if ma == mb else "base: %s\nnew:  %s" % (ma, mb))
            return job, ("now refused" if rb != 0 else "now accepted"), (mb if rb != 0 else ma)
        fa, fb = files_of(da), files_of(db)
        detail = []
        for f in sorted(set(fa) | set(fb)):
            if f not in fa or f not in fb:
                detail.append("%s only in %s" % (f, "base" if f in fa else "new"))
                continue
            a = open(os.path.join(da, f), "rb").read()
            b = open(os.path.join(db, f), "rb").read()
            if a == b:
                continue
            try:
                la, lb = a.decode().splitlines(), b.decode().splitlines()
            except UnicodeDecodeError:
                detail.append("%s: binary, %d bytes against %d" % (f, len(a), len(b)))
                continue
            diff = list(difflib.unified_diff(la, lb, "base/" + f, "new/" + f, lineterm="", n=1))
            changed = sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))
            detail.append("%s: %d lines changed\n%s" % (f, changed, "\n".join(diff[:40])))
        return job, ("differ" if detail else "same"), "\n".join(detail)
    finally:
        shutil.rmtree(os.path.dirname(da), ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", help="the revision to compare against")
    ap.add_argument("--new", help="a revision (default: the working tree's ./onnxcc)")
    ap.add_argument("--sets", default="node,difftest,zoo")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "codegen-diff"))
    ap.add_argument("--show", type=int, default=20, help="differing compiles printed (all are in the report)")
    a = ap.parse_args()
    sets = [s for s in a.sets.split(",") if s]
    for s in sets:
        if s not in ("node", "difftest", "zoo", "dyn"):
            ap.error("no set %r (node, difftest, zoo, dyn)" % s)
    os.makedirs(a.out, exist_ok=True)
    base, base_sha = build_rev(a.base, a.out)
    if a.new:
        new, new_sha = build_rev(a.new, a.out)
    else:
        new, new_sha = os.path.join(ROOT, "onnxcc"), "working tree"
        if not os.access(new, os.X_OK):
            die("no ./onnxcc (make all)")
    cs = cases(sets, a.out)
    shutil.rmtree(os.path.join(a.out, "work"), ignore_errors=True)
    jobs = [(c, cfg, base, new, a.out) for c in cs for cfg in CONFIGS]
    print("codegen-diff: %s against %s, %d models x %d configurations" % (new_sha, base_sha, len(cs), len(CONFIGS)),
          flush=True)
    counts = {}
    bad = []
    with concurrent.futures.ThreadPoolExecutor(a.j) as pool:
        for job, verdict, detail in pool.map(compare, jobs):
            key = (job[0][0], job[1][0])
            counts.setdefault(key, {}).setdefault(verdict, 0)
            counts[key][verdict] += 1
            if verdict not in ("same", "refused"):
                bad.append((job, verdict, detail))
    verdicts = ["same", "refused", "differ", "message", "now refused", "now accepted"]
    print("| set | configuration | " + " | ".join(verdicts) + " |")
    print("|---|---" + "|---" * len(verdicts) + "|")
    for (s, cfg), c in sorted(counts.items(), key=lambda kv: (sets.index(kv[0][0]), kv[0][1])):
        print("| %s | %s | %s |" % (s, cfg, " | ".join(str(c.get(v, 0)) for v in verdicts)))
    report = os.path.join(a.out, "report.txt")
    with open(report, "w") as f:
        for job, verdict, detail in bad:
            f.write("== %s/%s %s: %s\n%s\n\n" % (job[0][0], job[0][1], job[1][0], verdict, detail))
    for job, verdict, detail in bad[:a.show]:
        first = detail.splitlines()[0] if detail else ""
        print("  %s/%s %s: %s: %s" % (job[0][0], job[0][1], job[1][0], verdict, first))
    print("codegen-diff: %d of %d compiles not the same (%s)" % (len(bad), len(jobs), report))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
