#!/usr/bin/python3
"""make_mix.py: the second int8 test model (tests/e2e/int8.sh), fp32 and QDQ.

Writes mix.onnx (fp32, random weights, seed 0), mix_int8.onnx and
mix_uint8.onnx (through examples/digits/quantize.py, int8 or uint8
activations, calibrated on 64 random inputs) next to this script. The graph exercises what the digits model
does not: MatMul, a residual Add, AveragePool, GlobalAveragePool, a Relu
that is not removed (after a Flatten), Gemm without and with transB:

  x f32[1,4,8,8] -> Conv 3x3 (8) -> Relu -> AveragePool 2x2/2 -> p [1,8,4,4]
  p -> Reshape [0,8,16] -> r -> MatMul W[16,16] -> Add r -> Relu -> Reshape [0,128]
    -> Gemm (transB, 10) -> g1
  p -> GlobalAveragePool -> Flatten -> Relu -> Gemm (W[8,10]) -> g2
  y = Add(g1, g2) f32[1,10]
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import helper, numpy_helper, TensorProto
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def main():
    rng = np.random.default_rng(0)

    def w(name, *shape, s=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * s).astype(np.float32), name)

    inits = [
        w("cw", 8, 4, 3, 3), w("cb", 8, s=0.1), w("mw", 16, 16, s=0.25),
        w("g1w", 10, 128, s=0.1), w("g1b", 10, s=0.1), w("g2w", 8, 10), w("g2b", 10, s=0.1),
        numpy_helper.from_array(np.array([0, 8, 16], np.int64), "s1"),
        numpy_helper.from_array(np.array([0, 128], np.int64), "s2"),
    ]
    N = helper.make_node
    nodes = [
        N("Conv", ["x", "cw", "cb"], ["c"], "conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        N("Relu", ["c"], ["cr"], "relu0"),
        N("AveragePool", ["cr"], ["p"], "avgpool", kernel_shape=[2, 2], strides=[2, 2]),
        N("Reshape", ["p", "s1"], ["r"], "reshape1"),
        N("MatMul", ["r", "mw"], ["m"], "matmul"),
        N("Add", ["m", "r"], ["a"], "residual"),
        N("Relu", ["a"], ["ar"], "relu1"),
        N("Reshape", ["ar", "s2"], ["f1"], "reshape2"),
        N("Gemm", ["f1", "g1w", "g1b"], ["g1"], "gemm1", transB=1),
        N("GlobalAveragePool", ["p"], ["gp"], "gap"),
        N("Flatten", ["gp"], ["f2"], "flatten"),
        N("Relu", ["f2"], ["f2r"], "relu2"),
        N("Gemm", ["f2r", "g2w", "g2b"], ["g2"], "gemm2"),
        N("Add", ["g1", "g2"], ["y"], "sum"),
    ]
    g = helper.make_graph(nodes, "mix", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_mix.py")
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "mix.onnx"))
    calib = rng.standard_normal((64, 4, 8, 8)).astype(np.float32)
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "calib.npy"), calib)
        for out, flags in (("mix_int8.onnx", []), ("mix_uint8.onnx", ["--uint8"])):
            subprocess.run([sys.executable, os.path.join(ROOT, "examples", "digits", "quantize.py"),
                            os.path.join(HERE, "mix.onnx"), os.path.join(HERE, out),
                            os.path.join(d, "calib.npy")] + flags, check=True)


if __name__ == "__main__":
    main()
