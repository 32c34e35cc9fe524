#!/usr/bin/python3
"""make_attn.py: the test model of the CUDA target's Attention kernels
(codegen/cuda/cuda_attn.c; tests/e2e/cuda.sh step 7).

Writes attn.onnx (opset 23, no weights) and its inputs attn_input_K.npy
(seed 0) next to this script: three Attention nodes in the shapes that
could break the kernels.

  y1 = Attention(q1 [1,4,19,24], k1 [1,2,45,24], v1 [1,2,45,20], m1 [1,1,1,45])
       tiled: grouped heads (4 over 2), 19 query rows (a partial block of
       16), 45 keys (a partial tile of 32), Dv 20 (not a multiple of 8),
       a float mask per key with -inf entries (one key masked for all rows)
  y2 = Attention(q2 [2,33,64], k2 [2,33,64], v2 [2,33,64]), 3-D, 2 heads,
       causal: tiled, the causal test in the scores
  y3 = Attention(q3 [1,2,20,160], k3 [1,2,40,160], v3 [1,2,40,144]), causal:
       heads wider than 128, the kernel of a block per query row
"""
import os

import numpy as np
import onnx
from onnx import helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))

SHAPES = [("q1", [1, 4, 19, 24]), ("k1", [1, 2, 45, 24]), ("v1", [1, 2, 45, 20]), ("m1", [1, 1, 1, 45]),
          ("q2", [2, 33, 64]), ("k2", [2, 33, 64]), ("v2", [2, 33, 64]),
          ("q3", [1, 2, 20, 160]), ("k3", [1, 2, 40, 160]), ("v3", [1, 2, 40, 144])]


def main():
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Attention", ["q1", "k1", "v1", "m1"], ["y1"]),
        helper.make_node("Attention", ["q2", "k2", "v2"], ["y2"], is_causal=1, q_num_heads=2, kv_num_heads=2),
        helper.make_node("Attention", ["q3", "k3", "v3"], ["y3"], is_causal=1),
    ]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in SHAPES]
    outputs = [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [1, 4, 19, 20]),
               helper.make_tensor_value_info("y2", TensorProto.FLOAT, [2, 33, 64]),
               helper.make_tensor_value_info("y3", TensorProto.FLOAT, [1, 2, 20, 144])]
    graph = helper.make_graph(nodes, "attn", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 8
    onnx.save(model, os.path.join(HERE, "attn.onnx"))
    for k, (n, s) in enumerate(SHAPES):
        x = rng.standard_normal(s).astype(np.float32)
        if n == "m1":
            x = np.where(rng.random(s) < 0.2, -np.inf, x).astype(np.float32)
            x[..., 7] = -np.inf
        np.save(os.path.join(HERE, "attn_input_%d.npy" % k), x)


if __name__ == "__main__":
    main()
