#!/usr/bin/python3
"""check.py: end-to-end checks for the classical ML ops (ai.onnx.ml) that the
ONNX backend suite does not cover (Scaler, Normalizer, LinearRegressor,
Imputer, TreeEnsembleRegressor, numeric LabelEncoder, TfIdfVectorizer IDF /
TFIDF, TreeEnsemble aggregates and post transforms).

Each case builds a one-node model with onnx.helper, computes the expected
output with numpy here (written from the operator spec, independently of
onnxcc), compiles the model with `onnxcc --main`, runs it and compares
(rtol 1e-5, atol 1e-6 unless the case says otherwise). Usage:
    tests/e2e/ml/check.py [ONNXCC]      (from the repository root)
Prints one line per failure and a summary line; exits 1 on any failure.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ML = "ai.onnx.ml"
NP2TP = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
         np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}
rng = np.random.default_rng(7)


def model(op, inputs, out_dtype, out_shape, ml_opset=1, domain=ML, **attrs):
    ins = [helper.make_tensor_value_info("in%d" % k, NP2TP[x.dtype.type], list(x.shape))
           for k, x in enumerate(inputs)]
    out = helper.make_tensor_value_info("y", NP2TP[out_dtype], list(out_shape))
    node = helper.make_node(op, [i.name for i in ins], ["y"], domain=domain, **attrs)
    g = helper.make_graph([node], op.lower(), ins, [out])
    ops = [helper.make_opsetid("", 13), helper.make_opsetid(ML, ml_opset)]
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 8
    return m


def run(onnxcc, name, m, inputs, expect, rtol=1e-5, atol=1e-6):
    with tempfile.TemporaryDirectory(prefix="oxml_") as d:
        onnx.save(m, os.path.join(d, "model.onnx"))
        files = []
        for k, x in enumerate(inputs):
            p = os.path.join(d, "input_%d.pb" % k)
            with open(p, "wb") as f:
                f.write(numpy_helper.from_array(x, "in%d" % k).SerializeToString())
            files.append(p)
        r = subprocess.run([onnxcc, "model.onnx", "-o", "net.c", "--main"], cwd=d,
                           capture_output=True, text=True)
        if r.returncode:
            return "onnxcc: " + (r.stderr or r.stdout).strip().splitlines()[0]
        r = subprocess.run(["cc", "-std=c11", "-O1", "-Wall", "-o", "net", "net.c", "net_main.c",
                            "net_weights.c", "-lm"], cwd=d, capture_output=True, text=True)
        if r.returncode:
            return "cc: " + r.stderr.strip()[:300]
        r = subprocess.run(["./net"] + files + ["-o", "out"], cwd=d, capture_output=True, text=True)
        if r.returncode:
            return "run: " + (r.stderr or r.stdout).strip()[:300]
        got = np.load(os.path.join(d, "out", "output_0.npy"))
    if got.shape != expect.shape or got.dtype != expect.dtype:
        return "got %s %s, expected %s %s" % (got.dtype, got.shape, expect.dtype, expect.shape)
    if np.issubdtype(expect.dtype, np.floating):
        ok = np.isclose(got, expect, rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = got == expect
    if not ok.all():
        i = np.argwhere(~ok)[0]
        return "mismatch at %s: got %r expected %r" % (tuple(i), got[tuple(i)], expect[tuple(i)])
    return None


def post(s, kind):
    if kind == "LOGISTIC":
        return 1 / (1 + np.exp(-s))
    if kind == "SOFTMAX":
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return s


def cases():
    # Scaler: per-column offset, one scale; int64 input with one offset
    x = rng.standard_normal((3, 4)).astype(np.float32)
    off, sc = [0.5, -1.0, 2.0, 0.0], [3.0]
    yield "scaler_f32", model("Scaler", [x], np.float32, (3, 4), offset=off, scale=sc), [x], \
        ((x - np.float32(off)) * np.float32(sc)).astype(np.float32)
    xi = rng.integers(-50, 50, (2, 3)).astype(np.int64)
    yield "scaler_i64", model("Scaler", [xi], np.float32, (2, 3), offset=[1.5], scale=[0.5, 2.0, -1.0]), [xi], \
        ((xi.astype(np.float32) - np.float32(1.5)) * np.float32([0.5, 2.0, -1.0])).astype(np.float32)

    # Normalizer: a zero row stays zero
    x = rng.standard_normal((4, 5)).astype(np.float32)
    x[2] = 0
    for norm in ("MAX", "L1", "L2"):
        if norm == "MAX":
            d = x.max(axis=1, keepdims=True)
        elif norm == "L1":
            d = np.abs(x).sum(axis=1, keepdims=True)
        else:
            d = np.sqrt((x * x).sum(axis=1, keepdims=True))
        e = np.where(d != 0, x / np.where(d != 0, d, 1), x).astype(np.float32)
        yield "normalizer_" + norm, model("Normalizer", [x], np.float32, (4, 5), norm=norm), [x], e
    xd = rng.standard_normal((6,)).astype(np.float64)
    yield "normalizer_L2_1d_f64", model("Normalizer", [xd], np.float32, (6,), norm="L2"), [xd], \
        (xd / np.sqrt((xd * xd).sum())).astype(np.float32)

    # LinearRegressor: two targets; one target with LOGISTIC on double input
    x = rng.standard_normal((5, 3)).astype(np.float32)
    coef = rng.standard_normal(6).astype(np.float32)
    b = np.float32([0.25, -1.5])
    e = (x.astype(np.float64) @ coef.reshape(2, 3).T.astype(np.float64) + b).astype(np.float32)
    yield "linreg_2targets", model("LinearRegressor", [x], np.float32, (5, 2), coefficients=coef.tolist(),
                                   intercepts=b.tolist(), targets=2), [x], e
    xd = rng.standard_normal((4, 3))
    coef = np.float32([0.5, -2.0, 1.0])
    e = post(xd @ coef.astype(np.float64)[:, None] + np.float64(np.float32(0.1)), "LOGISTIC").astype(np.float32)
    yield "linreg_logistic_f64", model("LinearRegressor", [xd], np.float32, (4, 1), coefficients=coef.tolist(),
                                       intercepts=[0.1], post_transform="LOGISTIC"), [xd], e
    coef = rng.standard_normal(9).astype(np.float32)
    e = post(x.astype(np.float64) @ coef.reshape(3, 3).T.astype(np.float64), "SOFTMAX").astype(np.float32)
    yield "linreg_softmax", model("LinearRegressor", [x], np.float32, (5, 3), coefficients=coef.tolist(),
                                  targets=3, post_transform="SOFTMAX"), [x], e

    # Imputer: NaN per column; int64 sentinel with one value
    x = rng.standard_normal((3, 4)).astype(np.float32)
    x[0, 1] = x[2, 3] = x[1, 0] = np.nan
    imp = np.float32([10, 20, 30, 40])
    yield "imputer_nan", model("Imputer", [x], np.float32, (3, 4), imputed_value_floats=imp.tolist(),
                               replaced_value_float=float("nan")), [x], np.where(np.isnan(x), imp, x)
    xi = rng.integers(-2, 3, (4, 3)).astype(np.int64)
    yield "imputer_i64", model("Imputer", [xi], np.int64, (4, 3), imputed_value_int64s=[7],
                               replaced_value_int64=-1), [xi], np.where(xi == -1, 7, xi).astype(np.int64)

    # Binarizer on int32 and double
    xi = rng.integers(-3, 4, (10,)).astype(np.int32)
    yield "binarizer_i32", model("Binarizer", [xi], np.int32, (10,), threshold=1.0), [xi], (xi > 1).astype(np.int32)
    xd = rng.standard_normal((2, 5))
    yield "binarizer_f64", model("Binarizer", [xd], np.float64, (2, 5), threshold=0.25), [xd], \
        (xd > np.float64(np.float32(0.25))).astype(np.float64)

    # ArrayFeatureExtractor on a 3-D int64 tensor
    x = rng.integers(0, 100, (2, 3, 5)).astype(np.int64)
    ix = np.int64([4, 0, 4])
    yield "afe_3d_i64", model("ArrayFeatureExtractor", [x, ix], np.int64, (2, 3, 3)), [x, ix], x[..., ix]

    # LabelEncoder: int64 -> float (opset 2), float -> int64 via tensors (opset 4)
    xi = np.int64([3, 7, 1, 3, 9, 0])
    keys, vals = [1, 3, 7], [0.5, -1.25, 8.0]
    e = np.float32([dict(zip(keys, vals)).get(int(v), -0.0) for v in xi])
    yield "labelenc_i64_f32", model("LabelEncoder", [xi], np.float32, (6,), ml_opset=2, keys_int64s=keys,
                                    values_floats=vals), [xi], e
    xf = np.float32([0.5, 2.0, 0.25, 9.0])
    kt = helper.make_tensor("keys_tensor", TensorProto.FLOAT, [3], [0.25, 0.5, 2.0])
    vt = helper.make_tensor("values_tensor", TensorProto.INT64, [3], [10, 20, 30])
    dt = helper.make_tensor("default_tensor", TensorProto.INT64, [1], [-7])
    yield "labelenc_tensor_f32_i64", model("LabelEncoder", [xf], np.int64, (4,), ml_opset=4, keys_tensor=kt,
                                           values_tensor=vt, default_tensor=dt), [xf], np.int64([20, 30, 10, -7])

    # TfIdfVectorizer IDF and TFIDF with weights (ai.onnx, opset 9)
    x = np.int64([[1, 2, 1, 2, 3, 1], [3, 3, 2, 1, 2, 4]])
    pool = [1, 2, 3, 1, 2, 2, 3]  # unigrams 1 2 3, bigrams (1,2) (2,3)
    w = [0.5, 2.0, 3.0, 0.25, 4.0]
    cnt = np.zeros((2, 5), np.float32)
    for r in range(2):
        for i in range(6):
            cnt[r, {1: 0, 2: 1, 3: 2}.get(int(x[r, i]), 0)] += x[r, i] in (1, 2, 3)
            if i + 1 < 6 and (x[r, i], x[r, i + 1]) == (1, 2):
                cnt[r, 3] += 1
            if i + 1 < 6 and (x[r, i], x[r, i + 1]) == (2, 3):
                cnt[r, 4] += 1
    for mode, e in (("IDF", np.where(cnt > 0, np.float32(w), 0)), ("TFIDF", cnt * np.float32(w))):
        m = model("TfIdfVectorizer", [x], np.float32, (2, 5), domain="", mode=mode, min_gram_length=1,
                  max_gram_length=2, max_skip_count=0, ngram_counts=[0, 3], ngram_indexes=[0, 1, 2, 3, 4],
                  pool_int64s=pool, weights=w)
        yield "tfidf_" + mode, m, [x], e.astype(np.float32)

    # TreeEnsembleRegressor: two trees, feature tests, missing-value tracking
    # tree 0: node0 x0 <= 0.5 ? node1 : leaf2; node1 x1 < 0 ? leaf3 : leaf4
    # tree 1: node0 x2 > 1 ? leaf1 : leaf2 (NaN goes true)
    nodes = dict(nodes_treeids=[0, 0, 0, 0, 0, 1, 1, 1], nodes_nodeids=[0, 1, 2, 3, 4, 0, 1, 2],
                 nodes_featureids=[0, 1, 0, 0, 0, 2, 0, 0],
                 nodes_modes=["BRANCH_LEQ", "BRANCH_LT", "LEAF", "LEAF", "LEAF", "BRANCH_GT", "LEAF", "LEAF"],
                 nodes_values=[0.5, 0.0, 0, 0, 0, 1.0, 0, 0], nodes_truenodeids=[1, 3, 0, 0, 0, 1, 0, 0],
                 nodes_falsenodeids=[2, 4, 0, 0, 0, 2, 0, 0],
                 nodes_missing_value_tracks_true=[0, 0, 0, 0, 0, 1, 0, 0],
                 target_treeids=[0, 0, 0, 0, 1, 1], target_nodeids=[2, 3, 4, 4, 1, 2],
                 target_ids=[0, 1, 0, 1, 0, 1], target_weights=[1.5, -2.0, 0.75, 3.0, 10.0, 20.0])

    def tree_ref(xr):
        votes = []
        # tree 0
        if xr[0] <= np.float32(0.5):
            votes += [(1, -2.0)] if xr[1] < 0 else [(0, 0.75), (1, 3.0)]
        else:
            votes += [(0, 1.5)]
        t1 = [(0, 10.0)] if (np.isnan(xr[2]) or xr[2] > 1) else [(1, 20.0)]
        return [votes, t1]

    x = rng.standard_normal((8, 3)).astype(np.float32) * 2
    x[3, 2] = np.nan
    base = [100.0, 200.0]
    for agg in ("SUM", "AVERAGE", "MIN", "MAX"):
        e = np.zeros((8, 2))
        for r in range(8):
            per = {0: [], 1: []}
            for tree in tree_ref(x[r]):
                acc = {}
                for t, wv in tree:
                    acc[t] = acc.get(t, 0.0) + wv if agg in ("SUM", "AVERAGE") else wv
                for t, wv in tree:
                    per[t].append(wv)
            for t in (0, 1):
                if agg == "SUM":
                    s = sum(per[t])
                elif agg == "AVERAGE":
                    s = sum(per[t]) / 2
                elif agg == "MIN":
                    s = min(per[t]) if per[t] else 0.0
                else:
                    s = max(per[t]) if per[t] else 0.0
                e[r, t] = s + base[t]
        m = model("TreeEnsembleRegressor", [x], np.float32, (8, 2), ml_opset=3, n_targets=2,
                  aggregate_function=agg, base_values=base, **nodes)
        yield "treereg_" + agg, m, [x], e.astype(np.float32)

    # TreeEnsemble (opset 5) on doubles: AVERAGE over two trees, LOGISTIC
    x = rng.standard_normal((6, 2))
    x[1, 0] = np.nan
    m = model("TreeEnsemble", [x], np.float64, (6, 2), ml_opset=5, n_targets=2, aggregate_function=0,
              post_transform=2, tree_roots=[0, 1],
              nodes_featureids=[0, 1], nodes_modes=helper.make_tensor("m", TensorProto.UINT8, [2], [3, 2]),
              nodes_splits=helper.make_tensor("s", TensorProto.DOUBLE, [2], [0.1, -0.3]),
              nodes_truenodeids=[0, 2], nodes_trueleafs=[1, 1], nodes_falsenodeids=[1, 3],
              nodes_falseleafs=[1, 1], nodes_missing_value_tracks_true=[1, 0], leaf_targetids=[0, 1, 1, 0],
              leaf_weights=helper.make_tensor("w", TensorProto.DOUBLE, [4], [2.0, -1.0, 0.5, 4.0]))
    e = np.zeros((6, 2))
    for r in range(6):
        if np.isnan(x[r, 0]) or x[r, 0] > 0.1:
            e[r, 0] += 2.0
        else:
            e[r, 1] += -1.0
        if x[r, 1] >= -0.3:
            e[r, 1] += 0.5
        else:
            e[r, 0] += 4.0
    yield "tree5_avg_logistic_f64", m, [x], post(e / 2, "LOGISTIC")


def main():
    onnxcc = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./onnxcc")
    npass = nfail = 0
    for name, m, inputs, expect in cases():
        err = run(onnxcc, name, m, inputs, expect)
        if err:
            nfail += 1
            print("FAIL %s: %s" % (name, err))
        else:
            npass += 1
    print("ml: %d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
