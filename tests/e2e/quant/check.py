#!/usr/bin/python3
"""check.py: tests/e2e/int8.sh's helpers.

  check.py inputs MODEL N DIR   N inputs for MODEL's one input: digit images
                                (train.py's renderer, stream 7) for a
                                [1,1,16,16] input, else normal random (seed 1)
  check.py ir DUMP              the integer pass fired: in --dump-ir=plan
                                text, no node computes in f32 but the
                                QuantizeLinear of a graph input and the
                                DequantizeLinear of a graph output
  check.py nofloat NET.c         the integer kernels in the generated C
                                (node functions of onnxcc::Q* ops, the
                                templates they use) name no float or
                                double type
  check.py cmp MODEL OUT REF    |OUT - REF| <= the output's quantization step
                                (the scale of the DequantizeLinear writing
                                MODEL's output), per element; prints the
                                largest difference in steps
"""
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs(model, n, d):
    import onnx
    m = onnx.load(model)
    shape = [x.dim_value for x in m.graph.input[0].type.tensor_type.shape.dim]
    if shape == [1, 1, 16, 16]:
        sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples", "digits"))
        import train
        xs = train.render(7, 0, n)[1][:, None]
    else:
        xs = np.random.default_rng(1).standard_normal([n] + shape[1:]).astype(np.float32)
    for i in range(n):
        np.save(os.path.join(d, "in%d.npy" % i), xs[i:i + 1].astype(np.float32))


NODE = re.compile(r"^(%\d+):(\w+)\[[^\]]*\](?:@\S+)? = ([\w:]+)\(([^)]*)\)")
VAL = re.compile(r"^(?:input|const) (%\d+):(\w+)")


def ir(path):
    dt, ins, outs, nodes = {}, set(), set(), []
    for line in open(path):
        m = VAL.match(line)
        if m:
            dt[m.group(1)] = m.group(2)
            if line.startswith("input"):
                ins.add(m.group(1))
            continue
        m = NODE.match(line)
        if m:
            dt[m.group(1)] = m.group(2)
            args = [a.strip() for a in m.group(4).split(",") if a.strip().startswith("%")]
            nodes.append((m.group(3), m.group(1), args))
            continue
        if line.startswith("output"):
            outs.add(line.split()[1])
    bad = []
    for op, y, args in nodes:
        if op == "QuantizeLinear" and args[0] in ins:
            continue
        if op == "DequantizeLinear" and y in outs:
            continue
        if dt[y] == "f32" or any(dt.get(a) == "f32" for a in args):
            bad.append("%s = %s(%s)" % (y, op, ", ".join(args)))
    for b in bad:
        print("int8: float arithmetic left: " + b)
    q = sum(op.startswith("onnxcc::Q") for op, _, _ in nodes)
    print("int8: %d nodes, %d integer kernels, %d float" % (len(nodes), q, len(bad)))
    return 1 if bad or not q else 0


def nofloat(path):
    text, keep, n, bad, incom = open(path).read().split("\n"), False, 0, [], False
    for line in text:
        code = line
        if incom:
            code, incom = (code.split("*/", 1)[1], False) if "*/" in code else ("", True)
        code = re.sub(r"/\*.*?\*/", "", code)
        if "/*" in code:
            code, incom = code.split("/*", 1)[0], True
        if re.match(r"^/\* templates/(qint|quant_conv_sums|quant_matmul)\.c", line) or \
                re.match(r"^static void node\d+_Q(Conv|MatMul|Add|Rescale|Pool)\(", line):
            keep, n = True, n + 1
        elif line.startswith("/* templates/") or re.match(r"^static void node\d+_", line):
            keep = False
        if keep and re.search(r"\b(float|double)\b", code):
            bad.append(line.strip())
    for b in bad:
        print("int8: float in an integer kernel: " + b)
    return 1 if bad or not n else 0


def cmp(model, out, ref):
    import onnx
    from onnx import numpy_helper
    m = onnx.load(model)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    y = m.graph.output[0].name
    dq = [n for n in m.graph.node if y in n.output][0]
    step = float(inits[dq.input[1]])
    a, b = np.load(out), np.load(ref)
    d = float(np.abs(a.astype(np.float64) - b).max()) / step
    print("%.3g" % d)
    return 0 if d <= 1 + 1e-4 else 1


if __name__ == "__main__":
    c = sys.argv[1]
    if c == "inputs":
        inputs(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        sys.exit(0)
    if c == "nofloat":
        sys.exit(nofloat(sys.argv[2]))
    sys.exit(ir(sys.argv[2]) if c == "ir" else cmp(*sys.argv[2:5]))
