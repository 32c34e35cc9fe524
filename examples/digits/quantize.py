#!/usr/bin/python3
"""quantize.py: an fp32 ONNX model to an int8 QDQ model, calibrated on inputs.

    quantize.py IN.onnx OUT.onnx CALIB.npy [--uint8]
    quantize.py digits.onnx digits_int8.onnx render:SEED:COUNT


CALIB.npy holds calibration inputs for the model's one input, concatenated
along its first (batch) axis: 64 inputs of a [1,C,H,W] model are one
[64,C,H,W] array. render:SEED:COUNT calibrates on COUNT digit images of
train.py's renderer (stream SEED); digits_int8.onnx next to this script is

    examples/digits/quantize.py examples/digits/digits.onnx \
        examples/digits/digits_int8.onnx render:3:64 Writes the
layout ONNX Runtime's quantize_static (QDQ format, per_channel=True)
produces, without needing its Python package:
  - weights of Conv (axis 0), Gemm (axis 0 with transB, else 1) and MatMul
    (axis 1) stored as int8, symmetric per output channel (range -127..127,
    zero point 0), each read through a DequantizeLinear;
  - their biases as int32 with scale s_x * s_w and zero point 0, read
    through a DequantizeLinear;
  - every activation that a quantized op (Conv, Gemm, MatMul, Add, Mul,
    Relu, Sigmoid, LeakyRelu, MaxPool, AveragePool, GlobalAveragePool,
    Reshape, Flatten) reads or
    writes passes a QuantizeLinear -> DequantizeLinear pair: asymmetric
    int8 (or uint8 with --uint8), min/max calibration with 0 in the range;
  - MaxPool, Reshape and Flatten keep their input's parameters (ORT's
    "direct 8-bit" ops), and a Relu or Clip (ReLU6) that alone reads the
    output of a Conv, Gemm, MatMul or Add is removed, that output taking
    the activation's range
    (ORT's removable activation).
Opset 13. Calibration runs the model in ONNX Runtime through
tools/ort_run.js (node), once, with every intermediate tensor an output.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUANT_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "Relu", "Sigmoid", "LeakyRelu", "MaxPool", "AveragePool",
             "GlobalAveragePool", "Reshape", "Flatten"}
DIRECT = {"MaxPool", "Reshape", "Flatten"}
FOLD_RELU = {"Conv", "Gemm", "MatMul", "Add"}


def write_npy(path, a):
    np.save(path, np.ascontiguousarray(a))


def calibrate(model, calib):
    """min and max of every float tensor over the calibration inputs"""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inp = g.input[0]
    inp.type.tensor_type.shape.dim[0].dim_param = "N"
    # the float tensors (ONNX's shape inference gives the types; a Shape's
    # int64 output is no activation)
    typed = onnx.shape_inference.infer_shapes(m).graph
    elem = {v.name: v.type.tensor_type.elem_type for v in list(typed.value_info) + list(typed.output)}
    del g.value_info[:]
    names = [o.name for o in g.output]
    for n in g.node:
        for t in n.output:
            if t and t not in names and elem.get(t, TensorProto.FLOAT) == TensorProto.FLOAT:
                names.append(t)
    del g.output[:]
    for t in names:
        g.output.append(helper.make_tensor_value_info(t, TensorProto.FLOAT, None))
    ranges = {inp.name: (float(calib.min()), float(calib.max()))}
    with tempfile.TemporaryDirectory() as d:
        onnx.save(m, os.path.join(d, "calib.onnx"))

        def run(x):
            write_npy(os.path.join(d, "x.npy"), x.astype(np.float32))
            return subprocess.run(["node", os.path.join(ROOT, "tools", "ort_run.js"), os.path.join(d, "calib.onnx"),
                                   os.path.join(d, "x.npy"), "-o", os.path.join(d, "out")],
                                  stderr=subprocess.DEVNULL).returncode == 0

        # the whole batch at once; one input at a time for a model whose
        # export fixed its batch (a Reshape to [1, ...])
        batches = [calib] if run(calib) else [calib[i:i + 1] for i in range(calib.shape[0])]
        for i, x in enumerate(batches):
            if len(batches) > 1 and not run(x):
                sys.exit("quantize.py: ONNX Runtime cannot run the model on the calibration inputs")
            for k, t in enumerate(names):
                a = np.load(os.path.join(d, "out", "output_%d.npy" % k))
                lo, hi = ranges.get(t, (float(a.min()), float(a.max()))) if i else (float(a.min()), float(a.max()))
                ranges[t] = (min(lo, float(a.min())), max(hi, float(a.max())))
    return ranges


def act_params(lo, hi, dt):
    """ORT's asymmetric scale and zero point for range [lo, hi]"""
    qmin, qmax = (0, 255) if dt == TensorProto.UINT8 else (-128, 127)
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / (qmax - qmin))
    if scale == 0:
        return np.float32(1.0), 0
    zp = int(np.clip(np.round(qmin - lo / scale), qmin, qmax))
    return scale, zp


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 3:
        sys.exit("usage: quantize.py IN.onnx OUT.onnx CALIB.npy [--uint8]")
    adt = TensorProto.UINT8 if "--uint8" in sys.argv else TensorProto.INT8
    npdt = np.uint8 if adt == TensorProto.UINT8 else np.int8
    model = onnx.load(args[0])
    if args[2].startswith("render:"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import train
        _, seed, count = args[2].split(":")
        calib = train.render(int(seed), 0, int(count))[1][:, None]
    else:
        calib = np.load(args[2]).astype(np.float32)
    ranges = calibrate(model, calib)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    consumers = {}
    for n in g.node:
        for t in n.input:
            consumers.setdefault(t, []).append(n)
    outputs = {o.name for o in g.output}

    # removable activations (Relu, Clip): the tensor before takes their range
    removed = set()
    alias = {}
    for n in g.node:
        if n.op_type not in ("Relu", "Clip"):
            continue
        p = producer.get(n.input[0])
        if p is not None and p.op_type in FOLD_RELU and len(consumers[n.input[0]]) == 1 \
                and n.input[0] not in outputs and n.output[0] not in outputs \
                and all(c.op_type in QUANT_OPS for c in consumers.get(n.output[0], [])):
            removed.add(id(n))
            alias[n.output[0]] = n.input[0]
            ranges[n.input[0]] = ranges[n.output[0]]

    def real(t):
        while t in alias:
            t = alias[t]
        return t

    # activation parameters, direct ops sharing their input's
    params = {}

    def qparams(t):
        if t in params:
            return params[t]
        p = producer.get(t)
        if p is not None and p.op_type in DIRECT and id(p) not in removed:
            params[t] = qparams(real(p.input[0]))
        else:
            params[t] = act_params(*ranges[t], adt)
        return params[t]

    nodes, new_inits = [], []
    dq_of = {}  # activation tensor -> its DequantizeLinear output

    def quant_act(t):
        """the DQ(Q(t)) output name for activation t (made once)"""
        if t in dq_of:
            return dq_of[t]
        s, z = qparams(t)
        sn, zn = t + "_scale", t + "_zero_point"
        new_inits.append(numpy_helper.from_array(np.array(s, np.float32), sn))
        new_inits.append(numpy_helper.from_array(np.array(z, npdt), zn))
        src = t + "_fp" if t in outputs else t
        nodes.append(helper.make_node("QuantizeLinear", [src, sn, zn], [t + "_quantized"], t + "_QuantizeLinear"))
        out = t if t in outputs else t + "_DequantizeLinear_Output"
        nodes.append(helper.make_node("DequantizeLinear", [t + "_quantized", sn, zn], [out],
                                      t + "_DequantizeLinear"))
        dq_of[t] = out
        return out

    def quant_weight(name, axis):
        w = numpy_helper.to_array(inits[name]).astype(np.float32)
        red = tuple(i for i in range(w.ndim) if i != axis)
        amax = np.abs(w).max(axis=red)
        s = (np.maximum(amax, 0) / np.float32(127)).astype(np.float32)
        s[s == 0] = np.float32(1)
        shp = [1] * w.ndim
        shp[axis] = -1
        q = np.clip(np.round(w / s.reshape(shp)), -127, 127).astype(np.int8)
        new_inits.append(numpy_helper.from_array(q, name + "_quantized"))
        new_inits.append(numpy_helper.from_array(s, name + "_scale"))
        new_inits.append(numpy_helper.from_array(np.zeros(s.shape, np.int8), name + "_zero_point"))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_quantized", name + "_scale",
                                                           name + "_zero_point"], [name + "_DequantizeLinear_Output"],
                                      name + "_DequantizeLinear", axis=axis))
        return s

    def quant_bias(name, xs, ws):
        b = numpy_helper.to_array(inits[name]).astype(np.float32).reshape(-1)
        s = (np.float32(xs) * ws).astype(np.float32)
        q = np.round(b / s).astype(np.int32)
        new_inits.append(numpy_helper.from_array(q, name + "_quantized"))
        new_inits.append(numpy_helper.from_array(s, name + "_scale"))
        new_inits.append(numpy_helper.from_array(np.zeros(s.shape, np.int32), name + "_zero_point"))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_quantized", name + "_scale",
                                                           name + "_zero_point"], [name + "_DequantizeLinear_Output"],
                                      name + "_DequantizeLinear", axis=0))

    used_weights = set()
    for n in g.node:
        if id(n) in removed:
            continue
        # (an op of integer shape arithmetic, an Add of Gather outputs,
        # has no float range: it stays as it is)
        acts = [t for t in (n.input[:1] if n.op_type == "Reshape" else n.input) if t and t not in inits]
        if n.op_type not in QUANT_OPS or any(real(t) not in ranges for t in acts):
            nodes.append(n)
            continue
        ins = list(n.input)
        wi = None
        if n.op_type in ("Conv", "Gemm", "MatMul") and len(ins) > 1 and ins[1] in inits:
            trans_b = any(a.name == "transB" and a.i for a in n.attribute)
            axis = 0 if n.op_type == "Conv" or (n.op_type == "Gemm" and trans_b) else 1
            ws = quant_weight(ins[1], axis)
            used_weights.add(ins[1])
            wi = ins[1] + "_DequantizeLinear_Output"
        # activations (not Reshape's shape)
        nact = 1 if n.op_type == "Reshape" or wi is not None else len(ins)
        for k in range(nact):
            if ins[k] and ins[k] not in inits:
                ins[k] = quant_act(real(ins[k]))
        if wi is not None:
            xs = qparams(real(n.input[0]))[0]
            ins[1] = wi
            if len(ins) > 2 and ins[2] in inits:
                quant_bias(ins[2], xs, ws)
                used_weights.add(ins[2])
                ins[2] = ins[2] + "_DequantizeLinear_Output"
        outs = []
        for t in n.output:
            outs.append(t + "_fp" if t in outputs else t)
        nodes.append(helper.make_node(n.op_type, ins, outs, n.name, domain=n.domain or None,
                                      **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
        for t in n.output:
            if t in outputs or any(id(c) not in removed and c.op_type in QUANT_OPS for c in consumers.get(t, [])):
                quant_act(t)
            if t in outputs:
                dq_of.setdefault(t, t)
    # order: a node after what it reads
    done = {i.name for i in g.input} | {t.name for t in g.initializer} | {t.name for t in new_inits} | {""}
    ordered, pending = [], nodes
    while pending:
        rest = []
        for n in pending:
            if all(t in done for t in n.input):
                ordered.append(n)
                done.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            sys.exit("quantize.py: cannot order the graph")
        pending = rest
    # the float weights the quantized ones replace, unless another node
    # still reads them (an Identity of a bias, as EfficientNet's export has)
    read = {t for n in ordered for t in n.input}
    keep = [t for t in g.initializer if t.name not in used_weights or t.name in read]
    del g.node[:]
    g.node.extend(ordered)
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    del g.value_info[:]
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("", 13))
    onnx.checker.check_model(model)
    onnx.save(model, args[1])


if __name__ == "__main__":
    main()
