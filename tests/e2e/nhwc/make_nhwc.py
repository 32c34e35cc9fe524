#!/usr/bin/python3
"""make_nhwc.py: the test model of the CUDA target's NHWC layout (opt/layout.c
on the GPU, codegen/cuda/cuda_nhwc.c; tests/e2e/cuda.sh step 6).

Writes nhwc.onnx (f32, random weights, seed 0) and nhwc_input.npy next to
this script. One graph with every op the NHWC kernels take, in the shapes
that broke or could break them:

  x f32[1,3,20,20]                                  its 3 planes read in place (NCHW) by
                                                    its two Convs, c1 and y3
  c1 = Relu(Conv 3x3 stride 2 pads 1 (12))          [1,12,10,10]
  c2 = Clip(Conv depthwise 3x3 pads 1 (c1), 0, 6)
  c3 = Conv 1x1 (c2 -> 20)                          pointwise: a plain GEMM, computing
                                                    c2's depthwise as it loads (opt/dwpw.c)
  c4 = Conv 3x3 dilation 2 pads 2 (c1 -> 20)
  a  = Add(c3, c4)                                  an epilogue of c4 or c3
  t  = Concat(a, c1)                                two distinct inputs, 32 channels
  p  = MaxPool 3x3 stride 2 ceil_mode (t)           [1,32,5,5]
  s  = Sigmoid(GlobalAveragePool(p)); m = Mul(p, s) [N,C,1,1] broadcast
  y0 = Conv 3x3 pads 1 (m -> 7)                     an odd channel count
  y1 = Conv 5x5 pads 2 (m -> 16)                    K = 800 over 25 pixels: split-K
  y2 = GlobalMaxPool(y1)
  y3 = Conv 1x1 (x -> 5)                            pointwise on the padded input
  y4 = Transpose(Reshape(Conv 2x2 stride 2 (m -> 24), [1,24,4]), (0,2,1))
                                                    a ViT's patch embedding: the
                                                    NHWC bytes, no Reorder kernel
  y5 = Transpose(Conv 1x1 (c1 -> 8), (0,2,3,1))     channels last: the same
  y6 = Conv 3x3 pads 1 (Tile(x, 1,2,1,1) -> 4)      6 channels made NHWC for a Conv:
                                                    padded to 8
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(0)
    inits = []

    def w(name, *shape, s=0.3):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * s).astype(np.float32), name))
        return name

    def conv(x, y, wn, bn, k, **a):
        return helper.make_node("Conv", [x, wn] + ([bn] if bn else []), [y], kernel_shape=[k, k], **a)

    nodes = [
        conv("x", "c1a", w("w1", 12, 3, 3, 3), w("b1", 12), 3, strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1a"], ["c1"]),
        conv("c1", "c2a", w("w2", 12, 1, 3, 3), w("b2", 12), 3, pads=[1, 1, 1, 1], group=12),
        helper.make_node("Clip", ["c2a", "lo", "hi"], ["c2"]),
        conv("c2", "c3", w("w3", 20, 12, 1, 1), w("b3", 20), 1),
        conv("c1", "c4", w("w4", 20, 12, 3, 3), None, 3, pads=[2, 2, 2, 2], dilations=[2, 2]),
        helper.make_node("Add", ["c3", "c4"], ["a"]),
        helper.make_node("Concat", ["a", "c1"], ["t"], axis=1),
        helper.make_node("MaxPool", ["t"], ["p"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        helper.make_node("GlobalAveragePool", ["p"], ["g"]),
        helper.make_node("Sigmoid", ["g"], ["s"]),
        helper.make_node("Mul", ["p", "s"], ["m"]),
        conv("m", "y0", w("w5", 7, 32, 3, 3), w("b5", 7), 3, pads=[1, 1, 1, 1]),
        conv("m", "y1", w("w6", 16, 32, 5, 5, s=0.1), w("b6", 16), 5, pads=[2, 2, 2, 2]),
        helper.make_node("GlobalMaxPool", ["y1"], ["y2"]),
        conv("x", "y3", w("w7", 5, 3, 1, 1), w("b7", 5), 1),
        conv("m", "pe", w("w8", 24, 32, 2, 2), w("b8", 24), 2, strides=[2, 2]),
        helper.make_node("Reshape", ["pe", "pes"], ["per"]),
        helper.make_node("Transpose", ["per"], ["y4"], perm=[0, 2, 1]),
        conv("c1", "cl", w("w9", 8, 12, 1, 1), w("b9", 8), 1),
        helper.make_node("Transpose", ["cl"], ["y5"], perm=[0, 2, 3, 1]),
        helper.make_node("Tile", ["x", "reps"], ["x6"]),
    ]
    rng6 = np.random.default_rng(6)  # (the earlier weights and input unchanged)
    inits.append(numpy_helper.from_array((rng6.standard_normal((4, 6, 3, 3)) * 0.3).astype(np.float32), "wA"))
    nodes.append(conv("x6", "y6", "wA", None, 3, pads=[1, 1, 1, 1]))
    inits += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
              numpy_helper.from_array(np.array(6, np.float32), "hi"),
              numpy_helper.from_array(np.array([1, 24, 4], np.int64), "pes"),
              numpy_helper.from_array(np.array([1, 2, 1, 1], np.int64), "reps")]
    f = TensorProto.FLOAT
    g = helper.make_graph(nodes, "nhwc", [helper.make_tensor_value_info("x", f, [1, 3, 20, 20])],
                          [helper.make_tensor_value_info("y0", f, [1, 7, 5, 5]),
                           helper.make_tensor_value_info("y1", f, [1, 16, 5, 5]),
                           helper.make_tensor_value_info("y2", f, [1, 16, 1, 1]),
                           helper.make_tensor_value_info("y3", f, [1, 5, 20, 20]),
                           helper.make_tensor_value_info("y4", f, [1, 4, 24]),
                           helper.make_tensor_value_info("y5", f, [1, 10, 10, 8]),
                           helper.make_tensor_value_info("y6", f, [1, 4, 20, 20])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "nhwc.onnx"))
    np.save(os.path.join(HERE, "nhwc_input.npy"), rng.standard_normal((1, 3, 20, 20)).astype(np.float32))


if __name__ == "__main__":
    main()
