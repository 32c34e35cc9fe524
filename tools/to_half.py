#!/usr/bin/env python3
"""to_half.py: an ONNX model with every float32 tensor made float16 (or
bfloat16): initializers, Constant values, graph inputs and outputs, value
infos and the `to` of Casts. For the CUDA target's f16/bf16 kernels
(tests/e2e/cuda.sh); the reference is onnxcc's C target on the same model.

    tools/to_half.py IN.onnx OUT.onnx [--bf16] [--input X.npy OUT.npy]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def main():
    args = sys.argv[1:]
    bf16 = "--bf16" in args
    args = [a for a in args if a != "--bf16"]
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
    walk(m.graph)
    onnx.save(m, dst)
    if conv_in:
        x = np.load(conv_in[0])
        np.save(conv_in[1], x.astype(np.float16) if not bf16 else x)


main()
