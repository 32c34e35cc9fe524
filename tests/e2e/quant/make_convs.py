#!/usr/bin/python3
"""make_convs.py: QDQ convolutions of every shape the packed integer kernel
(templates/qconv.c) takes, for tests/e2e/int8.sh.

    make_convs.py OUTDIR

Writes OUTDIR/NAME.onnx, one model per case below: x f32 -> Q -> DQ ->
Conv(DQ(w), DQ(int32 bias)) [-> Relu] -> Q -> DQ -> y, opset 13, random
weights (seed 0), scales fixed so that some outputs clamp. The cases
cover input channels not a multiple of 4 and output channels not a
multiple of 8, strides, dilations, asymmetric pads, groups, 1-D, int8 and
uint8 activations, uint8 weights with nonzero zero points (the kernel's
input sums), per-tensor weights, no bias, a fused Relu, several tiles and
several chunks of output channels; and depthwise ones (ox_qg_dw: wide rows,
small images, 5x5, dilated), one with a channel multiplier of 2; and four
in the QOperator form (QLinearConv).
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

# name: C, spatial, M, kernel, strides, dilations, pads, group, options
CASES = {
    "c3x3_odd": (5, [20, 20], 13, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 1, "u8"),
    "c3x3_s2_s8": (16, [15, 17], 24, [3, 3], [2, 2], [1, 1], [1, 1, 1, 1], 1, "s8"),
    "c5x5_dil2": (8, [12, 12], 8, [5, 5], [1, 1], [2, 2], [4, 4, 4, 4], 1, "u8"),
    "c1x1_s2": (32, [14, 14], 16, [1, 1], [2, 2], [1, 1], [0, 0, 0, 0], 1, "u8 relu"),
    "c7x7_stem": (3, [32, 32], 16, [7, 7], [2, 2], [1, 1], [3, 3, 3, 3], 1, "u8 relu"),
    "c3x3_g4": (16, [10, 10], 32, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 4, "s8"),
    "c3x3_wu8": (8, [9, 11], 12, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 1, "u8 wu8"),
    "c1d_k5": (12, [50], 10, [5], [1], [1], [2, 2], 1, "s8"),
    "c1d_s3": (6, [61], 9, [4], [3], [2], [1, 0], 1, "u8 wu8"),
    "c3x2_pads": (7, [13, 8], 11, [3, 2], [2, 1], [1, 1], [0, 1, 2, 0], 1, "s8 tensor nobias"),
    "c3x3_tiles": (64, [30, 30], 72, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 1, "u8 relu"),
    "c3x3_chunks": (512, [5, 5], 20, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 1, "s8"),
    "dw3x3": (24, [21, 19], 24, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 24, "u8 relu"),
    "dw3x3_s2": (16, [28, 28], 16, [3, 3], [2, 2], [1, 1], [1, 1, 1, 1], 16, "s8"),
    "dw5x5_x2_wu8": (8, [17, 23], 16, [5, 5], [1, 2], [1, 1], [2, 1, 2, 3], 8, "u8 wu8"),
    "dw1d_dil": (10, [40], 10, [3], [1], [3], [3, 3], 10, "s8 tensor nobias"),
    # the depthwise kernel's paths: rows of 32 columns (a masked tail) at
    # stride 1 and 2, 5x5 on a small image (the plane as one run), 3x3
    # dilated (taps one by one)
    "dw3x3_wide": (8, [9, 70], 8, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 8, "s8"),
    "dw3x3_s2_wide": (8, [12, 75], 8, [3, 3], [2, 2], [1, 1], [1, 1, 1, 1], 8, "u8 relu"),
    "dw5x5_small": (16, [7, 7], 16, [5, 5], [1, 1], [1, 1], [2, 2, 2, 2], 16, "u8"),
    "dw3x3_dil2": (8, [16, 40], 8, [3, 3], [1, 1], [2, 2], [2, 2, 2, 2], 8, "s8 wu8"),
    # the QOperator form (QLinearConv between QuantizeLinear and DequantizeLinear)
    "qop_c3x3_odd": (5, [20, 20], 13, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 1, "u8 qop"),
    "qop_c3x3_s2_s8": (16, [15, 17], 24, [3, 3], [2, 2], [1, 1], [1, 1, 1, 1], 1, "s8 tensor qop"),
    "qop_c3x3_wu8": (8, [9, 11], 12, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 1, "u8 wu8 qop"),
    "qop_dw3x3": (24, [21, 19], 24, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], 24, "u8 qop nobias"),
}


def out_size(i, k, s, d, pb, pe):
    return (i + pb + pe - d * (k - 1) - 1) // s + 1


def model(name, C, sp, M, k, st, dil, pads, G, opts, rng):
    opts = opts.split()
    u8 = "u8" in opts
    nsp = len(sp)
    K = C // G * int(np.prod(k))
    xs, xz = 0.04, (128 if u8 else 0)
    wf = rng.standard_normal([M, C // G] + k).astype(np.float32) / np.sqrt(K)
    if "wu8" in opts:  # asymmetric uint8 weights per channel
        lo, hi = wf.reshape(M, -1).min(1), wf.reshape(M, -1).max(1)
        ws = ((hi - lo) / 255).astype(np.float32)
        wz = np.clip(np.round(-lo / ws), 0, 255).astype(np.uint8)
        wq = np.clip(np.round(wf / ws.reshape([M] + [1] * (nsp + 1))) + wz.reshape([M] + [1] * (nsp + 1)), 0, 255)
        wq, wt = wq.astype(np.uint8), TensorProto.UINT8
    elif "tensor" in opts:
        ws = np.float32(np.abs(wf).max() / 127)
        wz = np.int8(0)
        wq, wt = np.clip(np.round(wf / ws), -127, 127).astype(np.int8), TensorProto.INT8
    else:
        ws = (np.abs(wf).reshape(M, -1).max(1) / 127).astype(np.float32)
        wz = np.zeros(M, np.int8)
        wq = np.clip(np.round(wf / ws.reshape([M] + [1] * (nsp + 1))), -127, 127).astype(np.int8)
        wt = TensorProto.INT8
    ys = np.float32(xs * 2.5)
    inits = [
        numpy_helper.from_array(np.float32(xs), "xs"), numpy_helper.from_array(np.array(xz, np.uint8 if u8 else np.int8), "xz"),
        numpy_helper.from_array(wq, "wq"), numpy_helper.from_array(np.asarray(ws, np.float32), "ws"),
        numpy_helper.from_array(np.asarray(wz), "wz"),
        numpy_helper.from_array(ys, "ys"), numpy_helper.from_array(np.array(xz, np.uint8 if u8 else np.int8), "yz"),
    ]
    N = helper.make_node
    axis = {} if "tensor" in opts else {"axis": 0}
    nodes = [
        N("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        N("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        N("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], **axis),
    ]
    conv_in = ["xd", "wd"]
    if "nobias" not in opts:
        bsc = (xs * np.asarray(ws, np.float32) * np.ones(M, np.float32)).astype(np.float32)
        bias = np.round(rng.standard_normal(M) * 0.2 / bsc).astype(np.int32)
        inits += [numpy_helper.from_array(bias, "bq"), numpy_helper.from_array(bsc, "bs"),
                  numpy_helper.from_array(np.zeros(M, np.int32), "bz")]
        nodes.append(N("DequantizeLinear", ["bq", "bs", "bz"], ["bd"], axis=0))
        conv_in.append("bd")
    if "qop" in opts:  # QLinearConv on the quantized x, then DequantizeLinear
        qin = ["xq", "xs", "xz", "wq", "ws", "wz", "ys", "yz"] + (["bq"] if "nobias" not in opts else [])
        nodes = nodes[:1] + [N("QLinearConv", qin, ["yq"], kernel_shape=k, strides=st, dilations=dil, pads=pads, group=G),
                             N("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
        osp = [out_size(sp[i], k[i], st[i], dil[i], pads[i], pads[i + nsp]) for i in range(nsp)]
        used = {i for nd in nodes for i in nd.input}
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C] + sp)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, M] + osp)],
                              [t for t in inits if t.name in used])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_convs.py")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m
    nodes.append(N("Conv", conv_in, ["c"], kernel_shape=k, strides=st, dilations=dil, pads=pads, group=G))
    last = "c"
    if "relu" in opts:
        nodes.append(N("Relu", ["c"], ["r"]))
        last = "r"
    nodes += [N("QuantizeLinear", [last, "ys", "yz"], ["yq"]), N("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    osp = [out_size(sp[i], k[i], st[i], dil[i], pads[i], pads[i + nsp]) for i in range(nsp)]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C] + sp)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, M] + osp)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_convs.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    rng = np.random.default_rng(0)
    for name, c in CASES.items():
        onnx.save(model(name, *c, rng), os.path.join(sys.argv[1], name + ".onnx"))


if __name__ == "__main__":
    main()
