#!/usr/bin/env python3
"""decoder_torch.py: examples/generate/make_decoder.py's decoders in plain
PyTorch, on the very weights of the ONNX file, and generate.c's greedy loop
over them (the prompt in one step, then one token a step), in eager mode
and under torch.compile: the reference onnxcc's CUDA decoders are timed
against (bench/cuda_device.sh).

    bench/decoder_torch.py decoder.onnx N ID... [--device cuda]
        [--configs eager:fp32,compile:fp32,eager:fp16] [--warmup 1] [--rounds 3] [--ids FILE] [--json FILE]

The network is read off the graph: GPT-2's form (com.microsoft Attention,
or MultiHeadAttention after MatMulNBits with a bias; LayerNorms, FastGelu,
token and position embeddings) or the Llama form of ONNX Runtime GenAI
(GroupQueryAttention with rotary inside from the graph's cos/sin tables,
RMS norms, SwiGLU). A MatMulNBits weight is dequantized once to f32
((q - zero point) x scale): the twin of a 4-bit decoder computes with the
dequantized weights (in the run's dtype), not with 4-bit ones.

The weights are the module's parameters (torch.compile's CUDA graphs
read parameters in place, and copy other inputs in at each replay). The
KV cache is static: [1, kv heads, prompt + N, head] a layer, zeros where
not yet written. A step (the module's forward, which torch.compile
compiles: mode reduce-overhead, dynamic=False, so the prefill's shape and
the decode step's are each one graph) takes the ids, their positions as a
tensor and the caches, attends over the whole cache length with the keys
after a query's position masked, and returns the logits and the step's
new keys and values, which the loop writes into the caches (index_copy_)
outside it. Softmax and norms in the run's dtype, as the weights.

Timing as generate.c's: a step from its inputs to the next id on the host
(the argmax's .item() waits for the device); --warmup whole loops first
(torch.compile compiles and records its CUDA graphs there), then --rounds
loops, the medians of their prefills and of their decodes. fp32 runs with
TF32 off. torch.compile needs PyTorch 2 (1.13 has none: the configuration
fails, the others run).
Prints a line per configuration; --ids writes the first configuration's
ids (generate.c's stdout format); --json the figures and ids of all.
"""

import argparse
import json
import math
import statistics
import sys
import time
import traceback

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
MODES = ("eager", "compile")


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def dequant(w, node):
    """MatMulNBits (4 bits, uint8 zero points) -> the [K, N] f32 weight"""
    k, n, bs = attr(node, "K"), attr(node, "N"), attr(node, "block_size")
    q, s, z = (w[x] for x in node.input[1:4])
    nb = q.shape[1]
    v = np.stack([q & 15, q >> 4], -1).reshape(n, nb, bs).astype(np.float32)
    zp = np.stack([z & 15, z >> 4], -1).reshape(n, -1)[:, :nb].astype(np.float32)
    d = (v - zp[..., None]) * s.reshape(n, nb)[..., None]
    return d.reshape(n, nb * bs)[:, :k].T.copy()


class Twin(torch.nn.Module):
    """the decoder's weights, named by make_decoder.py's names, and its
    step (forward)"""

    def __init__(self, path):
        super().__init__()
        m = onnx.load(path)
        w = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
        ops = {n.op_type: n for n in m.graph.node}
        self.llama = "GroupQueryAttention" in ops
        att = ops.get("GroupQueryAttention") or ops.get("MultiHeadAttention") or ops["Attention"]
        self.nh = attr(att, "num_heads")
        self.kvh = attr(att, "kv_num_heads", self.nh)
        self.layers = sum(n.op_type == att.op_type for n in m.graph.node)
        self.eps = attr(ops.get("SimplifiedLayerNormalization") or ops["LayerNormalization"], "epsilon", 1e-5)
        for n in m.graph.node:  # the 4-bit weights, dequantized, under the MatMul's name
            if n.op_type == "MatMulNBits":
                w[n.input[1][:-2]] = dequant(w, n)
        self.np = w
        self.hidden = w["wte"].shape[1]
        self.d = self.hidden // self.nh

    def load(self, device, dtype):
        """the weights on device in dtype, as parameters: torch.compile's
        CUDA graphs take a module's parameters in place (other tensors they
        copy in at each replay)"""
        self.w = torch.nn.ParameterDict({k: torch.nn.Parameter(torch.tensor(v, device=device, dtype=dtype), requires_grad=False)
                                         for k, v in self.np.items() if v.dtype == np.float32})
        self.device, self.dtype = device, dtype
        return self

    def caches(self, total):
        z = lambda: torch.zeros(1, self.kvh, total, self.d, device=self.device, dtype=self.dtype)
        return [z() for _ in range(2 * self.layers)]

    def attend(self, q, k, v, kc, vc, pos):
        """q [1, S, NH*D], k and v [1, S, KVH*D]: the attention of S new
        tokens at positions pos over the cache with them written in"""
        S, NH, KVH, D = q.shape[1], self.nh, self.kvh, self.d
        q = q.view(1, S, NH, D).transpose(1, 2)
        k = k.view(1, S, KVH, D).transpose(1, 2)
        v = v.view(1, S, KVH, D).transpose(1, 2)
        ka, va = kc.index_copy(2, pos, k), vc.index_copy(2, pos, v)
        if KVH != NH:
            ka, va = ka.repeat_interleave(NH // KVH, 1), va.repeat_interleave(NH // KVH, 1)
        s = torch.matmul(q, ka.transpose(2, 3)) * (1.0 / math.sqrt(D))
        keep = torch.arange(kc.shape[2], device=pos.device)[None, :] <= pos[:, None]
        s = s.masked_fill(~keep, float("-inf"))
        a = torch.matmul(torch.softmax(s, -1), va)
        return a.transpose(1, 2).reshape(1, S, NH * D), k, v

    def rotary(self, x, heads, pos):
        """ONNX Runtime's rotary, not interleaved: the halves of a head"""
        S, D = x.shape[1], self.d
        x = x.view(1, S, heads, D)
        c, s = self.w["cos"][pos][None, :, None, :], self.w["sin"][pos][None, :, None, :]
        x1, x2 = x[..., : D // 2], x[..., D // 2:]
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1).reshape(1, S, heads * D)

    def rms(self, x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * g

    def forward(self, ids, pos, caches):
        """logits [1, S, vocab] of ids [1, S] at positions pos [S], and the
        S new rows of each cache, in the caches' order"""
        w, H, news = self.w, self.hidden, []
        if self.llama:
            x = w["wte"][ids]
            NH, KVH, D = self.nh, self.kvh, self.d
            for i in range(self.layers):
                p = "l%d_" % i
                qkv = self.rms(x, w[p + "g1"]) @ w[p + "wqkv"]
                q, k, v = qkv.split([NH * D, KVH * D, KVH * D], -1)
                a, k, v = self.attend(self.rotary(q, NH, pos), self.rotary(k, KVH, pos), v, caches[2 * i], caches[2 * i + 1], pos)
                news += [k, v]
                x = x + a @ w[p + "wo"]
                m = self.rms(x, w[p + "g2"])
                x = x + (F.silu(m @ w[p + "wg"]) * (m @ w[p + "wu"])) @ w[p + "wd"]
            x = self.rms(x, w["gf"])
        else:
            x = w["wte"][ids] + w["wpe"][pos][None]
            for i in range(self.layers):
                p = "l%d_" % i
                qkv = F.layer_norm(x, (H,), w[p + "g1"], w[p + "b1"], self.eps) @ w[p + "wqkv"] + w[p + "bqkv"]
                q, k, v = qkv.split([H, H, H], -1)
                a, k, v = self.attend(q, k, v, caches[2 * i], caches[2 * i + 1], pos)
                news += [k, v]
                x = x + a @ w[p + "wo"]
                m = F.layer_norm(x, (H,), w[p + "g2"], w[p + "b2"], self.eps)
                x = x + F.gelu(m @ w[p + "w1"] + w[p + "bf"], approximate="tanh") @ w[p + "w2"]
            x = F.layer_norm(x, (H,), w["gf"], w["bfin"], self.eps)
        return x @ w["lm"], news


def generate(twin, fn, prompt, steps, sync):
    """generate.c's loop: ids and (prefill ms, decode ms)"""
    dev = twin.device
    caches = twin.caches(len(prompt) + steps)
    ids = torch.tensor([prompt], dtype=torch.int64, device=dev)
    pos = torch.arange(len(prompt), dtype=torch.int64, device=dev)
    out, tp, td = [], 0.0, 0.0
    sync()
    for s in range(steps):
        t0 = time.perf_counter()
        mark = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)
        if mark:
            mark()
        logits, news = fn(ids, pos, caches)
        for c, n in zip(caches, news):
            c.index_copy_(2, pos, n)
        best = int(logits[0, -1].float().argmax())
        dt = time.perf_counter() - t0
        if s:
            td += dt
        else:
            tp += dt
        out.append(best)
        ids = torch.tensor([[best]], dtype=torch.int64, device=dev)
        pos = torch.tensor([len(prompt) + s], dtype=torch.int64, device=dev)
    return out, tp * 1e3, td * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("n", type=int)
    ap.add_argument("prompt", type=int, nargs="+")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--configs", default="eager:fp32", help="MODE:DTYPE,... (modes eager, compile; dtypes fp32, fp16, bf16)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ids")
    ap.add_argument("--json")
    a = ap.parse_args()
    cuda = a.device.startswith("cuda")
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    twin, rows, rc = Twin(a.model), [], 0
    print("decoder_torch: %s, torch %s, %s, %d layers, hidden %d, %d heads (%d kv), %s" % (
        a.model, torch.__version__, torch.cuda.get_device_name() if cuda else "cpu", twin.layers, twin.hidden,
        twin.nh, twin.kvh, "Llama" if twin.llama else "GPT-2"), flush=True)
    for conf in a.configs.split(","):
        mode, dt = conf.split(":")
        if mode not in MODES or dt not in DTYPES:
            ap.error("--configs: " + conf)
        if getattr(twin, "dtype", None) != DTYPES[dt]:
            twin.load(a.device, DTYPES[dt])
        try:
            fn = twin
            if mode == "compile":
                torch._dynamo.reset()
                fn = torch.compile(twin, mode="reduce-overhead", dynamic=False)
            t0 = time.perf_counter()
            with torch.no_grad():
                for _ in range(a.warmup):
                    generate(twin, fn, a.prompt, a.n, sync)
                warm_s = time.perf_counter() - t0
                runs = [generate(twin, fn, a.prompt, a.n, sync) for _ in range(a.rounds)]
        except Exception:
            traceback.print_exc()
            print("decoder_torch %s %s: FAILED" % (mode, dt), flush=True)
            rc = 1
            continue
        ids = runs[-1][0]
        pre = statistics.median(r[1] for r in runs)
        dec = statistics.median(r[2] for r in runs)
        same = all(r[0] == ids for r in runs)
        row = {"mode": mode, "dtype": dt, "prefill_ms": pre, "decode_ms": dec, "ms_per_token": dec / max(a.n - 1, 1),
               "warmup_s": warm_s, "ids": ids, "rounds_agree": same}
        rows.append(row)
        print("decoder_torch %s %s: prefill %d tokens %.3f ms, decode %d tokens %.3f ms (%.3f ms/token, %.0f tokens/s),"
              " warm-up %.1f s%s" % (mode, dt, len(a.prompt), pre, a.n - 1, dec, row["ms_per_token"],
                                    (a.n - 1) / dec * 1e3 if dec else 0, warm_s,
                                    "" if same else ", ROUNDS DIFFER"), flush=True)
        if a.ids and len(rows) == 1:
            with open(a.ids, "w") as f:
                f.write(" ".join(map(str, ids)) + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"model": a.model, "torch": torch.__version__, "prompt": len(a.prompt), "n": a.n, "runs": rows}, f,
                      indent=1)
    return rc


if __name__ == "__main__":
    sys.exit(main())
