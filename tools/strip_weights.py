#!/usr/bin/python3
"""Strip the large float initializers of ONNX models, and put them back.

A GPU machine lent through the device tool takes at most 64 MiB of files,
less than the zoo's weights. The architecture is what the CUDA checks need;
the values only need the right scale. So:

  strip_weights.py strip IN.onnx OUT.onnx   keeps every initializer of fewer
      than 4096 elements (shapes, axes, biases, scales) and replaces each
      larger float one by an empty tensor of the same shape, its mean and
      standard deviation recorded in the initializer's doc_string;
  strip_weights.py fill IN.onnx OUT.onnx    draws each stripped tensor from
      a normal distribution of that mean and deviation (numpy, seeded by the
      tensor's name: the same bytes every time).

The filled model is a different network from the exported one (same graph,
other weights); references for it come from ONNX Runtime on that machine.
"""
import sys
import zlib

import numpy as np
import onnx
from onnx import numpy_helper


def strip(src, dst):
    m = onnx.load(src)
    for t in m.graph.initializer:
        if t.data_type != onnx.TensorProto.FLOAT:
            continue
        a = numpy_helper.to_array(t)
        if a.size < 4096:
            continue
        t.doc_string = "onnxcc-stripped %r %r" % (float(a.mean()), float(a.std()))
        t.ClearField("raw_data")
        t.ClearField("float_data")
    onnx.save(m, dst)


def fill(src, dst):
    m = onnx.load(src)
    for t in m.graph.initializer:
        if not t.doc_string.startswith("onnxcc-stripped "):
            continue
        mean, std = (float(v) for v in t.doc_string.split()[1:3])
        rng = np.random.RandomState(zlib.crc32(t.name.encode()))
        a = rng.standard_normal(tuple(t.dims)).astype(np.float32) * np.float32(std) + np.float32(mean)
        t.raw_data = a.tobytes()
        t.doc_string = ""
    onnx.save(m, dst)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("strip", "fill"):
        sys.exit(__doc__)
    (strip if sys.argv[1] == "strip" else fill)(sys.argv[2], sys.argv[3])
