#!/usr/bin/python3
"""Export the models of bench/dyn_bench.sh: zoo networks with dynamic axes.

Usage: /usr/bin/python3 bench/dyn_export.py OUTDIR [--only NAME,...] [--list]

Writes OUTDIR/NAME/model.onnx for each model below, exported by Debian's
torch 1.13 / torchvision 0.14 (weights=None: nothing is downloaded), the
same networks as tools/export_zoo.py's but with dims that a program
compiled for a range of shapes learns when it runs:
  resnet18      torchvision resnet18, input [N, 3, H, W] ('N', 'H', 'W')
  mobilenet_v2  torchvision mobilenet_v2, input [N, 3, H, W]
  bert          export_zoo.py's BertEncoder (4 layers, hidden 256, 4 heads,
                FFN 1024, LayerNorm and GELU written out at opset 13) with
                its sequence length 'S' dynamic: input [1, S, 256] and the
                additive mask [1, 1, 1, S] a second input (HF's extended
                attention mask), the heads split with view(1, -1, ...)
Random inputs of a given shape: tools/export_dyn.py --inputs.
Same bytes every run: every model seeds torch itself (export_zoo.py's seed
and BatchNorm calibration).
"""

import argparse
import math
import os
import sys

import onnx
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import export_zoo  # noqa: E402 (the zoo's models and helpers)


class BertSelfAttentionDyn(export_zoo.BertSelfAttention):
    """export_zoo's BertSelfAttention with the sequence length taken from
    the input (Shape -> Gather -> Concat -> Reshape in the export)."""

    def split(self, x):  # [1, S, H] -> [1, heads, S, dh]
        return x.view(1, -1, self.heads, self.dh).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + mask
        ctx = torch.matmul(F.softmax(scores, dim=-1), v)
        ctx = ctx.permute(0, 2, 1, 3).contiguous().view(1, -1, self.hidden)
        return self.norm(self.dense(ctx) + x)


class BertDyn(export_zoo.BertEncoder):
    def __init__(self):
        super().__init__()
        for layer in self.layers:  # the same weights, a dynamic split
            old = layer.attn
            new = BertSelfAttentionDyn(old.seq, old.hidden, old.heads, old.norm.eps)
            new.load_state_dict(old.state_dict())
            layer.attn = new

    def forward(self, x, mask):
        for layer in self.layers:
            x = layer(x, mask)
        return x


def export(name, outdir):
    torch.manual_seed(export_zoo.SEED)
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    if name in ("resnet18", "mobilenet_v2"):
        m = export_zoo.tv(name)()
        export_zoo.calibrate_bn(m, export_zoo.IMG)
        m.eval()
        x = torch.randn(2, 3, 224, 224)
        torch.onnx.export(m, (x,), path, opset_version=13, do_constant_folding=True, input_names=["input"],
                          output_names=["output"],
                          dynamic_axes={"input": {0: "N", 2: "H", 3: "W"}, "output": {0: "N"}})
    elif name == "bert":
        m = BertDyn().eval()
        x, mask = torch.randn(1, 128, 256), torch.zeros(1, 1, 1, 128)
        torch.onnx.export(m, (x, mask), path, opset_version=13, do_constant_folding=True,
                          input_names=["input", "mask"], output_names=["output"],
                          dynamic_axes={"input": {1: "S"}, "mask": {3: "S"}, "output": {1: "S"}})
    else:
        raise SystemExit("dyn_export: unknown model " + name)
    mo = onnx.load(path)
    onnx.checker.check_model(mo)
    ops = sorted({n.op_type for n in mo.graph.node})
    print("%-14s opset %2d  %4d nodes  %s" % (name, mo.opset_import[0].version, len(mo.graph.node), " ".join(ops)))


MODELS = ["resnet18", "mobilenet_v2", "bert"]


def main():
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
