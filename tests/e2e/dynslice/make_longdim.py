#!/usr/bin/python3
"""make_longdim.py: a model whose run-time dims make a long C expression
(tests/e2e/cuda.sh step 9), compiled with --dim A0=1..4 ... --dim A5=1..4
--dim S=1..8.

Writes longdim.onnx and longdim_0.npy .. longdim_5.npy (A = 1, 2, 3, 2, 1,
2; S = 5) next to this script:

  x0..x5 f32[Ak,S,8]
  c = Concat(x0..x5, axis 0)       f32[A0+...+A5, S, 8]
  y = MatMul(c, w)                 w f32[8,5]: the GEMM's rows M =
                                   S * (A0 + ... + A5), an expression of
                                   about 90 characters in the launcher

The CUDA GEMM launcher once copied M into a 64-byte buffer: the expression
came out cut ("... (ox_d[0], K = 8;") and the .cu did not compile.
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    K, N, A, S = 8, 5, [1, 2, 3, 2, 1, 2], 5
    xs = [helper.make_tensor_value_info("x%d" % i, TensorProto.FLOAT, ["A%d" % i, "S", K]) for i in range(6)]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array((rng.standard_normal((K, N)) / 3).astype(np.float32), "w")
    g = helper.make_graph([helper.make_node("Concat", [x.name for x in xs], ["c"], axis=0),
                           helper.make_node("MatMul", ["c", "w"], ["y"])], "longdim", xs, [y], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, os.path.join(HERE, "longdim.onnx"))
    for i, a in enumerate(A):
        np.save(os.path.join(HERE, "longdim_%d.npy" % i), rng.standard_normal((a, S, K)).astype(np.float32))


if __name__ == "__main__":
    main()
