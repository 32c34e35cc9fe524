"""onnxcc from Python: compile an ONNX model (or a torch.nn.Module) ahead of
time to C, build it as a shared library, and call it on numpy arrays or
torch tensors.

    import onnxcc
    net = onnxcc.compile("model.onnx", shapes={"x": "1..8x3x224x224"}, cpu="native")
    y = net(x)

It needs the standard library, numpy and the onnxcc binary ($ONNXCC, else
onnxcc on PATH); torch only to compile a torch module. See docs/python.md.
"""
import hashlib
import json
import os
import shutil
import tempfile

import numpy as np

from . import _abi, _cli
from ._cli import OnnxccError, binary, version

__all__ = ["compile", "Net", "OnnxccError", "cache_dir", "clear_cache", "options", "version", "binary"]


def options():
    """onnxcc's options, as its --options prints them (a list of dicts:
    option, arg, kind, python, help)."""
    return _cli.options()


def cache_dir():
    """Where compiled models are kept: $ONNXCC_CACHE_DIR, else
    $XDG_CACHE_HOME/onnxcc, else ~/.cache/onnxcc. One folder per model,
    options and onnxcc build; clear_cache() empties it."""
    d = os.environ.get("ONNXCC_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "onnxcc")
    return d


def clear_cache():
    """Remove every compiled model from cache_dir()."""
    d = cache_dir()
    if os.path.isdir(d):
        shutil.rmtree(d)


class Net:
    """A compiled model, loaded. Call it with one array per graph input, by
    position or by name (a list of arrays for a sequence input); it returns
    the output, or a tuple of them when the graph has several (a list for a
    sequence output). numpy arrays in, numpy arrays out; torch tensors in
    (or a model compiled from a torch module), torch tensors out.

    Attributes: inputs and outputs (their names, dtypes and shape ranges),
    files (the generated sources and the library), dir, cached (whether
    compile() found it made already), target, cpu."""

    def __init__(self, folder, cached=False, torch_out=False):
        self.dir = folder
        self.cached = cached
        meta_path = os.path.join(folder, "meta.json")
        with open(meta_path) as f:
            self._meta = json.load(f)
        self._lib = _abi.Library(os.path.join(folder, "net.so"))
        blob = os.path.join(folder, "net_weights.bin")  # --weights external
        if os.path.isfile(blob):
            self._lib.init_weights(np.fromfile(blob, dtype=np.uint8))
        self.inputs = self._lib.ports[0]
        self.outputs = self._lib.ports[1]
        self.target, self.cpu = self._lib.target, self._lib.cpu
        self._torch_out = torch_out
        self.files = {n: os.path.join(folder, n) for n in sorted(os.listdir(folder))
                      if n.startswith("net") and not n.endswith((".o", ".tmp"))}
        self.set_threads(self._meta.get("threads", 1))

    def __repr__(self):
        return "onnxcc.Net(%s -> %s, target=%s%s)" % (
            ", ".join(map(repr, self.inputs)), ", ".join(map(repr, self.outputs)), self.target,
            ", cpu=%s" % self.cpu if self.cpu else "")

    def set_threads(self, n):
        """Run the C target's loops on n threads (the library's own pool)."""
        self._lib.set_threads(n)
        self._meta["threads"] = n

    def report(self):
        """onnxcc --report=json's figures for this model, as a dict: the
        arena against its lower bound, weight and code sizes, every
        tensor's place and lifetime."""
        with open(os.path.join(self.dir, "report.json")) as f:
            return json.load(f)

    def __call__(self, *args, **kwargs):
        ports = self.inputs
        if len(args) > len(ports):
            raise TypeError("%d inputs given, the model has %d (%s)" % (
                len(args), len(ports), ", ".join(p.name for p in ports)))
        given = dict(zip((p.name for p in ports), args))
        for k, v in kwargs.items():
            if k not in {p.name for p in ports}:
                raise TypeError("no input named %r (the inputs: %s)" % (k, ", ".join(p.name for p in ports)))
            if k in given:
                raise TypeError("input %r given twice" % k)
            given[k] = v
        missing = [p.name for p in ports if p.name not in given]
        if missing:
            raise TypeError("missing input%s %s" % ("s" if len(missing) > 1 else "", ", ".join(map(repr, missing))))
        torch_in = any(_is_torch(v) or (isinstance(v, (list, tuple)) and any(map(_is_torch, v)))
                       for v in given.values())
        arrays = []
        for p in ports:
            v = given[p.name]
            vals = [v] if p.kind == "tensor" else list(v)
            if len(vals) != len(p.tensors):
                raise OnnxccError("input %r: %d tensors given, the model was compiled for %d (onnxcc --like)"
                                  % (p.name, len(vals), len(p.tensors)))
            arrays += [_to_numpy(x, t) for x, t in zip(vals, p.tensors)]
        outs = self._lib.run(arrays)
        if torch_in or self._torch_out:
            outs = [_to_torch(a, t) for a, t in zip(outs, self._lib.tensors[1])]
        res, k = [], 0
        for p in self.outputs:
            n = len(p.tensors)
            res.append(outs[k] if p.kind == "tensor" else list(outs[k:k + n]))
            k += n
        return res[0] if len(res) == 1 else tuple(res)


def _is_torch(x):
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def _to_numpy(x, t):
    if t.dtype not in _abi.DTYPES:
        raise OnnxccError("input %r: %s tensors cannot be passed from Python" % (t.name, t.dtype_name))
    want = _abi.DTYPES[t.dtype]
    if _is_torch(x):
        x = x.detach().cpu()
        if t.dtype == 16:  # bfloat16: its bits
            import torch
            x = x.to(torch.bfloat16).view(torch.int16)
        x = x.numpy()
    a = np.asarray(x)
    if t.dtype == 16 and a.dtype == np.int16:
        a = a.view(np.uint16)
    if a.dtype != want:
        if a.dtype.kind != np.dtype(want).kind and not (a.dtype.kind in "iu" and np.dtype(want).kind in "iu"):
            raise OnnxccError("input %r: expected %s, found %s" % (t.name, t.dtype_name, a.dtype))
        a = a.astype(want)
    return np.require(a, requirements="C")  # (ascontiguousarray makes a scalar 1-d)


def _to_torch(a, t):
    import torch
    if t.dtype == 16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def _dims_text(spec):
    """'1..8x3x224x224', (1, 3, 224, 224) or ((1, 8), 3, 224, 224) -> onnxcc's form"""
    if isinstance(spec, str):
        return spec
    return "x".join(_dim_text(d) for d in spec)


def _dim_text(d):
    if isinstance(d, (tuple, list)):
        lo, hi = d
        return "%d..%d" % (lo, hi)
    if isinstance(d, range):
        return "%d..%d" % (d.start, d.stop - 1)
    return str(d)


def _export_torch(module, example_inputs, dynamic, export_kwargs):
    """ONNX bytes of a torch.nn.Module by torch.onnx.export; the --dim
    ranges of its dynamic axes."""
    import inspect
    import io

    import torch
    if example_inputs is None:
        raise TypeError("compiling a torch module needs example_inputs=(tensor, ...)")
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    try:
        params = [p for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in params][:len(example_inputs)]
    except (TypeError, ValueError):
        names = []
    if len(names) != len(example_inputs):
        names = ["input_%d" % k for k in range(len(example_inputs))]
    dynamic = dynamic or {}
    for k in dynamic:
        if k not in names:
            raise TypeError("dynamic: no input %r (the inputs: %s)" % (k, ", ".join(names)))
    axes, dims = {}, {}
    for name, ax in dynamic.items():
        axes[name] = {}
        for a, rng in ax.items():
            sym = "%s_%d" % (name, a)
            axes[name][a] = sym
            dims[sym] = rng if isinstance(rng, str) else _dim_text(rng)
    with torch.no_grad():  # the outputs, to name them
        outs = module(*example_inputs)
    n_out = len(outs) if isinstance(outs, (tuple, list)) else 1
    kw = dict(opset_version=17, do_constant_folding=True,
              output_names=["output"] if n_out == 1 else ["output_%d" % k for k in range(n_out)])
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kw["dynamo"] = False  # the TorchScript exporter: dynamic_axes as given
    kw.update(export_kwargs or {})
    buf = io.BytesIO()
    was_training = getattr(module, "training", False)
    if hasattr(module, "eval"):
        module.eval()
    try:  # (not under no_grad: torch's fused encoder layer, which the
        # exporter cannot write, runs only without gradients)
        torch.onnx.export(module, tuple(example_inputs), buf, input_names=names, dynamic_axes=axes or None, **kw)
    finally:
        if was_training:
            module.train()
    return buf.getvalue(), dims


def _model_bytes(model):
    if isinstance(model, (bytes, bytearray)):
        return bytes(model)
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString()
    with open(os.fspath(model), "rb") as f:
        return f.read()


def compile(model, *, shapes=None, example_inputs=None, dynamic=None, threads=1, cache=True,
            export_kwargs=None, **options):
    """Compile model and load it: a Net, ready to call.

    model: a path to an .onnx file, its bytes, an onnx.ModelProto, or a
      torch.nn.Module (then example_inputs, a tuple of tensors, and
      optionally dynamic={"x": {0: (1, 8)}}: axis 0 of input x any size from
      1 to 8; a string "1..64:8,16" gives buckets; export_kwargs go to
      torch.onnx.export, opset 17 by default).
    shapes: {input: shape} (--shape), a shape as onnxcc writes it
      ("1..8x3x224x224") or a tuple ((1, 8), 3, 224, 224).
    threads: the number of threads the C target's loops run on
      (Net.set_threads changes it).
    cache: reuse an earlier compile of the same model bytes, options and
      onnxcc build (cache_dir()); False compiles again.
    Every other keyword is an onnxcc option (listed below when onnxcc was
    found at import): cpu="native", weights="external", target="cuda",
    cuda_emu=True, dims={"N": "1..64"}, skip=["dwpw"], ...
    Raises OnnxccError with onnxcc's message when it refuses the model.
    """
    torch_out = False
    if _is_torch_module(model):
        data, dims = _export_torch(model, example_inputs, dynamic, export_kwargs)
        torch_out = True
        if dims:
            options["dims"] = dict(options.get("dims") or {}, **dims)
    else:
        if example_inputs is not None or dynamic is not None:
            raise TypeError("example_inputs and dynamic are for torch modules; give shapes= for an ONNX model")
        data = _model_bytes(model)
    if shapes:
        options["shapes"] = dict(options.get("shapes") or {},
                                 **{k: _dims_text(v) for k, v in shapes.items()})
    exe = binary()
    # constants given as arrays are saved beside the model; their bytes
    # are in the key
    consts = options.get("consts") or {}
    arrays = {k: np.asarray(v) for k, v in consts.items() if not isinstance(v, (str, os.PathLike))}
    options["consts"] = {k: ("%s.npy" % _safe(k) if k in arrays else os.path.abspath(os.fspath(v)))
                         for k, v in consts.items()} or None
    if options.get("likes"):
        options["likes"] = {k: os.path.abspath(os.fspath(v)) for k, v in options["likes"].items()}
    if options.get("graph"):
        options["graph"] = os.path.abspath(os.fspath(options["graph"]))
    args = _cli.argv(options, exe)
    for bad in ("-o", "--main", "--build", "--shared", "--report"):
        if bad in args:
            raise TypeError("%s is set by onnxcc.compile itself" % bad)
    h = hashlib.sha256()
    for part in [data, json.dumps(args).encode(), _cli.identity(exe).encode(),
                 json.dumps([os.environ.get(v, "") for v in ("CC", "CXX", "NVCC", "ONNXCC_CFLAGS")]).encode()]:
        h.update(hashlib.sha256(part).digest())
    for k in sorted(arrays):
        a = np.ascontiguousarray(arrays[k])
        h.update(("%s %s %s" % (k, a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    key = h.hexdigest()[:32]
    root = cache_dir()
    folder = os.path.join(root, key)
    if cache and os.path.isfile(os.path.join(folder, "meta.json")):
        net = Net(folder, cached=True, torch_out=torch_out)
        net.set_threads(threads)
        return net
    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".build-", dir=root)
    if not cache:  # a folder of its own, never looked up (a library this
        # process loaded stays loaded under its path: not overwritten)
        folder = tmp + ".nocache"
    try:
        with open(os.path.join(tmp, "model.onnx"), "wb") as f:
            f.write(data)
        for k, a in arrays.items():
            np.save(os.path.join(tmp, "%s.npy" % _safe(k)), a)
        report = _cli.run(["model.onnx", "-o", "net.c", "--shared", "--report=json"] + args, exe, cwd=tmp)
        with open(os.path.join(tmp, "report.json"), "w") as f:
            f.write(report)
        with open(os.path.join(tmp, "meta.json"), "w") as f:
            json.dump({"args": args, "onnxcc": _cli.identity(exe), "threads": 1}, f, indent=1)
        try:
            os.rename(tmp, folder)
        except OSError:  # another process made it meanwhile: the same files
            shutil.rmtree(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    net = Net(folder, cached=False, torch_out=torch_out)
    net.set_threads(threads)
    return net


def _safe(name):
    return "".join(c if c.isalnum() else "_" for c in name)


def _is_torch_module(x):
    return any(c.__module__.startswith("torch") and c.__name__ == "Module" for c in type(x).__mro__)


try:  # the options in the docstring, from the binary that will compile
    compile.__doc__ += "\n" + _cli.options_doc()
except Exception:  # no onnxcc yet: help(onnxcc.options) at run time
    pass
