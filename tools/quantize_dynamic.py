#!/usr/bin/python3
"""quantize_dynamic.py: an fp32 ONNX model to the dynamic-quantization form
of ONNX Runtime's quantize_dynamic, without its Python package.

    quantize_dynamic.py IN.onnx OUT.onnx

Each MatMul whose B is a constant initializer [K, N] becomes, as
quantize_dynamic writes it (QOperator format, weights int8 symmetric per
tensor, activations uint8 quantized at run time):

    A -> DynamicQuantizeLinear -> (a_q, a_scale, a_zp)
    MatMulInteger(a_q, B_q, a_zp, B_zp) -> int32 -> Cast(float)
    Mul(cast, a_scale * B_scale)

(the scale product one Mul of the two scales). Other nodes are kept.
Used by bench/int8_bench.sh (the zoo's BERT-like encoder) and tests/e2e/int8.sh.
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    m = onnx.load(sys.argv[1])
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    nodes, new_inits = [], []
    for n in g.node:
        b = inits.get(n.input[1]) if n.op_type == "MatMul" else None
        if b is None or len(b.dims) != 2:
            nodes.append(n)
            continue
        w = numpy_helper.to_array(b).astype(np.float32)
        s = np.float32(max(np.abs(w).max(), 1e-8) / 127)
        p = n.output[0]
        new_inits += [numpy_helper.from_array(np.clip(np.round(w / s), -127, 127).astype(np.int8), p + "_Bq"),
                      numpy_helper.from_array(np.array(s, np.float32), p + "_Bs"),
                      numpy_helper.from_array(np.array(0, np.int8), p + "_Bz")]
        a = n.input[0]
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [a], [p + "_aq", p + "_as", p + "_az"], p + "_dq"),
            helper.make_node("MatMulInteger", [p + "_aq", p + "_Bq", p + "_az", p + "_Bz"], [p + "_i32"], p + "_mmi"),
            helper.make_node("Cast", [p + "_i32"], [p + "_f"], p + "_cast", to=TensorProto.FLOAT),
            helper.make_node("Mul", [p + "_as", p + "_Bs"], [p + "_s"], p + "_scale"),
            helper.make_node("Mul", [p + "_f", p + "_s"], [p], p + "_mul"),
        ]
    used = {i for nd in nodes for i in nd.input}
    keep = [t for t in g.initializer if t.name in used] + new_inits
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(keep)
    onnx.checker.check_model(m)
    onnx.save(m, sys.argv[2])


if __name__ == "__main__":
    main()
