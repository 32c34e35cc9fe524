#!/usr/bin/python3
"""make_opt_cases.py: end-to-end cases for the optimizer and the fast kernels.

Writes tests/e2e/cases/opt/test_opt_*/{model.onnx,test_data_set_0/*.pb} in the
backend tests' layout: small graphs whose shapes hit the kernels' edges
(channel counts that are not a multiple of any vector width, tails of
position tiles, strides, dilations, asymmetric pads, depthwise, a plain
3-channel input, batch 2) and the patterns the passes rewrite (epilogues,
elementwise chains, normalizations, attention, transposes). Expected outputs
are computed in float64 with torch and numpy, independently of onnxcc, and
committed; `make opt-cases` runs them for every --cpu target this machine
can execute (tests/e2e/opt_cases.sh). Run with Debian's /usr/bin/python3.
"""
import os
import zlib
import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import helper as h, numpy_helper as nh, TensorProto as T

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "opt")
RNG = np.random.default_rng(2026)


def seed(name):
    """Each case draws from its own stream, so adding a case changes no other."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(name.encode()))


def save(name, nodes, inputs, outputs, inits, opset=13):
    """inputs: [(name, array)]; outputs: [(name, array)]; inits: [(name, array)]"""
    g = h.make_graph(
        nodes, name,
        [h.make_tensor_value_info(n, T.FLOAT, a.shape) for n, a in inputs],
        [h.make_tensor_value_info(n, T.FLOAT, a.shape) for n, a in outputs],
        [nh.from_array(a.astype(np.float32) if a.dtype.kind == "f" else a, n) for n, a in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], producer_name="make_opt_cases")
    m.ir_version = 8
    if opset <= onnx.defs.onnx_opset_version():  # Debian's onnx may predate the opset
        onnx.checker.check_model(m)
    d = os.path.join(ROOT, "test_opt_" + name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(nh.from_array(a.astype(np.float32), n).SerializeToString())
    for k, (n, a) in enumerate(outputs):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % k), "wb") as f:
            f.write(nh.from_array(a.astype(np.float32), n).SerializeToString())


def rnd(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def t64(a):
    return torch.from_numpy(np.asarray(a, np.float64))


class Net:
    """A graph under construction and its float64 value, side by side."""

    def __init__(self, x):
        self.nodes, self.inits, self.k = [], [], 0
        self.inputs = [("x", x)]
        self.vals = {"x": t64(x)}

    def name(self, p):
        self.k += 1
        return "%s%d" % (p, self.k)

    def const(self, a, p="w"):
        n = self.name(p)
        self.inits.append((n, a))
        self.vals[n] = t64(a)
        return n

    def op(self, op, ins, val, **attrs):
        o = self.name(op.lower())
        self.nodes.append(h.make_node(op, ins, [o], name=o, **attrs))
        self.vals[o] = val
        return o

    def conv(self, x, m, k, stride=1, pad=0, dil=1, group=1, bias=True, pads=None):
        c = self.vals[x].shape[1]
        kh, kw = (k, k) if isinstance(k, int) else k
        w = rnd(m, c // group, kh, kw, scale=1.0 / np.sqrt(c // group * kh * kw))
        b = rnd(m, scale=0.5) if bias else None
        pads = pads or [pad, pad, pad, pad]  # top, left, bottom, right
        xv = F.pad(self.vals[x], (pads[1], pads[3], pads[0], pads[2]))
        y = F.conv2d(xv, t64(w), t64(b) if bias else None, stride=stride, dilation=dil, groups=group)
        ins = [x, self.const(w)] + ([self.const(b, "b")] if bias else [])
        return self.op("Conv", ins, y, kernel_shape=[kh, kw], strides=[stride, stride], pads=pads,
                       dilations=[dil, dil], group=group)

    def relu(self, x):
        return self.op("Relu", [x], torch.relu(self.vals[x]))

    def sigmoid(self, x):
        return self.op("Sigmoid", [x], torch.sigmoid(self.vals[x]))

    def add(self, a, b):
        return self.op("Add", [a, b], self.vals[a] + self.vals[b])

    def mul(self, a, b):
        return self.op("Mul", [a, b], self.vals[a] * self.vals[b])

    def save(self, name, out, opset=13):
        save(name, self.nodes, self.inputs, [(out, self.vals[out].numpy())], self.inits, opset)


def conv_cases():
    # (name, input shape, conv kwargs)
    specs = [
        ("conv3x3_c5_m7", (1, 5, 9, 11), dict(m=7, k=3, pad=1)),
        ("conv1x1_c24_m40", (1, 24, 10, 10), dict(m=40, k=1)),
        ("conv1x1_s2_c16_m33", (1, 16, 9, 9), dict(m=33, k=1, stride=2)),
        ("conv3x3_s2_c20_m36", (1, 20, 15, 15), dict(m=36, k=3, stride=2, pad=1)),
        ("conv7x7_s2_c3_m18", (1, 3, 32, 30), dict(m=18, k=7, stride=2, pad=3)),
        ("conv3x3_dil2_c8_m8", (1, 8, 12, 12), dict(m=8, k=3, pad=2, dil=2)),
        ("conv3x3_nopad_c17_m70", (1, 17, 8, 21), dict(m=70, k=3)),
        ("conv_asym_pads", (1, 12, 10, 10), dict(m=20, k=(3, 1), pads=[1, 0, 2, 0])),
        ("conv1x3_c40_m24", (1, 40, 7, 7), dict(m=24, k=(1, 3), pads=[0, 1, 0, 1])),
        ("conv_batch2", (2, 6, 8, 8), dict(m=10, k=3, pad=1)),
        ("conv_m2", (1, 8, 16, 16), dict(m=2, k=1)),
        ("conv_nobias", (1, 16, 7, 7), dict(m=64, k=3, pad=1, bias=False)),
        ("conv_wide_row", (1, 16, 4, 61), dict(m=48, k=3, pad=1)),
        ("conv_big_c", (1, 96, 7, 7), dict(m=80, k=3, pad=1)),
        # weights past L2: the reduction in chunks (codegen/c/emit_blocked.c)
        ("conv_chunked_c300", (1, 300, 5, 6), dict(m=40, k=3, pad=1)),
        ("conv_chunked_flat_c2100", (1, 2100, 3, 5), dict(m=20, k=1)),
        ("dw3x3_c20", (1, 20, 13, 13), dict(m=20, k=3, pad=1, group=20)),
        ("dw5x5_s2_c40", (1, 40, 14, 14), dict(m=40, k=5, stride=2, pad=2, group=40)),
        ("dw3x3_batch2_c9", (2, 9, 10, 10), dict(m=9, k=3, pad=1, group=9)),
    ]
    for name, shape, kw in specs:
        seed(name)
        n = Net(rnd(*shape))
        y = n.conv("x", **kw)
        n.save(name, y)


def chain_cases():
    # a ResNet-style block: conv -> maxpool -> conv -> relu -> conv -> add -> relu -> GAP
    seed("resblock")
    n = Net(rnd(1, 3, 24, 24))
    a = n.relu(n.conv("x", 24, 3, stride=2, pad=1))
    p = n.op("MaxPool", [a], F.max_pool2d(n.vals[a], 3, 2, 1), kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1])
    b = n.relu(n.conv(p, 24, 3, pad=1))
    c = n.conv(b, 24, 3, pad=1)
    r = n.relu(n.add(c, p))
    gap = n.op("GlobalAveragePool", [r], n.vals[r].mean(dim=(2, 3), keepdim=True))
    n.save("resblock", gap)

    # an SE block with a plain [1,C,1,1] excitation
    seed("se_block")
    n = Net(rnd(1, 20, 9, 9))
    x = n.conv("x", 36, 1)
    s = n.op("GlobalAveragePool", [x], n.vals[x].mean(dim=(2, 3), keepdim=True))
    s = n.sigmoid(n.conv(n.relu(n.conv(s, 8, 1)), 36, 1))
    n.save("se_block", n.conv(n.mul(x, s), 12, 1))

    # an SE-style scale of rank 3, [C,1,1], computed (not a constant): the
    # layout pass re-lays out constants only, so this Mul stays plain
    seed("se_rank3")
    n = Net(rnd(1, 10, 7, 7))
    x = n.conv("x", 16, 3, pad=1)
    s = n.op("GlobalAveragePool", [x], n.vals[x].mean(dim=(2, 3), keepdim=True))
    r = n.op("Reshape", [s, n.const(np.array([16, 1, 1], np.int64), "shape")], n.vals[s].reshape(16, 1, 1))
    n.save("se_rank3", n.relu(n.mul(x, n.sigmoid(r))))

    # two convs concatenated on channels, then a conv; avgpool with and without pads counted
    seed("concat_avgpool")
    n = Net(rnd(1, 8, 12, 12))
    a, b = n.conv("x", 16, 3, pad=1), n.conv("x", 32, 1)
    cat = n.op("Concat", [a, b], torch.cat([n.vals[a], n.vals[b]], 1), axis=1)
    y = n.conv(cat, 24, 3, pad=1)
    p0 = n.op("AveragePool", [y], F.avg_pool2d(n.vals[y], 3, 2, 1, count_include_pad=False),
              kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    p1 = n.op("AveragePool", [y], F.avg_pool2d(n.vals[y], 3, 2, 1, count_include_pad=True),
              kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)
    n.save("concat_avgpool", n.add(p0, p1))

    # a per-channel constant scale and a scalar, and a Clip, on a conv output (layout of constants)
    seed("const_operands")
    n = Net(rnd(1, 6, 8, 8))
    y = n.conv("x", 20, 3, pad=1)
    sc = n.mul(y, n.const(rnd(20, 1, 1), "s"))
    sh = n.add(sc, n.const(np.array(0.25, np.float32), "c"))
    cl = n.op("Clip", [sh, n.const(np.array(-0.5, np.float32), "lo"), n.const(np.array(0.75, np.float32), "hi")],
              torch.clamp(n.vals[sh], -0.5, 0.75))
    n.save("const_operands", cl)


def head_cases():
    """A classifier head: conv, global pool, Flatten, Gemm. The pool's
    channel-blocked [N,C,1,1] output is read as the plain [N,C] in place
    (opt/plan.c reorder_view) where its channels fill whole blocks (32)
    or there is one image (18, padded to blocks of 4, 8 or 16 on the CPU),
    and copied where neither holds (18 channels, 2 images)."""
    for name, c, b in (("gap_gemm_c32", 32, 1), ("gap_gemm_c18", 18, 1), ("gap_gemm_c18_n2", 18, 2)):
        seed(name)
        n = Net(rnd(b, 6, 7, 7))
        y = n.relu(n.conv("x", c, 3, pad=1))
        s = n.op("GlobalAveragePool", [y], n.vals[y].mean(dim=(2, 3), keepdim=True))
        f = n.op("Flatten", [s], n.vals[s].reshape(b, c))
        w, bias = rnd(10, c, scale=1.0 / np.sqrt(c)), rnd(10, scale=0.5)
        g = n.op("Gemm", [f, n.const(w), n.const(bias, "b")], n.vals[f] @ t64(w).T + t64(bias), transB=1)
        n.save(name, g)


def pool_cases():
    """Pools on blocked conv outputs: windows inside, across borders, with
    ceil_mode, dilations, asymmetric pads, pads counted or not."""
    seed("pools")
    n = Net(rnd(1, 5, 17, 15))
    y = n.conv("x", 20, 3, pad=1)
    outs = []
    specs = [  # kernel, stride, pads (t, l, b, r), dilation, ceil, max?, count pads
        (3, 2, (1, 1, 1, 1), 1, 0, True, 0),
        (3, 2, (0, 0, 0, 0), 1, 1, True, 0),
        (2, 1, (0, 1, 1, 0), 2, 0, True, 0),
        (3, 2, (1, 1, 1, 1), 1, 1, False, 0),
        (3, 1, (1, 0, 2, 1), 1, 0, False, 1),
    ]
    for k, st, pd, dil, ceil, ismax, cnt in specs:
        xv = n.vals[y]
        if ismax:
            xp = F.pad(xv, (pd[1], pd[3], pd[0], pd[2]), value=-float("inf"))
            v = F.max_pool2d(xp, k, st, 0, dil, ceil_mode=bool(ceil))
            o = n.op("MaxPool", [y], v, kernel_shape=[k, k], strides=[st, st], pads=list(pd),
                     dilations=[dil, dil], ceil_mode=ceil)
        else:
            # average over the taps inside the input (or the padded extent with cnt)
            ones = torch.ones_like(xv)
            xp = F.pad(xv, (pd[1], pd[3], pd[0], pd[2]))
            cp = F.pad(ones, (pd[1], pd[3], pd[0], pd[2]), value=1.0 if cnt else 0.0)
            s_ = F.avg_pool2d(xp, k, st, 0, ceil_mode=bool(ceil), count_include_pad=True, divisor_override=1)
            c_ = F.avg_pool2d(cp, k, st, 0, ceil_mode=bool(ceil), count_include_pad=True, divisor_override=1)
            o = n.op("AveragePool", [y], s_ / c_, kernel_shape=[k, k], strides=[st, st], pads=list(pd),
                     ceil_mode=ceil, count_include_pad=cnt)
        outs.append(o)
    # one output: the pools flattened and concatenated
    flat = [n.op("Flatten", [o], n.vals[o].reshape(1, -1), axis=1) for o in outs]
    cat = n.op("Concat", flat, torch.cat([n.vals[f] for f in flat], 1), axis=1)
    n.save("pools", cat, opset=13)


def resize_cases():
    """Resize over H and W on a blocked conv output (20 channels: a partial
    channel block): linear half_pixel up, nearest asymmetric up, cubic
    align_corners down, linear pytorch_half_pixel to given sizes."""
    seed("resize")
    n = Net(rnd(1, 5, 13, 11))
    y = n.conv("x", 20, 3, pad=1)
    xv = n.vals[y]
    outs = []
    specs = [  # mode, coordinate_transformation_mode, scales or sizes, torch reference
        ("linear", "half_pixel", [1, 1, 2, 2], None,
         lambda v: F.interpolate(v, scale_factor=2, mode="bilinear", align_corners=False)),
        ("nearest", "asymmetric", [1, 1, 2, 3], None,
         lambda v: F.interpolate(v, scale_factor=(2, 3), mode="nearest")),
        ("cubic", "align_corners", None, [1, 20, 7, 8],
         lambda v: F.interpolate(v, size=(7, 8), mode="bicubic", align_corners=True)),
        ("linear", "pytorch_half_pixel", None, [1, 20, 20, 17],
         lambda v: F.interpolate(v, size=(20, 17), mode="bilinear", align_corners=False)),
    ]
    for mode, ctm, scales, sizes, ref in specs:
        if scales is not None:
            ins = [y, "", n.const(np.array(scales, np.float32), "scales")]
        else:
            ins = [y, "", "", n.const(np.array(sizes, np.int64), "sizes")]
        attrs = dict(mode=mode, coordinate_transformation_mode=ctm)
        if mode == "nearest":
            attrs["nearest_mode"] = "floor"
        outs.append(n.op("Resize", ins, ref(xv), **attrs))
    flat = [n.op("Flatten", [o], n.vals[o].reshape(1, -1), axis=1) for o in outs]
    cat = n.op("Concat", flat, torch.cat([n.vals[f] for f in flat], 1), axis=1)
    n.save("resize", cat, opset=13)


def epilogue_cases():
    # Conv + BatchNormalization (folded by opt/affine.c), then SiLU (x * sigmoid(x))
    seed("bn_silu")
    n = Net(rnd(1, 12, 10, 10))
    y = n.conv("x", 24, 3, pad=1)
    sc, bi, mu, var = rnd(24, scale=0.5) + 1, rnd(24, scale=0.2), rnd(24, scale=0.1), np.abs(rnd(24)) + 0.5
    bn = n.op("BatchNormalization", [y] + [n.const(v, "bn") for v in (sc, bi, mu, var)],
              (n.vals[y] - t64(mu)[None, :, None, None]) / torch.sqrt(t64(var) + 1e-5)[None, :, None, None]
              * t64(sc)[None, :, None, None] + t64(bi)[None, :, None, None], epsilon=1e-5)
    n.save("bn_silu", n.mul(bn, n.sigmoid(bn)))

    # Relu6 (Clip 0..6), HardSwish, LeakyRelu, Tanh after convs, a residual from an
    # independent branch computed after the conv in the file's order
    seed("activations")
    n = Net(rnd(1, 8, 9, 9, scale=3.0))
    a = n.conv("x", 16, 3, pad=1)
    r6 = n.op("Clip", [a, n.const(np.array(0, np.float32), "lo"), n.const(np.array(6, np.float32), "hi")],
              torch.clamp(n.vals[a], 0, 6))
    b = n.conv(r6, 16, 1)
    hs = n.op("HardSwish", [b], F.hardswish(n.vals[b]), )
    c = n.conv(hs, 16, 3, pad=1)
    side = n.conv("x", 16, 1)
    lr = n.op("LeakyRelu", [n.add(c, side)], F.leaky_relu(n.vals[c] + n.vals[side], 0.1), alpha=0.1)
    n.save("activations", n.op("Tanh", [lr], torch.tanh(n.vals[lr])), opset=14)

    # a chunked reduction with an epilogue on its last chunk (residual, Relu)
    seed("chunked_epilogue")
    n = Net(rnd(1, 40, 5, 5))
    a = n.conv("x", 300, 1)
    b = n.conv(a, 40, 3, pad=1)
    n.save("chunked_epilogue", n.relu(n.add(b, "x")))

    # a residual that is the conv's own input, over several groups of output
    # vectors: the output must not be stored over it (opt/plan.c), the
    # later groups still read every channel of it
    seed("self_resid")
    n = Net(rnd(1, 20, 6, 6))
    a = n.conv("x", 80, 1)
    n.save("self_resid", n.relu(n.add(n.conv(a, 80, 1), a)))

    # a conv whose result is also read by another node: no fusion across it
    seed("shared_result")
    n = Net(rnd(1, 8, 6, 6))
    a = n.conv("x", 16, 3, pad=1)
    r = n.relu(a)
    n.save("shared_result", n.add(r, a))

    # depthwise + per-channel scale and shift (folded), + HardSigmoid
    seed("dw_affine_hsig")
    n = Net(rnd(1, 24, 12, 12))
    d = n.conv("x", 24, 3, pad=1, group=24)
    m = n.add(n.mul(d, n.const(rnd(1, 24, 1, 1), "s")), n.const(rnd(24, 1, 1), "t"))
    n.save("dw_affine_hsig", n.op("HardSigmoid", [m], torch.clamp(0.2 * n.vals[m] + 0.5, 0, 1), alpha=0.2,
                                  beta=0.5))


def attention_cases():
    """Exported attention: BERT-style heads of [B, S, H*d] tensors, 4-D heads
    without the split, and nn.MultiheadAttention's [B*H, S, d] batches; with
    and without an additive mask; odd lengths so tiles have tails."""

    def heads(n, x, B, S, H, d, perm):
        r = n.op("Reshape", [x, n.const(np.array([B, S, H, d], np.int64), "shape")],
                 n.vals[x].reshape(B, S, H, d))
        return n.op("Transpose", [r], n.vals[r].permute(*perm), perm=list(perm))

    def sdpa(n, q, kt, v, scale, mask=None, div=True):
        s = n.op("MatMul", [q, kt], n.vals[q] @ n.vals[kt])
        if div:
            s = n.op("Div", [s, n.const(np.array(1 / scale, np.float32), "c")], n.vals[s] / (1 / scale))
        else:
            s = n.op("Mul", [n.const(np.array(scale, np.float32), "c"), s], n.vals[s] * scale)
        if mask is not None:
            s = n.add(s, mask)
        p = n.op("Softmax", [s], torch.softmax(n.vals[s], -1), axis=-1)
        return n.op("MatMul", [p, v], n.vals[p] @ n.vals[v])

    B, S, H, d = 2, 37, 3, 20
    seed("attn_bert_heads")
    n = Net(rnd(B, S, H * d))
    proj = []
    for _ in range(3):
        w = n.const(rnd(H * d, H * d, scale=0.3))
        proj.append(n.op("MatMul", ["x", w], n.vals["x"] @ n.vals[w]))
    q, k, v = proj
    mask = np.zeros((1, 1, 1, S), np.float32)
    mask[..., -5:] = -10000.0
    ctx = sdpa(n, heads(n, q, B, S, H, d, (0, 2, 1, 3)), heads(n, k, B, S, H, d, (0, 2, 3, 1)),
               heads(n, v, B, S, H, d, (0, 2, 1, 3)), 1 / np.sqrt(d), n.const(mask, "mask"))
    t = n.op("Transpose", [ctx], n.vals[ctx].permute(0, 2, 1, 3), perm=[0, 2, 1, 3])
    y = n.op("Reshape", [t, n.const(np.array([B, S, H * d], np.int64), "shape")], n.vals[t].reshape(B, S, H * d))
    n.save("attn_bert_heads", y)

    # 4-D heads given directly (no split to recognize); Mul scale, no mask
    seed("attn_4d")
    n = Net(rnd(1, 2, 19, 16))
    n.inputs += [("k", rnd(1, 2, 16, 19)), ("v", rnd(1, 2, 19, 24))]
    n.vals["k"], n.vals["v"] = t64(n.inputs[1][1]), t64(n.inputs[2][1])
    n.save("attn_4d", sdpa(n, "x", "k", "v", 0.25, div=False))

    # nn.MultiheadAttention's [B*H, S, d] batches with a [B*H, S, S] mask
    seed("attn_3d_batch")
    n = Net(rnd(6, 11, 8))
    n.inputs += [("k", rnd(6, 8, 11)), ("v", rnd(6, 11, 8))]
    n.vals["k"], n.vals["v"] = t64(n.inputs[1][1]), t64(n.inputs[2][1])
    mm = n.const(rnd(6, 11, 11), "mask")
    n.save("attn_3d_batch", sdpa(n, "x", "k", "v", 1 / np.sqrt(8), mm))

    # nn.MultiheadAttention as PyTorch exports it: the in_proj's Q, K, V
    # sliced from one MatMul, heads as [S, B*H, d] batches transposed to
    # [B*H, S, d] (K^T by (1,2,0)), Q scaled before the product, a causal
    # masked fill (a bool attn_mask) and a key padding mask [B*H, 1, S]
    # added, merged back
    # by a Transpose and a Reshape into the out_proj Gemm, whose [S*B, E]
    # result is reshaped to [S, B, E] for the residual Add and a Relu
    # (opt/attention.c: N heads of [1, S, N*d] read in place; opt/epilogue.c:
    # the Add and the Relu fused into the Gemm past the Reshape; on the GPU
    # opt/siblings.c: the in_proj writes Q, K, V itself)
    def in_proj(n, E, x="x"):  # x [.., E] times [E, 3E] plus a bias: Q, K, V side by side
        w, bb = n.const(rnd(E, 3 * E, scale=0.3)), n.const(rnd(3 * E), "b")
        return n.add(n.op("MatMul", [x, w], n.vals[x] @ n.vals[w]), bb)

    def mha(name, batch_first, layers=1):
        # batch_first: x [B, S, E], transposed to [S, B, E] before the
        # in_proj and the result back before the residual, as
        # nn.MultiheadAttention(batch_first=True) exports it (on the GPU the
        # attention reads the projections sequence first and opt/rows.c
        # removes both Transposes). layers > 1: that many blocks, each on
        # the last one's output (opt/rows.c: a region each), with the key
        # padding mask torch 1.13 builds from a second input `keep` [B, S]
        # (0: a padded key): Equal -> Reshape [B, 1, 1, S] -> Expand over
        # the heads -> Reshape [B*H, 1, S] -> Where(-inf, 0) -> Mul by 1
        # (opt/attention.c: the same ops on [B, 1, 1, S], not expanded)
        S, B, H, d = 13, 2, 3, 8
        E = H * d
        seed(name)
        n = Net(rnd(B, S, E) if batch_first else rnd(S, B, E))
        if layers > 1:
            keep = np.ones((B, S), np.float32)
            keep[1, -4:] = 0
            n.inputs.append(("keep", keep))
            n.vals["keep"] = t64(keep)
            z = n.op("Equal", ["keep", n.const(np.array(0, np.float32), "z")], n.vals["keep"] == 0)
            r = n.op("Reshape", [z, n.const(np.array([B, 1, 1, S], np.int64), "shape")], n.vals[z].reshape(B, 1, 1, S))
            e = n.op("Expand", [r, n.const(np.array([B, H, 1, S], np.int64), "shape")], n.vals[r].expand(B, H, 1, S))
            r = n.op("Reshape", [e, n.const(np.array([B * H, 1, S], np.int64), "shape")], n.vals[e].reshape(B * H, 1, S))
            ninf, zero = n.const(np.array(-np.inf, np.float32), "fill"), n.const(np.array(0, np.float32), "z")
            w = n.op("Where", [r, ninf, zero], torch.where(n.vals[r], n.vals[ninf], n.vals[zero]))
            kpm = n.op("Mul", [w, n.const(np.array(1, np.float32), "one")], n.vals[w] * 1)
        for _ in range(layers):
            mha_layer(n, S, B, H, d, batch_first, kpm if layers > 1 else None)
        n.save(name, n.last)

    def mha_layer(n, S, B, H, d, batch_first, kpm):
        E = H * d
        x = src = getattr(n, "last", "x")
        if batch_first:
            src = n.op("Transpose", [x], n.vals[x].permute(1, 0, 2), perm=[1, 0, 2])
        qkv = in_proj(n, E, src)
        parts = []
        for i in range(3):
            st, en, ax = (n.const(np.array([v], np.int64), p) for v, p in ((i * E, "st"), ((i + 1) * E, "en"), (2, "ax")))
            parts.append(n.op("Slice", [qkv, st, en, ax], n.vals[qkv][:, :, i * E:(i + 1) * E]))

        def batch(x, perm):
            r = n.op("Reshape", [x, n.const(np.array([S, B * H, d], np.int64), "shape")], n.vals[x].reshape(S, B * H, d))
            return n.op("Transpose", [r], n.vals[r].permute(*perm), perm=list(perm))

        q = batch(parts[0], (1, 0, 2))
        q = n.op("Div", [q, n.const(np.array(np.sqrt(d), np.float32), "c")], n.vals[q] / np.float32(np.sqrt(d)))
        kt, v = batch(parts[1], (1, 2, 0)), batch(parts[2], (1, 0, 2))
        sc = n.op("MatMul", [q, kt], n.vals[q] @ n.vals[kt])
        future = np.triu(np.ones((S, S), bool), 1)
        sc = n.op("Where", [n.const(future, "future"), n.const(np.array(-np.inf, np.float32), "fill"), sc],
                  torch.where(torch.from_numpy(future), t64(np.float32(-np.inf)), n.vals[sc]))
        if kpm is None:
            pad = np.zeros((B * H, 1, S), np.float32)
            pad[H:, :, -4:] = -10000.0
            kpm = n.const(pad, "pad")
        sc = n.add(sc, kpm)
        p = n.op("Softmax", [sc], torch.softmax(n.vals[sc], -1), axis=-1)
        ctx = n.op("MatMul", [p, v], n.vals[p] @ n.vals[v])
        t = n.op("Transpose", [ctx], n.vals[ctx].permute(1, 0, 2), perm=[1, 0, 2])
        m = n.op("Reshape", [t, n.const(np.array([S * B, E], np.int64), "shape")], n.vals[t].reshape(S * B, E))
        wo, bo = n.const(rnd(E, E, scale=0.3)), n.const(rnd(E), "b")
        o = n.op("Gemm", [m, wo, bo], n.vals[m] @ n.vals[wo].T + n.vals[bo], transB=1)
        o = n.op("Reshape", [o, n.const(np.array([S, B, E], np.int64), "shape")], n.vals[o].reshape(S, B, E))
        if batch_first:
            o = n.op("Transpose", [o], n.vals[o].permute(1, 0, 2), perm=[1, 0, 2])
        n.last = n.relu(n.add(o, x))

    mha("attn_mha", False)
    mha("attn_mha_bf", True)
    mha("attn_mha_bf2", True, layers=2)

    # a GPT-2 block as HuggingFace exports it: c_attn Split into Q, K, V,
    # BERT-style heads, the causal mask a masked fill that keeps the scores
    # where it holds (Where(causal, S, finfo.min)), then an additive padding
    # mask [B, 1, 1, S] (opt/attention.c: both one additive mask)
    S, B, H, d = 11, 2, 3, 8
    E = H * d
    seed("attn_gpt")
    n = Net(rnd(B, S, E))
    qkv = in_proj(n, E)
    outs = [n.name("split") for _ in range(3)]
    n.nodes.append(h.make_node("Split", [qkv, n.const(np.array([E, E, E], np.int64), "sizes")], outs, axis=2))
    for i, o in enumerate(outs):
        n.vals[o] = n.vals[qkv][:, :, i * E:(i + 1) * E]
    q, k, v = (heads(n, x, B, S, H, d, p) for x, p in zip(outs, ((0, 2, 1, 3), (0, 2, 3, 1), (0, 2, 1, 3))))
    sc = n.op("MatMul", [q, k], n.vals[q] @ n.vals[k])
    sc = n.op("Div", [sc, n.const(np.array(np.sqrt(d), np.float32), "c")], n.vals[sc] / np.float32(np.sqrt(d)))
    causal = np.tril(np.ones((S, S), bool)).reshape(1, 1, S, S)
    fmin = np.array(np.finfo(np.float32).min, np.float32)
    sc = n.op("Where", [n.const(causal, "causal"), sc, n.const(fmin, "fill")],
              torch.where(torch.from_numpy(causal), n.vals[sc], t64(fmin)))
    pad = np.zeros((B, 1, 1, S), np.float32)
    pad[1, ..., -3:] = -10000.0
    sc = n.add(sc, n.const(pad, "pad"))
    p = n.op("Softmax", [sc], torch.softmax(n.vals[sc], -1), axis=-1)
    ctx = n.op("MatMul", [p, v], n.vals[p] @ n.vals[v])
    t = n.op("Transpose", [ctx], n.vals[ctx].permute(0, 2, 1, 3), perm=[0, 2, 1, 3])
    m = n.op("Reshape", [t, n.const(np.array([B, S, E], np.int64), "shape")], n.vals[t].reshape(B, S, E))
    wo, bo = n.const(rnd(E, E, scale=0.3)), n.const(rnd(E), "b")
    o = n.add(n.op("MatMul", [m, wo], n.vals[m] @ n.vals[wo]), bo)
    n.save("attn_gpt", n.add(o, "x"))


def gemm_cases():
    """The GEMM: a long reduction in chunks (B's panel past L2), with a bias
    and Relu epilogue; Gemm with transB, alpha, beta and C; a runtime B
    with batch broadcasting; widths that are not a multiple of any vector."""
    seed("gemm_chunked")
    n = Net(rnd(40, 2600))
    w, bb = n.const(rnd(2600, 70, scale=0.02)), n.const(rnd(70), "b")
    y = n.op("MatMul", ["x", w], n.vals["x"] @ n.vals[w])
    n.save("gemm_chunked", n.relu(n.add(y, bb)))

    seed("gemm_attrs")
    n = Net(rnd(17, 33))
    w, c = n.const(rnd(45, 33)), n.const(rnd(45), "c")
    y = n.op("Gemm", ["x", w, c], 0.5 * (n.vals["x"] @ n.vals[w].T) + 2.0 * n.vals[c], transB=1, alpha=0.5, beta=2.0)
    n.save("gemm_attrs", y)

    seed("matmul_runtime_b")
    n = Net(rnd(2, 3, 13, 21))
    n.inputs.append(("b", rnd(3, 21, 19)))
    n.vals["b"] = t64(n.inputs[1][1])
    n.save("matmul_runtime_b", n.op("MatMul", ["x", "b"], n.vals["x"] @ n.vals["b"]))

    # a gated MLP as LLaMA's: down(silu(x Wg) * (x Wu)) + x, SiLU as
    # x * sigmoid(x); on the GPU the gate and up projections are one
    # product of interleaved columns (opt/siblings.c), over 5 rows and a
    # reduction of 256 (split-K) and over 2 x 35 rows and one of 48
    def glu_mlp(name, shape, hidden):
        seed(name)
        n = Net(rnd(*shape))
        k = shape[-1]
        wg, wu = n.const(rnd(k, hidden, scale=k ** -0.5)), n.const(rnd(k, hidden, scale=k ** -0.5))
        gt = n.op("MatMul", ["x", wg], n.vals["x"] @ n.vals[wg])
        up = n.op("MatMul", ["x", wu], n.vals["x"] @ n.vals[wu])
        act = n.mul(gt, n.sigmoid(gt))
        h_ = n.mul(act, up)
        wd = n.const(rnd(hidden, k, scale=hidden ** -0.5))
        n.save(name, n.add(n.op("MatMul", [h_, wd], n.vals[h_] @ n.vals[wd]), "x"))

    glu_mlp("glu_mlp", (5, 256), 88)
    glu_mlp("glu_mlp_rows", (2, 35, 48), 40)


def norm_cases():
    """The decompositions exporters write for LayerNorm, RMSNorm and GELU
    (opt/norm.c makes one node of each), the row kernels they then run on
    (codegen/c/emit_rows.c: rows whose length is not a multiple of any vector
    width), Softmax and LogSoftmax over the last axis with large and
    negative values, and Pow / Reciprocal in fused vector loops."""

    def scalar(n, v, p="c"):
        return n.const(np.array(v, np.float32), p)

    def layernorm(n, x, axes, opset18=False, square="pow", recip=False, gamma=None, beta=None, left=False):
        xv = n.vals[x]
        dims = tuple(range(xv.dim() - len(axes), xv.dim()))
        ax = [n.const(np.array(axes, np.int64), "axes")] if opset18 else []
        kw = {} if opset18 else {"axes": axes}
        m = n.op("ReduceMean", [x] + ax, xv.mean(dim=dims, keepdim=True), **kw)
        d = n.op("Sub", [x, m], xv - n.vals[m])
        if square == "pow":
            sq = n.op("Pow", [d, scalar(n, 2, "two")], n.vals[d] ** 2)
        else:
            sq = n.op("Mul", [d, d], n.vals[d] * n.vals[d])
        v = n.op("ReduceMean", [sq] + ax, n.vals[sq].mean(dim=dims, keepdim=True), **kw)
        e = n.op("Add", [v, scalar(n, 1e-5, "eps")], n.vals[v] + 1e-5)
        s = n.op("Sqrt", [e], torch.sqrt(n.vals[e]))
        if recip:
            r = n.op("Reciprocal", [s], 1 / n.vals[s])
            y = n.op("Mul", [r, d], n.vals[d] / n.vals[s])
        else:
            y = n.op("Div", [d, s], n.vals[d] / n.vals[s])
        if gamma is not None:
            gc = n.const(gamma, "gamma")
            y = n.op("Mul", [gc, y] if left else [y, gc], n.vals[y] * n.vals[gc])
        if beta is not None:
            bc = n.const(beta, "beta")
            y = n.op("Add", [y, bc], n.vals[y] + n.vals[bc])
        return y

    # opset 13 (axes attribute), gamma and beta, rows of 37 after a MatMul + residual
    seed("norm_layernorm_13")
    n = Net(rnd(2, 7, 37))
    w = n.const(rnd(37, 37, scale=0.2))
    r = n.add(n.op("MatMul", ["x", w], n.vals["x"] @ n.vals[w]), "x")
    n.save("norm_layernorm_13", layernorm(n, r, [-1], gamma=rnd(37) + 1, beta=rnd(37)))

    # opset 18 (axes an input) over the last two axes (rows of 55), Mul(d, d),
    # d * Reciprocal(s), neither gamma nor beta; values around 10
    seed("norm_layernorm_18")
    n = Net(rnd(3, 5, 11) + 10)
    n.save("norm_layernorm_18", layernorm(n, "x", [-2, -1], opset18=True, square="mul", recip=True), opset=18)

    # gamma only, on the left and shaped [1, 19]; rows of 19
    seed("norm_layernorm_gamma")
    n = Net(rnd(4, 3, 19, scale=3))
    n.save("norm_layernorm_gamma", layernorm(n, "x", [-1], gamma=rnd(1, 19), left=True))

    # RMSNorm: x / sqrt(mean(x^2) + eps) * w over rows of 40
    seed("norm_rmsnorm")
    n = Net(rnd(4, 6, 40))
    x = n.vals["x"]
    sq = n.op("Pow", ["x", scalar(n, 2, "two")], x ** 2)
    v = n.op("ReduceMean", [sq], n.vals[sq].mean(-1, keepdim=True), axes=[-1])
    e = n.op("Add", [v, scalar(n, 1e-6, "eps")], n.vals[v] + 1e-6)
    s = n.op("Sqrt", [e], torch.sqrt(n.vals[e]))
    y = n.op("Div", ["x", s], x / n.vals[s])
    wc = n.const(rnd(40), "w")
    n.save("norm_rmsnorm", n.op("Mul", [y, wc], n.vals[y] * n.vals[wc]))

    # LLaMA's: (w * x) * (1 / sqrt(mean(x * x) + eps)), rows of 24
    seed("norm_rmsnorm_llama")
    n = Net(rnd(2, 5, 24, scale=2))
    x = n.vals["x"]
    sq = n.op("Mul", ["x", "x"], x * x)
    v = n.op("ReduceMean", [sq], n.vals[sq].mean(-1, keepdim=True), axes=[-1])
    e = n.op("Add", [scalar(n, 1e-5, "eps"), v], n.vals[v] + 1e-5)
    s = n.op("Sqrt", [e], torch.sqrt(n.vals[e]))
    r = n.op("Div", [scalar(n, 1, "one"), s], 1 / n.vals[s])
    wc = n.const(rnd(24), "w")
    wx = n.op("Mul", [wc, "x"], n.vals[wc] * x)
    n.save("norm_rmsnorm_llama", n.op("Mul", [wx, r], n.vals[wx] * n.vals[r]))

    # GELU, erf form as BERT exports it (MatMul + bias, / sqrt 2, (1 + erf) x, * 0.5:
    # an epilogue), then as x * (1 / sqrt 2) with the 0.5 first, standalone
    seed("norm_gelu_erf")
    n = Net(rnd(5, 70))
    w, b = n.const(rnd(70, 50, scale=0.2)), n.const(rnd(50), "b")
    a = n.op("Add", [b, n.op("MatMul", ["x", w], n.vals["x"] @ n.vals[w])], None)
    n.vals[a] = n.vals[b] + n.vals["x"] @ n.vals[w]
    ref = lambda v: 0.5 * v * (1 + torch.erf(v / np.sqrt(2)))
    u = n.op("Div", [a, scalar(n, np.sqrt(2), "sqrt2")], None)
    f = n.op("Erf", [u], None)
    p1 = n.op("Add", [f, scalar(n, 1, "one")], None)
    m = n.op("Mul", [a, p1], None)
    g1 = n.op("Mul", [m, scalar(n, 0.5, "half")], ref(n.vals[a]))
    u = n.op("Mul", [g1, scalar(n, 1 / np.sqrt(2), "isqrt2")], None)
    f = n.op("Erf", [u], None)
    p1 = n.op("Add", [scalar(n, 1, "one"), f], None)
    h_ = n.op("Mul", [scalar(n, 0.5, "half"), g1], None)
    n.save("norm_gelu_erf", n.op("Mul", [h_, p1], ref(n.vals[g1])))

    # GELU, tanh form: torch's export (x * x * x as Muls) and x^3 as Pow, rows of 45
    seed("norm_gelu_tanh")
    n = Net(rnd(3, 45, scale=2))
    ref = lambda v: 0.5 * v * (1 + torch.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3)))
    x = "x"
    for cube in ("mul", "pow"):
        if cube == "mul":
            c3 = n.op("Mul", [x, n.op("Mul", [x, x], None)], None)
        else:
            c3 = n.op("Pow", [x, scalar(n, 3, "three")], None)
        k = n.op("Mul", [scalar(n, 0.044715, "kappa"), c3], None)
        i = n.op("Mul", [scalar(n, np.sqrt(2 / np.pi), "beta"), n.op("Add", [x, k], None)], None)
        t = n.op("Add", [scalar(n, 1, "one"), n.op("Tanh", [i], None)], None)
        x = n.op("Mul", [scalar(n, 0.5, "half"), n.op("Mul", [x, t], None)], ref(n.vals[x]))
    n.save("norm_gelu_tanh", x)

    # Softmax over the last axis: rows of 37 around +5000, -5000 and 0 (the
    # maximum subtracted exactly), a -10000 mask column; rows of 10 (a partial
    # vector only)
    seed("norm_softmax")
    xv = rnd(3, 5, 37, scale=20)
    xv[0] += 5000
    xv[1] -= 5000
    xv[2, :, 3] = -10000
    n = Net(xv)
    s1 = n.op("Softmax", ["x"], torch.softmax(n.vals["x"], -1), axis=-1)
    r = n.op("Reshape", [s1, n.const(np.array([-1, 37], np.int64), "shape")], n.vals[s1].reshape(-1, 37))
    w = n.const(rnd(37, 10, scale=5))
    z = n.op("MatMul", [r, w], n.vals[r] @ n.vals[w])
    n.save("norm_softmax", n.op("Softmax", [z], torch.softmax(n.vals[z], -1), axis=1))

    # LogSoftmax over the last axis, rows of 37 around -3000, and opset 11's
    # 2-D coercion (axis 1 of [2, 3, 7]: rows of 21)
    seed("norm_logsoftmax")
    n = Net(rnd(4, 37, scale=30) - 3000)
    n.save("norm_logsoftmax", n.op("LogSoftmax", ["x"], torch.log_softmax(n.vals["x"], -1), axis=-1))
    seed("norm_logsoftmax_2d")
    n = Net(rnd(2, 3, 7, scale=4))
    n.save("norm_logsoftmax_2d", n.op("LogSoftmax", ["x"], torch.log_softmax(n.vals["x"].reshape(2, 21), -1).reshape(2, 3, 7),
                                      axis=1), opset=11)

    # a pre-norm block: h = x + x W1 (the residual stream), RMSNorm(h) into
    # the second MatMul, whose result h + n W2 reads h again; rows of 48
    # (on the GPU the RMSNorm is computed by the first MatMul's kernel,
    # opt/gemmnorm.c, whose product h stays an output of it)
    seed("norm_prenorm_rms")
    n = Net(rnd(3, 21, 48))
    w1 = n.const(rnd(48, 48, scale=0.2))
    hh = n.add(n.op("MatMul", ["x", w1], n.vals["x"] @ n.vals[w1]), "x")
    hv = n.vals[hh]
    sq = n.op("Pow", [hh, scalar(n, 2, "two")], hv ** 2)
    v = n.op("ReduceMean", [sq], n.vals[sq].mean(-1, keepdim=True), axes=[-1])
    e = n.op("Add", [v, scalar(n, 1e-6, "eps")], n.vals[v] + 1e-6)
    s = n.op("Sqrt", [e], torch.sqrt(n.vals[e]))
    y = n.op("Div", [hh, s], hv / n.vals[s])
    gc = n.const(rnd(48), "g")
    nn_ = n.op("Mul", [y, gc], n.vals[y] * n.vals[gc])
    w2 = n.const(rnd(48, 48, scale=0.2))
    n.save("norm_prenorm_rms", n.add(hh, n.op("MatMul", [nn_, w2], n.vals[nn_] @ n.vals[w2])))

    # Gemm (B transposed, a bias) then LayerNorm over rows of 1024, 20 rows:
    # on the GPU a row is too long for the GEMM kernel's tail, so the node
    # normalizes them by a second kernel (codegen/cuda/cuda_tile.c)
    seed("norm_layernorm_wide")
    n = Net(rnd(20, 24))
    wt, bc = n.const(rnd(1024, 24, scale=0.3)), n.const(rnd(1024), "b")
    gm = n.op("Gemm", ["x", wt, bc], n.vals["x"] @ n.vals[wt].T + n.vals[bc], transB=1)
    n.save("norm_layernorm_wide", layernorm(n, gm, [-1], gamma=rnd(1024) + 1, beta=rnd(1024)))

    # Pow by 2, 3, 1, 0.5, -1, -0.5 (vector forms) and 2.5 (scalar), Reciprocal
    seed("norm_pow")
    n = Net(np.abs(rnd(3, 21)) + 0.5)
    x = "x"
    for p in (2, 0.5, 3, -0.5, 1, -1, 2.5):
        x = n.op("Pow", [x, scalar(n, p, "p")], n.vals[x] ** p)
    n.save("norm_pow", n.op("Reciprocal", [x], 1 / n.vals[x]))


def dwpw_cases():
    """A depthwise Conv read only by a pointwise one (opt/dwpw.c on the GPU:
    computed where the pointwise loads its operand)."""
    # MobileNetV2's inverted residual: expand + Relu6, depthwise 3x3 + Relu6
    # (its Clip's bounds the depthwise epilogue's operands), project + the
    # block's input; channels in fours
    seed("dwpw_inverted_residual")
    n = Net(rnd(1, 24, 14, 14))
    six = lambda v: n.op("Clip", [v, n.const(np.array(0, np.float32), "lo"), n.const(np.array(6, np.float32), "hi")],
                         torch.clamp(n.vals[v], 0, 6))
    e = six(n.conv("x", 144, 1))
    d = six(n.conv(e, 144, 3, pad=1, group=144))
    n.save("dwpw_inverted_residual", n.add(n.conv(d, 24, 1), "x"))

    # stride 2, 5x5, asymmetric pads, no depthwise bias, HardSwish, 18
    # channels (not in fours: one channel a load), two images
    seed("dwpw_s2_hswish")
    n = Net(rnd(2, 18, 15, 13))
    d = n.conv("x", 18, 5, stride=2, group=18, bias=False, pads=[2, 1, 2, 3])
    hs = n.op("HardSwish", [d], F.hardswish(n.vals[d]))
    n.save("dwpw_s2_hswish", n.conv(hs, 20, 1), opset=14)

    # dilation 2, a per-channel PRelu (an operand per channel) and a residual
    # of the depthwise's own input (an operand of its output's shape) in the
    # depthwise's epilogue; the pointwise without bias
    seed("dwpw_dil_prelu_resid")
    n = Net(rnd(1, 16, 11, 11))
    d = n.conv("x", 16, 3, pad=2, dil=2, group=16)
    r = n.add(d, "x")
    sl = rnd(16, 1, 1, scale=0.3)
    pr = n.op("PRelu", [r, n.const(sl, "slope")], torch.where(n.vals[r] >= 0, n.vals[r], n.vals[r] * t64(sl)))
    n.save("dwpw_dil_prelu_resid", n.conv(pr, 12, 1, bias=False))

    # one residual r in both epilogues, the pointwise's output of r's shape:
    # the output must not be stored over r (opt/plan.c), which the other
    # column tiles' depthwise still reads at the channels they load
    seed("dwpw_shared_resid")
    n = Net(rnd(1, 8, 9, 9))
    a = n.relu(n.conv("x", 48, 1))
    r = n.relu(n.conv("x", 48, 1))
    d = n.add(n.conv(a, 48, 3, pad=1, group=48), r)
    n.save("dwpw_shared_resid", n.add(n.conv(d, 48, 1), r))


def winograd_cases():
    """3x3 stride-1 convolutions that opt/winograd.c may compute by
    Winograd F(2x2) or F(4x4, 3x3) (opt_cases.sh also forces each on them
    with --winograd 2 and 4): a blocked input (a 1x1 conv first), channel
    counts that are no multiple of any vector width, images whose last
    tiles are partial, pads 0, 1, 2 and asymmetric, batch 2, bias, Relu,
    residual and per-channel epilogues, and layers of several blocks and
    task slots or of one block whose groups are the tasks."""
    specs = [  # name, input shape, 3x3 conv kwargs, epilogue
        ("wino_c5_m7_odd", (1, 5, 9, 11), dict(m=7, k=3, pad=1), None),
        ("wino_pads_asym", (1, 20, 13, 10), dict(m=36, k=3, pads=[2, 0, 1, 2]), "relu"),
        ("wino_nopad_c17_m33", (1, 17, 12, 15), dict(m=33, k=3), None),
        ("wino_pad2_c12_m12", (1, 12, 7, 9), dict(m=12, k=3, pad=2), "relu"),
        ("wino_batch2_resid", (2, 24, 10, 14), dict(m=24, k=3, pad=1), "resid"),
        ("wino_nobias_leaky", (1, 40, 11, 11), dict(m=40, k=3, pad=1, bias=False), "leaky"),
        # several blocks of tiles and task slots, a narrower last group
        ("wino_blocks_c96_m80", (1, 96, 30, 30), dict(m=80, k=3, pad=1), "relu"),
        # few tiles, many channels: one block, the groups are the tasks
        ("wino_one_block_c150_m72", (1, 150, 6, 7), dict(m=72, k=3, pad=1), "resid_chan"),
    ]
    for name, shape, kw, epi in specs:
        seed(name)
        n = Net(rnd(*shape))
        a = n.conv("x", shape[1], 1)  # a blocked input for the 3x3
        y = n.conv(a, **kw)
        if epi == "relu":
            y = n.relu(y)
        elif epi == "resid":
            y = n.relu(n.add(y, a))
        elif epi == "leaky":
            y = n.op("LeakyRelu", [y], F.leaky_relu(n.vals[y], 0.2), alpha=0.2)
        elif epi == "resid_chan":
            r = n.conv(a, kw["m"], 1)
            y = n.add(n.mul(y, n.const(rnd(1, kw["m"], 1, 1), "s")), r)
        n.save(name, y)

    # a ResNet basic block: two 3x3 convs, the second with the residual
    seed("wino_basic_block")
    n = Net(rnd(1, 32, 15, 17))
    x = n.relu(n.conv("x", 32, 1))
    b = n.relu(n.conv(x, 32, 3, pad=1))
    c = n.conv(b, 32, 3, pad=1)
    n.save("wino_basic_block", n.relu(n.add(c, x)))


def lstm_cases():
    """LSTMs of templates/rnn_lstm_t.c (weights transposed by opt/pack.c):
    forward over a batch of 2, and bidirectional with initial states;
    references in float64 with numpy (gates i, o, f, c)."""
    def ref(x, W, R, B, h0, c0, reverse):
        S, N, _ = x.shape
        H = R.shape[-1]
        sig = lambda v: 1 / (1 + np.exp(-v))
        h, c = h0.copy(), c0.copy()
        Y = np.zeros((S, N, H))
        for s in range(S):
            t = S - 1 - s if reverse else s
            g = x[t] @ W.T + h @ R.T + B[:4 * H] + B[4 * H:]
            i, o, f, cc = sig(g[:, :H]), sig(g[:, H:2 * H]), sig(g[:, 2 * H:3 * H]), np.tanh(g[:, 3 * H:])
            c = f * c + i * cc
            h = o * np.tanh(c)
            Y[t] = h
        return Y, h, c

    for name, S, N, I, H, bidir in (("lstm_h64", 12, 2, 40, 64, False), ("lstm_bidir_h32", 7, 3, 20, 32, True)):
        seed(name)
        D = 2 if bidir else 1
        x = rnd(S, N, I)
        W, R, B = rnd(D, 4 * H, I, scale=0.3), rnd(D, 4 * H, H, scale=0.3), rnd(D, 8 * H, scale=0.1)
        h0, c0 = rnd(D, N, H, scale=0.5), rnd(D, N, H, scale=0.5)
        Ys, Yh, Yc = [], [], []
        for d in range(D):
            y, hh, cc = ref(x.astype(np.float64), W[d].astype(np.float64), R[d].astype(np.float64),
                            B[d].astype(np.float64), h0[d].astype(np.float64), c0[d].astype(np.float64), d == 1)
            Ys.append(y), Yh.append(hh), Yc.append(cc)
        node = h.make_node("LSTM", ["x", "W", "R", "B", "", "h0", "c0"], ["y", "yh", "yc"], hidden_size=H,
                           direction="bidirectional" if bidir else "forward")
        save(name, [node], [("x", x)],
             [("y", np.stack(Ys, 1)), ("yh", np.stack(Yh)), ("yc", np.stack(Yc))],
             [("W", W), ("R", R), ("B", B), ("h0", h0), ("c0", c0)], opset=14)


def main():
    winograd_cases()
    conv_cases()
    chain_cases()
    head_cases()
    pool_cases()
    resize_cases()
    epilogue_cases()
    attention_cases()
    gemm_cases()
    norm_cases()
    dwpw_cases()
    lstm_cases()


if __name__ == "__main__":
    main()
