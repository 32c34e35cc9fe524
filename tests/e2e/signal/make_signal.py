#!/usr/bin/python3
"""make_signal.py: the test model of the CUDA target's DFT and STFT kernels
(codegen/cuda/cuda_signal.c; tests/e2e/cuda.sh step 18).

Writes signal.onnx (opset 17) and its inputs next to this script:
  z f32[2, 40, 3, 2]   complex, the transform over axis 1 (3 signals after it)
  y0 = DFT(z, axis 1)                       length 40 (not a power of 2)
  y1 = DFT(z, axis 1, inverse)              the inverse, divided by 40
  a f32[3, 50, 1]      real
  y2 = DFT(a, 48, axis 1, onesided)         48 of 50 samples, 25 bins
  y3 = DFT(a, 64, axis 1)                   zero-padded to 64
  s f32[2, 400, 1]
  y4 = STFT(s, 16, hann(64), onesided)      22 frames of 64, 33 bins
  y5 = STFT(s, 10, frame_length 30, two-sided, no window): 38 frames
The CUDA program's outputs are compared with the C target's byte for byte
(under the emulation the device's cos and sin are the host's). Run from
the repository: /usr/bin/python3 tests/e2e/signal/make_signal.py (numpy,
onnx); same bytes every run."""
import os
import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

D = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(5)
z = rng.standard_normal((2, 40, 3, 2)).astype(np.float32)
a = rng.standard_normal((3, 50, 1)).astype(np.float32)
s = rng.standard_normal((2, 400, 1)).astype(np.float32)
hann = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(64) / 64)).astype(np.float32)
nodes = [
    h.make_node("DFT", ["z"], ["y0"], axis=1),
    h.make_node("DFT", ["z"], ["y1"], axis=1, inverse=1),
    h.make_node("DFT", ["a", "n48"], ["y2"], axis=1, onesided=1),
    h.make_node("DFT", ["a", "n64"], ["y3"], axis=1),
    h.make_node("STFT", ["s", "step16", "hann"], ["y4"], onesided=1),
    h.make_node("STFT", ["s", "step10", "", "len30"], ["y5"], onesided=0),
]
inits = [nh.from_array(np.array(48, np.int64), "n48"), nh.from_array(np.array(64, np.int64), "n64"),
         nh.from_array(np.array(16, np.int64), "step16"), nh.from_array(np.array(10, np.int64), "step10"),
         nh.from_array(np.array(30, np.int64), "len30"), nh.from_array(hann, "hann")]
F = TP.FLOAT
g = h.make_graph(nodes, "signal",
                 [h.make_tensor_value_info("z", F, z.shape), h.make_tensor_value_info("a", F, a.shape),
                  h.make_tensor_value_info("s", F, s.shape)],
                 [h.make_tensor_value_info(y, F, sh) for y, sh in (("y0", [2, 40, 3, 2]), ("y1", [2, 40, 3, 2]),
                  ("y2", [3, 25, 2]), ("y3", [3, 64, 2]), ("y4", [2, 22, 33, 2]), ("y5", [2, 38, 30, 2]))], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="make_signal")
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(D, "signal.onnx"))
for nm, v in (("z", z), ("a", a), ("s", s)):
    np.save(os.path.join(D, "signal_%s.npy" % nm), v)
