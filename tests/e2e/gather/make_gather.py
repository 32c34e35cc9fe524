#!/usr/bin/python3
"""make_gather.py: the test model of the CUDA target's Gather of indices
read at run time (codegen/cuda/cuda_index.c emit_gather; tests/e2e/cuda.sh
step 8).

Writes gather.onnx (opset 13) and two sets of inputs next to this script:
gather_input_K.npy (in range, negative indices among them) and
gather_bad_K.npy (the same with one index out of range).

  ids int64[2,7], pos int32[7], x f32[3,10,4], idx int64[5]
  y0 = Gather(W [50,12], ids) + Gather(P [16,12], pos)   embeddings, axis 0
  y1 = Gather(x, idx, axis=1)                             outer and inner dims
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(0)
    W = numpy_helper.from_array(rng.standard_normal((50, 12)).astype(np.float32), "W")
    P = numpy_helper.from_array(rng.standard_normal((16, 12)).astype(np.float32), "P")
    nodes = [
        helper.make_node("Gather", ["W", "ids"], ["we"], axis=0),
        helper.make_node("Gather", ["P", "pos"], ["pe"], axis=0),
        helper.make_node("Add", ["we", "pe"], ["y0"]),
        helper.make_node("Gather", ["x", "idx"], ["y1"], axis=1),
    ]
    inputs = [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 7]),
              helper.make_tensor_value_info("pos", TensorProto.INT32, [7]),
              helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 10, 4]),
              helper.make_tensor_value_info("idx", TensorProto.INT64, [5])]
    outputs = [helper.make_tensor_value_info("y0", TensorProto.FLOAT, [2, 7, 12]),
               helper.make_tensor_value_info("y1", TensorProto.FLOAT, [3, 5, 4])]
    graph = helper.make_graph(nodes, "gather", inputs, outputs, [W, P])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, os.path.join(HERE, "gather.onnx"))
    good = [np.array([[0, 49, -1, 7, 7, -50, 3], [12, 5, 0, 33, 48, -2, 1]], np.int64),
            np.array([0, 1, 2, 3, -4, 14, 15], np.int32),
            rng.standard_normal((3, 10, 4)).astype(np.float32),
            np.array([9, -10, 0, 4, -1], np.int64)]
    bad = [a.copy() for a in good]
    bad[3][2] = -11  # one wrap leaves it out of range
    for k, (a, b) in enumerate(zip(good, bad)):
        np.save(os.path.join(HERE, "gather_input_%d.npy" % k), a)
        np.save(os.path.join(HERE, "gather_bad_%d.npy" % k), b)


if __name__ == "__main__":
    main()
