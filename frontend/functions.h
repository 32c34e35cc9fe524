/* functions.h: inlining of model-local functions at import (frontend/functions.c). */
#ifndef OX_FUNCTIONS_H
#define OX_FUNCTIONS_H
#include "onnx.pb-c.h"
#include <stddef.h>

typedef struct ox_fe_functions ox_fe_functions;
ox_fe_functions *ox_fe_functions_new(const Onnx__ModelProto *mp);
void ox_fe_functions_free(ox_fe_functions *f); /* frees what expand made */
/* nodes with every call of a model function replaced by its body: *nout
 * nodes, owned by f (nodes itself when f is NULL), or NULL after an error */
Onnx__NodeProto **ox_fe_functions_expand(ox_fe_functions *f, Onnx__NodeProto *const *nodes, size_t n, size_t *nout);
#endif
