"""gen.py: random valid ONNX models for differential testing (tests/difftest).

    case = generate(seed)          # a Case: the model, its f32 twin, inputs
    python3 tests/difftest/gen.py SEED OUTDIR [--dtype f32|f16|bf16|qdq] [--dynamic] [--control]

Why Python with onnx.helper: the oracle (ONNX Runtime) and the comparison
need numpy anyway, onnx.helper writes any node without a schema of ours,
and a generator that is easy to read is easy to extend. The generator does
not ask onnx for shapes: every pattern below computes its outputs' shapes
and dtypes itself, so every graph it makes is valid by construction (ONNX
Runtime refusing one is a generator bug, counted as such).

A model is built in f32 (the twin that ONNX Runtime runs); for f16 and
bf16 the same graph is written in that type, every constant and input
rounded to it, and the twin takes those rounded values in f32: the two
compute the same function, the test model with rounding at every step.

Values stay finite and away from the edges of their ops' domains by
construction: weights scaled by 1/sqrt(fan-in), Log/Sqrt/Div/Pow behind
an Abs and an offset, Exp behind a Tanh. Ops whose result jumps on a tiny
change of their input (ArgMax, Floor, comparisons feeding Where) are left
out: a jump would make a mismatch of rounding noise. An If's condition and
a Loop's trip count are graph inputs, run at each value.

The patterns favour what onnxcc's passes rewrite: Conv/BN/activation and
residual chains, depthwise + pointwise, GEMM epilogues, attention with a
mask, exported LayerNorm/RMSNorm/GELU forms, Transpose and Reshape chains,
elementwise chains, Resize, pools, Concat/Split/Slice, Gather, reductions,
Softmax, int8 QDQ groups, If and Loop.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
FT = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}
ITYPES = {"int64": TensorProto.INT64, "int32": TensorProto.INT32, "int8": TensorProto.INT8,
          "uint8": TensorProto.UINT8, "bool": TensorProto.BOOL}


def round_to(a, dtype):
    """a (f32) rounded to dtype's values, kept as f32"""
    a = np.array(a, np.float32, ndmin=1).reshape(np.shape(a))  # (a 0-d view cannot change dtype)
    if dtype == "f16":
        return a.astype(np.float16).astype(np.float32)
    if dtype == "bf16":
        u = a.reshape(-1).view(np.uint32).astype(np.int64)
        u = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16) & 0xFFFFFFFF
        return u.astype(np.uint32).view(np.float32).reshape(a.shape)
    return a


def bf16_bits(a):
    r = round_to(a, "bf16")
    return (r.reshape(-1).view(np.uint32) >> 16).astype(np.uint16).reshape(r.shape)


class T:
    """a tensor of the graph being built: its name, shape (at the largest
    size of the run-time dim), element kind ('f' the model's float type,
    else an ITYPES key) and whether axis 0 is the run-time dim N"""

    def __init__(self, name, shape, kind="f", dyn=False):
        self.name, self.shape, self.kind, self.dyn = name, list(shape), kind, dyn

    @property
    def rank(self):
        return len(self.shape)


class Builder:
    def __init__(self, rng, dtype, dynamic):
        self.rng, self.dtype, self.dynamic = rng, dtype, dynamic
        self.nodes, self.inits, self.inputs = [], [], []
        self.pool = []            # float tensors a pattern may read
        self.used = set()         # names read by some node
        self.n = 0
        self.patterns = []
        self.extra_inputs = []    # (T, values to run with): If conditions, Loop counts
        self.qdq = dtype == "qdq"
        self.quantized = set()    # DQ outputs of a QDQ model

    def fresh(self, p):
        self.n += 1
        return "%s%d" % (p, self.n)

    # ---- values ----
    def input(self, shape, dyn=None):
        t = T(self.fresh("in"), shape, "f", self.dynamic if dyn is None else dyn)
        self.inputs.append(t)
        self.pool.append(t)
        return t

    def weight(self, shape, scale=None, offset=0.0, positive=False):
        r = self.rng
        fan = max(1, int(np.prod(shape[1:])) if len(shape) > 1 else 1)
        s = (1.0 / math.sqrt(fan)) if scale is None else scale
        a = (r.standard_normal(shape) * s).astype(np.float32)
        if positive:
            a = np.abs(a) + 0.5
        a = a + np.float32(offset)
        name = self.fresh("w")
        self.inits.append((name, a, "f"))
        return T(name, shape, "f")

    def const(self, values, kind="int64"):
        a = np.asarray(values, dtype={"int64": np.int64, "int32": np.int32, "int8": np.int8, "uint8": np.uint8,
                                      "bool": np.bool_}[kind])
        name = self.fresh("c")
        self.inits.append((name, a, kind))
        return T(name, list(a.shape), kind)

    def scalar(self, v):
        """a float scalar constant of the model's type"""
        name = self.fresh("s")
        self.inits.append((name, np.array(v, np.float32), "f"))
        return T(name, [], "f")

    def node(self, op, ins, shape, kind="f", dyn=None, nout=1, shapes=None, domain="", **attrs):
        outs = []
        for k in range(nout):
            sh = shapes[k] if shapes else shape
            outs.append(T(self.fresh("t"), sh, kind, any(i is not None and i.dyn for i in ins) if dyn is None
                          else dyn))
        self.nodes.append(helper.make_node(op, [i.name if i is not None else "" for i in ins],
                                           [o.name for o in outs], domain=domain or None, **attrs))
        for i in ins:
            if i is not None:
                self.used.add(i.name)
        if kind == "f":
            self.pool.extend(outs)
        return outs if nout > 1 else outs[0]

    # ---- picking ----
    def pick(self, ok=lambda t: True):
        # (an int8 QDQ model's quantized values are read by nothing more: one
        # group a path, so that its outputs are within one step of the
        # reference; a chain's requantizations may each round one step
        # away from ONNX Runtime: docs/optimizer.md, qdq)
        cands = [t for t in self.pool if ok(t) and t.name not in self.quantized]
        if not cands:
            return None
        # the recent ones more often: chains, not only fans
        w = np.arange(1, len(cands) + 1, dtype=np.float64) ** 2
        return cands[self.rng.choice(len(cands), p=w / w.sum())]

    def choice(self, xs, p=None):
        return xs[self.rng.choice(len(xs), p=p)]

    def randint(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))


# ---------------- patterns ----------------
# Each takes the builder and returns True when it added nodes.

UNARY = ["Relu", "Sigmoid", "Tanh", "Abs", "Neg", "LeakyRelu", "Elu", "HardSigmoid", "HardSwish", "Softplus",
         "Softsign", "Erf", "Sin", "Cos", "Selu", "Celu", "Identity", "Clip", "Exp", "Log", "Sqrt",
         "Reciprocal", "PRelu"]


def act(b, x, op=None):
    op = op or b.choice(["Relu", "Sigmoid", "Tanh", "LeakyRelu", "HardSwish", "Clip", "Elu", "HardSigmoid"])
    if op == "Clip":
        return b.node("Clip", [x, b.scalar(-1.5), b.scalar(6.0)], x.shape)
    if op == "LeakyRelu":
        return b.node("LeakyRelu", [x], x.shape, alpha=float(b.choice([0.01, 0.1, 0.2])))
    return b.node(op, [x], x.shape)


def p_unary(b):
    x = b.pick()
    op = b.choice(UNARY)
    if op in ("Log", "Sqrt", "Reciprocal"):
        g = b.node("Add", [b.node("Abs", [x], x.shape), b.scalar(0.5)], x.shape)
        b.node(op, [g], x.shape)
    elif op == "Exp":
        b.node("Exp", [b.node("Tanh", [x], x.shape)], x.shape)
    elif op == "Clip":
        b.node("Clip", [x, b.scalar(-0.8), b.scalar(0.9)], x.shape)
    elif op == "PRelu":
        sl = [1] * x.rank
        if x.rank >= 2:
            sl = [x.shape[1]] + [1] * (x.rank - 2)
        b.node("PRelu", [x, b.weight(sl, 0.3)], x.shape)
    elif op in ("LeakyRelu", "Elu", "Celu"):
        b.node(op, [x], x.shape, alpha=float(b.choice([0.1, 0.5, 1.0])))
    else:
        b.node(op, [x], x.shape)
    b.patterns.append("unary:" + op)
    return True


def bshape(b, x):
    """a shape that broadcasts to x's: a suffix, some dims 1 (axis 0 1 when
    it is the run-time dim)"""
    k = b.randint(0, x.rank)
    s = [d if b.rng.random() < 0.6 else 1 for d in x.shape[x.rank - k:]]
    if x.dyn and k == x.rank and k:
        s[0] = 1
    return s


def p_binary(b):
    x = b.pick()
    op = b.choice(["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Add", "Mul"])
    other = b.pick(lambda t: t is not x and t.shape == x.shape and t.dyn == x.dyn) if b.rng.random() < 0.5 else None
    if other is None:
        other = b.weight(bshape(b, x), 1.0)
    if op == "Div":
        other = b.node("Add", [b.node("Abs", [other], other.shape, dyn=other.dyn), b.scalar(0.5)], other.shape,
                       dyn=other.dyn)
        b.node("Div", [x, other], x.shape)
    elif op == "Pow":
        base = b.node("Add", [b.node("Abs", [x], x.shape), b.scalar(0.25)], x.shape)
        b.node("Pow", [base, b.scalar(float(b.choice([2.0, 0.5, 3.0, 1.5])))], x.shape)
    else:
        ins = [x, other] if b.rng.random() < 0.7 else [other, x]
        b.node(op, ins, x.shape, dyn=x.dyn)
    b.patterns.append("binary:" + op)
    return True


def p_ewchain(b):
    """a chain of elementwise ops on one tensor (opt/ewfuse.c)"""
    x = b.pick()
    for _ in range(b.randint(2, 5)):
        r = b.rng.random()
        if r < 0.4:
            x = act(b, x)
        elif r < 0.7:
            x = b.node(b.choice(["Add", "Mul", "Sub"]), [x, b.weight(bshape(b, x), 0.7)], x.shape)
        else:
            x = b.node(b.choice(["Tanh", "Sigmoid", "Abs", "Neg"]), [x], x.shape)
    b.patterns.append("ewchain")
    return True


def to4d(b):
    """a 4-D float tensor [N, C, H, W], made from an input if none"""
    x = b.pick(lambda t: t.rank == 4)
    if x is None:
        return None
    return x


def conv_out(h, k, s, p0, p1, d=1):
    return (h + p0 + p1 - d * (k - 1) - 1) // s + 1


def conv(b, x, cout, k, s=1, pad=None, group=1, bias=True, dil=1):
    n, c, h, w = x.shape
    p = (k // 2) * dil if pad is None else pad
    ph = [p, p] if isinstance(p, int) else p
    ho, wo = conv_out(h, k, s, ph[0], ph[1], dil), conv_out(w, k, s, ph[0], ph[1], dil)
    if ho < 1 or wo < 1:
        return None
    W = b.weight([cout, c // group, k, k])
    ins = [x, W] + ([b.weight([cout], 0.3)] if bias else [])
    return b.node("Conv", ins, [n, cout, ho, wo], kernel_shape=[k, k], strides=[s, s], pads=[ph[0], ph[0], ph[1], ph[1]],
                  group=group, dilations=[dil, dil])


def bn(b, x):
    c = x.shape[1]
    return b.node("BatchNormalization", [x, b.weight([c], 0.3, 1.0), b.weight([c], 0.3),
                                         b.weight([c], 0.3), b.weight([c], 0.2, positive=True)], x.shape,
                  epsilon=1e-5)


def p_conv_block(b):
    x = to4d(b)
    if x is None:
        return False
    c = x.shape[1]
    cout = b.choice([c, c, 2 * c, max(1, c // 2), b.randint(1, 24)])
    k = b.choice([1, 3, 3, 5, 2])
    s = b.choice([1, 1, 1, 2])
    group = 1
    if b.rng.random() < 0.2:
        gs = [g for g in (2, 3, 4) if c % g == 0 and cout % g == 0]
        group = b.choice(gs) if gs else 1
    dil = 2 if b.rng.random() < 0.1 and k == 3 else 1
    pad = None if b.rng.random() < 0.8 else [b.randint(0, k - 1), b.randint(0, k - 1)]
    y = conv(b, x, cout, k, s, pad, group, bias=b.rng.random() < 0.6, dil=dil)
    if y is None:
        return False
    if b.rng.random() < 0.6:
        y = bn(b, y)
    if b.rng.random() < 0.7:
        y = act(b, y)
    if y.shape == x.shape and b.rng.random() < 0.5:
        y = b.node("Add", [y, x], y.shape)
        b.patterns.append("residual")
    b.patterns.append("conv k%d s%d g%d" % (k, s, group))
    return True


def p_convchain(b):
    """3x3 stride-1 convolutions in a row: the second reads the first's
    channel-blocked output, as Winograd's (opt/winograd.c) must"""
    x = to4d(b)
    if x is None:
        return False
    y = x
    for _ in range(b.randint(2, 3)):
        y = conv(b, y, b.choice([x.shape[1], b.randint(2, 24)]), 3, 1, bias=b.rng.random() < 0.7)
        if b.rng.random() < 0.4:
            y = bn(b, y)
        y = act(b, y)
    if y.shape == x.shape and b.rng.random() < 0.5:
        y = b.node("Add", [y, x], y.shape)
    b.patterns.append("convchain")
    return True


def p_dwpw(b):
    """depthwise 3x3 (+ activation) into a pointwise 1x1 (opt/dwpw.c)"""
    x = to4d(b)
    if x is None:
        return False
    c = x.shape[1]
    s = b.choice([1, 1, 2])
    d = conv(b, x, c, 3, s, group=c, bias=b.rng.random() < 0.5)
    if d is None:
        return False
    if b.rng.random() < 0.5:
        d = bn(b, d)
    d = act(b, d, b.choice(["Relu", "Clip", "HardSwish"]))
    y = conv(b, d, b.randint(1, 2 * c + 2), 1, 1, bias=True)
    if b.rng.random() < 0.5:
        y = bn(b, y)
    if y.shape == x.shape and b.rng.random() < 0.6:
        y = b.node("Add", [y, x], y.shape)
    b.patterns.append("dwpw")
    return True


def p_gemm(b):
    """Gemm with bias and an epilogue, or MatMul (2-D, batched, broadcast)"""
    x = b.pick(lambda t: t.rank >= 2)
    if x is None:
        return False
    K = x.shape[-1]
    M = b.choice([1, 3, 8, 16, 17, b.randint(1, 40)])
    if x.rank == 2 and b.rng.random() < 0.6:
        tb = b.rng.random() < 0.5
        W = b.weight([M, K] if tb else [K, M])
        ins = [x, W]
        if b.rng.random() < 0.7:
            ins.append(b.weight(b.choice([[M], [1, M]]), 0.3))
        y = b.node("Gemm", ins, [x.shape[0], M], transB=int(tb), alpha=float(b.choice([1.0, 1.0, 0.5])),
                   beta=float(b.choice([1.0, 1.0, 2.0])))
    else:
        other = None
        if x.rank >= 3 and b.rng.random() < 0.3:
            other = b.pick(lambda t: t.rank == x.rank and t.shape[:-2] == x.shape[:-2] and t.shape[-2] == K
                           and t.dyn == x.dyn)
        if other is None:
            other = b.weight([K, M])
        y = b.node("MatMul", [x, other], x.shape[:-1] + [other.shape[-1]], dyn=x.dyn)
        if b.rng.random() < 0.5:
            y = b.node("Add", [y, b.weight([y.shape[-1]], 0.3)], y.shape)
    if b.rng.random() < 0.6:
        y = act(b, y)
    b.patterns.append("gemm")
    return True


def p_attention(b):
    """scaled dot-product attention with an additive mask, 1 or more heads"""
    x = b.pick(lambda t: t.rank == 3)
    if x is None:
        return False
    n, s, d = x.shape
    h = b.choice([h for h in (1, 2, 4) if d % h == 0])
    dh = d // h
    q, k, v = (b.node("MatMul", [x, b.weight([d, d])], x.shape) for _ in range(3))
    if h > 1:
        def heads(t):
            r = b.node("Reshape", [t, b.const([0, s, h, dh])], [n, s, h, dh])
            return b.node("Transpose", [r], [n, h, s, dh], perm=[0, 2, 1, 3])
        q, k, v = heads(q), heads(k), heads(v)
        kt = b.node("Transpose", [k], [n, h, dh, s], perm=[0, 1, 3, 2])
        sc_shape = [n, h, s, s]
    else:
        kt = b.node("Transpose", [k], [n, dh, s], perm=[0, 2, 1])
        sc_shape = [n, s, s]
    sc = b.node("MatMul", [q, kt], sc_shape)
    sc = b.node("Mul", [sc, b.scalar(1.0 / math.sqrt(dh))], sc_shape)
    if b.rng.random() < 0.7:
        m = np.where(b.rng.random((s, s)) < 0.3, -1e4, 0.0).astype(np.float32)
        if b.rng.random() < 0.5:
            m = np.triu(np.full((s, s), -1e4, np.float32), 1)
        np.fill_diagonal(m, 0.0)
        name = b.fresh("mask")
        b.inits.append((name, m, "f"))
        sc = b.node("Add", [sc, T(name, [s, s])], sc_shape)
    p = b.node("Softmax", [sc], sc_shape, axis=-1)
    o = b.node("MatMul", [p, v], sc_shape[:-1] + [dh])
    if h > 1:
        o = b.node("Transpose", [o], [n, s, h, dh], perm=[0, 2, 1, 3])
        o = b.node("Reshape", [o, b.const([0, s, d])], [n, s, d])
    o = b.node("MatMul", [o, b.weight([d, d])], [n, s, d])
    if b.rng.random() < 0.5:
        o = b.node("Add", [o, x], o.shape)
    b.patterns.append("attention h%d" % h)
    return True


def p_norm(b):
    """LayerNormalization, or the exported forms of LayerNorm, RMSNorm, GELU.
    A norm's rows have 8 elements at least: over 2 or 3 nearly equal
    values x - mean is all cancellation, and rounding (f16, bf16, tf32)
    flips the signs of the result"""
    kind = b.choice(["ln", "ln_export", "rms_export", "gelu_erf", "gelu_tanh", "ln_axis"])
    gelu = kind.startswith("gelu")
    x = b.pick(lambda t: t.rank >= 2 and (gelu or t.shape[-1] >= 8))
    if x is None:
        return False
    d = x.shape[-1]
    if kind == "ln":
        y = b.node("LayerNormalization", [x, b.weight([d], 0.3, 1.0), b.weight([d], 0.3)], x.shape, axis=-1,
                   epsilon=1e-5)
    elif kind == "ln_axis":
        ax = b.randint(1, x.rank - 1)
        sh = x.shape[ax:]
        if int(np.prod(sh)) < 8:
            return False
        y = b.node("LayerNormalization", [x, b.weight(sh, 0.3, 1.0), b.weight(sh, 0.3)], x.shape, axis=ax)
    elif kind == "ln_export":
        mean = b.node("ReduceMean", [x], x.shape[:-1] + [1], axes=[-1])
        dx = b.node("Sub", [x, mean], x.shape)
        var = b.node("ReduceMean", [b.node("Pow", [dx, b.scalar(2.0)], x.shape)], x.shape[:-1] + [1], axes=[-1])
        y = b.node("Div", [dx, b.node("Sqrt", [b.node("Add", [var, b.scalar(1e-5)], var.shape)], var.shape)], x.shape)
        y = b.node("Add", [b.node("Mul", [y, b.weight([d], 0.3, 1.0)], x.shape), b.weight([d], 0.3)], x.shape)
    elif kind == "rms_export":
        ms = b.node("ReduceMean", [b.node("Pow", [x, b.scalar(2.0)], x.shape)], x.shape[:-1] + [1], axes=[-1])
        r = b.node("Reciprocal", [b.node("Sqrt", [b.node("Add", [ms, b.scalar(1e-6)], ms.shape)], ms.shape)], ms.shape)
        y = b.node("Mul", [b.node("Mul", [x, r], x.shape), b.weight([d], 0.3, 1.0)], x.shape)
    elif kind == "gelu_erf":
        e = b.node("Erf", [b.node("Div", [x, b.scalar(math.sqrt(2.0))], x.shape)], x.shape)
        y = b.node("Mul", [b.node("Mul", [x, b.node("Add", [e, b.scalar(1.0)], x.shape)], x.shape), b.scalar(0.5)],
                   x.shape)
    else:
        c3 = b.node("Mul", [b.node("Pow", [x, b.scalar(3.0)], x.shape), b.scalar(0.044715)], x.shape)
        t = b.node("Tanh", [b.node("Mul", [b.node("Add", [x, c3], x.shape), b.scalar(math.sqrt(2 / math.pi))],
                                   x.shape)], x.shape)
        y = b.node("Mul", [b.node("Mul", [x, b.scalar(0.5)], x.shape), b.node("Add", [t, b.scalar(1.0)], x.shape)],
                   x.shape)
    b.patterns.append("norm:" + kind)
    return True


def p_shape(b):
    """Transpose, Reshape, Flatten, Squeeze/Unsqueeze (axis 0 kept when it
    is the run-time dim)"""
    x = b.pick(lambda t: t.rank >= 2)
    if x is None:
        return False
    kind = b.choice(["transpose", "reshape", "flatten", "unsqueeze", "chain"])
    lo = 1 if x.dyn else 0
    if kind in ("transpose", "chain"):
        perm = list(range(x.rank))
        tail = perm[lo:]
        b.rng.shuffle(tail)
        perm = perm[:lo] + tail
        y = b.node("Transpose", [x], [x.shape[i] for i in perm], perm=perm)
        if kind == "chain":
            inv = list(np.argsort(perm))
            y = act(b, y)
            y = b.node("Transpose", [y], x.shape, perm=[int(i) for i in inv])
    elif kind == "reshape":
        rest = int(np.prod(x.shape[1:]))
        divs = [d for d in range(1, rest + 1) if rest % d == 0]
        a = b.choice(divs)
        tgt = [0 if x.dyn else x.shape[0], a, rest // a]
        if b.rng.random() < 0.3:
            tgt[2] = -1
        y = b.node("Reshape", [x, b.const(tgt)], [x.shape[0], a, rest // a])
    elif kind == "flatten":
        ax = 1 if x.dyn else b.randint(1, x.rank - 1)
        y = b.node("Flatten", [x], [int(np.prod(x.shape[:ax])), int(np.prod(x.shape[ax:]))], axis=ax)
    else:
        ax = b.randint(1, x.rank)
        sh = x.shape[:ax] + [1] + x.shape[ax:]
        y = b.node("Unsqueeze", [x, b.const([ax])], sh)
        y = act(b, y)
        y = b.node("Squeeze", [y, b.const([ax])], x.shape)
    b.patterns.append("shape:" + kind)
    return True


def p_resize(b):
    x = to4d(b)
    if x is None:
        return False
    n, c, h, w = x.shape
    up = b.rng.random() < 0.6 or h < 2 or w < 2
    sc = [1.0, 1.0, 2.0, 2.0] if up else [1.0, 1.0, 0.5, 0.5]
    if b.rng.random() < 0.2 and up:
        sc = [1.0, 1.0, 2.0, 1.0]
    mode = b.choice(["nearest", "linear"])
    ctm = b.choice(["asymmetric", "half_pixel", "align_corners", "pytorch_half_pixel"]) if mode == "linear" \
        else "asymmetric"
    ho, wo = int(math.floor(h * sc[2])), int(math.floor(w * sc[3]))
    # align_corners divides by the resized length less 1 and
    # pytorch_half_pixel asks whether it is 1: the ONNX reference (and
    # onnxcc, and the backend tests' data) take it as in * scale, ONNX
    # Runtime as the output's integer length; they agree where those agree
    if ctm in ("align_corners", "pytorch_half_pixel") and (ho != h * sc[2] or wo != w * sc[3]):
        ctm = "half_pixel"
    if ho < 1 or wo < 1:
        return False
    scales = T(b.fresh("sc"), [4], "f")
    b.inits.append((scales.name, np.array(sc, np.float32), "f32"))
    attrs = dict(mode=mode, coordinate_transformation_mode=ctm)
    if mode == "nearest":
        attrs["nearest_mode"] = "floor"
    b.node("Resize", [x, None, scales], [n, c, ho, wo], **attrs)
    b.patterns.append("resize:" + mode)
    return True


def p_pool(b):
    x = to4d(b)
    if x is None:
        return False
    n, c, h, w = x.shape
    kind = b.choice(["max", "avg", "gavg", "gmax"])
    if kind in ("gavg", "gmax"):
        b.node("GlobalAveragePool" if kind == "gavg" else "GlobalMaxPool", [x], [n, c, 1, 1])
    else:
        k = b.choice([2, 3])
        s = b.choice([1, 2])
        p = b.choice([0, 0, 1]) if k == 3 else 0
        ho, wo = conv_out(h, k, s, p, p), conv_out(w, k, s, p, p)
        if ho < 1 or wo < 1:
            return False
        attrs = dict(kernel_shape=[k, k], strides=[s, s], pads=[p, p, p, p])
        if kind == "avg":
            attrs["count_include_pad"] = int(b.rng.random() < 0.5)
        b.node("MaxPool" if kind == "max" else "AveragePool", [x], [n, c, ho, wo], **attrs)
    b.patterns.append("pool:" + kind)
    return True


def p_concat_split(b):
    x = b.pick(lambda t: t.rank >= 2)
    if x is None:
        return False
    lo = 1 if x.dyn else 0
    ax = b.randint(lo, x.rank - 1)
    kind = b.choice(["concat", "split", "slice"])
    if kind == "concat":
        other = b.pick(lambda t: t is not x and t.rank == x.rank and t.dyn == x.dyn and
                       all(t.shape[i] == x.shape[i] for i in range(x.rank) if i != ax))
        if other is None:
            other = b.node("Tanh", [x], x.shape)
        sh = list(x.shape)
        sh[ax] += other.shape[ax]
        b.node("Concat", [x, other], sh, axis=ax)
    elif kind == "split":
        d = x.shape[ax]
        if d < 2:
            return False
        a = b.randint(1, d - 1)
        s1, s2 = list(x.shape), list(x.shape)
        s1[ax], s2[ax] = a, d - a
        y1, y2 = b.node("Split", [x, b.const([a, d - a])], None, nout=2, shapes=[s1, s2], axis=ax)
        act(b, y1)
    else:
        d = x.shape[ax]
        st = b.randint(0, d - 1)
        en = b.randint(st + 1, d)
        step = b.choice([1, 1, 2])
        sh = list(x.shape)
        sh[ax] = len(range(st, en, step))
        b.node("Slice", [x, b.const([st]), b.const([en]), b.const([ax]), b.const([step])], sh)
    b.patterns.append(kind)
    return True


def p_gather(b):
    x = b.pick(lambda t: t.rank >= 2)
    if x is None:
        return False
    lo = 1 if x.dyn else 0
    ax = b.randint(lo, x.rank - 1)
    d = x.shape[ax]
    k = b.randint(1, 6)
    idx = b.rng.integers(-d, d, size=[k] if b.rng.random() < 0.7 else [])
    sh = x.shape[:ax] + list(idx.shape) + x.shape[ax + 1:]
    b.node("Gather", [x, b.const(idx.tolist() if idx.ndim else int(idx))], sh, axis=ax)
    b.patterns.append("gather")
    return True


def p_reduce(b):
    x = b.pick(lambda t: t.rank >= 2)
    if x is None:
        return False
    lo = 1 if x.dyn else 0
    op = b.choice(["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceSumSquare",
                   "ReduceLogSumExp"])
    axes = sorted(set(b.randint(lo, x.rank - 1) for _ in range(b.randint(1, 2))))
    keep = int(b.rng.random() < 0.5)
    sh = [1 if i in axes else d for i, d in enumerate(x.shape)] if keep else \
        [d for i, d in enumerate(x.shape) if i not in axes]
    if op == "ReduceSum":
        b.node(op, [x, b.const(axes)], sh, keepdims=keep)
    else:
        b.node(op, [x], sh, axes=axes, keepdims=keep)
    b.patterns.append("reduce:" + op)
    return True


def p_softmax(b):
    x = b.pick(lambda t: t.rank >= 2)
    if x is None:
        return False
    lo = 1 if x.dyn else 0
    ax = b.randint(lo, x.rank - 1)
    op = b.choice(["Softmax", "Softmax", "LogSoftmax"])
    b.node(op, [x], x.shape, axis=ax)
    b.patterns.append(op)
    return True


def p_qdq(b):
    """an int8 QDQ group as quantize_static writes it: u8 activations,
    per-channel s8 weights, an int32 bias: Q -> DQ -> Conv/MatMul -> Q -> DQ"""
    x = b.pick(lambda t: t.rank in (2, 4))
    if x is None:
        return False
    u8 = b.rng.random() < 0.7
    xs, xz = 0.05, (128 if u8 else 0)

    def qdq(t, s, z, u):
        sc, zp = b.const_f(s), b.const(z, "uint8" if u else "int8")
        q = b.node("QuantizeLinear", [t, sc, zp], t.shape, kind="uint8" if u else "int8")
        d = b.node("DequantizeLinear", [q, sc, zp], t.shape)
        b.quantized.add(d.name)
        return d

    xq = qdq(x, xs, xz, u8)
    if x.rank == 4:
        n, c, h, w = x.shape
        cout = b.randint(1, 16)
        k = b.choice([1, 3])
        wf = b.rng.standard_normal([cout, c, k, k]).astype(np.float32) / math.sqrt(c * k * k)
        ws = (np.abs(wf).reshape(cout, -1).max(1) / 127.0 + 1e-6).astype(np.float32)
        wq = np.clip(np.round(wf / ws[:, None, None, None]), -127, 127).astype(np.int8)
        W = b.const(wq, "int8")
        wsc = b.const_f(ws)
        wd = b.node("DequantizeLinear", [W, wsc, b.const(np.zeros(cout, np.int8), "int8")], [cout, c, k, k],
                    axis=0, dyn=False)
        b.quantized.add(wd.name)
        bias = (b.rng.standard_normal(cout) * 0.1 / (xs * ws)).round().astype(np.int32)
        bd = b.node("DequantizeLinear", [b.const(bias, "int32"), b.const_f(xs * ws),
                                         b.const(np.zeros(cout, np.int32), "int32")], [cout], axis=0, dyn=False)
        b.quantized.add(bd.name)
        y = b.node("Conv", [xq, wd, bd], [n, cout, h, w], kernel_shape=[k, k], pads=[k // 2] * 4)
    else:
        n, K = x.shape
        M = b.randint(1, 24)
        wf = b.rng.standard_normal([K, M]).astype(np.float32) / math.sqrt(K)
        ws = float(np.abs(wf).max() / 127.0 + 1e-6)
        W = b.const(np.clip(np.round(wf / ws), -127, 127).astype(np.int8), "int8")
        wd = b.node("DequantizeLinear", [W, b.const_f(ws), b.const(np.int8(0), "int8")], [K, M], dyn=False)
        b.quantized.add(wd.name)
        y = b.node("MatMul", [xq, wd], [n, M])
    if b.rng.random() < 0.5:
        y = b.node("Relu", [y], y.shape)
    b.quantized.add(y.name)  # (one group a path: not quantized again)
    ys = 0.05
    out = qdq(y, ys, 128 if u8 else 0, u8)
    b.patterns.append("qdq %s %s" % ("u8" if u8 else "s8", "conv" if x.rank == 4 else "matmul"))
    b.qdq_steps.append((out.name, ys))
    return True


def const_f(self, v):
    """an f32 constant (scales of Q/DQ)"""
    name = self.fresh("q")
    a = np.asarray(v, np.float32)
    self.inits.append((name, a, "f32"))
    return T(name, list(a.shape), "f32")


Builder.const_f = const_f


def body_graph(b, x, name):
    """a small random subgraph on outer-scope x, in a Builder of its own
    that shares names; returns (nodes, inits, output T)"""
    sub = Builder(b.rng, b.dtype, x.dyn)
    sub.n = b.n * 100 + 7
    sub.pool = [x]
    for _ in range(b.randint(1, 3)):
        b.choice([p_unary, p_binary, p_ewchain])(sub)
    y = sub.pool[-1]
    if y is x or y.shape != x.shape:
        return None
    b.n = max(b.n, sub.n)
    return sub, y


def p_if(b):
    """If on a bool graph input, both branches random chains of one shape"""
    x = b.pick()
    r1, r2 = body_graph(b, x, "then"), body_graph(b, x, "else")
    if r1 is None or r2 is None:
        return False
    cond = T(b.fresh("cond"), [], "bool")
    b.extra_inputs.append((cond, [np.array(True), np.array(False)]))
    out = b.fresh("ifout")
    b.branches.append((out, x, r1, r2))
    t = T(out, x.shape, "f", x.dyn)
    b.nodes.append(("IF", cond, x, r1, r2, t))
    b.used.add(x.name)
    b.pool.append(t)
    b.patterns.append("if")
    return True


def p_loop(b):
    """Loop of a trip count given as a graph input: y = f(y) + x, bounded"""
    x = b.pick()
    sub = Builder(b.rng, b.dtype, x.dyn)
    sub.n = b.n * 100 + 11
    y_in = T(b.fresh("ly"), x.shape, "f", x.dyn)
    sub.pool = [y_in]
    for _ in range(b.randint(1, 3)):
        b.choice([p_unary, p_ewchain])(sub)
    f = sub.pool[-1]
    if f.shape != x.shape:
        return False
    f = sub.node("Tanh", [f], f.shape)
    f = sub.node("Add", [f, x], f.shape)
    b.n = max(b.n, sub.n)
    m = T(b.fresh("trips"), [], "int64")
    b.extra_inputs.append((m, [np.array(k, np.int64) for k in (0, 1, 3)]))
    t = T(b.fresh("loopout"), x.shape, "f", x.dyn)
    b.nodes.append(("LOOP", m, x, y_in, sub, f, t))
    b.used.add(x.name)
    b.pool.append(t)
    b.patterns.append("loop")
    return True


PATTERNS = [  # (pattern, weight)
    (p_conv_block, 10), (p_convchain, 4), (p_dwpw, 4), (p_gemm, 7), (p_attention, 3), (p_norm, 5), (p_unary, 6), (p_binary, 6),
    (p_ewchain, 5), (p_shape, 5), (p_resize, 2), (p_pool, 3), (p_concat_split, 4), (p_gather, 2), (p_reduce, 3),
    (p_softmax, 3),
]


class Case:
    """a generated model: files() writes model.onnx (the test model),
    twin.onnx (f32, what ONNX Runtime runs), the inputs per run and
    meta.json"""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def generate(seed, dtype=None, dynamic=None, control=None, nodes=None):
    rng = np.random.default_rng(seed)
    if dtype is None:
        dtype = rng.choice(["f32", "f32", "f32", "f16", "f16", "bf16", "qdq"])
    if dynamic is None:
        dynamic = bool(rng.random() < 0.25) and dtype != "qdq"
    if control is None:
        control = bool(rng.random() < 0.12) and dtype != "qdq"
    target_nodes = nodes or int(rng.integers(3, 31))
    b = Builder(rng, dtype, dynamic)
    b.branches, b.qdq_steps = [], []
    N = int(rng.choice([1, 1, 2, 3])) if not dynamic else int(rng.choice([2, 3, 4]))
    # one or two inputs of the shapes the patterns read
    wide = rng.random() < 0.15  # many channels, few pixels: long reductions (split-K)
    kinds = rng.choice(["img", "vec"] if dtype == "qdq" else ["img", "seq", "vec", "img", "seq"],
                       size=int(rng.choice([1, 1, 2])))
    for k in kinds:
        if k == "img":
            c = int(rng.integers(64, 200)) if wide else int(rng.integers(1, 17))
            h = int(rng.integers(1, 5)) if wide else int(rng.integers(1, 13))
            w = int(rng.integers(1, 5)) if wide else int(rng.integers(1, 13))
            b.input([N, c, h, w])
        elif k == "seq":
            b.input([N, int(rng.integers(1, 13)), int(rng.choice([4, 8, 12, 16, 6]))])
        else:
            b.input([N, int(rng.integers(130, 300)) if wide else int(rng.integers(1, 40))])
    pats = [p for p, _ in PATTERNS]
    w = np.array([wt for _, wt in PATTERNS], np.float64)
    if dtype == "qdq":
        pats, w = [p_qdq, p_conv_block, p_unary, p_pool, p_binary], np.array([6, 2, 1, 1, 1], np.float64)
    tries = 0
    while len(b.nodes) < target_nodes and tries < 200:
        tries += 1
        p = pats[rng.choice(len(pats), p=w / w.sum())]
        if control and rng.random() < 0.15:
            p = rng.choice([p_if, p_loop])
        if p(b) is False:
            continue
    # the outputs: the tensors nothing reads (every computed value is checked), at most 4
    leaves = [t for t in b.pool if t.name not in b.used and t not in b.inputs]
    if not leaves:
        return None
    outs = leaves[-4:]
    if dtype == "qdq":
        q = {n for n, _ in b.qdq_steps}
        outs = [t for t in outs if t.name in q] or outs
    return build_case(b, seed, dtype, dynamic, outs)


def np_of(a, kind, dtype):
    """a constant's array as the model stores it"""
    if kind == "f":
        if dtype == "f16":
            return a.astype(np.float16)
        if dtype == "bf16":
            return bf16_bits(a)
        return a
    return a


def tensor_of(name, a, kind, dtype):
    if kind == "f" and dtype == "bf16":
        # (raw bytes: make_tensor would take a list as float values to convert)
        return helper.make_tensor(name, TensorProto.BFLOAT16, a.shape, bf16_bits(a).tobytes(), raw=True)
    if kind == "f32":
        return numpy_helper.from_array(np.asarray(a, np.float32), name)
    return numpy_helper.from_array(np_of(np.asarray(a), kind, dtype), name)


def elem_type(kind, dtype):
    if kind == "f":
        return FT["f32" if dtype == "qdq" else dtype]
    if kind == "f32":
        return TensorProto.FLOAT
    return ITYPES[kind]


def make_graph(b, dtype, outs, name, inputs, twin):
    """the graph in dtype (f32 for the twin)"""
    ft = "f32" if twin or dtype == "qdq" else dtype
    nodes = []
    for n in b.nodes:
        if isinstance(n, tuple) and n[0] == "IF":
            _, cond, x, (s1, y1), (s2, y2), t = n
            g1 = sub_graph(s1, y1, ft, "then", twin)
            g2 = sub_graph(s2, y2, ft, "else", twin)
            nodes.append(helper.make_node("If", [cond.name], [t.name], then_branch=g1, else_branch=g2))
        elif isinstance(n, tuple) and n[0] == "LOOP":
            _, m, x, y_in, sub, f, t = n
            body = loop_graph(sub, y_in, f, ft, twin)
            nodes.append(helper.make_node("Loop", [m.name, "", x.name], [t.name], body=body))
        else:
            nodes.append(n)
    inits = [tensor_of(nm, round_to(a, dtype) if (twin and k == "f") else a, k, ft) for nm, a, k in b.inits]
    vin = []
    for t in inputs:
        shape = ["N"] + t.shape[1:] if t.dyn else t.shape
        vin.append(helper.make_tensor_value_info(t.name, elem_type(t.kind, ft), shape))
    vout = [helper.make_tensor_value_info(t.name, elem_type(t.kind, ft), dims_of(t)) for t in outs]
    return helper.make_graph(nodes, name, vin, vout, inits)


def dims_of(t):
    return ["N"] + t.shape[1:] if t.dyn else t.shape


def sub_graph(sub, y, ft, name, twin):
    nodes = [n for n in sub.nodes]
    inits = [tensor_of(nm, round_to(a, sub.dtype) if (twin and k == "f") else a, k, ft) for nm, a, k in sub.inits]
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(y.name, FT[ft], dims_of(y))], inits)


def loop_graph(sub, y_in, f, ft, twin):
    it = helper.make_tensor_value_info("iter_" + y_in.name, TensorProto.INT64, [])
    cin = helper.make_tensor_value_info("cond_in_" + y_in.name, TensorProto.BOOL, [])
    yi = helper.make_tensor_value_info(y_in.name, FT[ft], dims_of(y_in))
    cout = helper.make_node("Identity", ["cond_in_" + y_in.name], ["cond_out_" + y_in.name])
    nodes = [cout] + list(sub.nodes)
    inits = [tensor_of(nm, round_to(a, sub.dtype) if (twin and k == "f") else a, k, ft) for nm, a, k in sub.inits]
    return helper.make_graph(nodes, "body", [it, cin, yi],
                             [helper.make_tensor_value_info("cond_out_" + y_in.name, TensorProto.BOOL, []),
                              helper.make_tensor_value_info(f.name, FT[ft], dims_of(f))], inits)


def build_case(b, seed, dtype, dynamic, outs):
    inputs = list(b.inputs) + [t for t, _ in b.extra_inputs]
    model = helper.make_model(make_graph(b, dtype, outs, "difftest_%d" % seed, inputs, False),
                              opset_imports=[helper.make_opsetid("", OPSET)], producer_name="onnxcc-difftest")
    model.ir_version = 8
    twin = helper.make_model(make_graph(b, dtype, outs, "difftest_%d_twin" % seed, inputs, True),
                             opset_imports=[helper.make_opsetid("", OPSET)], producer_name="onnxcc-difftest")
    twin.ir_version = 8
    rng = np.random.default_rng(seed + 1)
    # the runs: each size of the run-time dim, each value of the control inputs
    sizes = [b.inputs[0].shape[0]]
    if dynamic:
        top = b.inputs[0].shape[0]
        sizes = sorted({1, max(1, top // 2), top})
    extra_vals = [vals for _, vals in b.extra_inputs]
    runs = []
    for k, n in enumerate(sizes):
        for j in range(max([len(v) for v in extra_vals] or [1])):
            feeds = []
            for t in b.inputs:
                sh = [n] + t.shape[1:] if t.dyn else t.shape
                a = rng.standard_normal(sh).astype(np.float32)
                if dtype == "qdq":  # on the quantization grid's range
                    a = np.clip(a, -3, 3)
                feeds.append(round_to(a, dtype if dtype in ("f16", "bf16") else "f32"))
            for vals in extra_vals:
                feeds.append(vals[j % len(vals)])
            runs.append(feeds)
    return Case(seed=seed, dtype=dtype, dynamic=dynamic, model=model, twin=twin, inputs=inputs, runs=runs,
                dims={"N": (1, b.inputs[0].shape[0])} if dynamic else {}, patterns=b.patterns,
                nodes=len(b.nodes), qdq_steps=[s for n, s in b.qdq_steps if n in {t.name for t in outs}],
                outputs=[t.name for t in outs])


def write(case, d):
    """model.onnx, twin.onnx, run_K/in_J.npy (test dtype) and run_K/twin_J.npy
    (f32), meta.json"""
    os.makedirs(d, exist_ok=True)
    onnx.save(case.model, os.path.join(d, "model.onnx"))
    onnx.save(case.twin, os.path.join(d, "twin.onnx"))
    for k, feeds in enumerate(case.runs):
        rd = os.path.join(d, "run_%d" % k)
        os.makedirs(rd, exist_ok=True)
        for j, (t, a) in enumerate(zip(case.inputs, feeds)):
            a = np.asarray(a)
            np.save(os.path.join(rd, "twin_%d.npy" % j), a)
            if t.kind == "f" and case.dtype == "f16":
                a = a.astype(np.float16)
            elif t.kind == "f" and case.dtype == "bf16":
                a = bf16_bits(a)
            np.save(os.path.join(rd, "in_%d.npy" % j), a)
    meta = dict(seed=case.seed, dtype=case.dtype, dynamic=case.dynamic, dims=case.dims, patterns=case.patterns,
                nodes=case.nodes, runs=len(case.runs), qdq_steps=case.qdq_steps, outputs=case.outputs)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("seed", type=int)
    ap.add_argument("outdir")
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16", "qdq"])
    ap.add_argument("--dynamic", action="store_true", default=None)
    ap.add_argument("--control", action="store_true", default=None)
    a = ap.parse_args()
    case = generate(a.seed, a.dtype, a.dynamic, a.control)
    if case is None:
        print("seed %d: no model" % a.seed, file=sys.stderr)
        return 1
    onnx.checker.check_model(case.model)
    print(json.dumps(write(case, a.outdir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
