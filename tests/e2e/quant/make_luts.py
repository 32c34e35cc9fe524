#!/usr/bin/python3
"""make_luts.py: QDQ unary ops that opt/qdq.c turns into a 256-byte table
(onnxcc::QLut), for tests/e2e/int8.sh.

    make_luts.py OUTDIR

Writes OUTDIR/lut_NAME.onnx: x f32[1,8,10,10] -> Q -> DQ -> OP -> Q -> DQ
-> y, opset 13, for Sigmoid, Tanh, HardSwish (opset 14), LeakyRelu (alpha
0.1), Elu and Exp; uint8 activations, and int8 for two of them; scales
that cover the op's range on normal inputs.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

CASES = {  # name: op, attributes, x scale, y scale, y zero point (u8; s8 less 128), int8
    "sigmoid": ("Sigmoid", {}, 0.03, 1 / 255, 0, False),
    "tanh_s8": ("Tanh", {}, 0.025, 2 / 255, 128, True),
    "hardswish": ("HardSwish", {}, 0.04, 0.025, 20, False),
    "leakyrelu_s8": ("LeakyRelu", {"alpha": 0.1}, 0.03, 0.02, 30, True),
    "elu": ("Elu", {}, 0.03, 0.02, 60, False),
    "exp": ("Exp", {}, 0.01, 0.02, 0, False),
}


def model(name, op, attrs, xs, ys, yz, s8):
    dt, npdt = (TensorProto.INT8, np.int8) if s8 else (TensorProto.UINT8, np.uint8)
    off = 128 if s8 else 0
    inits = [numpy_helper.from_array(np.float32(xs), "xs"), numpy_helper.from_array(np.array(128 - off, npdt), "xz"),
             numpy_helper.from_array(np.float32(ys), "ys"), numpy_helper.from_array(np.array(yz - off, npdt), "yz")]
    N = helper.make_node
    nodes = [N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]), N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             N(op, ["xd"], ["f"], **attrs),
             N("QuantizeLinear", ["f", "ys", "yz"], ["yq"]), N("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 10, 10])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 10, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14 if op == "HardSwish" else 13)],
                          producer_name="make_luts.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, c in CASES.items():
        onnx.save(model(name, *c), os.path.join(sys.argv[1], "lut_" + name + ".onnx"))


if __name__ == "__main__":
    main()
