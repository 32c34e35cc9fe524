#!/usr/bin/python3
"""make_attn_mha.py: the test model of the sequence-first Attention
(opt/attention.c's nn.MultiheadAttention of a run-time batch, the CUDA
kernels' ox_seq_first; tests/e2e/cuda.sh step 7).

Writes attn_mha.onnx and its inputs attn_mha_input_K.npy (seed 0) next to
this script: two torch.nn.MultiheadAttention (E 32, 4 heads) as Debian's
torch 1.13 exports them, sequence first, with dynamic axes B (batch), S
(queries) and M (the memory's length):

  y = self_attn(x, x, x)                       x   [S, B, 32]
  z = cross_attn(y, mem, mem, key_padding_mask=pad)
                                               mem [M, B, 32], pad [B, M] bool

Each projects into [S, B*H, 8] heads, transposed to [B*H, S, 8] batches:
with B a run-time dim the GPU's Attention reads the projections [S, B, 32]
in place. Compiled with --dim B=1..2 --dim S=1..16 --dim M=1..512 the cross
attention has 8 blocks at the tops, so its keys are split over 8 blocks;
the inputs are B 2, S 5, M 300, the padding masking each batch entry's
last keys (60 and 7 of them).

Also attn_mha_bf.onnx and attn_mha_bf_input_K.npy: the same modules with
batch_first=True, x [B, S, 32], mem [B, M, 32] (the inputs above
transposed): the exporter transposes x and mem to sequence first and the
result back, Transposes opt/rows.c removes, the Attention then reading
the projections batch first.
"""
import os

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))


class Mha(nn.Module):
    def __init__(self, batch_first=False):
        super().__init__()
        self.sa = nn.MultiheadAttention(32, 4, batch_first=batch_first)
        self.ca = nn.MultiheadAttention(32, 4, batch_first=batch_first)

    def forward(self, x, mem, pad):
        y, _ = self.sa(x, x, x, need_weights=False)
        z, _ = self.ca(y, mem, mem, key_padding_mask=pad, need_weights=False)
        return z


def export(name, batch_first, x, mem, pad):
    """Mha(batch_first) as name.onnx, its inputs as name_input_K.npy"""
    torch.manual_seed(0)
    m = Mha(batch_first).eval()
    s, b = (1, 0) if batch_first else (0, 1)
    torch.onnx.export(m, (torch.from_numpy(x), torch.from_numpy(mem), torch.from_numpy(pad)),
                      os.path.join(HERE, name + ".onnx"), opset_version=14,
                      input_names=["x", "mem", "pad"], output_names=["z"],
                      dynamic_axes={"x": {s: "S", b: "B"}, "mem": {s: "M", b: "B"}, "pad": {0: "B", 1: "M"},
                                    "z": {s: "S", b: "B"}})
    for k, a in enumerate((x, mem, pad)):
        np.save(os.path.join(HERE, "%s_input_%d.npy" % (name, k)), a)


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 2, 32)).astype(np.float32)
    mem = rng.standard_normal((300, 2, 32)).astype(np.float32)
    pad = np.zeros((2, 300), dtype=bool)
    pad[0, 240:] = True
    pad[1, 293:] = True
    export("attn_mha", False, x, mem, pad)
    bf = [np.ascontiguousarray(a.transpose(1, 0, 2)) for a in (x, mem)]
    export("attn_mha_bf", True, bf[0], bf[1], pad)


if __name__ == "__main__":
    main()
