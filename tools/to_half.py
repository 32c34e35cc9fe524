#!/usr/bin/env python3
"""to_half.py: an ONNX model with every float32 tensor made float16 (or
bfloat16): initializers, Constant values, graph inputs and outputs, value
infos and the `to` of Casts. For the CUDA target's f16/bf16 kernels
(tests/e2e/cuda.sh); the reference is onnxcc's C target on the same model.
--keep-io: the graph's inputs and outputs stay float32, Cast at the edges
(numpy has no bfloat16 for the test program's .npy files).

    tools/to_half.py IN.onnx OUT.onnx [--bf16] [--keep-io] [--input X.npy OUT.npy]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def main():
    args = sys.argv[1:]
    bf16, keep_io = "--bf16" in args, "--keep-io" in args
    args = [a for a in args if a not in ("--bf16", "--keep-io")]
    conv_in = None
    if "--input" in args:
        i = args.index("--input")
        conv_in = args[i + 1:i + 3]
        args = args[:i] + args[i + 3:]
    src, dst = args
    to = TensorProto.BFLOAT16 if bf16 else TensorProto.FLOAT16
    m = onnx.load(src)

    def half(t):
        if t.data_type != TensorProto.FLOAT:
            return t
        a = numpy_helper.to_array(t)
        if bf16:
            # bfloat16: the top half of the f32 bits, rounded to nearest even
            u = a.astype(np.float32).view(np.uint32)
            u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
            n = onnx.TensorProto(name=t.name, data_type=to, dims=list(a.shape))
            n.raw_data = u.tobytes()
            return n
        return numpy_helper.from_array(a.astype(np.float16), t.name)

    def walk(g):
        for i, t in enumerate(list(g.initializer)):
            g.initializer[i].CopyFrom(half(t))
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            tt = vi.type.tensor_type
            if tt.elem_type == TensorProto.FLOAT:
                tt.elem_type = to
        for n in g.node:
            for a in n.attribute:
                if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                    a.i = to
                if a.type == onnx.AttributeProto.TENSOR:
                    a.t.CopyFrom(half(a.t))
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
    g = m.graph
    edges = []
    if keep_io:  # float32 at the edges: rename inside, Cast in and out
        for vi in g.input:
            if vi.type.tensor_type.elem_type == TensorProto.FLOAT and vi.name not in [t.name for t in g.initializer]:
                inner = vi.name + "_half"
                for n in g.node:
                    n.input[:] = [inner if x == vi.name else x for x in n.input]
                edges.append(onnx.helper.make_node("Cast", [vi.name], [inner], to=to))
        for vi in g.output:
            if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
                inner = vi.name + "_half"
                for n in g.node:
                    n.output[:] = [inner if x == vi.name else x for x in n.output]
                    n.input[:] = [inner if x == vi.name else x for x in n.input]
                edges.append(onnx.helper.make_node("Cast", [inner], [vi.name], to=TensorProto.FLOAT))
        io = {vi.name for vi in list(g.input) + list(g.output)}
    walk(g)
    if keep_io:
        for vi in list(g.input) + list(g.output):
            if vi.name in io and vi.type.tensor_type.elem_type == to:
                vi.type.tensor_type.elem_type = TensorProto.FLOAT
        new = [e for e in edges if e.output[0].endswith("_half")] + list(g.node) + \
            [e for e in edges if not e.output[0].endswith("_half")]
        del g.node[:]
        g.node.extend(new)
    onnx.save(m, dst)
    if conv_in:
        x = np.load(conv_in[0])
        np.save(conv_in[1], x if keep_io else x.astype(np.float16))


main()
