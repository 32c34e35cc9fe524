#!/usr/bin/python3
"""house_check.py: the measures of docs/architecture.md's house rules that
a program can count.

    make house-check            (after make all)
    tools/house_check.py [--max-args 8] [--max-circle 3] [-v]

1. Format calls with more than --max-args arguments after the format
   string (ox_buf_printf, ox_cg_printf, ox_cg_line, ox_cg_snprintf,
   ox_cg_text, snprintf, fprintf, printf, sprintf) in codegen/:
   generated code is printed by small helpers with named pieces, not
   long positional formats.
2. Import circles: the files of onnxcc (each object file under build/obj)
   as a graph, an edge from a file to each file that defines a function
   or object its code uses (the relocations of its .text: a call or an
   address taken in code; a table's entries, such as the op table's
   functions, are not uses); each strongly connected component of more than
   --max-circle files is a circle (STYLE.md: one pass per file, shared
   analyses in their own file).

It prints every finding and a summary line per measure; exit status 1
when either is over its limit, 0 when both are within.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FMT_POS = {"ox_cg_snprintf": 2, "ox_cg_text": 1, "snprintf": 2, "fprintf": 1, "ox_buf_printf": 1, "ox_cg_printf": 1, "ox_cg_line": 2, "printf": 0,
           "sprintf": 1}
FMT_CALL = re.compile(r"\b(" + "|".join(FMT_POS) + r")\s*\(")


def format_calls(path):
    """(function, line, arguments after the format) of each format call in path"""
    src = open(path).read()
    for m in FMT_CALL.finditer(src):
        if src[max(0, m.start() - 8):m.start()].rstrip().endswith(("define", "int", "void")):
            continue  # a declaration or a macro's own name
        i, depth, args, quote = m.end(), 1, 1, None
        while i < len(src) and depth:
            c = src[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif c == "," and depth == 1:
                args += 1
            i += 1
        yield m.group(1), src.count("\n", 0, m.start()) + 1, args - FMT_POS[m.group(1)] - 1


def symbols(obj):
    """(defined, used) global symbol names of an object file; used: those
    its code (.text) refers to, not a table's entries (.data, .rodata):
    an op table lists its ops' functions without importing them"""
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined = set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBRCGSV":
            defined.add(p[2])
    used, in_text = set(), False
    out = subprocess.run(["objdump", "-r", obj], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("RELOCATION RECORDS FOR ["):
            in_text = line[len("RELOCATION RECORDS FOR ["):].startswith(".text")
        elif in_text:
            p = line.split()
            if len(p) == 3 and p[1].startswith("R_"):
                used.add(re.split(r"[-+]0x", p[2])[0])
    return defined, used


def components(nodes, edges):
    """the strongly connected components of a graph (Tarjan, iterative)"""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-args", type=int, default=8)
    ap.add_argument("--max-circle", type=int, default=3)
    ap.add_argument("-v", action="store_true", help="list every finding (default: the summary and the worst)")
    a = ap.parse_args()
    bad = 0

    long_calls = []
    for path in sorted(glob.glob(os.path.join(ROOT, "codegen", "**", "*.c"), recursive=True)):
        for fn, line, n in format_calls(path):
            if n > a.max_args:
                long_calls.append((n, os.path.relpath(path, ROOT), line, fn))
    long_calls.sort(key=lambda c: (-c[0], c[1], c[2]))
    for n, path, line, fn in long_calls if a.v else long_calls[:10]:
        print("%s:%d: %s with %d arguments after the format" % (path, line, fn, n))
    print("house: %d format calls in codegen/ with more than %d arguments" % (len(long_calls), a.max_args))
    bad |= len(long_calls) > 0

    objs = sorted(glob.glob(os.path.join(ROOT, "build", "obj", "**", "*.o"), recursive=True))
    objs = [o for o in objs if "/gen/" not in o]  # (protobuf-c's generated code)
    if not objs:
        print("house: no object files in build/obj (make all first)")
        return 2
    name = {o: os.path.relpath(o, os.path.join(ROOT, "build", "obj"))[:-2] + ".c" for o in objs}
    syms = {o: symbols(o) for o in objs}
    owner = {}
    for o, (d, _) in syms.items():
        for s in d:
            owner[s] = o
    edges = {name[o]: {name[owner[s]] for s in u if s in owner and owner[s] != o} for o, (_, u) in syms.items()}
    circles = [c for c in components(sorted(edges), edges) if len(c) > a.max_circle]
    circles.sort(key=lambda c: -len(c))
    for c in circles:
        print("circle of %d files: %s" % (len(c), " ".join(c)))
    print("house: %d import circles of more than %d files (%s)" % (
        len(circles), a.max_circle, ", ".join(str(len(c)) for c in circles) or "none"))
    bad |= len(circles) > 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
