/* frontend.h: ONNX file -> IR. The only place that knows protobuf. */
#ifndef OX_FRONTEND_H
#define OX_FRONTEND_H
#include "../ir/ir.h"
/* Load an ONNX model; NULL after printing every problem found. */
ox_graph *ox_fe_load(const char *path);
/* One tensor from a .pb (TensorProto) or .npy file, allocated in g. */
ox_tensor *ox_fe_load_tensor(ox_graph *g, const char *path);
/* A protobuf-c Onnx__TensorProto (passed as void * to keep protobuf out
 * of this header) -> tensor; external data resolves next to path. */
ox_tensor *ox_fe_tensor(ox_graph *g, const char *path, const void *tensorproto);
/* --like NAME=FILE: give graph input NAME the structure of the example in
 * FILE: a SequenceProto for a sequence input (one tensor input per element,
 * named NAME[i]), an OptionalProto for an optional (empty or not), a
 * TensorProto for a tensor (its dtype and shape). Values are not used. */
int ox_fe_like(ox_graph *g, const char *name, const char *path);
#endif
