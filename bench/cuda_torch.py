#!/usr/bin/env python3
"""Batch-1 latency of onnxcc's CUDA zoo models in PyTorch: eager and torch.compile.

Usage: python3 bench/cuda_torch.py [--models resnet18,mobilenet_v2,bert_encoder]
           [--dtypes fp32,fp16] [--modes eager,compile] [--max-autotune]
           [--iters 200] [--warmup 20] [--rounds 5] [--json OUT.json]

The reference that onnxcc's CUDA output of the same ONNX models is compared
with. The networks are tools/export_zoo.py's: torchvision's resnet18 and
mobilenet_v2 (weights=None, input 1x3x224x224; when torchvision does not
import, exact copies below, checked by their parameter counts) and its
BertEncoder (copied below: 4 layers, hidden 256, 4 heads, FFN 1024, GELU by
erf, LayerNorm eps 1e-12, constant additive mask; input 1x128x256). Weights
are random (seeded; BatchNorm statistics calibrated as export_zoo.py does so
that activations stay O(1)): latency does not depend on their values.

Setup: model.eval() under torch.no_grad(), model and input on the GPU; fp16
is model.half() with a half input. cudnn.benchmark is on; TF32 is off for
matmuls and convolutions (onnxcc's fp32 is true fp32), printed at start.
Modes: eager; compile = torch.compile(mode="reduce-overhead") (Inductor +
CUDA graphs); max-autotune = torch.compile(mode="max-autotune"), only with
--max-autotune or when named in --modes (slow to compile). compile_s is the
first call, synchronized (tracing, Inductor, autotuning; CUDA graphs are
recorded during the warm-up calls). A second run may take its compile from
Inductor's on-disk caches: TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 for cold.

Timing: after --warmup calls, each round times --iters single calls, each
between two CUDA events and followed by a synchronize, so every call starts
on an idle GPU (latency, launch overhead included, not pipelined
throughput). A round's figure is the median of its calls; reported are the
median of the round medians and their min and max. The output of the first
and last calls must be finite ("finite" in the JSON records). A configuration
that fails (e.g. a compile error) is printed and skipped; the exit status is
then 1, as it is for a non-finite output.
"""

import argparse
import importlib
import json
import math
import operator
import statistics
import sys
import time
import traceback
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 1234
PARAMS = {"resnet18": 11689512, "mobilenet_v2": 3504872, "bert_encoder": 3159040}
SHAPES = {"resnet18": (1, 3, 224, 224), "mobilenet_v2": (1, 3, 224, 224), "bert_encoder": (1, 128, 256)}
MODES = {"eager": None, "compile": "reduce-overhead", "max-autotune": "max-autotune"}

# ---------------------------------------------------------------------------
# torchvision's ResNet-18 and MobileNetV2, for when torchvision is missing:
# the same modules, state_dict keys and forward (only the initial weights'
# distributions differ, which latency does not see).


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


class ResNet18(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        cin = 64
        for i, cout in enumerate([64, 128, 256, 512]):
            stride = 1 if i == 0 else 2
            setattr(self, "layer%d" % (i + 1), nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def conv_bn_relu6(cin, cout, k=3, stride=1, groups=1):  # torchvision's Conv2dNormActivation
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU6(inplace=True))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, t):
        super().__init__()
        hidden = cin * t
        self.use_res_connect = stride == 1 and cin == cout
        layers = [conv_bn_relu6(cin, hidden, 1)] if t != 1 else []
        layers += [conv_bn_relu6(hidden, hidden, 3, stride, groups=hidden),
                   nn.Conv2d(hidden, cout, 1, 1, 0, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Module):
    """Width 1.0: every channel count is already a multiple of 8."""

    SETTING = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]

    def __init__(self, classes=1000):
        super().__init__()
        feats, cin = [conv_bn_relu6(3, 32, 3, 2)], 32
        for t, c, n, s in self.SETTING:
            for i in range(n):
                feats.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        feats.append(conv_bn_relu6(cin, 1280, 1))
        self.features = nn.Sequential(*feats)
        self.classifier = nn.Sequential(nn.Dropout(p=0.2), nn.Linear(1280, classes))

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(torch.flatten(x, 1))


# ---------------------------------------------------------------------------
# tools/export_zoo.py's BertEncoder (HF-style BERT encoder), copied.


class BertSelfAttention(nn.Module):
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
    def __init__(self, seq, hidden, heads, ffn, eps):
        super().__init__()
        self.attn = BertSelfAttention(seq, hidden, heads, eps)
        self.inter = nn.Linear(hidden, ffn)
        self.out = nn.Linear(ffn, hidden)
        self.norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x, mask):
        x = self.attn(x, mask)
        return self.norm(self.out(F.gelu(self.inter(x))) + x)  # GELU by erf (approximate="none")


class BertEncoder(nn.Module):
    def __init__(self, seq=128, hidden=256, heads=4, ffn=1024, layers=4, pad=16, eps=1e-12):
        super().__init__()
        self.layers = nn.ModuleList(BertLayer(seq, hidden, heads, ffn, eps) for _ in range(layers))
        mask = torch.zeros(1, 1, 1, seq)
        mask[..., seq - pad:] = -10000.0
        self.register_buffer("mask", mask)
        with torch.no_grad():  # export_zoo.py's trained-looking parameters
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


# ---------------------------------------------------------------------------


def calibrate_bn(model, shape, device, batches=3, batch=4):
    """export_zoo.py's: random BN affine parameters, running stats from random batches."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for m in bns:
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.2, 0.2)
            m.reset_running_stats()
            m.momentum = None
        if bns:
            model.train()
            for _ in range(batches):
                model(torch.randn(batch, *shape[1:], device=device))
    model.eval()


def build(name, use_tv, device):
    """fp32 model in eval mode on device, and where its definition came from."""
    torch.manual_seed(SEED)
    src = "bench/cuda_torch.py"
    if name == "bert_encoder":
        model = BertEncoder()
    elif use_tv:
        import torchvision
        model, src = getattr(torchvision.models, name)(weights=None), "torchvision " + torchvision.__version__
    else:
        model = {"resnet18": ResNet18, "mobilenet_v2": MobileNetV2}[name]()
    n = sum(p.numel() for p in model.parameters())
    assert n == PARAMS[name], "%s: %d parameters, expected %d" % (name, n, PARAMS[name])
    model = model.to(device)
    calibrate_bn(model, SHAPES[name], device)
    return model, src


def tf32_off():
    """TF32 off for fp32 matmuls and cuDNN convs; returns the flags as read back.
    Sets the legacy allow_tf32 flags and, on torch >= 2.9, the fp32_precision
    ones, all alike (torch refuses to read mixed legacy/new settings)."""
    flags = [("cuda.matmul", "allow_tf32", False), ("cudnn", "allow_tf32", False),
             ("cuda.matmul", "fp32_precision", "ieee"), ("cudnn.conv", "fp32_precision", "ieee"),
             ("cudnn.rnn", "fp32_precision", "ieee")]
    done, got = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2.9+: legacy-API deprecation warnings
        for name, attr, value in flags:
            try:  # torch 1.13's cuda.matmul raises AssertionError for unknown names
                setattr(operator.attrgetter(name)(torch.backends), attr, value)
                done.append((name, attr))
            except Exception as e:
                if attr == "allow_tf32":
                    got.append("%s.%s not set (%s: %s)" % (name, attr, type(e).__name__, e))
        for name, attr in done:
            try:
                got.append("%s.%s=%s" % (name, attr, getattr(operator.attrgetter(name)(torch.backends), attr)))
            except Exception as e:
                got.append("%s.%s unreadable (%s: %s)" % (name, attr, type(e).__name__, e))
    return " ".join(got)


def timed_calls(fn, x, n, cuda):
    """ms of n single calls, each synchronized; and the last output."""
    times = []
    for _ in range(n):
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = fn(x)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            out = fn(x)
            times.append((time.perf_counter() - t0) * 1e3)
    return times, out


def finite(out):
    return bool(torch.isfinite(out.float()).all().item())


def run(model, name, dtype, mode, a, device, cuda):
    """One configuration; returns the record (raises on failure)."""
    torch.manual_seed(SEED)
    x = torch.randn(*SHAPES[name], device=device)
    if dtype == "fp16":
        x = x.half()
    fn, compile_s, warmup = model, None, a.warmup
    if MODES[mode] is not None:
        importlib.import_module("torch._dynamo").reset()  # clean slate: caches, CUDA graph pools
        fn = torch.compile(model, mode=MODES[mode])
        warmup = max(warmup, 3)  # CUDA graph trees: eager warm-up, record, then replay
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    sync()
    t0 = time.perf_counter()
    out = fn(x)
    sync()
    if MODES[mode] is not None:
        compile_s = time.perf_counter() - t0
    ok = finite(out)
    timed_calls(fn, x, warmup, cuda)
    medians = []
    for _ in range(a.rounds):
        times, out = timed_calls(fn, x, a.iters, cuda)
        medians.append(statistics.median(times))
    ok = ok and finite(out)
    return {"median_ms": statistics.median(medians), "min_ms": min(medians), "max_ms": max(medians),
            "compile_s": compile_s, "finite": ok}


def csv(s, known, what):
    items = [v for v in s.split(",") if v]
    bad = [v for v in items if v not in known]
    if bad:
        sys.exit("cuda_torch: unknown %s: %s (known: %s)" % (what, ", ".join(bad), ", ".join(known)))
    return items


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="resnet18,mobilenet_v2,bert_encoder")
    ap.add_argument("--dtypes", default="fp32,fp16")
    ap.add_argument("--modes", default="eager,compile", help="eager, compile (reduce-overhead), max-autotune")
    ap.add_argument("--max-autotune", action="store_true", help="also torch.compile(mode='max-autotune')")
    ap.add_argument("--iters", type=int, default=200, help="timed calls a round")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", help="write the records to this file")
    ap.add_argument("--device", default="cuda", help=argparse.SUPPRESS)  # cpu: smoke test only
    ap.add_argument("--no-torchvision", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    models = csv(a.models, PARAMS, "model")
    dtypes = csv(a.dtypes, ["fp32", "fp16"], "dtype")
    modes = csv(a.modes, MODES, "mode")
    if a.max_autotune and "max-autotune" not in modes:
        modes.append("max-autotune")

    use_tv = False
    if not a.no_torchvision:
        try:
            import torchvision  # noqa: F401
            use_tv = True
        except Exception as e:  # missing, or built against another torch
            print("torchvision does not import (%s): using this script's ResNet-18/MobileNetV2" % e)
    cuda = a.device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        sys.exit("cuda_torch: CUDA is not available (--device cuda)")
    gpu = torch.cuda.get_device_name() if cuda else "cpu"
    torch.backends.cudnn.benchmark = True
    print("torch %s, %s, cuDNN %s, CUDA %s" % (torch.__version__, gpu, torch.backends.cudnn.version(),
                                               torch.version.cuda))
    print("fp32: TF32 off: %s; cudnn.benchmark=%s" % (tf32_off(), torch.backends.cudnn.benchmark))
    print("timing: %d warm-up calls, %d rounds of %d calls, each between CUDA events and synchronized"
          % (a.warmup, a.rounds, a.iters) if cuda else "timing: time.perf_counter (device %s)" % a.device)

    records, failed = [], 0
    with torch.no_grad():
        for name in models:
            for dtype in dtypes:
                try:
                    model, src = build(name, use_tv, a.device)
                    if dtype == "fp16":
                        model = model.half()
                    print("%s %s: %s, %d parameters" % (name, dtype, src, PARAMS[name]))
                except Exception as e:
                    failed += len(modes)
                    print("%-12s %s: FAILED to build: %s: %s" % (name, dtype, type(e).__name__, e))
                    continue
                for mode in modes:
                    tag = "%-12s %-4s %-12s" % (name, dtype, mode)
                    try:
                        r = run(model, name, dtype, mode, a, a.device, cuda)
                    except Exception as e:
                        failed += 1
                        tb = traceback.format_exc().strip().splitlines()
                        print("%s FAILED: %s: %s\n  %s" % (tag, type(e).__name__, str(e)[:1500],
                                                           "\n  ".join(tb[-4:])))
                        continue
                    finally:
                        if cuda:
                            torch.cuda.empty_cache()
                    comp = "" if r["compile_s"] is None else "  compile %.1f s" % r["compile_s"]
                    print("%s median %8.3f ms  (round medians %.3f .. %.3f)%s%s" % (
                        tag, r["median_ms"], r["min_ms"], r["max_ms"], comp,
                        "" if r["finite"] else "  OUTPUT NOT FINITE"))
                    failed += not r["finite"]
                    records.append(dict(model=name, dtype=dtype, mode=mode, median_ms=r["median_ms"],
                                        min_ms=r["min_ms"], max_ms=r["max_ms"], compile_s=r["compile_s"],
                                        torch=torch.__version__, gpu=gpu, finite=r["finite"]))
                del model
    if a.json:
        with open(a.json, "w") as f:
            json.dump(records, f, indent=1)
        print("wrote %d records to %s" % (len(records), a.json))
    if failed:
        print("%d configuration(s) failed or gave non-finite output" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
