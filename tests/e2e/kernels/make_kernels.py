#!/usr/bin/python3
"""make_kernels.py: the test model of the CUDA Reduce, ArgMax/ArgMin,
AveragePool, Split, CumSum, Trilu, GatherElements, TopK, Einsum and
middle-axis (Log)Softmax kernels (codegen/cuda/cuda_rows.c cu_reduce,
cu_arg, emit_softmax; cuda_index.c emit_split, emit_gather_elements,
emit_topk; CumSum, Trilu and Einsum as the maps of their C emitters,
codegen/map.c;
codegen/cuda/cuda_nn.c emit_avgpool;
tests/e2e/cuda.sh step 13),
compiled with --dim N=1..4 --dim H=8..40 --dim W=8..40.

Writes kernels.onnx, kernels_x.npy (N = 2, H = 40, W = 33, one NaN),
kernels_big.npy and kernels_z.npy (N = 2) next to this script:

  x f32[N,64,H,W], big f32[1,8,97,95]
  y0 = ReduceMax(x, axes 1)            the channels: a thread per output,
                                       down 64 with stride H*W (the NaN wins)
  y1 = ReduceMin(x, axes 1,2, keepdims 0)  a middle block with a unit-free
                                       inner W, H a run-time dim
  y2 = ReduceMean(x, axes 2,3)         a trailing block: a warp per row,
                                       its length H*W a parameter
  y3 = ReduceMean(big, axes 2,3)       8 rows of 9215: 4 blocks a row, the
                                       last part shorter; the row's last
                                       block to arrive combines
  y4 = ReduceSum(big)                  one row of 73720: 32 blocks
  y5 = ReduceMean(Transpose(x)[N,H,W,64] as [N, H*W, 64] , axes 1)
                                       mean pooling over a sequence axis
  y6 = ArgMax(x, axis 1)               the channels, the NaN's index wins
  y7 = ArgMin(x, axis 3, select_last_index, keepdims 0)   W a run-time
                                       length, ties (x rounded) to the last
  y8 = AveragePool(big, 3x3, strides 2, pads 1, ceil_mode)   taps inside
                                       the input counted
  y9 = AveragePool(big, 2x4, strides 3x2, pads 1,0,2,1, count_include_pad,
                   ceil_mode)          pads counted, not past the end pad
  y10, y11 = Split(x, axis 1, [24, 40])    a kernel per output, N, H, W
                                       parameters
  y12 = CumSum(big, axis 2, exclusive, reverse)
  y13 = Trilu(big, k = 3, lower)
  y14 = GatherElements(big, [1,8,97,5] indices along axis 3, some negative)
  y15 = LogSoftmax(x, axis 1)          over the channels: a thread per
                                       (image, pixel), H, W parameters
  y16 = CumSum(x, axis 3, reverse)     along W, a run-time length
  y17 = Trilu(x, k = -2, upper)        H and W run-time
  y18 = AveragePool(z, 3x3, strides 2, pads 1)   z f32[N,4,16,16]: a
                                       run-time batch
  y19, y20 = TopK(Round(big), k = 7, axis 2, smallest)   many ties: the
                                       lower index first
  y21 = Einsum("bcij,bckj->bcik", big, big)   a thread per output, the sum
                                       in double as the C target's
  y22 = GatherElements(x, ArgMax(x, axis 3), axis 3)   N, H, W run-time
                                       (the NaN's row picks the NaN)
  y23, y24 = TopK(Round(x), k = 3, axis 3)   along W, a run-time length
                                       at least 8: N, H, W parameters, ties
  a = big[0, 0, :20] as [20, 95]
  y25 = Gemm(a, a, ReduceMax(a, axis 1), transB, alpha 0.5, beta 2)   B
                                       and a C per row computed, not weights
  y26 = Gemm(a, a, y25, transB, beta -1)   a C of the output's shape
  y27 = ReduceL2(x, axes 1)            a thread per output (the NaN stays)
  y28 = ReduceSumSquare(big, axes 3)   a warp per row
  y29 = ReduceL2(big)                  one row of 73720: blocks combined,
                                       then the square root
  y30 = ReduceL1(z, axes 2,3)          a warp per row of a run-time count
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    f32 = TensorProto.FLOAT
    nodes = [
        helper.make_node("ReduceMax", ["x"], ["y0"], axes=[1]),
        helper.make_node("ReduceMin", ["x"], ["y1"], axes=[1, 2], keepdims=0),
        helper.make_node("ReduceMean", ["x"], ["y2"], axes=[2, 3]),
        helper.make_node("ReduceMean", ["big"], ["y3"], axes=[2, 3]),
        helper.make_node("ReduceSum", ["big", "all"], ["y4"], keepdims=0),
        helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["xt", "seq"], ["xs"]),
        helper.make_node("ReduceMean", ["xs"], ["y5"], axes=[1], keepdims=0),
        helper.make_node("ArgMax", ["x"], ["y6"], axis=1),
        helper.make_node("Round", ["x"], ["xr"]),
        helper.make_node("ArgMin", ["xr"], ["y7"], axis=3, select_last_index=1, keepdims=0),
        helper.make_node("AveragePool", ["big"], ["y8"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                         ceil_mode=1),
        helper.make_node("AveragePool", ["big"], ["y9"], kernel_shape=[2, 4], strides=[3, 2], pads=[1, 0, 2, 1],
                         count_include_pad=1, ceil_mode=1),
        helper.make_node("Split", ["x", "parts"], ["y10", "y11"], axis=1),
        helper.make_node("CumSum", ["big", "two"], ["y12"], exclusive=1, reverse=1),
        helper.make_node("Trilu", ["big", "three"], ["y13"], upper=0),
        helper.make_node("GatherElements", ["big", "idx"], ["y14"], axis=3),
        helper.make_node("LogSoftmax", ["x"], ["y15"], axis=1),
        helper.make_node("CumSum", ["x", "three"], ["y16"], reverse=1),
        helper.make_node("Trilu", ["x", "minus2"], ["y17"], upper=1),
        helper.make_node("AveragePool", ["z"], ["y18"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Round", ["big"], ["bigr"]),
        helper.make_node("TopK", ["bigr", "seven"], ["y19", "y20"], axis=2, largest=0),
        helper.make_node("Einsum", ["big", "big"], ["y21"], equation="bcij,bckj->bcik"),
        helper.make_node("ArgMax", ["x"], ["am"], axis=3),
        helper.make_node("GatherElements", ["x", "am"], ["y22"], axis=3),
        helper.make_node("TopK", ["xr", "k3"], ["y23", "y24"], axis=3),
        helper.make_node("Slice", ["big", "s0", "s1"], ["bs"]),
        helper.make_node("Reshape", ["bs", "s2"], ["ga"]),
        helper.make_node("ReduceMax", ["ga"], ["gc"], axes=[1]),
        helper.make_node("Gemm", ["ga", "ga", "gc"], ["y25"], transB=1, alpha=0.5, beta=2.0),
        helper.make_node("Gemm", ["ga", "ga", "y25"], ["y26"], transB=1, beta=-1.0),
        helper.make_node("ReduceL2", ["x"], ["y27"], axes=[1]),
        helper.make_node("ReduceSumSquare", ["big"], ["y28"], axes=[3], keepdims=0),
        helper.make_node("ReduceL2", ["big"], ["y29"], keepdims=0),
        helper.make_node("ReduceL1", ["z"], ["y30"], axes=[2, 3]),
    ]
    rng = np.random.default_rng(13)
    inits = [numpy_helper.from_array(np.array([0, 1, 2, 3], np.int64), "all"),
             numpy_helper.from_array(np.array([0, -1, 64], np.int64), "seq"),
             numpy_helper.from_array(np.array([24, 40], np.int64), "parts"),
             numpy_helper.from_array(np.array(2, np.int64), "two"),
             numpy_helper.from_array(np.array(3, np.int64), "three"),
             numpy_helper.from_array(np.array(-2, np.int64), "minus2"),
             numpy_helper.from_array(np.array([7], np.int64), "seven"),
             numpy_helper.from_array(np.array([3], np.int64), "k3"),
             numpy_helper.from_array(np.array([0, 0, 0, 0], np.int64), "s0"),
             numpy_helper.from_array(np.array([1, 1, 20, 95], np.int64), "s1"),
             numpy_helper.from_array(np.array([20, 95], np.int64), "s2"),
             numpy_helper.from_array(rng.integers(-95, 95, (1, 8, 97, 5)).astype(np.int64), "idx")]
    graph = helper.make_graph(nodes, "kernels",
                              [helper.make_tensor_value_info("x", f32, ["N", 64, "H", "W"]),
                               helper.make_tensor_value_info("big", f32, [1, 8, 97, 95]),
                               helper.make_tensor_value_info("z", f32, ["N", 4, 16, 16])],
                              [helper.make_tensor_value_info(y, f32, s) for y, s in
                               [("y0", ["N", 1, "H", "W"]), ("y1", ["N", "W"]), ("y2", ["N", 64, 1, 1]),
                                ("y3", [1, 8, 1, 1]), ("y4", []), ("y5", ["N", 64])]] +
                              [helper.make_tensor_value_info("y6", TensorProto.INT64, ["N", 1, "H", "W"]),
                               helper.make_tensor_value_info("y7", TensorProto.INT64, ["N", 64, "H"]),
                               helper.make_tensor_value_info("y8", f32, [1, 8, 49, 48]),
                               helper.make_tensor_value_info("y9", f32, [1, 8, 33, 47]),
                               helper.make_tensor_value_info("y10", f32, ["N", 24, "H", "W"]),
                               helper.make_tensor_value_info("y11", f32, ["N", 40, "H", "W"]),
                               helper.make_tensor_value_info("y12", f32, [1, 8, 97, 95]),
                               helper.make_tensor_value_info("y13", f32, [1, 8, 97, 95]),
                               helper.make_tensor_value_info("y14", f32, [1, 8, 97, 5]),
                               helper.make_tensor_value_info("y15", f32, ["N", 64, "H", "W"]),
                               helper.make_tensor_value_info("y16", f32, ["N", 64, "H", "W"]),
                               helper.make_tensor_value_info("y17", f32, ["N", 64, "H", "W"]),
                               helper.make_tensor_value_info("y18", f32, ["N", 4, 8, 8]),
                               helper.make_tensor_value_info("y19", f32, [1, 8, 7, 95]),
                               helper.make_tensor_value_info("y20", TensorProto.INT64, [1, 8, 7, 95]),
                               helper.make_tensor_value_info("y21", f32, [1, 8, 97, 97]),
                               helper.make_tensor_value_info("y22", f32, ["N", 64, "H", 1]),
                               helper.make_tensor_value_info("y23", f32, ["N", 64, "H", 3]),
                               helper.make_tensor_value_info("y24", TensorProto.INT64, ["N", 64, "H", 3]),
                               helper.make_tensor_value_info("y25", f32, [20, 20]),
                               helper.make_tensor_value_info("y26", f32, [20, 20]),
                               helper.make_tensor_value_info("y27", f32, ["N", 1, "H", "W"]),
                               helper.make_tensor_value_info("y28", f32, [1, 8, 97]),
                               helper.make_tensor_value_info("y29", f32, []),
                               helper.make_tensor_value_info("y30", f32, ["N", 4, 1, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, "kernels.onnx"))
    x = rng.standard_normal((2, 64, 40, 33)).astype(np.float32)
    x[1, 17, 5, 6] = np.nan
    np.save(os.path.join(HERE, "kernels_x.npy"), x)
    np.save(os.path.join(HERE, "kernels_big.npy"), rng.standard_normal((1, 8, 97, 95)).astype(np.float32))
    np.save(os.path.join(HERE, "kernels_z.npy"), rng.standard_normal((2, 4, 16, 16)).astype(np.float32))


if __name__ == "__main__":
    main()
