"""The shared library's C ABI (onnxcc --shared; runtime_min/ox_main.c,
OX_SHARED), loaded with ctypes."""
import ctypes
import threading

import numpy as np

from ._cli import OnnxccError

ABI_VERSION = 1

# ONNX TensorProto.DataType -> numpy dtype as the generated API passes it:
# bf16 and the float8 kinds as their bit patterns, the sub-byte kinds one
# element per byte (docs/api.md)
DTYPES = {
    1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
    9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64,
    16: np.uint16, 17: np.uint8, 18: np.uint8, 19: np.uint8, 20: np.uint8,
    21: np.uint8, 22: np.int8, 23: np.uint8, 25: np.uint8, 26: np.int8,
}
DTYPE_NAMES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string",
               9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 14: "complex64",
               15: "complex128", 16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2",
               20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1", 25: "uint2", 26: "int2"}
PORT_KINDS = ("tensor", "sequence", "optional", "optional-sequence")

# one lock per loaded library: a library runs one call at a time (its
# arena and its thread pool are its own)
_locks = {}
_locks_mu = threading.Lock()


class Tensor:
    """A graph input or output as the library describes it."""

    def __init__(self, name, dtype, min_shape, max_shape, dynamic_axis):
        self.name, self.dtype = name, dtype
        self.min_shape, self.max_shape = tuple(min_shape), tuple(max_shape)
        self.dynamic_axis = dynamic_axis

    @property
    def dtype_name(self):
        return DTYPE_NAMES.get(self.dtype, "dtype %d" % self.dtype)

    def shape_text(self):
        def dim(lo, hi):
            return str(hi) if lo == hi else "%d..%d" % (lo, hi)
        return "%s[%s]" % (self.dtype_name, ",".join(dim(a, b) for a, b in zip(self.min_shape, self.max_shape)))

    def __repr__(self):
        return "Tensor(%r, %s)" % (self.name, self.shape_text())


class Port:
    """A graph input or output: one tensor, or a sequence or an optional of
    tensors (their structure fixed when compiling)."""

    def __init__(self, name, kind, tensors):
        self.name, self.kind, self.tensors = name, kind, tensors

    def __repr__(self):
        if self.kind == "tensor":
            return repr(self.tensors[0])
        return "Port(%r, %s of %d)" % (self.name, self.kind, len(self.tensors))


class Library:
    """A loaded OUT.so."""

    def __init__(self, path):
        self.path = path
        try:
            lib = ctypes.CDLL(path, mode=getattr(ctypes, "RTLD_LOCAL", 0))
        except OSError as e:
            raise OnnxccError("cannot load %s: %s" % (path, e)) from None
        self.lib = lib
        try:
            lib.onnxcc_abi_version.restype = ctypes.c_int
            abi = lib.onnxcc_abi_version()
        except AttributeError:
            raise OnnxccError("%s is not a library onnxcc --shared made" % path) from None
        if abi != ABI_VERSION:
            raise OnnxccError("%s has ABI version %d; this package reads %d" % (path, abi, ABI_VERSION))
        lib.onnxcc_target.restype = ctypes.c_char_p
        lib.onnxcc_cpu.restype = ctypes.c_char_p
        lib.onnxcc_error.restype = ctypes.c_char_p
        lib.onnxcc_error.argtypes = [ctypes.c_int]
        lib.onnxcc_count.argtypes = lib.onnxcc_ports.argtypes = [ctypes.c_int]
        lib.onnxcc_set_threads.argtypes = [ctypes.c_int]
        i64p = ctypes.POINTER(ctypes.c_int64)
        lib.onnxcc_tensor.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                      ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                                      ctypes.POINTER(i64p), ctypes.POINTER(i64p), ctypes.POINTER(ctypes.c_int)]
        lib.onnxcc_port.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                    ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int),
                                    ctypes.POINTER(ctypes.c_int)]
        lib.onnxcc_run.argtypes = [ctypes.c_void_p] * 4
        lib.onnxcc_init_weights.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.target = lib.onnxcc_target().decode()
        self.cpu = lib.onnxcc_cpu().decode()
        self.tensors = [self._tensors(0), self._tensors(1)]
        self.ports = [self._ports(0), self._ports(1)]
        with _locks_mu:
            self.lock = _locks.setdefault(path, threading.Lock())

    def _tensors(self, io):
        out = []
        for k in range(self.lib.onnxcc_count(io)):
            name, dtype, rank, dyn = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
            lo, hi = ctypes.POINTER(ctypes.c_int64)(), ctypes.POINTER(ctypes.c_int64)()
            if self.lib.onnxcc_tensor(io, k, name, dtype, rank, lo, hi, dyn):
                raise OnnxccError("%s: no descriptor for tensor %d" % (self.path, k))
            r = rank.value
            out.append(Tensor(name.value.decode("utf-8", "replace"), dtype.value,
                              [lo[i] for i in range(r)], [hi[i] for i in range(r)], dyn.value))
        return out

    def _ports(self, io):
        out = []
        for k in range(self.lib.onnxcc_ports(io)):
            name, kind, first, count = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
            if self.lib.onnxcc_port(io, k, name, kind, first, count):
                raise OnnxccError("%s: no descriptor for port %d" % (self.path, k))
            ts = self.tensors[io][first.value:first.value + count.value]
            out.append(Port(name.value.decode("utf-8", "replace"), PORT_KINDS[kind.value], ts))
        return out

    def init_weights(self, blob):
        """--weights external: the blob (a uint8 array, kept alive here)"""
        self._blob = blob
        rc = self.lib.onnxcc_init_weights(ctypes.c_void_p(blob.ctypes.data), ctypes.c_size_t(blob.size))
        if rc:
            raise OnnxccError("the weights blob was refused with code %d (docs/api.md, PREFIX_init)" % rc)

    def set_threads(self, n):
        with self.lock:
            if self.lib.onnxcc_set_threads(int(n)):
                raise OnnxccError("cannot run on %r threads (1 to 1024)" % (n,))

    def run(self, arrays):
        """arrays: one C-contiguous numpy array per input tensor, of its
        dtype and within its shape range. Returns the output arrays."""
        ins, outs = self.tensors
        for t, a in zip(ins, arrays):
            if t.dtype not in DTYPES:
                raise OnnxccError("input %r: %s tensors cannot be passed from Python" % (t.name, t.dtype_name))
            bad = a.ndim != len(t.max_shape) or any(
                not lo <= d <= hi for d, lo, hi in zip(a.shape, t.min_shape, t.max_shape))
            if bad:
                raise OnnxccError("input %r: expected %s, found %s[%s]" % (
                    t.name, t.shape_text(), t.dtype_name, ",".join(map(str, a.shape))))
        for t in outs:
            if t.dtype not in DTYPES:
                raise OnnxccError("output %r: %s tensors cannot be returned to Python" % (t.name, t.dtype_name))
        shapes = [np.array(a.shape if a.ndim else [0], dtype=np.int64) for a in arrays]
        bufs = [np.empty(int(np.prod(t.max_shape, dtype=np.int64)), dtype=DTYPES[t.dtype]) for t in outs]
        oshapes = [np.zeros(max(len(t.max_shape), 1), dtype=np.int64) for t in outs]

        def ptrs(xs):
            return (ctypes.c_void_p * (len(xs) + 1))(*[x.ctypes.data for x in xs])

        with self.lock:
            rc = self.lib.onnxcc_run(ptrs(arrays), ptrs(shapes), ptrs(bufs), ptrs(oshapes))
        if rc:
            text = self.lib.onnxcc_error(rc).decode("utf-8", "replace")
            given = ", ".join("%s %s[%s]" % (t.name, t.dtype_name, ",".join(map(str, a.shape)))
                              for t, a in zip(ins, arrays))
            raise OnnxccError("the run failed with code %d (%s); inputs: %s" % (rc, text, given))
        res = []
        for t, b, s in zip(outs, bufs, oshapes):
            shape = tuple(int(d) for d in s[:len(t.max_shape)])
            res.append(b[:int(np.prod(shape, dtype=np.int64))].reshape(shape))
        return res
