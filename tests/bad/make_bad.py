#!/usr/bin/python3
"""make_bad.py: the malformed-model corpus (tests/bad/README.md).

    make_bad.py            write tests/bad/*.onnx and tests/bad/expected.txt
    make_bad.py --big DIR  write the big (valid) models into DIR

Each bad case is a function returning the model's bytes (a ModelProto built
with onnx.helper, edited as a raw protobuf where helper refuses) and the
substring onnxcc's error must contain. onnx.checker is never run: these
models are wrong on purpose. Run with a Python that has onnx and numpy
(Debian: /usr/bin/python3); the outputs are committed.
"""
import os
import sys
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T

HERE = os.path.dirname(os.path.abspath(__file__))
F = T.FLOAT
HUGE = 1 << 40  # two of them multiply past 2^63
CASES = []


def case(expect, args=""):
    """expect: what the error says; args: onnxcc options the case needs"""
    def reg(fn):
        CASES.append((fn.__name__, fn, expect, args))
        return fn
    return reg


def vi(name, shape, dt=F):
    return h.make_tensor_value_info(name, dt, shape)


def model(nodes, inputs, outputs, inits=(), opset=17, extra_opsets=()):
    g = h.make_graph(nodes, "bad", inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)] + list(extra_opsets))
    m.ir_version = 8
    return m.SerializeToString()


def unary(node, shape=(2, 3), out_shape=None, inits=()):
    """one node from x to y"""
    return model([node], [vi("x", list(shape))], [vi("y", out_shape)], inits)


def i64(name, vals):
    return nh.from_array(np.array(vals, np.int64), name)


def f32(name, shape):
    return nh.from_array(np.ones(shape, np.float32), name)


# ---- graph structure ----
@case("is not defined")
def cycle():
    a = h.make_node("Relu", ["b"], ["a"], name="A")
    b = h.make_node("Relu", ["a"], ["b"], name="B")
    return model([a, b], [vi("x", [2])], [vi("b", None)])


@case("input 'nowhere' is not defined")
def undefined_input():
    return unary(h.make_node("Add", ["x", "nowhere"], ["y"], name="add"))


@case("value 'y' is already defined")
def dup_node_outputs():
    a = h.make_node("Relu", ["x"], ["y"], name="first")
    b = h.make_node("Neg", ["x"], ["y"], name="second")
    return model([a, b], [vi("x", [2])], [vi("y", None)])


@case("value 'w' is already defined")
def dup_initializers():
    n = h.make_node("Add", ["x", "w"], ["y"], name="add")
    return model([n], [vi("x", [2])], [vi("y", None)], [f32("w", [2]), f32("w", [2])])


@case("value 'x' is already defined")
def dup_output_is_input():
    a = h.make_node("Relu", ["x"], ["x"], name="relu")
    return model([a], [vi("x", [2])], [vi("x", None)])


@case("value 'w' is already defined")
def dup_output_is_initializer():
    a = h.make_node("Relu", ["x"], ["w"], name="relu")
    n = h.make_node("Add", ["x", "w"], ["y"], name="add")
    return model([a, n], [vi("x", [2])], [vi("y", None)], [f32("w", [2])])


@case("value 'x' is already defined")
def dup_graph_inputs():
    n = h.make_node("Relu", ["x"], ["y"], name="relu")
    return model([n], [vi("x", [2]), vi("x", [3])], [vi("y", None)])


@case("no outputs")
def empty_graph():
    return model([], [vi("x", [2])], [])


@case("graph output 'z' is not produced")
def output_not_produced():
    n = h.make_node("Relu", ["x"], ["y"], name="relu")
    return model([n], [vi("x", [2])], [vi("z", None)])


# ---- attributes of the wrong type ----
def conv_model(**attrs):
    n = h.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)
    return model([n], [vi("x", [1, 2, 8, 8])], [vi("y", None)], [f32("w", [4, 2, 3, 3])])


@case("attribute 'strides' must be INTS, got FLOAT")
def attr_conv_strides_float():
    return conv_model(strides=2.0)


@case("attribute 'axis' must be INT, got STRING")
def attr_concat_axis_string():
    n = h.make_node("Concat", ["x", "x"], ["y"], name="cat", axis="1")
    return unary(n)


@case("attribute 'alpha' must be FLOAT, got STRING")
def attr_leakyrelu_alpha_string():
    return unary(h.make_node("LeakyRelu", ["x"], ["y"], name="lrelu", alpha="big"))


@case("attribute 'perm' must be INTS, got FLOATS")
def attr_transpose_perm_floats():
    return unary(h.make_node("Transpose", ["x"], ["y"], name="tr", perm=[1.0, 0.0]))


@case("attribute 'to' must be INT, got FLOAT")
def attr_cast_to_float():
    return unary(h.make_node("Cast", ["x"], ["y"], name="cast", to=1.5))


@case("attribute 'mode' must be STRING, got INT")
def attr_pad_mode_int():
    n = h.make_node("Pad", ["x", "p"], ["y"], name="pad", mode=3)
    return unary(n, inits=[i64("p", [0, 1, 0, 1])])


# ---- dims ----
@case("negative dim")
def neg_dim_input():
    return unary(h.make_node("Relu", ["x"], ["y"], name="relu"), shape=(2, -3))


@case("negative dim")
def neg_dim_initializer():
    t = f32("w", [2, 3])
    t.dims[1] = -3
    n = h.make_node("Add", ["x", "w"], ["y"], name="add")
    return model([n], [vi("x", [2, 3])], [vi("y", None)], [t])


@case("kernel")
def zero_kernel_dim():
    n = h.make_node("Conv", ["x", "w"], ["y"], name="conv")
    t = onnx.TensorProto(name="w", data_type=F, dims=[4, 2, 0, 3])
    return model([n], [vi("x", [1, 2, 8, 8])], [vi("y", None)], [t])


@case("stride")
def zero_conv_stride():
    return conv_model(strides=[0, 1])


@case("-1 dim")
def reshape_empty_with_minus_one():
    # allowzero: the 0 is a real 0, so nothing determines the -1
    n = h.make_node("Reshape", ["x", "s"], ["y"], name="reshape", allowzero=1)
    return unary(n, shape=(0, 3), inits=[i64("s", [-1, 0])])


@case("too large")
def overflow_input():
    return unary(h.make_node("Relu", ["x"], ["y"], name="relu"), shape=(HUGE, HUGE))


@case("too large", "--dim N=1099511627776")
def overflow_bound_symbol():
    return unary(h.make_node("Relu", ["x"], ["y"], name="relu"), shape=("N", "N"))


@case("too large")
def overflow_initializer():
    t = onnx.TensorProto(name="w", data_type=F, dims=[HUGE, HUGE])
    n = h.make_node("Add", ["x", "w"], ["y"], name="add")
    return model([n], [vi("x", [1])], [vi("y", None)], [t])


@case("too large")
def overflow_expand():
    n = h.make_node("Expand", ["x", "s"], ["y"], name="expand")
    return unary(n, shape=(1, 1), inits=[i64("s", [HUGE, HUGE])])


@case("too large")
def overflow_constant_of_shape():
    n = h.make_node("ConstantOfShape", ["s"], ["y"], name="cos")
    return model([n], [], [vi("y", None)], [i64("s", [HUGE, HUGE, 16])])


@case("too large")
def overflow_tile():
    n = h.make_node("Tile", ["x", "r"], ["y"], name="tile")
    return unary(n, shape=(2, 3), inits=[i64("r", [HUGE, HUGE])])


# ---- initializer data that disagrees with its dims ----
def add_init(t):
    n = h.make_node("Add", ["x", t.name], ["y"], name="add")
    return model([n], [vi("x", [2, 3])], [vi("y", None)], [t])


@case("raw_data has 8 bytes, expected 24")
def raw_data_short():
    return add_init(onnx.TensorProto(name="w", data_type=F, dims=[2, 3], raw_data=b"\0" * 8))


@case("raw_data has 40 bytes, expected 24")
def raw_data_long():
    return add_init(onnx.TensorProto(name="w", data_type=F, dims=[2, 3], raw_data=b"\0" * 40))


@case("5 typed values for 6 elements")
def float_data_count():
    return add_init(onnx.TensorProto(name="w", data_type=F, dims=[2, 3], float_data=[1.0] * 5))


# ---- op-level shape errors ----
@case("Reshape")
def reshape_count():
    n = h.make_node("Reshape", ["x", "s"], ["y"], name="reshape")
    return unary(n, inits=[i64("s", [4, 2])])


@case("-1")
def reshape_two_minus_one():
    n = h.make_node("Reshape", ["x", "s"], ["y"], name="reshape")
    return unary(n, inits=[i64("s", [-1, -1])])


@case("axis")
def concat_axis_range():
    return unary(h.make_node("Concat", ["x", "x"], ["y"], name="cat", axis=5))


@case("Concat")
def concat_shapes():
    n = h.make_node("Concat", ["x", "z"], ["y"], name="cat", axis=0)
    return model([n], [vi("x", [2, 3]), vi("z", [2, 4])], [vi("y", None)])


@case("out of range")
def gather_indices_range():
    n = h.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=0)
    return unary(n, inits=[i64("i", [0, 7])])


@case("axis")
def gather_axis_range():
    n = h.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=3)
    return unary(n, inits=[i64("i", [0])])


@case("split")
def split_sizes_sum():
    n = h.make_node("Split", ["x", "s"], ["y", "z"], name="split", axis=1)
    return model([n], [vi("x", [2, 6])], [vi("y", None), vi("z", None)], [i64("s", [2, 3])])


@case("channels")
def conv_weight_channels():
    n = h.make_node("Conv", ["x", "w"], ["y"], name="conv")
    return model([n], [vi("x", [1, 3, 8, 8])], [vi("y", None)], [f32("w", [4, 2, 3, 3])])


@case("kernel")
def conv_kernel_too_big():
    n = h.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])
    return model([n], [vi("x", [1, 2, 4, 4])], [vi("y", None)], [f32("w", [4, 2, 7, 7])])


@case("group")
def conv_group_divide():
    n = h.make_node("Conv", ["x", "w"], ["y"], name="conv", group=3)
    return model([n], [vi("x", [1, 4, 8, 8])], [vi("y", None)], [f32("w", [4, 1, 3, 3])])


# ---- opsets and domains ----
@case("opset 99")
def opset_99():
    return model([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", [2])], [vi("y", None)],
                 opset=99)


@case("opset 0")
def opset_0():
    return model([h.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", [2])], [vi("y", None)],
                 opset=0)


@case("unsupported operator in domain com.example")
def unknown_domain_op():
    n = h.make_node("Frobnicate", ["x"], ["y"], name="frob", domain="com.example")
    return model([n], [vi("x", [2])], [vi("y", None)], extra_opsets=[h.make_opsetid("com.example", 1)])


# ---- external data ----
def external(location, offset=None, length=None):
    t = onnx.TensorProto(name="w", data_type=F, dims=[2, 3])
    t.data_location = T.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return add_init(t)


@case("leaves the model's folder")
def ext_parent_dir():
    return external("../x.bin")


@case("leaves the model's folder")
def ext_absolute():
    return external("/etc/passwd")


@case("cannot open external data")
def ext_missing():
    return external("no_such_file.bin")


@case("is too short")
def ext_short():
    return external("short.bin", offset=8, length=24)


@case("offset")
def ext_negative_offset():
    return external("short.bin", offset=-4)


# ---- files that are not models ----
@case("not a valid ONNX model")
def empty_file():
    return b""


@case("not a valid ONNX model")
def truncated():
    return conv_model()[:-40]


@case("not a valid ONNX model")
def garbage():
    return bytes(np.random.default_rng(1).integers(0, 256, 512, dtype=np.uint8))


# ---- big valid models (not committed) ----
def big_wide(n=100000):
    """n Relu/Add nodes, each reading the input and the previous pair"""
    nodes, prev = [], "x"
    for i in range(n // 2):
        nodes.append(h.make_node("Relu", [prev], ["r%d" % i], name="r%d" % i))
        nodes.append(h.make_node("Add", ["r%d" % i, "x"], ["a%d" % i], name="a%d" % i))
        prev = "a%d" % i
    return model(nodes, [vi("x", [4])], [vi(prev, None)])


def big_deep(n=10000):
    nodes = [h.make_node("Relu" if i % 2 else "Neg", ["x" if i == 0 else "v%d" % (i - 1)], ["v%d" % i],
                         name="n%d" % i) for i in range(n)]
    return model(nodes, [vi("x", [4])], [vi("v%d" % (n - 1), None)])


def big_chain(n=100000):
    """n Softmax nodes in a chain: nothing fuses them, so every pass, the
    scheduler and the arena placement see all n nodes"""
    nodes = [h.make_node("Softmax", ["x" if i == 0 else "s%d" % (i - 1)], ["s%d" % i], name="s%d" % i)
             for i in range(n)]
    return model(nodes, [vi("x", [4, 8])], [vi("s%d" % (n - 1), None)])


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--big":
        for name, fn in (("big_100k", big_wide), ("deep_10k", big_deep), ("chain_100k", big_chain)):
            with open(os.path.join(sys.argv[2], name + ".onnx"), "wb") as f:
                f.write(fn())
        return
    with open(os.path.join(HERE, "short.bin"), "wb") as f:
        f.write(b"\0" * 16)
    lines = []
    for name, fn, expect, args in CASES:
        with open(os.path.join(HERE, name + ".onnx"), "wb") as f:
            f.write(fn())
        lines.append("%s.onnx\t%s%s\n" % (name, expect, "\t" + args if args else ""))
    with open(os.path.join(HERE, "expected.txt"), "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    main()
