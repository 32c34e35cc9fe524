#!/usr/bin/python3
"""make_attn_past.py: the test model of the CUDA target's Attention with
past K/V, present outputs and softcap (codegen/cuda/cuda_attn.c
present_kernels, emit_attention; tests/e2e/cuda.sh step 7).

Writes attn_past.onnx (opset 24, no weights) and its inputs
attn_past_input_K.npy (seed 0, P = 9) next to this script:

  ya, pka, pva = Attention(qa [2,4,5,16], ka [2,2,5,16], va [2,2,5,20],
                           past ka0 [2,2,7,16], va0 [2,2,7,20])
       4-D, grouped heads (4 over 2), causal with a constant past of 7
       (query s at key s + 7), softcap 5 (tanh bends the scores), Dv 20
  yb, pkb, pvb = Attention(qb [1,3,32], kb [1,3,32], vb [1,3,32],
                           past kb0 [1,2,P,16], vb0 [1,2,P,16])
       3-D, 2 heads, causal, a past of P keys known when the program runs
       (--dim P=1..40: query s at key s + SKV - SQ)
  yc = Attention(qc [2,2,6,8], kc [2,2,10,8], vc [2,2,10,8],
                 nonpad_kv_seqlen npc [2] = [7, 10])
       causal over padded keys: query s at key s + npc[b] - 6
  yd = the same without causal: keys from npc[b] on masked
"""
import os

import numpy as np
import onnx
from onnx import helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
P = 9
SHAPES = [("qa", [2, 4, 5, 16]), ("ka", [2, 2, 5, 16]), ("va", [2, 2, 5, 20]), ("ka0", [2, 2, 7, 16]),
          ("va0", [2, 2, 7, 20]),
          ("qb", [1, 3, 32]), ("kb", [1, 3, 32]), ("vb", [1, 3, 32]), ("kb0", [1, 2, "P", 16]), ("vb0", [1, 2, "P", 16]),
          ("qc", [2, 2, 6, 8]), ("kc", [2, 2, 10, 8]), ("vc", [2, 2, 10, 8]), ("npc", [2])]


def main():
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Attention", ["qa", "ka", "va", "", "ka0", "va0"], ["ya", "pka", "pva"], is_causal=1,
                         softcap=5.0),
        helper.make_node("Attention", ["qb", "kb", "vb", "", "kb0", "vb0"], ["yb", "pkb", "pvb"], is_causal=1,
                         q_num_heads=2, kv_num_heads=2),
        helper.make_node("Attention", ["qc", "kc", "vc", "", "", "", "npc"], ["yc"], is_causal=1),
        helper.make_node("Attention", ["qc", "kc", "vc", "", "", "", "npc"], ["yd"]),
    ]
    F = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64 if n == "npc" else F, s) for n, s in SHAPES]
    outputs = [helper.make_tensor_value_info(n, F, None) for n in ["ya", "pka", "pva", "yb", "pkb", "pvb", "yc", "yd"]]
    graph = helper.make_graph(nodes, "attn_past", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    model.ir_version = 8
    onnx.save(model, os.path.join(HERE, "attn_past.onnx"))
    for k, (n, s) in enumerate(SHAPES):
        x = rng.standard_normal([P if d == "P" else d for d in s]).astype(np.float32)
        if n == "npc":  # keys from 7 on padding in batch 0, none in batch 1
            x = np.array([7, 10], np.int64)
        np.save(os.path.join(HERE, "attn_past_input_%d.npy" % k), x * (3 if n.startswith("q") else 1))


if __name__ == "__main__":
    main()
