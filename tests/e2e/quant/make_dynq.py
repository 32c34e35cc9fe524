#!/usr/bin/python3
"""make_dynq.py: a small fp32 encoder block with run-time dims, for
tests/e2e/int8.sh's dynamic quantization (tools/quantize_dynamic.py).

    make_dynq.py OUT.onnx

x f32[batch, seq, 32] -> MatMul [32, 64] -> Add b -> Relu -> MatMul [64, 48]
-> MatMul [48, 32] -> Add x -> y; batch and seq symbolic; weights random
(seed 0). Opset 13.
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    r = np.random.default_rng(0)

    def w(name, *shape):
        return numpy_helper.from_array((r.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32), name)

    inits = [w("w1", 32, 64), numpy_helper.from_array((r.standard_normal(64) * 0.1).astype(np.float32), "b1"),
             w("w2", 64, 48), w("w3", 48, 32)]
    N = helper.make_node
    nodes = [N("MatMul", ["x", "w1"], ["h"]), N("Add", ["h", "b1"], ["hb"]), N("Relu", ["hb"], ["r"]),
             N("MatMul", ["r", "w2"], ["m"]), N("MatMul", ["m", "w3"], ["o"]), N("Add", ["o", "x"], ["y"])]
    g = helper.make_graph(nodes, "dynq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 32])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_dynq.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, sys.argv[1])


if __name__ == "__main__":
    main()
