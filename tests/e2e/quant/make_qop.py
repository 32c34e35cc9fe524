#!/usr/bin/python3
"""make_qop.py: an int8 test model in the QOperator form (the quantized ONNX
ops as a model gives them: opt/qdq.c makes its QLinearConv and
QLinearMatMul the QConv / QMatMul of the QDQ form, ConvInteger and
MatMulInteger stay), for the CUDA target's integer tiles
(codegen/cuda/cuda_quant.c: tests/e2e/cuda.sh step 5 compares its outputs
byte for byte with the C target's).

Writes qop_int8.onnx (random weights, seed 0) next to this script:

  x f32[1,8,12,12] -> QuantizeLinear (u8) -> QLinearConv 3x3 pads 1 (16, i8
    weights, per-channel scales, bias) -> QLinearConv 3x3 stride 2 group 4
    (u8 weights, zero point 128) = c [1,16,6,6]
  y0 = Cast f32 (ConvInteger 1x1 (c -> 8, i8 weights, per-channel zero points))
  y1 = DequantizeLinear (QLinearMatMul (Reshape c [4,4,36]) x i8 [36,5],
       per-column scales and zero points)
  y2 = Cast f32 (MatMulInteger (Reshape c [1,576]) x u8 [576,7], per-column
       zero points)
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as T

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(0)
    inits = []

    def c(name, a):
        inits.append(numpy_helper.from_array(np.asarray(a), name))
        return name

    def i8(name, *shape):
        return c(name, rng.integers(-127, 128, shape).astype(np.int8))

    def u8(name, *shape):
        return c(name, rng.integers(0, 256, shape).astype(np.uint8))

    f = np.float32
    nodes = [
        helper.make_node("QuantizeLinear", ["x", c("xs", f(0.05)), c("xz", np.uint8(128))], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", i8("w1", 16, 8, 3, 3),
                                         c("w1s", (rng.random(16) * 0.01 + 0.002).astype(f)), c("w1z", np.zeros(16, np.int8)),
                                         c("s1", f(0.08)), c("z1", np.uint8(120)),
                                         c("b1", rng.integers(-3000, 3000, 16).astype(np.int32))],
                         ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("QLinearConv", ["c1", "s1", "z1", u8("w2", 16, 4, 3, 3), c("w2s", f(0.004)),
                                         c("w2z", np.uint8(128)), c("s2", f(0.1)), c("z2", np.uint8(100))],
                         ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2], group=4),
        helper.make_node("ConvInteger", ["c", i8("w3", 8, 16, 1, 1), "z2", c("w3z", rng.integers(-3, 4, 8).astype(np.int8))],
                         ["ci"]),
        helper.make_node("Cast", ["ci"], ["y0"], to=T.FLOAT),
        helper.make_node("Reshape", ["c", c("sh1", np.array([4, 4, 36], np.int64))], ["r1"]),
        helper.make_node("QLinearMatMul", ["r1", "s2", "z2", i8("wm", 36, 5),
                                           c("wms", (rng.random(5) * 0.01 + 0.002).astype(f)),
                                           c("wmz", rng.integers(-2, 3, 5).astype(np.int8)),
                                           c("s3", f(0.05)), c("z3", np.int8(-3))], ["q3"]),
        helper.make_node("DequantizeLinear", ["q3", "s3", "z3"], ["y1"]),
        helper.make_node("Reshape", ["c", c("sh2", np.array([1, 576], np.int64))], ["r2"]),
        helper.make_node("MatMulInteger", ["r2", u8("wn", 576, 7), "z2", c("wnz", rng.integers(120, 136, 7).astype(np.uint8))],
                         ["mi"]),
        helper.make_node("Cast", ["mi"], ["y2"], to=T.FLOAT),
    ]
    g = helper.make_graph(nodes, "qop", [helper.make_tensor_value_info("x", T.FLOAT, [1, 8, 12, 12])],
                          [helper.make_tensor_value_info("y0", T.FLOAT, [1, 8, 6, 6]),
                           helper.make_tensor_value_info("y1", T.FLOAT, [4, 4, 5]),
                           helper.make_tensor_value_info("y2", T.FLOAT, [1, 7])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "qop_int8.onnx"))


if __name__ == "__main__":
    main()
