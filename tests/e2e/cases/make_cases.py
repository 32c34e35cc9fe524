#!/usr/bin/python3
"""make_cases.py: onnxcc's own end-to-end cases, in the backend tests' layout.

Writes tests/e2e/cases/local/test_*/{model.onnx,test_data_set_0/*.pb} for
what the ONNX suite does not cover: model-local functions (attribute
references, nested calls, two calls of one function). Expected
outputs are computed here with numpy, independently of onnxcc. Run with a
Python that has onnx and numpy (Debian: /usr/bin/python3); the outputs are
committed, so tests do not need Python.
"""
import os
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "local")


def save(name, model, inputs, outputs, check=True):
    d = os.path.join(ROOT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    if check:  # Debian's onnx 1.12 checker does not know opsets past 17
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, a in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(nh.from_array(a, "in%d" % k).SerializeToString())
    for k, a in enumerate(outputs):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % k), "wb") as f:
            f.write(nh.from_array(a, "out%d" % k).SerializeToString())


def scaled_shift():
    # ScaledShift(X, B) = X * alpha + B, alpha an attribute reference with a default
    const = h.make_node("Constant", [], ["a"])
    ref = onnx.AttributeProto()
    ref.name = "value_float"
    ref.ref_attr_name = "alpha"
    ref.type = onnx.AttributeProto.FLOAT
    const.attribute.append(ref)
    body = [const, h.make_node("Mul", ["X", "a"], ["t"]), h.make_node("Add", ["t", "B"], ["Y"])]
    f = h.make_function("local", "ScaledShift", ["X", "B"], ["Y"], body,
                        [h.make_opsetid("", 17)], attributes=[])
    f.attribute.extend(["alpha"])
    return f


def twice():
    # Twice(X) = ScaledShift(ScaledShift(X, 0, alpha=3), 1, alpha=2): a function calling one
    zero = h.make_node("Constant", [], ["z"], value=nh.from_array(np.array(0, np.float32)))
    one = h.make_node("Constant", [], ["o"], value=nh.from_array(np.array(1, np.float32)))
    a = h.make_node("ScaledShift", ["X", "z"], ["m"], domain="local", alpha=3.0)
    b = h.make_node("ScaledShift", ["m", "o"], ["Y"], domain="local", alpha=2.0)
    return h.make_function("local", "Twice", ["X"], ["Y"], [zero, one, a, b],
                           [h.make_opsetid("", 17), h.make_opsetid("local", 1)])


def main():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal((3,)).astype(np.float32)
    ops = [h.make_opsetid("", 17), h.make_opsetid("local", 1)]
    vi = lambda n, s: h.make_tensor_value_info(n, T.FLOAT, s)

    # two calls of one function, and a function calling it twice (the
    # attribute defaults of FunctionProto.attribute_proto are newer than
    # Debian's onnx package, so every call here gives alpha)
    nodes = [h.make_node("ScaledShift", ["x", "b"], ["y1"], domain="local", alpha=0.5),
             h.make_node("ScaledShift", ["y1", "b"], ["y2"], domain="local", alpha=2.0),
             h.make_node("Twice", ["y2"], ["y3"], domain="local")]
    g = h.make_graph(nodes, "local_functions", [vi("x", [2, 3]), vi("b", [3])],
                     [vi("y2", [2, 3]), vi("y3", [2, 3])])
    m = h.make_model(g, opset_imports=ops, functions=[scaled_shift(), twice()])
    m.ir_version = 8
    y1 = x * np.float32(0.5) + b
    y2 = y1 * np.float32(2.0) + b
    y3 = (y2 * np.float32(3.0) + np.float32(0)) * np.float32(2.0) + np.float32(1)
    save("test_local_functions", m, [x, b], [y2, y3])

    # string tensors through the API: an input passed through to an output
    # (pointers copied; UTF-8 and the empty string kept)
    g = h.make_graph([h.make_node("Identity", ["s"], ["t"])], "strings",
                     [h.make_tensor_value_info("s", T.STRING, [2, 2])],
                     [h.make_tensor_value_info("t", T.STRING, [2, 2])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    strs = np.array([["a", "b\u00e9"], ["", "long string"]], dtype=object)
    save("test_string_passthrough", m, [strs], [strs])

    # strings made by one op and read by the next: the bytes of a, in its
    # node's scratch, must survive b (a planner bug once let b overwrite them)
    g = h.make_graph([h.make_node("StringConcat", ["x", "y"], ["a"]),
                      h.make_node("StringConcat", ["y", "a"], ["b"])], "string_chain",
                     [h.make_tensor_value_info("x", T.STRING, [3]),
                      h.make_tensor_value_info("y", T.STRING, [3])],
                     [h.make_tensor_value_info("b", T.STRING, [3]),
                      h.make_tensor_value_info("a", T.STRING, [3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 20)])
    m.ir_version = 9
    xs = np.array(["abc", "de", "f"], dtype=object)
    ys = np.array(["1", "22", "333"], dtype=object)
    a = np.array([p + q for p, q in zip(xs, ys)], dtype=object)
    b = np.array([p + q for p, q in zip(ys, a)], dtype=object)
    save("test_string_chain", m, [xs, ys], [b, a], check=False)

    # a recursive function is an error, not a hang
    rec = h.make_function("local", "Rec", ["X"], ["Y"],
                          [h.make_node("Rec", ["X"], ["Y"], domain="local")], ops)
    g = h.make_graph([h.make_node("Rec", ["x"], ["y"], domain="local")], "recursive",
                     [vi("x", [2, 3])], [vi("y", [2, 3])])
    m = h.make_model(g, opset_imports=ops, functions=[rec])
    m.ir_version = 8
    d = os.path.join(ROOT, "..", "bad")
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(d, "recursive_function.onnx"))


if __name__ == "__main__":
    main()
