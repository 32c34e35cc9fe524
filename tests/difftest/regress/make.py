"""make.py: the regression cases of the bugs difftest found (and the ones
the issue that started it named), each a folder run.py --replay runs:

    python3 tests/difftest/regress/make.py        (writes them beside this file)

Each is built with gen.py's Builder, so it has its f32 twin and inputs like
a generated case; meta.json names the configurations it must pass on and,
in "bug", what was wrong and where it was fixed. Cases the generator made
and minimize.py shrank are kept as they are (their folders have no entry
here).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen  # noqa: E402

ALL = ["c-native", "c-v3", "c-generic", "c-opt0", "c-nowino", "c-wino2", "c-wino4", "cuda-emu", "cuda-tf32",
       "cuda-nchw"]


def case(name, seed, dtype, build, bug, configs=ALL, dynamic=False, runs=None, cflags=None):
    rng = np.random.default_rng(seed)
    b = gen.Builder(rng, dtype, dynamic)
    b.branches, b.qdq_steps = [], []
    outs = build(b)
    c = gen.build_case(b, seed, dtype, dynamic, outs)
    d = os.path.join(HERE, name)
    meta = gen.write(c, d)
    meta.update(configs=configs, bug=bug)
    if cflags:
        meta["cflags"] = cflags
    import json
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(name, meta["nodes"], "nodes")


def conv_bn(act=None):
    def build(b):
        x = b.input([1, 1, 6, 4])
        y = gen.conv(b, x, 2, 3, 1, bias=False)
        y = gen.bn(b, y)
        if act:
            y = b.node(act, [y], y.shape)
        return [y]
    return build


def ln_one(b):
    x = b.input([7, 7, 1, 1])
    y = b.node("LayerNormalization", [x, b.weight([1, 1], 0.3, 1.0), b.weight([1, 1], 0.3)], x.shape, axis=-2)
    return [y]


def conv_k129(b):
    x = b.input([1, 129, 1, 3])
    return [gen.conv(b, x, 8, 1, 1, bias=True)]


def attn_rt_mask(b):
    x = b.input([3, 4, 8])
    n, s, d = x.shape
    q, k, v = (b.node("MatMul", [x, b.weight([d, d])], x.shape) for _ in range(3))
    kt = b.node("Transpose", [k], [n, d, s], perm=[0, 2, 1])
    sc = b.node("Mul", [b.node("MatMul", [q, kt], [n, s, s]), b.scalar(1.0 / np.sqrt(d))], [n, s, s])
    m = np.triu(np.full((s, s), -1e4, np.float32), 1)
    b.inits.append(("mask", m, "f"))
    sc = b.node("Add", [sc, gen.T("mask", [s, s])], [n, s, s])
    p = b.node("Softmax", [sc], [n, s, s], axis=-1)
    return [b.node("MatMul", [p, v], [n, s, d])]


def qmatmul_only(b):
    """an int8 MatMul group alone: templates/qint.c without a convolution"""
    b.input([3, 20])
    while not gen.p_qdq(b):  # (on a 2-D input: the MatMul group)
        pass
    return [t for t in b.pool if t.name in b.quantized][-1:] or [b.pool[-1]]


def gemm_nobias_ln(b):
    x = b.input([3, 1])
    y = b.node("Gemm", [x, b.weight([17, 1])], [3, 17], transB=1, beta=2.0)
    return [b.node("LayerNormalization", [y, b.weight([17], 0.3, 1.0), b.weight([17], 0.3)], y.shape, axis=-1)]


def resize_h_only(b):
    x = b.input([1, 4, 2, 3])
    sc = gen.T("scales", [4], "f32")
    b.inits.append(("scales", np.array([1, 1, 2, 1], np.float32), "f32"))
    return [b.node("Resize", [x, None, sc], [1, 4, 4, 3], mode="linear", coordinate_transformation_mode="half_pixel")]


def main():
    case("f16_conv_nobias_bn", 1, "f16", conv_bn(),
         "f16 Conv without a bias, then BatchNormalization: the folded bias came out f32 beside f16 weights "
         "(opt/affine.c new_const_like's default dtype): every output about 100 too low on the C target, "
         "a .cu that did not compile on the CUDA one; the verifier now checks a float Conv's input dtypes")
    case("f16_conv_nobias_bn_relu", 2, "f16", conv_bn("Relu"),
         "as f16_conv_nobias_bn, with an activation: the CUDA target aborted ('' has an epilogue but no CUDA "
         "kernel takes it)")
    case("layernorm_one_element", 3, "f32", ln_one,
         "LayerNormalization over one element (axis -2 of [7,7,1,1]) at --opt 0 wrote x[k] where no loop "
         "over k was opened (codegen/c/emit_reduce.c): C that did not compile")
    case("cuda_splitk_k129", 4, "f32", conv_k129,
         "a convolution whose reduction (129) is not a multiple of its split-K count: each split took K / S "
         "rounded down, so the last K % S elements were never summed on the CUDA target "
         "(codegen/cuda/cuda_tile.c ox_cu_split_len); Silero VAD's first Conv (129 channels) was 11% off, its "
         "output 2%")
    case("cuda_attn_rt_batch_mask", 5, "f32", attn_rt_mask,
         "attention with a constant causal mask [S, S] and a run-time batch: the CUDA kernel took only masks "
         "of ones but the keys' axis with run-time dims, and the C function it fell back to refuses run-time "
         "shapes ('shapes are not constant')", dynamic=True)
    case("qint_matmul_alone", 6, "qdq", qmatmul_only,
         "an int8 QDQ MatMul in a model without a convolution: templates/qint.c's ox_qi_conv called "
         "ox_qconv_sums, which was emitted only for a QConv: an implicit declaration (an error in C99 and "
         "later; an undefined reference at -O0); templates now name what they need (@needs)",
         cflags="-O0 -Werror=implicit-function-declaration")
    case("cuda_gemm_nobias_layernorm", 7, "f32", gemm_nobias_ln,
         "a Gemm without C whose rows a LayerNormalization normalizes: opt/gemmnorm.c appended the norm's scale "
         "as the Gemm's input 2, which the CUDA kernel read as C (generated seed 628, minimized: 26% off)",
         configs=["cuda-emu", "cuda-tf32", "cuda-nchw"])
    case("cuda_resize_last_axis_identity", 8, "f32", resize_h_only,
         "a linear Resize that scales H but not W: the CUDA kernel added the last axis' index to an input "
         "offset that held it already (codegen/cuda/cuda_nn.c), reading the wrong row or past it (generated seed "
         "1340, minimized: 1.45 normwise)")


if __name__ == "__main__":
    main()
