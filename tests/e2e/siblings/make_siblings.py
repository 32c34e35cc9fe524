#!/usr/bin/python3
"""make_siblings.py: the test model of sibling MatMuls made one
onnxcc::MatMulSplit on the CUDA target (opt/siblings.c; codegen/
cuda_tile.c emit_gemm; tests/e2e/cuda.sh step 16), compiled with
--dim B=1..4 (A's rows a run-time dim).

Writes siblings.onnx, siblings_x.npy (B = 3) and siblings_w.npy next to
this script:

  x f32[B,24,64], w f32[64,16] (a graph input, not a weight)
  q, k, v = x Wq + bq, x Wk + bk, x Wv + bv   64, 40 and 24 columns: one
                        MatMulSplit (a tile of 32 columns straddles k and v)
  gate, up = Relu(x Wg + bg), Relu(x Wu + bu)   48 columns each: another
  r = x Wr + br + x     a residual (an operand of the output's shape): alone
  s1, s2 = x Ws1 - 0.5, x Ws2 - 0.25   scalars that differ: spread over
                        each sibling's columns, one MatMulSplit
  t1, t2 = 1.5 - x Wt1, 1.5 - x Wt2   two initializers of one value: one
                        scalar operand, one MatMulSplit
  u1, u2 = (x Wu1) * 3, (x Wu2) * -2   scales folded into the weights
                        (opt/affine.c): no epilogue, one MatMulSplit
  p = x w               B not a constant: a MatMul of its own
Five MatMulSplit kernels in all, each node named after its output.
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    f32 = TensorProto.FLOAT
    rng = np.random.default_rng(16)
    inits = []

    def w(name, *shape):
        inits.append(numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 8, name))
        return name

    def c(name, value):
        inits.append(numpy_helper.from_array(np.array(value, np.float32), name))
        return name

    nodes = []

    def node(op, ins, outs_, **kw):
        return helper.make_node(op, ins, outs_, name=outs_[0], **kw)

    def mm(y, wname, cols):
        nodes.append(node("MatMul", ["x", w(wname, 64, cols)], [y]))
        return y

    outs = []
    for name, cols in (("q", 64), ("k", 40), ("v", 24)):
        nodes.append(node("Add", [mm(name + "_mm", "W" + name, cols), w("b" + name, cols)], [name]))
        outs.append((name, cols))
    for name in ("gate", "up"):
        nodes.append(node("Add", [mm(name + "_mm", "W" + name, 48), w("b" + name, 48)], [name + "_b"]))
        nodes.append(node("Relu", [name + "_b"], [name]))
        outs.append((name, 48))
    nodes.append(node("Add", [mm("r_mm", "Wr", 64), w("br", 64)], ["r_b"]))
    nodes.append(node("Add", ["r_b", "x"], ["r"]))
    outs.append(("r", 64))
    for name, s in (("s1", 0.5), ("s2", 0.25)):
        nodes.append(node("Sub", [mm(name + "_mm", "W" + name, 16), c("c" + name, s)], [name]))
        outs.append((name, 16))
    for name in ("t1", "t2"):
        nodes.append(node("Sub", [c("c" + name, 1.5), mm(name + "_mm", "W" + name, 16)], [name]))
        outs.append((name, 16))
    for name, s in (("u1", 3.0), ("u2", -2.0)):
        nodes.append(node("Mul", [mm(name + "_mm", "W" + name, 8), c("c" + name, s)], [name]))
        outs.append((name, 8))
    nodes.append(node("MatMul", ["x", "w"], ["p"]))
    outs.append(("p", 16))
    graph = helper.make_graph(nodes, "siblings",
                              [helper.make_tensor_value_info("x", f32, ["B", 24, 64]),
                               helper.make_tensor_value_info("w", f32, [64, 16])],
                              [helper.make_tensor_value_info(y, f32, ["B", 24, n]) for y, n in outs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, "siblings.onnx"))
    np.save(os.path.join(HERE, "siblings_x.npy"), rng.standard_normal((3, 24, 64)).astype(np.float32))
    np.save(os.path.join(HERE, "siblings_w.npy"), rng.standard_normal((64, 16)).astype(np.float32))


if __name__ == "__main__":
    main()
