#!/usr/bin/python3
"""make_nms.py: the test model of the CUDA target's NonMaxSuppression
kernels (codegen/cuda/cuda_index.c emit_nms; tests/e2e/cuda.sh step 14).

Writes nms.onnx (opset 11) and its inputs next to this script:
  boxes f32[2, 600, 4]: clusters of jittered boxes (suppression within a
      cluster), exact duplicates (IoU 1), flipped corners, zero-area boxes
  scores f32[2, 3, 600]: quantized to 1/64 (many ties), 0.0 and -0.0 among
      them; class 2 of batch 1 with NaNs
  per int64[1] = 300: max_output_boxes_per_class read when the program runs
  y0 = NMS(boxes, scores, 40, iou 0.5, score 0.2)    corners, at most 40
  y1 = NMS(boxes, scores, per, iou 0.7)              center boxes, no score
       threshold (the NaNs sorted last), up to 300: kept over two chunks
  y2 = NMS(boxes, scores, 600, iou 0.95, score -1)  nearly every box kept,
       past 256 a class, over three chunks of candidates; the threshold
       keeps every number and drops the NaNs
nms_f16.onnx: the same with boxes and scores cast to float16 first.
The CUDA program's outputs are compared with the C target's byte for byte;
y0 and y2 with ONNX Runtime's too (y1 has NaN scores, whose order the spec
leaves open). Run from the repository: /usr/bin/python3
tests/e2e/nms/make_nms.py (numpy, onnx); same bytes every run."""
import os
import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

D = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)
B, C, N = 2, 3, 600

centers = rng.uniform(0, 1, (B, 40, 2))
boxes = np.zeros((B, N, 4), np.float32)
for b in range(B):
    for i in range(N):
        cy, cx = centers[b, i % 40] + rng.normal(0, 0.01, 2)
        hh, ww = rng.uniform(0.05, 0.2, 2)
        boxes[b, i] = [cy - hh / 2, cx - ww / 2, cy + hh / 2, cx + ww / 2]
    boxes[b, 100:110] = boxes[b, 90:100]                      # duplicates
    boxes[b, 200:210] = boxes[b, 200:210][:, [2, 3, 0, 1]]    # flipped corners
    boxes[b, 300:305, 2] = boxes[b, 300:305, 0]               # zero area
scores = (np.round(rng.uniform(0, 1, (B, C, N)) * 64) / 64).astype(np.float32)
scores[0, 0, 10:20] = -0.0
scores[0, 0, 20:30] = 0.0
scores[1, 2, ::37] = np.nan

nodes = [
    h.make_node("NonMaxSuppression", ["boxes", "scores", "m40", "iou5", "s2"], ["y0"]),
    h.make_node("NonMaxSuppression", ["boxes", "scores", "per", "iou7"], ["y1"], center_point_box=1),
    h.make_node("NonMaxSuppression", ["boxes", "scores", "m600", "iou95", "sm1"], ["y2"]),
]
inits = [nh.from_array(np.array([40], np.int64), "m40"), nh.from_array(np.array([600], np.int64), "m600"),
         nh.from_array(np.array([0.5], np.float32), "iou5"), nh.from_array(np.array([0.7], np.float32), "iou7"),
         nh.from_array(np.array([0.95], np.float32), "iou95"), nh.from_array(np.array([0.2], np.float32), "s2"), nh.from_array(np.array([-1.0], np.float32), "sm1")]
g = h.make_graph(nodes, "nms",
                 [h.make_tensor_value_info("boxes", TP.FLOAT, [B, N, 4]),
                  h.make_tensor_value_info("scores", TP.FLOAT, [B, C, N]),
                  h.make_tensor_value_info("per", TP.INT64, [1])],
                 [h.make_tensor_value_info(y, TP.INT64, ["n%s" % y, 3]) for y in ("y0", "y1", "y2")], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 11)], producer_name="make_nms")
m.ir_version = 6
onnx.checker.check_model(m)
onnx.save(m, os.path.join(D, "nms.onnx"))
# nms_f16.onnx: the same with boxes and scores cast to float16 inside
casts = [h.make_node("Cast", ["boxes"], ["boxes16"], to=TP.FLOAT16),
         h.make_node("Cast", ["scores"], ["scores16"], to=TP.FLOAT16)]
for nd in nodes:
    nd.input[0], nd.input[1] = "boxes16", "scores16"
g16 = h.make_graph(casts + nodes, "nms_f16", list(g.input), list(g.output), inits)
m16 = h.make_model(g16, opset_imports=[h.make_opsetid("", 11)], producer_name="make_nms")
m16.ir_version = 6
onnx.checker.check_model(m16)
onnx.save(m16, os.path.join(D, "nms_f16.onnx"))
np.save(os.path.join(D, "nms_boxes.npy"), boxes)
np.save(os.path.join(D, "nms_scores.npy"), scores)
np.save(os.path.join(D, "nms_per.npy"), np.array([300], np.int64))
