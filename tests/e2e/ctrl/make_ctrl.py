#!/usr/bin/python3
"""make_ctrl.py: tests/e2e/ctrl/ctrl.onnx and its inputs, for the CUDA
target's control flow on the host (codegen/c/emit_ctrl.c; tests/e2e/cuda.sh
step 11 runs it against the C target).

x [2, T, 4] f32 (T a run-time dim: --dim T=2..8; T = 5 in ctrl_x.npy) and a
trip count n (int64, an input), so neither is unrolled at compile time:
  Scan  a state h [2, 4] over x's axis 1 in reverse (a step copied out of
        the middle of x), h' = Tanh(h W + x_t), a scan output 2 h' along
        axis 1 of ys [2, 5, 4] (copied back into the middle)
  Loop  n trips at most, the carried v from the Scan's h; in the body
        u = Relu(v W) - 0.25 i, then an If on i % 2 (a nested control node
        whose condition the device computes): u * 2 or u + 1; the body's
        condition ReduceMax(v') < 10 stops it early (after 5 of 7); each v' stacked into
        s [iterations, 2, 4] (its first dim a data dim the Loop sets)
A second Loop of n trips carries k from h (k' = Tanh(k W) + k / 2), with
no scan output. Outputs: h, ys, v, s, k. Run from the repository: /usr/bin/python3
tests/e2e/ctrl/make_ctrl.py (numpy, onnx); same bytes every run."""
import os
import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

D = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)
W = nh.from_array((rng.standard_normal((4, 4)) * 0.6).astype(np.float32), "W")
F32, I64, B = TP.FLOAT, TP.INT64, TP.BOOL


def vi(n, t, s):
    return h.make_tensor_value_info(n, t, s)


# Scan body: (h, x_t) -> (h', y_t)
scan_body = h.make_graph(
    [h.make_node("MatMul", ["sh", "W"], ["shw"]),
     h.make_node("Add", ["shw", "sx"], ["sa"]),
     h.make_node("Tanh", ["sa"], ["sh2"]),
     h.make_node("Add", ["sh2", "sh2"], ["sy"])],
    "scan_body", [vi("sh", F32, [2, 4]), vi("sx", F32, [2, 4])], [vi("sh2", F32, [2, 4]), vi("sy", F32, [2, 4])])
# the If in the Loop's body: i odd -> u + 1, even -> u * 2
two = nh.from_array(np.array(2.0, np.float32), "two")
one = nh.from_array(np.array(1.0, np.float32), "one")
then_g = h.make_graph([h.make_node("Mul", ["u", "two"], ["t_out"])], "even", [], [vi("t_out", F32, [2, 4])])
else_g = h.make_graph([h.make_node("Add", ["u", "one"], ["e_out"])], "odd", [], [vi("e_out", F32, [2, 4])])
quarter = nh.from_array(np.array(0.25, np.float32), "quarter")
ten = nh.from_array(np.array(10.0, np.float32), "ten")
twoi = nh.from_array(np.array(2, np.int64), "twoi")
zeroi = nh.from_array(np.array(0, np.int64), "zeroi")
loop_body = h.make_graph(
    [h.make_node("MatMul", ["lv", "W"], ["lvw"]),
     h.make_node("Relu", ["lvw"], ["lr"]),
     h.make_node("Cast", ["li"], ["lif"], to=F32),
     h.make_node("Mul", ["lif", "quarter"], ["lq"]),
     h.make_node("Sub", ["lr", "lq"], ["u"]),
     h.make_node("Mod", ["li", "twoi"], ["lm"]),
     h.make_node("Equal", ["lm", "zeroi"], ["leven"]),
     h.make_node("If", ["leven"], ["lv2"], then_branch=then_g, else_branch=else_g),
     h.make_node("ReduceMax", ["lv2"], ["lmax"], keepdims=0),
     h.make_node("Less", ["lmax", "ten"], ["lcond"]),
     h.make_node("Identity", ["lv2"], ["ls"])],
    "loop_body", [vi("li", I64, []), vi("lc", B, []), vi("lv", F32, [2, 4])],
    [vi("lcond", B, []), vi("lv2", F32, [2, 4]), vi("ls", F32, [2, 4])])
# a second Loop, its value carried only (no scan output): its body's
# launches a CUDA Graph for each order of the two buffers (cuda.sh step 11)
half = nh.from_array(np.array(0.5, np.float32), "half")
loop2_body = h.make_graph(
    [h.make_node("MatMul", ["kv", "W"], ["kvw"]),
     h.make_node("Tanh", ["kvw"], ["kt"]),
     h.make_node("Mul", ["kv", "half"], ["kh"]),
     h.make_node("Add", ["kt", "kh"], ["kv2"]),
     h.make_node("Identity", ["kc"], ["kc2"])],
    "loop2_body", [vi("ki", I64, []), vi("kc", B, []), vi("kv", F32, [2, 4])],
    [vi("kc2", B, []), vi("kv2", F32, [2, 4])])
h0 = nh.from_array(np.zeros((2, 4), np.float32), "h0")
true = nh.from_array(np.array(True), "true")
g = h.make_graph(
    [h.make_node("Scan", ["h0", "x"], ["h", "ys"], body=scan_body, num_scan_inputs=1, scan_input_axes=[1],
                 scan_input_directions=[1], scan_output_axes=[1]),
     h.make_node("Loop", ["n", "true", "h"], ["v", "s"], body=loop_body),
     h.make_node("Loop", ["n", "true", "h"], ["k"], body=loop2_body)],
    "ctrl", [vi("x", F32, [2, "T", 4]), vi("n", I64, [])],
    [vi("h", F32, [2, 4]), vi("ys", F32, [2, "T", 4]), vi("v", F32, [2, 4]), vi("s", F32, ["iters", 2, 4]),
     vi("k", F32, [2, 4])],
    initializer=[W, h0, true, two, one, quarter, ten, twoi, zeroi, half])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, D + "/ctrl.onnx")
np.save(D + "/ctrl_x.npy", rng.standard_normal((2, 5, 4)).astype(np.float32))
np.save(D + "/ctrl_n.npy", np.array(7, np.int64))
