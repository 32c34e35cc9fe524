"""minimize.py: shrink a failing difftest case to the fewest nodes that
still fail the same way (run.py --minimize DIR --config CONFIG).

The case (a folder run.py kept: model.onnx, twin.onnx, run_K/, meta.json)
is first made static at its failing run (one input set, the run-time dim
fixed), if it still fails so; else it keeps its runs and its run-time dim
(a value cut then becomes an input of shape [N, ...] where its axis 0 is
N in every run). Then, greedily, until nothing more goes:
  - the graph outputs but one failing output are dropped;
  - a node is cut: its outputs become graph inputs, fed with the values
    ONNX Runtime computed for them on the twin (rounded to the model's
    dtype), and every node only it needed goes too.
A change is kept when the configuration still fails with the same status.
What is left is written to DIR/min (a case run.py --replay takes) and
printed, node by node. Dims are not shrunk: the values fed in are the
model's own, so a smaller shape would be another model.
"""
import copy
import json
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import helper

import gen
import run

FLOAT_T = {"f32": onnx.TensorProto.FLOAT, "f16": onnx.TensorProto.FLOAT16, "bf16": onnx.TensorProto.BFLOAT16,
           "qdq": onnx.TensorProto.FLOAT}
NP_T = {np.dtype(np.uint8): onnx.TensorProto.UINT8, np.dtype(np.int8): onnx.TensorProto.INT8,
        np.dtype(np.int32): onnx.TensorProto.INT32, np.dtype(np.int64): onnx.TensorProto.INT64,
        np.dtype(np.bool_): onnx.TensorProto.BOOL}


class Case:
    """a case in memory: both models, the input sets (twin values, f32; one
    dict a run), meta"""

    def __init__(self, model, twin, feeds, meta):
        self.model, self.twin, self.feeds, self.meta = model, twin, feeds, meta

    def copy(self):
        return Case(copy.deepcopy(self.model), copy.deepcopy(self.twin), [dict(f) for f in self.feeds], self.meta)

    def write(self, d):
        shutil.rmtree(d, ignore_errors=True)
        names = [i.name for i in self.model.graph.input]
        for k, feeds in enumerate(self.feeds):
            rd = os.path.join(d, "run_%d" % k)
            os.makedirs(rd)
            for j, n in enumerate(names):
                a = np.asarray(feeds[n])
                np.save(os.path.join(rd, "twin_%d.npy" % j), a)
                if a.dtype == np.float32 and self.meta["dtype"] == "f16":
                    a = a.astype(np.float16)
                elif a.dtype == np.float32 and self.meta["dtype"] == "bf16":
                    a = gen.bf16_bits(a)
                np.save(os.path.join(rd, "in_%d.npy" % j), a)
        onnx.save(self.model, os.path.join(d, "model.onnx"))
        onnx.save(self.twin, os.path.join(d, "twin.onnx"))
        m = dict(self.meta, runs=len(self.feeds), outputs=[o.name for o in self.model.graph.output])
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(m, f, indent=1)
        return m


def fails(case, cfg, status, ort, work, cflags):
    d = os.path.join(work, "try")
    meta = case.write(d)
    r = run.run_case(d, meta, [cfg], ort, None, cflags)[0]
    return r.status == status, r


def load(case_dir, meta, runs):
    """the case as it is, with the runs given"""
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    twin = onnx.load(os.path.join(case_dir, "twin.onnx"))
    feeds = []
    for k in runs:
        rd = os.path.join(case_dir, "run_%d" % k)
        feeds.append({i.name: np.load(os.path.join(rd, "twin_%d.npy" % j)) for j, i in enumerate(model.graph.input)})
    return Case(model, twin, feeds, dict(meta))


def static_at(case_dir, meta, k):
    """the case made static at run k (its inputs' shapes fixed)"""
    c = load(case_dir, meta, [k])
    for m in (c.model, c.twin):
        for i in m.graph.input:
            sh = c.feeds[0][i.name].shape
            for k2, dim in enumerate(i.type.tensor_type.shape.dim):
                dim.Clear()
                dim.dim_value = sh[k2]
        for o in m.graph.output:
            for dim in o.type.tensor_type.shape.dim:
                if dim.dim_param:
                    dim.Clear()
    c.meta = dict(meta, dims={}, dynamic=False)
    return c


def values(case, ort, work):
    """every top-level value's twin value (ONNX Runtime), by name, a dict a run"""
    twin = run.all_outputs(copy.deepcopy(case.twin))
    d = os.path.join(work, "values")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    onnx.save(twin, os.path.join(d, "all.onnx"))
    out = []
    for k, feeds in enumerate(case.feeds):
        ins = []
        for j, i in enumerate(twin.graph.input):
            p = os.path.join(d, "in_%d_%d.npy" % (k, j))
            np.save(p, feeds[i.name])
            ins.append(p)
        od = os.path.join(d, "out_%d" % k)
        if ort.run(os.path.join(d, "all.onnx"), ins, od):
            return []
        out.append({o.name: np.load(os.path.join(od, "output_%d.npy" % j)) for j, o in enumerate(twin.graph.output)})
    return out


def prune(m):
    """drop nodes no output needs, and initializers and inputs no node reads"""
    g = m.graph
    need = {o.name for o in g.output}
    keep = []
    for n in reversed(g.node):
        if any(o in need for o in n.output):
            keep.append(n)
            need.update(i for i in n.input if i)
            for a in n.attribute:  # outer-scope names read by bodies
                if a.type == onnx.AttributeProto.GRAPH:
                    need.update(outer_reads(a.g))
    del g.node[:]
    g.node.extend(reversed(keep))
    inits = [t for t in g.initializer if t.name in need]
    del g.initializer[:]
    g.initializer.extend(inits)
    ins = [i for i in g.input if i.name in need]
    del g.input[:]
    g.input.extend(ins)


def outer_reads(g):
    made = {i.name for i in g.input} | {t.name for t in g.initializer}
    out = set()
    for n in g.node:
        out.update(i for i in n.input if i and i not in made)
        made.update(n.output)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                out.update(outer_reads(a.g) - made)
    return out


def cut(case, node_index, vals):
    """node node_index's outputs made graph inputs, fed with vals (a dict
    of values a run); None where a value's shape is neither the same in
    every run nor the run-time dim N at axis 0 and the same elsewhere"""
    c = case.copy()
    n = c.model.graph.node[node_index]
    dyn = bool(case.meta.get("dims"))
    for o in n.output:
        if not o:
            continue
        if not vals or any(o not in v for v in vals):
            return None
        shapes = [v[o].shape for v in vals]
        ns = [f[c.model.graph.input[0].name].shape[0] for f in case.feeds] if dyn else []
        if all(sh == shapes[0] for sh in shapes):
            dims = list(shapes[0])
        elif dyn and all(len(sh) and sh[0] == nk and sh[1:] == shapes[0][1:] for sh, nk in zip(shapes, ns)):
            dims = ["N"] + list(shapes[0][1:])
        else:
            return None
        a0 = vals[0][o]
        if a0.dtype == np.float32:
            tm, tt = FLOAT_T[case.meta["dtype"]], onnx.TensorProto.FLOAT
        else:
            tm = tt = NP_T[a0.dtype]
        for k, v in enumerate(vals):
            a = v[o]
            if a.dtype == np.float32:
                a = gen.round_to(a, case.meta["dtype"] if case.meta["dtype"] in ("f16", "bf16") else "f32")
            c.feeds[k][o] = a
        c.model.graph.input.append(helper.make_tensor_value_info(o, tm, dims))
        c.twin.graph.input.append(helper.make_tensor_value_info(o, tt, dims))
    for m in (c.model, c.twin):
        del m.graph.node[node_index]
        prune(m)
    names = {i.name for i in c.model.graph.input}
    c.feeds = [{k: v for k, v in f.items() if k in names} for f in c.feeds]
    # a model left without an input of the run-time dim is compiled static
    if dyn and not any(any(d.dim_param == "N" for d in i.type.tensor_type.shape.dim) for i in c.model.graph.input):
        return None
    return c


def keep_outputs(case, names):
    c = case.copy()
    for m in (c.model, c.twin):
        outs = [o for o in m.graph.output if o.name in names]
        del m.graph.output[:]
        m.graph.output.extend(outs)
        prune(m)
    names_in = {i.name for i in c.model.graph.input}
    c.feeds = [{k: v for k, v in f.items() if k in names_in} for f in c.feeds]
    return c


def describe(m):
    lines = []
    for n in m.graph.node:
        attrs = ", ".join("%s=%s" % (a.name, helper.get_attribute_value(a)) for a in n.attribute
                          if a.type != onnx.AttributeProto.GRAPH)
        lines.append("  %s(%s) -> %s %s" % (n.op_type, ", ".join(n.input), ", ".join(n.output), attrs))
    return "\n".join(lines)


def main(case_dir, cfg, cflags):
    if not cfg:
        print("minimize: give the failing configuration (--config)")
        return 2
    meta = json.load(open(os.path.join(case_dir, "meta.json")))
    work = os.path.join(case_dir, "minimize")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ort = run.Ort()
    try:
        r0 = run.run_case(case_dir, meta, [cfg], ort, None, cflags)[0]
        if r0.status == "pass":
            print("minimize: %s passes on %s" % (case_dir, cfg))
            return 1
        status = r0.status
        print("minimize: %s: %s" % (status, r0.detail))
        k = 0
        mm = __import__("re").match(r"run (\d+)", r0.detail)
        if mm:
            k = int(mm.group(1))
        case = static_at(case_dir, meta, k)
        ok, r = fails(case, cfg, status, ort, work, cflags)
        if not ok:  # the run-time dims are part of it: minimized with them
            print("minimize: static at run %d it %s: minimized with the run-time dims" % (k, r.status))
            case = load(case_dir, meta, list(range(meta["runs"])))
        # one failing output
        for o in [x.name for x in case.model.graph.output]:
            c = keep_outputs(case, {o})
            if fails(c, cfg, status, ort, work, cflags)[0]:
                case = c
                break
        changed = True
        while changed:
            changed = False
            vals = values(case, ort, work)
            i = len(case.model.graph.node) - 1
            while i >= 0:
                if i < len(case.model.graph.node) and case.model.graph.input:
                    c = cut(case, i, vals)
                    if c is not None and c.model.graph.node and fails(c, cfg, status, ort, work, cflags)[0]:
                        case = c
                        changed = True
                i -= 1
        out = os.path.join(case_dir, "min")
        case.write(out)
        shutil.rmtree(work, ignore_errors=True)
        ok, r = fails(case, cfg, status, ort, os.path.join(case_dir, "min-check"), cflags)
        shutil.rmtree(os.path.join(case_dir, "min-check"), ignore_errors=True)
        print("minimize: %d nodes, %s on %s: %s" % (len(case.model.graph.node), r.status, cfg, r.detail))
        print(describe(case.model))
        print("minimize: written to %s (inputs %s)" % (out, ", ".join(
            "%s%s" % (i.name, list(case.feeds[0][i.name].shape)) for i in case.model.graph.input)))
        return 0
    finally:
        ort.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], "-O1"))
