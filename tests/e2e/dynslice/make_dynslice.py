#!/usr/bin/python3
"""make_dynslice.py: the test model of the CUDA kernels' run-time dims
(ox_cu_rt's parameters; tests/e2e/cuda.sh step 9), compiled with --dim N=1..4 --dim H=4..12 --dim W=4..12.

Writes dynslice.onnx and dynslice_x.npy, dynslice_f.npy, dynslice_im.npy
(N = 3, H = 7, W = 9) next to this script:

  x i32[N,6], f f32[N,6], im f32[N,4,H,W]
  y = Mul(x, x)                    an integer map, N a kernel parameter,
                                   x read twice
  z = Add(y, x)
  t = Transpose(Sigmoid(f) * 2)    f32[6,N]: the fused chain and the copy
                                   plan with N a kernel parameter
  d = Relu(depthwise Conv 3x3 pads 1 (im))   the window kernel with the
                                   image size its parameters, Relu its epilogue
  p = MaxPool 2x2 stride 2 (d)     the window kernel again
  q = Relu(Conv 3x3 pads 1 (p) -> 5)  the tiles' Conv, likewise
  g = GlobalAveragePool(q)         planes of run-time size
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    i32, f32 = TensorProto.INT32, TensorProto.FLOAT
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["y"]),
        helper.make_node("Add", ["y", "x"], ["z"]),
        helper.make_node("Sigmoid", ["f"], ["s"]),
        helper.make_node("Mul", ["s", "two"], ["s2"]),
        helper.make_node("Transpose", ["s2"], ["t"], perm=[1, 0]),
        helper.make_node("Conv", ["im", "dw", "db"], ["d0"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=4),
        helper.make_node("Relu", ["d0"], ["d"]),
        helper.make_node("MaxPool", ["d"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "cw", "cb"], ["q0"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["q0"], ["q"]),
        helper.make_node("GlobalAveragePool", ["q"], ["g"]),
    ]
    rng = np.random.default_rng(0)
    x = rng.integers(-1000, 1000, (3, 6)).astype(np.int32)
    f = rng.standard_normal((3, 6)).astype(np.float32)
    inits = [numpy_helper.from_array(np.array(2, np.float32), "two")]
    for name, shape in [("dw", (4, 1, 3, 3)), ("db", (4,)), ("cw", (5, 4, 3, 3)), ("cb", (5,))]:
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.5).astype(np.float32), name))
    g = helper.make_graph(nodes, "dynslice",
                          [helper.make_tensor_value_info("x", i32, ["N", 6]),
                           helper.make_tensor_value_info("f", f32, ["N", 6]),
                           helper.make_tensor_value_info("im", f32, ["N", 4, "H", "W"])],
                          [helper.make_tensor_value_info("y", i32, ["N", 6]),
                           helper.make_tensor_value_info("z", i32, ["N", 6]),
                           helper.make_tensor_value_info("t", f32, [6, "N"]),
                           helper.make_tensor_value_info("p", f32, ["N", 4, None, None]),
                           helper.make_tensor_value_info("g", f32, ["N", 5, 1, 1])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "dynslice.onnx"))
    np.save(os.path.join(HERE, "dynslice_x.npy"), x)
    np.save(os.path.join(HERE, "dynslice_f.npy"), f)
    np.save(os.path.join(HERE, "dynslice_im.npy"), rng.standard_normal((3, 4, 7, 9)).astype(np.float32))


if __name__ == "__main__":
    main()
