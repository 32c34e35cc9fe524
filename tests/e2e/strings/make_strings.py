#!/usr/bin/python3
"""make_strings.py: the test model of the CUDA target's host nodes, the
string ops run on the host in stream order (codegen/c.c, emit_host_node;
tests/e2e/cuda.sh step 15).

Writes strings.onnx (opset 20, ai.onnx.ml 3) and its inputs next to this
script: strings_input_K.npy, strings_bad_K.npy (input K with an index out
of range: the Gather's) and strings_long_K.npy (input K with a string past
the capacity: the first StringConcat fails and the second, which reads
its output, must not run).

  a, b string[4], sfx string[1], want string[4]
  c = StringConcat(a, b)                host
  d = StringConcat(c, sfx)              host, reads c's pointers
  e = Equal(d, want)                    host, bool back on the device
  k int64[6], idx int64[4]
  ki = Gather(k, idx)                   a kernel
  f = LabelEncoder(ki) -> strings       host, its input from a kernel
  g = RegexFullMatch(f)                 host
  nz = Not(g)                           a kernel on a host node's output
  u = StringNormalizer(d, stopwords)    host, its length from the data
outputs d, e, f, nz, u
"""
import os

import numpy as np
import onnx
from onnx import helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    S, I64, B = TensorProto.STRING, TensorProto.INT64, TensorProto.BOOL
    nodes = [
        helper.make_node("StringConcat", ["a", "b"], ["c"]),
        helper.make_node("StringConcat", ["c", "sfx"], ["d"]),
        helper.make_node("Equal", ["d", "want"], ["e"]),
        helper.make_node("Gather", ["k", "idx"], ["ki"], axis=0),
        helper.make_node("LabelEncoder", ["ki"], ["f"], domain="ai.onnx.ml", keys_int64s=[10, 30, 60],
                         values_strings=["ten_1", "thirty_3", "SIXTY"], default_string="none"),
        helper.make_node("RegexFullMatch", ["f"], ["g"], pattern="[a-z]+_[0-9]"),
        helper.make_node("Not", ["g"], ["nz"]),
        helper.make_node("StringNormalizer", ["d"], ["u"], case_change_action="UPPER", is_case_sensitive=1,
                         stopwords=["xy.com!"]),
    ]
    ins = [("a", S, [4]), ("b", S, [4]), ("sfx", S, [1]), ("want", S, [4]), ("k", I64, [6]), ("idx", I64, [4])]
    outs = [("d", S, [4]), ("e", B, [4]), ("f", S, [4]), ("nz", B, [4]), ("u", S, [None])]
    graph = helper.make_graph(nodes, "strings", [helper.make_tensor_value_info(*v) for v in ins],
                              [helper.make_tensor_value_info(*v) for v in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20), helper.make_opsetid("ai.onnx.ml", 3)])
    model.ir_version = 9  # (StringConcat is opset 20: newer than some onnx packages' checker)
    onnx.save(model, os.path.join(HERE, "strings.onnx"))

    good = [np.array([b"ab", b"xy", b"", b"q"]), np.array([b".com", b".com", b"e", b"r"]), np.array([b"!"]),
            np.array([b"ab.com!", b"xy.org!", b"e!", b"qr!"]), np.array([10, 20, 30, 40, 50, 60], np.int64),
            np.array([0, 5, -1, 2], np.int64)]
    for k, v in enumerate(good):
        np.save(os.path.join(HERE, "strings_input_%d.npy" % k), v)
    np.save(os.path.join(HERE, "strings_bad_5.npy"), np.array([0, 6, -1, 2], np.int64))
    np.save(os.path.join(HERE, "strings_long_0.npy"), np.array([b"ab", b"x" * 300, b"", b"q"]))


if __name__ == "__main__":
    main()
