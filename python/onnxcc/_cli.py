"""The onnxcc binary: finding it, its version, its options, running it.

The options are onnxcc's own table (``onnxcc --options``, main.c): each row
gives the option, what it takes, its kind and the Python keyword that
stands for it. Nothing here lists them again.
"""
import functools
import hashlib
import json
import os
import shutil
import subprocess


class OnnxccError(RuntimeError):
    """onnxcc refused or failed to compile a model, or a compiled model
    refused a run. The message is onnxcc's (or the program's) own."""


def binary():
    """The onnxcc executable: $ONNXCC, else onnxcc on PATH, else the one
    `make install` put beside this package (PREFIX/bin/onnxcc)."""
    env = os.environ.get("ONNXCC")
    if env:
        path = shutil.which(env) or env
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise OnnxccError("ONNXCC=%s is not an executable" % env)
        return os.path.abspath(path)
    path = shutil.which("onnxcc")
    if not path:  # PREFIX/lib/python3.X/site-packages/onnxcc/_cli.py
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, os.pardir, os.pardir, os.pardir, os.pardir, "bin", "onnxcc")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise OnnxccError("onnxcc is not on PATH: install it (make install) or set $ONNXCC to the binary")
    return os.path.abspath(path)


def _stat_key(path):
    st = os.stat(path)
    return (path, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=None)
def _version(key):
    out = subprocess.run([key[0], "--version"], capture_output=True, text=True, check=False)
    if out.returncode:
        raise OnnxccError("%s --version failed: %s" % (key[0], out.stderr.strip()))
    return out.stdout.strip()


@functools.lru_cache(maxsize=None)
def _identity(key):
    h = hashlib.sha256()
    with open(key[0], "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _options(key):
    out = subprocess.run([key[0], "--options"], capture_output=True, text=True, check=False)
    if out.returncode:
        raise OnnxccError("%s --options failed (an onnxcc older than this package?): %s"
                          % (key[0], out.stderr.strip()))
    return tuple(json.loads(out.stdout))


def version(path=None):
    """onnxcc --version of the binary (default: binary())."""
    return _version(_stat_key(path or binary()))


def identity(path=None):
    """The binary's version and a hash of its bytes: part of the cache key,
    so that a rebuilt onnxcc never reuses what an older one made."""
    key = _stat_key(path or binary())
    return "%s %s" % (_version(key), _identity(key))


def options(path=None):
    """onnxcc's options: a list of dicts with keys option, arg, kind
    ('flag', 'value', 'list', 'optional'), python (the keyword, or None)
    and help."""
    return [dict(o) for o in _options(_stat_key(path or binary()))]


def keywords(path=None):
    """{python keyword: option row} for the options a keyword stands for."""
    return {o["python"]: o for o in options(path) if o["python"]}


def options_doc(path=None):
    """The keyword arguments as a docstring section, from onnxcc's table."""
    lines = ["Compiler options (keyword arguments; onnxcc --options, the same", "table as onnxcc --help):"]
    for o in options(path):
        if not o["python"]:
            continue
        if o["kind"] == "flag":
            form = "%s=True" % o["python"]
        elif o["kind"] == "list" and "=" in (o["arg"] or ""):
            key, val = o["arg"].split("=", 1)
            form = "%s={%s: %s, ...}" % (o["python"], key, val)
        elif o["kind"] == "list":
            form = "%s=[%s, ...]" % (o["python"], o["arg"])
        else:
            form = "%s=%s" % (o["python"], o["arg"])
        lines.append("  %s    (%s)" % (form, o["option"]))
        lines.extend("      " + h for h in o["help"].split("\n"))
    return "\n".join(lines)


def argv(kwargs, path=None):
    """onnxcc's arguments for the keyword arguments kwargs: a flag is
    True/False, a value a str or number, a list option a list (or a dict
    {name: value} for its NAME=VALUE forms). A keyword onnxcc does not
    know raises TypeError naming the ones it knows."""
    known = keywords(path)
    args = []
    for name in sorted(kwargs):
        value = kwargs[name]
        if name not in known:
            raise TypeError("onnxcc.compile() got an unexpected keyword argument %r (onnxcc's: %s)"
                            % (name, ", ".join(sorted(known))))
        o = known[name]
        if value is None or value is False:
            continue
        if o["kind"] == "flag":
            if value is not True:
                raise TypeError("%s=%r: %s is a flag (True or False)" % (name, value, o["option"]))
            args.append(o["option"])
        elif o["kind"] == "list":
            if isinstance(value, dict):
                if "=" not in (o["arg"] or ""):
                    raise TypeError("%s: %s takes %s, a list" % (name, o["option"], o["arg"]))
                items = ["%s=%s" % (k, v) for k, v in value.items()]
            elif isinstance(value, (list, tuple)):
                items = [str(v) for v in value]
            else:
                items = [str(value)]
            for item in items:
                args += [o["option"], item]
        else:
            args += [o["option"], str(value)]
    return args


def run(args, path=None, cwd=None):
    """Run onnxcc with args; its stdout, or OnnxccError with its message."""
    exe = path or binary()
    out = subprocess.run([exe] + list(args), capture_output=True, text=True, cwd=cwd, check=False)
    if out.returncode:
        msg = out.stderr.strip() or out.stdout.strip() or "exit status %d" % out.returncode
        raise OnnxccError(msg)
    return out.stdout
