#!/usr/bin/env python3
"""make_grad_cases.py: ONNX models exercising Gradient (ai.onnx.preview.training),
written in the backend-test layout under local/test_grad_*/ (model.onnx,
test_data_set_0/input_N.pb, output_N.pb).

Each case gives a numpy forward function; the expected gradients are the
analytic ones written here, checked against central finite differences
(float64) before anything is written, so a wrong formula fails the script
rather than the compiler. The seed is dY = ones (the gradient of sum(Y)).
Run with /usr/bin/python3 (onnx + numpy); then:
  make cases (ONNX_TESTS=tests/e2e/cases OXC_SUITES=local tests/e2e/conformance.sh .)
"""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
OPSETS = [helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.preview.training", 1)]
rng = np.random.RandomState(7)


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def numgrad(f, args, k, eps=1e-6):
    """d sum(f(args)) / d args[k] by central differences"""
    a = [x.astype(np.float64).copy() for x in args]
    g = np.zeros_like(a[k])
    it = np.nditer(a[k], flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        old = a[k][i]
        a[k][i] = old + eps
        hi = np.sum(f(*a))
        a[k][i] = old - eps
        lo = np.sum(f(*a))
        a[k][i] = old
        g[i] = (hi - lo) / (2 * eps)
    return g


def write(name, nodes, inputs, feeds, outputs, results, inits=()):
    """inputs: [(name, array)] graph inputs; outputs: names; results: arrays"""
    vi = lambda n, a: helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
    graph = helper.make_graph(nodes, name, [vi(n, a) for n, a in inputs],
                              [vi(n, r) for n, r in zip(outputs, results)],
                              initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=OPSETS, producer_name="make_grad_cases")
    model.ir_version = 7
    d = os.path.join(HERE, "local", name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (n, a) in enumerate(inputs):
        t = numpy_helper.from_array(a.astype(np.float32), n)
        open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb").write(t.SerializeToString())
    for i, (n, r) in enumerate(zip(outputs, results)):
        t = numpy_helper.from_array(np.asarray(r, dtype=np.float32), n)
        open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb").write(t.SerializeToString())


def case(name, nodes, xs, ins, f, grads, inits=(), y="y"):
    """xs: names differentiated; ins: [(name, array)] all forward inputs in
    f's argument order (graph inputs, then initializers); grads: analytic
    gradients, one per x"""
    args = [a for _, a in ins]
    names = [n for n, _ in ins]
    for x, gr in zip(xs, grads):
        ng = numgrad(f, args, names.index(x))
        assert np.allclose(gr, ng, rtol=1e-4, atol=1e-5), (name, x, gr, ng)
    nodes = nodes + [helper.make_node("Gradient", [x for x in xs], ["d_" + x for x in xs], name="grad",
                                      domain="ai.onnx.preview.training", xs=list(xs), y=y)]
    init_names = {n for n, _ in inits}
    graph_inputs = [(n, a) for n, a in ins if n not in init_names]
    write(name, nodes, graph_inputs, None, [y] + ["d_" + x for x in xs],
          [f(*args)] + list(grads), inits)


def main():
    # Mul + broadcast Add: y = a*a + b, b broadcast over rows
    a = rng.randn(2, 3).astype(np.float32)
    b = rng.randn(3).astype(np.float32)
    case("test_grad_mul_broadcast_add",
         [helper.make_node("Mul", ["a", "a"], ["aa"]), helper.make_node("Add", ["aa", "b"], ["y"])],
         ["a", "b"], [("a", a), ("b", b)], lambda a, b: a * a + b,
         [2 * a, np.full(3, 2.0, np.float32)])

    # dense layer: y = sigmoid(relu(x @ W + bias)), all three differentiated
    x = rng.randn(2, 4).astype(np.float32)
    W = rng.randn(4, 3).astype(np.float32)
    bias = rng.randn(3).astype(np.float32)
    x[0, 0] = 0.3  # keep pre-activations away from relu's kink
    f = lambda x, W, bias: sigmoid(np.maximum(x @ W + bias, 0))
    h = x @ W + bias
    s = sigmoid(np.maximum(h, 0))
    gh = s * (1 - s) * (h > 0)
    assert np.min(np.abs(h)) > 1e-3
    case("test_grad_matmul_relu_sigmoid",
         [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Add", ["xw", "bias"], ["h"]),
          helper.make_node("Relu", ["h"], ["r"]), helper.make_node("Sigmoid", ["r"], ["y"])],
         ["W", "bias", "x"], [("x", x), ("W", W), ("bias", bias)], f,
         [x.T @ gh, gh.sum(0), gh @ W.T])

    # batched MatMul against a shared matrix, tanh, a mean over one axis
    A = rng.randn(2, 3, 4).astype(np.float32)
    B = rng.randn(4, 5).astype(np.float32)
    f = lambda A, B: np.mean(np.tanh(A @ B), axis=1)
    t = np.tanh(A @ B)
    gt = (1 - t * t) / 3.0
    case("test_grad_batched_matmul_tanh_mean",
         [helper.make_node("MatMul", ["A", "B"], ["ab"]), helper.make_node("Tanh", ["ab"], ["t"]),
          helper.make_node("ReduceMean", ["t"], ["y"], axes=[1], keepdims=0)],
         ["A", "B"], [("A", A), ("B", B)], f,
         [gt @ B.T, np.einsum("bmk,bmn->kn", A, gt)])

    # elementwise chain: y = transpose(reshape(exp(p) / sqrt(q) - log(q) * p^3, [3,2]))
    p = rng.rand(2, 3).astype(np.float32) + 0.5
    q = rng.rand(2, 3).astype(np.float32) + 0.5
    f = lambda p, q: (np.exp(p) / np.sqrt(q) - np.log(q) * p ** 3).reshape(3, 2).T
    gp = np.exp(p) / np.sqrt(q) - np.log(q) * 3 * p ** 2
    gq = -0.5 * np.exp(p) * q ** -1.5 - p ** 3 / q
    case("test_grad_elementwise_chain",
         [helper.make_node("Exp", ["p"], ["e"]), helper.make_node("Sqrt", ["q"], ["sq"]),
          helper.make_node("Div", ["e", "sq"], ["d"]), helper.make_node("Log", ["q"], ["lq"]),
          helper.make_node("Pow", ["p", "three"], ["p3"]), helper.make_node("Mul", ["lq", "p3"], ["m"]),
          helper.make_node("Sub", ["d", "m"], ["s"]), helper.make_node("Reshape", ["s", "shape"], ["r"]),
          helper.make_node("Transpose", ["r"], ["y"], perm=[1, 0])],
         ["p", "q"], [("p", p), ("q", q)], f, [gp, gq],
         inits=[("three", np.array(3.0, np.float32)), ("shape", np.array([3, 2], np.int64))])

    # a weight given as an initializer, through a Transpose that fold
    # evaluates at compile time: y = x @ W^T * 2
    x = rng.randn(2, 3).astype(np.float32)
    W = rng.randn(4, 3).astype(np.float32)
    f = lambda x, W: (x @ W.T) * 2
    case("test_grad_initializer_weight",
         [helper.make_node("Transpose", ["W"], ["Wt"], perm=[1, 0]), helper.make_node("MatMul", ["x", "Wt"], ["xw"]),
          helper.make_node("Mul", ["xw", "two"], ["y"])],
         ["W"], [("x", x), ("W", W)], f, [2 * np.ones((2, 4)).T @ x],
         inits=[("W", W), ("two", np.array(2.0, np.float32))])


if __name__ == "__main__":
    main()
