#!/usr/bin/python3
"""make_dynslice.py: the test model of the CUDA kernels' run-time dims
(codegen/cuda_slice.c's slices, ox_cu_rt's parameters; tests/e2e/cuda.sh
step 9), compiled with --dim N=1..4.

Writes dynslice.onnx and dynslice_x.npy, dynslice_f.npy (N = 3) next to
this script:

  x i32[N,6], f f32[N,6]
  y = Mul(x, x)                    an integer map: the kernel of one slice
                                   along N, x read twice
  z = Add(y, x)
  t = Transpose(Sigmoid(f) * 2)    f32[6,N]: the fused chain and the copy
                                   plan with N a kernel parameter
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
    ]
    g = helper.make_graph(nodes, "dynslice",
                          [helper.make_tensor_value_info("x", i32, ["N", 6]),
                           helper.make_tensor_value_info("f", f32, ["N", 6])],
                          [helper.make_tensor_value_info("y", i32, ["N", 6]),
                           helper.make_tensor_value_info("z", i32, ["N", 6]),
                           helper.make_tensor_value_info("t", f32, [6, "N"])],
                          [numpy_helper.from_array(np.array(2, np.float32), "two")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "dynslice.onnx"))
    rng = np.random.default_rng(0)
    np.save(os.path.join(HERE, "dynslice_x.npy"), rng.integers(-1000, 1000, (3, 6)).astype(np.int32))
    np.save(os.path.join(HERE, "dynslice_f.npy"), rng.standard_normal((3, 6)).astype(np.float32))


if __name__ == "__main__":
    main()
