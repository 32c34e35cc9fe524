#!/usr/bin/python3
"""make_decoder.py: a small GPT-style decoder with a KV cache, in the form
ONNX Runtime's transformer optimizer gives GPT-2 (com.microsoft Attention
with past and present, FastGelu), seeded random weights.

    make_decoder.py OUT.onnx [--layers N] [--hidden H] [--vocab V]

Inputs: input_ids int64 [batch, seq], position_ids int64 [batch, seq],
past_I f32 [2, batch, heads, past, head] per layer. Outputs: logits f32
[batch, seq, vocab], present_I [2, batch, heads, past + seq, head].
"""
import argparse

import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=96)
    ap.add_argument("--positions", type=int, default=256)
    a = ap.parse_args()
    r = np.random.RandomState(7)
    H, V, NH = a.hidden, a.vocab, a.heads
    inits, nodes = [], []

    def w(name, *shape, scale=None, offset=0.0):
        s = scale if scale is not None else 1.0 / np.sqrt(shape[0])
        inits.append(nh.from_array((r.standard_normal(shape) * s + offset).astype(np.float32), name))
        return name

    N, MS = h.make_node, "com.microsoft"
    nodes += [N("Gather", [w("wte", V, H, scale=1.0), "input_ids"], ["tok"]),
              N("Gather", [w("wpe", a.positions, H, scale=0.5), "position_ids"], ["pos"]),
              N("Add", ["tok", "pos"], ["x0"])]
    x = "x0"
    ins = [h.make_tensor_value_info("input_ids", T.INT64, ["batch", "seq"]),
           h.make_tensor_value_info("position_ids", T.INT64, ["batch", "seq"])]
    outs = [h.make_tensor_value_info("logits", T.FLOAT, ["batch", "seq", V])]
    for i in range(a.layers):
        p = "l%d_" % i
        nodes += [N("LayerNormalization", [x, w(p + "g1", H, scale=0.1, offset=1.0), w(p + "b1", H, scale=0.1)], [p + "h"],
                    axis=-1, epsilon=1e-5),
                  N("Attention", [p + "h", w(p + "wqkv", H, 3 * H), w(p + "bqkv", 3 * H, scale=0.1), "", "past_%d" % i],
                    [p + "a", "present_%d" % i], domain=MS, num_heads=NH, unidirectional=1),
                  N("MatMul", [p + "a", w(p + "wo", H, H)], [p + "ao"]), N("Add", [x, p + "ao"], [p + "x1"]),
                  N("LayerNormalization", [p + "x1", w(p + "g2", H, scale=0.1, offset=1.0), w(p + "b2", H, scale=0.1)],
                    [p + "m"], axis=-1, epsilon=1e-5),
                  N("MatMul", [p + "m", w(p + "w1", H, 4 * H)], [p + "f"]),
                  N("FastGelu", [p + "f", w(p + "bf", 4 * H, scale=0.1)], [p + "fg"], domain=MS),
                  N("MatMul", [p + "fg", w(p + "w2", 4 * H, H)], [p + "fo"]), N("Add", [p + "x1", p + "fo"], [p + "x2"])]
        x = p + "x2"
        ins.append(h.make_tensor_value_info("past_%d" % i, T.FLOAT, [2, "batch", NH, "past", H // NH]))
        outs.append(h.make_tensor_value_info("present_%d" % i, T.FLOAT, [2, "batch", NH, "total", H // NH]))
    nodes += [N("LayerNormalization", [x, w("gf", H, scale=0.1, offset=1.0), w("bfin", H, scale=0.1)], ["xf"], axis=-1,
                epsilon=1e-5),
              N("MatMul", ["xf", w("lm", H, V, scale=2.0 / np.sqrt(H))], ["logits"])]
    g = h.make_graph(nodes, "decoder", ins, outs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(MS, 1)], producer_name="make_decoder.py")
    m.ir_version = 8
    onnx.save(m, a.out)


if __name__ == "__main__":
    main()
