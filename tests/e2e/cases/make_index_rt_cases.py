#!/usr/bin/python3
"""make_index_rt_cases.py: cases for the index family's sizes read from the
data (docs/dynamic.md) feeding other ops: TopK's k, Compress's condition,
NonZero, Unique and NonMaxSuppression counts as data symbols, CumSum's axis
read at run time, k computed from a shape; empty results (k = 0, no nonzero
element). Expected outputs from numpy. Writes tests/e2e/cases/local/test_ix_*;
run with /usr/bin/python3. Run them also with ONNXCC_FLAGS='--rt-inputs all'."""
import numpy as np, onnx, os, shutil
from onnx import helper as h, numpy_helper as nh, TensorProto as TP
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'local')
[shutil.rmtree(os.path.join(root, d)) for d in (os.listdir(root) if os.path.isdir(root) else [])
 if d.startswith('test_ix_')]
T = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE


def save(name, nodes, ins, outs, opset=13, inits=()):
    d = f'{root}/test_{name}'
    os.makedirs(d + '/test_data_set_0')
    gi = [h.make_tensor_value_info(n, T[a.dtype], a.shape) for n, a in ins]
    go = [h.make_tensor_value_info(n, T[a.dtype], None) for n, a in outs]
    g = h.make_graph(nodes, name, gi, go, initializer=[nh.from_array(a, n) for n, a in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', opset)])
    onnx.save(m, d + '/model.onnx')
    for i, (n, a) in enumerate(ins):
        open(f'{d}/test_data_set_0/input_{i}.pb', 'wb').write(nh.from_array(a, n).SerializeToString())
    for i, (n, a) in enumerate(outs):
        open(f'{d}/test_data_set_0/output_{i}.pb', 'wb').write(nh.from_array(a, n).SerializeToString())


def topk(x, k, axis=-1, largest=1):
    """values and indices, ties in index order"""
    o = np.argsort(-x if largest else x, axis=axis, kind='stable')
    i = np.take(o, np.arange(k), axis=axis)
    return np.take_along_axis(x, i, axis=axis), i.astype(np.int64)


rng = np.random.default_rng(7)
N = h.make_node

# TopK with k from an input, its values through Relu and CumSum
x = rng.standard_normal((3, 5)).astype(np.float32)
v, i = topk(x, 2)
save('ix_topk_k_chain', [N('TopK', ['x', 'k'], ['v', 'i']), N('Relu', ['v'], ['r']),
                         N('CumSum', ['r', 'ax'], ['y'])],
     [('x', x), ('k', np.array([2], np.int64))],
     [('y', np.cumsum(np.maximum(v, 0), axis=1)), ('i', i)], inits=[('ax', np.array(1, np.int64))])

# k = 0: empty outputs, and an op after them
v, i = topk(x, 0)
save('ix_topk_k0', [N('TopK', ['x', 'k'], ['v', 'i']), N('Neg', ['v'], ['y'])],
     [('x', x), ('k', np.array([0], np.int64))], [('y', -v), ('i', i)])

# k computed from the input's shape: Size(x) / 2 = the whole axis (a sort)
x = rng.standard_normal((2, 6)).astype(np.float32)
v, i = topk(x, 6, largest=0)
save('ix_topk_k_from_shape', [N('Size', ['x'], ['n']), N('Div', ['n', 'two'], ['h']),
                              N('Reshape', ['h', 'one'], ['k']),
                              N('TopK', ['x', 'k'], ['v', 'i'], largest=0)],
     [('x', x)], [('v', v), ('i', i)],
     inits=[('two', np.array(2, np.int64)), ('one', np.array([1], np.int64))])

# NonZero's coordinates as floats, plus one, and their running sum
x = (rng.integers(0, 3, size=(3, 4)) * (rng.random((3, 4)) > 0.4)).astype(np.float32)
nz = np.array(np.nonzero(x), np.int64)
save('ix_nonzero_chain', [N('NonZero', ['x'], ['nz']), N('Cast', ['nz'], ['f'], to=TP.FLOAT),
                          N('Add', ['f', 'one'], ['p']), N('CumSum', ['p', 'ax'], ['y'])],
     [('x', x)], [('y', np.cumsum(nz.astype(np.float32) + 1, axis=1)), ('nz', nz)],
     inits=[('one', np.array(1, np.float32)), ('ax', np.array(1, np.int64))])

# no nonzero element: a [2, 0] result through Add
x = np.zeros((2, 3), np.float32)
save('ix_nonzero_empty', [N('NonZero', ['x'], ['nz']), N('Add', ['nz', 'one'], ['y'])],
     [('x', x)], [('y', np.zeros((2, 0), np.int64))], inits=[('one', np.array(1, np.int64))])

# Unique's values into TopK (k = 2 against a count known when it runs)
x = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], np.float32)
u = np.unique(x)
v, i = topk(u, 2)
save('ix_unique_topk', [N('Unique', ['x'], ['u', 'idx']), N('TopK', ['u', 'k'], ['v', 'i'])],
     [('x', x)], [('v', v), ('i', i)], opset=11, inits=[('k', np.array([2], np.int64))])

# Compress by a condition from the data, then CumProd along an axis given
# as an input
x = rng.integers(1, 4, size=(5, 3)).astype(np.float32)
c = np.array([True, False, True, True, False])
y = np.cumprod(np.compress(c, x, axis=0), axis=1)
save('ix_compress_cumprod', [N('Compress', ['x', 'c'], ['s'], axis=0), N('CumProd', ['s', 'ax'], ['y'])],
     [('x', x), ('c', c), ('ax', np.array(-1, np.int32))], [('y', y)], opset=26)

# CumSum along an axis read when it runs, reversed and exclusive
x = rng.standard_normal((2, 3, 4)).astype(np.float32)
r = np.flip(np.cumsum(np.flip(x, 1), axis=1), 1) - x
save('ix_cumsum_axis_input', [N('CumSum', ['x', 'ax'], ['y'], reverse=1, exclusive=1)],
     [('x', x), ('ax', np.array(-2, np.int64))], [('y', r.astype(np.float32))])

# NonMaxSuppression's rows, at most 2 per class (an input), as floats
boxes = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                   [0, 10.1, 1, 11.1], [0, 100, 1, 101]]], np.float32)
scores = np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]]], np.float32)
sel = np.array([[0, 0, 3], [0, 0, 0], [0, 1, 5], [0, 1, 4]], np.int64)
save('ix_nms_chain', [N('NonMaxSuppression', ['b', 's', 'mo', 'iou'], ['sel']),
                      N('Cast', ['sel'], ['f'], to=TP.FLOAT)],
     [('b', boxes), ('s', scores), ('mo', np.array([2], np.int64))], [('f', sel.astype(np.float32))],
     opset=11, inits=[('iou', np.array([0.5], np.float32))])
