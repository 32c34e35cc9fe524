#!/usr/bin/python3
"""make_scatter.py: the test model of the CUDA target's scatters and
GatherND (codegen/cuda/cuda_index.c; tests/e2e/cuda.sh step 14).

Writes scatter.onnx (opset 24) and its inputs next to this script:
scatter_input_K.npy (in range, negative indices among them) and
scatter_bad_K.npy (input K with one index out of range: ScatterND's,
ScatterElements', GatherND's, TensorScatter's and GatherElements').

  cache f32[2,8,20,32], pos int64[3,2], new f32[3,20,32]
  y0 = ScatterND(cache, pos, new)          distinct slices of 640: a thread per
                                           element, 1920 of them
  rows f32[8,300], dup int64[6,1], upd f32[6,300]
  y1 = ScatterND(rows, dup, upd, add)      repeated rows: each of 300
                                           threads adds in order
  cube f32[4,5,6], pts int32[50,3], val f32[50]
  y2 = ScatterND(cube, pts, val, max)      single elements, repeated
  y3 = ScatterND(cube, pts, val, mul)
  x f32[4,100,7], ei int64[4,30,7], eu f32[4,30,7]
  y4 = ScatterElements(x, ei, eu, axis 1, add)   repeats along the axis
  y5 = ScatterElements(x, perm, eu2, axis 0)     perm int64[4,100,7]: each
                                           line a permutation (no repeats)
  h f16[4,64], hi int64[4,20], hu f16[4,20]
  y6 = ScatterElements(h, hi, hu, axis 1, min)   f16
  g f32[3,10,20,8], gi int64[3,6,2]
  y7 = GatherND(g, gi, batch_dims 1)       [3,6,8]
  kv f32[2,4,16,8], ku f32[2,4,3,8], wi int64[2]
  y8 = TensorScatter(kv, ku, wi, axis 2)   linear: rows at wi[b] .. wi[b]+2
  y9 = TensorScatter(kv, ku, wc, axis 2, circular)   wc int64[2]: past
                                           16 and negative, wrapped
  gx f32[3,12,5], gei int64[3,4,5]
  y10 = GatherElements(gx, gei, axis 1)    (its check of the indices)
"""
import os

import numpy as np
import onnx
from onnx import helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(0)
    F, I64, I32, F16 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.FLOAT16
    nodes = [
        helper.make_node("ScatterND", ["cache", "pos", "new"], ["y0"]),
        helper.make_node("ScatterND", ["rows", "dup", "upd"], ["y1"], reduction="add"),
        helper.make_node("ScatterND", ["cube", "pts", "val"], ["y2"], reduction="max"),
        helper.make_node("ScatterND", ["cube", "pts", "val"], ["y3"], reduction="mul"),
        helper.make_node("ScatterElements", ["x", "ei", "eu"], ["y4"], axis=1, reduction="add"),
        helper.make_node("ScatterElements", ["x", "perm", "eu2"], ["y5"], axis=0),
        helper.make_node("ScatterElements", ["h", "hi", "hu"], ["y6"], axis=1, reduction="min"),
        helper.make_node("GatherND", ["g", "gi"], ["y7"], batch_dims=1),
        helper.make_node("TensorScatter", ["kv", "ku", "wi"], ["y8"], axis=2),
        helper.make_node("TensorScatter", ["kv", "ku", "wc"], ["y9"], axis=2, mode="circular"),
        helper.make_node("GatherElements", ["gx", "gei"], ["y10"], axis=1),
    ]
    ins = [("cache", F, [2, 8, 20, 32]), ("pos", I64, [3, 2]), ("new", F, [3, 20, 32]),
           ("rows", F, [8, 300]), ("dup", I64, [6, 1]), ("upd", F, [6, 300]),
           ("cube", F, [4, 5, 6]), ("pts", I32, [50, 3]), ("val", F, [50]),
           ("x", F, [4, 100, 7]), ("ei", I64, [4, 30, 7]), ("eu", F, [4, 30, 7]),
           ("perm", I64, [4, 100, 7]), ("eu2", F, [4, 100, 7]),
           ("h", F16, [4, 64]), ("hi", I64, [4, 20]), ("hu", F16, [4, 20]),
           ("g", F, [3, 10, 20, 8]), ("gi", I64, [3, 6, 2]),
           ("kv", F, [2, 4, 16, 8]), ("ku", F, [2, 4, 3, 8]), ("wi", I64, [2]), ("wc", I64, [2]),
           ("gx", F, [3, 12, 5]), ("gei", I64, [3, 4, 5])]
    outs = [("y0", F, [2, 8, 20, 32]), ("y1", F, [8, 300]), ("y2", F, [4, 5, 6]), ("y3", F, [4, 5, 6]),
            ("y4", F, [4, 100, 7]), ("y5", F, [4, 100, 7]), ("y6", F16, [4, 64]), ("y7", F, [3, 6, 8]),
            ("y8", F, [2, 4, 16, 8]), ("y9", F, [2, 4, 16, 8]), ("y10", F, [3, 4, 5])]
    graph = helper.make_graph(nodes, "scatter", [helper.make_tensor_value_info(*a) for a in ins],
                              [helper.make_tensor_value_info(*a) for a in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    model.ir_version = 10  # (TensorScatter is opset 24: newer than some onnx packages' checker)
    onnx.save(model, os.path.join(HERE, "scatter.onnx"))

    f = lambda *s: rng.standard_normal(s).astype(np.float32)
    perm = np.stack([rng.permutation(4) for _ in range(100 * 7)], 1).reshape(4, 100, 7)
    perm = perm - 4 * (rng.random(perm.shape) < 0.3)  # some negative
    good = [f(2, 8, 20, 32), np.array([[1, 3], [0, -1], [-2, 5]], np.int64), f(3, 20, 32),
            f(8, 300), np.array([[2], [5], [-6], [7], [5], [2]], np.int64), f(6, 300),
            f(4, 5, 6), np.stack([rng.integers(-4, 4, 50), rng.integers(0, 5, 50), rng.integers(-6, 6, 50)],
                                 1).astype(np.int32), f(50) * 2,
            f(4, 100, 7), rng.integers(-100, 100, (4, 30, 7)).astype(np.int64), f(4, 30, 7),
            perm.astype(np.int64), f(4, 100, 7),
            f(4, 64).astype(np.float16), rng.integers(-64, 64, (4, 20)).astype(np.int64),
            f(4, 20).astype(np.float16),
            f(3, 10, 20, 8), np.stack([rng.integers(-10, 10, (3, 6)), rng.integers(0, 20, (3, 6))], 2).astype(np.int64),
            f(2, 4, 16, 8), f(2, 4, 3, 8), np.array([13, 2], np.int64), np.array([15, -3], np.int64),
            f(3, 12, 5), rng.integers(-12, 12, (3, 4, 5)).astype(np.int64)]
    for k, a in enumerate(good):
        np.save(os.path.join(HERE, "scatter_input_%d.npy" % k), a)
    # scatter_bad_K.npy: input K with one index out of range at `at` (pos:
    # the axis of 8; hi: -65 wraps to -1; gi: the axis of 10; wi: past
    # 16 - 3; gei: the axis of 12), the others as they are: one bad input a run
    for k, at, v in [(1, (1, 1), 8), (15, (2, 19), -65), (18, (1, 4, 0), 10), (21, (0,), 14), (24, (2, 3, 4), 12)]:
        b = good[k].copy()
        b[at] = v
        np.save(os.path.join(HERE, "scatter_bad_%d.npy" % k), b)


if __name__ == "__main__":
    main()
