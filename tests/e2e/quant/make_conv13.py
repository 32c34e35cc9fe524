#!/usr/bin/python3
"""make_conv13.py: an int8 test model of 1-D and 3-D convolutions, fp32 and
QDQ (the CUDA target's integer tiles take 1 to 3 spatial axes: cuda.sh).

Writes conv13.onnx (fp32, random weights, seed 0) and conv13_int8.onnx
(through examples/digits/quantize.py, calibrated on 32 random inputs) next
to this script:

  x f32[1,3,4,6,6] -> Conv 3x3x3 (6, pads 1, stride 1x2x1) -> Relu -> [1,6,4,3,6]
    -> Reshape [0,6,72] -> Conv 1-D k3 (8, stride 2, pads 1, dilation 2)
    -> Relu -> Conv 1-D k1 (4, group 2) -> y f32[1,4,35]
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
        w("w3", 6, 3, 3, 3, 3), w("b3", 6, s=0.1), w("w1", 8, 6, 3), w("b1", 8, s=0.1), w("wg", 4, 4, 1),
        numpy_helper.from_array(np.array([0, 6, 72], np.int64), "s"),
    ]
    N = helper.make_node
    nodes = [
        N("Conv", ["x", "w3", "b3"], ["c3"], "conv3d", kernel_shape=[3, 3, 3], pads=[1, 1, 1, 1, 1, 1],
          strides=[1, 2, 1]),
        N("Relu", ["c3"], ["r3"], "relu3d"),
        N("Reshape", ["r3", "s"], ["f"], "reshape"),
        N("Conv", ["f", "w1", "b1"], ["c1"], "conv1d", kernel_shape=[3], pads=[1, 1], strides=[2], dilations=[2]),
        N("Relu", ["c1"], ["r1"], "relu1d"),
        N("Conv", ["r1", "wg"], ["y"], "conv1d_group", kernel_shape=[1], group=2),
    ]
    g = helper.make_graph(nodes, "conv13", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 35])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_conv13.py")
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "conv13.onnx"))
    calib = rng.standard_normal((32, 3, 4, 6, 6)).astype(np.float32)
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "calib.npy"), calib)
        subprocess.run([sys.executable, os.path.join(ROOT, "examples", "digits", "quantize.py"),
                        os.path.join(HERE, "conv13.onnx"), os.path.join(HERE, "conv13_int8.onnx"),
                        os.path.join(d, "calib.npy")], check=True)


if __name__ == "__main__":
    main()
