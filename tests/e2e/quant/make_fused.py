#!/usr/bin/python3
"""make_fused.py: QDQ models whose DequantizeLinear feeds float elementwise
ops that end in a QuantizeLinear, for tests/e2e/int8.sh: opt/ewfuse.c
computes the dequantize, the ops and the quantize in one fused loop
(8-bit operands and output, no f32 tensor between them).

    make_fused.py OUTDIR

Writes OUTDIR/fused_NAME.onnx, opset 13, input x f32 (normal random),
output y = DQ of the last Q:
- silu_s8: EfficientNet's SiLU, Mul(DQ(q), DQ(Q(Sigmoid(DQ(q))))), int8,
  24x13x13 (a partial last vector);
- se_u8: a squeeze-excitation scale, Mul(DQ(q) [1,16,9,9], DQ(...) of
  GlobalAveragePool and Sigmoid [1,16,1,1]), uint8 (a broadcast f32 operand);
- chain_u8: DQ(q) * 0.5 + a per-channel bias, Tanh, uint8, 10x7x7;
- requant_s8: Mul(DQ(q), DQ(q)) -> Q -> DQ -> Sub(., DQ(q)) -> Q: a Q and a
  DQ inside the fused body, int8;
- softmax_u8: Relu and Q fused, then a DQ of its own before a Softmax
  and its Q (the DQ's kernel came first and lacked the rounding helper of
  the Q's: a build error), an Add.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

N = helper.make_node


class M:
    def __init__(self, s8):
        self.dt, self.np, self.off = (TensorProto.INT8, np.int8, 128) if s8 else (TensorProto.UINT8, np.uint8, 0)
        self.nodes, self.inits, self.k = [], [], 0

    def const(self, v, dtype=np.float32):
        self.k += 1
        name = "c%d" % self.k
        self.inits.append(numpy_helper.from_array(np.array(v, dtype), name))
        return name

    def q(self, x, scale, zero):  # zero: the uint8 zero point (int8: less 128)
        self.k += 1
        s, z = self.const(scale), self.const(zero - self.off, self.np)
        self.nodes.append(N("QuantizeLinear", [x, s, z], ["q%d" % self.k]))
        self.last = (s, z)
        return "q%d" % self.k

    def dq(self, q, scale, zero):
        self.k += 1
        s, z = self.const(scale), self.const(zero - self.off, self.np)
        self.nodes.append(N("DequantizeLinear", [q, s, z], ["d%d" % self.k]))
        return "d%d" % self.k

    def op(self, op, *ins, **attrs):
        self.k += 1
        self.nodes.append(N(op, list(ins), ["t%d" % self.k], **attrs))
        return "t%d" % self.k

    def model(self, name, shape, y, ys, yz):
        yq = self.q(y, ys, yz)
        s, z = self.const(ys), self.const(yz - self.off, self.np)
        self.nodes.append(N("DequantizeLinear", [yq, s, z], ["y"]))
        g = helper.make_graph(self.nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_fused.py")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def silu_s8():
    m = M(True)
    x = m.dq(m.q("x", 0.03, 128), 0.03, 128)
    s = m.dq(m.q(m.op("Sigmoid", x), 1 / 255, 0), 1 / 255, 0)
    return m.model("silu_s8", [1, 24, 13, 13], m.op("Mul", x, s), 0.02, 118)


def se_u8():
    m = M(False)
    xq = m.q("x", 0.03, 128)
    p = m.dq(m.q(m.op("GlobalAveragePool", m.dq(xq, 0.03, 128)), 0.01, 128), 0.01, 128)
    s = m.dq(m.q(m.op("Sigmoid", p), 1 / 255, 0), 1 / 255, 0)
    return m.model("se_u8", [1, 16, 9, 9], m.op("Mul", m.dq(xq, 0.03, 128), s), 0.02, 128)


def chain_u8():
    m = M(False)
    x = m.dq(m.q("x", 0.025, 120), 0.025, 120)
    b = m.const(np.linspace(-1, 1, 10, dtype=np.float32).reshape(1, 10, 1, 1))
    t = m.op("Tanh", m.op("Add", m.op("Mul", x, m.const(0.5)), b))
    return m.model("chain_u8", [1, 10, 7, 7], t, 2 / 255, 128)


def requant_s8():
    m = M(True)
    xq = m.q("x", 0.04, 128)
    x = m.dq(xq, 0.04, 128)
    sq = m.dq(m.q(m.op("Mul", x, x), 0.05, 0), 0.05, 0)
    return m.model("requant_s8", [1, 6, 11, 11], m.op("Sub", sq, m.dq(xq, 0.04, 128)), 0.06, 100)


def softmax_u8():
    m = M(False)
    q = m.q(m.op("Relu", "x"), 0.02, 0)
    s = m.dq(m.q(m.op("Softmax", m.dq(q, 0.02, 0), axis=-1), 1 / 255, 0), 1 / 255, 0)
    return m.model("softmax_u8", [1, 4, 25], m.op("Add", s, m.dq(q, 0.02, 0)), 0.025, 0)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for f in (silu_s8, se_u8, chain_u8, requant_s8, softmax_u8):
        onnx.save(f(), os.path.join(sys.argv[1], "fused_" + f.__name__ + ".onnx"))


if __name__ == "__main__":
    main()
