"""The Python package against torch, ONNX Runtime and the C program
(make python; tests/python/run.sh runs this from an installed copy).

Needs numpy, torch (Debian's python3-torch) and, for the int8 model, node
with tools/node_modules (make deps-models). $ONNXCC_SRC: the checkout.
"""
import os
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np
import torch

import onnxcc

SRC = os.environ.get("ONNXCC_SRC") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DIGITS = os.path.join(SRC, "examples", "digits", "digits.onnx")
DIGITS_INT8 = os.path.join(SRC, "examples", "digits", "digits_int8.onnx")


def close(got, want, rtol):
    """normwise: max|got - want| <= rtol * max|want| (as the zoo's check)"""
    got = got.detach().numpy() if hasattr(got, "detach") else np.asarray(got)
    want = want.detach().numpy() if hasattr(want, "detach") else np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    err = np.abs(got.astype(np.float64) - want).max(initial=0)
    scale = max(np.abs(want).max(initial=0), 1e-30)
    assert err <= rtol * scale, "max abs error %.3g > %.3g x %.3g" % (err, rtol, scale)
    return err / scale


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.f = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16), torch.nn.ReLU6(),
            torch.nn.Conv2d(16, 32, 1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10))

    def forward(self, image):
        return self.f(image)


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Linear(8, 32)
        layer = torch.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, 2)
        self.head = torch.nn.Linear(32, 3)

    def forward(self, tokens):
        return self.head(self.enc(self.emb(tokens)))


class Control(torch.nn.Module):
    """If on data, Loop of a length given as an input: real control flow"""

    def forward(self, x, n):
        if bool(x.sum() > 0):
            y = x * 2.0
        else:
            y = x - 1.0
        for _ in range(int(n)):
            y = torch.tanh(y) + 0.5 * x
        return y


def randomize_bn(m, seed):
    g = torch.Generator().manual_seed(seed)
    for b in m.modules():
        if isinstance(b, torch.nn.BatchNorm2d):
            b.running_mean.copy_(torch.randn(b.num_features, generator=g) * 0.1)
            b.running_var.copy_(torch.rand(b.num_features, generator=g) + 0.5)
            b.weight.data.copy_(torch.rand(b.num_features, generator=g) + 0.5)
            b.bias.data.copy_(torch.randn(b.num_features, generator=g) * 0.1)
    return m


class TestTorch(unittest.TestCase):
    def test_cnn_dynamic_batch(self):
        torch.manual_seed(1)
        m = randomize_bn(Cnn(), 1).eval()
        net = onnxcc.compile(m, example_inputs=(torch.randn(2, 3, 20, 20),), dynamic={"image": {0: (1, 8)}},
                             cpu="native")
        self.assertEqual(net.inputs[0].tensors[0].min_shape, (1, 3, 20, 20))
        self.assertEqual(net.inputs[0].tensors[0].max_shape, (8, 3, 20, 20))
        for b in (1, 3, 8):
            x = torch.randn(b, 3, 20, 20)
            y = net(x)
            self.assertIsInstance(y, torch.Tensor)
            with torch.no_grad():
                close(y, m(x), 1e-5)
        # a shape outside the range: refused, naming the input and the range
        with self.assertRaises(onnxcc.OnnxccError) as e:
            net(torch.randn(9, 3, 20, 20))
        self.assertIn("'image': expected float32[1..8,3,20,20], found float32[9,3,20,20]", str(e.exception))
        with self.assertRaises(onnxcc.OnnxccError):
            net(torch.randn(2, 3, 21, 20))
        # threads: the same bits
        x = torch.randn(8, 3, 20, 20)
        y1 = net(x)
        net.set_threads(3)
        self.assertTrue(torch.equal(y1, net(x)))
        net.set_threads(1)

    def test_transformer_dynamic_sequence(self):
        torch.manual_seed(2)
        m = Encoder().eval()
        net = onnxcc.compile(m, example_inputs=(torch.randn(1, 5, 8),), dynamic={"tokens": {1: (1, 48)}})
        for s in (1, 7, 48):
            x = torch.randn(1, s, 8)
            with torch.no_grad():
                close(net(x), m(x), 1e-5)
        with self.assertRaises(onnxcc.OnnxccError):
            net(torch.randn(1, 49, 8))

    def test_scripted_if_loop(self):
        m = torch.jit.script(Control())
        x = torch.randn(2, 6)
        net = onnxcc.compile(m, example_inputs=(x, torch.tensor(3)))
        for xx, n in ((x, 3), (-x.abs(), 3), (x.abs(), 0), (x, 7)):
            close(net(xx, torch.tensor(n)), m(xx, torch.tensor(n)), 1e-6)
        # by name
        close(net(n=torch.tensor(2), x=x), m(x, torch.tensor(2)), 1e-6)


class TestOnnx(unittest.TestCase):
    def test_saved_model_numpy(self):
        torch.manual_seed(3)
        m = torch.nn.Sequential(torch.nn.Linear(12, 24), torch.nn.Tanh(), torch.nn.Linear(24, 6)).eval()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "mlp.onnx")
            torch.onnx.export(m, torch.randn(4, 12), path, input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "n"}, "y": {0: "n"}}, opset_version=17)
            net = onnxcc.compile(path, shapes={"x": ((1, 16), 12)})
            for n in (1, 9, 16):
                x = np.random.default_rng(n).standard_normal((n, 12), dtype=np.float32)
                y = net(x)
                self.assertIsInstance(y, np.ndarray)
                close(y, m(torch.from_numpy(x)).detach().numpy(), 1e-5)
            # float64 in: converted; an int array for a float input: refused
            close(net(x.astype(np.float64)), y, 0)
            with self.assertRaises(onnxcc.OnnxccError):
                net(np.zeros((2, 12), np.int32))
            with self.assertRaises(TypeError):
                net(x, x)
            with self.assertRaises(TypeError):
                net(z=x)

    def test_cache(self):
        a = onnxcc.compile(DIGITS, opt=0)
        t = time.perf_counter()
        b = onnxcc.compile(DIGITS, opt=0)
        dt = time.perf_counter() - t
        self.assertTrue(b.cached)
        self.assertEqual(a.dir, b.dir)
        self.assertLess(dt, 0.2, "a cached compile took %.3f s" % dt)
        # other options, another entry; cache=False, a build of its own
        c = onnxcc.compile(DIGITS, opt=1)
        self.assertNotEqual(c.dir, a.dir)
        d = onnxcc.compile(DIGITS, opt=0, cache=False)
        self.assertFalse(d.cached)
        self.assertNotEqual(d.dir, a.dir)
        x = np.random.default_rng(0).random((1, 1, 16, 16), dtype=np.float32)
        close(a(x), c(x), 1e-5)
        self.assertTrue(os.path.isdir(onnxcc.cache_dir()))

    def test_errors_and_options(self):
        with self.assertRaises(onnxcc.OnnxccError) as e:
            onnxcc.compile(DIGITS, cpu="pentium")
        self.assertIn("--cpu 'pentium' is not known", str(e.exception))
        with self.assertRaises(TypeError) as e:
            onnxcc.compile(DIGITS, cpus="native")
        self.assertIn("cpus", str(e.exception))
        # a model onnxcc refuses: its message
        with self.assertRaises(onnxcc.OnnxccError) as e:
            onnxcc.compile(b"not a model")
        self.assertIn("model.onnx", str(e.exception))
        # every keyword comes from onnxcc's own table, and is in the docstring
        kws = {o["python"] for o in onnxcc.options() if o["python"]}
        self.assertTrue({"cpu", "weights", "shapes", "dims", "target", "cuda_emu", "skip"} <= kws)
        for k in kws:
            self.assertIn(k + "=", onnxcc.compile.__doc__)

    def test_report_and_files(self):
        net = onnxcc.compile(DIGITS, weights="external")
        r = net.report()
        self.assertGreater(r["arena_bytes"], 0)
        self.assertLessEqual(r["arena_bytes"], 1.05 * r["lower_bound_bytes"])
        for f in ("net.c", "net.h", "net_weights.c", "net_weights.bin", "net.so"):
            self.assertIn(f, net.files)
            self.assertTrue(os.path.isfile(net.files[f]))
        x = np.random.default_rng(1).random((1, 1, 16, 16), dtype=np.float32)
        close(net(x), onnxcc.compile(DIGITS)(x), 1e-6)

    def test_int8_qdq(self):
        """the int8 digits model against ONNX Runtime: within one
        quantization step of the output (tests/e2e/quant/check.py cmp, as
        make int8 checks the C program)"""
        net = onnxcc.compile(DIGITS_INT8, cpu="native")
        rng = np.random.default_rng(5)
        with tempfile.TemporaryDirectory() as d:
            for k in range(3):
                x = rng.random((1, 1, 16, 16), dtype=np.float32)
                np.save(os.path.join(d, "x.npy"), x)
                np.save(os.path.join(d, "got.npy"), net(x))
                subprocess.run(["node", os.path.join(SRC, "tools", "ort_run.js"), DIGITS_INT8,
                                os.path.join(d, "x.npy"), "-o", os.path.join(d, "ref")], check=True,
                               capture_output=True)
                r = subprocess.run([sys.executable, os.path.join(SRC, "tests", "e2e", "quant", "check.py"), "cmp",
                                    DIGITS_INT8, os.path.join(d, "got.npy"), os.path.join(d, "ref", "output_0.npy")],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, "%s steps from ONNX Runtime" % r.stdout.strip())

    def test_cuda_emulated(self):
        x = np.random.default_rng(2).random((1, 1, 16, 16), dtype=np.float32)
        net = onnxcc.compile(DIGITS, target="cuda", cuda_emu=True)
        self.assertEqual(net.target, "cuda")
        close(net(x), onnxcc.compile(DIGITS)(x), 1e-5)


if __name__ == "__main__":
    print("onnxcc package:", onnxcc.__file__, "binary:", onnxcc.binary(), file=sys.stderr)
    unittest.main(verbosity=2)
