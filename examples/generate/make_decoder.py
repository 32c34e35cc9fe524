#!/usr/bin/python3
"""make_decoder.py: a small GPT-style decoder with a KV cache, seeded random
weights, in one of the forms ONNX Runtime's tools write:
- f32 (default): as its transformer optimizer gives GPT-2, com.microsoft
  Attention with past_I / present_I [2, batch, heads, past, head];
- --nbits 4: weight-only 4-bit, as the GenAI model builder quantizes
  (com.microsoft MatMulNBits, blocks of 32 with zero points, the LM head
  too), MultiHeadAttention with past_key_I / past_value_I and
  present_key_I / present_value_I [batch, heads, past, head].
Both: FastGelu MLPs, LayerNorms, token and position embeddings.
- --llama (f32, or with --nbits 4): the Llama form of the GenAI builder,
  RMS norms, GroupQueryAttention (packed QKV, half as many KV heads,
  rotary inside, past_key_I / past_value_I), SwiGLU MLPs, token
  embeddings; seqlens_k and total_sequence_length computed from an
  attention_mask input.

    make_decoder.py OUT.onnx [--nbits 4] [--llama] [--layers N] [--hidden H] [--heads H] [--vocab V]

Inputs: input_ids int64 [batch, seq], position_ids int64 [batch, seq]
(--llama: attention_mask int64 [batch, past + seq], its ones), then the
caches in layer order; outputs: logits f32 [batch, seq, vocab], then the
presents in the same order (a cache input's shape with past + seq rows).
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
    ap.add_argument("--nbits", type=int, default=0)
    ap.add_argument("--llama", action="store_true")
    a = ap.parse_args()
    r = np.random.RandomState(7)
    H, V, NH = a.hidden, a.vocab, a.heads
    inits, nodes = [], []

    def w(name, *shape, scale=None, offset=0.0):
        s = scale if scale is not None else 1.0 / np.sqrt(shape[0])
        inits.append(nh.from_array((r.standard_normal(shape) * s + offset).astype(np.float32), name))
        return name

    N, MS = h.make_node, "com.microsoft"

    def linear(x, wname, k, n, y, bias=None):
        """x [.., k] by a [k, n] weight: MatMul, or MatMulNBits of it quantized"""
        wt = r.standard_normal((k, n)).astype(np.float32) / np.sqrt(k) * (2.0 if wname == "lm" else 1.0)
        if not a.nbits:
            inits.append(nh.from_array(wt, wname))
            nodes.append(N("MatMul", [x, wname], [y]))
            return
        bs, nb = 32, -(-k // 32)
        blocks = np.zeros((n, nb * bs), np.float32)
        blocks[:, :k] = wt.T
        blocks = blocks.reshape(n, nb, bs)
        lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
        sc = (hi - lo) / 15 + 1e-8
        z = np.clip(np.round(-lo / sc), 0, 15)
        q = np.clip(np.round(blocks / sc[..., None]) + z[..., None], 0, 15).astype(np.uint8)
        zp = np.zeros((n, nb + nb % 2), np.uint8)
        zp[:, :nb] = z
        inits.extend([nh.from_array(q[..., 0::2] | (q[..., 1::2] << 4), wname + "_q"),
                      nh.from_array(sc.astype(np.float32).reshape(-1), wname + "_s"),
                      nh.from_array(zp[:, 0::2] | (zp[:, 1::2] << 4), wname + "_z")])
        ins = [x, wname + "_q", wname + "_s", wname + "_z"] + (["", bias] if bias else [])
        nodes.append(N("MatMulNBits", ins, [y], domain=MS, K=k, N=n, bits=4, block_size=bs))
    if a.llama:
        llama(a, r, N, MS, w, linear, inits, nodes)
        return
    nodes += [N("Gather", [w("wte", V, H, scale=1.0), "input_ids"], ["tok"]),
              N("Gather", [w("wpe", a.positions, H, scale=0.5), "position_ids"], ["pos"]),
              N("Add", ["tok", "pos"], ["x0"])]
    x = "x0"
    ins = [h.make_tensor_value_info("input_ids", T.INT64, ["batch", "seq"]),
           h.make_tensor_value_info("position_ids", T.INT64, ["batch", "seq"])]
    outs = [h.make_tensor_value_info("logits", T.FLOAT, ["batch", "seq", V])]
    for i in range(a.layers):
        p = "l%d_" % i
        nodes.append(N("LayerNormalization", [x, w(p + "g1", H, scale=0.1, offset=1.0), w(p + "b1", H, scale=0.1)],
                       [p + "h"], axis=-1, epsilon=1e-5))
        if not a.nbits:
            nodes.append(N("Attention", [p + "h", w(p + "wqkv", H, 3 * H), w(p + "bqkv", 3 * H, scale=0.1), "", "past_%d" % i],
                           [p + "a", "present_%d" % i], domain=MS, num_heads=NH, unidirectional=1))
            ins.append(h.make_tensor_value_info("past_%d" % i, T.FLOAT, [2, "batch", NH, "past", H // NH]))
            outs.append(h.make_tensor_value_info("present_%d" % i, T.FLOAT, [2, "batch", NH, "total", H // NH]))
        else:
            linear(p + "h", p + "wqkv", H, 3 * H, p + "qkv", bias=w(p + "bqkv", 3 * H, scale=0.1))
            inits.append(nh.from_array(np.array([H, H, H], np.int64), p + "split"))
            nodes += [N("Split", [p + "qkv", p + "split"], [p + "q", p + "k", p + "v"], axis=-1),
                      N("MultiHeadAttention", [p + "q", p + "k", p + "v", "", "", "", "past_key_%d" % i, "past_value_%d" % i],
                        [p + "a", "present_key_%d" % i, "present_value_%d" % i], domain=MS, num_heads=NH,
                        unidirectional=1)]
            for kv in ("key", "value"):
                ins.append(h.make_tensor_value_info("past_%s_%d" % (kv, i), T.FLOAT, ["batch", NH, "past", H // NH]))
                outs.append(h.make_tensor_value_info("present_%s_%d" % (kv, i), T.FLOAT, ["batch", NH, "total", H // NH]))
        linear(p + "a", p + "wo", H, H, p + "ao")
        nodes += [N("Add", [x, p + "ao"], [p + "x1"]),
                  N("LayerNormalization", [p + "x1", w(p + "g2", H, scale=0.1, offset=1.0), w(p + "b2", H, scale=0.1)],
                    [p + "m"], axis=-1, epsilon=1e-5)]
        linear(p + "m", p + "w1", H, 4 * H, p + "f")
        nodes.append(N("FastGelu", [p + "f", w(p + "bf", 4 * H, scale=0.1)], [p + "fg"], domain=MS))
        linear(p + "fg", p + "w2", 4 * H, H, p + "fo")
        nodes.append(N("Add", [p + "x1", p + "fo"], [p + "x2"]))
        x = p + "x2"
    nodes.append(N("LayerNormalization", [x, w("gf", H, scale=0.1, offset=1.0), w("bfin", H, scale=0.1)], ["xf"],
                   axis=-1, epsilon=1e-5))
    linear("xf", "lm", H, V, "logits")
    save(nodes, ins, outs, inits, a.out)


def save(nodes, ins, outs, inits, path):
    g = h.make_graph(nodes, "decoder", ins, outs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)],
                     producer_name="make_decoder.py")
    m.ir_version = 8
    onnx.save(m, path)


def llama(a, r, N, MS, w, linear, inits, nodes):
    """the Llama form ONNX Runtime GenAI's builder writes: RMS norms
    (SimplifiedLayerNormalization), GroupQueryAttention with the packed QKV,
    half as many KV heads, rotary inside and seqlens_k / total_sequence_length
    from attention_mask [batch, past + seq], a SwiGLU MLP"""
    H, V, NH = a.hidden, a.vocab, a.heads
    KVH, D, F = NH // 2, a.hidden // a.heads, 4 * a.hidden
    ang = np.arange(a.positions)[:, None] / (10000.0 ** (np.arange(D // 2)[None, :] / (D // 2)))
    inits += [nh.from_array(np.cos(ang).astype(np.float32), "cos"), nh.from_array(np.sin(ang).astype(np.float32), "sin"),
              nh.from_array(np.array([1], np.int64), "ax1"), nh.from_array(np.array(1, np.int64), "one"),
              nh.from_array(np.array(1, np.int64), "i1")]
    nodes += [N("ReduceSum", ["attention_mask", "ax1"], ["msum"], keepdims=0), N("Sub", ["msum", "one"], ["sl64"]),
              N("Cast", ["sl64"], ["seqlens_k"], to=T.INT32), N("Shape", ["attention_mask"], ["msh"]),
              N("Gather", ["msh", "i1"], ["tot64"], axis=0), N("Cast", ["tot64"], ["total"], to=T.INT32),
              N("Gather", [w("wte", V, H, scale=1.0), "input_ids"], ["x0"])]
    x = "x0"
    ins = [h.make_tensor_value_info("input_ids", T.INT64, ["batch", "seq"]),
           h.make_tensor_value_info("attention_mask", T.INT64, ["batch", "total"])]
    outs = [h.make_tensor_value_info("logits", T.FLOAT, ["batch", "seq", V])]
    for i in range(a.layers):
        p = "l%d_" % i
        nodes.append(N("SimplifiedLayerNormalization", [x, w(p + "g1", H, scale=0.1, offset=1.0)], [p + "h"], axis=-1,
                       epsilon=1e-5))
        linear(p + "h", p + "wqkv", H, (NH + 2 * KVH) * D, p + "qkv")
        nodes.append(N("GroupQueryAttention", [p + "qkv", "", "", "past_key_%d" % i, "past_value_%d" % i, "seqlens_k", "total",
                                               "cos", "sin"], [p + "a", "present_key_%d" % i, "present_value_%d" % i],
                       domain=MS, num_heads=NH, kv_num_heads=KVH, do_rotary=1))
        for kv in ("key", "value"):
            ins.append(h.make_tensor_value_info("past_%s_%d" % (kv, i), T.FLOAT, ["batch", KVH, "past", D]))
            outs.append(h.make_tensor_value_info("present_%s_%d" % (kv, i), T.FLOAT, ["batch", KVH, "total", D]))
        linear(p + "a", p + "wo", H, H, p + "ao")
        nodes += [N("Add", [x, p + "ao"], [p + "x1"]),
                  N("SimplifiedLayerNormalization", [p + "x1", w(p + "g2", H, scale=0.1, offset=1.0)], [p + "m"], axis=-1,
                    epsilon=1e-5)]
        linear(p + "m", p + "wg", H, F, p + "gate")
        linear(p + "m", p + "wu", H, F, p + "up")
        nodes += [N("Sigmoid", [p + "gate"], [p + "sg"]), N("Mul", [p + "gate", p + "sg"], [p + "silu"]),
                  N("Mul", [p + "silu", p + "up"], [p + "act"])]
        linear(p + "act", p + "wd", F, H, p + "down")
        nodes.append(N("Add", [p + "x1", p + "down"], [p + "x2"]))
        x = p + "x2"
    nodes.append(N("SimplifiedLayerNormalization", [x, w("gf", H, scale=0.1, offset=1.0)], ["xf"], axis=-1, epsilon=1e-5))
    linear("xf", "lm", H, V, "logits")
    save(nodes, ins, outs, inits, a.out)


if __name__ == "__main__":
    main()
