#!/usr/bin/python3
"""make_opt_transpose.py: end-to-end cases for the Transpose/reshape chain pass.

Writes tests/e2e/cases/opt/test_opt_tr_*/ (the backend tests' layout, through
make_opt_cases.save): chains of Transpose, Reshape, Flatten, Squeeze and
Unsqueeze that opt/transpose.c rewrites (two Transposes, Transposes that
cancel, reshapes that merge, a Transpose of size-1 dims, ViT's patch
rearrange, ShuffleNet's channel shuffle, heads merged and split again, a
chain ending at a graph output) and ones it must leave (a middle value read
elsewhere, forms already minimal), at odd sizes, some feeding a MatMul and
an Add. Expected outputs are computed with numpy in float64. Run with
Debian's /usr/bin/python3; tests/e2e/opt_cases.sh 'test_opt_tr' runs them.
"""
import os
import sys

import numpy as np
from onnx import helper as h

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_opt_cases import save, rnd, seed  # noqa: E402


class Chain:
    """Nodes and their float64 values, side by side."""

    def __init__(self, **inputs):
        self.nodes, self.inits, self.k = [], [], 0
        self.inputs = list(inputs.items())
        self.vals = {n: np.asarray(a, np.float64) for n, a in inputs.items()}

    def name(self, p):
        self.k += 1
        return "%s%d" % (p, self.k)

    def const(self, a, p="c"):
        n = self.name(p)
        self.inits.append((n, a))
        self.vals[n] = np.asarray(a, np.float64) if a.dtype.kind == "f" else a
        return n

    def op(self, op, ins, val, **attrs):
        o = self.name(op.lower())
        self.nodes.append(h.make_node(op, ins, [o], name=o, **attrs))
        self.vals[o] = val
        return o

    def transpose(self, x, perm):
        return self.op("Transpose", [x], self.vals[x].transpose(perm), perm=list(perm))

    def reshape(self, x, shape):
        s = self.const(np.array(shape, np.int64), "shape")
        return self.op("Reshape", [x, s], self.vals[x].reshape(shape))

    def flatten(self, x, axis):
        v = self.vals[x]
        return self.op("Flatten", [x], v.reshape(int(np.prod(v.shape[:axis])), -1), axis=axis)

    def squeeze(self, x, axes):
        a = self.const(np.array(axes, np.int64), "axes")
        return self.op("Squeeze", [x, a], np.squeeze(self.vals[x], tuple(axes)))

    def unsqueeze(self, x, axes):
        a = self.const(np.array(axes, np.int64), "axes")
        v = self.vals[x]
        for ax in sorted(axes):
            v = np.expand_dims(v, ax)
        return self.op("Unsqueeze", [x, a], v)

    def matmul(self, x, n):
        w = self.const(rnd(self.vals[x].shape[-1], n, scale=0.5), "w")
        return self.op("MatMul", [x, w], self.vals[x] @ self.vals[w])

    def add(self, a, b):
        return self.op("Add", [a, b], self.vals[a] + self.vals[b])

    def relu(self, x):
        return self.op("Relu", [x], np.maximum(self.vals[x], 0))

    def bias(self, x):
        return self.add(x, self.const(rnd(self.vals[x].shape[-1], scale=0.5), "b"))

    def save(self, name, *outs):
        save(name, self.nodes, self.inputs, [(o, self.vals[o]) for o in outs], self.inits)


def main():
    # two Transposes: one with the composed permutation
    seed("tr_double")
    c = Chain(x=rnd(3, 5, 7, 2))
    t = c.transpose(c.transpose("x", (0, 2, 3, 1)), (1, 0, 3, 2))
    c.save("tr_double", c.relu(t))

    # Transposes that cancel: the Add reads x
    seed("tr_cancel")
    c = Chain(x=rnd(5, 3, 7), z=rnd(5, 3, 7))
    t = c.transpose(c.transpose("x", (2, 0, 1)), (1, 2, 0))
    c.save("tr_cancel", c.add(t, "z"))

    # cancelling chains at graph outputs: x's producer writes the output;
    # from a graph input, a Reshape stays
    seed("tr_cancel_out")
    c = Chain(x=rnd(3, 5, 7))
    r = c.relu("x")
    a = c.transpose(c.transpose(r, (1, 0, 2)), (1, 0, 2))
    b = c.transpose(c.transpose("x", (2, 1, 0)), (2, 1, 0))
    c.save("tr_cancel_out", a, b)

    # reshape-like ops merged into one Reshape, feeding a MatMul + bias
    seed("tr_reshapes")
    c = Chain(x=rnd(3, 5, 7))
    r = c.reshape("x", [15, 7])
    u = c.unsqueeze(r, [0, 2])
    f = c.flatten(u, 1)
    s = c.reshape(f, [3, 1, 35])
    q = c.squeeze(s, [1])
    c.save("tr_reshapes", c.bias(c.matmul(q, 9)))

    # a Transpose that moves only size-1 dims (a Reshape), then a MatMul
    seed("tr_unit")
    c = Chain(x=rnd(17, 1, 13))
    t = c.transpose("x", (1, 0, 2))
    c.save("tr_unit", c.bias(c.matmul(t, 6)))

    # ViT patches 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p = 3, then the
    # patch embedding (MatMul + Add)
    for b in (1, 2):
        name = "tr_vit_patch_b%d" % b
        seed(name)
        c = Chain(x=rnd(b, 3, 15, 21))
        r = c.reshape("x", [b, 3, 5, 3, 7, 3])
        t = c.transpose(r, (0, 2, 4, 3, 5, 1))
        p = c.reshape(t, [b, 35, 27])
        c.save(name, c.bias(c.matmul(p, 10)))

    # ShuffleNet's channel shuffle, 3 groups of 5, plus a residual Add
    for b in (1, 2):
        name = "tr_shuffle_b%d" % b
        seed(name)
        c = Chain(x=rnd(b, 15, 7, 9), z=rnd(b, 15, 7, 9))
        r = c.reshape("x", [b, 3, 5, 7, 9])
        t = c.transpose(r, (0, 2, 1, 3, 4))
        s = c.reshape(t, [b, -1, 7, 9])
        c.save(name, c.add(s, "z"))

    # heads merged, split again: the identity; then a MatMul
    seed("tr_heads_identity")
    c = Chain(x=rnd(2, 3, 5, 7))
    t = c.transpose("x", (0, 2, 1, 3))
    m = c.reshape(t, [2, 5, 21])
    s = c.reshape(m, [2, 5, 3, 7])
    u = c.transpose(s, (0, 2, 1, 3))
    c.save("tr_heads_identity", c.bias(c.matmul(u, 4)))

    # Transpose -> Reshape -> Transpose: two copies become one
    seed("tr_through_reshape")
    c = Chain(x=rnd(5, 2, 12))
    t = c.transpose("x", (1, 0, 2))
    r = c.reshape(t, [2, 5, 3, 4])
    u = c.transpose(r, (0, 2, 3, 1))
    c.save("tr_through_reshape", c.relu(u))

    # Unsqueeze -> Transpose -> Squeeze around a MatMul's operand
    seed("tr_squeeze_mix")
    c = Chain(x=rnd(5, 1, 6))
    u = c.unsqueeze("x", [0])
    t = c.transpose(u, (0, 3, 2, 1))
    s = c.squeeze(t, [0, 2])
    c.save("tr_squeeze_mix", c.bias(c.matmul(s, 3)))

    # tokens back to an image and a split that is no strided view: left alone
    seed("tr_untouched")
    c = Chain(x=rnd(2, 35, 11))
    t = c.transpose("x", (0, 2, 1))
    img = c.reshape(t, [2, 11, 5, 7])
    v = c.reshape(c.transpose(c.reshape("x", [70, 11]), (1, 0)), [35, 22])
    c.save("tr_untouched", img, v)

    # a middle value read elsewhere: the chain stops there
    seed("tr_shared")
    c = Chain(x=rnd(3, 4, 5))
    t = c.transpose("x", (1, 0, 2))
    u = c.transpose(t, (2, 1, 0))
    c.save("tr_shared", c.relu(u), c.relu(t))


if __name__ == "__main__":
    main()
