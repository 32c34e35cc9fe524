#!/usr/bin/python3
"""gen.py OUTDIR: the models and input files of tests/e2e/baddata.sh.

Writes OUTDIR/MODEL/model.onnx for each model, the input files under
OUTDIR/files/ and OUTDIR/cases.txt, one case a line:

    NAME MODEL EXPECT FILE...

EXPECT is `ok` (the run succeeds and output K equals files/NAME.expK.npy
exactly, NaN matching NaN), `runs` (the run succeeds; its outputs are
unspecified, what counts is no sanitizer report), `index` (the run fails
with PREFIX_ERR_INDEX) or `reject:WORDS` (the --main program refuses the
input file before running, naming the file and WORDS, '~' for a space).
Every index op gets a control case with valid (also negative) indices.
"""
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

OUT = sys.argv[1]
FILES = os.path.join(OUT, "files")
os.makedirs(FILES, exist_ok=True)
cases = []
NP2TP = {np.float32: TP.FLOAT, np.int64: TP.INT64, np.int32: TP.INT32, np.uint8: TP.UINT8,
         np.int8: TP.INT8, np.float64: TP.DOUBLE}


def model(name, nodes, inputs, outputs, inits=(), opset=18):
    """inputs/outputs: (name, numpy dtype, shape)"""
    vi = lambda n, t, s: helper.make_tensor_value_info(n, NP2TP[t], s)
    g = helper.make_graph(nodes, name, [vi(*i) for i in inputs], [vi(*o) for o in outputs],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    os.makedirs(os.path.join(OUT, name), exist_ok=True)
    onnx.save(m, os.path.join(OUT, name, "model.onnx"))


def case(name, mdl, expect, inputs, expected=(), pb=()):
    """inputs: arrays (or bytes: a file as is); pb: indices written as TensorProto"""
    files = []
    for k, a in enumerate(inputs):
        if isinstance(a, bytes):
            path = os.path.join(FILES, "%s.in%d.bin" % (name, k))
            open(path, "wb").write(a)
        elif k in pb:
            path = os.path.join(FILES, "%s.in%d.pb" % (name, k))
            open(path, "wb").write(numpy_helper.from_array(np.asarray(a)).SerializeToString())
        else:
            path = os.path.join(FILES, "%s.in%d.npy" % (name, k))
            np.save(path, np.asarray(a, order="C"))
        files.append(path)
    for k, e in enumerate(expected):
        np.save(os.path.join(FILES, "%s.exp%d.npy" % (name, k)), np.asarray(e, order="C"))
    cases.append("%s %s %s %s" % (name, mdl, expect, " ".join(files)))


f32, i64, i32 = np.float32, np.int64, np.int32
X = np.arange(15, dtype=f32).reshape(5, 3)

# ---- index ops: a control, an index too big, one too negative ----
model("gather", [helper.make_node("Gather", ["x", "i"], ["y"])],
      [("x", f32, [5, 3]), ("i", i64, [4])], [("y", f32, [4, 3])])
idx = np.array([0, 4, -1, -5], i64)
case("gather_ok", "gather", "ok", [X, idx], [X[idx]])
case("gather_ok_pb", "gather", "ok", [X, idx], [X[idx]], pb=(1,))
case("gather_big", "gather", "index", [X, np.array([0, 5, 1, 1], i64)])
case("gather_neg", "gather", "index", [X, np.array([0, -6, 1, 1], i64)])
case("gather_huge", "gather", "index", [X, np.array([0, 1, 2**62, -2**63], i64)])

model("gather_ax1", [helper.make_node("Gather", ["x", "i"], ["y"], axis=1)],
      [("x", f32, [3, 5]), ("i", i32, [2, 2])], [("y", f32, [3, 2, 2])])
XT = X.T.copy()
idx = np.array([[0, -1], [4, 2]], i32)
case("gather_ax1_ok", "gather_ax1", "ok", [XT, idx], [np.take(XT, idx, axis=1)])
case("gather_ax1_big", "gather_ax1", "index", [XT, np.array([[0, 1], [2, 5]], i32)])
case("gather_ax1_neg", "gather_ax1", "index", [XT, np.array([[-6, 1], [2, 3]], i32)])

model("gather_el", [helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1)],
      [("x", f32, [5, 3]), ("i", i64, [5, 2])], [("y", f32, [5, 2])])
idx = np.array([[0, 2], [1, -1], [2, 0], [-3, 1], [0, 0]], i64)
case("gather_el_ok", "gather_el", "ok", [X, idx], [np.take_along_axis(X, idx % 3, axis=1)])
case("gather_el_big", "gather_el", "index", [X, np.where(idx == 1, 3, idx)])
case("gather_el_neg", "gather_el", "index", [X, np.where(idx == 1, -4, idx)])

model("gather_nd", [helper.make_node("GatherND", ["x", "i"], ["y"])],
      [("x", f32, [5, 3]), ("i", i64, [2, 2])], [("y", f32, [2])])
case("gather_nd_ok", "gather_nd", "ok", [X, np.array([[4, 2], [-1, -3]], i64)], [np.array([14, 12], f32)])
case("gather_nd_big", "gather_nd", "index", [X, np.array([[4, 3], [0, 0]], i64)])
case("gather_nd_neg", "gather_nd", "index", [X, np.array([[0, 0], [-6, 0]], i64)])

model("scatter_nd", [helper.make_node("ScatterND", ["x", "i", "u"], ["y"])],
      [("x", f32, [5, 3]), ("i", i64, [2, 1]), ("u", f32, [2, 3])], [("y", f32, [5, 3])])
U = -np.ones((2, 3), f32)
exp = X.copy(); exp[[1, 4]] = U
case("scatter_nd_ok", "scatter_nd", "ok", [X, np.array([[1], [-1]], i64), U], [exp])
case("scatter_nd_big", "scatter_nd", "index", [X, np.array([[1], [5]], i64), U])
case("scatter_nd_neg", "scatter_nd", "index", [X, np.array([[-6], [0]], i64), U])

model("scatter_el", [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0, reduction="add")],
      [("x", f32, [5, 3]), ("i", i64, [1, 3]), ("u", f32, [1, 3])], [("y", f32, [5, 3])])
U1 = np.array([[10, 20, 30]], f32)
exp = X.copy(); exp[0, 0] += 10; exp[4, 1] += 20; exp[2, 2] += 30
case("scatter_el_ok", "scatter_el", "ok", [X, np.array([[0, -1, 2]], i64), U1], [exp])
case("scatter_el_big", "scatter_el", "index", [X, np.array([[0, 5, 2]], i64), U1])
case("scatter_el_neg", "scatter_el", "index", [X, np.array([[0, 1, -6]], i64), U1])

model("scatter9", [helper.make_node("Scatter", ["x", "i", "u"], ["y"], axis=1)],
      [("x", f32, [5, 3]), ("i", i64, [1, 2]), ("u", f32, [1, 2])], [("y", f32, [5, 3])], opset=10)
exp = X.copy(); exp[0, 2] = 7; exp[0, 0] = 8
case("scatter9_ok", "scatter9", "ok", [X, np.array([[2, 0]], i64), np.array([[7, 8]], f32)], [exp])
case("scatter9_big", "scatter9", "index", [X, np.array([[3, 0]], i64), np.array([[7, 8]], f32)])

model("unpool", [helper.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
      [("x", f32, [1, 1, 2, 2]), ("i", i64, [1, 1, 2, 2])], [("y", f32, [1, 1, 4, 4])])
ux = np.array([[[[1, 2], [3, 4]]]], f32)
ui = np.array([[[[0, 3], [9, 15]]]], i64)
exp = np.zeros(16, f32); exp[[0, 3, 9, 15]] = [1, 2, 3, 4]
case("unpool_ok", "unpool", "ok", [ux, ui], [exp.reshape(1, 1, 4, 4)])
case("unpool_big", "unpool", "index", [ux, np.where(ui == 15, 16, ui)])
case("unpool_neg", "unpool", "index", [ux, np.where(ui == 3, -1, ui)])

model("revseq", [helper.make_node("ReverseSequence", ["x", "l"], ["y"], time_axis=0, batch_axis=1)],
      [("x", f32, [5, 3]), ("l", i64, [3])], [("y", f32, [5, 3])])
exp = X.copy(); exp[:2, 0] = X[1::-1, 0]; exp[:, 1] = X[::-1, 1]
case("revseq_ok", "revseq", "ok", [X, np.array([2, 5, 0], i64)], [exp])
case("revseq_big", "revseq", "index", [X, np.array([2, 6, 1], i64)])
case("revseq_neg", "revseq", "index", [X, np.array([2, -1, 1], i64)])

def ml_model(name, node, inputs, outputs):
    vi = lambda n, t, s: helper.make_tensor_value_info(n, NP2TP[t], s)
    g = helper.make_graph([node], name, [vi(*i) for i in inputs], [vi(*o) for o in outputs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("ai.onnx.ml", 3)])
    m.ir_version = 8
    os.makedirs(os.path.join(OUT, name), exist_ok=True)
    onnx.save(m, os.path.join(OUT, name, "model.onnx"))


ml_model("afe", helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml"),
         [("x", f32, [5, 3]), ("i", i64, [2])], [("y", f32, [5, 2])])
case("afe_ok", "afe", "ok", [X, np.array([2, 0], i64)], [X[:, [2, 0]]])
case("afe_big", "afe", "index", [X, np.array([3, 0], i64)])
case("afe_neg", "afe", "index", [X, np.array([0, -1], i64)])

# RotaryEmbedding (opset 23): position ids index the caches
model("rotary", [helper.make_node("RotaryEmbedding", ["x", "c", "s", "p"], ["y"])],
      [("x", f32, [1, 2, 2, 4]), ("c", f32, [3, 2]), ("s", f32, [3, 2]), ("p", i64, [1, 2])],
      [("y", f32, [1, 2, 2, 4])], opset=23)
rx4 = np.arange(16, dtype=f32).reshape(1, 2, 2, 4)
rc, rs = np.ones((3, 2), f32), np.zeros((3, 2), f32)
case("rotary_ok", "rotary", "ok", [rx4, rc, rs, np.array([[0, -1]], i64)], [rx4])
case("rotary_big", "rotary", "index", [rx4, rc, rs, np.array([[0, 3]], i64)])
case("rotary_neg", "rotary", "index", [rx4, rc, rs, np.array([[-4, 0]], i64)])

# TensorScatter (opset 24), linear: write_indices + the update length must fit
model("tscatter", [helper.make_node("TensorScatter", ["k", "u", "w"], ["y"])],
      [("k", f32, [2, 4, 1]), ("u", f32, [2, 2, 1]), ("w", i64, [2])], [("y", f32, [2, 4, 1])], opset=24)
tk, tu = np.zeros((2, 4, 1), f32), np.ones((2, 2, 1), f32)
exp = tk.copy(); exp[0, 2:4] = 1; exp[1, 0:2] = 1
case("tscatter_ok", "tscatter", "ok", [tk, tu, np.array([2, 0], i64)], [exp])
case("tscatter_big", "tscatter", "index", [tk, tu, np.array([3, 0], i64)])
case("tscatter_neg", "tscatter", "index", [tk, tu, np.array([0, -1], i64)])
case("tscatter_huge", "tscatter", "index", [tk, tu, np.array([2**63 - 1, 0], i64)])

# GRU: sequence_lens in [0, seq]. Zero weights: z = 0.5, candidate 0, so
# each step halves the state (initial ones), zeros past a batch's length
model("gru", [helper.make_node("GRU", ["x", "w", "r", "", "l", "h0"], ["y", "yh"], hidden_size=2)],
      [("x", f32, [3, 2, 2]), ("l", i32, [2])], [("y", f32, [3, 1, 2, 2]), ("yh", f32, [1, 2, 2])],
      inits=[("w", np.zeros((1, 6, 2), f32)), ("r", np.zeros((1, 6, 2), f32)), ("h0", np.ones((1, 2, 2), f32))])
gx = np.ones((3, 2, 2), f32)
gy = np.zeros((3, 1, 2, 2), f32)
gy[:, 0, 0, :] = np.array([0.5, 0.25, 0.125], f32)[:, None]
gy[0, 0, 1, :] = 0.5
case("gru_ok", "gru", "ok", [gx, np.array([3, 1], i32)], [gy, np.array([[[0.125] * 2, [0.5] * 2]], f32)])
case("gru_big", "gru", "index", [gx, np.array([4, 1], i32)])
case("gru_neg", "gru", "index", [gx, np.array([3, -1], i32)])

# OneHot: out-of-range (and NaN) indices give all off_value, as ONNX defines
model("onehot", [helper.make_node("OneHot", ["i", "d", "v"], ["y"])],
      [("i", f32, [6])], [("y", f32, [6, 4])], inits=[("d", np.array(4, i64)), ("v", np.array([0, 1], f32))])
oi = np.array([1, -1, 4, -5, np.nan, np.inf], f32)
exp = np.zeros((6, 4), f32); exp[0, 1] = 1; exp[1, 3] = 1
case("onehot_bad", "onehot", "ok", [oi], [exp])

model("nll", [helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], reduction="none")],
      [("x", f32, [2, 3]), ("t", i64, [2])], [("y", f32, [2])])
nx = np.array([[1, 2, 3], [4, 5, 6]], f32)
case("nll_ok", "nll", "ok", [nx, np.array([2, 0], i64)], [np.array([-3, -4], f32)])
case("nll_big", "nll", "index", [nx, np.array([3, 0], i64)])

model("roialign", [helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], output_height=2, output_width=2,
                                    sampling_ratio=0)],
      [("x", f32, [2, 1, 4, 4]), ("r", f32, [2, 4]), ("b", i64, [2])], [("y", f32, [2, 1, 2, 2])], opset=16)
rx = np.arange(32, dtype=f32).reshape(2, 1, 4, 4)
rr = np.array([[0, 0, 3, 3], [1, 1, 2, 2]], f32)
case("roialign_batch_big", "roialign", "index", [rx, rr, np.array([0, 2], i64)])
case("roialign_batch_neg", "roialign", "index", [rx, rr, np.array([-1, 0], i64)])
case("roialign_nan", "roialign", "runs",
     [rx, np.array([[np.nan, 0, np.inf, 3], [-np.inf, 1e30, np.nan, -1e30]], f32), np.array([0, 1], i64)])

model("roipool", [helper.make_node("MaxRoiPool", ["x", "r"], ["y"], pooled_shape=[2, 2])],
      [("x", f32, [2, 1, 4, 4]), ("r", f32, [2, 5])], [("y", f32, [2, 1, 2, 2])])
case("roipool_ok", "roipool", "ok", [rx, np.array([[1, 0, 0, 3, 3], [0, 0, 0, 1, 1]], f32)],
     [np.array([[[[21, 23], [29, 31]]], [[[0, 1], [4, 5]]]], f32)])
case("roipool_batch_big", "roipool", "index", [rx, np.array([[2, 0, 0, 3, 3], [0, 0, 0, 1, 1]], f32)])
case("roipool_batch_nan", "roipool", "runs",
     [rx, np.array([[np.nan, 0, 0, 3, 3], [0, np.nan, -np.inf, 1e30, np.inf]], f32)])

# ---- NaN / Inf in float -> int conversions and coordinates ----
ci = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 3.7, -3.7, 255.9, -0.5], f32)
for to, dt, name in ((TP.INT32, np.int32, "i32"), (TP.INT64, np.int64, "i64"), (TP.UINT8, np.uint8, "u8"),
                     (TP.INT8, np.int8, "i8")):
    model("cast_" + name, [helper.make_node("Cast", ["x"], ["y"], to=to)], [("x", f32, [9])],
          [("y", dt, [9])])
    info = np.iinfo(dt)
    # the documented conversion: truncated, saturated, NaN -> 0
    exp = np.array([0 if v != v else info.max if v >= info.max else info.min if v <= info.min else int(v)
                    for v in ci.astype(np.float64)], dt)
    case("cast_nan_" + name, "cast_" + name, "ok", [ci], [exp])

model("resize", [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")],
      [("x", f32, [1, 1, 2, 2])], [("y", f32, [1, 1, 4, 4])], inits=[("s", np.array([1, 1, 2, 2], f32))])
case("resize_nan", "resize", "runs", [np.array([[[[np.nan, np.inf], [-np.inf, 1]]]], f32)])

for mode in ("bilinear", "nearest", "bicubic"):
    for pad in ("zeros", "border", "reflection"):
        nm = "gridsample_%s_%s" % (mode, pad)
        model(nm, [helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=pad)],
              [("x", f32, [1, 1, 3, 3]), ("g", f32, [1, 2, 3, 2])], [("y", f32, [1, 1, 2, 3])], opset=16)
        g = np.array([[[[np.nan, 0], [np.inf, -np.inf], [1e30, -1e30]],
                       [[0, np.nan], [3e9, 0.5], [-0.5, 1e10]]]], f32)
        case(nm + "_nan", nm, "runs", [np.arange(9, dtype=f32).reshape(1, 1, 3, 3), g])

model("topk", [helper.make_node("TopK", ["x", "k"], ["v", "i"])],
      [("x", f32, [2, 4])], [("v", f32, [2, 2]), ("i", i64, [2, 2])], inits=[("k", np.array([2], i64))])
case("topk_nan", "topk", "runs", [np.array([[np.nan, 1, np.inf, np.nan], [-np.inf, np.nan, 0, 2]], f32)])

model("argmax", [helper.make_node("ArgMax", ["x"], ["y"], axis=1, keepdims=0)],
      [("x", f32, [2, 4])], [("y", i64, [2])])
case("argmax_nan", "argmax", "runs", [np.array([[np.nan, 1, np.inf, np.nan], [-np.inf, np.nan, 0, 2]], f32)])

# ---- the --main program's reader: bad files are refused, naming them ----
good = np.array([0, 1, 2, 3], i64)


def npy_bytes(descr, shape, data, version=1, pad=True):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    if pad:
        hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64)
    hdr += "\n"
    if version == 1:
        head = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr))
    else:
        head = b"\x93NUMPY\x02\x00" + struct.pack("<I", len(hdr))
    return head + hdr.encode() + data


def pb_bytes(dims, dtype, raw):
    t = onnx.TensorProto(dims=dims, data_type=dtype, raw_data=raw)
    return t.SerializeToString()


raw = good.tobytes()
case("rd_ok_npy", "gather", "ok", [X, npy_bytes("<i8", "(4,)", raw)], [X[good]])
case("rd_dtype", "gather", "reject:expected~i64[4],~found~i32[4]", [X, good.astype(i32)])
case("rd_dtype_pb", "gather", "reject:expected~i64[4],~found~f32[4]", [X, good.astype(f32)], pb=(1,))
case("rd_shape", "gather", "reject:expected~i64[4],~found~i64[2,2]", [X, good.reshape(2, 2)])
case("rd_rank0", "gather", "reject:found~i64[]", [X, np.array(3, i64)])
case("rd_truncated", "gather", "reject:data~has~24~bytes", [X, npy_bytes("<i8", "(4,)", raw[:24])])
case("rd_trailing", "gather", "reject:data~has~40~bytes", [X, npy_bytes("<i8", "(4,)", raw + b"\0" * 8)])
case("rd_trunc_header", "gather", "reject:truncated~.npy~header", [X, npy_bytes("<i8", "(4,)", b"")[:40]])
case("rd_short", "gather", "reject:truncated~.npy~header", [X, b"\x93NUMPY\x01"])
case("rd_version", "gather", "reject:unsupported~.npy~version", [X, b"\x93NUMPY\x07\x00" + b"\0" * 80])
case("rd_hlen", "gather", "reject:truncated~.npy~header",
     [X, b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xfffffff0) + b"{}"])
case("rd_no_descr", "gather", "reject:no~'descr'",
     [X, b"\x93NUMPY\x01\x00" + struct.pack("<H", 20) + b"{'shape': (4,)}    \n" + raw])
case("rd_bad_descr", "gather", "reject:unsupported~descr", [X, npy_bytes("<i9", "(4,)", raw)])
case("rd_bad_shape", "gather", "reject:bad~or~too~long~'shape'", [X, npy_bytes("<i8", "(4,x)", raw)])
case("rd_neg_dim", "gather", "reject:negative~dimension", [X, npy_bytes("<i8", "(-4,)", raw)])
case("rd_huge_dims", "gather", "reject:shape~too~large",
     [X, npy_bytes("<i8", "(4294967296, 4294967296, 4294967296)", raw)])
case("rd_huge_numel", "gather", "reject:data~has~32~bytes", [X, npy_bytes("<i8", "(1099511627776,)", raw)])
case("rd_rank17", "gather", "reject:bad~or~too~long~'shape'", [X, npy_bytes("<i8", "(" + "1," * 17 + ")", raw)])
case("rd_str_wide", "gather", "reject:strings~of", [X, npy_bytes("|S1048576", "(1099511627776,)", b"ab")])
case("rd_str_wrap", "gather", "reject:strings~of", [X, npy_bytes("|S32", "(576460752303423488,)", b"")])
case("rd_str_overflow", "gather", "reject:unsupported~descr", [X, npy_bytes("|S99999999999999999999", "(4,)", b"ab")])
case("rd_fortran", "gather", "reject:Fortran", [X, npy_bytes("<i8", "(2, 2)", raw).replace(b"False", b"True ")])
case("rd_pb_truncated", "gather", "reject:malformed~protobuf", [X, pb_bytes([4], TP.INT64, raw)[:-3]])
case("rd_pb_raw_short", "gather", "reject:raw_data~has~24~bytes", [X, pb_bytes([4], TP.INT64, raw[:24])])
case("rd_pb_huge_dims", "gather", "reject:shape~too~large", [X, pb_bytes([2**40, 2**40], TP.INT64, raw)])
case("rd_pb_neg_dim", "gather", "reject:negative~dimension", [X, pb_bytes([-4], TP.INT64, raw)])
case("rd_pb_dtype", "gather", "reject:unsupported~TensorProto~data_type", [X, pb_bytes([4], 99, raw)])
case("rd_pb_garbage", "gather", "reject:malformed~protobuf", [X, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"])
case("rd_pb_trailing", "gather", "reject:malformed~protobuf", [X, pb_bytes([4], TP.INT64, raw) + b"\x0f"])
case("rd_empty", "gather", "reject:unsupported~TensorProto~data_type", [X, b""])

open(os.path.join(OUT, "cases.txt"), "w").write("\n".join(cases) + "\n")
