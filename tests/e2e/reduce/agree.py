#!/usr/bin/python3
"""agree.py: Reduce* on the two targets computes the same bits
(tests/e2e/cuda.sh step 21; codegen/reduction.h).

Both targets render one description of a reduction (its accumulator type,
terms, combine and result), so a float sum accumulates in double on both.
Each model below is compiled for the C target and for --target cuda
--cuda-emu (each of the CUDA kernel shapes: a thread per output, a warp per
row, a row split over blocks, LogSumExp's two passes, a run-time length),
run on the same input (the node a kernel of its own: --report), and the two outputs must be equal bit for bit, NaN
where NaN (under --cuda-emu the device's libm is the host's; on a GPU,
expf and logf may differ by an ulp). Each is also checked against numpy in
float64 at 1e-6 relative to the output's largest magnitude (f32 in and
out; 4e-3 for f16 and bf16, one rounding of the output).

    agree.py ONNXCC OUTDIR [--nvcc NVCC]

With --nvcc, each model's .cu (without --cuda-emu) also goes through
NVCC for sm_80 and sm_90 with every warning an error, as cuda.sh's
nvcc_check does.
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, TensorProto

F32, F16, BF16 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16


def ref(op, x, axes):
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if op == "ReduceSum":
            return x.sum(axes, keepdims=True)
        if op == "ReduceMean":
            return x.mean(axes, keepdims=True)
        if op == "ReduceMax":
            return x.max(axes, keepdims=True)
        if op == "ReduceMin":
            return x.min(axes, keepdims=True)
        if op == "ReduceProd":
            return x.prod(axes, keepdims=True)
        if op == "ReduceL1":
            return np.abs(x).sum(axes, keepdims=True)
        if op == "ReduceL2":
            return np.sqrt((x * x).sum(axes, keepdims=True))
        if op == "ReduceSumSquare":
            return (x * x).sum(axes, keepdims=True)
        if op == "ReduceLogSum":
            return np.log(x.sum(axes, keepdims=True))
        if op == "ReduceLogSumExp":
            m = x.max(axes, keepdims=True)
            m = np.where(np.isfinite(m), m, 0)
            return m + np.log(np.exp(x - m).sum(axes, keepdims=True))
    raise ValueError(op)


# name, op, dtype, input shape, axes, extra: (dims of the graph's input, --dim flags)
CASES = [
    ("sum_warp", "ReduceSum", F32, (8, 3000), [1], None),
    ("mean_thread", "ReduceMean", F32, (4, 513, 6), [1], None),
    ("sumsq_split", "ReduceSumSquare", F32, (2, 300000), [1], None),
    ("l1_split_f16", "ReduceL1", F16, (1, 100000), [1], None),
    ("l2_thread_bf16", "ReduceL2", BF16, (3, 200, 7), [1], None),
    ("max_nan", "ReduceMax", F32, (6, 200), [1], None),
    ("min_thread", "ReduceMin", F16, (5, 40, 3), [1], None),
    ("prod_warp", "ReduceProd", F32, (4, 50), [1], None),
    ("logsum_warp", "ReduceLogSum", F32, (3, 999), [1], None),
    ("lse_warp", "ReduceLogSumExp", F32, (6, 700), [1], None),
    ("lse_thread_f16", "ReduceLogSumExp", F16, (3, 100, 5), [1], None),
    ("lse_rt", "ReduceLogSumExp", F32, (5, 333), [1], (["N", "D"], ["N=1..8", "D=1..600"])),
    ("mean_rt", "ReduceMean", F32, (3, 77, 4), [1], (["N", "D", 4], ["N=1..4", "D=1..100"])),
]


def model(path, op, dt, shape, axes, dims):
    x = helper.make_tensor_value_info("x", dt, dims or list(shape))
    y = helper.make_tensor_value_info("y", dt, None)
    ax = helper.make_tensor("axes", TensorProto.INT64, [len(axes)], axes)
    g = helper.make_graph([helper.make_node(op, ["x", "axes"], ["y"], keepdims=1)], op, [x], [y], [ax])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    onnx.save(m, path)


def data(name, op, shape, rng):
    if op in ("ReduceLogSum", "ReduceProd"):
        x = rng.uniform(0.5, 1.5, shape)
    else:
        x = rng.standard_normal(shape) * (0.3 if name == "l1_split_f16" else 3)  # (f16's sum < 65504)
    if name == "max_nan":
        x[1, 17] = np.nan
        x[2, :] = -np.inf
        x[3, 5] = np.inf
    if name == "lse_warp":
        x[1, :] = -np.inf  # a non-finite maximum: left out of the shift
        x[2, 3] = np.inf
        x[3, 0] = np.nan
    return x


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(" ".join(cmd) + "\n" + (r.stdout + r.stderr)[-2000:])
    return r.stdout + r.stderr


def nvcc_check(nvcc, onnxcc, mpath, d, flags):
    """None, or what failed"""
    os.makedirs(os.path.join(d, "nv"), exist_ok=True)
    run([onnxcc, mpath, "-o", os.path.join(d, "nv", "net.c"), "--target", "cuda"] + flags)
    for arch in ("sm_80", "sm_90"):
        r = subprocess.run([nvcc, "-std=c++17", "-O3", "-arch=" + arch, "-Werror", "all-warnings", "-c",
                            os.path.join(d, "nv", "net.cu"), "-o", os.path.join(d, "nv", "net_%s.o" % arch)],
                           capture_output=True, text=True)
        if r.returncode:
            return "NVCC-FAIL(%s)\n%s" % (arch, (r.stdout + r.stderr)[-1500:])
    return None


def main():
    onnxcc, out = sys.argv[1], sys.argv[2]
    nvcc = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--nvcc" else None
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(11)
    fails = 0
    for name, op, dt, shape, axes, rt in CASES:
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        mpath = os.path.join(d, "m.onnx")
        model(mpath, op, dt, shape, axes, rt[0] if rt else None)
        x = data(name, op, shape, rng)
        npdt = {F32: np.float32, F16: np.float16, BF16: None}[dt]
        if dt == BF16:  # bf16 as its 16 bits: round to nearest even
            b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
            bits = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
            xin = bits
            x = (bits.astype(np.uint32) << 16).view(np.float32)
        else:
            xin = x.astype(npdt)
            x = xin
        np.save(os.path.join(d, "x.npy"), xin)
        flags = sum([["--dim", f] for f in rt[1]], []) if rt else []
        outs = {}
        try:
            for tgt, extra in (("c", []), ("cu", ["--target", "cuda", "--cuda-emu", "--report"])):
                os.makedirs(os.path.join(d, tgt), exist_ok=True)
                log = run([onnxcc, mpath, "-o", os.path.join(d, tgt, "net.c"), "--build"] + extra + flags)
                if tgt == "cu" and not re.search(r"cuda +0 nodes without a parallel kernel", log):
                    raise RuntimeError("the reduction is not a kernel of its own:\n" + log[-1500:])
                run([os.path.join(d, tgt, "net"), os.path.join(d, "x.npy"), "-o", os.path.join(d, tgt, "out")])
                outs[tgt] = np.load(os.path.join(d, tgt, "out", "output_0.npy"))
        except RuntimeError as e:
            print(f"reduce {name:16s} FAIL\n{e}")
            fails += 1
            continue
        c, cu = outs["c"], outs["cu"]
        same = c.shape == cu.shape and c.tobytes() == cu.tobytes()
        got = c.astype(np.float32) if dt != BF16 else (c.astype(np.uint32) << 16).view(np.float32)
        want = ref(op, x, tuple(axes))
        fin = np.isfinite(want)
        scale = np.abs(want[fin]).max() if fin.any() else 1
        err = np.abs(got[fin] - want[fin]).max() if fin.any() else 0
        tol = 1e-6 if dt == F32 else 4e-3
        nonfin = np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
        ok = same and err <= tol * scale and nonfin
        nv = nvcc_check(nvcc, onnxcc, mpath, d, flags) if nvcc else None
        if nv:
            print(f"reduce {name:16s} {nv}")
            ok = False
        print(f"reduce {name:16s} {'ok' if ok else 'MISMATCH'}{', nvcc sm_80 sm_90' if nvcc and not nv else ''}  targets {'same bits' if same else 'DIFFER'}, "
              f"vs numpy {err / scale:.2g} of {scale:.3g}{'' if nonfin else ', NON-FINITE DIFFER'}")
        fails += not ok
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
