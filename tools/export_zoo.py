#!/usr/bin/python3
"""Export onnxcc's model zoo: real networks as ONNX plus one input each.

Usage: /usr/bin/python3 tools/export_zoo.py OUTDIR [--only NAME,...] [--list]

Writes OUTDIR/NAME/model.onnx and OUTDIR/NAME/input_K.npy (float32, one per
graph input, in graph-input order). Needs Debian's torch 1.13 / torchvision
0.14 / onnx 1.12 (call /usr/bin/python3, not the python3 on PATH). Nothing is
downloaded: torchvision models are built with weights=None.

Most models are small; resnet50 (8.2 GFLOP a run, 25.5M parameters) and
bert_encoder (a 4-layer BERT-style encoder on 1x128x256, 0.87 GFLOP, 3.2M
parameters) are there so that large convolutions and GEMMs are measured too
(FLOP: 2 per multiply-add of Conv, Gemm, MatMul).

Invariants: the same command gives the same weights and inputs (every model
seeds torch and numpy itself, so --only does not change what a model gets),
models are exported in eval mode with do_constant_folding=True, and the one
graph input is named "input" (dynbatch's batch dim is the symbol 'N').
"""

import argparse
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

SEED = 1234


def calibrate_bn(model, shape, batches=3, batch=4):
    """Give BatchNorm layers random affine parameters and real running stats.

    Untrained torchvision nets have BN weight 1, bias 0, mean 0, var 1, and
    their outputs shrink to ~1e-9 through mobilenet_v2 / efficientnet_b0;
    comparing such numbers says nothing. Running a few random batches in train
    mode with momentum=None (a plain cumulative average) sets the running
    stats to the statistics the layers really see, so eval-mode activations
    stay O(1) all the way through.
    """
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    with torch.no_grad():
        for m in bns:
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.2, 0.2)
            m.reset_running_stats()
            m.momentum = None
        model.train()
        for _ in range(batches):
            model(torch.randn(batch, *shape[1:]))
    model.eval()


# ---------------------------------------------------------------------------
# Hand-written models


class Encoder(nn.Module):
    """nn.TransformerEncoder, seq-first (seq 16, batch 1, d_model 64).

    batch_first=False keeps torch 1.13 off its fused fast path, which has no
    ONNX export; the exported graph is the plain MatMul/Softmax/LayerNorm one.
    """

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.1)
        self.enc = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(64))

    def forward(self, x):
        return self.enc(x)


class RNNWrap(nn.Module):
    """One-layer LSTM or GRU returning every output: Y and the final states."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        cls = nn.LSTM if kind == "lstm" else nn.GRU
        self.rnn = cls(input_size=8, hidden_size=16, num_layers=1)

    def forward(self, x):
        if self.kind == "lstm":
            y, (h, c) = self.rnn(x)
            return y, h, c
        y, h = self.rnn(x)
        return y, h


class DynBatch(nn.Module):
    """Small CNN whose batch dim is symbolic. The flatten is written the way
    hand-written code does it, x.reshape(x.shape[0], -1), so the graph carries
    a Shape -> Gather -> Concat -> Reshape chain for the compiler to fold."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.b1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.b1(self.c1(x))), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = x.reshape(x.shape[0], -1)
        return self.fc(x)


class VitPatch(nn.Module):
    """ViT-style: einops `b c (h p1) (w p2) -> b (h w) (p1 p2 c)` written as
    reshape/permute/reshape, Linear embedding, class token, position
    embedding, one pre-norm transformer layer (GELU), head on the class token."""

    def __init__(self, img=32, patch=8, dim=64, classes=10):
        super().__init__()
        self.p = patch
        n = (img // patch) ** 2
        self.embed = nn.Linear(patch * patch * 3, dim)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.5)
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.5)
        self.layer = nn.TransformerEncoderLayer(dim, 4, dim * 2, dropout=0.0, activation="gelu",
                                                batch_first=True, norm_first=True)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        b, c, hh, ww = x.shape
        p = self.p
        h, w = hh // p, ww // p
        x = x.reshape(b, c, h, p, w, p).permute(0, 2, 4, 3, 5, 1).reshape(b, h * w, p * p * c)
        x = self.embed(x)
        x = torch.cat([self.cls.expand(b, -1, -1), x], dim=1) + self.pos
        x = self.layer(x)
        return self.head(self.norm(x[:, 0]))


class BertSelfAttention(nn.Module):
    """HuggingFace BertSelfAttention + BertSelfOutput (post-LayerNorm), no
    dropout: separate Q/K/V Linears, heads split with view + permute,
    scores / sqrt(head) + the additive mask, Softmax, P V, heads merged."""

    def __init__(self, seq, hidden, heads, eps):
        super().__init__()
        self.seq, self.hidden, self.heads, self.dh = seq, hidden, heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.dense = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden, eps=eps)

    def split(self, x):  # [1, S, H] -> [1, heads, S, dh]
        return x.view(1, self.seq, self.heads, self.dh).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + mask
        ctx = torch.matmul(F.softmax(scores, dim=-1), v)
        ctx = ctx.permute(0, 2, 1, 3).contiguous().view(1, self.seq, self.hidden)
        return self.norm(self.dense(ctx) + x)


class BertLayer(nn.Module):
    """Self-attention, then the FFN Linear -> GELU (erf) -> Linear, residual,
    LayerNorm (HF's BertIntermediate + BertOutput)."""

    def __init__(self, seq, hidden, heads, ffn, eps):
        super().__init__()
        self.attn = BertSelfAttention(seq, hidden, heads, eps)
        self.inter = nn.Linear(hidden, ffn)
        self.out = nn.Linear(ffn, hidden)
        self.norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x, mask):
        x = self.attn(x, mask)
        return self.norm(self.out(F.gelu(self.inter(x))) + x)


class BertEncoder(nn.Module):
    """BERT-style encoder written like HuggingFace's BertEncoder: the input is
    the hidden states after the embeddings, [1, 128, 256]; 4 layers, 4 heads
    of 64, FFN 1024, LayerNorm eps 1e-12. The attention mask is a constant
    buffer [1, 1, 1, 128] like HF's extended mask: 0 for the first 112
    positions, -10000 for the 16 padding ones. At opset 13 the export
    decomposes LayerNorm (ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add) and GELU
    (Div/Erf/Add/Mul), as real BERT exports are."""

    def __init__(self, seq=128, hidden=256, heads=4, ffn=1024, layers=4, pad=16, eps=1e-12):
        super().__init__()
        self.layers = nn.ModuleList(BertLayer(seq, hidden, heads, ffn, eps) for _ in range(layers))
        mask = torch.zeros(1, 1, 1, seq)
        mask[..., seq - pad:] = -10000.0
        self.register_buffer("mask", mask)
        # Trained-looking parameters rather than the defaults: LayerNorm
        # scales and shifts that differ per channel (the defaults 1 and 0
        # would let a wrong gamma/beta pass), and larger Q/K weights so each
        # query attends to a few keys instead of a nearly flat softmax.
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.LayerNorm):
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.2, 0.2)
            for layer in self.layers:
                layer.attn.query.weight.mul_(4.0)
                layer.attn.key.weight.mul_(4.0)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x, self.mask)
        return x


def conv_block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNetSmall(nn.Module):
    """2-level U-Net: the first up-step is a ConvTranspose, the second an
    nn.Upsample (Resize, bilinear, align_corners=False); skips are Concat."""

    def __init__(self):
        super().__init__()
        self.e1 = conv_block(3, 8)
        self.e2 = conv_block(8, 16)
        self.mid = conv_block(16, 32)
        self.up2 = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.d2 = conv_block(32, 16)
        self.up1 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.d1 = conv_block(16 + 8, 8)
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        s1 = self.e1(x)                                  # 8 x 64 x 64
        s2 = self.e2(F.max_pool2d(s1, 2))                # 16 x 32 x 32
        m = self.mid(F.max_pool2d(s2, 2))                # 32 x 16 x 16
        u2 = self.d2(torch.cat([self.up2(m), s2], 1))    # 16 x 32 x 32
        u1 = self.d1(torch.cat([self.up1(u2), s1], 1))   # 8 x 64 x 64
        return self.out(u1)


# ---------------------------------------------------------------------------
# The zoo: name -> (builder, input shape, opset, dynamic batch?)


def tv(name):
    return lambda: getattr(torchvision.models, name)(weights=None)


IMG = (1, 3, 224, 224)
ZOO = {
    "resnet18": (tv("resnet18"), IMG, 13, False),
    "resnet50": (tv("resnet50"), IMG, 13, False),
    "mobilenet_v2": (tv("mobilenet_v2"), IMG, 13, False),
    "squeezenet1_1": (tv("squeezenet1_1"), IMG, 13, False),
    "efficientnet_b0": (tv("efficientnet_b0"), IMG, 13, False),
    "shufflenet_v2_x1_0": (tv("shufflenet_v2_x1_0"), IMG, 13, False),
    "transformer_encoder": (Encoder, (16, 1, 64), 13, False),
    "transformer_encoder_op17": (Encoder, (16, 1, 64), 17, False),
    "lstm": (lambda: RNNWrap("lstm"), (10, 1, 8), 13, False),
    "gru": (lambda: RNNWrap("gru"), (10, 1, 8), 13, False),
    # Exported with batch 'N'; the input file is batch 2, matching the
    # `--shape input=2x3x32x32` the zoo list compiles it with.
    "dynbatch": (DynBatch, (2, 3, 32, 32), 13, True),
    "vit_patch": (VitPatch, (1, 3, 32, 32), 13, False),
    "unet_small": (UNetSmall, (1, 3, 64, 64), 13, False),
    "bert_encoder": (BertEncoder, (1, 128, 256), 13, False),
}


def export(name, outdir):
    build, shape, opset, dynamic = ZOO[name]
    # Seed per model so `--only` gives the same bytes as a full export.
    torch.manual_seed(SEED)
    model = build()
    calibrate_bn(model, shape)
    model.eval()
    x = torch.from_numpy(np.random.RandomState(SEED).standard_normal(shape).astype(np.float32))
    with torch.no_grad():
        outs = model(x)
    nout = len(outs) if isinstance(outs, tuple) else 1
    out_names = ["output"] if nout == 1 else ["output_%d" % k for k in range(nout)]
    dyn = None
    if dynamic:
        dyn = {"input": {0: "N"}}
        dyn.update({o: {0: "N"} for o in out_names})

    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(model, (x,), path, opset_version=opset, do_constant_folding=True,
                      input_names=["input"], output_names=out_names, dynamic_axes=dyn)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    np.save(os.path.join(d, "input_0.npy"), x.numpy())
    ops = sorted({n.op_type for n in m.graph.node})
    print("%-26s opset %2d  %4d nodes  %s" % (name, opset, len(m.graph.node), " ".join(ops)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    a = ap.parse_args()
    if a.list:
        print("\n".join(ZOO))
        return 0
    if not a.outdir:
        ap.error("OUTDIR is required")
    names = [s for s in a.only.split(",") if s] or list(ZOO)
    bad = [s for s in names if s not in ZOO]
    if bad:
        print("export_zoo: unknown model(s): %s (known: %s)" % (", ".join(bad), ", ".join(ZOO)),
              file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in names:
        export(name, a.outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
